// `llmcap plan --warm-start PREVIOUS.json`: the previous plan's fleet sizes start each type's
// fleet-size search (plan::PlanOptions::warm_start_sizes, plan/what_if.h's reader).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli.h"
#include "run_cli.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using llmcap::cli::testing::CliRun;
using llmcap::cli::testing::run_cli;
using llmcap::testing::TempDir;

std::string small_scenario() { return std::string(LLMCAP_TEST_DATA_DIR) + "/small.json"; }

nlohmann::json read_json(const std::filesystem::path& path) {
  std::ifstream f(path);
  return nlohmann::json::parse(f);
}

/// The rows' simulation counts, summed, and removed from `doc`.
int64_t take_simulation_counts(nlohmann::json& doc) {
  int64_t total = 0;
  for (nlohmann::json& row : doc.at("results")) {
    total += row.at("num_simulations").get<int64_t>();
    row.erase("num_simulations");
  }
  return total;
}

/// tests/cli/data/small.json at four times its load (5 instances of aws-g6e.xlarge: the cold
/// search runs 1, 2, 4, 8, then 6 and 5; a warm start from 5 runs 5 and 4).
std::filesystem::path loaded_scenario(const TempDir& dir) {
  return dir.write(
      "loaded.json",
      std::string("{\"name\": \"cli-small-x4\", \"model\": \"") + LLMCAP_DATA_DIR +
          "/models/llama-3.1-8b.json\", \"workload\": {\"kind\": \"trace\", \"path\": \"" +
          LLMCAP_TEST_DATA_DIR +
          "/conv_model300.csv\", \"rate_multiplier\": 4}, \"slo\": {\"ttft_p99_s\": 2.0, "
          "\"tpot_p99_s\": 0.05}, \"candidates\": [\"aws-g6e.xlarge\", \"aws-m7i.8xlarge\"], "
          "\"seed\": 1}");
}

TEST(CliPlanWarmStart, GivesTheColdAnswerWithFewerSimulations) {
  TempDir dir;
  const std::string scenario = loaded_scenario(dir).string();
  const auto cold_path = dir.path() / "cold.json";
  const auto warm_path = dir.path() / "warm.json";
  const CliRun cold =
      run_cli({"plan", scenario, "--json", cold_path.string(), "--quiet", "--no-store"});
  ASSERT_EQ(cold.code, kExitOk) << cold.err;
  const CliRun warm = run_cli({"plan", scenario, "--json", warm_path.string(), "--quiet",
                               "--no-store", "--warm-start", cold_path.string()});
  ASSERT_EQ(warm.code, kExitOk) << warm.err;
  EXPECT_EQ(warm.out, cold.out);  // the table and the summary show no simulation counts
  nlohmann::json cold_doc = read_json(cold_path);
  nlohmann::json warm_doc = read_json(warm_path);
  const int64_t cold_sims = take_simulation_counts(cold_doc);
  const int64_t warm_sims = take_simulation_counts(warm_doc);
  EXPECT_EQ(warm_doc, cold_doc);  // the whole run document, analyses included
  EXPECT_LT(warm_sims, cold_sims);
}

/// Runs `plan --warm-start previous`; expects exit 2 and exactly `message` on stderr.
void expect_warm_start_error(const std::string& previous, const std::string& message) {
  TempDir out_dir;
  const auto json_path = out_dir.path() / "out.json";
  const CliRun r = run_cli({"plan", small_scenario(), "--json", json_path.string(), "--quiet",
                            "--no-store", "--warm-start", previous});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: " + message + "\n");
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(std::filesystem::exists(json_path));
}

TEST(CliPlanWarmStart, MissingFileIsNamed) {
  expect_warm_start_error("/nonexistent/previous.json",
                          "/nonexistent/previous.json: cannot open file");
}

TEST(CliPlanWarmStart, MalformedRowNamesTheFileAndField) {
  TempDir dir;
  const auto p = dir.write("previous.json",
                           R"({"results": [{"instance_type": "aws-g6e.xlarge", "feasible": true,
                                "num_instances": "two", "usd_per_hour": 1.86}]})");
  expect_warm_start_error(p.string(), p.string() +
                                          ": field \"results[0].num_instances\": expected a "
                                          "positive integer, got \"two\"");
}

TEST(CliPlanWarmStart, FileWithoutRowsIsRefused) {
  TempDir dir;
  const auto p = dir.write("previous.json", R"({"scenario": {}})");
  expect_warm_start_error(p.string(), p.string() +
                                          ": field \"results\": missing; expected the rows of "
                                          "llmcap plan --json");
}

}  // namespace
}  // namespace llmcap::cli
