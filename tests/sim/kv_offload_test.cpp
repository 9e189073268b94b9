// KV offload (ServingConfig::kv_offload) against hand-worked sequences: an evicted unit found
// in the host tier and loaded with its load time in the step, the host tier's LRU order, a
// preempted sequence that loads its evicted blocks instead of recomputing them, a tier that
// never fills changing nothing, and block conservation over a run with evictions, reloads and
// preemptions. Semantics: sim/simulator.h ("KV offload").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "sim/input_error.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "sim_test_helpers.h"

namespace llmcap::sim {
namespace {

using testing::error_of;
using ::testing::HasSubstr;
using testing::one_replica;
using testing::open_loop;
using testing::RecordingPredictor;

constexpr double kStepS = 0.001;          // every step lasts 1 ms (base), whatever its tokens
constexpr int64_t kBlockBytes = 1000;     // bytes of one KV block
constexpr double kLinkBytesPerS = 1.0e6;  // so one block loads in 1 ms
constexpr double kLoadSPerBlock = 0.001;
constexpr double kTimeToleranceS = 1e-9;  // SimTime rounds to the nanosecond

/// A request of conversation `stream` (its tokens are a prefix of that stream), keyed in
/// blocks of 4 tokens.
RequestSpec turn(double arrival_ms, int64_t prompt, int64_t output, uint64_t stream) {
  RequestSpec r = testing::request(arrival_ms, prompt, output);
  r.prefix.block_tokens = 4;
  r.prefix.stream = stream;
  return r;
}

/// One replica with prefix caching on blocks of 4 tokens and a host tier of `host_blocks`.
FleetConfig offloading_replica(BatchingPolicy policy, int64_t gpu_blocks, int64_t host_blocks) {
  FleetConfig fleet = one_replica(policy, 4, gpu_blocks);
  fleet.serving.prefix_caching = true;
  fleet.serving.kv_offload = KvOffloadConfig{host_blocks, kLinkBytesPerS, kBlockBytes};
  return fleet;
}

double seconds(SimTime t) { return t.seconds(); }

TEST(KvOffload, AnEvictedUnitIsLoadedFromTheHostAndItsLoadLengthensTheStep) {
  // 4 GPU blocks, host tier of 8. A (conv 1, 8 tokens, 1 out) caches A.u0, A.u1; B (conv 2,
  // 15 tokens: units 0-2 and a partial block) needs all 4 blocks and evicts A.u1 then A.u0,
  // both copied to the host. C (conv 1, 8 tokens; at most unit 0 may be reused) finds unit 0
  // in the host, not on the GPU: it is loaded (1 block, 1 ms) and 4 tokens are computed. C's
  // 2 blocks (1 free) evict B.u2 (copied out); when its prefill completes unit 1, the host
  // copy of A.u1 is dropped, leaving B.u2 there.
  const RecordingPredictor predictor(kStepS, 0);
  const std::vector<RequestSpec> rs = {turn(0, 8, 1, 1), turn(100, 15, 1, 2), turn(200, 8, 1, 1)};
  const SimResult r =
      simulate(open_loop(rs), offloading_replica(BatchingPolicy::kContinuous, 4, 8), predictor, 1);
  EXPECT_EQ(r.requests[2].num_cached_prompt_tokens, 4);
  EXPECT_EQ(predictor.shapes.back().num_prefill_tokens, 4);
  EXPECT_EQ(predictor.shapes.back().num_prefill_cached_tokens, 4);
  EXPECT_NEAR(seconds(r.requests[2].first_token - r.requests[2].first_scheduled),
              kStepS + kLoadSPerBlock, kTimeToleranceS);
  ASSERT_EQ(r.prefix_cache.size(), 1U);
  const PrefixCacheStats& s = r.prefix_cache[0];
  EXPECT_EQ(s.num_cached_prompt_tokens, 4);
  EXPECT_EQ(s.num_host_cached_prompt_tokens, 4);
  EXPECT_EQ(s.num_loaded_tokens, 4);
  EXPECT_EQ(s.num_loaded_blocks, 1);
  EXPECT_EQ(s.num_evicted_blocks, 2 + 1);
  EXPECT_EQ(s.num_offloaded_blocks, 2 + 1);
  EXPECT_EQ(s.num_host_dropped_blocks, 1);
  EXPECT_EQ(s.num_host_evicted_blocks, 0);
  EXPECT_EQ(s.num_host_blocks, 1);
  EXPECT_NEAR(s.load_s, kLoadSPerBlock, kTimeToleranceS);
  const Metrics m = compute_metrics(r, Slo{10, 10});
  EXPECT_EQ(m.num_kv_offload_loaded_tokens, 4);
  EXPECT_NEAR(m.kv_offload_load_s, kLoadSPerBlock, kTimeToleranceS);

  // Without the tier, C finds nothing and computes its 8 tokens in a 1 ms step.
  FleetConfig off = offloading_replica(BatchingPolicy::kContinuous, 4, 8);
  off.serving.kv_offload = KvOffloadConfig{};
  const SimResult without = simulate(open_loop(rs), off, predictor, 1);
  EXPECT_EQ(without.requests[2].num_cached_prompt_tokens, 0);
  EXPECT_EQ(without.prefix_cache[0].num_offloaded_blocks, 0);
  EXPECT_NEAR(seconds(without.requests[2].first_token - without.requests[2].first_scheduled),
              kStepS, kTimeToleranceS);
}

TEST(KvOffload, TheHostTierDropsItsLeastRecentlyStoredUnitsFirst) {
  // 3 GPU blocks, host tier of 2; 8-token prompts (2 units, 2 blocks), one at a time. B
  // evicts A.u1 to the host (GPU LRU then: A.u0, B.u1, B.u0). C evicts A.u0 and B.u1: the host,
  // full, drops A.u1 (stored first) for B.u1. D (conv 1) loads A.u0 -- had the host dropped
  // its newest unit instead, D would find nothing. D's blocks evict B.u0 and C.u1 (the host
  // drops B.u1). E (conv 2) loads B.u0, then evicts C.u0 and D.u1 (the host drops C.u1).
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult r = simulate(open_loop({turn(0, 8, 1, 1), turn(100, 8, 1, 2), turn(200, 8, 1, 3),
                                          turn(300, 8, 1, 1), turn(400, 8, 1, 2)}),
                               offloading_replica(BatchingPolicy::kContinuous, 3, 2), predictor, 1);
  EXPECT_EQ(r.requests[3].num_cached_prompt_tokens, 4);
  EXPECT_EQ(r.requests[4].num_cached_prompt_tokens, 4);
  const PrefixCacheStats& s = r.prefix_cache[0];
  EXPECT_EQ(s.num_host_cached_prompt_tokens, 8);
  EXPECT_EQ(s.num_offloaded_blocks, 7);
  EXPECT_EQ(s.num_host_evicted_blocks, 3);
  EXPECT_EQ(s.num_loaded_blocks, 2);
  EXPECT_EQ(s.num_host_blocks, 2);
}

TEST(KvOffload, APreemptedSequenceLoadsItsEvictedBlocksInsteadOfRecomputingThem) {
  // PrefixCache.APreemptedSequenceRecomputesWhatWasEvictedMeanwhile with a host tier: B's
  // unit 1, evicted while it waited, went to the host; its recompute (9 tokens) reuses B.u0
  // on the GPU, loads B.u1 and computes 1 token (without the tier: 4 cached, 5 computed).
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult r =
      simulate(open_loop({turn(0, 8, 9, 1), turn(0, 8, 5, 2)}),
               offloading_replica(BatchingPolicy::kContinuous, 5, 16), predictor, 1);
  EXPECT_EQ(r.requests[1].num_preemptions, 1);
  EXPECT_EQ(r.requests[1].num_cached_prompt_tokens, 0);  // its first admission found nothing
  const PrefixCacheStats& s = r.prefix_cache[0];
  EXPECT_EQ(s.num_saved_prefill_tokens, 8);
  EXPECT_EQ(s.num_loaded_tokens, 4);
  EXPECT_EQ(s.num_host_cached_prompt_tokens, 0);
  EXPECT_EQ(s.num_evicted_blocks, 1 + 2);
  EXPECT_EQ(s.num_offloaded_blocks, 1 + 2);
  ASSERT_GE(predictor.shapes.size(), 10U);
  EXPECT_EQ(predictor.shapes[9].num_prefill_tokens, 1);
  EXPECT_EQ(predictor.shapes[9].num_prefill_cached_tokens, 8);
}

/// Conversations of growing turns: `convs` conversations x `turns` turns, turn t of
/// conversation c has a prompt of 12 + 8 t tokens and 6 output tokens, 20 ms apart.
std::vector<RequestSpec> conversations(int convs, int turns) {
  std::vector<RequestSpec> rs;
  for (int t = 0; t < turns; ++t) {
    for (int c = 0; c < convs; ++c) {
      rs.push_back(turn(20.0 * t + 0.5 * c, 12 + 8 * t, 6, static_cast<uint64_t>(c + 1)));
    }
  }
  return rs;
}

TEST(KvOffload, AHostTierThatNeverFillsWithEvictionsChangesNothing) {
  // A GPU cache large enough never to evict: the tier receives nothing, every record is the
  // same as without it.
  const RecordingPredictor predictor(kStepS, 0);
  FleetConfig fleet = offloading_replica(BatchingPolicy::kChunkedPrefill, 1000, 64);
  const SimResult with = simulate(open_loop(conversations(4, 5)), fleet, predictor, 1);
  fleet.serving.kv_offload = KvOffloadConfig{};
  const SimResult without = simulate(open_loop(conversations(4, 5)), fleet, predictor, 1);
  EXPECT_EQ(with.prefix_cache[0].num_offloaded_blocks, 0);
  ASSERT_EQ(with.requests.size(), without.requests.size());
  for (size_t i = 0; i < with.requests.size(); ++i) {
    EXPECT_EQ(with.requests[i].first_token, without.requests[i].first_token) << i;
    EXPECT_EQ(with.requests[i].completion, without.requests[i].completion) << i;
    EXPECT_EQ(with.requests[i].num_cached_prompt_tokens,
              without.requests[i].num_cached_prompt_tokens)
        << i;
  }
}

TEST(KvOffload, OffloadConservesBlocks) {
  // Two replicas too small for their conversations, with and without chunked prefill and
  // speculative decoding (2 drafts a step): preemptions, GPU evictions, host evictions and
  // reloads all happen. The run's own end checks (sim/conservation.cpp) verify each tier;
  // here: every block copied out is loaded back, dropped or still in the host tier, which
  // never exceeds its capacity, and every loaded token was a saved one.
  constexpr int64_t kHostBlocks = 8;
  for (const auto& [policy, drafts] :
       {std::pair{BatchingPolicy::kContinuous, 0}, std::pair{BatchingPolicy::kChunkedPrefill, 0},
        std::pair{BatchingPolicy::kChunkedPrefill, 2}}) {
    FleetConfig fleet = offloading_replica(policy, 40, kHostBlocks);
    fleet.num_replicas = 2;
    fleet.serving.max_num_batched_tokens = 64;
    fleet.serving.max_num_seqs = 16;
    if (drafts > 0) fleet.serving.speculative = SpeculativeConfig{drafts, {0.7, 0.4}};
    const RecordingPredictor predictor(kStepS, 0);
    const SimResult r = simulate(open_loop(conversations(8, 6)), fleet, predictor, 1);
    EXPECT_GT(r.num_preemptions, 0);
    int64_t loaded = 0;
    int64_t host_evicted = 0;
    int64_t cached_prompt = 0;
    for (const PrefixCacheStats& s : r.prefix_cache) {
      EXPECT_EQ(s.num_offloaded_blocks, s.num_loaded_blocks + s.num_host_evicted_blocks +
                                            s.num_host_dropped_blocks + s.num_host_blocks);
      EXPECT_LE(s.num_host_blocks, kHostBlocks);
      EXPECT_LE(s.num_offloaded_blocks, s.num_evicted_blocks);
      EXPECT_EQ(s.num_loaded_tokens, 4 * s.num_loaded_blocks);  // one block per unit
      EXPECT_LE(s.num_loaded_tokens, s.num_saved_prefill_tokens);
      EXPECT_NEAR(s.load_s, kLoadSPerBlock * static_cast<double>(s.num_loaded_blocks), 1e-9);
      loaded += s.num_loaded_blocks;
      host_evicted += s.num_host_evicted_blocks;
      cached_prompt += s.num_cached_prompt_tokens;
    }
    EXPECT_GT(loaded, 0);
    EXPECT_GT(host_evicted, 0);
    int64_t record_cached = 0;
    for (const RequestRecord& rec : r.requests) record_cached += rec.num_cached_prompt_tokens;
    EXPECT_EQ(record_cached, cached_prompt);
  }
}

TEST(KvOffload, RefusesATierWithoutPrefixCachingLinkOrBlockSize) {
  const RecordingPredictor predictor(kStepS, 0);
  const Workload w = open_loop({turn(0, 8, 1, 1)});
  FleetConfig fleet = offloading_replica(BatchingPolicy::kContinuous, 4, 8);
  fleet.serving.prefix_caching = false;
  EXPECT_THAT(error_of([&] { simulate(w, fleet, predictor, 1); }),
              HasSubstr("serving.kv_offload: expected serving.prefix_caching on (the host tier "
                        "keeps prefix-cache units), got it off"));
  fleet = offloading_replica(BatchingPolicy::kContinuous, 4, 8);
  fleet.serving.kv_offload.host_link_bytes_per_s = 0;
  EXPECT_THAT(error_of([&] { simulate(w, fleet, predictor, 1); }),
              HasSubstr("serving.kv_offload.host_link_bytes_per_s: expected a positive number of "
                        "bytes per second, got 0"));
  fleet = offloading_replica(BatchingPolicy::kContinuous, 4, 8);
  fleet.serving.kv_offload.block_bytes = -1;
  EXPECT_THAT(error_of([&] { simulate(w, fleet, predictor, 1); }),
              HasSubstr("serving.kv_offload.block_bytes: expected a positive integer, got -1"));
  fleet = offloading_replica(BatchingPolicy::kContinuous, 4, -2);
  EXPECT_THAT(error_of([&] { simulate(w, fleet, predictor, 1); }),
              HasSubstr("serving.kv_offload.num_host_blocks: expected >= 0 (0: off), got -2"));
}

}  // namespace
}  // namespace llmcap::sim
