#include "model/calibration.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <tuple>

#include "calibration_fixtures.h"
#include "model/input_error.h"
#include "model/model_spec.h"
#include "model/roofline.h"
#include "predictor_fixtures.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using llmcap::testing::TempDir;
using ::testing::HasSubstr;

using testing::sample;
using testing::synthetic_profile;

TEST(CalibrationFit, RecoversKnownParametersFromSyntheticSamples) {
  const CalibrationProfile p = synthetic_profile();
  EXPECT_EQ(p.fit.threads, 2);
  ASSERT_EQ(p.fit.matmul.count("bf16"), 1u);
  const RateFit& m = p.fit.matmul.at("bf16");
  EXPECT_EQ(m.num_samples, 9);
  EXPECT_NEAR(m.bytes_per_s, 30e9, 0.05 * 30e9);
  EXPECT_NEAR(m.flops_per_s, 200e9, 0.10 * 200e9);
  EXPECT_NEAR(m.overhead_s, 20e-6, 10e-6);
  EXPECT_LT(m.median_rel_error, 0.03);
  EXPECT_LT(m.p95_rel_error, 0.05);
  const RateFit& a = p.fit.attention.at("bf16");
  EXPECT_EQ(a.num_samples, 8);
  EXPECT_NEAR(a.bytes_per_s, 20e9, 0.10 * 20e9);
  EXPECT_NEAR(a.flops_per_s, 80e9, 0.10 * 80e9);
  EXPECT_NEAR(a.overhead_s, 5e-6, 2e-6);
  EXPECT_LT(a.p95_rel_error, 0.03);
  EXPECT_LT(p.fit.p95_rel_error, 0.05);
}

TEST(CalibrationFit, PerBatchRatesFollowStepsThatOneLineCannot) {
  // A kernel that streams its weights at 40 GB/s up to batch 4 and is compute-bound beyond,
  // 16x slower per byte at batch 64 than a straight line through batches 1 and 16 says:
  // one line through all batches misses, a line per batch is exact.
  std::vector<KernelSample> s;
  const std::map<int64_t, double> s_per_byte = {
      {1, 1 / 40e9}, {4, 1 / 40e9}, {16, 2.5 / 40e9}, {64, 10 / 40e9}};
  for (const auto& [batch, spb] : s_per_byte) {
    for (const double weights : {8e6, 32e6, 128e6}) {
      s.push_back(sample("matmul", "int8", weights, 2 * weights * batch, 5e-6 + weights * spb));
      s.back().batch = batch;
    }
  }
  const CalibrationFit fit = fit_calibration(s);
  const RateFit& f = fit.matmul.at("int8");
  ASSERT_EQ(f.by_batch.size(), 4u);
  for (size_t i = 0; i < f.by_batch.size(); ++i) {
    const auto& b = f.by_batch[i];
    EXPECT_EQ(b.num_samples, 3);
    EXPECT_NEAR(b.overhead_s, 5e-6, 1e-9) << b.batch;
    EXPECT_NEAR(1 / b.bytes_per_s, s_per_byte.at(b.batch), 1e-15) << b.batch;
  }
  EXPECT_LT(f.by_batch_p95_rel_error, 1e-9);
  EXPECT_GT(f.p95_rel_error, 0.05);    // the three-term line
  EXPECT_LT(fit.p95_rel_error, 1e-9);  // overall: the per-batch fits the predictor uses

  // The predictor interpolates between measured batches and is exact at them.
  CalibrationProfile p = synthetic_profile();
  p.fit = fit;
  const Efficiency e = calibrated_efficiency(p);
  const auto& rates = e.calibrated->linear.at("int8");
  ASSERT_EQ(rates.by_batch.size(), 4u);
  EXPECT_EQ(rates.by_batch[2].batch, 16);

  // JSON round trip keeps them; a descending batch list is refused with the field named.
  TempDir dir;
  const auto path = dir.path() / "p.json";
  llmcap::testing::write_text(path, profile_to_json(p));
  const CalibrationProfile back = read_profile_json(path);
  ASSERT_EQ(back.fit.matmul.at("int8").by_batch.size(), 4u);
  EXPECT_EQ(back.fit.matmul.at("int8").by_batch[3].batch, 64);
  // Batch 16 (entry 2) set to 2: below its predecessor (4).
  p.fit.matmul.at("int8").by_batch[2].batch = 2;
  llmcap::testing::write_text(path, profile_to_json(p));
  try {
    read_profile_json(path);
    FAIL() << "expected InputError";
  } catch (const InputError& err) {
    EXPECT_THAT(err.what(), HasSubstr("by_batch[2].batch"));
    EXPECT_THAT(err.what(), HasSubstr("ascending"));
  }
}

TEST(CalibrationFit, ExactDataIsRecoveredExactly) {
  std::vector<KernelSample> s;
  for (const double bytes : {1e7, 3e7, 1e8}) {
    for (const double flops : {1e7, 1e9}) {
      s.push_back(sample("matmul", "int8", bytes, flops, 1e-5 + bytes / 25e9 + flops / 1e11));
    }
  }
  const RateFit f = fit_calibration(s).matmul.at("int8");
  EXPECT_NEAR(f.bytes_per_s / 25e9, 1.0, 1e-6);
  EXPECT_NEAR(f.flops_per_s / 1e11, 1.0, 1e-6);
  EXPECT_NEAR(f.overhead_s / 1e-5, 1.0, 1e-6);
  EXPECT_LT(f.p95_rel_error, 1e-9);
}

TEST(CalibrationFit, NegativeTermsAreDroppedNotFitted) {
  // Time falls with flops at fixed bytes (noise): an unconstrained fit would give a negative
  // flops coefficient; the fit keeps it at 0 (rate 0) and stays non-negative.
  std::vector<KernelSample> s = {
      sample("matmul", "f32", 1e8, 1e8, 4.0e-3), sample("matmul", "f32", 1e8, 2e9, 3.9e-3),
      sample("matmul", "f32", 2e8, 1e8, 8.0e-3), sample("matmul", "f32", 2e8, 2e9, 7.9e-3)};
  const RateFit f = fit_calibration(s).matmul.at("f32");
  EXPECT_EQ(f.flops_per_s, 0);
  EXPECT_GE(f.overhead_s, 0);
  EXPECT_GT(f.bytes_per_s, 0);
}

