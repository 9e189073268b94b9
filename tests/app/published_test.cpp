#include "app/published.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/error.h"
#include "base/stats.h"
#include "model/calibrated_predictor.h"
#include "model/deployment.h"
#include "model/efficiency.h"
#include "model/engine_profile.h"
#include "model/model_spec.h"
#include "test_util.h"

namespace llmcap::app {
namespace {

using ::testing::HasSubstr;
using testing::TempDir;

/// Simulated times are whole nanoseconds: a figure computed from them matches the predictor's
/// own arithmetic to within this relative error.
constexpr double kNanosecondRounding = 1e-6;

/// One row of a published file, as JSON text; `load` is the load field(s).
std::string row(const std::string& id, const std::string& load, const std::string& metric,
                const std::string& statistic, int prompt, int output,
                const std::string& extra = "") {
  return R"({"id": ")" + id +
         R"(", "split": "fit", "device_kind": "gpu", "engine": "vllm", "hardware": "h100-sxm",
      "model": "llama-3.1-8b", "weight_format": "bf16", "kv_format": "bf16", )" +
         load + R"(, "prompt_tokens": )" + std::to_string(prompt) + R"(, "output_tokens": )" +
         std::to_string(output) + R"(, "metric": ")" + metric + R"(", "statistic": ")" + statistic +
         R"(", "published": 0.01, "source": "test", "as_of": "2026-12-02")" + extra + "}";
}

std::string document(const std::string& rows) {
  return R"({"source": "test", "as_of": "2026-12-02", "rows": [)" + rows + "]}";
}

class Published : public ::testing::Test {
 protected:
  std::vector<PublishedPrediction> predict(const std::string& rows) {
    set_ = read_published(dir_.write("p.json", document(rows)), catalog_);
    return predict_published(set_, catalog_, testing::data_dir());
  }
  std::string read_error(const std::string& rows) {
    return testing::error_message<base::InputError>(
        [&] { read_published(dir_.write("p.json", document(rows)), catalog_); });
  }
  /// The predictor of llama-3.1-8b in bf16 on one H100 SXM as the rows' engine (vLLM's
  /// profile) runs it.
  std::shared_ptr<const model::StepTimePredictor> h100_predictor() const {
    const model::ModelSpec spec =
        model::load_model_spec(testing::data_dir() / "models" / "llama-3.1-8b.json");
    const model::Efficiency eff =
        model::engine_efficiency(model::load_engine_profiles(testing::data_dir()).at("vllm"),
                                 model::default_efficiency(model::DeviceKind::kGpu));
    model::InstanceType inst;
    inst.id = "test";
    inst.kind = model::DeviceKind::kGpu;
    inst.gpu_id = "h100-sxm";
    inst.num_gpus = 1;
    const model::Deployment dep = model::make_deployment_at_tp(
        inst, catalog_, spec, model::WeightFormat::kBf16, model::KvFormat::kBf16, eff, 1);
    return model::make_step_time_predictor(spec, model::WeightFormat::kBf16, model::KvFormat::kBf16,
                                           dep, eff);
  }

  TempDir dir_;
  model::Catalog catalog_ = model::Catalog::load(testing::data_dir());
  PublishedSet set_;
};

TEST_F(Published, SingleRequestTtftIsOnePrefillStepOfThePrompt) {
  const auto p = predict(row("r", R"("batch": 1)", "ttft", "mean", 1000, 1));
  ASSERT_EQ(p.size(), 1u);
  model::BatchShape prefill;
  prefill.num_prefill_seqs = 1;
  prefill.num_prefill_tokens = 1000;
  prefill.num_prefill_attention_pairs = 1000 * 1001 / 2;
  prefill.num_prefill_seqs_completing = 1;
  const double expected_s = h100_predictor()->step_time_s(prefill);
  EXPECT_NEAR(p[0].predicted, expected_s, expected_s * kNanosecondRounding);
  EXPECT_NEAR(p[0].error, expected_s / 0.01 - 1, 1e-3);
}

