// Each report format rendered from the fixture run document and parsed back: Markdown and
// CSV and JSON here, HTML through python3's xml and html parsers, XLSX through openpyxl, PDF
// through pdftotext (tests/report/parse_report.py; poppler-utils, python3-openpyxl).
#include "report/report.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "report/report_model.h"
#include "report/svg_chart.h"
#include "test_util.h"

namespace llmcap::report {
namespace {

using llmcap::testing::error_message;
using llmcap::testing::TempDir;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kTolerance = 1e-9;

json fixture() {
  std::ifstream in(llmcap::testing::test_data("plan-run.json"));
  return json::parse(in);
}

/// stdout of `command` (stderr left alone); fails the test on a non-zero exit.
std::string run_command(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  EXPECT_NE(pipe, nullptr) << command;
  if (pipe == nullptr) return output;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) output.append(buf.data(), n);
  const int status = ::pclose(pipe);
  EXPECT_EQ(status, 0) << command;
  return output;
}

std::string parse_script() { return std::string(LLMCAP_TEST_DATA_DIR) + "/../parse_report.py"; }

/// Whitespace runs collapsed to one space (text extracted from PDF breaks lines anywhere).
std::string squash(const std::string& text) {
  std::string out;
  bool space = false;
  for (char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      space = true;
    } else {
      if (space && !out.empty()) out += ' ';
      out += c;
      space = false;
    }
  }
  return out;
}

/// The rows of the fixture that meet the SLO.
std::vector<json> feasible_rows(const json& doc) {
  std::vector<json> out;
  for (const json& r : doc.at("results")) {
    if (r.at("feasible").get<bool>()) out.push_back(r);
  }
  return out;
}

std::string usd(double v) { return format_cell(v, CellFormat::kUsd); }
std::string usd_whole(double v) { return format_cell(v, CellFormat::kUsdWhole); }

// --- formats and validation ------------------------------------------------------------------

TEST(ReportFormat, ParsesNamesAndExtensions) {
  EXPECT_EQ(parse_format("pdf"), Format::kPdf);
  EXPECT_EQ(parse_format("HTML"), Format::kHtml);
  EXPECT_EQ(parse_format("markdown"), Format::kMarkdown);
  EXPECT_EQ(parse_format("md"), Format::kMarkdown);
  EXPECT_EQ(parse_format("xlsx"), Format::kXlsx);
  EXPECT_EQ(format_from_extension("/tmp/a/report.CSV"), Format::kCsv);
  EXPECT_EQ(format_from_extension("r.htm"), Format::kHtml);
  EXPECT_EQ(format_from_extension("r.json"), Format::kJson);
  for (const std::string& name : format_names()) EXPECT_EQ(format_name(parse_format(name)), name);
}

TEST(ReportFormat, UnknownNameListsTheKnownFormats) {
  EXPECT_EQ(error_message<ReportError>([] { parse_format("docx"); }),
            "unknown report format \"docx\" (known: pdf, html, md, csv, json, xlsx)");
  EXPECT_THAT(error_message<ReportError>([] { format_from_extension("report.txt"); }),
              HasSubstr("(extension \".txt\"); give --format (known: pdf, html, md, csv, json, "
                        "xlsx)"));
}

TEST(ReportDocument, RefusesAnotherSchemaVersion) {
  json doc = fixture();
  doc["schema_version"] = 2;
  EXPECT_EQ(error_message<ReportError>([&] { validate_document(doc); }),
            "run document: \"schema_version\" is 2, expected 1 (this llmcap reads run "
            "documents of version 1 only)");
  doc.erase("schema_version");
  EXPECT_EQ(error_message<ReportError>([&] { render(doc, Format::kMarkdown); }),
            "run document: \"schema_version\" is missing, expected 1");
}

