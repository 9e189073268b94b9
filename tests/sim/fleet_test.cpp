// Mixed fleets (several replica groups, each with its own predictor and limits) and
// disaggregated prefill and decode pools (KV cache moved over the network), against
// hand-worked timelines; and the errors of their configuration.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/input_error.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "sim_test_helpers.h"

namespace llmcap::sim {
namespace {

using testing::decode;
using testing::expect_shapes;
using ::testing::HasSubstr;
using testing::ms;
using testing::open_loop;
using testing::prefill;
using testing::RecordingPredictor;
using testing::request;

ServingConfig continuous(int64_t num_kv_blocks) {
  ServingConfig s;
  s.policy = BatchingPolicy::kContinuous;
  s.block_size_tokens = 16;
  s.num_kv_blocks = num_kv_blocks;
  return s;
}

ReplicaGroup group(std::string name, int64_t num_replicas, const ServingConfig& serving,
                   const model::StepTimePredictor& predictor, ReplicaRole role) {
  ReplicaGroup g;
  g.name = std::move(name);
  g.num_replicas = num_replicas;
  g.serving = serving;
  g.predictor = &predictor;
  g.role = role;
  return g;
}

// ---- disaggregated prefill and decode ---------------------------------------------------

constexpr int64_t kKvBytesPerToken = 1000;
constexpr double kPrefillBandwidth = 1e9;  // bytes/s
constexpr double kDecodeBandwidth = 2e9;   // the transfer runs at the smaller, 1e9
constexpr double kPrefillLatencyS = 1e-3;  // the transfer lands after the larger, 1 ms
constexpr double kDecodeLatencyS = 0.5e-3;

/// One prefill replica (group 0) and `num_decode` decode replicas (group 1), continuous
/// batching, 16-token blocks.
FleetConfig disaggregated(const model::StepTimePredictor& prefill_predictor,
                          const model::StepTimePredictor& decode_predictor,
                          int64_t num_decode = 1) {
  FleetConfig fleet;
  ReplicaGroup p = group("prefill", 1, continuous(100), prefill_predictor, ReplicaRole::kPrefill);
  p.network_bandwidth_bytes_per_s = kPrefillBandwidth;
  p.network_latency_s = kPrefillLatencyS;
  ReplicaGroup d =
      group("decode", num_decode, continuous(100), decode_predictor, ReplicaRole::kDecode);
  d.network_bandwidth_bytes_per_s = kDecodeBandwidth;
  d.network_latency_s = kDecodeLatencyS;
  fleet.groups = {p, d};
  fleet.kv_bytes_per_token = kKvBytesPerToken;
  return fleet;
}

// One request, prompt 100, output 3. Prefill replica: 10 ms + 0.1 ms per token; decode
// replica: 2 ms + 0.1 ms per token.
//   0 ms       prefill step of 100 tokens: 10 + 10 = 20 ms
//   20 ms      first token (TTFT 20 ms); the decode replica pulls the KV at once:
//              100 tokens x 1000 bytes = 100,000 bytes at min(1e9, 2e9) B/s = 0.1 ms on the
//              wire, landing max(1, 0.5) = 1 ms later, at 21.1 ms
//   21.1 ms    decode step (1 sequence, context 101): 2.1 ms -> second token at 23.2 ms
//   23.2 ms    decode step (context 102): 2.1 ms -> third token, done at 25.3 ms
TEST(DisaggregatedTest, KvTransferTimeIsInTheGapAfterTheFirstToken) {
  RecordingPredictor prefill_predictor(0.010, 1e-4);
  RecordingPredictor decode_predictor(0.002, 1e-4);
  const FleetConfig fleet = disaggregated(prefill_predictor, decode_predictor);
  const SimResult r = simulate(open_loop({request(0, 100, 3)}), fleet, 1);

  expect_shapes(prefill_predictor.shapes, {prefill(1, 100, 100 * 101 / 2)});
  expect_shapes(decode_predictor.shapes, {decode(1, 101), decode(1, 102)});
  ASSERT_EQ(r.requests.size(), 1u);
  const RequestRecord& rec = r.requests[0];
  EXPECT_EQ(rec.replica, 0);
  EXPECT_EQ(rec.decode_replica, 1);
  EXPECT_EQ(rec.first_scheduled, ms(0));
  EXPECT_EQ(rec.first_token, ms(20));
  EXPECT_EQ(rec.kv_transfer_start, ms(20));
  EXPECT_EQ(rec.kv_transfer_end, ms(21.1));
  EXPECT_EQ(rec.completion, ms(25.3));
  EXPECT_EQ(rec.max_itl, ms(3.2));  // 1.1 ms transfer + 2.1 ms first decode step
  EXPECT_EQ(r.itl_ns, (std::vector<int64_t>{ms(3.2).ns(), ms(2.1).ns()}));
  EXPECT_EQ(r.num_kv_transfers, 1);
  EXPECT_EQ(r.kv_transfer_bytes, 100 * kKvBytesPerToken);
  EXPECT_EQ(r.end_time, ms(25.3));
}

// The same request with a network 10x slower on both ends: the wire time grows from 0.1 ms to
// 1 ms, and every time after the first token moves by exactly the 0.9 ms difference.
TEST(DisaggregatedTest, SlowerNetworkDelaysOnlyWhatFollowsTheTransfer) {
  RecordingPredictor prefill_predictor(0.010, 1e-4);
  RecordingPredictor decode_predictor(0.002, 1e-4);
  FleetConfig fleet = disaggregated(prefill_predictor, decode_predictor);
  for (ReplicaGroup& g : fleet.groups) g.network_bandwidth_bytes_per_s /= 10;
  const SimResult r = simulate(open_loop({request(0, 100, 3)}), fleet, 1);
  const RequestRecord& rec = r.requests.at(0);
  EXPECT_EQ(rec.first_token, ms(20));
  EXPECT_EQ(rec.kv_transfer_end, ms(22));
  EXPECT_EQ(rec.completion, ms(26.2));
}

// Two requests prefilled in one step move over the same links one after the other:
//   0 ms       prefill step of 100 + 200 tokens: 10 + 30 = 40 ms; both emit their first token
//   40 ms      A pulled: 100,000 bytes on the wire 40 -> 40.1 ms, lands at 41.1 ms;
//              B pulled: waits for the links, 200,000 bytes 40.1 -> 40.3 ms, lands at 41.3 ms
//   41.1 ms    A lands on the idle decode replica: decode step 41.1 -> 43.2 ms (A done)
//   41.3 ms    B lands during that step and joins when it ends
//   43.2 ms    decode step of B (context 201): 2.1 ms, done at 45.3 ms
TEST(DisaggregatedTest, TransfersShareTheLinksInOrder) {
  RecordingPredictor prefill_predictor(0.010, 1e-4);
  RecordingPredictor decode_predictor(0.002, 1e-4);
  const FleetConfig fleet = disaggregated(prefill_predictor, decode_predictor);
  const SimResult r = simulate(open_loop({request(0, 100, 2), request(0, 200, 2)}), fleet, 1);
  expect_shapes(prefill_predictor.shapes, {prefill(2, 300, 100 * 101 / 2 + 200 * 201 / 2)});
  expect_shapes(decode_predictor.shapes, {decode(1, 101), decode(1, 201)});
  const RequestRecord& a = r.requests.at(0);
  const RequestRecord& b = r.requests.at(1);
  EXPECT_EQ(a.first_token, ms(40));
  EXPECT_EQ(b.first_token, ms(40));
  EXPECT_EQ(a.kv_transfer_start, ms(40));
  EXPECT_EQ(a.kv_transfer_end, ms(41.1));
  EXPECT_EQ(b.kv_transfer_start, ms(40));
  EXPECT_EQ(b.kv_transfer_end, ms(41.3));
  EXPECT_EQ(a.completion, ms(43.2));
  EXPECT_EQ(b.completion, ms(45.3));
  EXPECT_EQ(r.kv_transfer_bytes, 300 * kKvBytesPerToken);
}

// A request with one output token is done at the end of its prefill: nothing moves.
TEST(DisaggregatedTest, SingleTokenRequestNeverLeavesThePrefillReplica) {
  RecordingPredictor prefill_predictor(0.010, 1e-4);
  RecordingPredictor decode_predictor(0.002, 1e-4);
  const FleetConfig fleet = disaggregated(prefill_predictor, decode_predictor);
  const SimResult r = simulate(open_loop({request(0, 50, 1)}), fleet, 1);
  const RequestRecord& rec = r.requests.at(0);
  EXPECT_EQ(rec.replica, 0);
  EXPECT_EQ(rec.decode_replica, -1);
  EXPECT_EQ(rec.completion, ms(15));
  EXPECT_EQ(r.num_kv_transfers, 0);
  EXPECT_TRUE(decode_predictor.shapes.empty());
}

// A decode replica pulls only what fits: with 10 blocks of 16 tokens, B's 100-token KV (7
// blocks) waits until A (7 blocks held, growing) finishes, then is pulled.
//   0 ms       prefill step of A and B (200 tokens): 10 + 20 = 30 ms
//   30 ms      A pulled (7 of 10 blocks), lands at 31.1 ms; B does not fit (7 > 3) and waits
//   31.1 ms    decode steps of A (2.1 ms each): tokens 2 and 3 at 33.2 and 35.3 ms (done)
//   35.3 ms    A's blocks free: B pulled, on the wire 35.3 -> 35.4 ms, lands at 36.4 ms
//   36.4 ms    decode step of B: done at 38.5 ms
TEST(DisaggregatedTest, DecodeReplicaPullsOnlyWhatItsCacheHolds) {
  RecordingPredictor prefill_predictor(0.010, 1e-4);
  RecordingPredictor decode_predictor(0.002, 1e-4);
  FleetConfig fleet = disaggregated(prefill_predictor, decode_predictor);
  fleet.groups[1].serving.num_kv_blocks = 10;
  const SimResult r = simulate(open_loop({request(0, 100, 3), request(0, 100, 2)}), fleet, 1);
  const RequestRecord& a = r.requests.at(0);
  const RequestRecord& b = r.requests.at(1);
  EXPECT_EQ(a.kv_transfer_end, ms(31.1));
  EXPECT_EQ(a.completion, ms(35.3));
  EXPECT_EQ(b.first_token, ms(30));
  EXPECT_EQ(b.kv_transfer_start, ms(35.3));
  EXPECT_EQ(b.kv_transfer_end, ms(36.4));
  EXPECT_EQ(b.completion, ms(38.5));
  EXPECT_EQ(r.num_preemptions, 0);
}

// The decode router spreads prefilled requests over the decode pool (least outstanding: the
// first to replica 1, the second to replica 2, ties to the lower index).
TEST(DisaggregatedTest, DecodeRouterSpreadsOverTheDecodePool) {
  RecordingPredictor prefill_predictor(0.010, 1e-4);
  RecordingPredictor decode_predictor(0.002, 1e-4);
  FleetConfig fleet = disaggregated(prefill_predictor, decode_predictor, /*num_decode=*/2);
  const SimResult r =
      simulate(open_loop({request(0, 100, 5), request(0, 100, 5), request(100, 10, 2)}), fleet, 1);
  EXPECT_EQ(r.requests.at(0).decode_replica, 1);
  EXPECT_EQ(r.requests.at(1).decode_replica, 2);
  EXPECT_EQ(r.requests.at(2).decode_replica, 1);  // both idle again: the lower index
  for (const RequestRecord& rec : r.requests) EXPECT_EQ(rec.replica, 0);
}

// A request whose prompt fits the prefill replica but whose whole length fits no decode
// replica is rejected on arrival.
TEST(DisaggregatedTest, RejectsWhatNoDecodeReplicaHolds) {
  RecordingPredictor prefill_predictor(0.010, 1e-4);
  RecordingPredictor decode_predictor(0.002, 1e-4);
  FleetConfig fleet = disaggregated(prefill_predictor, decode_predictor);
  fleet.groups[1].serving.num_kv_blocks = 10;  // 160 tokens
  const SimResult r = simulate(open_loop({request(0, 100, 61), request(0, 100, 60)}), fleet, 1);
  EXPECT_TRUE(r.requests.at(0).rejected);
  EXPECT_EQ(r.requests.at(0).replica, -1);
  EXPECT_FALSE(r.requests.at(1).rejected);
  EXPECT_EQ(r.num_rejected, 1);
}

// ---- mixed fleets -------------------------------------------------------------------------

// A slow replica (group 0, 20 ms per step) and a fast one (group 1, 1 ms per step), least
// outstanding. Requests of 10 prompt tokens and 1 output token arrive every 5 ms: each is one
// prefill step. t = 0: both idle, the lower index (slow) takes it and is busy until 20 ms; at
// 5, 10 and 15 ms the slow replica has one outstanding, the fast none. At 20 ms the slow one's
// step ends first (completions before arrivals), so both are idle and it takes the request;
// likewise at 40 ms... so the slow replica serves t = 0, 20 (and would 40), the fast the rest.
TEST(MixedFleetTest, LeastOutstandingPrefersTheFasterReplica) {
  RecordingPredictor slow(0.020, 0);
  RecordingPredictor fast(0.001, 0);
  FleetConfig fleet;
  fleet.router = RouterKind::kLeastOutstanding;
  fleet.groups = {group("slow", 1, continuous(100), slow, ReplicaRole::kUnified),
                  group("fast", 1, continuous(100), fast, ReplicaRole::kUnified)};
  std::vector<RequestSpec> requests;
  for (int i = 0; i < 8; ++i) requests.push_back(request(5.0 * i, 10, 1));
  const SimResult r = simulate(open_loop(requests), fleet, 1);
  const std::vector<int64_t> expected = {0, 1, 1, 1, 0, 1, 1, 1};
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(r.requests[i].replica, expected[i]) << "request " << i;
    const double step_ms = expected[i] == 0 ? 20 : 1;
    EXPECT_EQ(r.requests[i].completion, ms(5.0 * static_cast<double>(i) + step_ms));
  }
  EXPECT_EQ(slow.shapes.size(), 2u);
  EXPECT_EQ(fast.shapes.size(), 6u);
}

// Replicas too small for a request are skipped: round robin over [small, small, big] sends a
// 100-token request to the big one and continues after it; a request larger than every cache
// is rejected.
TEST(MixedFleetTest, RoutersSkipReplicasTooSmallForTheRequest) {
  RecordingPredictor predictor(0.010, 0);
  FleetConfig fleet;
  fleet.router = RouterKind::kRoundRobin;
  fleet.groups = {group("small", 2, continuous(4), predictor, ReplicaRole::kUnified),
                  group("big", 1, continuous(1000), predictor, ReplicaRole::kUnified)};
  const SimResult r =
      simulate(open_loop({request(0, 40, 10), request(1, 90, 10), request(2, 40, 10),
                          request(3, 40, 10), request(4, 20000, 1)}),
               fleet, 1);
  EXPECT_EQ(r.requests[0].replica, 0);
  EXPECT_EQ(r.requests[1].replica, 2);  // 100 tokens: 7 blocks, only the big replica
  EXPECT_EQ(r.requests[2].replica, 0);  // the cycle continues after replica 2
  EXPECT_EQ(r.requests[3].replica, 1);
  EXPECT_TRUE(r.requests[4].rejected);
  for (const RouterKind router :
       {RouterKind::kLeastOutstanding, RouterKind::kLeastKvLoad, RouterKind::kPowerOfTwo}) {
    fleet.router = router;
    const SimResult s = simulate(open_loop({request(0, 90, 10), request(0, 90, 10)}), fleet, 1);
    EXPECT_EQ(s.requests[0].replica, 2) << router_name(router);
    EXPECT_EQ(s.requests[1].replica, 2) << router_name(router);
  }
}

// A mixed fleet whose groups all equal one homogeneous fleet behaves exactly like it.
TEST(MixedFleetTest, EqualGroupsMatchTheHomogeneousFleet) {
  RecordingPredictor predictor(0.005, 2e-5);
  FleetConfig homogeneous;
  homogeneous.num_replicas = 3;
  homogeneous.router = RouterKind::kPowerOfTwo;
  homogeneous.serving = continuous(60);
  FleetConfig groups = homogeneous;
  groups.groups = {group("a", 2, homogeneous.serving, predictor, ReplicaRole::kUnified),
                   group("b", 1, homogeneous.serving, predictor, ReplicaRole::kUnified)};
  ArrivalOptions options;
  options.rate_per_s = 30;
  options.num_requests = 200;
  Workload w;
  w.open_loop = generate_arrivals(options, {{50, 20}, {400, 120}, {30, 300}}, 5);
  const SimResult a = simulate(w, homogeneous, predictor, 9);
  const SimResult b = simulate(w, groups, 9);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].replica, b.requests[i].replica);
    EXPECT_EQ(a.requests[i].completion, b.requests[i].completion);
  }
  EXPECT_EQ(a.num_steps, b.num_steps);
  EXPECT_EQ(a.num_preemptions, b.num_preemptions);
}

