#include "sim/metrics.h"

#include <gtest/gtest.h>

#include <vector>

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

TEST(ComputeMetricsTest, EmptyResultIsAllZero) {
  const Metrics m = compute_metrics(SimResult{}, Slo{1, 1});
  EXPECT_EQ(m.num_requests, 0);
  EXPECT_EQ(m.duration_s, 0);
  EXPECT_EQ(m.throughput_requests_per_s, 0);
  EXPECT_EQ(m.slo_attainment, 0);
}

}  // namespace
}  // namespace llmcap::sim