TEST(ReportDocument, RefusesAnotherFormatAndMissingResults) {
  json doc = fixture();
  doc["format"] = "llmcap-audit";
  EXPECT_EQ(error_message<ReportError>([&] { validate_document(doc); }),
            "run document: \"format\" is \"llmcap-audit\", expected \"llmcap-run\"");
  doc = fixture();
  doc.erase("results");
  EXPECT_EQ(error_message<ReportError>([&] { validate_document(doc); }),
            "run document: \"results\" is missing, expected an array of result rows");
  EXPECT_EQ(error_message<ReportError>([] { validate_document(json::array()); }),
            "run document: expected a JSON object, got array");
}

TEST(ReportDocument, AFieldOfTheWrongTypeIsNamedByItsPath) {
  json doc = fixture();
  doc["results"][1]["usd_per_hour"] = "cheap";
  EXPECT_EQ(error_message<ReportError>([&] { render(doc, Format::kHtml); }),
            "run document: results[1].usd_per_hour is \"cheap\", expected a number or null");
  doc = fixture();
  doc["analysis"]["fleet_over_day"][0]["hourly_instances"][5] = "x";
  EXPECT_EQ(error_message<ReportError>([&] { render(doc, Format::kCsv); }),
            "run document: analysis.fleet_over_day[0].hourly_instances[5] is \"x\", expected a "
            "number");
}

// --- Markdown ---------------------------------------------------------------------------------

TEST(ReportMarkdown, HasEverySectionAndTheComparisonNumbers) {
  const json doc = fixture();
  const std::string md = render(doc, Format::kMarkdown);
  EXPECT_THAT(md, ::testing::StartsWith("# Capacity plan: chat-llama3.1-8b\n"));
  for (const char* heading :
       {"## Recommendation", "## Scenario and workload", "## Comparison of instance types",
        "## Total cost of ownership", "## Configuration search", "## Cost against load",
        "## Latency distribution", "## Fleet size over the day", "## Sensitivity", "## Uncertainty",
        "## Assumptions", "## Calibration profile", "## Prices and specifications: sources"}) {
    EXPECT_THAT(md, HasSubstr(std::string("\n") + heading + "\n")) << heading;
  }
  // The recommendation of the analysis, verbatim.
  EXPECT_THAT(md, HasSubstr(doc["analysis"]["recommendation"].get<std::string>()));
  for (const json& r : feasible_rows(doc)) {
    EXPECT_THAT(md, HasSubstr("| " + r["instance_type"].get<std::string>() + " |"));
    EXPECT_THAT(md, HasSubstr("| " + usd(r["usd_per_hour"]) + " |"));
    EXPECT_THAT(md, HasSubstr("| " + usd_whole(r["annual_usd"]) + " |"));
  }
  EXPECT_THAT(md, HasSubstr("| aws-g6e.xlarge | 95.0% | 3 | 4 | 5.58 | 7.44 |"));
  EXPECT_THAT(md, HasSubstr("| 2026-06-17 |"));  // a source's date
  EXPECT_THAT(md, HasSubstr("| Fit error, median | 4.3% |"));
  EXPECT_THAT(md, HasSubstr("TPOT floor at batch 1 is 0.0613 s"));
  // Sensitivity: +20% price on g6e.
  EXPECT_THAT(md, HasSubstr("| price | 1.2 | aws-g6e.xlarge | yes | 3 | 6.70 | 20.0% |"));
}

TEST(ReportMarkdown, RendersOnlyWhatIsPresentAndBuildsTheRecommendation) {
  json doc = fixture();
  doc.erase("analysis");
  doc.erase("tco");
  doc.erase("sources");
  doc["calibration"] = nullptr;
  for (json& r : doc["results"]) r.erase("tco");
  const std::string md = render(doc, Format::kMarkdown);
  for (const char* absent :
       {"## Sensitivity", "## Uncertainty", "## Cost against load", "## Total cost of ownership",
        "## Fleet size over the day", "*Chart: Latency CDF"}) {
    EXPECT_THAT(md, Not(HasSubstr(absent))) << absent;
  }
  EXPECT_THAT(md, HasSubstr("This run document lists no sources."));
  EXPECT_THAT(md, HasSubstr("No calibration profile was used"));
  // Built from the results: cheapest fleet, then the cheapest of the other device kind.
  EXPECT_THAT(md, HasSubstr("For scenario chat-llama3.1-8b (p99 TTFT at most 2 s, p99 TPOT at "
                            "most 50.0 ms), buy 3 x aws-g6e.xlarge (NVIDIA L40S) at USD 5.58 "
                            "per hour (USD 48,907 per year), p99 TTFT 0.93 s and p99 TPOT "
                            "29.1 ms: the cheapest fleet that meets the SLO. The cheapest CPU "
                            "fleet is 11 x aws-m7i.48xlarge"));
}