TEST(CalibrationFit, AttentionCannotReadFasterThanTheMachinesReadBandwidth) {
  // Cache-resident speeds: KV "read" at 200 GB/s, two GQA layouts (flops per byte 2 and 8).
  std::vector<KernelSample> s;
  for (const double flops_per_byte : {2.0, 8.0}) {
    for (const double bytes : {1e6, 4e6, 1.6e7}) {
      s.push_back(sample("attention", "bf16", bytes, flops_per_byte * bytes,
                         5e-6 + bytes / 200e9 + flops_per_byte * bytes / 400e9));
    }
  }
  const RateFit free = fit_calibration(s).attention.at("bf16");
  ASSERT_NEAR(free.bytes_per_s, 200e9, 1e-6 * 200e9) << "the unbounded fit this test is about";
  constexpr double kReadBandwidth = 40e9;
  const RateFit bounded =
      fit_calibration(s, 0, 0, false, FitStatistic::kMedian, {{1, 25e9}, {2, kReadBandwidth}})
          .attention.at("bf16");
  EXPECT_NEAR(bounded.bytes_per_s / kReadBandwidth, 1.0, 1e-9);
  // Those samples cannot be explained at memory speed: the fit says so in its error (the
  // unbounded fit is exact).
  EXPECT_LT(free.median_rel_error, 1e-9);
  EXPECT_GT(bounded.median_rel_error, 0.1);

  // A bound that is not reached changes nothing: attention at 20 GB/s under a 40 GB/s machine.
  const CalibrationProfile p = synthetic_profile();
  const RateFit a = fit_calibration(p.kernels, 0, 0, false, FitStatistic::kMedian,
                                    p.machine.read_bandwidth_bytes_per_s)
                        .attention.at("bf16");
  EXPECT_NEAR(a.bytes_per_s, p.fit.attention.at("bf16").bytes_per_s, 1e-6 * a.bytes_per_s);
  // Matrix products are not bounded (a cache-resident sweep may read faster than memory).
  const RateFit m =
      fit_calibration(p.kernels, 0, 0, false, FitStatistic::kMedian, {{2, 1e9}}).matmul.at("bf16");
  EXPECT_NEAR(m.bytes_per_s, 30e9, 0.05 * 30e9);
}

TEST(CalibrationJson, RoundTripKeepsEverythingAndUsesTheDocumentedKeys) {
  const CalibrationProfile p = synthetic_profile();
  const std::string text = profile_to_json(p);
  const auto doc = nlohmann::json::parse(text);
  for (const char* key : {"cpu_model", "isa", "num_cores", "read_bandwidth_bytes_per_s"}) {
    EXPECT_TRUE(doc.at("machine").contains(key)) << key;
  }
  EXPECT_DOUBLE_EQ(doc.at("machine").at("read_bandwidth_bytes_per_s").at("2").get<double>(), 40e9);
  for (const char* key : {"op", "format", "backend", "rows", "cols", "batch", "threads", "median_s",
                          "bytes", "bytes_per_s"}) {
    EXPECT_TRUE(doc.at("kernels").at(0).contains(key)) << key;
  }
  const CalibrationProfile q = profile_from_json(text, "p.json");
  EXPECT_EQ(q.machine.cpu_model, p.machine.cpu_model);
  EXPECT_EQ(q.machine.read_bandwidth_bytes_per_s, p.machine.read_bandwidth_bytes_per_s);
  ASSERT_EQ(q.kernels.size(), p.kernels.size());
  EXPECT_EQ(q.kernels.back().cache_resident, true);
  EXPECT_DOUBLE_EQ(q.kernels[3].median_s, p.kernels[3].median_s);
  EXPECT_DOUBLE_EQ(q.fit.matmul.at("bf16").bytes_per_s, p.fit.matmul.at("bf16").bytes_per_s);
  EXPECT_DOUBLE_EQ(q.fit.attention.at("bf16").overhead_s, p.fit.attention.at("bf16").overhead_s);
}

TEST(CalibrationJson, BadProfilesNameTheFileFieldAndValue) {
  const std::string good = profile_to_json(synthetic_profile());
  const auto error_of = [](const std::string& text) -> std::string {
    try {
      profile_from_json(text, "prof.json");
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  EXPECT_THAT(error_of("{not json"), HasSubstr("prof.json: malformed JSON"));
  auto doc = nlohmann::json::parse(good);
  doc["schema_version"] = 7;
  EXPECT_THAT(error_of(doc.dump()),
              HasSubstr("prof.json: field \"schema_version\": expected 1, got 7"));
  doc = nlohmann::json::parse(good);
  doc["kernels"][2]["median_s"] = "fast";
  EXPECT_THAT(error_of(doc.dump()),
              HasSubstr("prof.json: field \"kernels[2].median_s\": expected a non-negative "
                        "number, got \"fast\""));
  doc = nlohmann::json::parse(good);
  doc["machine"].erase("cpu_model");
  EXPECT_THAT(error_of(doc.dump()), HasSubstr("field \"machine.cpu_model\": missing"));
  doc = nlohmann::json::parse(good);
  doc["machine"]["read_bandwidth_bytes_per_s"] = {{"two", 1e9}};
  EXPECT_THAT(error_of(doc.dump()), HasSubstr("expected thread counts as keys, got \"two\""));
  EXPECT_THROW(read_profile_json("/nonexistent/prof.json"), InputError);
  // Unknown keys, at every level (issue 29: nothing unread is stored).
  doc = nlohmann::json::parse(good);
  doc["extra"] = 1;
  EXPECT_THAT(error_of(doc.dump()), HasSubstr("prof.json: field \"extra\": unknown; known fields: "
                                              "schema_version, created_at, tool, machine"));
  doc = nlohmann::json::parse(good);
  doc["kernels"][1]["warm"] = true;
  EXPECT_THAT(error_of(doc.dump()), HasSubstr("prof.json: field \"kernels[1].warm\": unknown"));
  doc = nlohmann::json::parse(good);
  doc["fit"]["matmul"]["bf16"]["slope"] = 2;
  EXPECT_THAT(error_of(doc.dump()),
              HasSubstr("prof.json: field \"fit.matmul.bf16.slope\": unknown"));
}

// The fit alone, as the profile database keeps it (store/profile_store.h): the profile JSON's
// "fit" object on one line, read back to the same fit, with errors naming what the caller says.
TEST(CalibrationJson, TheFitAloneIsTheProfilesFitObjectOnOneLine) {
  const CalibrationProfile p = synthetic_profile();
  const std::string text = fit_to_json(p.fit);
  EXPECT_EQ(text.find('\n'), std::string::npos);
  EXPECT_EQ(text, nlohmann::json::parse(profile_to_json(p)).at("fit").dump());
  CalibrationProfile back = p;
  back.fit = fit_from_json(text, "db (profile 1)", "db: profile 1: column \"fit_json\"");
  EXPECT_EQ(profile_to_json(back), profile_to_json(p));
  EXPECT_THAT(llmcap::testing::error_message<InputError>(
                  [] { fit_from_json("{oops", "db (profile 1)", "db: profile 1: column"); }),
              ::testing::StartsWith("db: profile 1: column: malformed JSON: "));
  EXPECT_THAT(llmcap::testing::error_message<InputError>(
                  [] { fit_from_json("[]", "db (profile 1)", "db: profile 1: column"); }),
              ::testing::StartsWith("db (profile 1): field \"fit\": expected an object"));
  auto doc = nlohmann::json::parse(text);
  doc.erase("threads");
  EXPECT_THAT(llmcap::testing::error_message<InputError>(
                  [&] { fit_from_json(doc.dump(), "db (profile 1)", "db: profile 1: column"); }),
              HasSubstr("db (profile 1): field \"fit.threads\": missing"));
}

TEST(CalibrationMachineCheck, AnotherMachineIsRejectedWithBothNames) {
  const CalibrationProfile p = synthetic_profile();
  EXPECT_NO_THROW(check_profile_machine(p, {p.machine.cpu_model, p.machine.isa}, "p.json"));
  try {
    check_profile_machine(p, {"Intel Xeon Platinum 8480+", "avx2 amx_bf16"}, "p.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("p.json: profile was measured on \"AMD EPYC\" with [avx2"));
    EXPECT_THAT(e.what(), HasSubstr("this machine is \"Intel Xeon Platinum 8480+\""));
    EXPECT_THAT(e.what(), HasSubstr("pass --transfer"));
  }
}

using testing::cpu_deployment;
using testing::tiny_model;

/// CPU defaults with round calibrated rates: bf16 products 10 us + bytes / 40 GB/s + flops /
/// 100 GFLOP/s, bf16 attention 5 us per call + bytes / 20 GB/s + flops / 50 GFLOP/s.
Efficiency round_calibrated_efficiency() {
  Efficiency e = default_efficiency(DeviceKind::kCpu);
  CalibratedEfficiency cal;
  cal.linear["bf16"] = {10e-6, 40e9, 100e9, {}};
  cal.attention["bf16"] = {5e-6, 20e9, 50e9, {}};
  e.calibrated = cal;
  return e;
}

/// round_calibrated_efficiency with per-batch bf16 lines (batch 1: 2 us + bytes / 50 GB/s;
/// batch 16: 4 us + bytes / 20 GB/s; the three-term rates outside [1, 16]) and element-wise
/// traffic at 50 GB/s.
Efficiency per_batch_calibrated_efficiency() {
  Efficiency e = round_calibrated_efficiency();
  e.calibrated->linear["bf16"].by_batch = {{1, 2e-6, 50e9}, {16, 4e-6, 20e9}};
  e.calibrated->stream_bytes_per_s = 50e9;
  return e;
}

TEST(CalibratedPredictor, UnsetCalibrationIsThePlainRoofline) {
  const ModelSpec m = tiny_model();
  const Efficiency e = default_efficiency(DeviceKind::kCpu);
  EXPECT_FALSE(e.calibrated.has_value());
  const RooflinePredictor plain(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), e);
  BatchShape b;
  b.num_decode_seqs = 1;
  b.num_decode_context_tokens = 100;
  // One bf16 decode token is memory-bound: its time is the weight bytes / (100 GB/s x 0.7).
  const std::vector<OpTime> ops = plain.breakdown(b);
  for (const OpTime& op : ops) {
    if (op.op == "lm_head") continue;
    EXPECT_NEAR(op.time_s, std::max(op.bytes / 70e9, op.flops / 4e11), 1e-15) << op.op;
  }
}

