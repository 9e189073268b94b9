// Hostile names in the user's files through the real commands: the printed table and errors
// show control characters as escapes, plan --csv neutralises formula cells, and an error never
// prints the content of a file that is not the expected format (docs/reports.md, Output
// escaping).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "run_cli.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using llmcap::cli::testing::CliRun;
using llmcap::cli::testing::run_cli;
using llmcap::testing::TempDir;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

const std::string kModel = std::string(LLMCAP_DATA_DIR) + "/models/llama-3.1-8b.json";
const std::string kTrace = std::string(LLMCAP_TEST_DATA_DIR) + "/conv_model300.csv";

json small_scenario(const std::string& name) {
  return {{"name", name},
          {"model", kModel},
          {"workload", {{"kind", "trace"}, {"path", kTrace}}},
          {"slo", {{"ttft_p99_s", 2.0}, {"tpot_p99_s", 0.05}}},
          {"candidates", {"aws-g6e.xlarge"}},
          {"seed", 1}};
}

bool has_control_character(const std::string& text) {
  for (const char c : text) {
    const auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 && c != '\n') || b == 0x7f) return true;
  }
  return false;
}

TEST(CliOutputEscaping, ThePlanTableShowsTerminalEscapesInTheScenarioNameAsText) {
  TempDir dir;
  const std::string name = "evil\x1b]0;owned\x07\x1b[2J\r\nCheapest GPU fleet: free";
  const auto scenario = dir.write("s.json", small_scenario(name).dump());
  const CliRun r = run_cli({"plan", scenario.string(), "--no-store"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_FALSE(has_control_character(r.out)) << r.out;
  EXPECT_THAT(r.out, HasSubstr("Scenario evil\\x1b]0;owned\\x07\\x1b[2J\\r\\nCheapest GPU fleet: "
                               "free: llama-3.1-8b"));
  EXPECT_THAT(r.out, Not(HasSubstr("\nCheapest GPU fleet: free")));
}

TEST(CliOutputEscaping, AnErrorShowsAnEscapeInAValueAsText) {
  TempDir dir;
  json s = small_scenario("x");
  s["candidates"] = {"aws-\x1b[31mred"};
  const auto scenario = dir.write("s.json", s.dump());
  const CliRun r = run_cli({"plan", scenario.string(), "--no-store"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, StartsWith("llmcap: error: "));
  EXPECT_THAT(r.err, HasSubstr("aws-\\x1b[31mred"));
  EXPECT_FALSE(has_control_character(r.err)) << r.err;
}

TEST(CliOutputEscaping, PlanCsvNeutralisesFormulasInClassNames) {
  TempDir dir;
  json s = small_scenario("classes");
  json classes = json::array();
  for (const std::string name : {"=HYPERLINK(\"http://evil\",\"x\")", "+cmd|' /C calc'!A0"}) {
    classes.push_back({{"name", name},
                       {"kind", "trace"},
                       {"path", kTrace},
                       {"slo", {{"ttft_p99_s", 2.0}, {"tpot_p99_s", 0.05}}}});
  }
  s["workload"] = {{"kind", "classes"}, {"classes", classes}};
  s.erase("slo");
  const auto scenario = dir.write("s.json", s.dump());
  const auto csv_path = dir.path() / "plan.csv";
  const CliRun r =
      run_cli({"plan", scenario.string(), "--csv", csv_path.string(), "--quiet", "--no-store"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::string csv = llmcap::testing::read_text(csv_path);
  EXPECT_THAT(csv, HasSubstr(",\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\","));
  EXPECT_THAT(csv, HasSubstr(",\"'+cmd|' /C calc'!A0\","));
  EXPECT_THAT(csv, Not(HasSubstr(",=")));
  EXPECT_THAT(csv, Not(HasSubstr(",\"=")));
  EXPECT_THAT(csv, Not(HasSubstr(",+")));
}

TEST(CliOutputEscaping, ATraversingWorkloadPathDoesNotPrintTheOtherFile) {
  TempDir dir;
  llmcap::testing::write_text(dir.path() / "etc/passwd",
                              "root:x:0:0:secret-content:/root:/bin/bash\n");
  json s = small_scenario("x");
  s["workload"]["path"] = "../../etc/passwd";
  const auto scenario = dir.path() / "a/b/s.json";
  llmcap::testing::write_text(scenario, s.dump());
  const CliRun r = run_cli({"plan", scenario.string(), "--no-store"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("passwd: line 1: unrecognised header (1 column, not shown"));
  EXPECT_THAT(r.err, Not(HasSubstr("root")));
  EXPECT_THAT(r.err, Not(HasSubstr("secret-content")));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

TEST(CliOutputEscaping, AModelPathToAFileThatIsNotJsonDoesNotPrintTheFile) {
  TempDir dir;
  const auto secret = dir.write("secret.txt", "\"hunter2-secret-line\n");
  json s = small_scenario("x");
  s["model"] = secret.string();
  const auto scenario = dir.write("s.json", s.dump());
  const CliRun r = run_cli({"plan", scenario.string(), "--no-store"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("secret.txt: malformed JSON"));
  EXPECT_THAT(r.err, Not(HasSubstr("hunter2")));
}

}  // namespace
}  // namespace llmcap::cli
