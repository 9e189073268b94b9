// The CLI's readable output (issue 30, item 7): every line within the width (--width, else
// $COLUMNS, else the terminal, else 100), infeasible reasons cut to their first clause unless
// --verbose, `llmcap instances`, and the error paths of --width and --kind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "cli/text_layout.h"
#include "run_cli.h"

namespace llmcap::cli {
namespace {

using llmcap::cli::testing::CliRun;
using llmcap::cli::testing::run_cli;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kData = LLMCAP_DATA_DIR;
const std::string kDefaultScenario =
    std::string(LLMCAP_SOURCE_DIR) + "/data/scenarios/chat-llama3.1-8b.json";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

/// Every line of `text` no wider than `width` columns; the widest line otherwise.
void expect_fits(const std::string& text, size_t width) {
  for (const std::string& line : lines_of(text)) {
    EXPECT_LE(display_width(line), width) << "\"" << line << "\"";
  }
}

TEST(ReadablePlan, EveryLineOfTheDefaultPlanFitsWidth100) {
  const CliRun r = run_cli(
      {"plan", kDefaultScenario, "--quiet", "--no-store", "--width", "100", "--data-dir", kData});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  expect_fits(r.out, 100);
  EXPECT_EQ(r.out.rfind("Answer: ", 0), 0u) << r.out;  // the answer card first
  EXPECT_THAT(r.out, Not(HasSubstr("e+0")));           // no exponent notation
  EXPECT_THAT(r.out, Not(HasSubstr(" bytes")));        // sizes in GB
  // Reasons are cut to their first clause; the note says where the whole ones are.
  EXPECT_THAT(r.out, HasSubstr("--verbose prints them whole"));
}

TEST(ReadablePlan, VerbosePrintsTheWholeReasonAndStillFits) {
  const CliRun cut = run_cli({"plan", kDefaultScenario, "--quiet", "--no-store", "--no-analysis",
                              "--width", "80", "--data-dir", kData});
  const CliRun whole = run_cli({"plan", kDefaultScenario, "--quiet", "--no-store", "--no-analysis",
                                "--width", "80", "--verbose", "--data-dir", kData});
  ASSERT_EQ(cut.code, kExitOk) << cut.err;
  ASSERT_EQ(whole.code, kExitOk) << whole.err;
  expect_fits(cut.out, 80);
  expect_fits(whole.out, 80);
  EXPECT_GT(whole.out.size(), cut.out.size());
  EXPECT_THAT(whole.out, Not(HasSubstr("--verbose prints them whole")));
}

TEST(ReadablePlan, RefusesAWidthOutsideItsRangeBeforeAnyWork) {
  const CliRun r = run_cli(
      {"plan", kDefaultScenario, "--quiet", "--no-store", "--width", "0", "--data-dir", kData});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: --width 0: expected a number of columns from 40 to 1000\n");
  EXPECT_EQ(r.out, "");
}

TEST(Instances, ListsTheChosenKindCheapestFirst) {
  const CliRun r = run_cli({"instances", "--kind", "gpu", "--data-dir", kData, "--width", "100"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  expect_fits(r.out, 100);
  const std::vector<std::string> lines = lines_of(r.out);
  ASSERT_GT(lines.size(), 3u);
  EXPECT_THAT(lines[0], HasSubstr("USD/hour"));
  std::vector<double> prices;
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    EXPECT_THAT(lines[i], HasSubstr("  gpu  ")) << lines[i];
    std::istringstream words(lines[i]);
    std::vector<std::string> w;
    for (std::string x; words >> x;) w.push_back(x);
    ASSERT_GE(w.size(), 2u);
    if (w[w.size() - 2] != "-") prices.push_back(std::stod(w[w.size() - 2]));
  }
  EXPECT_TRUE(std::is_sorted(prices.begin(), prices.end()));
  EXPECT_THAT(lines.back(), HasSubstr("instance types ("));
  EXPECT_THAT(lines.back(), HasSubstr("cheapest on-demand first"));
}

TEST(Instances, FitsColumnsWhenNoWidthIsGiven) {
  const char* before = std::getenv("COLUMNS");
  const std::string saved = before != nullptr ? before : "";
  setenv("COLUMNS", "64", 1);
  const CliRun r = run_cli({"instances", "--data-dir", kData});
  if (before != nullptr) {
    setenv("COLUMNS", saved.c_str(), 1);
  } else {
    unsetenv("COLUMNS");
  }
  ASSERT_EQ(r.code, kExitOk) << r.err;
  expect_fits(r.out, 64);
  size_t widest = 0;
  for (const std::string& line : lines_of(r.out)) widest = std::max(widest, display_width(line));
  EXPECT_GT(widest, 50u);  // the width is used, not a narrower one
}

TEST(Instances, FiltersByProviderInAnyCase) {
  const CliRun r = run_cli({"instances", "--provider", "AwS", "--data-dir", kData});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("aws-g6e.xlarge"));
  EXPECT_THAT(r.out, Not(HasSubstr("azure-")));
  EXPECT_THAT(r.out, Not(HasSubstr("gcp-")));
}

TEST(Instances, RefusesAnUnknownKindOrWidth) {
  CliRun r = run_cli({"instances", "--kind", "tpu", "--data-dir", kData});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: --kind \"tpu\": expected \"cpu\" or \"gpu\"\n");
  r = run_cli({"instances", "--width", "12", "--data-dir", kData});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: --width 12: expected a number of columns from 40 to 1000\n");
}

TEST(ReadableListings, CatalogListInstancesAndModelsFitTheWidth) {
  for (const size_t width : {60, 100}) {
    const std::string w = std::to_string(width);
    const CliRun list = run_cli({"catalog", "list", "--width", w, "--data-dir", kData});
    ASSERT_EQ(list.code, kExitOk) << list.err;
    expect_fits(list.out, width);
    const CliRun instances = run_cli({"instances", "--width", w, "--data-dir", kData});
    ASSERT_EQ(instances.code, kExitOk) << instances.err;
    expect_fits(instances.out, width);
    const CliRun models = run_cli({"models", "--width", w, "--data-dir", kData});
    ASSERT_EQ(models.code, kExitOk) << models.err;
    expect_fits(models.out, width);
    if (width == 100) EXPECT_THAT(models.out, HasSubstr("\nllama-3.1-8b "));  // ids whole
  }
}

}  // namespace
}  // namespace llmcap::cli