TEST(CalibratedPredictor, PerBatchRatesAreInterpolatedInTheTokenCount) {
  const ModelSpec m = tiny_model();
  // Three-term rates for batches outside [1, 16]; per-batch ones inside.
  const Efficiency e = per_batch_calibrated_efficiency();
  const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), e);
  const auto linear_s = [&](int64_t seqs, const char* op) {
    BatchShape b;
    b.num_decode_seqs = seqs;
    b.num_decode_context_tokens = 100 * seqs;
    for (const OpTime& t : p.breakdown(b)) {
      if (t.op == op) return std::pair{t.time_s, t.bytes};
    }
    ADD_FAILURE() << op;
    return std::pair{0.0, 0.0};
  };
  // qkv_proj is one call. At 8 tokens: w = 7 / 15 between the batch-1 and batch-16 lines,
  // each at its own batch's bytes (the activations of 1 and of 16 rows).
  const auto [t1, bytes1] = linear_s(1, "qkv_proj");
  const auto [t8, bytes8] = linear_s(8, "qkv_proj");
  const auto [t16, bytes16] = linear_s(16, "qkv_proj");
  const double per_token = (bytes16 - bytes1) / 15.0;
  EXPECT_NEAR(bytes8, bytes1 + 7 * per_token, 1e-6);
  const double w = 7.0 / 15.0;
  EXPECT_NEAR(t8, (1 - w) * (2e-6 + bytes1 / 50e9) + w * (4e-6 + bytes16 / 20e9), 1e-15);
  // At a measured batch, exactly its line.
  EXPECT_NEAR(t1, 2e-6 + bytes1 / 50e9, 1e-15);
  EXPECT_NEAR(t16, 4e-6 + bytes16 / 20e9, 1e-15);
  // Beyond the largest measured batch (a prefill): the batch-16 time, at batch 16's own bytes,
  // per token: x 32 / 16. (The three-term rates are not used there.)
  BatchShape big;
  big.num_decode_seqs = 32;
  big.num_decode_context_tokens = 3200;
  bool seen = false;
  for (const OpTime& t : p.breakdown(big)) {
    if (t.op != "qkv_proj") continue;
    seen = true;
    EXPECT_GT(t.bytes, bytes16);  // 16 more tokens' activations
    EXPECT_NEAR(t.time_s, std::max((4e-6 + bytes16 / 20e9) * 32.0 / 16.0, t.flops / 4e11), 1e-15);
  }
  EXPECT_TRUE(seen);
}

TEST(CalibratedPredictor, HandComputedDecodeStep) {
  const ModelSpec m = tiny_model();
  Efficiency e = default_efficiency(DeviceKind::kCpu);
  CalibratedEfficiency cal;
  cal.linear["bf16"] = {10e-6, 40e9, 100e9, {}};
  cal.attention["bf16"] = {5e-6, 20e9, 0, {}};
  cal.stream_bytes_per_s = 50e9;
  e.calibrated = cal;
  const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), e);
  BatchShape b;
  b.num_decode_seqs = 1;
  b.num_decode_context_tokens = 100;
  const std::vector<OpTime> ops = p.breakdown(b);
  const double bf16_floor = 1.0 / (1e12 * 0.4);
  double sum_layer = 0;
  for (const OpTime& op : ops) {
    double expect = 0;
    if (op.op == "qkv_proj") {
      // fused Q, K, V: 3 matrices sharing one input, one call of 10 us.
      expect = 10e-6 + op.bytes / 40e9 + op.flops / 100e9;
    } else if (op.op == "out_proj") {
      expect = 10e-6 + op.bytes / 40e9 + op.flops / 100e9;
    } else if (op.op == "mlp") {
      // fused gate and up (one input), then down: two calls.
      expect = 2 * 10e-6 + op.bytes / 40e9 + op.flops / 100e9;
    } else if (op.op == "attention") {
      // K and V of 100 tokens, 2 kv heads x 128 x 2 bytes, + q in, out in f32 (the measured
      // kernels' activations, CalibratedEfficiency::activation_bytes): 2 x 8 x 128 x 4.
      EXPECT_DOUBLE_EQ(op.bytes, 100.0 * 2 * 2 * 128 * 2 + 2 * 8 * 128 * 4);
      expect = 5e-6 + op.bytes / 20e9;
    } else if (op.op == "lm_head") {
      // Head weights 32000 x 1024 bf16 + logits I/O in f32 at the linear rates (one call),
      // plus embedding and final norm streaming at 50 GB/s.
      const double head_bytes = 32000.0 * 1024 * 2 + (1024 + 32000) * 4;
      const double head_flops = 2.0 * 32000 * 1024;
      const double rest_bytes = 1024 * 4 + 2 * 1024 * 4;
      expect = 10e-6 + head_bytes / 40e9 + head_flops / 100e9 +
               std::max(rest_bytes / 50e9, 4.0 * 1024 * bf16_floor);
      EXPECT_NEAR(op.time_s, expect, 1e-12);
      continue;
    } else {  // norms stream at 50 GB/s
      expect = std::max(op.bytes / 50e9, op.flops * bf16_floor);
    }
    EXPECT_NEAR(op.time_s, expect, 1e-12) << op.op;
    sum_layer += op.time_s;
  }
  // A decode step: the operators of a layer run one after another here (no parallel branches).
  EXPECT_NEAR(p.step_time_s(b), e.step_overhead_s + 2 * sum_layer + ops.back().time_s, 1e-12);
}

