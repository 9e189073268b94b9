// XLSX writer of the normalised report (libxlsxwriter): sheets Summary, Comparison, then one per
// group of tables (Sources, Sensitivity, Uncertainty, TCO, ...), and Charts (each chart's data
// in display units beside a native Excel chart of it).
#include <unistd.h>
#include <xlsxwriter.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>

#include "base/text.h"
#include "report/report.h"
#include "report/report_model.h"

namespace llmcap::report {
namespace {

constexpr double kMaxColumnWidth = 60;
constexpr size_t kWrapAbove = 60;  ///< text longer than this wraps in its cell

struct Formats {
  lxw_format* title;
  lxw_format* header;
  lxw_format* wrap;
  lxw_format* lead;
  std::map<CellFormat, lxw_format*> numbers;
};

Formats make_formats(lxw_workbook* wb) {
  Formats f{};
  f.title = workbook_add_format(wb);
  format_set_bold(f.title);
  format_set_font_size(f.title, 12);
  f.header = workbook_add_format(wb);
  format_set_bold(f.header);
  format_set_bg_color(f.header, 0xE8E8E8);
  format_set_bottom(f.header, LXW_BORDER_THIN);
  format_set_text_wrap(f.header);
  f.wrap = workbook_add_format(wb);
  format_set_text_wrap(f.wrap);
  format_set_align(f.wrap, LXW_ALIGN_VERTICAL_TOP);
  f.lead = workbook_add_format(wb);
  format_set_text_wrap(f.lead);
  format_set_align(f.lead, LXW_ALIGN_VERTICAL_TOP);
  format_set_bg_color(f.lead, 0xF4F7FB);
  const std::pair<CellFormat, const char*> kNum[] = {
      {CellFormat::kInteger, "0"},     {CellFormat::kNumber, "General"},
      {CellFormat::kUsd, "#,##0.00"},  {CellFormat::kUsdWhole, "#,##0"},
      {CellFormat::kSeconds, "0.000"}, {CellFormat::kMilliseconds, "0.0"},
      {CellFormat::kPercent, "0.0%"},  {CellFormat::kText, "General"},
      {CellFormat::kBool, "General"}};
  for (const auto& [cf, code] : kNum) {
    lxw_format* x = workbook_add_format(wb);
    format_set_num_format(x, code);
    format_set_align(x, LXW_ALIGN_VERTICAL_TOP);
    f.numbers[cf] = x;
  }
  return f;
}

/// The number written for a cell: milliseconds columns in ms, the others as they are.
double sheet_number(double v, CellFormat f) { return f == CellFormat::kMilliseconds ? v * 1e3 : v; }

/// A column label with its unit as stored in the sheet.
std::string sheet_label(const Column& c) { return c.label; }

/// User text as a cell string, shown as the literal text (docs/reports.md, Output escaping):
/// strings are never formulas (worksheet_write_string), and control characters other than line
/// breaks and tabs, and bytes that are not UTF-8, are written as base::printable escapes.
std::string sheet_text(const std::string& s) { return base::printable(s, true); }

/// User text as a chart, axis or series name: libxlsxwriter reads a name that starts with "=" as
/// a formula (a cell reference), so such a name gets a leading "'" (as CSV cells do).
std::string chart_name(const std::string& s) {
  const std::string text = base::printable(s);
  return !text.empty() && text.front() == '=' ? "'" + text : text;
}

class Sheet {
 public:
  Sheet(lxw_worksheet* ws, const Formats& f) : ws_(ws), f_(f) {}

  lxw_worksheet* ws() const { return ws_; }
  lxw_row_t row() const { return row_; }
  void skip(lxw_row_t n) { row_ += n; }

  void title(const std::string& text) {
    worksheet_write_string(ws_, row_++, 0, sheet_text(text).c_str(), f_.title);
  }

  void paragraph(const std::string& text, lxw_col_t span, lxw_format* format) {
    worksheet_merge_range(ws_, row_, 0, row_, span - 1, sheet_text(text).c_str(), format);
    double width = 0;
    for (lxw_col_t c = 0; c < span; ++c) width += widths_.count(c) ? widths_[c] : 10;
    const double lines = std::ceil(static_cast<double>(text.size()) / std::max(width * 1.1, 20.0));
    worksheet_set_row(ws_, row_, 15 * std::max(1.0, lines) + 4, nullptr);
    row_ += 2;
  }