TEST_F(Published, SingleRequestTpotIsTheMeanDecodeStepOverItsContexts) {
  const int prompt = 512, output = 64;
  const auto p = predict(row("r", R"("batch": 1)", "tpot", "mean", prompt, output));
  ASSERT_EQ(p.size(), 1u);
  // Decode steps 2..output each add one token to a context of prompt + i tokens.
  const auto predictor = h100_predictor();
  double sum_s = 0;
  for (int i = 1; i < output; ++i) {
    model::BatchShape decode;
    decode.num_decode_seqs = 1;
    decode.num_decode_context_tokens = prompt + i;
    sum_s += predictor->step_time_s(decode);
  }
  const double expected_s = sum_s / (output - 1);
  EXPECT_NEAR(p[0].predicted, expected_s, expected_s * 1e-4);
}

TEST_F(Published, ThroughputOfABatchIsItsTokensOverTheMakespan) {
  const auto one = predict(row("r", R"("batch": 1)", "throughput", "total", 128, 128));
  const auto many = predict(row("r", R"("batch": 32)", "throughput", "total", 128, 128));
  ASSERT_EQ(one.size(), 1u);
  ASSERT_EQ(many.size(), 1u);
  // Decode on a GPU streams the weights once per step whatever the batch: 32 sequences at
  // once come out far above one, and below 32 times one.
  EXPECT_GT(many[0].predicted, 8 * one[0].predicted);
  EXPECT_LT(many[0].predicted, 32 * one[0].predicted);
  // A single request: 128 tokens over its own end-to-end time (prefill + 127 decode steps).
  const auto tpot = predict(row("r", R"("batch": 1)", "tpot", "mean", 128, 128));
  const auto ttft = predict(row("r", R"("batch": 1)", "ttft", "mean", 128, 128));
  const double e2e_s = ttft[0].predicted + 127 * tpot[0].predicted;
  EXPECT_NEAR(one[0].predicted, 128 / e2e_s, 128 / e2e_s * 1e-4);
}

TEST_F(Published, OfflineRequestsRunAsManyAtOnceAsTheEngineAllows) {
  // 64 requests at once: the engine (vLLM: 1,024 sequences) runs them as one batch of 64.
  const auto offline =
      predict(row("r", R"("offline_requests": 64)", "throughput", "total", 128, 128));
  const auto batch = predict(row("r", R"("batch": 64)", "throughput", "total", 128, 128));
  EXPECT_DOUBLE_EQ(offline[0].predicted, batch[0].predicted);
  // 1024 requests: more than one batch's worth, still a throughput above 64 at once.
  const auto many =
      predict(row("r", R"("offline_requests": 1024)", "throughput", "total", 128, 128));
  EXPECT_GT(many[0].predicted, batch[0].predicted);
}

TEST_F(Published, LoadRaisesTtftAndConcurrencyRaisesThroughput) {
  const auto light = predict(row("r", R"("request_rate_per_s": 1)", "ttft", "median", 1000, 100));
  const auto heavy = predict(row("r", R"("request_rate_per_s": 40)", "ttft", "median", 1000, 100));
  EXPECT_GT(heavy[0].predicted, light[0].predicted);
  const auto c1 = predict(row("r", R"("concurrency": 1)", "throughput", "total", 1000, 100));
  const auto c16 = predict(row("r", R"("concurrency": 16)", "throughput", "total", 1000, 100));
  EXPECT_GT(c16[0].predicted, 4 * c1[0].predicted);
}

TEST_F(Published, SameSeedSameFigures) {
  const std::string rows = row("r", R"("request_rate_per_s": 20)", "ttft", "p99", 800, 100);
  EXPECT_EQ(predict(rows)[0].predicted, predict(rows)[0].predicted);
}

TEST_F(Published, RowsPredictedInParallelComeBackInOrderWithTheSerialFigures) {
  const std::string rows = row("a", R"("request_rate_per_s": 20)", "ttft", "p99", 800, 100) + "," +
                           row("b", R"("batch": 4)", "tpot", "mean", 500, 50) + "," +
                           row("c", R"("concurrency": 8)", "throughput", "total", 1000, 100);
  set_ = read_published(dir_.write("p.json", document(rows)), catalog_);
  PublishedOptions serial;
  serial.num_threads = 1;
  PublishedOptions parallel;
  parallel.num_threads = 3;
  const auto one = predict_published(set_, catalog_, testing::data_dir(), serial);
  const auto three = predict_published(set_, catalog_, testing::data_dir(), parallel);
  ASSERT_EQ(one.size(), 3u);
  ASSERT_EQ(three.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(three[i].row, &set_.rows[i]);
    EXPECT_EQ(three[i].predicted, one[i].predicted) << set_.rows[i].id;
    EXPECT_EQ(three[i].predictor, one[i].predictor) << set_.rows[i].id;
  }
}