TEST(CalibratedPredictor, AttentionCostsOneCallPerSequenceAndItsFlops) {
  const ModelSpec m = tiny_model();
  const Efficiency e = round_calibrated_efficiency();
  const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), e);
  BatchShape b;
  b.num_decode_seqs = 4;
  b.num_decode_context_tokens = 400;
  for (const OpTime& op : p.breakdown(b)) {
    if (op.op != "attention") continue;
    // 4 sequences: 4 calls; QK^T and PV: 4 x 400 pairs x 8 heads x 128.
    EXPECT_DOUBLE_EQ(op.flops, 4.0 * 400 * 8 * 128);
    EXPECT_NEAR(op.time_s, 4 * 5e-6 + op.bytes / 20e9 + op.flops / 50e9, 1e-12);
  }
}

TEST(CalibratedPredictor, TheMlpAddsItsActivationFunctionAtTheSlowerOfComputeAndBytes) {
  const ModelSpec m = tiny_model();  // gated MLP, intermediate 4096
  Efficiency plain = round_calibrated_efficiency();
  plain.calibrated->stream_bytes_per_s = 50e9;
  plain.calibrated->threads = 2;
  Efficiency with = plain;
  const auto mlp_s = [&](const Efficiency& e, int64_t tokens) {
    const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), e);
    BatchShape b;
    b.num_decode_seqs = tokens;
    b.num_decode_context_tokens = 100 * tokens;
    for (const OpTime& t : p.breakdown(b)) {
      if (t.op == "mlp") return t.time_s;
    }
    ADD_FAILURE() << "no mlp";
    return 0.0;
  };
  constexpr double kExact = 1e-15;  // seconds
  // Compute-bound: 1 ns per element on one thread, two threads: 4096 x 0.5 ns = 2.05 us per
  // token, against 3 x 4096 x 4 bytes at 50 GB/s = 0.98 us.
  with.calibrated->activation_s_per_element = 1e-9;
  EXPECT_NEAR(mlp_s(with, 8) - mlp_s(plain, 8), 8 * 4096 * 0.5e-9, kExact);
  // Bytes-bound: 0.01 ns per element; gate and up read, the product written, f32.
  with.calibrated->activation_s_per_element = 1e-11;
  EXPECT_NEAR(mlp_s(with, 8) - mlp_s(plain, 8), 8 * 3.0 * 4096 * 4 / 50e9, kExact);
}

TEST(CalibratedEfficiency, TheActivationRateIsTheLargestSwigluSampleFromMemoryPerElement) {
  CalibrationProfile p = synthetic_profile();
  KernelSample small;
  small.op = "swiglu";
  small.format = "f32";
  small.rows = 1;
  small.cols = 1000;
  small.batch = 1;
  small.threads = 1;
  small.median_s = small.min_s = 5e-6;  // 5 ns per element: not the largest sample
  small.cache_resident = true;          // as the calibration's in-cache samples
  KernelSample large = small;
  large.batch = 16;
  large.median_s = 32e-6;  // 2 ns per element
  large.min_s = 16e-6;     // 1 ns per element
  p.kernels.push_back(small);
  p.kernels.push_back(large);
  EXPECT_DOUBLE_EQ(calibrated_efficiency(p).calibrated->activation_s_per_element, 2e-9);
  p.fit.statistic = FitStatistic::kMin;
  EXPECT_DOUBLE_EQ(calibrated_efficiency(p).calibrated->activation_s_per_element, 1e-9);
  // A sample from memory (the decoder's SwiGLU reads what no longer fits the caches) wins over
  // any in-cache one, even a larger one.
  p.fit.statistic = FitStatistic::kMedian;
  KernelSample cold = small;
  cold.batch = 4;
  cold.median_s = cold.min_s = 12e-6;  // 3 ns per element
  cold.cache_resident = false;
  p.kernels.push_back(cold);
  EXPECT_DOUBLE_EQ(calibrated_efficiency(p).calibrated->activation_s_per_element, 3e-9);
  p.kernels.pop_back();
  p.kernels.pop_back();
  p.kernels.pop_back();
  EXPECT_DOUBLE_EQ(calibrated_efficiency(p).calibrated->activation_s_per_element, 0.0);
}

TEST(CalibratedPredictor, PrefillAttentionIsOneCallPerNewTokenReadingItsPrefix) {
  // As the reference decoder runs the measured kernel: each new token's query is a
  // decode-attention call over its prefix, `threads` calls at once on one thread each (in a
  // row: tokens / threads calls of the mean prefix), and never faster than all the pairs at
  // the replica's fitted rates; a decode sequence (fewer than the threads) one call over its
  // context.
  const ModelSpec m = tiny_model();  // 8 query heads, 2 KV heads x 128
  BatchShape b;
  b.num_prefill_seqs = 1;
  b.num_prefill_tokens = 100;
  b.num_prefill_attention_pairs = 100 * 101 / 2;
  b.num_prefill_seqs_completing = 1;
  b.num_decode_seqs = 1;
  b.num_decode_context_tokens = 200;
  const double kv_bytes_per_pair = 2 * 2 * 128 * 2;   // K and V, 2 heads x 128, bf16
  const double io_bytes_per_token = 2 * 8 * 128 * 4;  // q in, output out, f32
  const double flops_per_pair = 4.0 * 8 * 128;
  const auto attention_of = [&](const Efficiency& e) {
    const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), e);
    for (const OpTime& op : p.breakdown(b)) {
      if (op.op == "attention") return op;
    }
    ADD_FAILURE() << "no attention";
    return OpTime{};
  };
  constexpr double kExact = 1e-12;  // seconds: the same arithmetic up to rounding
  for (const double overhead_s : {5e-6, 40e-6}) {
    Efficiency e = round_calibrated_efficiency();
    e.calibrated->attention["bf16"].overhead_s = overhead_s;
    e.calibrated->threads = 2;
    const OpTime op = attention_of(e);
    EXPECT_DOUBLE_EQ(op.bytes, io_bytes_per_token * 101 + kv_bytes_per_pair * (5050 + 200));
    EXPECT_DOUBLE_EQ(op.flops, flops_per_pair * (5050 + 200));
    const double decode_s = overhead_s + (io_bytes_per_token + 200 * kv_bytes_per_pair) / 20e9 +
                            200 * flops_per_pair / 50e9;
    // One call of the mean prefix, 50.5 tokens; 100 calls two at a time.
    const double call_s = overhead_s + (io_bytes_per_token + 50.5 * kv_bytes_per_pair) / 20e9 +
                          50.5 * flops_per_pair / 50e9;
    const double rates_s =
        (100 * io_bytes_per_token + 5050 * kv_bytes_per_pair) / 20e9 + 5050 * flops_per_pair / 50e9;
    EXPECT_NEAR(op.time_s, decode_s + std::max(100.0 / 2 * call_s, rates_s), kExact);
    if (overhead_s == 5e-6) {
      EXPECT_GT(rates_s, 100.0 / 2 * call_s);  // the replica's rates bind
    } else {
      EXPECT_LT(rates_s, 100.0 / 2 * call_s);  // the calls in a row bind
    }
  }
  // A measured layout (8 query heads over 2 x 128 KV) scales the decode call at its context
  // (200) and the prefill call at the mean prefix (50.5); 40 us calls bind.
  Efficiency e = round_calibrated_efficiency();
  e.calibrated->attention["bf16"].overhead_s = 40e-6;
  e.calibrated->threads = 2;
  const double plain_s = attention_of(e).time_s;
  e.calibrated->attention_shapes[{"bf16", 256, 8}] = {{50.5, 2.0}, {200, 3.0}};
  const double decode_s =
      40e-6 + (io_bytes_per_token + 200 * kv_bytes_per_pair) / 20e9 + 200 * flops_per_pair / 50e9;
  EXPECT_NEAR(attention_of(e).time_s, 3 * decode_s + 2 * (plain_s - decode_s), kExact);
}

