// The normalised report (internal to report/): what every writer renders. Built from a run
// document by build_report (report_build.cpp); numbers stay in the document's units (USD,
// seconds, fractions) and are formatted for display by format_cell.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace llmcap::report {

/// How a column's numbers are shown. Values are stored in the document's units.
enum class CellFormat {
  kText,          ///< strings as they are
  kInteger,       ///< 12
  kNumber,        ///< up to 4 significant digits, e.g. 0.1234 or 12.35
  kUsd,           ///< 1,234.56
  kUsdWhole,      ///< 1,234,567 (yearly figures)
  kSeconds,       ///< 0.123 s, shown with 3 decimals
  kMilliseconds,  ///< a value in seconds shown in ms with 1 decimal (TPOT, ITL)
  kPercent,       ///< a fraction shown as 12.3%
  kBool,          ///< yes / no
};

/// null (shown as "-" or an empty cell), bool, number or text.
using Cell = std::variant<std::monostate, bool, double, std::string>;

struct Column {
  std::string key;    ///< machine name, units in the name (CSV header, JSON)
  std::string label;  ///< human label with its display unit ("TPOT p99 (ms)")
  CellFormat format = CellFormat::kText;
};

struct Table {
  std::string id;  ///< "comparison", "sources", "sensitivity", ...
  std::string title;
  std::string sheet;  ///< XLSX sheet the table goes to
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;  ///< each as long as columns
};

enum class ChartKind { kLine, kStep, kBar };

struct Series {
  std::string name;
  std::vector<std::pair<double, double>> points;  ///< (x, y); kBar: x is the category index
};

struct Chart {
  Chart() = default;
  Chart(std::string id_, std::string title_, ChartKind kind_, std::string x_key_,
        std::string y_key_, std::string x_label_, std::string y_label_)
      : id(std::move(id_)),
        title(std::move(title_)),
        kind(kind_),
        x_key(std::move(x_key_)),
        y_key(std::move(y_key_)),
        x_label(std::move(x_label_)),
        y_label(std::move(y_label_)) {}

  std::string id;  ///< "cost_vs_load", "latency_cdf", "fleet_over_day", "cost_by_instance_type"
  std::string title;
  ChartKind kind = ChartKind::kLine;
  std::string x_key;  ///< data column names (chart data sheet / JSON)
  std::string y_key;
  std::string x_label;  ///< axis labels with display units
  std::string y_label;
  double y_display_scale = 1.0;  ///< e.g. 1000 for seconds shown in ms
  double x_display_scale = 1.0;
  std::vector<std::string> categories;  ///< kBar: one label per x index
  std::vector<Series> series;
};

struct Paragraph {
  std::string text;
};

using Block = std::variant<Paragraph, Table, Chart>;

struct Section {
  std::string id;
  std::string title;
  std::vector<Block> blocks;
};

struct Report {
  std::string title;  ///< "Capacity plan: <scenario name>"
  std::string scenario_name;
  std::string recommendation;  ///< one paragraph
  bool recommendation_from_analysis = false;
  std::vector<Section> sections;

  /// The table with `id`, or nullptr.
  const Table* find_table(const std::string& id) const;
  /// Every chart, in section order.
  std::vector<const Chart*> charts() const;
};

/// The report of a validated run document. Throws ReportError for a field of the wrong type.
Report build_report(const nlohmann::json& document);

/// `cell` formatted for display by `format` ("-" for null).
std::string format_cell(const Cell& cell, CellFormat format);

/// The normalised report object (the "json" format).
nlohmann::json report_to_json(const Report& report);

// Writers (one file each).
std::string write_markdown(const Report& report);
std::string write_html(const Report& report);
std::string write_csv(const Report& report);
std::string write_xlsx(const Report& report);
std::string write_pdf(const Report& report);

/// How the PDF writer lays out one table across an A4 landscape page.
struct TableLayout {
  double point_size = 0;  ///< font size of the table (the body's, or smaller when too wide)
  std::vector<double> width_percent;  ///< per column, of the line; they add up to 100
  /// Per column, the width (characters of the table's font, cell padding included) that no
  /// line break can go below: its longest header word, a cell kept on one line (numbers,
  /// short ids), the longest word of a wrapping cell (up to 16 characters).
  std::vector<double> min_chars;
  double line_chars = 0;  ///< characters of the table's font across the line
};

/// Column widths and font size of `table` in the PDF: every column gets its min_chars when
/// the line holds them all (at a font down to 6 pt); what is left goes to the columns whose
/// longest text (capped at 40 characters) is longer, in proportion.
TableLayout layout_table(const Table& table);

}  // namespace llmcap::report