TEST(ReportMarkdown, TypesWithoutThePriceModelAreNamedInTheTcoSection) {
  json doc = fixture();
  json& g6 = doc["results"][1];
  ASSERT_EQ(g6["instance_type"], "aws-g6.xlarge");
  g6["tco"] = nullptr;
  g6["tco_not_offered"] =
      "\"aws-g6.xlarge\" offers no \"reserved_1y\" price (it offers: on_demand)";
  doc["tco"]["price_model_not_offered"] =
      json::parse(R"([{"instance_type": "aws-g6.xlarge", "offers": "on_demand"}])");
  const std::string md = render(doc, Format::kMarkdown);
  // Markdown escapes the underscores.
  EXPECT_THAT(md, HasSubstr("Not offered under the price model, so without TCO and left out of "
                            "this comparison: \"aws-g6.xlarge\" offers no \"reserved\\_1y\" "
                            "price (it offers: on\\_demand)."));
  EXPECT_THAT(md, HasSubstr("| price model not offered |"));
  // An empty list adds no assumption row.
  doc["tco"]["price_model_not_offered"] = json::array();
  EXPECT_THAT(render(doc, Format::kMarkdown), Not(HasSubstr("price model not offered")));
}

TEST(ReportMarkdown, NoFeasibleRowSaysSo) {
  json doc = fixture();
  doc.erase("analysis");
  for (json& r : doc["results"]) {
    r["feasible"] = false;
    r["usd_per_hour"] = nullptr;
  }
  const std::string md = render(doc, Format::kMarkdown);
  EXPECT_THAT(md, HasSubstr("No instance type meets the SLO of scenario chat-llama3.1-8b"));
}

// --- CSV and JSON -----------------------------------------------------------------------------

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

TEST(ReportCsv, TheComparisonTableParsesBack) {
  const json doc = fixture();
  std::istringstream csv(render(doc, Format::kCsv));
  std::string line;
  std::getline(csv, line);
  const std::vector<std::string> header = split_csv_line(line);
  ASSERT_GE(header.size(), 15u);
  EXPECT_EQ(header[0], "instance_type");
  EXPECT_EQ(header[5], "usd_per_hour");
  EXPECT_NE(std::find(header.begin(), header.end(), "tco_usd_per_million_input_tokens"),
            header.end());
  std::map<std::string, std::map<std::string, std::string>> rows;
  while (std::getline(csv, line)) {
    const std::vector<std::string> cells = split_csv_line(line);
    ASSERT_EQ(cells.size(), header.size()) << line;
    for (size_t i = 0; i < cells.size(); ++i) rows[cells[0]][header[i]] = cells[i];
  }
  ASSERT_EQ(rows.size(), doc["results"].size());
  for (const json& r : doc["results"]) {
    const auto& row = rows.at(r["instance_type"].get<std::string>());
    EXPECT_EQ(row.at("feasible"), r["feasible"].get<bool>() ? "true" : "false");
    if (r["feasible"].get<bool>()) {
      for (const char* key : {"usd_per_hour", "annual_usd", "ttft_p99_s", "tpot_p99_s"}) {
        EXPECT_NEAR(std::stod(row.at(key)), r[key].get<double>(), kTolerance) << key;
      }
      EXPECT_NEAR(std::stod(row.at("tco_cny_per_year")), r["tco"]["cny_per_year"].get<double>(),
                  1e-6);
    } else {
      EXPECT_EQ(row.at("usd_per_hour"), "");
      EXPECT_EQ(row.at("infeasible_reason"), r["infeasible_reason"].get<std::string>());
    }
  }
}

