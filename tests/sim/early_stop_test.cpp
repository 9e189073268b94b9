// SimOptions::stop_at_certain_p99_miss: a run stops exactly when a p99 bound is certain to be
// missed, never when it is met, and then says why.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "sim/metrics.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace llmcap::sim {
namespace {

using ::testing::HasSubstr;

/// Step time grows with the batch's new tokens, so queueing builds up under load.
class LinearPredictor : public model::StepTimePredictor {
 public:
  double step_time_s(const model::BatchShape& batch) const override {
    return 0.004 + 2e-5 * static_cast<double>(batch.num_new_tokens());
  }
};

/// A busy two-replica fleet fed 1,500 Poisson requests: TTFT and TPOT spread widely.
struct Fixture {
  Workload workload;
  FleetConfig fleet;
  LinearPredictor predictor;
  SimResult full;
  Metrics full_metrics;

  Fixture() {
    workload.open_loop = poisson_arrivals(
        12.0, 1500, {{50, 20}, {400, 120}, {1200, 300}, {30, 500}, {2000, 8}, {700, 1}}, 7);
    fleet.num_replicas = 2;
    fleet.serving.block_size_tokens = 16;
    fleet.serving.num_kv_blocks = 600;
    fleet.serving.max_num_seqs = 16;
    fleet.serving.max_num_batched_tokens = 2048;
    full = simulate(workload, fleet, predictor, 3);
    full_metrics = compute_metrics(full, Slo{1e9, 1e9});
  }

  SimResult run(double ttft_bound_s, double tpot_bound_s) const {
    SimOptions options;
    options.stop_at_certain_p99_miss = P99Bounds{{ttft_bound_s}, {tpot_bound_s}};
    return simulate(workload, fleet, predictor, 3, options);
  }
};

/// Values above `bound_s` among the requests that have their first token (TTFT) or have
/// completed (TPOT, >= 2 output tokens) by the end of `r`.
int64_t count_above(const SimResult& r, double bound_s, bool tpot) {
  int64_t n = 0;
  for (const RequestRecord& x : r.requests) {
    if (x.rejected) continue;
    if (!tpot && x.first_token > x.arrival) {
      n += (x.first_token - x.arrival).seconds() > bound_s;
    }
    if (tpot && x.num_output_tokens >= 2 && x.completion > x.first_token) {
      n += (x.completion - x.first_token).seconds() / static_cast<double>(x.num_output_tokens - 1) >
           bound_s;
    }
  }
  return n;
}

/// n - ceil(0.99 n) + 1: values above a bound that put the nearest-rank p99 above it.
int64_t misses_to_fail(int64_t n) { return n - std::max<int64_t>(1, (99 * n + 99) / 100) + 1; }

TEST(EarlyStop, BoundsAtTheFullRunsP99RunToTheEndUnchanged) {
  const Fixture f;
  ASSERT_GT(f.full_metrics.ttft.p99_s, f.full_metrics.ttft.p50_s);
  const SimResult r = f.run(f.full_metrics.ttft.p99_s, f.full_metrics.tpot.p99_s);
  EXPECT_FALSE(r.stopped_early);
  EXPECT_EQ(r.stop_reason, "");
  ASSERT_EQ(r.requests.size(), f.full.requests.size());
  for (size_t i = 0; i < r.requests.size(); ++i) {
    ASSERT_EQ(r.requests[i].first_token, f.full.requests[i].first_token) << i;
    ASSERT_EQ(r.requests[i].completion, f.full.requests[i].completion) << i;
  }
  EXPECT_EQ(r.itl_ns, f.full.itl_ns);
  EXPECT_EQ(r.end_time, f.full.end_time);
  EXPECT_EQ(r.num_steps, f.full.num_steps);
}

TEST(EarlyStop, StopsAtTheTtftMissThatMakesTheP99MissCertain) {
  const Fixture f;
  // Just below the full run's p99: the full run misses it, by a few requests only.
  const double bound_s = std::nextafter(f.full_metrics.ttft.p99_s, 0.0);
  const SimResult r = f.run(bound_s, 1e9);
  ASSERT_TRUE(r.stopped_early);
  EXPECT_LT(r.end_time, f.full.end_time);
  EXPECT_LT(r.num_steps, f.full.num_steps);
  const auto n = static_cast<int64_t>(f.workload.open_loop.size());
  EXPECT_EQ(count_above(r, bound_s, false), misses_to_fail(n));  // not one more, not one less
  EXPECT_THAT(r.stop_reason, HasSubstr("stopped at simulated time"));
  EXPECT_THAT(r.stop_reason, HasSubstr(std::to_string(misses_to_fail(n)) + " of the " +
                                       std::to_string(n) + " TTFT values of client class 0"));
  // compute_metrics refuses the incomplete records.
  try {
    (void)compute_metrics(r, Slo{bound_s, 1e9});
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("compute_metrics: the run stopped early"));
    EXPECT_THAT(e.what(), HasSubstr("TTFT values of client class 0"));
  }
}