TEST_F(Published, SummaryGivesMedianP90ShareWithin25AndWorstFactor) {
  const auto p = predict(row("a", R"("batch": 1)", "tpot", "mean", 128, 16) + "," +
                         row("b", R"("batch": 1)", "tpot", "mean", 128, 16));
  ASSERT_EQ(p.size(), 2u);
  std::vector<PublishedPrediction> made = p;
  const PublishedRow& r = *p[0].row;
  made[0].predicted = r.published * 1.10;  // +10%
  made[0].error = 0.10;
  made[1].predicted = r.published * 0.5;  // -50%, a factor 2
  made[1].error = -0.5;
  const auto s = summarize_published(made);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].device_kind, "gpu");
  EXPECT_EQ(s[0].metric, "tpot");
  EXPECT_EQ(s[0].split, "fit");
  EXPECT_EQ(s[0].rows, 2);
  EXPECT_DOUBLE_EQ(s[0].median_abs_error, 0.10);  // nearest rank: the 1st of 2
  EXPECT_DOUBLE_EQ(s[0].p90_abs_error, 0.5);
  EXPECT_DOUBLE_EQ(s[0].within_25_fraction, 0.5);
  EXPECT_DOUBLE_EQ(s[0].worst_factor, 2.0);
  const nlohmann::json j = nlohmann::json::parse(published_json(made));
  ASSERT_EQ(j.at("rows").size(), 2u);
  EXPECT_EQ(j.at("rows")[1].at("id"), "b");
  EXPECT_EQ(j.at("rows")[1].at("metric"), "tpot");
  EXPECT_DOUBLE_EQ(j.at("rows")[1].at("predicted").get<double>(), r.published * 0.5);
  EXPECT_EQ(j.at("summary")[0].at("rows"), 2);
}

TEST_F(Published, TargetsAreCheckedOnHeldOutRowsOnly) {
  // Two held-out TPOT rows (+5%, -30%), one fit TPOT row (+90%, ignored), one held-out TTFT row
  // (+10%).
  ASSERT_EQ(predict(row("a", R"("batch": 1)", "tpot", "mean", 128, 16) + "," +
                    row("b", R"("batch": 1)", "tpot", "mean", 128, 16) + "," +
                    row("c", R"("batch": 1)", "tpot", "mean", 128, 16) + "," +
                    row("d", R"("batch": 1)", "ttft", "mean", 128, 16))
                .size(),
            4u);
  std::vector<PublishedRow> rows(set_.rows.begin(), set_.rows.end());
  rows[0].split = rows[1].split = rows[3].split = "held_out";
  const double errors[] = {0.05, -0.30, 0.90, 0.10};
  std::vector<PublishedPrediction> made(4);
  for (size_t i = 0; i < 4; ++i) {
    made[i].row = &rows[i];
    made[i].error = errors[i];
    made[i].predicted = rows[i].published * (1 + errors[i]);
  }
  const auto t = published_targets(made);
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].rows, 2);
  EXPECT_DOUBLE_EQ(t[0].median_abs_error, 0.05);  // nearest rank of {0.05, 0.30}
  EXPECT_DOUBLE_EQ(t[0].within_25_fraction, 0.5);
  EXPECT_FALSE(t[0].met);  // half within 25%, not 85%
  EXPECT_EQ(t[1].rows, 1);
  EXPECT_TRUE(t[1].met);    // 10% <= 20%, all within 25%
  EXPECT_EQ(t[2].rows, 0);  // no CPU TTFT row: not met
  EXPECT_FALSE(t[2].met);
}

