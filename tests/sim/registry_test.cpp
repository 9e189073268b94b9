// Every batching policy and every router of the registries (sim/batch_policy.h, sim/router.h)
// through the same checks: names round-trip, runs are deterministic, and a run conserves
// requests, tokens and gaps, in a homogeneous, a mixed and a disaggregated fleet. A policy or
// router added to a registry is covered here without a new test.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

#include "sim/batch_policy.h"
#include "sim/random.h"
#include "sim/router.h"
#include "sim/simulator.h"
#include "sim_test_helpers.h"

namespace llmcap::sim {

// gtest prints a test's parameters with these (found by argument-dependent lookup).
void PrintTo(const BatchPolicyEntry& e, std::ostream* out) { *out << e.name; }
void PrintTo(const RouterEntry& e, std::ostream* out) { *out << e.name; }

namespace {

/// Step time linear in the shape, so every field moves the results.
class LinearPredictor : public model::StepTimePredictor {
 public:
  explicit LinearPredictor(double scale) : scale_(scale) {}
  double step_time_s(const model::BatchShape& b) const override {
    return scale_ * (3e-3 + 2e-5 * static_cast<double>(b.num_prefill_tokens) +
                     1e-9 * static_cast<double>(b.num_prefill_attention_pairs) +
                     1e-4 * static_cast<double>(b.num_decode_seqs) +
                     4e-8 * static_cast<double>(b.num_decode_context_tokens));
  }

