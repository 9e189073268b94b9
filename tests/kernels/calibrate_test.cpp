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

}  // namespace
}  // namespace llmcap::kernels