TEST(ReportJson, TheNormalisedReportParsesBack) {
  const json doc = fixture();
  const json rep = json::parse(render(doc, Format::kJson));
  EXPECT_EQ(rep.at("format"), "llmcap-report");
  EXPECT_EQ(rep.at("schema_version"), kReportSchemaVersion);
  EXPECT_EQ(rep.at("recommendation"), doc["analysis"]["recommendation"]);
  EXPECT_EQ(rep.at("recommendation_source"), "analysis");
  std::map<std::string, json> tables;
  std::set<std::string> charts;
  for (const json& s : rep.at("sections")) {
    for (const json& b : s.at("blocks")) {
      if (b.at("type") == "table") tables[b.at("id")] = b;
      if (b.at("type") == "chart") charts.insert(b.at("id").get<std::string>());
    }
  }
  for (const char* id :
       {"comparison", "sources", "sensitivity", "uncertainty", "tco", "search", "pareto",
        "cost_vs_load", "latency_quantiles_ttft", "latency_quantiles_tpot", "fleet_over_day",
        "assumptions", "calibration", "scenario", "deployment", "owned"}) {
    EXPECT_TRUE(tables.count(id)) << id;
  }
  EXPECT_EQ(charts,
            (std::set<std::string>{"cost_by_instance_type", "pareto", "cost_vs_load",
                                   "latency_cdf_ttft", "latency_cdf_tpot", "fleet_over_day"}));
  // Comparison rows: feasible cheapest first, the values as in the document.
  const json& rows = tables["comparison"]["rows"];
  ASSERT_EQ(rows.size(), doc["results"].size());
  EXPECT_EQ(rows[0]["instance_type"], "aws-g6e.xlarge");  // 3 x 1.861 = 5.583 USD/hour
  double last = 0;
  for (const json& r : rows) {
    if (r["usd_per_hour"].is_null()) continue;
    EXPECT_GE(r["usd_per_hour"].get<double>(), last);
    last = r["usd_per_hour"].get<double>();
  }
  EXPECT_EQ(tables["sources"]["rows"].size(), doc["sources"].size());
  EXPECT_EQ(tables["sensitivity"]["rows"].size(), doc["analysis"]["sensitivity"].size());
  EXPECT_EQ(tables["fleet_over_day"]["rows"].size(), 24u);
}

TEST(ReportJson, RenderingIsDeterministic) {
  const json doc = fixture();
  for (Format f : {Format::kMarkdown, Format::kHtml, Format::kCsv, Format::kJson}) {
    EXPECT_EQ(render(doc, f), render(doc, f)) << format_name(f);
  }
}

// --- SVG --------------------------------------------------------------------------------------

TEST(SvgChart, DrawsOneLinePerSeriesAndEscapesText) {
  Chart c{"t", "Cost <&> load", ChartKind::kLine, "x", "y", "load", "USD"};
  c.series = {{"a&b", {{0, 1}, {1, 2}, {2, 4}}}, {"c", {{0, 2}, {2, 3}}}};
  const std::string svg = render_svg(c);
  EXPECT_THAT(svg, HasSubstr("Cost &lt;&amp;&gt; load"));
  EXPECT_THAT(svg, HasSubstr(">a&amp;b</text>"));
  size_t paths = 0;
  for (size_t p = svg.find("<path"); p != std::string::npos; p = svg.find("<path", p + 1)) ++paths;
  EXPECT_EQ(paths, 2u);
  const std::string empty = render_svg(Chart{"e", "Empty", ChartKind::kLine, "x", "y", "", ""});
  EXPECT_THAT(empty, HasSubstr(">no data</text>"));
}

// --- HTML (python3 xml + html.parser) -----------------------------------------------------------

