// `llmcap calibrate`: runs the real kernels (the hidden test sweep: tiny in-cache shapes, so
// that the test takes about a second) and checks the output and the JSON profile.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "app/decoder_support.h"
#include "cli/cli.h"
#include "model/calibration.h"
#include "reference_decoder_fixtures.h"
#include "store/profile_store.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using llmcap::testing::TempDir;
using ::testing::HasSubstr;

TEST(CliCalibrate, WritesTheProfileJsonAndSqliteAndPrintsTheTables) {
  TempDir dir;
  const auto json_path = dir.path() / "profile.json";
  const auto db_path = dir.path() / "profiles.db";
  std::ostringstream out, err;
  const int code = run({"calibrate", "--test-sweep", "--threads", "1", "--out", json_path.string(),
                        "--db", db_path.string(), "--quiet"},
                       out, err);
  ASSERT_EQ(code, kExitOk) << err.str();
  // --quiet drops progress lines; where the run was stored is still said (cli_tests point
  // LLMCAP_DB at a temporary database).
  EXPECT_THAT(err.str(), ::testing::MatchesRegex("Stored as run [0-9]+ in .*runs.sqlite\n"));
  EXPECT_THAT(out.str(), HasSubstr("Machine: "));
  EXPECT_THAT(out.str(), HasSubstr("1 thread:  read "));
  EXPECT_THAT(out.str(), HasSubstr("matmul           int4"));
  EXPECT_THAT(out.str(), HasSubstr("Fit at 1 threads (median_s = "));

  std::ifstream f(json_path);
  const auto doc = nlohmann::json::parse(f);
  EXPECT_EQ(doc.at("schema_version"), 1);
  const auto& m = doc.at("machine");
  for (const char* key : {"cpu_model", "isa", "num_cores", "read_bandwidth_bytes_per_s"}) {
    EXPECT_TRUE(m.contains(key)) << key;
  }
  EXPECT_GT(m.at("read_bandwidth_bytes_per_s").at("1").get<double>(), 0);
  ASSERT_GT(doc.at("kernels").size(), 10u);
  for (const auto& k : doc.at("kernels")) {
    for (const char* key : {"op", "format", "backend", "rows", "cols", "batch", "threads",
                            "median_s", "bytes", "bytes_per_s"}) {
      EXPECT_TRUE(k.contains(key)) << key;
    }
  }
  EXPECT_TRUE(doc.at("fit").at("matmul").contains("bf16"));
  // Both stores read back as the same profile.
  const model::CalibrationProfile from_json = model::read_profile_json(json_path);
  const model::CalibrationProfile from_db = store::read_profile(db_path);
  EXPECT_EQ(from_json.kernels.size(), from_db.kernels.size());
  EXPECT_EQ(from_json.machine.cpu_model, from_db.machine.cpu_model);
}

TEST(CliCalibrate, ModelShapesAreTimedInEveryFormatAndPriceThatModelsCalls) {
  TempDir dir;
  const auto model_path = dir.write("tiny.json", llmcap::cli::testing::kTinyLlama);
  const auto json_path = dir.path() / "profile.json";
  std::ostringstream out, err;
  ASSERT_EQ(run({"calibrate", "--test-sweep", "--threads", "1", "--model", model_path.string(),
                 "--out", json_path.string(), "--quiet", "--no-store"},
                out, err),
            kExitOk)
      << err.str();
  const model::CalibrationProfile p = model::read_profile_json(json_path);
  // tiny: hidden 128, 4 query heads and 2 KV heads of 32, MLP 256, vocab 512: fused QKV
  // 256x128, output 128x128, fused gate/up 512x128, down 128x256, LM head 512x128 (the same
  // shape as gate/up, timed once).
  const std::set<std::pair<int64_t, int64_t>> shapes = {
      {256, 128}, {128, 128}, {512, 128}, {128, 256}};
  std::map<std::pair<int64_t, int64_t>, std::set<std::string>> formats;
  for (const model::KernelSample& s : p.kernels) {
    if (s.op == "matmul" && shapes.count({s.rows, s.cols}) > 0) {
      formats[{s.rows, s.cols}].insert(s.format);
    }
  }
  for (const auto& shape : shapes) {
    EXPECT_EQ(formats[shape], (std::set<std::string>{"f32", "bf16", "int8", "int4"}))
        << shape.first << "x" << shape.second;
  }
  // The predictor's efficiency prices those calls by their measured ratio.
  const model::Efficiency e = model::calibrated_efficiency(p);
  for (const auto& [rows, cols] : shapes) {
    EXPECT_EQ(e.calibrated->linear_shapes.count(model::MatmulShapeKey{"int8", rows, cols}), 1u)
        << rows << "x" << cols;
  }
  // Its attention layout, 4 query heads over 2 KV heads x 32, in both KV types.
  for (const char* kv : {"bf16", "f32"}) {
    EXPECT_EQ(e.calibrated->attention_shapes.count(model::AttentionShapeKey{kv, 64, 4}), 1u) << kv;
  }
  // The layer's calls also at a prefill's 256 rows (the LM head's shape 512x128 is also the
  // fused gate/up call here, so it is timed there too); the ratio table then reaches 256
  // tokens.
  std::set<std::pair<int64_t, int64_t>> prefill_int8;
  for (const model::KernelSample& s : p.kernels) {
    if (s.op == "matmul" && s.batch == llmcap::app::kPrefillCalibrationBatch &&
        s.format == "int8") {
      prefill_int8.insert({s.rows, s.cols});
    }
  }
  EXPECT_EQ(prefill_int8, shapes);
  EXPECT_DOUBLE_EQ(
      e.calibrated->linear_shapes.at(model::MatmulShapeKey{"int8", 128, 128}).back().tokens, 256.0);
}