TEST_F(Published, ErrorsNameTheFileRowFieldValueAndWhatWasExpected) {
  EXPECT_THAT(read_error(row("r", R"("batch": 1, "concurrency": 4)", "tpot", "mean", 8, 8)),
              HasSubstr(R"(row "r": field "rows[0].batch": expected exactly one of batch, )"
                        R"(offline_requests, concurrency, request_rate_per_s, got 2 of them)"));
  EXPECT_THAT(read_error(row("r", R"("batch": 1)", "latency", "mean", 8, 8)),
              HasSubstr(R"(field "rows[0].metric": expected one of tpot, ttft, throughput, )"
                        R"(got "latency")"));
  EXPECT_THAT(read_error(row("r", R"("batch": 1)", "throughput", "mean", 8, 8)),
              HasSubstr(R"(field "rows[0].statistic": expected one of total, got "mean")"));
  EXPECT_THAT(read_error(row("r", R"("batch": 1)", "tpot", "mean", 8, 8) + "," +
                         row("r", R"("batch": 2)", "tpot", "mean", 8, 8)),
              HasSubstr(R"(field "rows[1].id": expected an id not used by an earlier row, )"
                        R"(got "r")"));
  EXPECT_THAT(read_error(row("r", R"("batch": 1)", "tpot", "mean", 8, 8,
                             R"(, "device_count": 4, "tensor_parallel": 3)")),
              HasSubstr(R"(field "rows[0].tensor_parallel": expected a divisor of device_count )"
                        R"(4, got 3)"));
  const std::string cpu_kind =
      testing::replace_once(row("r", R"("batch": 1)", "tpot", "mean", 8, 8),
                            R"("device_kind": "gpu")", R"("device_kind": "cpu")");
  EXPECT_THAT(read_error(cpu_kind),
              HasSubstr(R"(field "rows[0].hardware": expected a cpu (device_kind), got )"
                        R"("h100-sxm", a gpu)"));
  EXPECT_THAT(read_error(testing::replace_once(row("r", R"("batch": 1)", "tpot", "mean", 8, 8),
                                               R"("h100-sxm")", R"("h900")")),
              HasSubstr(R"(field "rows[0].hardware": expected a hardware id of the catalog, )"
                        R"(got "h900")"));
  EXPECT_THAT(read_error(row("r", R"("batch": 1)", "tpot", "mean", 8, 1)),
              HasSubstr(R"(field "rows[0].output_tokens": expected at least 2 for a tpot row, )"
                        R"(got 1)"));
  EXPECT_THAT(read_error(testing::replace_once(row("r", R"("batch": 1)", "tpot", "mean", 8, 8),
                                               R"("split": "fit")", R"("split": "train")")),
              HasSubstr(R"(field "rows[0].split": expected one of fit, held_out, got "train")"));
  EXPECT_THAT(read_error(testing::replace_once(row("r", R"("batch": 1)", "tpot", "mean", 8, 8),
                                               R"("bf16", "kv)", R"("q4", "kv)")),
              HasSubstr(R"(field "weight_format": unknown weight format "q4")"));
  EXPECT_THAT(read_error(row("r", R"("batch": 1)", "tpot", "mean", 8, 8, R"(, "gpus": 2)")),
              HasSubstr(R"(field "rows[0].gpus": unknown; known fields: id, split)"));
}

TEST_F(Published, UnknownModelNamesTheRowAndTheFileItLookedFor) {
  const std::string rows = testing::replace_once(row("r", R"("batch": 1)", "tpot", "mean", 8, 8),
                                                 R"("llama-3.1-8b")", R"("llama-9")");
  const auto set = read_published(dir_.write("p.json", document(rows)), catalog_);
  const std::string message = testing::error_message<base::InputError>(
      [&] { predict_published(set, catalog_, testing::data_dir()); });
  EXPECT_THAT(message, HasSubstr(R"(p.json: row "r": field "model": expected a model with a )"
                                 R"(file )"));
  EXPECT_THAT(message, HasSubstr(R"(models/llama-9.json, got "llama-9")"));
}