TEST(ReportHtml, IsOneWellFormedSelfContainedFileWithSvgChartsAndTheNumbers) {
  const json doc = fixture();
  TempDir dir;
  const auto path = dir.write("report.html", render(doc, Format::kHtml));
  const json parsed =
      json::parse(run_command("/usr/bin/python3 " + parse_script() + " html " + path.string()));
  EXPECT_EQ(parsed.at("title"), "Capacity plan: chat-llama3.1-8b");
  EXPECT_EQ(parsed.at("svg_count"), 6);
  EXPECT_TRUE(parsed.at("external_refs").empty()) << parsed.at("external_refs").dump();
  const json& comparison = parsed.at("tables").at("table-comparison");
  ASSERT_EQ(comparison.size(), doc["results"].size() + 1);  // header + rows
  std::map<std::string, json> by_type;
  for (const json& row : comparison) by_type[row[0].get<std::string>()] = row;
  for (const json& r : feasible_rows(doc)) {
    const json& row = by_type.at(r["instance_type"].get<std::string>());
    EXPECT_EQ(row[5], usd(r["usd_per_hour"]));
    EXPECT_EQ(row[7], usd_whole(r["annual_usd"]));
    EXPECT_EQ(row[11], format_cell(r["tpot_p99_s"].get<double>(), CellFormat::kMilliseconds));
  }
  EXPECT_THAT(parsed.at("text").get<std::string>(),
              HasSubstr(doc["analysis"]["recommendation"].get<std::string>()));
  EXPECT_EQ(parsed.at("tables").at("table-sources").size(), doc["sources"].size() + 1);
}

// --- XLSX (openpyxl) ----------------------------------------------------------------------------

TEST(ReportXlsx, OpensWithOpenpyxlWithTheSheetsAndTheNumbers) {
  const json doc = fixture();
  const std::string bytes = render(doc, Format::kXlsx);
  ASSERT_GE(bytes.size(), 4u);
  EXPECT_EQ(bytes.substr(0, 2), "PK");  // a ZIP container
  TempDir dir;
  const auto path = dir.write("report.xlsx", bytes);
  const json parsed =
      json::parse(run_command("/usr/bin/python3 " + parse_script() + " xlsx " + path.string()));
  std::vector<std::string> sheets = parsed.at("sheets");
  for (const char* s : {"Summary", "Comparison", "Sources", "Sensitivity", "Uncertainty", "Charts",
                        "TCO", "Assumptions", "Search", "Fleet over day"}) {
    EXPECT_NE(std::find(sheets.begin(), sheets.end(), s), sheets.end()) << s;
  }
  EXPECT_EQ(sheets.at(0), "Summary");
  EXPECT_EQ(sheets.at(1), "Comparison");
  // Comparison: title row, header row, one row per result with numbers as numbers.
  const json& cmp = parsed.at("cells").at("Comparison");
  ASSERT_GE(cmp.size(), 2 + doc["results"].size());
  EXPECT_EQ(cmp[1][0], "Instance type");
  EXPECT_EQ(cmp[1][5], "USD/hour");
  std::map<std::string, json> by_type;
  for (size_t i = 2; i < 2 + doc["results"].size(); ++i) by_type[cmp[i][0]] = cmp[i];
  for (const json& r : doc["results"]) {
    const json& row = by_type.at(r["instance_type"].get<std::string>());
    if (r["feasible"].get<bool>()) {
      EXPECT_NEAR(row[5].get<double>(), r["usd_per_hour"].get<double>(), kTolerance);
      EXPECT_NEAR(row[11].get<double>(), r["tpot_p99_s"].get<double>() * 1e3, 1e-9);  // in ms
      EXPECT_EQ(row[3], true);
    } else {
      EXPECT_TRUE(row[5].is_null());
      EXPECT_EQ(row[3], false);
    }
  }
  // Summary: the recommendation; Sources: every source with its date.
  const std::string summary = parsed.at("cells").at("Summary").dump();
  EXPECT_THAT(summary, HasSubstr(json(doc["analysis"]["recommendation"]).dump()));
  const std::string sources = parsed.at("cells").at("Sources").dump();
  for (const json& s : doc["sources"]) {
    EXPECT_THAT(sources, HasSubstr(s["as_of"].get<std::string>()));
    EXPECT_THAT(sources, HasSubstr(s["id"].get<std::string>()));
  }
  const std::string uncertainty = parsed.at("cells").at("Uncertainty").dump();
  EXPECT_THAT(uncertainty, HasSubstr("116.1216"));
}

