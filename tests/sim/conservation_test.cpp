// Every batching policy x router x arrival process through the same conservation checks, on a
// KV cache small enough that sequences are preempted and recomputed; and the same for mixed
// fleets (groups with their own limits and predictors) and disaggregated prefill and decode
// pools.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "sim/simulator.h"
#include "sim/workload.h"
#include "sim_test_helpers.h"

namespace llmcap::sim {
namespace {

using testing::RecordingPredictor;

enum class Arrivals { kPoisson, kGamma, kWeibull, kTwoClasses, kClosedLoop };

std::string arrivals_name(Arrivals a) {
  switch (a) {
    case Arrivals::kPoisson:
      return "poisson";
    case Arrivals::kGamma:
      return "gamma";
    case Arrivals::kWeibull:
      return "weibull";
    case Arrivals::kTwoClasses:
      return "two_classes";
    case Arrivals::kClosedLoop:
      return "closed_loop";
  }
  return "?";
}

std::vector<LengthSample> test_lengths() {
  return {{50, 20}, {400, 120}, {1200, 300}, {30, 500}, {2000, 8}};
}

Workload make_workload(Arrivals kind) {
  Workload w;
  ArrivalOptions options;
  options.rate_per_s = 20;
  options.num_requests = 400;
  switch (kind) {
    case Arrivals::kPoisson:
      break;
    case Arrivals::kGamma:
      options.process.kind = ArrivalProcessKind::kGamma;
      options.process.cv = 3;
      break;
    case Arrivals::kWeibull:
      options.process.kind = ArrivalProcessKind::kWeibull;
      options.process.weibull_shape = 0.5;
      break;
    case Arrivals::kTwoClasses: {
      options.rate_per_s = 10;
      options.num_requests = 200;
      const std::vector<RequestSpec> a = generate_arrivals(options, test_lengths(), 1);
      const std::vector<RequestSpec> b = generate_arrivals(options, {{60, 400}, {800, 10}}, 2);
      w.open_loop = merge_client_classes({a, b});
      return w;
    }
    case Arrivals::kClosedLoop:
      w.closed_loop = ClosedLoopWorkload{
          .num_users = 30, .think_time_s = 0.5, .duration_s = 20, .lengths = test_lengths()};
      return w;
  }
  w.open_loop = generate_arrivals(options, test_lengths(), 7);
  return w;
}

constexpr int64_t kBlockSizeTokens = 16;
constexpr int64_t kNumKvBlocks = 150;  // 2400 tokens: the longest request needs 2008 (126)
constexpr int64_t kMaxNumSeqs = 32;
constexpr int64_t kMaxNumBatchedTokens = 2048;

FleetConfig tight_fleet(BatchingPolicy policy, RouterKind router) {
  FleetConfig fleet;
  fleet.num_replicas = 3;
  fleet.router = router;
  fleet.serving.policy = policy;
  fleet.serving.block_size_tokens = kBlockSizeTokens;
  fleet.serving.num_kv_blocks = kNumKvBlocks;
  fleet.serving.max_num_seqs = kMaxNumSeqs;
  fleet.serving.max_num_batched_tokens = kMaxNumBatchedTokens;
  return fleet;
}

class ConservationTest
    : public ::testing::TestWithParam<std::tuple<BatchingPolicy, RouterKind, Arrivals>> {};

TEST_P(ConservationTest, TokensBlocksAndTimesAddUp) {
  const auto [policy, router, arrivals] = GetParam();
  const Workload workload = make_workload(arrivals);
  const FleetConfig fleet = tight_fleet(policy, router);
  RecordingPredictor predictor(0.005, 2e-5);
  const SimResult r = simulate(workload, fleet, predictor, 3);

  // Requests: each finished once, in order, with its own lengths and class.
  ASSERT_GT(r.requests.size(), 100u);
  if (!workload.closed_loop) {
    ASSERT_EQ(r.requests.size(), workload.open_loop.size());
  }
  int64_t num_output_tokens = 0;
  int64_t num_gaps = 0;
  int64_t num_preemptions = 0;
  SimTime max_itl;
  for (size_t i = 0; i < r.requests.size(); ++i) {
    const RequestRecord& rec = r.requests[i];
    ASSERT_FALSE(rec.rejected);
    EXPECT_GE(rec.replica, 0);
    EXPECT_LT(rec.replica, fleet.num_replicas);
    if (workload.closed_loop) {
      EXPECT_EQ(rec.client_class, 0);
    } else {
      EXPECT_EQ(rec.client_class, workload.open_loop[i].client_class);
      EXPECT_EQ(rec.num_prompt_tokens, workload.open_loop[i].num_prompt_tokens);
    }
    EXPECT_LE(rec.arrival, rec.first_scheduled);
    EXPECT_LT(rec.first_scheduled, rec.first_token);
    EXPECT_LE(rec.first_token, rec.completion);
    EXPECT_LE(rec.completion, r.end_time);
    if (rec.num_output_tokens >= 2) {
      // The largest gap is at least the mean gap (TPOT) and at most the whole decode span.
      const SimTime span = rec.completion - rec.first_token;
      EXPECT_GE(rec.max_itl.ns() * (rec.num_output_tokens - 1), span.ns());
      EXPECT_LE(rec.max_itl, span);
    } else {
      EXPECT_EQ(rec.max_itl, SimTime::Zero());
    }
    num_output_tokens += rec.num_output_tokens;
    num_gaps += rec.num_output_tokens - 1;
    num_preemptions += rec.num_preemptions;
    max_itl = std::max(max_itl, rec.max_itl);
  }
  // Preemption and recompute are exercised, and lose or repeat no token: the steps emitted
  // exactly the requests' output tokens (one per decode, one per completed prefill).
  EXPECT_GT(r.num_preemptions, 0);
  EXPECT_EQ(num_preemptions, r.num_preemptions);
  EXPECT_EQ(testing::emitted_tokens(predictor.shapes), num_output_tokens);
  EXPECT_EQ(static_cast<int64_t>(r.itl_ns.size()), num_gaps);
  EXPECT_EQ(*std::max_element(r.itl_ns.begin(), r.itl_ns.end()), max_itl.ns());
  ASSERT_EQ(static_cast<int64_t>(predictor.shapes.size()), r.num_steps);

  // Every step within the engine limits and the KV cache.
  int64_t prefill_tokens = 0;
  for (const model::BatchShape& s : predictor.shapes) {
    ASSERT_FALSE(s.empty());
    EXPECT_LE(s.num_prefill_seqs + s.num_decode_seqs, kMaxNumSeqs);
    EXPECT_LE(s.num_decode_context_tokens + s.num_prefill_cached_tokens + s.num_prefill_tokens,
              kNumKvBlocks * kBlockSizeTokens);
    EXPECT_LE(s.num_prefill_seqs_completing, s.num_prefill_seqs);
    if (policy == BatchingPolicy::kChunkedPrefill) {
      EXPECT_LE(s.num_new_tokens(), kMaxNumBatchedTokens);
    } else {
      EXPECT_EQ(s.num_prefill_cached_tokens, 0);
      EXPECT_TRUE(s.num_prefill_seqs == 0 || s.num_decode_seqs == 0);  // prefill first
      EXPECT_TRUE(s.num_prefill_seqs <= 1 || s.num_prefill_tokens <= kMaxNumBatchedTokens);
      EXPECT_EQ(s.num_prefill_seqs_completing, s.num_prefill_seqs);
    }
    prefill_tokens += s.num_prefill_tokens;
  }
  // Recompute re-prefills; without preemption each prompt would be prefilled exactly once.
  int64_t prompt_tokens = 0;
  for (const RequestRecord& rec : r.requests) prompt_tokens += rec.num_prompt_tokens;
  EXPECT_GT(prefill_tokens, prompt_tokens);

  // Recording options change what is kept, never what happens.
  SimOptions lean;
  lean.record_itl_ns = false;
  lean.time_series_interval = SimTime::Seconds(1.5);
  RecordingPredictor predictor2(0.005, 2e-5);
  const SimResult r2 = simulate(workload, fleet, predictor2, 3, lean);
  EXPECT_TRUE(testing::same_records(r, r2));
  EXPECT_TRUE(r2.itl_ns.empty());
  EXPECT_TRUE(r2.itl_runs.empty());

  // The gaps as runs (what the planner records) expand to exactly the gaps, in order.
  SimOptions runs;
  runs.record_itl_ns = false;
  runs.record_itl_runs = true;
  RecordingPredictor predictor3(0.005, 2e-5);
  const SimResult r3 = simulate(workload, fleet, predictor3, 3, runs);
  EXPECT_TRUE(testing::same_records(r, r3));
  std::vector<int64_t> expanded;
  for (const GapRun& run : r3.itl_runs) {
    ASSERT_GT(run.count, 0);
    expanded.insert(expanded.end(), static_cast<size_t>(run.count), run.gap_ns);
  }
  EXPECT_EQ(expanded, r.itl_ns);
  EXPECT_LT(r3.itl_runs.size(), r.itl_ns.size());  // decoders of a step share a run

  // The time series integrates the same steps: busy time, batch x time and step counts add up
  // to the steps' own (summed over replicas; step times as the simulator rounds them).
  ASSERT_EQ(static_cast<int64_t>(r2.time_series.size()), fleet.num_replicas);
  double busy_ns = 0;
  double batch_ns = 0;
  int64_t num_steps = 0;
  for (size_t i = 0; i < predictor2.shapes.size(); ++i) {
    const auto step_ns = static_cast<double>(SimTime::Seconds(predictor2.step_s[i]).ns());
    busy_ns += step_ns;
    batch_ns += step_ns * static_cast<double>(predictor2.shapes[i].num_prefill_seqs +
                                              predictor2.shapes[i].num_decode_seqs);
  }
  double series_busy_ns = 0;
  double series_batch_ns = 0;
  for (const std::vector<InstanceWindow>& windows : r2.time_series) {
    ASSERT_FALSE(windows.empty());
    EXPECT_EQ(windows.front().start, SimTime::Zero());
    EXPECT_EQ(windows.back().end, r2.end_time);
    for (size_t w = 0; w < windows.size(); ++w) {
      const InstanceWindow& win = windows[w];
      if (w > 0) {
        EXPECT_EQ(win.start, windows[w - 1].end);
      }
      const auto span_ns = static_cast<double>((win.end - win.start).ns());
      series_busy_ns += win.busy_fraction * span_ns;
      series_batch_ns += win.mean_batch_size * span_ns;
      num_steps += win.num_steps;
      EXPECT_GE(win.busy_fraction, 0);
      EXPECT_LE(win.busy_fraction, 1 + 1e-12);
      EXPECT_GE(win.mean_kv_utilization, 0);
      EXPECT_LE(win.mean_kv_utilization, 1 + 1e-12);
      EXPECT_LE(win.mean_num_waiting, static_cast<double>(win.max_num_waiting) + 1e-9);
    }
  }
  constexpr double kIntegralRelTol = 1e-9;  // double sums of ~1e3 products of ~1e9 ns
  EXPECT_NEAR(series_busy_ns, busy_ns, kIntegralRelTol * busy_ns);
  EXPECT_NEAR(series_batch_ns, batch_ns, kIntegralRelTol * batch_ns);
  EXPECT_EQ(num_steps, r2.num_steps);
}

INSTANTIATE_TEST_SUITE_P(
    EveryPolicyRouterAndArrivals, ConservationTest,
    ::testing::Combine(::testing::Values(BatchingPolicy::kStatic, BatchingPolicy::kContinuous,
                                         BatchingPolicy::kChunkedPrefill),
                       ::testing::Values(RouterKind::kRoundRobin, RouterKind::kLeastOutstanding,
                                         RouterKind::kLeastKvLoad, RouterKind::kPowerOfTwo),
                       ::testing::Values(Arrivals::kPoisson, Arrivals::kGamma, Arrivals::kWeibull,
                                         Arrivals::kTwoClasses, Arrivals::kClosedLoop)),
    [](const ::testing::TestParamInfo<ConservationTest::ParamType>& info) {
      return std::string(batching_policy_name(std::get<0>(info.param))) + "_" +
             router_name(std::get<1>(info.param)) + "_" + arrivals_name(std::get<2>(info.param));
    });

// ---- mixed and disaggregated fleets --------------------------------------------------------

enum class FleetKind { kMixed, kDisaggregated };

std::string fleet_kind_name(FleetKind k) {
  return k == FleetKind::kMixed ? "mixed" : "disaggregated";
}

/// Predictors of the groups of a fleet (slower group 0, faster group 1), recording per group.
struct GroupPredictors {
  RecordingPredictor first{0.005, 2e-5};
  RecordingPredictor second{0.002, 1e-5};
};

constexpr int64_t kFleetKvBytesPerToken = 1000;
constexpr double kFleetBandwidth = 1e9;  // bytes/s, every replica
constexpr double kFleetLatencyS = 1e-4;

/// kMixed: 2 replicas like tight_fleet's plus 1 with a larger cache of 8-token blocks, a
/// smaller max_num_seqs and a faster predictor. kDisaggregated: 2 prefill replicas (group 0)
/// and 2 decode replicas (group 1) with tight caches, so decode replicas preempt; a decode
/// pool cannot batch statically, so it runs continuous batching under kStatic.
FleetConfig group_fleet(FleetKind kind, BatchingPolicy policy, RouterKind router,
                        const GroupPredictors& predictors) {
  FleetConfig fleet = tight_fleet(policy, router);
  ReplicaGroup a;
  a.name = "a";
  a.num_replicas = 2;
  a.serving = fleet.serving;
  a.predictor = &predictors.first;
  ReplicaGroup b = a;
  b.name = "b";
  b.predictor = &predictors.second;
  if (kind == FleetKind::kMixed) {
    b.num_replicas = 1;
    b.serving.block_size_tokens = 8;
    b.serving.num_kv_blocks = 400;
    b.serving.max_num_seqs = 16;
  } else {
    a.role = ReplicaRole::kPrefill;
    b.role = ReplicaRole::kDecode;
    if (policy == BatchingPolicy::kStatic) b.serving.policy = BatchingPolicy::kContinuous;
    for (ReplicaGroup* g : {&a, &b}) {
      g->network_bandwidth_bytes_per_s = kFleetBandwidth;
      g->network_latency_s = kFleetLatencyS;
    }
    fleet.kv_bytes_per_token = kFleetKvBytesPerToken;
    fleet.decode_router = router;
  }
  fleet.groups = {a, b};
  return fleet;
}

bool same_fleet_records(const SimResult& a, const SimResult& b) {
  if (!testing::same_records(a, b)) return false;
  for (size_t i = 0; i < a.requests.size(); ++i) {
    const RequestRecord& x = a.requests[i];
    const RequestRecord& y = b.requests[i];
    if (x.decode_replica != y.decode_replica || x.kv_transfer_start != y.kv_transfer_start ||
        x.kv_transfer_end != y.kv_transfer_end) {
      return false;
    }
  }
  return a.num_kv_transfers == b.num_kv_transfers && a.kv_transfer_bytes == b.kv_transfer_bytes;
}

class FleetConservationTest
    : public ::testing::TestWithParam<std::tuple<FleetKind, BatchingPolicy, RouterKind, Arrivals>> {
};

TEST_P(FleetConservationTest, TokensBlocksTransfersAndTimesAddUp) {
  const auto [kind, policy, router, arrivals] = GetParam();
  const Workload workload = make_workload(arrivals);
  GroupPredictors predictors;
  const FleetConfig fleet = group_fleet(kind, policy, router, predictors);
  const SimResult r = simulate(workload, fleet, 3);
  const int64_t num_replicas = 3 + (kind == FleetKind::kDisaggregated ? 1 : 0);
  const bool disaggregated = kind == FleetKind::kDisaggregated;

  ASSERT_GT(r.requests.size(), 100u);
  int64_t num_output_tokens = 0;
  int64_t num_gaps = 0;
  int64_t num_transfers = 0;
  int64_t transfer_bytes = 0;
  std::vector<int64_t> per_replica(static_cast<size_t>(num_replicas), 0);
  for (size_t i = 0; i < r.requests.size(); ++i) {
    const RequestRecord& rec = r.requests[i];
    ASSERT_FALSE(rec.rejected);
    ASSERT_GE(rec.replica, 0);
    ASSERT_LT(rec.replica, num_replicas);
    ++per_replica[rec.replica];
    EXPECT_LE(rec.arrival, rec.first_scheduled);
    EXPECT_LT(rec.first_scheduled, rec.first_token);
    EXPECT_LE(rec.first_token, rec.completion);
    EXPECT_LE(rec.completion, r.end_time);
    if (disaggregated) {
      EXPECT_LT(rec.replica, 2);  // arrivals go to the prefill pool (replicas 0 and 1)
      if (rec.num_output_tokens >= 2) {
        ASSERT_GE(rec.decode_replica, 2);
        ASSERT_LT(rec.decode_replica, 4);
        ++per_replica[rec.decode_replica];
        ++num_transfers;
        const int64_t bytes = rec.num_prompt_tokens * kFleetKvBytesPerToken;
        transfer_bytes += bytes;
        // The pull comes after the first token; the KV lands at least latency + bytes /
        // bandwidth later, and the second token only after that.
        EXPECT_LE(rec.first_token, rec.kv_transfer_start);
        EXPECT_GE(rec.kv_transfer_end - rec.kv_transfer_start,
                  SimTime::Seconds(static_cast<double>(bytes) / kFleetBandwidth) +
                      SimTime::Seconds(kFleetLatencyS));
        EXPECT_LT(rec.kv_transfer_end, rec.completion);
        EXPECT_GE(rec.max_itl, SimTime::Zero());
      } else {
        EXPECT_EQ(rec.decode_replica, -1);
      }
    } else {
      EXPECT_EQ(rec.decode_replica, -1);
    }
    num_output_tokens += rec.num_output_tokens;
    num_gaps += rec.num_output_tokens - 1;
  }
  EXPECT_EQ(r.num_kv_transfers, num_transfers);
  EXPECT_EQ(r.kv_transfer_bytes, transfer_bytes);
  if (disaggregated) {
    EXPECT_GT(num_transfers, 0);
  }
  // Every replica serves: the routers see every group, and the pools both work.
  for (const int64_t n : per_replica) EXPECT_GT(n, 0);
  // The steps of both groups emitted exactly the requests' output tokens; prefill replicas
  // never decode.
  EXPECT_EQ(testing::emitted_tokens(predictors.first.shapes) +
                testing::emitted_tokens(predictors.second.shapes),
            num_output_tokens);
  EXPECT_EQ(static_cast<int64_t>(r.itl_ns.size()), num_gaps);
  EXPECT_EQ(static_cast<int64_t>(predictors.first.shapes.size() + predictors.second.shapes.size()),
            r.num_steps);
  if (disaggregated) {
    for (const model::BatchShape& s : predictors.first.shapes) {
      EXPECT_EQ(s.num_decode_seqs, 0);
    }
  }

  // Recording options change what is kept, never what happens; busy time adds up.
  SimOptions lean;
  lean.record_itl_ns = false;
  lean.time_series_interval = SimTime::Seconds(1.5);
  GroupPredictors predictors2;
  const FleetConfig fleet2 = group_fleet(kind, policy, router, predictors2);
  const SimResult r2 = simulate(workload, fleet2, 3, lean);
  EXPECT_TRUE(same_fleet_records(r, r2));
  ASSERT_EQ(static_cast<int64_t>(r2.time_series.size()), num_replicas);
  double busy_ns = 0;
  for (const RecordingPredictor* p : {&predictors2.first, &predictors2.second}) {
    for (const double s : p->step_s) busy_ns += static_cast<double>(SimTime::Seconds(s).ns());
  }
  double series_busy_ns = 0;
  for (const std::vector<InstanceWindow>& windows : r2.time_series) {
    for (const InstanceWindow& win : windows) {
      series_busy_ns += win.busy_fraction * static_cast<double>((win.end - win.start).ns());
      EXPECT_LE(win.mean_kv_utilization, 1 + 1e-12);
    }
  }
  constexpr double kIntegralRelTol = 1e-9;
  EXPECT_NEAR(series_busy_ns, busy_ns, kIntegralRelTol * busy_ns);
}

INSTANTIATE_TEST_SUITE_P(
    MixedAndDisaggregated, FleetConservationTest,
    ::testing::Combine(::testing::Values(FleetKind::kMixed, FleetKind::kDisaggregated),
                       ::testing::Values(BatchingPolicy::kStatic, BatchingPolicy::kContinuous,
                                         BatchingPolicy::kChunkedPrefill),
                       ::testing::Values(RouterKind::kRoundRobin, RouterKind::kLeastOutstanding,
                                         RouterKind::kLeastKvLoad, RouterKind::kPowerOfTwo),
                       ::testing::Values(Arrivals::kPoisson, Arrivals::kClosedLoop)),
    [](const ::testing::TestParamInfo<FleetConservationTest::ParamType>& info) {
      return fleet_kind_name(std::get<0>(info.param)) + "_" +
             batching_policy_name(std::get<1>(info.param)) + "_" +
             router_name(std::get<2>(info.param)) + "_" + arrivals_name(std::get<3>(info.param));
    });

}  // namespace
}  // namespace llmcap::sim
