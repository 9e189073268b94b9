#include "sim/metrics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "base/stats.h"
#include "sim/input_error.h"
#include "test_util.h"

namespace llmcap::sim {
namespace {

constexpr double kExact = 1e-12;  // only floating-point rounding

TEST(SummarizeValuesTest, NearestRankOnHandList) {
  // 1..10 shuffled. Nearest rank: p50 -> ceil(5) = 5th = 5; p90 -> ceil(9) = 9th = 9;
  // p99 -> ceil(9.9) = 10th = 10.
  const Distribution d = summarize_values({7, 3, 10, 1, 9, 2, 8, 4, 6, 5});
  EXPECT_EQ(d.count, 10);
  EXPECT_NEAR(d.mean_s, 5.5, kExact);
  EXPECT_EQ(d.p50_s, 5);
  EXPECT_EQ(d.p90_s, 9);
  EXPECT_EQ(d.p99_s, 10);
  EXPECT_EQ(d.max_s, 10);
}

TEST(SummarizeValuesTest, NearestRankEdgeCases) {
  // n = 100: p99 is the 99th value, not the 100th.
  std::vector<double> hundred;
  for (int i = 1; i <= 100; ++i) hundred.push_back(i);
  const Distribution d = summarize_values(hundred);
  EXPECT_EQ(d.p50_s, 50);
  EXPECT_EQ(d.p90_s, 90);
  EXPECT_EQ(d.p99_s, 99);
  EXPECT_EQ(d.max_s, 100);
  // n = 3: p50 -> ceil(1.5) = 2nd; p90 -> ceil(2.7) = 3rd.
  const Distribution three = summarize_values({30, 10, 20});
  EXPECT_EQ(three.p50_s, 20);
  EXPECT_EQ(three.p90_s, 30);
  // One value: every quantile is it. None: all zero.
  const Distribution one = summarize_values({4.5});
  EXPECT_EQ(one.p50_s, 4.5);
  EXPECT_EQ(one.p99_s, 4.5);
  const Distribution none = summarize_values({});
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(none.p99_s, 0);
  EXPECT_EQ(none.mean_s, 0);
}

RequestRecord make_record(int64_t id, double arrival_s, double scheduled_s, double first_s,
                          double completion_s, int64_t num_output_tokens) {
  RequestRecord r;
  r.id = id;
  r.replica = 0;
  r.arrival = SimTime::Seconds(arrival_s);
  r.first_scheduled = SimTime::Seconds(scheduled_s);
  r.first_token = SimTime::Seconds(first_s);
  r.completion = SimTime::Seconds(completion_s);
  r.num_prompt_tokens = 100;
  r.num_output_tokens = num_output_tokens;
  return r;
}

TEST(ComputeMetricsTest, HandMadeResult) {
  SimResult result;
  // A: arrives 0, scheduled 0.1, first token 0.5 (TTFT 0.5), 11 tokens done at 1.5:
  //    TPOT = (1.5 - 0.5) / 10 = 0.1.
  result.requests.push_back(make_record(0, 0.0, 0.1, 0.5, 1.5, 11));
  // B: arrives 1, first token 3 (TTFT 2), 3 tokens done at 4: TPOT = 1 / 2 = 0.5.
  result.requests.push_back(make_record(1, 1.0, 2.0, 3.0, 4.0, 3));
  // C: one output token: TTFT 0.25, no TPOT.
  result.requests.push_back(make_record(2, 2.0, 2.0, 2.25, 2.25, 1));
  // D: rejected at 5 (completion = arrival): no latencies, never meets the SLO.
  RequestRecord rejected = make_record(3, 5.0, 5.0, 5.0, 5.0, 7);
  rejected.rejected = true;
  rejected.replica = -1;
  result.requests.push_back(rejected);
  result.itl_ns = {100'000'000, 300'000'000, 200'000'000};
  result.num_preemptions = 2;
  result.num_rejected = 1;

  const Metrics m = compute_metrics(result, Slo{.ttft_s = 1.0, .tpot_s = 0.2});
  EXPECT_EQ(m.num_requests, 4);
  EXPECT_EQ(m.num_completed, 3);
  EXPECT_EQ(m.num_rejected, 1);
  EXPECT_EQ(m.num_preemptions, 2);
  // TTFT {0.5, 2, 0.25}: p50 = 2nd of sorted {0.25, 0.5, 2} = 0.5.
  EXPECT_EQ(m.ttft.count, 3);
  EXPECT_NEAR(m.ttft.mean_s, (0.5 + 2 + 0.25) / 3, kExact);
  EXPECT_NEAR(m.ttft.p50_s, 0.5, kExact);
  EXPECT_NEAR(m.ttft.max_s, 2.0, kExact);
  // TPOT only for output >= 2: {0.1, 0.5}.
  EXPECT_EQ(m.tpot.count, 2);
  EXPECT_NEAR(m.tpot.p50_s, 0.1, kExact);
  EXPECT_NEAR(m.tpot.max_s, 0.5, kExact);
  // ITL from itl_ns.
  EXPECT_EQ(m.itl.count, 3);
  EXPECT_NEAR(m.itl.p50_s, 0.2, kExact);
  EXPECT_NEAR(m.itl.mean_s, 0.2, kExact);
  // E2E {1.5, 3, 0.25}; queueing {0.1, 1, 0}.
  EXPECT_NEAR(m.e2e_latency.max_s, 3.0, kExact);
  EXPECT_NEAR(m.e2e_latency.p50_s, 1.5, kExact);
  EXPECT_NEAR(m.queueing_delay.mean_s, 1.1 / 3, kExact);
  EXPECT_NEAR(m.queueing_delay.p99_s, 1.0, kExact);
  // Duration: first arrival 0 to last completion 5 (the rejected one's, at its arrival).
  EXPECT_NEAR(m.duration_s, 5.0, kExact);
  EXPECT_NEAR(m.throughput_requests_per_s, 3 / 5.0, kExact);
  EXPECT_NEAR(m.throughput_output_tokens_per_s, (11 + 3 + 1) / 5.0, kExact);
  // SLO (TTFT <= 1, TPOT <= 0.2): A meets it, B fails both, C meets it (no TPOT), D rejected.
  EXPECT_NEAR(m.goodput_requests_per_s, 2 / 5.0, kExact);
  EXPECT_NEAR(m.slo_attainment, 2 / 4.0, kExact);

  // Bounds are inclusive: TTFT <= 2 and TPOT <= 0.5 admit B as well.
  const Metrics loose = compute_metrics(result, Slo{.ttft_s = 2.0, .tpot_s = 0.5});
  EXPECT_NEAR(loose.slo_attainment, 3 / 4.0, kExact);
  // A TTFT bound below every TTFT: nobody meets it.
  const Metrics strict = compute_metrics(result, Slo{.ttft_s = 0.1, .tpot_s = 10});
  EXPECT_EQ(strict.slo_attainment, 0);
  EXPECT_EQ(strict.goodput_requests_per_s, 0);
}

// The ITL summary selects through a histogram of the gaps instead of sorting a copy: on many
// gaps (repeated step times, a spread of others, a long tail, one gap per bucket edge case),
// its quantiles are still exactly the sorted nearest ranks.
TEST(ComputeMetricsTest, ItlQuantilesAreTheSortedNearestRanksOfManyGaps) {
  for (const int64_t tail_ns : {int64_t{0}, int64_t{3'000'000'000}, int64_t{1} << 50}) {
    SimResult result;
    result.requests.push_back(make_record(0, 0.0, 0.0, 0.5, 1.5, 11));
    uint64_t state = 12345;
    const auto next = [&state] {
      state = state * 6364136223846793005ULL + 1442695040888963407ULL;
      return state >> 33;
    };
    for (int i = 0; i < 200'000; ++i) {
      const uint64_t r = next() % 100;
      // 60%: one of a few step times; 39%: any of a wide spread; 1%: the tail.
      const int64_t gap = r < 60   ? 20'000'000 + static_cast<int64_t>(next() % 4) * 1'000
                          : r < 99 ? 5'000'000 + static_cast<int64_t>(next() % 90'000'000)
                                   : 100'000'000 + static_cast<int64_t>(next() % 1'000) + tail_ns;
      result.itl_ns.push_back(gap);
    }
    std::vector<int64_t> sorted = result.itl_ns;
    std::sort(sorted.begin(), sorted.end());
    const auto n = static_cast<int64_t>(sorted.size());
    const auto at = [&](int64_t percent) {
      return SimTime::Nanoseconds(sorted[static_cast<size_t>(base::nearest_rank_index(n, percent))])
          .seconds();
    };
    const Metrics m = compute_metrics(result, Slo{.ttft_s = 1.0, .tpot_s = 0.2});
    EXPECT_EQ(m.itl.count, n);
    EXPECT_EQ(m.itl.p50_s, at(50)) << "tail " << tail_ns;
    EXPECT_EQ(m.itl.p90_s, at(90)) << "tail " << tail_ns;
    EXPECT_EQ(m.itl.p99_s, at(99)) << "tail " << tail_ns;
    EXPECT_EQ(m.itl.max_s, SimTime::Nanoseconds(sorted.back()).seconds());

    // The same gaps as runs of equal consecutive gaps (SimOptions::record_itl_runs): the same
    // figures, mean included.
    SimResult as_runs;
    as_runs.requests = result.requests;
    for (const int64_t g : result.itl_ns) {
      if (!as_runs.itl_runs.empty() && as_runs.itl_runs.back().gap_ns == g) {
        ++as_runs.itl_runs.back().count;
      } else {
        as_runs.itl_runs.push_back({g, 1});
      }
    }
    const Metrics r = compute_metrics(as_runs, Slo{.ttft_s = 1.0, .tpot_s = 0.2});
    EXPECT_EQ(r.itl.count, m.itl.count);
    EXPECT_EQ(r.itl.mean_s, m.itl.mean_s);
    EXPECT_EQ(r.itl.p50_s, m.itl.p50_s);
    EXPECT_EQ(r.itl.p90_s, m.itl.p90_s);
    EXPECT_EQ(r.itl.p99_s, m.itl.p99_s);
    EXPECT_EQ(r.itl.max_s, m.itl.max_s);
  }
}

TEST(ComputeMetricsTest, EmptyResultIsAllZero) {
  const Metrics m = compute_metrics(SimResult{}, Slo{1, 1});
  EXPECT_EQ(m.num_requests, 0);
  EXPECT_EQ(m.duration_s, 0);
  EXPECT_EQ(m.throughput_requests_per_s, 0);
  EXPECT_EQ(m.slo_attainment, 0);
}

// ---- per client class ------------------------------------------------------------------------

using ::testing::HasSubstr;

/// Four requests of two classes, offered and simulated (records by hand, as in
/// HandMadeResult): class 0 gets A and C, class 1 gets B and the rejected D.
struct TwoClassRun {
  Workload workload;
  SimResult result;
};

TwoClassRun two_class_run() {
  TwoClassRun run;
  auto offer = [&](double arrival_s, int64_t prompt, int32_t client_class) {
    run.workload.open_loop.push_back({SimTime::Seconds(arrival_s), prompt, 1, client_class});
  };
  offer(0.0, 100, 0);                                        // A
  offer(1.0, 200, 1);                                        // B
  offer(2.0, 100, 0);                                        // C
  offer(5.0, 300, 1);                                        // D
  RequestRecord a = make_record(0, 0.0, 0.1, 0.5, 1.5, 11);  // TTFT 0.5, TPOT 0.1
  RequestRecord b = make_record(1, 1.0, 2.0, 3.0, 4.0, 3);   // TTFT 2, TPOT 0.5
  b.num_prompt_tokens = 200;
  b.num_preemptions = 2;
  RequestRecord c = make_record(2, 2.0, 2.0, 2.25, 2.25, 1);  // TTFT 0.25, no TPOT
  RequestRecord d = make_record(3, 5.0, 5.0, 5.0, 5.0, 7);
  d.num_prompt_tokens = 300;
  d.rejected = true;
  d.replica = -1;
  run.result.requests = {a, b, c, d};
  run.result.itl_ns = {100'000'000, 300'000'000, 200'000'000};
  run.result.num_preemptions = 2;
  run.result.num_rejected = 1;
  return run;
}

/// The message of the InputError thrown by `f`; fails the test if none is thrown.
template <typename F>
std::string error_of(F&& f) {
  return llmcap::testing::error_message<InputError>(std::forward<F>(f));
}

TEST(ComputeClassMetricsTest, EachClassAgainstItsOwnSlo) {
  const TwoClassRun run = two_class_run();
  // Class 0 (tight): A meets TTFT 0.5 <= 1 and TPOT 0.1 <= 0.2; C meets TTFT 0.25 <= 1.
  // Class 1 (loose): B meets TTFT 2 <= 2.5 and TPOT 0.5 <= 0.6; D is rejected.
  const std::vector<Metrics> m =
      compute_class_metrics(run.result, run.workload,
                            {Slo{.ttft_s = 1.0, .tpot_s = 0.2}, Slo{.ttft_s = 2.5, .tpot_s = 0.6}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].num_requests, 2);
  EXPECT_EQ(m[0].num_completed, 2);
  EXPECT_EQ(m[0].num_rejected, 0);
  EXPECT_EQ(m[0].num_preemptions, 0);
  EXPECT_EQ(m[1].num_requests, 2);
  EXPECT_EQ(m[1].num_completed, 1);
  EXPECT_EQ(m[1].num_rejected, 1);
  EXPECT_EQ(m[1].num_preemptions, 2);
  // Latencies per class. Class 0 TTFT {0.5, 0.25}: p50 = 1st of 2 sorted = 0.25.
  EXPECT_EQ(m[0].ttft.count, 2);
  EXPECT_NEAR(m[0].ttft.p50_s, 0.25, kExact);
  EXPECT_NEAR(m[0].ttft.max_s, 0.5, kExact);
  EXPECT_EQ(m[0].tpot.count, 1);
  EXPECT_NEAR(m[0].tpot.p99_s, 0.1, kExact);
  EXPECT_EQ(m[1].ttft.count, 1);
  EXPECT_NEAR(m[1].ttft.p99_s, 2.0, kExact);
  EXPECT_NEAR(m[1].tpot.p99_s, 0.5, kExact);
  EXPECT_NEAR(m[1].e2e_latency.max_s, 3.0, kExact);
  EXPECT_NEAR(m[1].queueing_delay.max_s, 1.0, kExact);
  // ITL cannot be split by class.
  EXPECT_EQ(m[0].itl.count, 0);
  EXPECT_EQ(m[1].itl.count, 0);
  // Attainment per class; rates over the whole run (0 to 5 s), so they add up.
  EXPECT_NEAR(m[0].slo_attainment, 1.0, kExact);
  EXPECT_NEAR(m[1].slo_attainment, 0.5, kExact);
  EXPECT_NEAR(m[0].duration_s, 5.0, kExact);
  EXPECT_NEAR(m[1].duration_s, 5.0, kExact);
  EXPECT_NEAR(m[0].goodput_requests_per_s, 2 / 5.0, kExact);
  EXPECT_NEAR(m[1].goodput_requests_per_s, 1 / 5.0, kExact);
  EXPECT_NEAR(m[0].throughput_requests_per_s, 2 / 5.0, kExact);
  EXPECT_NEAR(m[1].throughput_requests_per_s, 1 / 5.0, kExact);
  EXPECT_NEAR(m[0].throughput_output_tokens_per_s, (11 + 1) / 5.0, kExact);
  EXPECT_NEAR(m[1].throughput_output_tokens_per_s, 3 / 5.0, kExact);
  const Metrics all = compute_metrics(run.result, Slo{.ttft_s = 2.5, .tpot_s = 0.6});
  EXPECT_NEAR(m[0].throughput_requests_per_s + m[1].throughput_requests_per_s,
              all.throughput_requests_per_s, kExact);

  // Swapping the SLOs: class 0 under the loose one still meets it; class 1 under the tight
  // one loses B (TTFT 2 > 1).
  const std::vector<Metrics> swapped =
      compute_class_metrics(run.result, run.workload,
                            {Slo{.ttft_s = 2.5, .tpot_s = 0.6}, Slo{.ttft_s = 1.0, .tpot_s = 0.2}});
  EXPECT_NEAR(swapped[0].slo_attainment, 1.0, kExact);
  EXPECT_NEAR(swapped[1].slo_attainment, 0.0, kExact);
  EXPECT_EQ(swapped[1].goodput_requests_per_s, 0);
}

TEST(ComputeClassMetricsTest, OneClassEqualsComputeMetricsButItl) {
  TwoClassRun run = two_class_run();
  for (RequestSpec& r : run.workload.open_loop) r.client_class = 0;
  const Slo slo{.ttft_s = 1.0, .tpot_s = 0.2};
  const std::vector<Metrics> per_class = compute_class_metrics(run.result, run.workload, {slo});
  const Metrics all = compute_metrics(run.result, slo);
  ASSERT_EQ(per_class.size(), 1u);
  const Metrics& one = per_class[0];
  EXPECT_EQ(one.num_requests, all.num_requests);
  EXPECT_EQ(one.num_completed, all.num_completed);
  EXPECT_EQ(one.num_rejected, all.num_rejected);
  EXPECT_EQ(one.num_preemptions, all.num_preemptions);
  EXPECT_EQ(one.ttft.p99_s, all.ttft.p99_s);
  EXPECT_EQ(one.ttft.mean_s, all.ttft.mean_s);
  EXPECT_EQ(one.tpot.p50_s, all.tpot.p50_s);
  EXPECT_EQ(one.e2e_latency.mean_s, all.e2e_latency.mean_s);
  EXPECT_EQ(one.queueing_delay.p90_s, all.queueing_delay.p90_s);
  EXPECT_EQ(one.duration_s, all.duration_s);
  EXPECT_EQ(one.slo_attainment, all.slo_attainment);
  EXPECT_EQ(one.goodput_requests_per_s, all.goodput_requests_per_s);
  EXPECT_EQ(one.throughput_output_tokens_per_s, all.throughput_output_tokens_per_s);
  EXPECT_EQ(all.itl.count, 3);
  EXPECT_EQ(one.itl.count, 0);
}

TEST(ComputeClassMetricsTest, ClosedLoopIsOneClass) {
  TwoClassRun run = two_class_run();
  Workload closed;
  closed.closed_loop =
      ClosedLoopWorkload{.num_users = 2, .think_time_s = 1, .duration_s = 5, .lengths = {{100, 3}}};
  const std::vector<Metrics> m =
      compute_class_metrics(run.result, closed, {Slo{.ttft_s = 1.0, .tpot_s = 0.2}});
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].num_requests, 4);
  EXPECT_NEAR(m[0].slo_attainment, 2 / 4.0, kExact);
}

TEST(ComputeClassMetricsTest, BadInputIsNamed) {
  const TwoClassRun run = two_class_run();
  const Slo slo{1, 1};
  EXPECT_THAT(error_of([&] { compute_class_metrics(run.result, run.workload, {}); }),
              HasSubstr("compute_class_metrics: class_slos: expected one SLO per client class, "
                        "got none"));
  EXPECT_THAT(error_of([&] { compute_class_metrics(run.result, run.workload, {slo}); }),
              HasSubstr("compute_class_metrics: request 1: client_class 1: expected 0 to 0 "
                        "(one SLO per class)"));
  Workload negative = run.workload;
  negative.open_loop[2].client_class = -1;
  EXPECT_THAT(error_of([&] {
                compute_class_metrics(run.result, negative, {slo, slo});
              }),
              HasSubstr("request 2: client_class -1: expected 0 to 1"));
  Workload shorter = run.workload;
  shorter.open_loop.pop_back();
  EXPECT_THAT(error_of([&] {
                compute_class_metrics(run.result, shorter, {slo, slo});
              }),
              HasSubstr("compute_class_metrics: the result has 4 requests, the workload 3; "
                        "expected the result of simulating this workload"));
  Workload moved = run.workload;
  moved.open_loop[0].arrival = SimTime::Seconds(0.5);
  EXPECT_THAT(error_of([&] {
                compute_class_metrics(run.result, moved, {slo, slo});
              }),
              HasSubstr("compute_class_metrics: request 0: arrival 0 s, prompt 100 tokens in the "
                        "result; expected the workload's arrival 0.5 s, prompt 100 tokens"));
}

}  // namespace
}  // namespace llmcap::sim