// ---- bad configuration ----------------------------------------------------------------------

std::string error_of(const FleetConfig& fleet) {
  try {
    simulate(open_loop({request(0, 1, 1)}), fleet, 1);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(FleetInputTest, RefusesBadGroupsBeforeTheRun) {
  RecordingPredictor p(0.01, 0);
  RecordingPredictor d(0.01, 0);
  FleetConfig fleet = disaggregated(p, d);
  fleet.groups[1].role = ReplicaRole::kUnified;
  EXPECT_THAT(error_of(fleet), HasSubstr("fleet.groups: a fleet is either all unified replicas "
                                         "or prefill and decode pools"));
  fleet = disaggregated(p, d);
  fleet.groups[1].role = ReplicaRole::kPrefill;
  EXPECT_THAT(error_of(fleet), HasSubstr("fleet.groups: a disaggregated fleet needs at least one "
                                         "prefill and one decode group, got no decode group"));
  fleet = disaggregated(p, d);
  fleet.kv_bytes_per_token = 0;
  EXPECT_THAT(error_of(fleet),
              HasSubstr("fleet.kv_bytes_per_token: a disaggregated fleet moves each prompt's KV "
                        "cache, expected a positive integer, got 0"));
  fleet = disaggregated(p, d);
  fleet.groups[0].network_bandwidth_bytes_per_s = 0;
  EXPECT_THAT(error_of(fleet),
              HasSubstr("fleet.groups[0] (\"prefill\"): network_bandwidth_bytes_per_s: a "
                        "disaggregated fleet moves KV caches over the network, expected a "
                        "positive number, got 0"));
  fleet = disaggregated(p, d);
  fleet.groups[1].network_latency_s = -1;
  EXPECT_THAT(error_of(fleet), HasSubstr("fleet.groups[1] (\"decode\"): network_latency_s: "
                                         "expected a non-negative number, got -1"));
  fleet = disaggregated(p, d);
  fleet.groups[1].serving.policy = BatchingPolicy::kStatic;
  EXPECT_THAT(error_of(fleet), HasSubstr("fleet.groups[1] (\"decode\"): serving.policy: static "
                                         "batching cannot serve a decode pool"));
  fleet = disaggregated(p, d);
  fleet.groups[1].serving.max_num_seqs = 0;
  EXPECT_THAT(error_of(fleet), HasSubstr("fleet.groups[1] (\"decode\"): serving.max_num_seqs: "
                                         "expected a positive integer, got 0"));
  fleet = disaggregated(p, d);
  fleet.groups[0].num_replicas = 0;
  EXPECT_THAT(error_of(fleet), HasSubstr("fleet.groups[0] (\"prefill\"): num_replicas: expected "
                                         "a positive integer, got 0"));
  fleet = disaggregated(p, d);
  fleet.groups[0].predictor = nullptr;
  EXPECT_THAT(error_of(fleet), HasSubstr("fleet.groups[0] (\"prefill\"): predictor: expected a "
                                         "step-time predictor, got none"));
  fleet = disaggregated(p, d);
  fleet.decode_router = static_cast<RouterKind>(9);
  EXPECT_THAT(error_of(fleet),
              HasSubstr("fleet.decode_router: expected round_robin, "
                        "least_outstanding, least_kv_load, power_of_two or prefix_aware, got "
                        "value 9"));
  // A homogeneous fleet needs the predictor argument.
  FleetConfig plain;
  plain.serving.num_kv_blocks = 10;
  EXPECT_THAT(error_of(plain), HasSubstr("fleet: expected a step-time predictor, got none"));
}

}  // namespace
}  // namespace llmcap::sim