TEST(ModelMatmulShapes, TheLayerCallsGetAPrefillBatchAndAnUnsharedLmHeadDoesNot) {
  TempDir dir;
  // hidden 128, MLP 256, vocab 1000: the LM head 1000x128 has a shape of its own.
  const auto model_path =
      dir.write("m.json", R"({"model_type": "llama", "hidden_size": 128, "intermediate_size": 256,
      "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2,
      "vocab_size": 1000, "max_position_embeddings": 2048})");
  std::map<std::pair<int64_t, int64_t>, int64_t> prefill;
  for (const kernels::MatmulShape& m : llmcap::app::model_matmul_shapes({model_path})) {
    prefill[{m.rows, m.cols}] = m.prefill_batch;
  }
  const int64_t p = llmcap::app::kPrefillCalibrationBatch;
  EXPECT_EQ(
      prefill,
      (std::map<std::pair<int64_t, int64_t>, int64_t>{
          {{256, 128}, p}, {{128, 128}, p}, {{512, 128}, p}, {{128, 256}, p}, {{1000, 128}, 0}}));
}

TEST(CliCalibrate, AnUnreadableModelIsRefusedNamingTheFileAndWritesNothing) {
  TempDir dir;
  const auto json_path = dir.path() / "profile.json";
  const auto missing = dir.path() / "no-such-model.json";
  std::ostringstream out, err;
  EXPECT_EQ(run({"calibrate", "--test-sweep", "--threads", "1", "--model", missing.string(),
                 "--out", json_path.string(), "--quiet", "--no-store"},
                out, err),
            kExitBadInput);
  EXPECT_THAT(err.str(), HasSubstr("no-such-model.json"));
  EXPECT_FALSE(std::filesystem::exists(json_path));
}

TEST(CliCalibrate, BadThreadsIsABadInputError) {
  std::ostringstream out, err;
  EXPECT_EQ(run({"calibrate", "--threads", "0"}, out, err), kExitBadInput);
  EXPECT_THAT(err.str(), HasSubstr("llmcap: error: "));
}

TEST(CliCalibrate, FitStatisticMinFitsTheFastestRepetitions) {
  TempDir dir;
  const auto json_path = dir.path() / "profile.json";
  std::ostringstream out, err;
  ASSERT_EQ(run({"calibrate", "--test-sweep", "--threads", "1", "--fit-statistic", "min", "--out",
                 json_path.string(), "--quiet", "--no-store"},
                out, err),
            kExitOk)
      << err.str();
  EXPECT_THAT(out.str(), HasSubstr("Fit at 1 threads (min_s = "));
  const model::CalibrationProfile p = model::read_profile_json(json_path);
  EXPECT_EQ(p.fit.statistic, model::FitStatistic::kMin);
  // The written fit is the min refit of the written samples.
  const model::CalibrationFit again = model::refit_calibration(p, model::FitStatistic::kMin);
  EXPECT_DOUBLE_EQ(again.matmul.at("bf16").bytes_per_s, p.fit.matmul.at("bf16").bytes_per_s);
}

TEST(CliCalibrate, UnknownFitStatisticIsRefusedNamingTheChoices) {
  std::ostringstream out, err;
  EXPECT_EQ(run({"calibrate", "--test-sweep", "--fit-statistic", "mean"}, out, err), kExitBadInput);
  EXPECT_THAT(err.str(), HasSubstr("--fit-statistic: mean not in {median,min}"));
}

}  // namespace
}  // namespace llmcap::cli