// --- PDF (pdftotext) ----------------------------------------------------------------------------

TEST(ReportPdf, TurnsToTextWithTheNumbers) {
  const json doc = fixture();
  const std::string bytes = render(doc, Format::kPdf);
  ASSERT_GE(bytes.size(), 5u);
  EXPECT_EQ(bytes.substr(0, 5), "%PDF-");
  TempDir dir;
  const auto path = dir.write("report.pdf", bytes);
  const std::string text = squash(run_command("pdftotext " + path.string() + " -"));
  EXPECT_THAT(text, HasSubstr("Capacity plan: chat-llama3.1-8b"));
  EXPECT_THAT(text, HasSubstr(squash(doc["analysis"]["recommendation"].get<std::string>())));
  for (const json& r : feasible_rows(doc)) {
    EXPECT_THAT(text, HasSubstr(r["instance_type"].get<std::string>()));
    EXPECT_THAT(text, HasSubstr(usd(r["usd_per_hour"]))) << r["instance_type"];
    EXPECT_THAT(text, HasSubstr(usd_whole(r["annual_usd"]))) << r["instance_type"];
  }
  for (const char* heading : {"Sensitivity", "Uncertainty", "Calibration profile",
                              "Prices and specifications: sources", "Fleet size over the day"}) {
    EXPECT_THAT(text, HasSubstr(heading));
  }
  EXPECT_THAT(text, HasSubstr("2026-06-17"));
  const std::string info = run_command("pdfinfo " + path.string());
  EXPECT_THAT(info, HasSubstr("Page size:"));
}

TEST(ReportPdf, WideTablesBreakNoHeaderWordOrNumber) {
  // The comparison table of the fixture (15 columns): every column is at least as wide as its
  // longest header word and its numbers, at a font made smaller to fit, and the columns fill
  // the line.
  const Report report = build_report(fixture());
  const Table* comparison = report.find_table("comparison");
  ASSERT_NE(comparison, nullptr);
  ASSERT_GE(comparison->columns.size(), 12u);
  const TableLayout layout = layout_table(*comparison);
  ASSERT_EQ(layout.width_percent.size(), comparison->columns.size());
  EXPECT_LT(layout.point_size, 8.5);
  EXPECT_GE(layout.point_size, 6.0);
  double total = 0;
  constexpr double kPercentTolerance = 1e-9;
  for (size_t i = 0; i < layout.width_percent.size(); ++i) {
    total += layout.width_percent[i];
    const double chars = layout.width_percent[i] / 100 * layout.line_chars;
    EXPECT_GE(chars + kPercentTolerance, layout.min_chars[i]) << comparison->columns[i].label;
    std::istringstream words(comparison->columns[i].label);
    for (std::string w; words >> w;) {
      EXPECT_GE(layout.min_chars[i], static_cast<double>(w.size())) << w;
    }
  }
  EXPECT_NEAR(total, 100.0, kPercentTolerance);
  // In the PDF's text, the header words come out whole ("Instances", not "Insta nces").
  TempDir dir;
  const auto path = dir.write("report.pdf", render(fixture(), Format::kPdf));
  const std::string text = squash(run_command("pdftotext " + path.string() + " -"));
  for (const char* word : {"Instances", "USD/hour", "USD/year", "Goodput", "latency"}) {
    EXPECT_THAT(text, HasSubstr(word));
  }
  // A narrow table keeps the body font.
  Table narrow;
  narrow.columns = {{"a", "Parameter", CellFormat::kText}, {"b", "Value", CellFormat::kNumber}};
  narrow.rows = {{std::string("load multiplier"), 1.5}};
  const TableLayout small = layout_table(narrow);
  EXPECT_DOUBLE_EQ(small.point_size, 8.5);
}

}  // namespace
}  // namespace llmcap::report