TEST(CalibratedPredictor, DecodeOfASequencePerThreadOrMoreIsCallsInARowOnEachThread) {
  // Three decode sequences of 200 tokens on 2 threads: dealt to the threads, so ceil(3 / 2) =
  // 2 calls in a row, each one call of 200 tokens, and never faster than all 600 pairs at the
  // replica's rates, both at the layout's ratio at 200 tokens; on 4 threads (fewer sequences than
  // threads) three calls, each over the whole replica.
  const ModelSpec m = tiny_model();  // 8 query heads, 2 KV heads x 128
  BatchShape b;
  b.num_decode_seqs = 3;
  b.num_decode_context_tokens = 600;
  const double kv_bytes_per_pair = 2 * 2 * 128 * 2;
  const double io_bytes_per_token = 2 * 8 * 128 * 4;
  const double flops_per_pair = 4.0 * 8 * 128;
  const auto attention_s = [&](const Efficiency& e) {
    const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), e);
    for (const OpTime& op : p.breakdown(b)) {
      if (op.op == "attention") return op.time_s;
    }
    ADD_FAILURE() << "no attention";
    return 0.0;
  };
  constexpr double kExact = 1e-12;
  const double rates_s =
      (3 * io_bytes_per_token + 600 * kv_bytes_per_pair) / 20e9 + 600 * flops_per_pair / 50e9;
  for (const double overhead_s : {1e-7, 40e-6}) {
    Efficiency e = round_calibrated_efficiency();
    e.calibrated->attention["bf16"].overhead_s = overhead_s;
    e.calibrated->threads = 2;
    const double call_s = overhead_s + (io_bytes_per_token + 200 * kv_bytes_per_pair) / 20e9 +
                          200 * flops_per_pair / 50e9;
    EXPECT_NEAR(attention_s(e), std::max(2 * call_s, rates_s), kExact);
    if (overhead_s == 1e-7) {
      EXPECT_GT(rates_s, 2 * call_s);  // the replica's rates bind
    } else {
      EXPECT_LT(rates_s, 2 * call_s);  // the calls in a row bind
    }
    e.calibrated->attention_shapes[{"bf16", 256, 8}] = {{200, 1.5}};
    EXPECT_NEAR(attention_s(e), 1.5 * std::max(2 * call_s, rates_s), kExact);
    e.calibrated->attention_shapes.clear();
    e.calibrated->threads = 4;
    EXPECT_NEAR(attention_s(e), 3 * overhead_s + rates_s, kExact);
  }
}

TEST(CalibratedPredictor, CallsSpreadOverTheThreadsCostTheLayoutsSpreadSample) {
  // A profile that timed the layout's calls spread over the threads (one single-threaded call
  // per thread, all at once) prices the calls in a row of a decode batch, and of a prefill, at
  // that sample's ratio instead of the ratio of a call alone; decodes of fewer sequences than
  // threads keep the ratio of a call alone.
  const ModelSpec m = tiny_model();  // 8 query heads, 2 KV heads x 128
  const double kv_bytes_per_pair = 2 * 2 * 128 * 2;
  const double io_bytes_per_token = 2 * 8 * 128 * 4;
  const double flops_per_pair = 4.0 * 8 * 128;
  constexpr double kOverheadS = 40e-6;
  const auto call_s = [&](double context) {
    return kOverheadS + (io_bytes_per_token + context * kv_bytes_per_pair) / 20e9 +
           context * flops_per_pair / 50e9;
  };
  const auto attention_s = [&](const Efficiency& e, const BatchShape& b) {
    const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), e);
    for (const OpTime& op : p.breakdown(b)) {
      if (op.op == "attention") return op.time_s;
    }
    ADD_FAILURE() << "no attention";
    return 0.0;
  };
  Efficiency e = round_calibrated_efficiency();
  e.calibrated->attention["bf16"].overhead_s = kOverheadS;
  e.calibrated->threads = 2;
  e.calibrated->attention_shapes[{"bf16", 256, 8}] = {{200, 1.5}};
  e.calibrated->attention_spread_shapes[{"bf16", 256, 8}] = {{100, 2.0}, {300, 4.0}};
  constexpr double kExact = 1e-12;

  BatchShape decode;  // 3 sequences of 200 tokens: 2 calls in a row, spread ratio 3.0 at 200
  decode.num_decode_seqs = 3;
  decode.num_decode_context_tokens = 600;
  EXPECT_NEAR(attention_s(e, decode), 2 * call_s(200) * 3.0, kExact);
  BatchShape one;  // one sequence on 2 threads: a call alone over the replica
  one.num_decode_seqs = 1;
  one.num_decode_context_tokens = 200;
  EXPECT_NEAR(attention_s(e, one), call_s(200) * 1.5, kExact);

  BatchShape prefill;  // 8 new tokens, prefix 0..7 (mean 4.5 pairs per call): ratio 2.0
  prefill.num_prefill_seqs = 1;
  prefill.num_prefill_tokens = 8;
  prefill.num_prefill_attention_pairs = 36;
  prefill.num_prefill_seqs_completing = 1;
  EXPECT_NEAR(attention_s(e, prefill), 8.0 / 2 * call_s(4.5) * 2.0, kExact);
  e.calibrated->attention_spread_shapes.clear();
  EXPECT_NEAR(attention_s(e, prefill), 8.0 / 2 * call_s(4.5) * 1.5, kExact);
}

TEST(CalibratedPredictor, PeakComputeFloorHoldsForLargePrefills) {
  // The floor of a calibrated time is the datasheet compute time at the full peak (1e12
  // FLOP/s here), not at the roofline's compute_fraction: a calibration measures the
  // efficiency, and a floor must lie below every real time.
  const ModelSpec m = tiny_model();
  Efficiency e = default_efficiency(DeviceKind::kCpu);
  CalibratedEfficiency cal;
  cal.linear["bf16"] = {0, 40e9, 0, {}};  // flops term dropped by the fit
  e.calibrated = cal;
  const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), e);
  BatchShape b;
  b.num_prefill_seqs = 1;
  b.num_prefill_tokens = 4096;
  b.num_prefill_attention_pairs = 4096 * 4097 / 2;
  b.num_prefill_seqs_completing = 1;
  for (const OpTime& op : p.breakdown(b)) {
    if (op.op == "mlp") {
      ASSERT_GT(op.flops / 1e12, op.bytes / 40e9);  // compute-bound: the floor decides
      EXPECT_NEAR(op.time_s, op.flops / 1e12, 1e-12);
    }
  }
}

