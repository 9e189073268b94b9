// `llmcap plan` with a scenario that names its engines: the printed header and the JSON's
// scenario echo say which; a scenario without them is priced with each kind's default engine
// and says so; "datasheet" asks for the datasheet roofline.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "run_cli.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using llmcap::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::run_cli;

std::string scenario(const std::string& engine) {
  const std::filesystem::path data = LLMCAP_DATA_DIR;
  const std::filesystem::path trace = llmcap::testing::test_data("conv_model300.csv");
  return R"({"name": "engines", "model": ")" + (data / "models" / "llama-3.1-8b.json").string() +
         R"(", "workload": {"kind": "trace", "path": ")" + trace.string() +
         R"("}, "slo": {"ttft_p99_s": 2.0, "tpot_p99_s": 0.05},
         "candidates": ["aws-g6e.xlarge", "aws-m7i.8xlarge"], "seed": 1)" +
         engine + "}";
}

TEST(CliPlanEngine, TheHeaderAndTheJsonSayWhichEnginesTheNumbersAssume) {
  TempDir dir;
  const auto with =
      dir.write("with.json", scenario(R"(, "engine": {"gpu": "vllm", "cpu": "datasheet"})"));
  const auto json_path = dir.path() / "plan.json";
  const auto run = run_cli({"plan", with.string(), "--no-analysis", "--quiet", "--json",
                            json_path.string(), "--data-dir", LLMCAP_DATA_DIR});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("Engines (docs/engines.md): GPU vllm; CPU none (the datasheet "
                                 "roofline or a calibration profile)\n"));
  const nlohmann::json doc = nlohmann::json::parse(llmcap::testing::read_text(json_path));
  EXPECT_EQ(doc.at("scenario").at("engine").at("gpu"), "vllm");
  EXPECT_EQ(doc.at("scenario").at("engine").at("cpu"), "datasheet");

  const auto without = dir.write("without.json", scenario(""));
  const auto plain = run_cli({"plan", without.string(), "--no-analysis", "--quiet", "--json",
                              json_path.string(), "--data-dir", LLMCAP_DATA_DIR, "--width", "200"});
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("Engines (docs/engines.md): GPU vllm; CPU llama.cpp (each "
                                   "kind's default; the scenario's \"engine\" chooses others)\n"));
  // The scenario echo holds what the scenario said; each row names its engine.
  const nlohmann::json plain_doc = nlohmann::json::parse(llmcap::testing::read_text(json_path));
  EXPECT_FALSE(plain_doc.at("scenario").contains("engine"));
  for (const auto& row : plain_doc.at("results")) {
    EXPECT_EQ(row.at("engine"), row.at("device_kind") == "gpu" ? "vllm" : "llama.cpp")
        << row.dump();
  }
}

}  // namespace
}  // namespace llmcap::cli

namespace llmcap::cli {
namespace {

TEST(CliPlanOutput, AKindWithoutCandidatesIsNotSaidToMissTheSlo) {
  llmcap::testing::TempDir dir;
  std::string text = scenario("");
  text = llmcap::testing::replace_once(text, R"(["aws-g6e.xlarge", "aws-m7i.8xlarge"])",
                                       R"(["aws-g6e.xlarge"])");
  const auto gpu_only = dir.write("gpu.json", text);
  const auto run = run_cli({"plan", gpu_only.string(), "--no-analysis", "--quiet", "--no-store",
                            "--data-dir", LLMCAP_DATA_DIR});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, Not(HasSubstr("No CPU instance type")));
}

TEST(CliPlanOutput, AScenariosMissingModelIsNamedWithItsField) {
  llmcap::testing::TempDir dir;
  const auto bad = dir.write(
      "bad.json",
      llmcap::testing::replace_once(
          scenario(""),
          (std::filesystem::path(LLMCAP_DATA_DIR) / "models" / "llama-3.1-8b.json").string(),
          "nope.json"));
  const auto run = run_cli({"plan", bad.string(), "--no-analysis", "--quiet", "--no-store",
                            "--data-dir", LLMCAP_DATA_DIR});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr(bad.string() + ": field \"model\": "));
  EXPECT_THAT(run.err, HasSubstr("no file \"nope.json\" (looked for " +
                                 (bad.parent_path() / "nope.json").string() + ", "));
}

}  // namespace
}  // namespace llmcap::cli
