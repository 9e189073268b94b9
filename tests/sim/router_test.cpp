// Routers against hand-worked cases (round robin and least outstanding: simulator_test.cpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/input_error.h"
#include "sim/random.h"
#include "sim/simulator.h"
#include "sim_test_helpers.h"

namespace llmcap::sim {
namespace {

using ::testing::HasSubstr;
using testing::ms;
using testing::open_loop;
using testing::RecordingPredictor;
using testing::request;

FleetConfig fleet_of(int64_t num_replicas, RouterKind router) {
  FleetConfig fleet;
  fleet.num_replicas = num_replicas;
  fleet.router = router;
  fleet.serving.block_size_tokens = 16;
  fleet.serving.num_kv_blocks = 100;
  return fleet;
}

std::vector<int64_t> replicas_of(const SimResult& r) {
  std::vector<int64_t> out;
  for (const RequestRecord& rec : r.requests) out.push_back(rec.replica);
  return out;
}

TEST(LeastKvLoadRouterTest, PicksTheMostFreeBlocksAfterWaitingPrompts) {
  RecordingPredictor predictor(0.010, 0);
  // 3 replicas of 100 blocks of 16 tokens. At 0 ms, in this order (blocks of each prompt):
  //   R0 800 tokens (50): free - waiting = [100, 100, 100] -> 0 (tie: lowest index)
  //   R1 320 (20):        [50, 100, 100] -> 1
  //   R2 480 (30):        [50, 80, 100]  -> 2
  //   R3 16 (1):          [50, 80, 70]   -> 1
  //   R4 1 (1):           [50, 79, 70]   -> 1
  // All are admitted at 0 (their prompts now hold the blocks). R5 (1 token) at 1 ms:
  //   free blocks [50, 78, 70], nothing waiting -> 1.
  const Workload w = open_loop({request(0, 800, 2), request(0, 320, 2), request(0, 480, 2),
                                request(0, 16, 2), request(0, 1, 2), request(1, 1, 2)});
  const SimResult kv = simulate(w, fleet_of(3, RouterKind::kLeastKvLoad), predictor, 1);
  EXPECT_EQ(replicas_of(kv), (std::vector<int64_t>{0, 1, 2, 1, 1, 1}));
  // Least outstanding counts requests, not their size: R3 goes to replica 0 (behind the long
  // prompt), R4 to 1 and R5 to 2 (outstanding [2, 2, 1]).
  const SimResult lo = simulate(w, fleet_of(3, RouterKind::kLeastOutstanding), predictor, 1);
  EXPECT_EQ(replicas_of(lo), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
}

TEST(LeastKvLoadRouterTest, CountsTheDecodeGrowthOfRunningSequences) {
  RecordingPredictor predictor(0.010, 0);
  // 2 replicas, blocks of 1 token. R0 (prompt 10, output 41) on replica 0 at 0 ms; R1 (prompt
  // 30, output 2) at 0 ms on replica 1 (free - waiting = [90, 100]). Replica 1 finishes R1 at
  // 20 ms. At 305 ms R0 has emitted 30 tokens (one every 10 ms from 10 ms) and the step in
  // flight writes the KV of the 30th: it holds 10 + 30 = 40 blocks; replica 1 holds none.
  // R2 (prompt 5) at 305 ms -> [60, 100] -> 1. R3 (prompt 5) at 306 ms: replica 1 holds R2's
  // 5 blocks -> [60, 95] -> 1 again (least outstanding would say 0: [1, 1]).
  FleetConfig fleet = fleet_of(2, RouterKind::kLeastKvLoad);
  fleet.serving.block_size_tokens = 1;
  const Workload w =
      open_loop({request(0, 10, 41), request(0, 30, 2), request(305, 5, 2), request(306, 5, 2)});
  const SimResult r = simulate(w, fleet, predictor, 1);
  EXPECT_EQ(replicas_of(r), (std::vector<int64_t>{0, 1, 1, 1}));
}

/// The documented procedure (simulator.h): a = index(n), b = index(n - 1), b += (b >= a) on
/// the router stream; the one with fewer outstanding requests, ties to the lower index.
std::vector<int64_t> power_of_two_reference(int64_t num_replicas, int64_t num_requests,
                                            uint64_t seed) {
  RandomStream stream(seed, Stream::kRouter);
  std::vector<int64_t> outstanding(static_cast<size_t>(num_replicas), 0);
  std::vector<int64_t> picks;
  for (int64_t i = 0; i < num_requests; ++i) {
    const auto a = static_cast<int64_t>(stream.index(static_cast<uint64_t>(num_replicas)));
    auto b = static_cast<int64_t>(stream.index(static_cast<uint64_t>(num_replicas - 1)));
    if (b >= a) ++b;
    const int64_t lo = std::min(a, b);
    const int64_t hi = std::max(a, b);
    const int64_t pick = outstanding[hi] < outstanding[lo] ? hi : lo;
    ++outstanding[pick];
    picks.push_back(pick);
  }
  return picks;
}

TEST(PowerOfTwoRouterTest, FollowsTheDocumentedDrawsFromTheRouterStream) {
  RecordingPredictor predictor(0.010, 0);
  // 40 requests at the same instant: none finishes while they are routed, so the outstanding
  // counts are the routing counts of the reference.
  const Workload w = open_loop(std::vector<RequestSpec>(40, request(0, 4, 3)));
  for (const uint64_t seed : {1u, 2u, 77u}) {
    const SimResult r = simulate(w, fleet_of(5, RouterKind::kPowerOfTwo), predictor, seed);
    EXPECT_EQ(replicas_of(r), power_of_two_reference(5, 40, seed)) << "seed " << seed;
  }
  // Other seeds route differently (the open-loop arrivals themselves are not random).
  const SimResult s1 = simulate(w, fleet_of(5, RouterKind::kPowerOfTwo), predictor, 1);
  const SimResult s2 = simulate(w, fleet_of(5, RouterKind::kPowerOfTwo), predictor, 2);
  EXPECT_NE(replicas_of(s1), replicas_of(s2));
}

TEST(PowerOfTwoRouterTest, BalancesSimultaneousArrivalsFarBetterThanOneRandomChoice) {
  // 800 simultaneous requests (none finishes while they are routed) on 8 replicas, 100 each
  // on average. With two choices the largest load exceeds the mean by ln ln n / ln 2 + O(1)
  // whatever the number of requests (Berenbrink, Czumaj, Steger, Voecking, SIAM J. Comput.
  // 35(6), 2006); the spread max - min measured over seeds 1-40 is 2 to 6. One random choice
  // per request would spread the counts by about +-3 sd = +-3 sqrt(800 x 1/8 x 7/8) = +-28.
  constexpr int64_t kMaxSpread = 8;
  RecordingPredictor predictor(0.001, 0);
  const Workload w = open_loop(std::vector<RequestSpec>(800, request(0, 2, 1)));
  for (uint64_t seed = 1; seed <= 10; ++seed) {
    const SimResult r = simulate(w, fleet_of(8, RouterKind::kPowerOfTwo), predictor, seed);
    std::vector<int64_t> counts(8, 0);
    for (const RequestRecord& rec : r.requests) ++counts[rec.replica];
    const auto [lo, hi] = std::minmax_element(counts.begin(), counts.end());
    EXPECT_LE(*hi - *lo, kMaxSpread) << "seed " << seed;
  }
}

TEST(PowerOfTwoRouterTest, TwoReplicasBehaveAsLeastOutstanding) {
  // With two replicas the two distinct draws are always {0, 1}: whatever the stream gives, the
  // choice is least outstanding's (ties to replica 0).
  RecordingPredictor predictor(0.010, 1e-5);
  const Workload w = open_loop(poisson_arrivals(40, 300, {{50, 20}, {400, 120}, {30, 200}}, 3));
  const SimResult lo = simulate(w, fleet_of(2, RouterKind::kLeastOutstanding), predictor, 1);
  for (const uint64_t seed : {1u, 9u}) {
    const SimResult p2 = simulate(w, fleet_of(2, RouterKind::kPowerOfTwo), predictor, seed);
    EXPECT_EQ(replicas_of(p2), replicas_of(lo)) << "seed " << seed;
  }
  const SimResult one = simulate(w, fleet_of(1, RouterKind::kPowerOfTwo), predictor, 1);
  for (const RequestRecord& rec : one.requests) EXPECT_EQ(rec.replica, 0);
}

TEST(RouterInputTest, ParsesEveryNameAndListsTheKnownOnes) {
  for (const RouterKind k : {RouterKind::kRoundRobin, RouterKind::kLeastOutstanding,
                             RouterKind::kLeastKvLoad, RouterKind::kPowerOfTwo}) {
    EXPECT_EQ(parse_router(router_name(k), "x"), k);
  }
  EXPECT_EQ(parse_router("least_kv_load", "x"), RouterKind::kLeastKvLoad);
  EXPECT_EQ(parse_router("power_of_two", "x"), RouterKind::kPowerOfTwo);
  try {
    parse_router("random", "scenario.json: field \"serving.router\"");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("scenario.json: field \"serving.router\": unknown router "
                                    "\"random\"; known: round_robin, least_outstanding, "
                                    "least_kv_load, power_of_two"));
  }
}

}  // namespace
}  // namespace llmcap::sim