TEST(LinearCallShapes, FusedCallsSplitByTpAndTheLmHeadEachOnce) {
  const ModelSpec m = tiny_model();  // hidden 1024, 8 x 128 query heads, 2 KV heads, MLP 4096
  const auto shapes = [](const std::vector<MatmulShapeKey>& keys) {
    std::vector<std::pair<int64_t, int64_t>> out;
    for (const MatmulShapeKey& k : keys) {
      EXPECT_EQ(k.format, "");
      out.emplace_back(k.rows, k.cols);
    }
    return out;
  };
  // q, k, v fused (1024 + 256 + 256 rows); o; gate and up fused; down; LM head.
  EXPECT_EQ(shapes(linear_call_shapes(m, 1)),
            (std::vector<std::pair<int64_t, int64_t>>{
                {1536, 1024}, {1024, 1024}, {8192, 1024}, {1024, 4096}, {32000, 1024}}));
  // tp 2: column-parallel matrices keep half their rows, row-parallel ones half their columns.
  EXPECT_EQ(shapes(linear_call_shapes(m, 2)),
            (std::vector<std::pair<int64_t, int64_t>>{
                {768, 1024}, {1024, 512}, {4096, 1024}, {1024, 2048}, {16000, 1024}}));
  try {
    linear_call_shapes(m, 0);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("tp: expected >= 1, got 0"));
  }
}

TEST(CalibratedPredictor, MeasuredShapesScaleTheirCallsByTheMeasuredRatio) {
  const ModelSpec m = tiny_model();
  const Efficiency plain = per_batch_calibrated_efficiency();
  Efficiency e = plain;
  CalibratedEfficiency& cal = *e.calibrated;
  // out_proj (1024x1024) measured 1.5x the fit at batch 1 and 1.1x at batch 16; gate/up
  // (8192x1024) 2x at batch 4; the LM head 0.8x at batch 1. Another format's entry of the same
  // shape must not apply.
  cal.linear_shapes[{"bf16", 1024, 1024}] = {{1, 1.5}, {16, 1.1}};
  cal.linear_shapes[{"bf16", 8192, 1024}] = {{4, 2.0}};
  cal.linear_shapes[{"bf16", 32000, 1024}] = {{1, 0.8}};
  cal.linear_shapes[{"int8", 1536, 1024}] = {{1, 3.0}};
  const RooflinePredictor with(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), e);
  const RooflinePredictor without(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), plain);
  const auto time_of = [](const RooflinePredictor& p, int64_t seqs, const std::string& op) {
    BatchShape b;
    b.num_decode_seqs = seqs;
    b.num_decode_context_tokens = 100 * seqs;
    for (const OpTime& t : p.breakdown(b)) {
      if (t.op == op) return t.time_s;
    }
    ADD_FAILURE() << op;
    return 0.0;
  };
  constexpr double kExact = 1e-12;  // relative: the same arithmetic up to rounding
  const auto near = [&](double a, double b) { EXPECT_NEAR(a / b, 1.0, kExact); };
  // At a measured batch, its ratio; between, linear in the tokens; beyond, the end ratio.
  near(time_of(with, 1, "out_proj"), 1.5 * time_of(without, 1, "out_proj"));
  near(time_of(with, 8, "out_proj"),
       (1.5 + (1.1 - 1.5) * 7.0 / 15.0) * time_of(without, 8, "out_proj"));
  near(time_of(with, 32, "out_proj"), 1.1 * time_of(without, 32, "out_proj"));
  // qkv_proj has no bf16 measurement: the fit alone.
  near(time_of(with, 4, "qkv_proj"), time_of(without, 4, "qkv_proj"));
  // mlp = gate/up (2 x 4096 x 1024 weights, ratio 2) + down (1024 x 4096, none: 1), weighted
  // by weight bytes: (2/3) x 2 + (1/3) x 1.
  near(time_of(with, 4, "mlp"), 5.0 / 3.0 * time_of(without, 4, "mlp"));
  // The LM head's weights part at 0.8; embedding and final norm are not matrix products.
  BatchShape one;
  one.num_decode_seqs = 1;
  one.num_decode_context_tokens = 100;
  const double rest_s = std::max((1024.0 * 4 + 2 * 1024 * 4) / 50e9, 4.0 * 1024 / 1e12);
  near(with.breakdown(one).back().time_s - rest_s,
       0.8 * (without.breakdown(one).back().time_s - rest_s));
}

TEST(CalibratedEfficiency, MeasuredShapeRatiosAreTimeOverTheFitAtThatBatch) {
  CalibrationProfile p = synthetic_profile();
  // A second sample of 1024x4096 at batch 4, 10% slower: the two ratios are averaged.
  KernelSample again;
  for (const KernelSample& s : p.kernels) {
    if (s.op == "matmul" && s.rows == 1024 && s.batch == 4) again = s;
  }
  ASSERT_EQ(again.batch, 4);
  const double first_median_s = again.median_s;
  again.median_s *= 1.1;
  p.kernels.push_back(again);
  p.fit = fit_calibration(p.kernels);
  const auto ratios = measured_shape_ratios(p);
  const RateFit& f = p.fit.matmul.at("bf16");
  ASSERT_EQ(f.by_batch.size(), 3u);
  const auto line_s = [&](const KernelSample& s) {
    for (const BatchRateFit& b : f.by_batch) {
      if (b.batch == s.batch) return b.overhead_s + s.bytes / b.bytes_per_s;
    }
    ADD_FAILURE() << s.batch;
    return 0.0;
  };
  // The synthetic samples are rows x 4096 (rows 1024, 4096, 14336), batches 1, 4, 16; the
  // thread-1 and cache-resident samples (4096 x 4096, batch 1) are not fitted, so they add no
  // entries.
  ASSERT_EQ(ratios.size(), 3u);
  for (const KernelSample& s : p.kernels) {
    if (s.op != "matmul" || s.threads != 2 || s.cache_resident || &s == &p.kernels.back()) continue;
    const std::vector<ShapeRatio>& table = ratios.at(MatmulShapeKey{"bf16", s.rows, s.cols});
    ASSERT_EQ(table.size(), 3u);
    EXPECT_EQ(table[0].tokens, 1);
    EXPECT_EQ(table[2].tokens, 16);
    const auto it = std::find_if(table.begin(), table.end(),
                                 [&](const ShapeRatio& r) { return r.tokens == s.batch; });
    ASSERT_NE(it, table.end());
    if (s.rows == 1024 && s.batch == 4) {
      EXPECT_NEAR(it->ratio, (first_median_s + 1.1 * first_median_s) / 2 / line_s(s), 1e-12);
    } else {
      EXPECT_NEAR(it->ratio, s.median_s / line_s(s), 1e-12);
    }
  }
  // The predictor's efficiency carries them, also when transferred to another CPU.
  EXPECT_EQ(calibrated_efficiency(p).calibrated->linear_shapes, ratios);
  HardwareSpec target;
  target.id = "big-cpu";
  target.kind = DeviceKind::kCpu;
  target.num_cores = 64;
  target.peak_memory_bandwidth_bytes_per_s = 400e9;
  EXPECT_EQ(transfer_efficiency(p, target).calibrated->linear_shapes, ratios);
  // With the min statistic the ratio is over the fastest runs.
  CalibrationProfile q = synthetic_profile();
  q.fit = fit_calibration(q.kernels, 0, 0, false, FitStatistic::kMin);
  const KernelSample& s0 = q.kernels.front();
  const auto& b0 = q.fit.matmul.at("bf16").by_batch.front();
  ASSERT_EQ(s0.batch, b0.batch);
  EXPECT_NEAR(measured_shape_ratios(q).at(MatmulShapeKey{"bf16", s0.rows, s0.cols}).front().ratio,
              s0.min_s / (b0.overhead_s + s0.bytes / b0.bytes_per_s), 1e-12);
}

