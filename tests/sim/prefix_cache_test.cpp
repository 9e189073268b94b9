// The simulator's prefix cache against hand-worked sequences: hits, the LRU eviction order,
// preemption and recompute with the cache, and a preempted sequence whose evicted blocks must
// not count as hits. Semantics: sim/simulator.h ("Prefix caching").
#include "sim/prefix_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <iterator>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "sim/input_error.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "sim_test_helpers.h"

namespace llmcap::sim {
namespace {

using testing::chunks;
using testing::decode;
using testing::expect_shapes;
using ::testing::HasSubstr;
using testing::one_replica;
using testing::open_loop;
using testing::RecordingPredictor;

constexpr double kStepS = 0.001;  // every step lasts 1 ms (base), whatever its tokens

/// A request of conversation `stream` (its tokens are a prefix of that stream), keyed in
/// blocks of `block_tokens`.
RequestSpec turn(double arrival_ms, int64_t prompt, int64_t output, uint64_t stream,
                 int32_t block_tokens = 4) {
  RequestSpec r = testing::request(arrival_ms, prompt, output);
  r.prefix.block_tokens = block_tokens;
  r.prefix.stream = stream;
  return r;
}

FleetConfig caching_replica(BatchingPolicy policy, int64_t block_size_tokens, int64_t blocks) {
  FleetConfig fleet = one_replica(policy, block_size_tokens, blocks);
  fleet.serving.prefix_caching = true;
  return fleet;
}

/// The first step after the first that prefills anything (a recompute, in the cases below).
std::vector<model::BatchShape>::const_iterator first_prefill_after_the_first_step(
    const std::vector<model::BatchShape>& shapes) {
  return std::find_if(shapes.begin() + 1, shapes.end(),
                      [](const model::BatchShape& s) { return s.num_prefill_seqs > 0; });
}

TEST(PrefixCache, ALaterTurnComputesOnlyWhatTheCacheLacks) {
  // Blocks of 4 tokens. A (12 prompt tokens, 2 out) caches units 0-2 at its prefill's end;
  // B, same conversation, arrives after A finished: it may reuse at most 11 tokens (one is
  // always computed), i.e. units 0 and 1 (8 tokens), and computes 4.
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult r = simulate(open_loop({turn(0, 12, 2, 1), turn(100, 12, 1, 1)}),
                               caching_replica(BatchingPolicy::kContinuous, 4, 16), predictor, 1);
  expect_shapes(predictor.shapes,
                {chunks(1, 12, 78, 0, 1), decode(1, 13), chunks(1, 4, 4 * 8 + 10, 8, 1)});
  EXPECT_EQ(r.requests[0].num_cached_prompt_tokens, 0);
  EXPECT_EQ(r.requests[1].num_cached_prompt_tokens, 8);
  ASSERT_EQ(r.prefix_cache.size(), 1U);
  EXPECT_EQ(r.prefix_cache[0].num_prompt_tokens, 24);
  EXPECT_EQ(r.prefix_cache[0].num_cached_prompt_tokens, 8);
  EXPECT_EQ(r.prefix_cache[0].num_saved_prefill_tokens, 8);
  EXPECT_DOUBLE_EQ(r.prefix_cache[0].hit_rate(), 8.0 / 24.0);
  const Metrics m = compute_metrics(r, Slo{10, 10});
  EXPECT_DOUBLE_EQ(m.prefix_cache_hit_rate, 8.0 / 24.0);
  EXPECT_EQ(m.num_saved_prefill_tokens, 8);
  EXPECT_EQ(m.num_evicted_blocks, 0);
}

TEST(PrefixCache, WithoutTheSwitchNothingIsCached) {
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult r = simulate(open_loop({turn(0, 12, 2, 1), turn(100, 12, 1, 1)}),
                               one_replica(BatchingPolicy::kContinuous, 4, 16), predictor, 1);
  EXPECT_EQ(r.requests[1].num_cached_prompt_tokens, 0);
  EXPECT_TRUE(r.prefix_cache.empty());
  EXPECT_EQ(predictor.shapes.back().num_prefill_tokens, 12);
}

TEST(PrefixCache, EvictsTheLeastRecentlyFreedUnitsDeepestFirst) {
  // 6 blocks of 4 tokens, one output token each (done at the end of its prefill), requests
  // 100 ms apart so that each runs alone. After A (conv 1, 8 tokens) and C (conv 2): the LRU
  // holds A.u1, A.u0, C.u1, C.u0 (each request's units freed last to first), 2 blocks free.
  // D (conv 3, 16 tokens) takes the 2 free blocks and evicts A.u1 and A.u0. F (conv 2) reuses
  // C.u0 (4 tokens) and takes one block, evicting C.u1, then caches its own unit 1. E (conv
  // 1) finds nothing of A and evicts D.u3 and D.u2.
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult r = simulate(open_loop({turn(0, 8, 1, 1), turn(100, 8, 1, 2), turn(200, 16, 1, 3),
                                          turn(300, 8, 1, 2), turn(400, 8, 1, 1)}),
                               caching_replica(BatchingPolicy::kContinuous, 4, 6), predictor, 1);
  EXPECT_EQ(r.requests[0].num_cached_prompt_tokens, 0);
  EXPECT_EQ(r.requests[1].num_cached_prompt_tokens, 0);
  EXPECT_EQ(r.requests[2].num_cached_prompt_tokens, 0);
  EXPECT_EQ(r.requests[3].num_cached_prompt_tokens, 4);
  EXPECT_EQ(r.requests[4].num_cached_prompt_tokens, 0);
  ASSERT_EQ(r.prefix_cache.size(), 1U);
  EXPECT_EQ(r.prefix_cache[0].num_evicted_blocks, 2 + 1 + 2);
}

TEST(PrefixCache, TurnsArrivingTogetherComputeTheirSharedPrefixTwice) {
  // Units are cached at the end of the step that computed them: two turns of one conversation
  // prefilled in the same step both compute it (the second keeps its copy privately); a third
  // turn later reuses unit 0 (at most 7 of its 8 tokens may come from the cache).
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult r = simulate(open_loop({turn(0, 8, 1, 1), turn(0, 8, 1, 1), turn(100, 8, 1, 1)}),
                               caching_replica(BatchingPolicy::kContinuous, 4, 16), predictor, 1);
  expect_shapes(predictor.shapes, {chunks(2, 16, 72, 0, 2), chunks(1, 4, 4 * 4 + 10, 4, 1)});
  EXPECT_EQ(r.requests[1].num_cached_prompt_tokens, 0);
  EXPECT_EQ(r.requests[2].num_cached_prompt_tokens, 4);
}

TEST(PrefixCache, APreemptedSequenceRecomputesWhatWasEvictedMeanwhile) {
  // 5 blocks of 4 tokens. A (conv 1: 8 prompt, 9 out) and B (conv 2: 8 prompt, 5 out) prefill
  // together (4 blocks) and cache their units 0-1. The first decode needs a block for each
  // (context 9) with 1 free: B is preempted; its units become evictable (B.u1 then B.u0 in the
  // LRU) and A takes the free block. B's recompute (9 tokens: 8 cached, 1 computed) needs 1
  // new block and its 2 evictable ones, 3 > 2 available, so A decodes alone; at its KV's 13th
  // token A needs a block and evicts B.u1. B waits until A finishes, then reuses only B.u0:
  // 4 cached tokens, 5 computed -- not the 8 its preempted blocks once held. Every block is
  // then cached (A's 4 units and B.u0), so B's 2 new blocks evict A.u3 and A.u2.
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult r = simulate(open_loop({turn(0, 8, 9, 1), turn(0, 8, 5, 2)}),
                               caching_replica(BatchingPolicy::kContinuous, 4, 5), predictor, 1);
  EXPECT_EQ(r.requests[1].num_preemptions, 1);
  EXPECT_EQ(r.requests[1].num_cached_prompt_tokens, 0);
  ASSERT_EQ(r.prefix_cache.size(), 1U);
  EXPECT_EQ(r.prefix_cache[0].num_evicted_blocks, 1 + 2);
  EXPECT_EQ(r.prefix_cache[0].num_saved_prefill_tokens, 4);
  // Steps: the joint prefill, A's 8 decodes (the first of them preempting B), B's recompute.
  ASSERT_GE(predictor.shapes.size(), 10U);
  EXPECT_EQ(predictor.shapes[9].num_prefill_seqs, 1);
  EXPECT_EQ(predictor.shapes[9].num_prefill_tokens, 5);
  EXPECT_EQ(predictor.shapes[9].num_prefill_cached_tokens, 4);
}

TEST(PrefixCache, APreemptedSequenceReusesItsBlocksWhileTheyStayCached) {
  // 7 blocks of 4 tokens; A (conv 1) and B (conv 2): 8 prompt tokens, 9 out each. After the
  // joint prefill 3 blocks are free; the first decode (context 9) takes 2. At KV 13 both need
  // a block with 1 free: B is preempted (KV 12: units 0-1 held, unit 2 completed by its
  // decodes and cached as it leaves: 3 evictable blocks) and A takes the free one. B's
  // recompute (13 tokens, 12 cached) needs 1 new block and its 3 evictable ones: 4 > 3, so it
  // waits for A; nothing is evicted meanwhile, and it reuses all 12 tokens. By then all 7
  // blocks are cached (B's 3 units, A's 4), so its one new block evicts A.u3.
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult r = simulate(open_loop({turn(0, 8, 9, 1), turn(0, 8, 9, 2)}),
                               caching_replica(BatchingPolicy::kContinuous, 4, 7), predictor, 1);
  EXPECT_EQ(r.requests[1].num_preemptions, 1);
  EXPECT_EQ(r.prefix_cache[0].num_evicted_blocks, 1);
  EXPECT_EQ(r.prefix_cache[0].num_saved_prefill_tokens, 12);
  const auto recompute = first_prefill_after_the_first_step(predictor.shapes);
  ASSERT_NE(recompute, predictor.shapes.end());
  EXPECT_EQ(recompute->num_prefill_tokens, 1);
  EXPECT_EQ(recompute->num_prefill_cached_tokens, 12);
}

TEST(PrefixCache, AnUnkeyedPreemptedSequenceFindsItsOwnBlocks) {
  // The case above without keys: no request shares blocks, but B keys its own KV when it is
  // preempted (12 tokens, 3 units, evictable), so its recompute computes 1 token after 12
  // cached. A, never preempted, keeps no keys: its blocks are freed uncached at its end, and
  // B's new block is one of them (nothing evicted). Without caching B recomputes 13.
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult r = simulate(open_loop({testing::request(0, 8, 9), testing::request(0, 8, 9)}),
                               caching_replica(BatchingPolicy::kContinuous, 4, 7), predictor, 1);
  EXPECT_EQ(r.requests[1].num_preemptions, 1);
  EXPECT_EQ(r.requests[1].num_cached_prompt_tokens, 0);  // its first admission found nothing
  EXPECT_EQ(r.prefix_cache[0].num_evicted_blocks, 0);
  EXPECT_EQ(r.prefix_cache[0].num_saved_prefill_tokens, 12);
  EXPECT_DOUBLE_EQ(r.prefix_cache[0].hit_rate(), 0.0);
  const auto recompute = first_prefill_after_the_first_step(predictor.shapes);
  ASSERT_NE(recompute, predictor.shapes.end());
  EXPECT_EQ(recompute->num_prefill_tokens, 1);
  EXPECT_EQ(recompute->num_prefill_cached_tokens, 12);
  const RecordingPredictor plain(kStepS, 0);
  simulate(open_loop({testing::request(0, 8, 9), testing::request(0, 8, 9)}),
           one_replica(BatchingPolicy::kContinuous, 4, 7), plain, 1);
  const auto plain_recompute = first_prefill_after_the_first_step(plain.shapes);
  ASSERT_NE(plain_recompute, plain.shapes.end());
  EXPECT_EQ(plain_recompute->num_prefill_tokens, 13);
}

TEST(PrefixCache, TraceBlocksOfManyKvBlocksAreReusedWhole) {
  // Mooncake-style hashes of 512-token blocks on 16-token KV blocks: a unit is 512 tokens
  // (32 blocks). Prompts of 1100 tokens may reuse up to 1099: two units.
  const auto pool = std::make_shared<const std::vector<uint64_t>>(
      std::vector<uint64_t>{1, 2, 3, 1, 2, 9, 1, 7, 8});
  std::vector<RequestSpec> rs;
  for (int i = 0; i < 3; ++i) {
    RequestSpec r = testing::request(100.0 * i, 1100, 1);
    r.prefix = PrefixIdentity{pool, 3 * i, 3, 512, static_cast<uint64_t>(100 + i)};
    rs.push_back(r);
  }
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult r = simulate(
      open_loop(rs), caching_replica(BatchingPolicy::kChunkedPrefill, 16, 1000), predictor, 1);
  EXPECT_EQ(r.requests[0].num_cached_prompt_tokens, 0);
  EXPECT_EQ(r.requests[1].num_cached_prompt_tokens, 1024);  // hashes 1, 2 shared
  EXPECT_EQ(r.requests[2].num_cached_prompt_tokens, 512);   // hash 1 shared
}

TEST(PrefixCache, ChunksCacheTheUnitsTheyComplete) {
  // Chunked prefill with a budget of 8 tokens: A (conv 1, 16 tokens) prefills in two chunks;
  // B (conv 1, 12 tokens) arrives during A's second chunk and is admitted in the step after
  // it, when units 0-3 are cached: it reuses 8 (units 0-1; 11 at most) and computes 4.
  const RecordingPredictor predictor(kStepS, 0);
  FleetConfig fleet = caching_replica(BatchingPolicy::kChunkedPrefill, 4, 32);
  fleet.serving.max_num_batched_tokens = 8;
  fleet.serving.max_num_seqs = 8;
  const SimResult r =
      simulate(open_loop({turn(0, 16, 2, 1), turn(1.5, 12, 1, 1)}), fleet, predictor, 1);
  EXPECT_EQ(r.requests[1].num_cached_prompt_tokens, 8);
}

TEST(PrefixAwareRouter, SendsALaterTurnToTheReplicaHoldingItsPrefix) {
  // Two replicas. A (conv 1) and B (conv 2) arrive together: A goes to replica 0 (a tie), B
  // to replica 1 (replica 0 now has A's blocks waiting). C, a later turn of conv 2, arrives
  // when both are idle: replica 1 holds 8 of its tokens, so it goes there and computes 4;
  // least_kv_load sees two empty replicas and sends it to replica 0, where nothing is cached.
  const std::vector<RequestSpec> rs = {turn(0, 12, 1, 1), turn(0, 12, 1, 2), turn(100, 12, 1, 2)};
  FleetConfig fleet = caching_replica(BatchingPolicy::kContinuous, 4, 64);
  fleet.num_replicas = 2;
  fleet.router = RouterKind::kPrefixAware;
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult r = simulate(open_loop(rs), fleet, predictor, 1);
  EXPECT_EQ(r.requests[0].replica, 0);
  EXPECT_EQ(r.requests[1].replica, 1);
  EXPECT_EQ(r.requests[2].replica, 1);
  EXPECT_EQ(r.requests[2].num_cached_prompt_tokens, 8);

  fleet.router = RouterKind::kLeastKvLoad;
  const SimResult by_load = simulate(open_loop(rs), fleet, predictor, 1);
  EXPECT_EQ(by_load.requests[2].replica, 0);
  EXPECT_EQ(by_load.requests[2].num_cached_prompt_tokens, 0);
}

TEST(PrefixCache, LongestPrefixFirstAdmitsTheBestCachedWaitingRequestFirst) {
  // One sequence at a time. A (conv 1) runs at 0 and caches units 0-2. X (conv 5) and Y (conv
  // 1) arrive during its step. FCFS admits X first; SGLang's lpm order admits Y first (8 of
  // its tokens cached, X none).
  const std::vector<RequestSpec> rs = {turn(0, 12, 1, 1), turn(0.5, 12, 1, 5), turn(0.6, 12, 1, 1)};
  FleetConfig fleet = caching_replica(BatchingPolicy::kContinuous, 4, 64);
  fleet.serving.max_num_seqs = 1;
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult fcfs = simulate(open_loop(rs), fleet, predictor, 1);
  EXPECT_LT(fcfs.requests[1].first_scheduled, fcfs.requests[2].first_scheduled);
  fleet.serving.longest_prefix_first = true;
  const SimResult lpm = simulate(open_loop(rs), fleet, predictor, 1);
  EXPECT_LT(lpm.requests[2].first_scheduled, lpm.requests[1].first_scheduled);
  EXPECT_EQ(lpm.requests[2].num_cached_prompt_tokens, 8);
}

TEST(PrefixCache, RefusesBlockSizesThatDoNotDivideOneAnother) {
  const RecordingPredictor predictor(kStepS, 0);
  const Workload w = open_loop({turn(0, 12, 2, 1, /*block_tokens=*/6)});
  try {
    simulate(w, caching_replica(BatchingPolicy::kContinuous, 4, 16), predictor, 1);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("open_loop[0]: its prefix blocks of 6 tokens do not map onto "
                                    "the KV blocks of 4 tokens"));
  }
}

}  // namespace
}  // namespace llmcap::sim

