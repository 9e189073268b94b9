#include "cli/cli.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_cli.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using llmcap::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using llmcap::cli::testing::CliRun;
using llmcap::cli::testing::run_cli;

std::string small_scenario() { return std::string(LLMCAP_TEST_DATA_DIR) + "/small.json"; }

TEST(CliPlan, PrintsTheTableAndWritesJsonAndCsv) {
  TempDir dir;
  const auto json_path = dir.path() / "plan.json";
  const auto csv_path = dir.path() / "plan.csv";
  const CliRun r = run_cli({"plan", small_scenario(), "--json", json_path.string(), "--csv",
                            csv_path.string(), "--quiet"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("aws-g6e.xlarge"));
  EXPECT_THAT(r.out, HasSubstr("aws-m7i.8xlarge"));
  EXPECT_THAT(r.out, HasSubstr("infeasible: TPOT floor at batch 1"));

  std::ifstream f(json_path);
  const auto doc = nlohmann::json::parse(f);
  ASSERT_EQ(doc.at("results").size(), 2u);
  const auto& gpu = doc.at("results").at(0);
  EXPECT_EQ(gpu.at("instance_type"), "aws-g6e.xlarge");
  EXPECT_EQ(gpu.at("device_kind"), "gpu");
  EXPECT_TRUE(gpu.at("feasible").get<bool>());
  EXPECT_GE(gpu.at("num_instances").get<int64_t>(), 1);
  for (const char* key : {"usd_per_hour", "usd_per_million_output_tokens", "ttft_p50_s",
                          "ttft_p99_s", "tpot_p50_s", "tpot_p99_s", "infeasible_reason"}) {
    EXPECT_TRUE(gpu.contains(key)) << key;
  }
  EXPECT_LE(gpu.at("tpot_p99_s").get<double>(), 0.05);
  const auto& cpu = doc.at("results").at(1);
  EXPECT_EQ(cpu.at("device_kind"), "cpu");
  EXPECT_FALSE(cpu.at("feasible").get<bool>());
  EXPECT_THAT(cpu.at("infeasible_reason").get<std::string>(), HasSubstr("TPOT floor"));
  EXPECT_EQ(doc.at("scenario").at("name"), "cli-small");

  std::ifstream c(csv_path);
  std::string header;
  std::getline(c, header);
  EXPECT_THAT(header, StartsWith("instance_type,device_kind,feasible,num_instances"));
}

TEST(CliPlan, JsonCarriesTheAnswerAndTheOutputStartsWithIt) {
  TempDir dir;
  const auto json_path = dir.path() / "plan.json";
  const CliRun r =
      run_cli({"plan", small_scenario(), "--json", json_path.string(), "--quiet", "--no-store"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, StartsWith("Answer: "));
  std::ifstream f(json_path);
  const auto doc = nlohmann::json::parse(f);
  const auto& a = doc.at("answer");
  for (const char* key : {"instance_type", "num_instances", "configuration", "price_model",
                          "currency", "cost_per_hour", "cost_per_year", "cost_range_95",
                          "binding_constraint", "runner_up", "other_device_kind"}) {
    EXPECT_TRUE(a.contains(key)) << key;
  }
  EXPECT_EQ(a.at("instance_type"), "aws-g6e.xlarge");
  EXPECT_EQ(a.at("currency"), "USD");
  // The answer's cost is the row's, to the cent.
  const auto& row = doc.at("results").at(0);
  EXPECT_NEAR(a.at("cost_per_hour").get<double>(), row.at("usd_per_hour").get<double>(), 0.005);
  EXPECT_EQ(a.at("num_instances"), row.at("num_instances"));
  // Only a GPU feasible: the other kind (CPU, a candidate) is named as infeasible.
  EXPECT_THAT(a.at("other_device_kind").at("text").get<std::string>(),
              HasSubstr("No CPU instance type meets the SLO (1 tried)"));
}

TEST(CliPlan, SetOverridesScenarioFieldsAndIsStoredAsPlanned) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  const CliRun r =
      run_cli({"plan", small_scenario(), "--quiet", "--no-analysis", "--db", db.string(), "--set",
               "tco.currency=CNY", "--set", "slo.tpot_p99_s=0.06"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("cost         CNY "));
  EXPECT_THAT(r.out, HasSubstr("p99 TPOT <= 60 ms"));
  const auto stored = nlohmann::json::parse(testing::only_stored_run(db).input_json);
  EXPECT_EQ(stored.at("tco").at("currency"), "CNY");
  EXPECT_DOUBLE_EQ(stored.at("slo").at("tpot_p99_s").get<double>(), 0.06);
}

TEST(CliPlan, BadSetOverridesNameTheOverride) {
  const CliRun no_eq = run_cli({"plan", small_scenario(), "--quiet", "--no-store", "--set", "slo"});
  EXPECT_EQ(no_eq.code, kExitBadInput);
  EXPECT_THAT(no_eq.err, HasSubstr("small.json: --set slo: expected key=value"));
  const CliRun through =
      run_cli({"plan", small_scenario(), "--quiet", "--no-store", "--set", "slo.ttft_p99_s.x=1"});
  EXPECT_EQ(through.code, kExitBadInput);
  EXPECT_THAT(through.err, HasSubstr("--set slo.ttft_p99_s.x=1: \"slo.ttft_p99_s\" is 2"));
  EXPECT_THAT(through.err, HasSubstr("not an object or array"));
  const CliRun unknown =
      run_cli({"plan", small_scenario(), "--quiet", "--no-store", "--set", "slo.p50=1"});
  EXPECT_EQ(unknown.code, kExitBadInput);
  EXPECT_THAT(unknown.err, HasSubstr("field \"slo.p50\": unknown"));
  const CliRun index =
      run_cli({"plan", small_scenario(), "--quiet", "--no-store", "--set", "candidates.5=x"});
  EXPECT_EQ(index.code, kExitBadInput);
  EXPECT_THAT(index.err, HasSubstr("\"candidates\" is an array of 2 elements; expected an index "
                                   "from 0 to 1, got \"5\""));
}

TEST(CliPlan, AValueRefusedWhereSetPutItNamesTheOverride) {
  const CliRun bad = run_cli(
      {"plan", small_scenario(), "--quiet", "--no-store", "--set", "serving.max_num_seqs=abc"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_THAT(bad.err, HasSubstr("small.json: --set serving.max_num_seqs=abc: field "
                                 "\"serving.max_num_seqs\": expected a positive integer, got "
                                 "\"abc\""));
  // A field set twice takes the last value; the refused one names its own override.
  const CliRun own = run_cli({"plan", small_scenario(), "--quiet", "--no-store", "--set",
                              "serving.max_num_seqs=abc", "--set", "serving.max_num_seqs=8",
                              "--set", "serving.block_size_tokens=0"});
  EXPECT_EQ(own.code, kExitBadInput);
  EXPECT_THAT(own.err, HasSubstr("--set serving.block_size_tokens=0: field "
                                 "\"serving.block_size_tokens\""));
}

TEST(CliPlan, LoadMultiplierPlansForThatMultipleOfTheLoad) {
  const CliRun once = run_cli({"plan", small_scenario(), "--quiet", "--no-store", "--no-analysis"});
  const CliRun twice = run_cli({"plan", small_scenario(), "--quiet", "--no-store", "--no-analysis",
                                "--load-multiplier", "2"});
  ASSERT_EQ(once.code, kExitOk) << once.err;
  ASSERT_EQ(twice.code, kExitOk) << twice.err;
  // The workload line's offered rate, "(2.75 req/s)": a trace replays twice as fast.
  const auto rate = [](const std::string& out) {
    const size_t at = out.find(" req/s)");
    const size_t start = out.rfind('(', at) + 1;
    return std::stod(out.substr(start, at - start));
  };
  EXPECT_NEAR(rate(twice.out), 2 * rate(once.out), 0.02 * rate(once.out));
  const CliRun bad =
      run_cli({"plan", small_scenario(), "--quiet", "--no-store", "--load-multiplier", "0"});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_THAT(bad.err, HasSubstr("--load-multiplier"));
}

TEST(CliModels, ListsTheModelIdsAScenarioMayName) {
  const CliRun r = run_cli({"models", "--data-dir", llmcap::testing::data_dir().string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, StartsWith("id "));
  // A plain model file and a family file, each with its type, sizes and context.
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\nllama-3.1-8b +llama +8.0 +8.0 +131,072  "
                                              "models/llama-3.1-8b.json\n"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\ndeepseek-v3 +deepseek_v3 +671.0 +37.6 "));
  TempDir dir;
  const CliRun none = run_cli({"models", "--data-dir", dir.path().string()});
  EXPECT_EQ(none.code, kExitBadInput);
  EXPECT_THAT(none.err, HasSubstr(dir.path().string() + "/models: no models folder"));
}

TEST(CliPlan, HelpExitsZero) {
  const CliRun r = run_cli({"plan", "--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_THAT(r.out, HasSubstr("--json"));
}

TEST(Cli, VersionPrintsTheProjectVersion) {
  const CliRun r = run_cli({"--version"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out, std::string("llmcap ") + LLMCAP_VERSION_FOR_TESTS + "\n");
}

/// Runs `plan` on `scenario` with --json; expects exit 2, one error line containing each of
/// `expected`, and no JSON file.
void expect_bad_input(const std::filesystem::path& scenario,
                      const std::vector<std::string>& expected) {
  TempDir out_dir;
  const auto json_path = out_dir.path() / "out.json";
  const CliRun r = run_cli({"plan", scenario.string(), "--json", json_path.string(), "--quiet"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, StartsWith("llmcap: error: "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const auto& s : expected) EXPECT_THAT(r.err, HasSubstr(s));
  EXPECT_FALSE(std::filesystem::exists(json_path));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

std::string scenario_with(const std::string& model, const std::string& trace,
                          const std::string& extra = "") {
  return "{\"name\": \"bad\", \"model\": \"" + model + "\", \"workload\": {\"kind\": \"trace\", " +
         "\"path\": \"" + trace + "\"}, \"slo\": {\"ttft_p99_s\": 2, \"tpot_p99_s\": 0.05}" +
         extra + "}";
}

const std::string kModel = std::string(LLMCAP_DATA_DIR) + "/models/llama-3.1-8b.json";
const std::string kTrace = std::string(LLMCAP_TEST_DATA_DIR) + "/conv_model300.csv";

TEST(CliPlanBadInput, MissingScenarioFile) {
  expect_bad_input("/nonexistent/s.json", {"/nonexistent/s.json: cannot open file"});
}

TEST(CliPlanBadInput, MalformedScenarioJson) {
  TempDir dir;
  const auto p = dir.write("s.json", "{\"name\": ");
  expect_bad_input(p, {p.string(), "malformed JSON"});
}

TEST(CliPlanBadInput, MistypedField) {
  TempDir dir;
  const auto p =
      dir.write("s.json", "{\"name\": \"x\", \"model\": \"" + kModel +
                              "\", \"workload\": {\"kind\": \"trace\", \"path\": \"" + kTrace +
                              "\"}, \"slo\": {\"ttft_p99_s\": \"fast\", "
                              "\"tpot_p99_s\": 0.05}}");
  expect_bad_input(p, {p.string(), "slo.ttft_p99_s", "\"fast\""});
}

TEST(CliPlanBadInput, NegativeRate) {
  TempDir dir;
  const auto p = dir.write(
      "s.json", "{\"name\": \"x\", \"model\": \"" + kModel +
                    "\", \"workload\": {\"kind\": \"poisson\", \"lengths_path\": \"" + kTrace +
                    "\", \"rate_per_s\": -3, \"num_requests\": 10}, \"slo\": {\"ttft_p99_s\": 2, "
                    "\"tpot_p99_s\": 0.05}}");
  expect_bad_input(p, {p.string(), "workload.rate_per_s", "-3"});
}

TEST(CliPlanBadInput, UnknownInstanceName) {
  TempDir dir;
  const auto p =
      dir.write("s.json", scenario_with(kModel, kTrace, ", \"candidates\": [\"aws-x1.huge\"]"));
  expect_bad_input(p, {p.string(), "candidates", "\"aws-x1.huge\"", "known: "});
}

TEST(CliPlanBadInput, MissingModelFile) {
  TempDir dir;
  const auto p = dir.write("s.json", scenario_with("/nonexistent/model.json", kTrace));
  expect_bad_input(p, {p.string() + ": field \"model\": no file \"/nonexistent/model.json\" "
                                    "(looked for /nonexistent/model.json); expected a model id"});
}

TEST(CliPlanBadInput, UnknownModelType) {
  TempDir dir;
  const auto model = dir.write("m.json", R"({"model_type": "mamba", "hidden_size": 4096})");
  const auto p = dir.write("s.json", scenario_with(model.string(), kTrace));
  expect_bad_input(p, {model.string(), "model_type", "mamba"});
}

TEST(CliPlanBadInput, TraceWithNonNumericCell) {
  TempDir dir;
  const auto trace = dir.write(
      "t.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n0.0,100,10\n0.5,abc,10\n");
  const auto p = dir.write("s.json", scenario_with(kModel, trace.string()));
  expect_bad_input(p, {trace.string(), "line 3", "num_prefill_tokens", "abc"});
}

TEST(CliPlanBadInput, TraceWithMissingColumn) {
  TempDir dir;
  const auto trace =
      dir.write("t.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.68,374\n");
  const auto p = dir.write("s.json", scenario_with(kModel, trace.string()));
  expect_bad_input(p, {trace.string(), "line 2"});
}

TEST(CliPlanBadInput, UnknownOption) {
  const CliRun r = run_cli({"plan", small_scenario(), "--frobnicate"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("--frobnicate"));
}

TEST(CliPlanBadInput, MissingDataDir) {
  const CliRun r =
      run_cli({"plan", small_scenario(), "--data-dir", "/nonexistent/data", "--quiet"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/data/hardware/cpus.json: cannot open file"));
}

TEST(CliPlanBadInput, UnwritableOutputLeavesNothingBehind) {
  const CliRun r =
      run_cli({"plan", small_scenario(), "--json", "/nonexistent/dir/out.json", "--quiet"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/dir/out.json: cannot write file"));
}

}  // namespace
}  // namespace llmcap::cli