 private:
  double scale_;
};

/// 400 Poisson arrivals at 30 requests/s with lengths from a fixed table (loaded enough to
/// queue, preempt and, in the small replicas, skip by capacity).
Workload loaded_workload() {
  static const int64_t kLengths[6][2] = {{20, 30},  {400, 120}, {1200, 40},
                                         {60, 500}, {900, 10},  {30, 1}};
  Workload w;
  double t_s = 0;
  for (int64_t i = 0; i < 400; ++i) {
    const double u = static_cast<double>(splitmix64(static_cast<uint64_t>(i)) >> 11) * 0x1.0p-53;
    t_s += -std::log(1.0 - u) / 30.0;
    const uint64_t pick = splitmix64(static_cast<uint64_t>(i) + 7) % 6;
    RequestSpec r;
    r.arrival = SimTime::Seconds(t_s);
    r.num_prompt_tokens = kLengths[pick][0];
    r.num_output_tokens = kLengths[pick][1];
    r.client_class = static_cast<int32_t>(i % 2);
    w.open_loop.push_back(r);
  }
  return w;
}

ServingConfig serving(BatchingPolicy policy, int64_t num_kv_blocks) {
  ServingConfig s;
  s.policy = policy;
  s.max_num_seqs = 32;
  s.max_num_batched_tokens = 1024;
  s.block_size_tokens = 16;
  s.num_kv_blocks = num_kv_blocks;
  return s;
}

enum class FleetShape { kHomogeneous, kMixed, kDisaggregated };

const char* shape_name(FleetShape shape) {
  switch (shape) {
    case FleetShape::kHomogeneous:
      return "homogeneous";
    case FleetShape::kMixed:
      return "mixed";
    case FleetShape::kDisaggregated:
      return "disaggregated";
  }
  return "?";
}

/// The fleet of one case. Mixed: a replica whose cache (60 blocks, 960 tokens) cannot hold
/// the longest requests beside two large ones, so routers skip by capacity. Disaggregated:
/// `policy` prefills, the decode pool (continuous; static cannot decode a pool) is routed by
/// `router` too.
FleetConfig fleet_of(FleetShape shape, BatchingPolicy policy, RouterKind router,
                     const model::StepTimePredictor& fast, const model::StepTimePredictor& slow) {
  FleetConfig fleet;
  fleet.router = router;
  if (shape == FleetShape::kHomogeneous) {
    fleet.num_replicas = 3;
    fleet.serving = serving(policy, 300);
    return fleet;
  }
  auto group = [&](const char* name, int64_t n, ServingConfig s, const model::StepTimePredictor& p,
                   ReplicaRole role) {
    ReplicaGroup g;
    g.name = name;
    g.num_replicas = n;
    g.serving = s;
    g.predictor = &p;
    g.role = role;
    g.network_bandwidth_bytes_per_s = 5e9;
    g.network_latency_s = 2e-4;
    return g;
  };
  if (shape == FleetShape::kMixed) {
    fleet.groups.push_back(group("small", 1, serving(policy, 60), slow, ReplicaRole::kUnified));
    fleet.groups.push_back(group("large", 2, serving(policy, 400), fast, ReplicaRole::kUnified));
    return fleet;
  }
  fleet.groups.push_back(group("prefill", 2, serving(policy, 300), fast, ReplicaRole::kPrefill));
  fleet.groups.push_back(
      group("decode", 2, serving(BatchingPolicy::kContinuous, 300), slow, ReplicaRole::kDecode));
  fleet.decode_router = router;
  fleet.kv_bytes_per_token = 131072;
  return fleet;
}

using Case = std::tuple<BatchPolicyEntry, RouterEntry, FleetShape>;

void PrintTo(FleetShape shape, std::ostream* out) { *out << shape_name(shape); }

class EveryPolicyAndRouter : public ::testing::TestWithParam<Case> {};

TEST_P(EveryPolicyAndRouter, NamesRoundTrip) {
  const auto& [policy, router, shape] = GetParam();
  EXPECT_EQ(parse_batching_policy(policy.name, "test"), policy.kind);
  EXPECT_STREQ(batching_policy_name(policy.kind), policy.name);
  EXPECT_EQ(parse_router(router.name, "test"), router.kind);
  EXPECT_STREQ(router_name(router.kind), router.name);
}

TEST_P(EveryPolicyAndRouter, RunsAreDeterministicAndConserveRequestsTokensAndGaps) {
  const auto& [policy, router, shape] = GetParam();
  const LinearPredictor fast(1.0);
  const LinearPredictor slow(1.7);
  const Workload workload = loaded_workload();
  const FleetConfig fleet = fleet_of(shape, policy.kind, router.kind, fast, slow);
  SimOptions options;
  options.time_series_interval = SimTime::Seconds(1);
  const SimResult a = simulate(workload, fleet, fast, 11, options);
  const SimResult b = simulate(workload, fleet, fast, 11, options);

  // Determinism: the same inputs and seed give the same run, record for record.
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (size_t i = 0; i < a.requests.size(); ++i) {
    const RequestRecord& x = a.requests[i];
    const RequestRecord& y = b.requests[i];
    EXPECT_EQ(x.replica, y.replica) << i;
    EXPECT_EQ(x.decode_replica, y.decode_replica) << i;
    EXPECT_EQ(x.first_scheduled, y.first_scheduled) << i;
    EXPECT_EQ(x.first_token, y.first_token) << i;
    EXPECT_EQ(x.completion, y.completion) << i;
    EXPECT_EQ(x.max_itl, y.max_itl) << i;
    EXPECT_EQ(x.num_preemptions, y.num_preemptions) << i;
    EXPECT_EQ(x.kv_transfer_end, y.kv_transfer_end) << i;
  }
  EXPECT_EQ(a.itl_ns, b.itl_ns);
  EXPECT_EQ(a.end_time, b.end_time);
  EXPECT_EQ(a.num_steps, b.num_steps);

  // Conservation: every request is served once, in order of its events, with its lengths;
  // one gap per output token after the first; every replica of the fleet recorded.
  ASSERT_EQ(a.requests.size(), workload.open_loop.size());
  EXPECT_EQ(a.num_rejected, 0);
  int64_t num_gaps = 0;
  int64_t num_transfers = 0;
  for (size_t i = 0; i < a.requests.size(); ++i) {
    const RequestRecord& r = a.requests[i];
    EXPECT_EQ(r.id, static_cast<int64_t>(i));
    EXPECT_FALSE(r.rejected);
    EXPECT_GE(r.replica, 0);
    EXPECT_LE(r.arrival, r.first_scheduled);
    EXPECT_LT(r.first_scheduled, r.first_token);
    EXPECT_LE(r.first_token, r.completion);
    EXPECT_LE(r.completion, a.end_time);
    num_gaps += r.num_output_tokens - 1;
    if (r.decode_replica >= 0) ++num_transfers;
  }
  EXPECT_EQ(static_cast<int64_t>(a.itl_ns.size()), num_gaps);
  EXPECT_EQ(a.num_kv_transfers, num_transfers);
  if (shape == FleetShape::kDisaggregated) {
    EXPECT_GT(num_transfers, 0);
  } else {
    EXPECT_EQ(num_transfers, 0);
  }
  const size_t num_replicas = shape == FleetShape::kDisaggregated ? 4 : 3;
  ASSERT_EQ(a.time_series.size(), num_replicas);
  int64_t steps_in_windows = 0;
  for (const auto& windows : a.time_series) {
    for (const InstanceWindow& w : windows) steps_in_windows += w.num_steps;
  }
  EXPECT_EQ(steps_in_windows, a.num_steps);
}

std::vector<Case> every_case() {
  std::vector<Case> out;
  for (const BatchPolicyEntry& policy : batch_policy_registry()) {
    for (const RouterEntry& router : router_registry()) {
      for (const FleetShape shape :
           {FleetShape::kHomogeneous, FleetShape::kMixed, FleetShape::kDisaggregated}) {
        out.emplace_back(policy, router, shape);
      }
    }
  }
  return out;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  return std::string(std::get<0>(info.param).name) + "_" + std::get<1>(info.param).name + "_" +
         shape_name(std::get<2>(info.param));
}

INSTANTIATE_TEST_SUITE_P(Registries, EveryPolicyAndRouter, ::testing::ValuesIn(every_case()),
                         case_name);

TEST(Registries, ListEveryEnumValueOnceInOrder) {
  ASSERT_EQ(batch_policy_registry().size(), 4u);
  EXPECT_EQ(batch_policy_registry()[0].kind, BatchingPolicy::kStatic);
  EXPECT_EQ(batch_policy_registry()[1].kind, BatchingPolicy::kContinuous);
  EXPECT_EQ(batch_policy_registry()[2].kind, BatchingPolicy::kChunkedPrefill);
  EXPECT_EQ(batch_policy_registry()[3].kind, BatchingPolicy::kPrefillFirst);
  ASSERT_EQ(router_registry().size(), 5u);
  EXPECT_EQ(router_registry()[0].kind, RouterKind::kRoundRobin);
  EXPECT_EQ(router_registry()[1].kind, RouterKind::kLeastOutstanding);
  EXPECT_EQ(router_registry()[2].kind, RouterKind::kLeastKvLoad);
  EXPECT_EQ(router_registry()[3].kind, RouterKind::kPowerOfTwo);
  EXPECT_EQ(router_registry()[4].kind, RouterKind::kPrefixAware);
  EXPECT_EQ(find_batch_policy(static_cast<BatchingPolicy>(7)), nullptr);
  EXPECT_EQ(find_router(static_cast<RouterKind>(-1)), nullptr);
}

}  // namespace
}  // namespace llmcap::sim