namespace llmcap::sim {
namespace {

TEST(PrefixCacheIndex, FindsEveryKeyThroughInsertsEvictionsAndErasures) {
  // Against a std::map: 20,000 inserts of keys that crowd a few homes (multiples of 2^40 land
  // in few slots of the index) and random ones, with evictions and erasures in between.
  PrefixCache cache;
  std::map<uint64_t, int32_t> reference;
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const uint64_t key = i % 3 == 0 ? (static_cast<uint64_t>(i) << 40) : rng();
    if (reference.count(key) > 0) continue;
    reference[key] = cache.insert(key, 1, 0);
    if (i % 5 == 4) {  // evict the least recently freed
      const uint64_t lru = cache.entry(cache.lru_front()).key;
      cache.evict_lru();
      reference.erase(lru);
    }
    if (i % 7 == 6) {  // erase a random present one
      auto it = reference.begin();
      std::advance(it, static_cast<long>(rng() % reference.size()));
      cache.erase(it->second);
      reference.erase(it);
    }
  }
  EXPECT_EQ(cache.size(), static_cast<int64_t>(reference.size()));
  for (const auto& [key, e] : reference) ASSERT_EQ(cache.find(key), e) << key;
  int64_t seen = 0;
  cache.for_each([&](const PrefixCache::Entry& entry) {
    ++seen;
    EXPECT_EQ(reference.at(entry.key), cache.find(entry.key));
  });
  EXPECT_EQ(seen, cache.size());
  EXPECT_EQ(cache.find(0xdeadbeefULL << 8), -1);
}

}  // namespace
}  // namespace llmcap::sim