  void table(const Table& t) {
    title(t.title);
    for (size_t c = 0; c < t.columns.size(); ++c) {
      const std::string label = sheet_text(sheet_label(t.columns[c]));
      worksheet_write_string(ws_, row_, static_cast<lxw_col_t>(c), label.c_str(), f_.header);
      widen(c, std::min<double>(label.size(), 24));
    }
    ++row_;
    for (const auto& cells : t.rows) {
      for (size_t c = 0; c < t.columns.size(); ++c) write(c, cells.at(c), t.columns[c].format);
      ++row_;
    }
    if (t.rows.empty()) worksheet_write_string(ws_, row_++, 0, "(no rows)", nullptr);
    ++row_;
  }

  void write(size_t col, const Cell& cell, CellFormat format) {
    const auto c = static_cast<lxw_col_t>(col);
    if (std::holds_alternative<std::monostate>(cell)) return;
    if (const auto* b = std::get_if<bool>(&cell)) {
      worksheet_write_boolean(ws_, row_, c, *b ? 1 : 0, nullptr);
      widen(col, 6);
    } else if (const auto* d = std::get_if<double>(&cell)) {
      if (std::isfinite(*d)) {
        worksheet_write_number(ws_, row_, c, sheet_number(*d, format), f_.numbers.at(format));
      } else {
        worksheet_write_string(ws_, row_, c, format_cell(cell, format).c_str(), nullptr);
      }
      widen(col, static_cast<double>(format_cell(cell, format).size()) + 2);
    } else {
      const std::string s = sheet_text(std::get<std::string>(cell));
      worksheet_write_string(ws_, row_, c, s.c_str(), s.size() > kWrapAbove ? f_.wrap : nullptr);
      widen(col, static_cast<double>(s.size()) + 2);
    }
  }

  void widen(size_t col, double width) {
    double& w = widths_[static_cast<lxw_col_t>(col)];
    w = std::min(kMaxColumnWidth, std::max(w, width));
  }

  void apply_widths() {
    for (const auto& [c, w] : widths_) worksheet_set_column(ws_, c, c, std::max(w, 8.0), nullptr);
  }

 private:
  lxw_worksheet* ws_;
  const Formats& f_;
  lxw_row_t row_ = 0;
  std::map<lxw_col_t, double> widths_;
};

std::filesystem::path temp_xlsx_path() {
  static std::atomic<unsigned> counter{0};
  return std::filesystem::temp_directory_path() / ("llmcap-report-" + std::to_string(::getpid()) +
                                                   "-" + std::to_string(counter++) + ".xlsx");
}

void write_workbook(const Report& report, const std::string& path) {
  lxw_workbook_options options = {};
  const std::string tmpdir = std::filesystem::temp_directory_path().string();
  options.tmpdir = const_cast<char*>(tmpdir.c_str());
  lxw_workbook* wb = workbook_new_opt(path.c_str(), &options);
  if (wb == nullptr) throw ReportError("xlsx: cannot create the workbook at " + path);
  const Formats f = make_formats(wb);

  // Sheets in order: Summary, Comparison, then every other table's sheet as first met.
  std::vector<std::string> order = {"Summary", "Comparison"};
  std::map<std::string, std::vector<const Table*>> tables;
  for (const Section& s : report.sections) {
    for (const Block& b : s.blocks) {
      if (const auto* t = std::get_if<Table>(&b)) {
        const std::string sheet = t->sheet.empty() ? "Tables" : t->sheet;
        if (std::find(order.begin(), order.end(), sheet) == order.end()) order.push_back(sheet);
        tables[sheet].push_back(t);
      }
    }
  }
  std::map<std::string, std::unique_ptr<Sheet>> sheets;
  for (const std::string& name : order) {
    lxw_worksheet* ws = workbook_add_worksheet(wb, name.c_str());
    sheets[name] = std::make_unique<Sheet>(ws, f);
  }
  Sheet& summary = *sheets["Summary"];
  summary.widen(0, 30);
  summary.widen(1, 60);
  summary.title(report.title);
  summary.skip(1);
  summary.title("Recommendation");
  summary.paragraph(report.recommendation, 2, f.lead);
  for (const Section& s : report.sections) {
    if (s.id != "assumptions" && s.id != "calibration" && s.id != "sources") continue;
    for (const Block& b : s.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&b)) {
        summary.title(s.title);
        summary.paragraph(p->text, 2, f.wrap);
      }
    }
  }
  for (const auto& [name, list] : tables) {
    Sheet& sheet = *sheets[name];
    for (const Table* t : list) sheet.table(*t);
    if (name == "Comparison" || name == "Sources") {
      worksheet_freeze_panes(sheet.ws(), 2, 1);
    }
  }
  if (tables.count("Comparison") == 0) {
    sheets["Comparison"]->title("Comparison");
    worksheet_write_string(sheets["Comparison"]->ws(), 1, 0, "(no results)", nullptr);
  }

