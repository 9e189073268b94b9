#include "kernels/harness.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>

namespace llmcap::kernels {
namespace {

TEST(TimeKernel, RunsWarmupThenAtLeastMinRunsAndReportsMinAndMedian) {
  int calls = 0;
  const Timing t = time_kernel([&] { ++calls; }, /*warmup=*/3, /*min_runs=*/7, 0.0, 100);
  EXPECT_EQ(t.num_runs, 7);
  EXPECT_EQ(calls, 10);
  EXPECT_LE(t.min_s, t.median_s);
  EXPECT_GE(t.min_s, 0.0);
}

TEST(TimeKernel, KeepsRunningUntilMinTotalSecondsUpToMaxRuns) {
  const Timing t = time_kernel([] { std::this_thread::sleep_for(std::chrono::milliseconds(1)); },
                               0, 2, 0.010, 1000);
  EXPECT_GE(t.num_runs, 5);  // >= 10 ms of 1 ms sleeps (each at least 1 ms)
  EXPECT_LE(t.num_runs, 11);
  EXPECT_GE(t.median_s, 0.001);
  const Timing capped = time_kernel([] {}, 0, 1, 10.0, 3);
  EXPECT_EQ(capped.num_runs, 3);
}

TEST(TimeKernel, RejectsBadCounts) {
  EXPECT_THROW(time_kernel([] {}, 0, 0), std::invalid_argument);
  EXPECT_THROW(time_kernel([] {}, 0, 5, 0.0, 4), std::invalid_argument);
}

}  // namespace
}  // namespace llmcap::kernels
