#include "kernels/harness.h"

#include <gtest/gtest.h>

#include <chrono>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

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
  // Each run sleeps >= 1 ms and measures itself, so the stopping rule is checked against what
  // the runs took, however busy the machine (a sleep of 1 ms may last several): the harness
  // stops at the first run that brings the total to 10 ms.
  std::vector<double> run_s;
  const Timing t = time_kernel(
      [&run_s] {
        const auto start = std::chrono::steady_clock::now();
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        run_s.push_back(
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      },
      0, 2, 0.010, 1000);
  ASSERT_EQ(t.num_runs, static_cast<int64_t>(run_s.size()));
  EXPECT_GE(t.num_runs, 2);
  EXPECT_LE(t.num_runs, 11);  // >= 1 ms each: 10 reach 10 ms
  const double before_last_s = std::accumulate(run_s.begin(), run_s.end() - 1, 0.0);
  const double all_s = before_last_s + run_s.back();
  // It did not run past the threshold (unless the two runs min_runs asks for did).
  if (t.num_runs > 2) EXPECT_LT(before_last_s, 0.010);
  constexpr double kOverheadToleranceS = 0.001;   // the harness's own timing around each call
  EXPECT_GT(all_s, 0.010 - kOverheadToleranceS);  // nor stop before it
  EXPECT_GE(t.median_s, 0.001);
  const Timing capped = time_kernel([] {}, 0, 1, 10.0, 3);
  EXPECT_EQ(capped.num_runs, 3);
}

Timing timing(double min_s, double median_s) {
  Timing t;
  t.min_s = min_s;
  t.median_s = median_s;
  t.num_runs = 5;
  return t;
}

TEST(RepeatedTiming, MedianOfTheRepetitionsAndTheFastestRunOfAll) {
  RepeatedTiming c;
  EXPECT_EQ(c.median_s(), 0.0);
  c.add(timing(2.0, 3.0));
  c.add(timing(1.0, 9.0));
  EXPECT_EQ(c.min_s, 1.0);
  EXPECT_EQ(c.median_s(), 6.0);  // two: the mean of the middle pair
  c.add(timing(1.5, 4.0));
  EXPECT_EQ(c.median_s(), 4.0);
}

TEST(RemeasureContended, OnlyCellsWhoseMedianIsFarAboveTheirFastestRunAreTimedAgain) {
  // Cell 0 quiet (median 1.2 x fastest), cell 1 timed in a burst in two of three repetitions
  // (10x): it is timed again until the quiet repetitions are the median.
  RepeatedTiming quiet, burst;
  for (const Timing& t : {timing(1.0, 1.2), timing(1.0, 1.1), timing(1.0, 1.2)}) quiet.add(t);
  for (const Timing& t : {timing(1.0, 10.0), timing(1.0, 1.1), timing(1.0, 12.0)}) burst.add(t);
  std::vector<std::size_t> calls;
  const int extra = remeasure_contended({&quiet, &burst}, [&](std::size_t i) {
    calls.push_back(i);
    return timing(1.0, 1.15);
  });
  EXPECT_EQ(extra, 2);
  EXPECT_EQ(calls, (std::vector<std::size_t>{1, 1}));
  EXPECT_EQ(quiet.medians.size(), 3u);
  EXPECT_EQ(burst.medians.size(), 5u);
  EXPECT_DOUBLE_EQ(burst.median_s(), 1.15);
}

TEST(RemeasureContended, StopsAfterMaxExtraEvenIfTheBurstLasts) {
  RepeatedTiming c;
  c.add(timing(1.0, 20.0));
  int calls = 0;
  const int extra = remeasure_contended(
      {&c},
      [&](std::size_t) {
        ++calls;
        return timing(1.0, 30.0);
      },
      kContendedRatio, 2);
  EXPECT_EQ(extra, 2);
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(c.medians.size(), 3u);
  EXPECT_GT(c.median_s(), kContendedRatio * c.min_s);  // left as measured
}

TEST(TimeKernel, RejectsBadCounts) {
  EXPECT_THROW(time_kernel([] {}, 0, 0), std::invalid_argument);
  EXPECT_THROW(time_kernel([] {}, 0, 5, 0.0, 4), std::invalid_argument);
}

}  // namespace
}  // namespace llmcap::kernels
