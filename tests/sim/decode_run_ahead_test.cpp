// Decode run-ahead (SimOptions::decode_run_ahead) changes nothing that happens: every policy,
// with and without prefix caching, speculative decoding, KV offload and preemption, gives the
// same records, counts, gaps and cache statistics with it on and off, while most decode steps
// are run ahead. Semantics: sim/simulator.cpp (Engine::run_decodes_ahead).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <vector>

#include "sim/simulator.h"
#include "sim/workload.h"
#include "sim_test_helpers.h"

namespace llmcap::sim {
namespace {

/// A step time that grows with the decode context (as a GPU's reads of the KV cache do), so
/// the gaps of a decode run differ from step to step.
class ContextPredictor final : public model::StepTimePredictor {
 public:
  double step_time_s(const model::BatchShape& b) const override {
    return 0.004 + 2e-5 * static_cast<double>(b.num_new_tokens()) +
           3e-8 * static_cast<double>(b.num_decode_context_tokens);
  }
};

/// A step time of the new tokens alone, so a decode run's gaps are equal (runs of equal
/// gaps are recorded once per run).
class NewTokensPredictor final : public model::StepTimePredictor {
 public:
  double step_time_s(const model::BatchShape& b) const override {
    return 0.004 + 2e-5 * static_cast<double>(b.num_new_tokens());
  }
};

enum class Feature { kPlain, kPrefixCaching, kSpeculative, kKvOffload, kTightKv };

std::string feature_name(Feature f) {
  switch (f) {
    case Feature::kPlain:
      return "plain";
    case Feature::kPrefixCaching:
      return "prefix_caching";
    case Feature::kSpeculative:
      return "speculative";
    case Feature::kKvOffload:
      return "kv_offload";
    case Feature::kTightKv:
      return "tight_kv";
  }
  return "?";
}

/// Multi-turn sessions at 6 requests/s on 2 replicas: turns share their session's prefix.
Workload session_workload() {
  ArrivalOptions options;
  options.rate_per_s = 6;
  options.num_requests = 300;
  options.sessions = SessionOptions{};
  options.sessions->think_time_s = 2;
  Workload w;
  w.open_loop = generate_arrivals(options, {{120, 40}, {600, 150}, {1500, 60}, {40, 400}}, 11);
  return w;
}

FleetConfig fleet_for(BatchingPolicy policy, Feature feature) {
  FleetConfig fleet;
  fleet.num_replicas = 2;
  fleet.router = RouterKind::kLeastOutstanding;
  fleet.serving.policy = policy;
  fleet.serving.block_size_tokens = 16;
  fleet.serving.num_kv_blocks = feature == Feature::kTightKv ? 260 : 2000;
  fleet.serving.max_num_seqs = 32;
  fleet.serving.max_num_batched_tokens = 2048;
  fleet.serving.prefix_caching = feature == Feature::kPrefixCaching ||
                                 feature == Feature::kKvOffload || feature == Feature::kTightKv;
  if (feature == Feature::kSpeculative) {
    fleet.serving.speculative.num_draft_tokens = 3;
    fleet.serving.speculative.acceptance_rates = {0.8, 0.6, 0.4};
  }
  if (feature == Feature::kKvOffload) {
    fleet.serving.num_kv_blocks = 400;  // small, so evicted prefixes go to the host tier
    fleet.serving.kv_offload.num_host_blocks = 4000;
    fleet.serving.kv_offload.block_bytes = 2 << 20;
    fleet.serving.kv_offload.host_link_bytes_per_s = 25e9;
  }
  return fleet;
}

SimResult run(const Workload& w, const FleetConfig& fleet, bool run_ahead,
              const model::StepTimePredictor& predictor) {
  SimOptions options;
  options.decode_run_ahead = run_ahead;
  options.record_itl_runs = true;
  return simulate(w, fleet, predictor, 5, options);
}

std::vector<int64_t> sorted(std::vector<int64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

/// The runs' gaps, one entry per gap, sorted.
std::vector<int64_t> expanded(const std::vector<GapRun>& runs) {
  std::vector<int64_t> gaps;
  for (const GapRun& r : runs) gaps.insert(gaps.end(), static_cast<size_t>(r.count), r.gap_ns);
  return sorted(std::move(gaps));
}

class DecodeRunAheadTest : public ::testing::TestWithParam<std::tuple<BatchingPolicy, Feature>> {};

/// Run-ahead off and on with `predictor`: the same records, gaps and cache statistics.
/// Returns the run with run-ahead on.
SimResult expect_same(BatchingPolicy policy, Feature feature,
                      const model::StepTimePredictor& predictor) {
  const Workload w = session_workload();
  const FleetConfig fleet = fleet_for(policy, feature);
  const SimResult off = run(w, fleet, false, predictor);
  const SimResult on = run(w, fleet, true, predictor);

  EXPECT_TRUE(testing::same_records(off, on));
  EXPECT_EQ(sorted(off.itl_ns), sorted(on.itl_ns));
  EXPECT_EQ(expanded(off.itl_runs), expanded(on.itl_runs));
  EXPECT_EQ(off.prefix_cache.size(), on.prefix_cache.size());
  for (size_t r = 0; r < std::min(off.prefix_cache.size(), on.prefix_cache.size()); ++r) {
    const PrefixCacheStats& a = off.prefix_cache[r];
    const PrefixCacheStats& b = on.prefix_cache[r];
    EXPECT_EQ(a.num_prompt_tokens, b.num_prompt_tokens);
    EXPECT_EQ(a.num_cached_prompt_tokens, b.num_cached_prompt_tokens);
    EXPECT_EQ(a.num_evicted_blocks, b.num_evicted_blocks);
    EXPECT_EQ(a.num_host_blocks, b.num_host_blocks);
  }
  EXPECT_EQ(off.num_steps_run_ahead, 0);
  // Most decode steps are run ahead (arrivals every ~170 ms, steps of ~5 ms); under static
  // batching only some, those of a replica with nobody waiting (an arrival that queues behind
  // a batch stops its runs until the batch is done).
  EXPECT_GT(on.num_steps_run_ahead, policy == BatchingPolicy::kStatic ? 0 : on.num_steps / 2);
  if (feature == Feature::kKvOffload) {
    int64_t evicted = 0;
    for (const PrefixCacheStats& s : on.prefix_cache) evicted += s.num_evicted_blocks;
    EXPECT_GT(evicted, 0);
  }
  return on;
}

TEST_P(DecodeRunAheadTest, ChangesNothingThatHappens) {
  const auto [policy, feature] = GetParam();
  const SimResult on = expect_same(policy, feature, ContextPredictor());
  // The tight cache preempts (so runs end at a step that would preempt).
  if (feature == Feature::kTightKv) EXPECT_GT(on.num_preemptions, 0);
}

TEST_P(DecodeRunAheadTest, ChangesNothingThatHappensWithEqualGaps) {
  const auto [policy, feature] = GetParam();
  expect_same(policy, feature, NewTokensPredictor());
}

INSTANTIATE_TEST_SUITE_P(
    PoliciesAndFeatures, DecodeRunAheadTest,
    ::testing::Combine(::testing::Values(BatchingPolicy::kStatic, BatchingPolicy::kContinuous,
                                         BatchingPolicy::kChunkedPrefill,
                                         BatchingPolicy::kPrefillFirst),
                       ::testing::Values(Feature::kPlain, Feature::kPrefixCaching,
                                         Feature::kSpeculative, Feature::kKvOffload,
                                         Feature::kTightKv)),
    [](const auto& info) {
      return std::string(batching_policy_name(std::get<0>(info.param))) + "_" +
             feature_name(std::get<1>(info.param));
    });

TEST(DecodeRunAheadDeathTest, AStepOfNoTimeInARunIsCaught) {
  // 10 ms for the prefill and the first decode step (context 101, composed by an event), 0 s
  // for every later one: the decode run's first priced step is 0 s, and the run goes on to
  // the request's last token, so only the run's own check can catch it.
  class ZeroLaterPredictor final : public model::StepTimePredictor {
   public:
    double step_time_s(const model::BatchShape& b) const override {
      return b.num_prefill_tokens == 0 && b.num_decode_context_tokens > 101 ? 0.0 : 0.01;
    }
  };
  Workload w;
  w.open_loop = {RequestSpec{SimTime::Zero(), 100, 200}};
  FleetConfig fleet;
  fleet.num_replicas = 1;
  fleet.serving.num_kv_blocks = 100;
  const ZeroLaterPredictor predictor;
  EXPECT_DEATH(simulate(w, fleet, predictor, 1), "invariant violated");
}

TEST(DecodeRunAhead, IsOffWhereOutsideEventsCouldReachAReplica) {
  // A time series, a front-end latency or a closed loop: every step goes through events.
  const Workload w = session_workload();
  FleetConfig fleet = fleet_for(BatchingPolicy::kChunkedPrefill, Feature::kPlain);
  SimOptions options;
  options.time_series_interval = SimTime::Seconds(1);
  const ContextPredictor predictor;
  EXPECT_EQ(simulate(w, fleet, predictor, 5, options).num_steps_run_ahead, 0);
  fleet.frontend_latency = SimTime::MilliSeconds(3);
  EXPECT_EQ(simulate(w, fleet, predictor, 5).num_steps_run_ahead, 0);
  Workload closed;
  closed.closed_loop = ClosedLoopWorkload{
      .num_users = 4, .think_time_s = 0.5, .duration_s = 10, .lengths = {{100, 50}}};
  EXPECT_EQ(simulate(closed, fleet, predictor, 5).num_steps_run_ahead, 0);
}

}  // namespace
}  // namespace llmcap::sim
