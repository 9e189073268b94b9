#include "kernels/calibrate.h"

#include <gtest/gtest.h>

#include <set>
#include <stdexcept>

namespace llmcap::kernels {
namespace {

TEST(RunCalibration, TestSweepTimesEveryKernelAndFormatWithConsistentRates) {
  CalibrationOptions o;
  o.size = SweepSize::kTest;
  o.max_threads = 1;
  int progress_lines = 0;
  o.progress = [&](const std::string&) { ++progress_lines; };
  const CalibrationRun run = run_calibration(o);
  EXPECT_EQ(run.sweep, "test");
  EXPECT_EQ(run.max_threads, 1);
  EXPECT_GT(progress_lines, 0);
  EXPECT_EQ(run.machine.read_bandwidth_bytes_per_s.count(1), 1u);
  std::set<std::string> matmul_formats, attention_formats, ops;
  for (const KernelSample& s : run.samples) {
    ops.insert(s.op);
    if (s.op == "matmul") matmul_formats.insert(s.format);
    if (s.op == "attention") attention_formats.insert(s.format);
    EXPECT_EQ(s.backend, "llmcap");
    EXPECT_EQ(s.threads, 1);
    EXPECT_GT(s.median_s, 0) << s.op << " " << s.format;
    EXPECT_LE(s.min_s, s.median_s);
    EXPECT_GT(s.bytes, 0);
    EXPECT_DOUBLE_EQ(s.bytes_per_s, s.bytes / s.median_s);
    EXPECT_DOUBLE_EQ(s.flops_per_s, s.flops / s.median_s);
    EXPECT_TRUE(s.cache_resident);
    if (s.op == "matmul") {
      EXPECT_DOUBLE_EQ(s.flops, 2.0 * s.rows * s.cols * s.batch);
      EXPECT_GE(s.bytes, s.rows * s.cols * 0.5625);
    }
  }
  EXPECT_EQ(ops, (std::set<std::string>{"matmul", "attention", "rms_norm", "swiglu"}));
  EXPECT_EQ(matmul_formats, (std::set<std::string>{"f32", "bf16", "int8", "int4"}));
  EXPECT_EQ(attention_formats, (std::set<std::string>{"f32", "bf16"}));
}

TEST(RunCalibration, RejectsNegativeThreads) {
  CalibrationOptions o;
  o.max_threads = -1;
  EXPECT_THROW(run_calibration(o), std::invalid_argument);
}

TEST(RunCalibration, PartsOfTheSweepRunAlone) {
  CalibrationOptions o;
  o.size = SweepSize::kTest;
  o.max_threads = 1;
  o.formats = {"int8"};
  o.kv_types = {"bf16"};
  o.bandwidth = false;
  o.elementwise = false;
  const CalibrationRun run = run_calibration(o);
  EXPECT_TRUE(run.machine.read_bandwidth_bytes_per_s.empty());
  std::set<std::string> kinds;
  for (const KernelSample& s : run.samples) kinds.insert(s.op + " " + s.format);
  EXPECT_EQ(kinds, (std::set<std::string>{"matmul int8", "attention bf16"}));
}

TEST(RunCalibration, UnknownFormatOrKvTypeIsNamed) {
  CalibrationOptions o;
  o.size = SweepSize::kTest;
  o.formats = {"int3"};
  try {
    run_calibration(o);
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "run_calibration: unknown weight format \"int3\"");
  }
  o.formats = {};
  o.kv_types = {"fp8"};
  EXPECT_THROW(run_calibration(o), std::invalid_argument);
}

CalibrationRun run_of(std::vector<std::pair<double, double>> min_and_median) {
  CalibrationRun r;
  r.seconds = 1;
  for (const auto& [min_s, median_s] : min_and_median) {
    KernelSample s;
    s.op = "matmul";
    s.format = "int8";
    s.rows = 64 + static_cast<int64_t>(r.samples.size());
    s.cols = 64;
    s.batch = 1;
    s.threads = 1;
    s.min_s = min_s;
    s.median_s = median_s;
    s.bytes = 1000;
    s.flops = 2000;
    r.samples.push_back(s);
  }
  return r;
}

TEST(MergeCalibrationRuns, MedianOfTheMediansAndTheLeastMinimum) {
  const CalibrationRun merged = merge_calibration_runs(
      {run_of({{1.0, 2.0}, {5.0, 6.0}}), run_of({{0.5, 4.0}, {5.0, 9.0}}),
       run_of({{2.0, 3.0}, {4.0, 5.0}})});
  ASSERT_EQ(merged.samples.size(), 2u);
  EXPECT_DOUBLE_EQ(merged.samples[0].median_s, 3.0);
  EXPECT_DOUBLE_EQ(merged.samples[0].min_s, 0.5);
  EXPECT_DOUBLE_EQ(merged.samples[0].bytes_per_s, 1000 / 3.0);
  EXPECT_DOUBLE_EQ(merged.samples[1].median_s, 6.0);
  EXPECT_DOUBLE_EQ(merged.samples[1].min_s, 4.0);
  EXPECT_DOUBLE_EQ(merged.seconds, 3.0);
}

TEST(MergeCalibrationRuns, RunsOfDifferentSweepsAreRefused) {
  EXPECT_THROW(merge_calibration_runs({}), std::invalid_argument);
  EXPECT_THROW(merge_calibration_runs({run_of({{1, 2}}), run_of({{1, 2}, {1, 2}})}),
               std::invalid_argument);
  CalibrationRun other = run_of({{1, 2}});
  other.samples[0].format = "int4";
  try {
    merge_calibration_runs({run_of({{1, 2}}), other});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "merge_calibration_runs: sample 0 differs between runs (matmul int4 64x64)");
  }
}

}  // namespace
}  // namespace llmcap::kernels
