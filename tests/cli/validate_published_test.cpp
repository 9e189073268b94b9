// `llmcap validate --published`: the table and JSON of predictions against published
// measurements, and its bad input (exit 2, nothing written).
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
using testing::run_cli;

const std::string kTwoRows = R"({"source": "test", "as_of": "2026-12-02", "rows": [
  {"id": "gpu-decode", "split": "fit", "device_kind": "gpu", "engine": "vllm",
   "hardware": "h100-sxm", "model": "llama-3.1-8b", "weight_format": "bf16",
   "kv_format": "bf16", "batch": 1, "prompt_tokens": 128, "output_tokens": 128,
   "metric": "tpot", "statistic": "mean", "published": 0.007, "source": "test",
   "as_of": "2026-12-02"},
  {"id": "cpu-prefill", "split": "held_out", "device_kind": "cpu", "engine": "llama.cpp",
   "hardware": "xeon-8480plus", "cores_used": 32, "model": "llama-3.1-8b",
   "weight_format": "int4", "kv_format": "bf16", "batch": 1, "prompt_tokens": 512,
   "output_tokens": 1, "metric": "ttft", "statistic": "mean", "published": 2.0,
   "source": "test", "as_of": "2026-12-02"}]})";

TEST(CliValidatePublished, PrintsEachRowAndTheSummaryAndWritesTheJson) {
  TempDir dir;
  const auto file = dir.write("p.json", kTwoRows);
  const auto json_out = dir.path() / "out.json";
  const auto run = run_cli({"validate", "--published", "--published-file", file.string(), "--json",
                            json_out.string(), "--data-dir", LLMCAP_DATA_DIR});
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_THAT(run.out, HasSubstr("gpu-decode"));
  EXPECT_THAT(run.out, HasSubstr("cpu-prefill"));
  EXPECT_THAT(run.out, HasSubstr("|error| by device kind, metric and split:"));
  const nlohmann::json j = nlohmann::json::parse(llmcap::testing::read_text(json_out));
  ASSERT_EQ(j.at("rows").size(), 2u);
  EXPECT_EQ(j.at("rows")[0].at("id"), "gpu-decode");
  EXPECT_EQ(j.at("rows")[1].at("split"), "held_out");
  EXPECT_EQ(j.at("rows")[1].at("device_kind"), "cpu");
  EXPECT_EQ(j.at("rows")[1].at("engine"), "llama.cpp");
  EXPECT_EQ(j.at("rows")[1].at("metric"), "ttft");
  EXPECT_DOUBLE_EQ(j.at("rows")[1].at("published").get<double>(), 2.0);
  EXPECT_GT(j.at("rows")[1].at("predicted").get<double>(), 0);
  EXPECT_EQ(j.at("rows")[1].at("source"), "test");
  EXPECT_EQ(j.at("summary").size(), 2u);
  EXPECT_EQ(j.at("mode"), "engines");
  ASSERT_EQ(j.at("targets").size(), 3u);
  EXPECT_EQ(j.at("targets")[2].at("what"), "cpu ttft, held_out");
  EXPECT_EQ(j.at("targets")[2].at("rows"), 1);
  EXPECT_THAT(run.out, HasSubstr("each row priced with its engine's profile"));

  const auto datasheet =
      run_cli({"validate", "--published", "--published-file", file.string(), "--datasheet",
               "--json", json_out.string(), "--data-dir", LLMCAP_DATA_DIR});
  ASSERT_EQ(datasheet.code, 0) << datasheet.err;
  EXPECT_THAT(datasheet.out, HasSubstr("datasheet roofline and the simulator's default engine "
                                       "limits (--datasheet)"));
  EXPECT_EQ(nlohmann::json::parse(llmcap::testing::read_text(json_out)).at("mode"), "datasheet");
}

TEST(CliValidatePublished, BadFileExitsTwoAndWritesNothing) {
  TempDir dir;
  const auto file = dir.write(
      "p.json", llmcap::testing::replace_once(kTwoRows, R"("batch": 1, "prompt_tokens": 128)",
                                              R"("prompt_tokens": 128)"));
  const auto json_out = dir.path() / "out.json";
  const auto run = run_cli({"validate", "--published", "--published-file", file.string(), "--json",
                            json_out.string(), "--data-dir", LLMCAP_DATA_DIR});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(
      run.err,
      HasSubstr(R"(p.json: row "gpu-decode": field "rows[0].batch": expected )"
                R"(exactly one of batch, offline_requests, concurrency, request_rate_per_s, got 0 )"
                R"(of them)"));
  EXPECT_FALSE(std::filesystem::exists(json_out));
}

TEST(CliValidatePublished, MissingFileIsNamed) {
  const auto run = run_cli({"validate", "--published", "--published-file", "/nonexistent/p.json",
                            "--data-dir", LLMCAP_DATA_DIR});
  EXPECT_EQ(run.code, 2);
  EXPECT_THAT(run.err, HasSubstr("/nonexistent/p.json: cannot open file"));
}

}  // namespace
}  // namespace llmcap::cli