TEST(EarlyStop, StopsAtTheTpotMissThatMakesTheP99MissCertain) {
  const Fixture f;
  const double bound_s = std::nextafter(f.full_metrics.tpot.p99_s, 0.0);
  const SimResult r = f.run(1e9, bound_s);
  ASSERT_TRUE(r.stopped_early);
  EXPECT_LT(r.end_time, f.full.end_time);
  int64_t n = 0;
  for (const RequestSpec& s : f.workload.open_loop) n += s.num_output_tokens >= 2;
  EXPECT_EQ(count_above(r, bound_s, true), misses_to_fail(n));
  EXPECT_THAT(r.stop_reason, HasSubstr(" TPOT values of client class 0"));
}

TEST(EarlyStop, ARejectedRequestStopsTheRun) {
  Workload w;
  // 10 blocks of 16 tokens: the second request (150 + 11 tokens) fits nowhere.
  w.open_loop = {RequestSpec{SimTime::MilliSeconds(0), 20, 5},
                 RequestSpec{SimTime::MilliSeconds(3), 150, 11},
                 RequestSpec{SimTime::MilliSeconds(9), 20, 5}};
  FleetConfig fleet;
  fleet.num_replicas = 1;
  fleet.serving.block_size_tokens = 16;
  fleet.serving.num_kv_blocks = 10;
  const LinearPredictor predictor;
  SimOptions options;
  options.stop_at_certain_p99_miss = P99Bounds{{1e9}, {1e9}};
  const SimResult r = simulate(w, fleet, predictor, 1, options);
  ASSERT_TRUE(r.stopped_early);
  EXPECT_EQ(r.end_time, SimTime::MilliSeconds(3));
  EXPECT_THAT(r.stop_reason, HasSubstr("request 1 was rejected"));
  EXPECT_FALSE(simulate(w, fleet, predictor, 1).stopped_early);  // not armed: runs on
}

TEST(EarlyStop, OnlyTheClassesGivenBoundsAreWatched) {
  Fixture f;
  for (size_t i = 0; i < f.workload.open_loop.size(); ++i) {
    f.workload.open_loop[i].client_class = static_cast<int32_t>(i % 2);
  }
  SimOptions options;
  options.stop_at_certain_p99_miss = P99Bounds{{1e9}, {1e9}};  // class 0 only, never missed
  const SimResult loose = simulate(f.workload, f.fleet, f.predictor, 3, options);
  EXPECT_FALSE(loose.stopped_early);
  options.stop_at_certain_p99_miss = P99Bounds{{1e9, 1e-6}, {1e9, 1e9}};  // class 1: tight TTFT
  const SimResult tight = simulate(f.workload, f.fleet, f.predictor, 3, options);
  ASSERT_TRUE(tight.stopped_early);
  EXPECT_THAT(tight.stop_reason, HasSubstr("TTFT values of client class 1"));
}

TEST(EarlyStop, ClosedLoopRunsToTheEnd) {
  Workload w;
  w.closed_loop = ClosedLoopWorkload{
      .num_users = 8, .think_time_s = 0.2, .duration_s = 20, .lengths = {{200, 40}, {900, 120}}};
  FleetConfig fleet;
  fleet.num_replicas = 1;
  fleet.serving.block_size_tokens = 16;
  fleet.serving.num_kv_blocks = 400;
  const LinearPredictor predictor;
  SimOptions options;
  options.stop_at_certain_p99_miss = P99Bounds{{1e-6}, {1e-6}};
  const SimResult r = simulate(w, fleet, predictor, 5, options);
  EXPECT_FALSE(r.stopped_early);
  EXPECT_GT(r.requests.size(), 10u);
}

TEST(EarlyStop, CancelStopsTheRunAtItsNextPoll) {
  const Fixture f;
  int polls = 0;
  SimOptions options;
  options.cancel = [&polls] { return ++polls == 2; };  // "no" at the first poll, "yes" next
  const SimResult r = simulate(f.workload, f.fleet, f.predictor, 3, options);
  EXPECT_EQ(polls, 2);
  EXPECT_TRUE(r.cancelled);
  EXPECT_TRUE(r.stopped_early);
  EXPECT_THAT(r.stop_reason, HasSubstr("cancelled at simulated time"));
  EXPECT_LT(r.end_time, f.full.end_time);
  EXPECT_LT(r.num_steps, f.full.num_steps);
  // A hook that never says yes changes nothing.
  options.cancel = [] { return false; };
  const SimResult never = simulate(f.workload, f.fleet, f.predictor, 3, options);
  EXPECT_FALSE(never.cancelled);
  EXPECT_EQ(never.end_time, f.full.end_time);
  EXPECT_EQ(never.itl_ns, f.full.itl_ns);
}

}  // namespace
}  // namespace llmcap::sim
