#include "model/calibrated_predictor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "model/input_error.h"
#include "model/model_spec.h"
#include "model/roofline.h"
#include "predictor_fixtures.h"

namespace llmcap::model {
namespace {

using ::testing::HasSubstr;

using testing::cpu_deployment;
using testing::tiny_model;

/// CPU defaults with calibrated bf16 products (per-batch lines too), attention, streaming and
/// activation rates, and a measured attention layout.
Efficiency calibrated() {
  Efficiency e = default_efficiency(DeviceKind::kCpu);
  CalibratedEfficiency cal;
  cal.linear["bf16"] = {10e-6, 40e9, 100e9, {{1, 2e-6, 50e9}, {16, 4e-6, 20e9}}};
  cal.attention["bf16"] = {5e-6, 20e9, 50e9, {}};
  cal.attention_shapes[{"bf16", 256, 8}] = {{64, 1.2}, {1024, 0.9}};
  cal.stream_bytes_per_s = 50e9;
  cal.threads = 4;
  cal.activation_s_per_element = 1e-9;
  cal.source = "measured on \"test CPU\"";
  e.calibrated = cal;
  return e;
}

std::vector<BatchShape> batches() {
  std::vector<BatchShape> out;
  for (const int64_t seqs : {1, 3, 4, 9, 64}) {
    BatchShape b;
    b.num_decode_seqs = seqs;
    b.num_decode_context_tokens = seqs * 700;
    out.push_back(b);
  }
  BatchShape prefill;
  prefill.num_prefill_seqs = 2;
  prefill.num_prefill_tokens = 300;
  prefill.num_prefill_attention_pairs = 150 * 151;
  prefill.num_prefill_cached_tokens = 64;
  prefill.num_prefill_seqs_completing = 1;
  prefill.num_decode_seqs = 5;
  prefill.num_decode_context_tokens = 5 * 90;
  out.push_back(prefill);
  out.push_back(BatchShape{});
  return out;
}

TEST(CalibratedPredictor, TimesAreExactlyThoseOfTheRooflineWithTheSameRates) {
  const ModelSpec m = tiny_model();
  const Efficiency e = calibrated();
  const CalibratedPredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), e);
  const RooflinePredictor r(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(), e);
  for (const BatchShape& b : batches()) {
    EXPECT_EQ(p.step_time_s(b), r.step_time_s(b)) << b.num_decode_seqs;
    const std::vector<OpTime> pb = p.breakdown(b);
    const std::vector<OpTime> rb = r.breakdown(b);
    ASSERT_EQ(pb.size(), rb.size());
    for (std::size_t i = 0; i < pb.size(); ++i) {
      EXPECT_EQ(pb[i].op, rb[i].op);
      EXPECT_EQ(pb[i].time_s, rb[i].time_s) << pb[i].op;
      EXPECT_EQ(pb[i].bytes, rb[i].bytes) << pb[i].op;
    }
  }
}

TEST(CalibratedPredictor, PricesARunOfDecodeStepsExactlyAsEachStepAlone) {
  const CalibratedPredictor p(tiny_model(), WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(),
                              calibrated());
  // Fewer sequences than threads, as many, more (the calibrated attention's three regimes).
  for (const int64_t seqs : {1, 4, 9, 64}) {
    EXPECT_TRUE(testing::prices_each_step_alike(p, testing::decode_run(seqs, 40, 60)));
  }
}

TEST(CalibratedPredictor, SaysItsKindAndSource) {
  const CalibratedPredictor p(tiny_model(), WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(),
                              calibrated());
  EXPECT_EQ(p.kind(), PredictorKind::kCalibrated);
  EXPECT_EQ(p.source(), "measured on \"test CPU\"");
  const StepTimePredictor& door = p;
  EXPECT_EQ(door.kind(), PredictorKind::kCalibrated);
}

TEST(CalibratedPredictor, DatasheetDefaultsAreAnInputError) {
  try {
    CalibratedPredictor(tiny_model(), WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(),
                        default_efficiency(DeviceKind::kCpu));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected an efficiency with calibrated rates"));
  }
}

TEST(MakeStepTimePredictor, PicksTheCalibratedPredictorWhenTheEfficiencyHasRates) {
  const ModelSpec m = tiny_model();
  const auto roofline =
      make_step_time_predictor(m, WeightFormat::kBf16, KvFormat::kBf16, cpu_deployment(),
                               default_efficiency(DeviceKind::kCpu));
  EXPECT_EQ(roofline->kind(), PredictorKind::kRoofline);
  EXPECT_NE(dynamic_cast<const RooflinePredictor*>(roofline.get()), nullptr);
  const auto cal = make_step_time_predictor(m, WeightFormat::kBf16, KvFormat::kBf16,
                                            cpu_deployment(), calibrated());
  EXPECT_EQ(cal->kind(), PredictorKind::kCalibrated);
  EXPECT_NE(dynamic_cast<const CalibratedPredictor*>(cal.get()), nullptr);
}

TEST(RooflinePredictor, ReportsTheCalibratedKindWhenBuiltWithRates) {
  // The older way (cli/ still builds the calibrated predictor so): the kind stays truthful.
  const RooflinePredictor plain(tiny_model(), WeightFormat::kBf16, KvFormat::kBf16,
                                cpu_deployment(), default_efficiency(DeviceKind::kCpu));
  EXPECT_EQ(plain.kind(), PredictorKind::kRoofline);
  const RooflinePredictor rated(tiny_model(), WeightFormat::kBf16, KvFormat::kBf16,
                                cpu_deployment(), calibrated());
  EXPECT_EQ(rated.kind(), PredictorKind::kCalibrated);
}

}  // namespace
}  // namespace llmcap::model
