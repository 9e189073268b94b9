// Markdown, HTML and CSV writers of the normalised report.
#include <cstdio>
#include <map>
#include <sstream>

#include "base/text.h"
#include "report/report_model.h"
#include "report/svg_chart.h"

namespace llmcap::report {
namespace {

bool right_aligned(CellFormat f) { return f != CellFormat::kText && f != CellFormat::kBool; }

/// A table cell in Markdown: text as the literal text (base::escape_markdown, which also
/// escapes "|"); numbers and booleans as formatted (digits, signs, separators and units only).
std::string md_cell(const Cell& cell, CellFormat format) {
  if (const auto* s = std::get_if<std::string>(&cell)) return base::escape_markdown(*s);
  return format_cell(cell, format);
}

/// A cell's raw value for CSV: numbers with 10 significant digits, null empty, text as a
/// neutralised text cell (base::csv_cell: a leading = + - @ tab or CR gets a ').
std::string csv_value(const Cell& c) {
  if (std::holds_alternative<std::monostate>(c)) return "";
  if (const auto* b = std::get_if<bool>(&c)) return *b ? "true" : "false";
  if (const auto* d = std::get_if<double>(&c)) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.10g", *d);
    return buf;
  }
  return base::csv_cell(std::get<std::string>(c));
}

constexpr const char* kCss = R"(body{font-family:"DejaVu Sans",Arial,Helvetica,sans-serif;
color:#222;max-width:1100px;margin:2em auto;padding:0 1em;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;
margin-top:1.6em}p.lead{font-size:1.05em;background:#f4f7fb;border-left:4px solid #4e79a7;
padding:.6em .9em}table{border-collapse:collapse;margin:.6em 0 1.2em;font-size:.88em}
caption{text-align:left;font-weight:bold;padding:.3em 0}th,td{border:1px solid #d0d0d0;
padding:.25em .5em;vertical-align:top}th{background:#f0f0f0;text-align:left}
td.num{text-align:right;white-space:nowrap}figure{margin:1em 0}figcaption{font-size:.85em;
color:#555}nav ul{columns:2;font-size:.9em}.meta{color:#666;font-size:.85em})";

}  // namespace

std::string write_markdown(const Report& report) {
  std::ostringstream o;
  o << "# " << base::escape_markdown(report.title) << "\n";
  for (const Section& s : report.sections) {
    o << "\n## " << base::escape_markdown(s.title) << "\n";
    for (const Block& b : s.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&b)) {
        o << "\n" << base::escape_markdown(p->text, true) << "\n";
      } else if (const auto* t = std::get_if<Table>(&b)) {
        o << "\n**" << base::escape_markdown(t->title) << "**\n\n|";
        for (const Column& c : t->columns) o << " " << base::escape_markdown(c.label) << " |";
        o << "\n|";
        for (const Column& c : t->columns) o << (right_aligned(c.format) ? " ---: |" : " --- |");
        o << "\n";
        for (const auto& row : t->rows) {
          o << "|";
          for (size_t i = 0; i < t->columns.size(); ++i) {
            o << " " << md_cell(row.at(i), t->columns[i].format) << " |";
          }
          o << "\n";
        }
        if (t->rows.empty()) o << "\n(no rows)\n";
      } else {
        const Chart& c = std::get<Chart>(b);
        o << "\n*Chart: " << base::escape_markdown(c.title)
          << " (drawn in the HTML, PDF and XLSX reports; its numbers are in this section's "
             "tables).*\n";
      }
    }
  }
  return o.str();
}

std::string write_html(const Report& report) {
  std::ostringstream o;
  o << "<!DOCTYPE html>\n<html xmlns=\"http://www.w3.org/1999/xhtml\" lang=\"en\">\n<head>\n"
    << "<meta charset=\"utf-8\"/>\n<title>" << xml_escape(report.title) << "</title>\n"
    << "<style>" << kCss << "</style>\n</head>\n<body>\n"
    << "<h1>" << xml_escape(report.title) << "</h1>\n"
    << "<p class=\"meta\">Report of an llmcap run document (llmcap report; docs/reports.md).</p>\n";
  o << "<nav><ul>\n";
  for (const Section& s : report.sections) {
    o << "<li><a href=\"#" << xml_escape(s.id) << "\">" << xml_escape(s.title) << "</a></li>\n";
  }
  o << "</ul></nav>\n";
  for (const Section& s : report.sections) {
    o << "<section id=\"" << xml_escape(s.id) << "\">\n<h2>" << xml_escape(s.title) << "</h2>\n";
    for (const Block& b : s.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&b)) {
        o << "<p" << (s.id == "recommendation" || s.id == "answer" ? " class=\"lead\"" : "") << ">"
          << xml_escape(p->text) << "</p>\n";
      } else if (const auto* t = std::get_if<Table>(&b)) {
        o << "<table id=\"table-" << xml_escape(t->id) << "\">\n<caption>" << xml_escape(t->title)
          << "</caption>\n<thead><tr>";
        for (const Column& c : t->columns) o << "<th>" << xml_escape(c.label) << "</th>";
        o << "</tr></thead>\n<tbody>\n";
        for (const auto& row : t->rows) {
          o << "<tr>";
          for (size_t i = 0; i < t->columns.size(); ++i) {
            o << (right_aligned(t->columns[i].format) ? "<td class=\"num\">" : "<td>")
              << xml_escape(format_cell(row.at(i), t->columns[i].format)) << "</td>";
          }
          o << "</tr>\n";
        }
        o << "</tbody>\n</table>\n";
      } else {
        const Chart& c = std::get<Chart>(b);
        o << "<figure id=\"chart-" << xml_escape(c.id) << "\">\n"
          << render_svg(c) << "<figcaption>" << xml_escape(c.title) << "</figcaption>\n"
          << "</figure>\n";
      }
    }
    o << "</section>\n";
  }
  o << "</body>\n</html>\n";
  return o.str();
}

std::string write_csv(const Report& report) {
  const Table* t = report.find_table("comparison");
  std::ostringstream o;
  if (t == nullptr) return o.str();
  // The comparison table, then each row's TCO figures as tco_<key> columns.
  const Table* tco = report.find_table("tco");
  std::map<std::string, const std::vector<Cell>*> tco_by_type;
  size_t tco_first = 0;  // first column after the lead ones (instance_type, num_instances)
  if (tco != nullptr) {
    tco_first = 2;
    for (const auto& row : tco->rows) {
      if (const auto* s = std::get_if<std::string>(&row.at(0))) tco_by_type[*s] = &row;
    }
  }
  for (size_t i = 0; i < t->columns.size(); ++i) {
    o << (i ? "," : "") << base::csv_cell(t->columns[i].key);
  }
  if (tco != nullptr) {
    for (size_t i = tco_first; i < tco->columns.size(); ++i) {
      o << "," << base::csv_cell("tco_" + tco->columns[i].key);
    }
  }
  o << "\n";
  for (const auto& row : t->rows) {
    for (size_t i = 0; i < t->columns.size(); ++i) o << (i ? "," : "") << csv_value(row.at(i));
    if (tco != nullptr) {
      const auto* type = std::get_if<std::string>(&row.at(0));
      const auto f = type ? tco_by_type.find(*type) : tco_by_type.end();
      for (size_t i = tco_first; i < tco->columns.size(); ++i) {
        o << "," << (f == tco_by_type.end() ? "" : csv_value(f->second->at(i)));
      }
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace llmcap::report