TEST_F(Published, EngineNamesAreProfilesOfTheRowsDeviceKind) {
  const auto unknown = testing::replace_once(row("r", R"("batch": 1)", "tpot", "mean", 8, 8),
                                             R"("engine": "vllm")", R"("engine": "tgi")");
  set_ = read_published(dir_.write("p.json", document(unknown)), catalog_);
  EXPECT_THAT(testing::error_message<base::InputError>(
                  [&] { predict_published(set_, catalog_, testing::data_dir()); }),
              HasSubstr(R"(p.json: row "r": field "engine": unknown engine "tgi"; known: )"
                        R"(llama.cpp, llama.cpp-cuda, neural-speed)"));
  const auto cpu_engine = testing::replace_once(row("r", R"("batch": 1)", "tpot", "mean", 8, 8),
                                                R"("engine": "vllm")", R"("engine": "vllm-cpu")");
  set_ = read_published(dir_.write("p.json", document(cpu_engine)), catalog_);
  EXPECT_THAT(testing::error_message<base::InputError>(
                  [&] { predict_published(set_, catalog_, testing::data_dir()); }),
              HasSubstr(R"(row "r": field "engine": expected an engine profile for a gpu (its )"
                        R"(profile is for a cpu), got "vllm-cpu")"));
  // Without engines the same row is priced by the datasheet roofline: another figure.
  set_ = read_published(dir_.write("p.json", document(cpu_engine)), catalog_);
  PublishedOptions datasheet;
  datasheet.use_engines = false;
  const auto plain = predict_published(set_, catalog_, testing::data_dir(), datasheet);
  const auto engine = predict(row("r", R"("batch": 1)", "tpot", "mean", 8, 8));
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_NE(plain[0].predicted, engine[0].predicted);
}

TEST(PublishedData, MeasuredStepTimeErrorsComeFromHeldOutRowsOfTheEngineOrItsKind) {
  const model::Catalog catalog = model::Catalog::load(testing::data_dir());
  const plan::MeasuredStepTimeErrors errors =
      published_step_time_errors(catalog, testing::data_dir());
  // TensorRT-LLM has held-out TPOT and TTFT rows of its own: the p95 of their |error|.
  const PublishedSet set =
      read_published(testing::data_dir() / "validation" / "published.json", catalog);
  std::vector<double> own, gpu;
  for (const PublishedPrediction& p : predict_published(set, catalog, testing::data_dir())) {
    if (p.row->split != "held_out" || p.row->metric == "throughput") continue;
    if (p.row->engine == "tensorrt-llm") own.push_back(p.error);
    if (p.row->device_kind == "gpu") gpu.push_back(p.error);
  }
  ASSERT_GE(own.size(), static_cast<size_t>(kMinErrorRows));
  const auto trt = errors.find({"gpu", "tensorrt-llm"});
  ASSERT_NE(trt, errors.end());
  EXPECT_EQ(trt->second.rows, static_cast<int64_t>(own.size()));
  EXPECT_DOUBLE_EQ(trt->second.p95_abs_error, base::abs_nearest_rank_quantile(own, 0.95));
  EXPECT_THAT(trt->second.source, HasSubstr("of engine tensorrt-llm on the"));
  // vLLM has none in the file: every GPU engine's held-out rows, and the source says so.
  const auto vllm = errors.find({"gpu", "vllm"});
  ASSERT_NE(vllm, errors.end());
  EXPECT_EQ(vllm->second.rows, static_cast<int64_t>(gpu.size()));
  EXPECT_THAT(vllm->second.source,
              HasSubstr("every gpu engine (vllm has fewer than 3 rows of its own)"));
  // No CPU entry for a GPU engine.
  EXPECT_EQ(errors.count({"cpu", "vllm"}), 0u);
}

TEST(PublishedData, ShippedFileReadsWithBothSplitsAndBothDeviceKinds) {
  const model::Catalog catalog = model::Catalog::load(testing::data_dir());
  const std::filesystem::path file = testing::data_dir() / "validation" / "published.json";
  const PublishedSet set = read_published(file, catalog);
  std::set<std::string> kinds, splits;
  for (const PublishedRow& r : set.rows) {
    kinds.insert(r.device_kind);
    splits.insert(r.split);
  }
  EXPECT_GE(set.rows.size(), 60u);
  EXPECT_EQ(kinds, (std::set<std::string>{"cpu", "gpu"}));
  EXPECT_EQ(splits, (std::set<std::string>{"fit", "held_out"}));
  // Every row's model is shipped, and every row can be predicted.
  const auto predictions = predict_published(set, catalog, testing::data_dir());
  for (const PublishedPrediction& p : predictions) {
    EXPECT_GT(p.predicted, 0) << p.row->id;
  }
}

}  // namespace
}  // namespace llmcap::app