TEST(CalibratedPredictor, AShapeMeasuredAtABatchWithoutItsOwnLineIsPredictedAsMeasured) {
  // The fit has per-batch lines at 1, 4 and 16 only. Samples of tiny_model's output
  // projection (1024 x 1024) at 8 (between lines) and 32 (past the last) are then added, as `llmcap
  // validate` adds the kernels it re-times: their ratios are taken against the time the
  // predictor itself fits at that batch (the two lines around it, interpolated; the last line
  // scaled), so the predictor gives back the measured times.
  CalibrationProfile p = synthetic_profile();
  ASSERT_EQ(p.fit.matmul.at("bf16").by_batch.back().batch, 16);
  const std::map<int64_t, double> measured_s = {{8, 150e-6}, {32, 420e-6}};
  for (const auto& [batch, seconds] : measured_s) {
    const double rows = 1024, cols = 1024;
    const double bytes = rows * cols * 2 + 4.0 * batch * (rows + cols);
    p.kernels.push_back(sample("matmul", "bf16", bytes, 2 * rows * cols * batch, seconds));
    p.kernels.back().rows = 1024;
    p.kernels.back().cols = 1024;
    p.kernels.back().batch = batch;
  }
  const Efficiency e = calibrated_efficiency(p);
  const RooflinePredictor predictor(tiny_model(), WeightFormat::kBf16, KvFormat::kBf16,
                                    cpu_deployment(), e);
  constexpr double kRounding = 1e-12;  // seconds
  for (const auto& [batch, seconds] : measured_s) {
    BatchShape b;
    b.num_decode_seqs = batch;
    b.num_decode_context_tokens = batch * 100;
    double out_s = -1;
    for (const OpTime& op : predictor.breakdown(b)) {
      if (op.op == "out_proj") out_s = op.time_s;
    }
    EXPECT_NEAR(out_s, seconds, kRounding) << "batch " << batch;
  }
}

TEST(CalibratedPredictor, AMeasuredAttentionLayoutScalesByContextPerSequence) {
  const ModelSpec m = tiny_model();  // 8 query heads, 2 KV heads x 128
  const Efficiency plain = round_calibrated_efficiency();
  Efficiency e = plain;
  e.calibrated->attention_shapes[{"bf16", 256, 8}] = {{128, 2.0}, {1024, 1.0}};
  e.calibrated->attention_shapes[{"f32", 256, 8}] = {{128, 5.0}};  // another KV type: not used
  const RooflinePredictor with(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), e);
  const RooflinePredictor without(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), plain);
  const auto attention_s = [](const RooflinePredictor& p, int64_t seqs, int64_t context) {
    BatchShape b;
    b.num_decode_seqs = seqs;
    b.num_decode_context_tokens = seqs * context;
    for (const OpTime& t : p.breakdown(b)) {
      if (t.op == "attention") return t.time_s;
    }
    ADD_FAILURE();
    return 0.0;
  };
  constexpr double kExact = 1e-12;  // relative
  // Mean context 100 (below the first measured 128): 2.0; 576, halfway: 1.5; 4096: 1.0.
  EXPECT_NEAR(attention_s(with, 4, 100) / attention_s(without, 4, 100), 2.0, kExact);
  EXPECT_NEAR(attention_s(with, 4, 576) / attention_s(without, 4, 576), 1.5, kExact);
  EXPECT_NEAR(attention_s(with, 2, 4096) / attention_s(without, 2, 4096), 1.0, kExact);
}

TEST(CalibratedEfficiency, MeasuredAttentionRatiosAreTimeOverTheFitByContext) {
  const CalibrationProfile p = synthetic_profile();
  const auto ratios = measured_attention_ratios(p);
  const RateFit& f = p.fit.attention.at("bf16");
  // Two layouts: 32/8 x 128 (kv_dim 1024) and 16/2 x 64 (kv_dim 128), four contexts each.
  ASSERT_EQ(ratios.size(), 2u);
  for (const KernelSample& s : p.kernels) {
    if (s.op != "attention") continue;
    const std::vector<ShapeRatio>& table = ratios.at(AttentionShapeKey{"bf16", s.rows, s.batch});
    ASSERT_EQ(table.size(), 4u);
    const auto it = std::find_if(table.begin(), table.end(), [&](const ShapeRatio& r) {
      return r.tokens == static_cast<double>(s.cols);
    });
    ASSERT_NE(it, table.end());
    const double fitted_s = f.overhead_s + (f.bytes_per_s > 0 ? s.bytes / f.bytes_per_s : 0) +
                            (f.flops_per_s > 0 ? s.flops / f.flops_per_s : 0);
    EXPECT_NEAR(it->ratio, s.median_s / fitted_s, 1e-12);
  }
  EXPECT_EQ(calibrated_efficiency(p).calibrated->attention_shapes, ratios);
}

TEST(CalibratedEfficiency, SpreadAttentionSamplesGiveTheirOwnRatiosAgainstTheSameFit) {
  CalibrationProfile p = synthetic_profile();
  const auto alone = measured_attention_ratios(p);
  EXPECT_TRUE(measured_attention_ratios(p, "attention_spread").empty());
  // The same cells timed spread over the threads, twice as slow per call.
  std::vector<KernelSample> spread;
  for (const KernelSample& s : p.kernels) {
    if (s.op != "attention") continue;
    KernelSample k = s;
    k.op = "attention_spread";
    k.median_s *= 2;
    k.min_s *= 2;
    spread.push_back(k);
  }
  p.kernels.insert(p.kernels.end(), spread.begin(), spread.end());
  const auto ratios = measured_attention_ratios(p, "attention_spread");
  ASSERT_EQ(ratios.size(), alone.size());
  for (const auto& [key, table] : alone) {
    const std::vector<ShapeRatio>& twice = ratios.at(key);
    ASSERT_EQ(twice.size(), table.size());
    for (std::size_t i = 0; i < table.size(); ++i) {
      EXPECT_EQ(twice[i].tokens, table[i].tokens);
      EXPECT_NEAR(twice[i].ratio, 2 * table[i].ratio, 1e-12);
    }
  }
  // The fit and the ratios of calls alone ignore the spread samples.
  EXPECT_EQ(measured_attention_ratios(p), alone);
  const Efficiency e = calibrated_efficiency(p);
  EXPECT_EQ(e.calibrated->attention_shapes, alone);
  EXPECT_EQ(e.calibrated->attention_spread_shapes, ratios);
}

