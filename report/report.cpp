#include "report/report.h"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "base/text.h"
#include "report/report_model.h"

namespace llmcap::report {
namespace {

std::string known_list() {
  std::string out;
  for (const std::string& n : format_names()) out += (out.empty() ? "" : ", ") + n;
  return out;
}

const char* format_key(CellFormat f) {
  switch (f) {
    case CellFormat::kText:
      return "text";
    case CellFormat::kInteger:
      return "integer";
    case CellFormat::kNumber:
      return "number";
    case CellFormat::kUsd:
      return "usd";
    case CellFormat::kUsdWhole:
      return "usd_whole";
    case CellFormat::kSeconds:
      return "seconds";
    case CellFormat::kMilliseconds:
      return "seconds_as_ms";
    case CellFormat::kPercent:
      return "fraction_as_percent";
    case CellFormat::kBool:
      return "bool";
  }
  return "text";
}

const char* chart_kind(ChartKind k) {
  switch (k) {
    case ChartKind::kLine:
      return "line";
    case ChartKind::kStep:
      return "step";
    case ChartKind::kBar:
      return "bar";
  }
  return "line";
}

nlohmann::json cell_json(const Cell& c) {
  if (std::holds_alternative<std::monostate>(c)) return nullptr;
  if (const auto* b = std::get_if<bool>(&c)) return *b;
  if (const auto* d = std::get_if<double>(&c)) return *d;
  return std::get<std::string>(c);
}

}  // namespace

const std::vector<std::string>& format_names() {
  static const std::vector<std::string> kNames = {"pdf", "html", "md", "csv", "json", "xlsx"};
  return kNames;
}

std::string format_name(Format format) { return format_names().at(static_cast<size_t>(format)); }

Format parse_format(const std::string& name) {
  const std::string n = base::ascii_lower(name);
  if (n == "markdown") return Format::kMarkdown;
  if (n == "htm") return Format::kHtml;
  const auto& names = format_names();
  const auto it = std::find(names.begin(), names.end(), n);
  if (it == names.end()) {
    throw ReportError("unknown report format \"" + name + "\" (known: " + known_list() + ")");
  }
  return static_cast<Format>(it - names.begin());
}

Format format_from_extension(const std::string& path) {
  const std::string ext = base::ascii_lower(std::filesystem::path(path).extension().string());
  if (ext.size() > 1) {
    try {
      return parse_format(ext.substr(1));
    } catch (const ReportError&) {
    }
  }
  throw ReportError("cannot tell the report format from the file name \"" + path +
                    "\" (extension \"" + ext + "\"); give --format (known: " + known_list() + ")");
}

void validate_document(const nlohmann::json& document) {
  if (!document.is_object()) {
    throw ReportError("run document: expected a JSON object, got " +
                      std::string(document.type_name()));
  }
  const auto format = document.find("format");
  if (format == document.end()) {
    throw ReportError("run document: \"format\" is missing, expected \"llmcap-run\"");
  }
  if (*format != "llmcap-run") {
    throw ReportError("run document: \"format\" is " + format->dump() +
                      ", expected \"llmcap-run\"");
  }
  const auto version = document.find("schema_version");
  if (version == document.end()) {
    throw ReportError("run document: \"schema_version\" is missing, expected " +
                      std::to_string(kSupportedSchemaVersion));
  }
  if (!version->is_number_integer() || version->get<int64_t>() != kSupportedSchemaVersion) {
    throw ReportError("run document: \"schema_version\" is " + version->dump() + ", expected " +
                      std::to_string(kSupportedSchemaVersion) +
                      " (this llmcap reads run documents of version " +
                      std::to_string(kSupportedSchemaVersion) + " only)");
  }
  const auto results = document.find("results");
  if (results == document.end() || !results->is_array()) {
    throw ReportError("run document: \"results\" is " +
                      (results == document.end() ? std::string("missing") : results->dump()) +
                      ", expected an array of result rows");
  }
}

nlohmann::json report_to_json(const Report& report) {
  using nlohmann::json;
  json sections = json::array();
  for (const Section& s : report.sections) {
    json blocks = json::array();
    for (const Block& b : s.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&b)) {
        blocks.push_back({{"type", "paragraph"}, {"text", p->text}});
      } else if (const auto* t = std::get_if<Table>(&b)) {
        json columns = json::array();
        for (const Column& c : t->columns) {
          columns.push_back({{"key", c.key}, {"label", c.label}, {"format", format_key(c.format)}});
        }
        json rows = json::array();
        for (const auto& row : t->rows) {
          json r = json::object();
          for (size_t i = 0; i < t->columns.size() && i < row.size(); ++i) {
            r[t->columns[i].key] = cell_json(row[i]);
          }
          rows.push_back(std::move(r));
        }
        blocks.push_back({{"type", "table"},
                          {"id", t->id},
                          {"title", t->title},
                          {"columns", columns},
                          {"rows", rows}});
      } else {
        const Chart& c = std::get<Chart>(b);
        json series = json::array();
        for (const Series& se : c.series) {
          json points = json::array();
          for (const auto& [x, y] : se.points) points.push_back({{c.x_key, x}, {c.y_key, y}});
          series.push_back({{"name", se.name}, {"points", points}});
        }
        json chart = {{"type", "chart"},      {"id", c.id},
                      {"title", c.title},     {"kind", chart_kind(c.kind)},
                      {"x_key", c.x_key},     {"y_key", c.y_key},
                      {"x_label", c.x_label}, {"y_label", c.y_label},
                      {"series", series}};
        if (!c.categories.empty()) chart["categories"] = c.categories;
        blocks.push_back(std::move(chart));
      }
    }
    sections.push_back({{"id", s.id}, {"title", s.title}, {"blocks", blocks}});
  }
  return {{"format", "llmcap-report"},
          {"schema_version", kReportSchemaVersion},
          {"title", report.title},
          {"scenario", report.scenario_name},
          {"recommendation", report.recommendation},
          {"recommendation_source", report.recommendation_from_analysis ? "analysis" : "results"},
          {"sections", sections}};
}

std::string render(const nlohmann::json& document, Format format) {
  const Report report = build_report(document);
  switch (format) {
    case Format::kMarkdown:
      return write_markdown(report);
    case Format::kHtml:
      return write_html(report);
    case Format::kCsv:
      return write_csv(report);
    case Format::kJson:
      return report_to_json(report).dump(2) + "\n";
    case Format::kXlsx:
      return write_xlsx(report);
    case Format::kPdf:
      return write_pdf(report);
  }
  throw ReportError("unknown report format");
}

}  // namespace llmcap::report