  // Charts: each chart's data in display units, with a native chart beside it.
  const std::vector<const Chart*> charts = report.charts();
  if (!charts.empty()) {
    const char* kSheet = "Charts";
    lxw_worksheet* ws = workbook_add_worksheet(wb, kSheet);
    Sheet sheet(ws, f);
    sheet.widen(0, 28);
    sheet.widen(1, 16);
    sheet.widen(2, 16);
    for (const Chart* c : charts) {
      const lxw_row_t start = sheet.row();
      sheet.title(c->title);
      const bool bar = c->kind == ChartKind::kBar;
      const std::string x_label = bar ? "Instance type" : c->x_label;
      worksheet_write_string(ws, sheet.row(), 0, "Series", f.header);
      worksheet_write_string(ws, sheet.row(), 1, sheet_text(x_label).c_str(), f.header);
      worksheet_write_string(ws, sheet.row(), 2, sheet_text(c->y_label).c_str(), f.header);
      sheet.skip(1);
      lxw_chart* chart = workbook_add_chart(
          wb, bar ? LXW_CHART_COLUMN
                  : (c->kind == ChartKind::kStep ? LXW_CHART_SCATTER_STRAIGHT
                                                 : LXW_CHART_SCATTER_STRAIGHT_WITH_MARKERS));
      chart_title_set_name(chart, chart_name(c->title).c_str());
      chart_axis_set_name(chart->x_axis, chart_name(x_label).c_str());
      chart_axis_set_name(chart->y_axis, chart_name(c->y_label).c_str());
      chart_legend_set_position(chart, LXW_CHART_LEGEND_BOTTOM);
      for (const Series& s : c->series) {
        const lxw_row_t first = sheet.row();
        double last_y = 0;
        bool have_last = false;
        for (const auto& [x, y] : s.points) {
          // A step chart is drawn through the corners: (x, previous y) before (x, y).
          auto put = [&](double px, double py) {
            worksheet_write_string(ws, sheet.row(), 0, sheet_text(s.name).c_str(), nullptr);
            if (bar) {
              const auto i = static_cast<size_t>(px);
              worksheet_write_string(
                  ws, sheet.row(), 1,
                  i < c->categories.size() ? sheet_text(c->categories[i]).c_str() : "", nullptr);
            } else {
              worksheet_write_number(ws, sheet.row(), 1, px * c->x_display_scale, nullptr);
            }
            worksheet_write_number(ws, sheet.row(), 2, py * c->y_display_scale, nullptr);
            sheet.skip(1);
          };
          if (c->kind == ChartKind::kStep && have_last) put(x, last_y);
          put(x, y);
          last_y = y;
          have_last = true;
        }
        if (sheet.row() == first) continue;
        lxw_chart_series* series = chart_add_series(chart, nullptr, nullptr);
        chart_series_set_categories(series, kSheet, first, 1, sheet.row() - 1, 1);
        chart_series_set_values(series, kSheet, first, 2, sheet.row() - 1, 2);
        chart_series_set_name(series, chart_name(s.name).c_str());
      }
      if (bar) chart_legend_set_position(chart, LXW_CHART_LEGEND_NONE);
      worksheet_insert_chart(ws, start, 4, chart);
      // Leave room for the chart (about 15 rows) before the next block.
      sheet.skip(std::max<lxw_row_t>(2, start + 17 > sheet.row() ? start + 17 - sheet.row() : 1));
    }
    sheet.apply_widths();
  }
  for (auto& [name, sheet] : sheets) sheet->apply_widths();

  const lxw_error error = workbook_close(wb);
  if (error != LXW_NO_ERROR) {
    throw ReportError("xlsx: cannot write the workbook " + path + ": " + lxw_strerror(error));
  }
}

}  // namespace

std::string write_xlsx(const Report& report) {
  const std::filesystem::path path = temp_xlsx_path();
  struct Remove {
    std::filesystem::path p;
    ~Remove() {
      std::error_code ignored;
      std::filesystem::remove(p, ignored);
    }
  } remove{path};
  write_workbook(report, path.string());
  std::ifstream in(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in.good() && !in.eof()) throw ReportError("xlsx: cannot read back " + path.string());
  return bytes.str();
}

}  // namespace llmcap::report