TEST(CalibratedEfficiency, FromTheProfileOfThisMachine) {
  const CalibrationProfile p = synthetic_profile();
  const Efficiency e = calibrated_efficiency(p);
  ASSERT_TRUE(e.calibrated.has_value());
  const auto& r = e.calibrated->linear.at("bf16");
  EXPECT_DOUBLE_EQ(r.bytes_per_s, p.fit.matmul.at("bf16").bytes_per_s);
  EXPECT_DOUBLE_EQ(r.overhead_s, p.fit.matmul.at("bf16").overhead_s);
  EXPECT_DOUBLE_EQ(e.calibrated->attention.at("bf16").bytes_per_s,
                   p.fit.attention.at("bf16").bytes_per_s);
  EXPECT_DOUBLE_EQ(e.calibrated->attention.at("bf16").flops_per_s,
                   p.fit.attention.at("bf16").flops_per_s);
  EXPECT_DOUBLE_EQ(e.calibrated->stream_bytes_per_s, 40e9);  // read bandwidth at 2 threads
  EXPECT_DOUBLE_EQ(e.calibrated->threads, 2);
  EXPECT_DOUBLE_EQ(e.step_overhead_s, default_efficiency(DeviceKind::kCpu).step_overhead_s);
  CalibrationProfile empty = p;
  empty.fit.matmul.clear();
  EXPECT_THROW(calibrated_efficiency(empty), InputError);
}

TEST(CalibratedEfficiency, TransferScalesBandwidthAndComputeByTheStatedRule) {
  CalibrationProfile p = synthetic_profile();
  // Round numbers: measured read 40 GB/s at 2 threads; bf16 fitted at 20 GB/s (so half of each
  // byte's time is memory, half CPU work), 100 GFLOP/s, 10 us.
  p.fit.matmul.clear();
  p.fit.matmul["bf16"] = RateFit{10e-6, 20e9, 100e9, 9, 0.01, 0.02, {}, 0, 0};
  p.fit.attention["bf16"] = RateFit{5e-6, 40e9, 50e9, 4, 0.01, 0.02, {}, 0, 0};
  HardwareSpec target;
  target.id = "big-cpu";
  target.kind = DeviceKind::kCpu;
  target.num_cores = 64;
  target.peak_memory_bandwidth_bytes_per_s = 400e9;
  const Efficiency e = transfer_efficiency(p, target, 0.5);
  // bw_ratio = 400e9 x 0.5 x 0.7 / 40e9 = 3.5; compute_ratio = 64 x 0.5 / 2 = 16.
  const auto& r = e.calibrated->linear.at("bf16");
  const double memory_s = 1 / 40e9, cpu_s = 1 / 20e9 - 1 / 40e9;
  EXPECT_NEAR(r.bytes_per_s, 1 / (memory_s / 3.5 + cpu_s / 16), 1.0);
  EXPECT_DOUBLE_EQ(r.flops_per_s, 100e9 * 16);
  EXPECT_DOUBLE_EQ(r.overhead_s, 10e-6);
  // Attention at the measured read bandwidth: all memory, scales with bandwidth only.
  EXPECT_NEAR(e.calibrated->attention.at("bf16").bytes_per_s, 40e9 * 3.5, 1.0);
  EXPECT_DOUBLE_EQ(e.calibrated->attention.at("bf16").flops_per_s, 50e9 * 16);
  EXPECT_NEAR(e.calibrated->stream_bytes_per_s, 40e9 * 3.5, 1.0);
  EXPECT_DOUBLE_EQ(e.calibrated->threads, 32);  // 64 cores x 0.5
  EXPECT_THAT(e.calibrated->source, HasSubstr("big-cpu"));

  HardwareSpec gpu = target;
  gpu.kind = DeviceKind::kGpu;
  EXPECT_THROW(transfer_efficiency(p, gpu), InputError);
  EXPECT_THROW(transfer_efficiency(p, target, 0.0), InputError);
  EXPECT_THROW(transfer_efficiency(p, target, 1.5), InputError);
}

TEST(CalibrationFit, MinStatisticFitsTheFastestTimes) {
  // Every sample's fastest run at exactly half its median: the minimum-time fit streams at
  // twice the bytes per second of the median fit, with half its overhead.
  std::vector<KernelSample> s;
  for (const double weights : {8e6, 32e6, 128e6}) {
    s.push_back(sample("matmul", "int8", weights, 0, 10e-6 + weights / 20e9));
    s.back().min_s = s.back().median_s / 2;
  }
  const CalibrationFit median = fit_calibration(s);
  const CalibrationFit fastest = fit_calibration(s, 0, 0, false, FitStatistic::kMin);
  EXPECT_EQ(median.statistic, FitStatistic::kMedian);
  EXPECT_EQ(fastest.statistic, FitStatistic::kMin);
  constexpr double kRelTolerance = 1e-9;
  EXPECT_NEAR(median.matmul.at("int8").bytes_per_s, 20e9, 20e9 * kRelTolerance);
  EXPECT_NEAR(fastest.matmul.at("int8").bytes_per_s, 40e9, 40e9 * kRelTolerance);
  EXPECT_NEAR(fastest.matmul.at("int8").overhead_s, 5e-6, 5e-6 * kRelTolerance);
}

TEST(CalibrationFit, RefitKeepsTheProfilesSettingsAndChangesOnlyTheStatistic) {
  CalibrationProfile p = synthetic_profile();
  // Fitted with the cache-resident sample (a test sweep's choice): the refit must keep it.
  p.fit = fit_calibration(p.kernels, 2, 0, /*include_cache_resident=*/true);
  const CalibrationFit again = refit_calibration(p, FitStatistic::kMedian);
  EXPECT_TRUE(again.cache_resident_fitted);
  EXPECT_EQ(again.matmul.at("bf16").num_samples, p.fit.matmul.at("bf16").num_samples);
  EXPECT_DOUBLE_EQ(again.matmul.at("bf16").bytes_per_s, p.fit.matmul.at("bf16").bytes_per_s);
  // synthetic samples: min_s = 0.95 median_s, so the min fit is 1 / 0.95 faster per byte.
  const CalibrationFit fastest = refit_calibration(p, FitStatistic::kMin);
  EXPECT_EQ(fastest.statistic, FitStatistic::kMin);
  EXPECT_NEAR(fastest.matmul.at("bf16").bytes_per_s * 0.95, p.fit.matmul.at("bf16").bytes_per_s,
              1e-6 * p.fit.matmul.at("bf16").bytes_per_s);
}

TEST(CalibrationJson, FitStatisticRoundTripsAndABadOneIsNamed) {
  CalibrationProfile p = synthetic_profile();
  p.fit = refit_calibration(p, FitStatistic::kMin);
  const std::string text = profile_to_json(p);
  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc.at("fit").at("statistic"), "min");
  EXPECT_EQ(doc.at("fit").at("model"),
            "min_s = overhead_s + bytes / bytes_per_s + flops / flops_per_s");
  EXPECT_EQ(profile_from_json(text, "p.json").fit.statistic, FitStatistic::kMin);
  // Profiles written before the field existed were fitted on the median.
  auto old = doc;
  old["fit"].erase("statistic");
  old["fit"].erase("cache_resident_fitted");
  EXPECT_EQ(profile_from_json(old.dump(), "p.json").fit.statistic, FitStatistic::kMedian);
  auto bad = doc;
  bad["fit"]["statistic"] = "mean";
  try {
    profile_from_json(bad.dump(), "p.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("p.json: field \"fit.statistic\": expected \"median\" or "
                                    "\"min\", got \"mean\""));
  }
}

}  // namespace
}  // namespace llmcap::model
