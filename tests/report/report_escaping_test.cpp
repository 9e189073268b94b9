// User-supplied text (scenario, instance type and reason names of a run document) with hostile
// content through every report format and `llmcap report`: each shows it as the literal text
// (docs/reports.md, Output escaping).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../cli/run_cli.h"
#include "cli/cli.h"
#include "report/report.h"
#include "test_util.h"

namespace llmcap::report {
namespace {

using llmcap::testing::TempDir;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

// Markdown that, unescaped, starts a heading, a link to javascript: and an iframe.
const std::string kMarkdownAttack =
    "chat\n# Injected heading\n[click](javascript:alert(1)) <iframe src=\"//evil\"></iframe> *x*";
const std::string kTerminalAttack = "red\x1b[31m\x07\x01 name";

json fixture() {
  std::ifstream in(llmcap::testing::test_data("plan-run.json"));
  return json::parse(in);
}

/// stdout of `command`; `status` its exit status.
std::string run_command(const std::string& command, int& status) {
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  std::array<char, 4096> buf{};
  size_t n = 0;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) output.append(buf.data(), n);
  status = ::pclose(pipe);
  return output;
}

/// The HTML report parsed by python3's strict XML parser, then html.parser
/// (tests/report/parse_report.py); fails the test when the file is not well-formed XML.
json parse_html(const std::string& html) {
  TempDir dir;
  const auto path = dir.write("report.html", html);
  int status = -1;
  const std::string out = run_command("/usr/bin/python3 " + std::string(LLMCAP_TEST_DATA_DIR) +
                                          "/../parse_report.py html " + path.string() + " 2>&1",
                                      status);
  EXPECT_EQ(status, 0) << out;
  return status == 0 ? json::parse(out) : json::object();
}

/// Whether `text` holds `c` not escaped by a backslash (an odd number of them before it).
bool has_unescaped(const std::string& text, char c) {
  for (size_t i = text.find(c); i != std::string::npos; i = text.find(c, i + 1)) {
    size_t backslashes = 0;
    while (backslashes < i && text[i - 1 - backslashes] == '\\') ++backslashes;
    if (backslashes % 2 == 0) return true;
  }
  return false;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(ReportEscaping, MarkdownShowsAHostileScenarioNameAsLiteralText) {
  json doc = fixture();
  doc["scenario"]["name"] = kMarkdownAttack;
  const std::string md = render(doc, Format::kMarkdown);
  EXPECT_THAT(md, HasSubstr("# Capacity plan: chat\\\\n\\# Injected heading\\\\n\\[click\\]"
                            "(javascript:alert(1)) \\<iframe src=\"//evil\"\\>\\</iframe\\> "
                            "\\*x\\*\n"));
  EXPECT_FALSE(has_unescaped(md, '<'));
  EXPECT_FALSE(has_unescaped(md, '['));
  for (const std::string& line : lines_of(md)) {  // the title and the scenario table's row
    if (line.find("javascript") == std::string::npos) continue;
    for (const char c : {'>', ']', '*', '#'}) {
      EXPECT_FALSE(has_unescaped(line.substr(line.find("chat")), c)) << c << " in " << line;
    }
  }
  size_t titles = 0;
  for (const std::string& line : lines_of(md)) titles += line.rfind("# ", 0) == 0 ? 1 : 0;
  EXPECT_EQ(titles, 1u) << "a heading was injected";
}

TEST(ReportEscaping, MarkdownTableCellsCannotBreakOutOfTheirRowOrCell) {
  json doc = fixture();
  doc["results"][0]["instance_type"] = "a|b\n| fake | row |\n<b>bold</b>";
  const std::string md = render(doc, Format::kMarkdown);
  EXPECT_THAT(md, HasSubstr("| a\\|b\\\\n\\| fake \\| row \\|\\\\n\\<b\\>bold\\</b\\> |"));
  for (const std::string& line : lines_of(md)) EXPECT_NE(line.rfind("| fake", 0), 0u) << line;
}

TEST(ReportEscaping, MarkdownAndHtmlShowTerminalEscapesAsText) {
  json doc = fixture();
  doc["scenario"]["name"] = kTerminalAttack;
  const std::string md = render(doc, Format::kMarkdown);
  EXPECT_THAT(md, HasSubstr("# Capacity plan: red\\\\x1b\\[31m\\\\x07\\\\x01 name\n"));
  EXPECT_EQ(md.find('\x1b'), std::string::npos);
  const json html = parse_html(render(doc, Format::kHtml));
  EXPECT_EQ(html.value("title", ""), "Capacity plan: red\\x1b[31m\\x07\\x01 name");
}

TEST(ReportEscaping, HtmlStaysWellFormedXmlForMarkupForbiddenCharactersAndInvalidUtf8) {
  json doc = fixture();
  doc["scenario"]["name"] = std::string("<script>alert('x')</script> & \"q\" \x0b\x1b") +
                            "\xef\xbf\xbf bad\xff\xfe utf8 \xc3";
  doc["results"][0]["instance_type"] = "]]><!-- \x0c";
  doc["results"][0]["infeasible_reason"] = "</td></tr></table><p>\x1b[2J";
  const std::string html = render(doc, Format::kHtml);
  EXPECT_EQ(html.find('\x1b'), std::string::npos);
  EXPECT_THAT(html, Not(HasSubstr("<script>")));
  const json parsed = parse_html(html);
  EXPECT_EQ(parsed.value("title", ""),
            "Capacity plan: <script>alert('x')</script> & \"q\" \\x0b\\x1b\\uffff bad\\xff\\xfe "
            "utf8 \\xc3");
  ASSERT_TRUE(parsed.contains("tables"));
  const json& comparison = parsed.at("tables").at("table-comparison");
  bool found = false;
  for (const json& row : comparison) found = found || row[0] == "]]><!-- \\x0c";
  EXPECT_TRUE(found) << comparison.dump();
}

TEST(ReportEscaping, CsvTextCellsStartingAFormulaAreNeutralisedAndNumbersStayNumbers) {
  json doc = fixture();
  size_t infeasible = 0;
  while (doc["results"][infeasible]["feasible"].get<bool>()) ++infeasible;
  doc["results"][0]["instance_type"] = "=HYPERLINK(\"http://evil\",\"x\")";
  doc["results"][infeasible]["instance_type"] = "@SUM(A1)";
  doc["results"][infeasible]["infeasible_reason"] = "+cmd|' /C calc'!A0";
  const std::string csv = render(doc, Format::kCsv);
  EXPECT_THAT(csv, HasSubstr("\n\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\","));
  EXPECT_THAT(csv, HasSubstr("\n\"'@SUM(A1)\","));
  EXPECT_THAT(csv, HasSubstr(",\"'+cmd|' /C calc'!A0\""));
  for (const std::string& line : lines_of(csv)) {
    EXPECT_THAT(line, Not(HasSubstr(",=")));
    EXPECT_THAT(line, Not(HasSubstr(",+")));
    EXPECT_THAT(line, Not(HasSubstr(",@")));
  }
}

TEST(ReportEscaping, CsvKeepsANegativeNumberANumber) {
  json doc = fixture();
  size_t feasible = 0;
  while (!doc["results"][feasible]["feasible"].get<bool>()) ++feasible;
  doc["results"][feasible]["usd_per_hour"] = -1.5;
  const std::string csv = render(doc, Format::kCsv);
  EXPECT_THAT(csv, HasSubstr(",-1.5,"));
  EXPECT_THAT(csv, Not(HasSubstr("'-1.5")));
}

TEST(ReportEscaping, TheReportCommandWritesAHostileNameEscapedInMarkdownAndHtml) {
  json doc = fixture();
  doc["scenario"]["name"] = kMarkdownAttack + kTerminalAttack;
  TempDir dir;
  const auto document = dir.write("doc.json", doc.dump());
  for (const std::string ext : {"md", "html"}) {
    const auto out = dir.path() / ("report." + ext);
    const auto r =
        cli::testing::run_cli({"report", "--document", document.string(), "--out", out.string()});
    ASSERT_EQ(r.code, cli::kExitOk) << r.err;
    const std::string text = llmcap::testing::read_text(out);
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << ext;
    EXPECT_FALSE(ext == "md" ? has_unescaped(text, '<') : text.find("<iframe") != text.npos);
    if (ext == "html") {
      EXPECT_EQ(parse_html(text).value("title", ""),
                "Capacity plan: " + kMarkdownAttack + "red\\x1b[31m\\x07\\x01 name");
    }
  }
}

}  // namespace
}  // namespace llmcap::report
