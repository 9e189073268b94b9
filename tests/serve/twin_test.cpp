// The two twins: every batching policy run through the reference scheduler (the serving loop
// in virtual time, serve/) and through the simulator (sim::simulate(), one unified replica with
// the same limits) on the same arrivals. They must take the same steps (the same BatchShape,
// in order: the simulator's are seen through a predictor that records every shape it is asked
// for) and give the same records (every RequestRecord field the loop fills, the run's counts
// and every inter-token gap of SimResult::itl_ns, in order).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <iterator>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "model/step_time.h"
#include "serve/clock.h"
#include "serve/config.h"
#include "serve/serve_test_helpers.h"
#include "serve/serving_loop.h"
#include "serve/step_executor.h"
#include "sim/input_error.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace llmcap::serve {
namespace {

using sim::SimTime;

/// A step time that depends on every BatchShape field (distinct weights, in nanoseconds), so
/// that a difference in any field moves every later event; with `whole_ms`, 1 to 3 whole
/// milliseconds chosen by the same sum, so that steps end exactly when requests arrive (ties).
/// Records every shape it is asked for, in call order (the simulator asks once per step, in
/// step order). Not thread-safe.
class ShapeRecordingPredictor final : public model::StepTimePredictor {
 public:
  explicit ShapeRecordingPredictor(bool whole_ms) : whole_ms_(whole_ms) {}
  double step_time_s(const model::BatchShape& b) const override {
    shapes.push_back(b);
    const int64_t ns = 2'000'000 + 10'007 * b.num_prefill_seqs + 1'009 * b.num_prefill_tokens +
                       3 * b.num_prefill_attention_pairs + 7 * b.num_prefill_cached_tokens +
                       20'011 * b.num_prefill_seqs_completing + 30'011 * b.num_decode_seqs +
                       13 * b.num_decode_context_tokens;
    if (whole_ms_) return 1e-3 * static_cast<double>(1 + ns % 3);
    return static_cast<double>(ns) * 1e-9;
  }
  mutable std::vector<model::BatchShape> shapes;

 private:
  bool whole_ms_;
};

std::string describe(const model::BatchShape& s) {
  std::ostringstream out;
  out << "{prefill seqs " << s.num_prefill_seqs << ", tokens " << s.num_prefill_tokens << ", pairs "
      << s.num_prefill_attention_pairs << ", cached " << s.num_prefill_cached_tokens
      << ", completing " << s.num_prefill_seqs_completing << "; decode seqs " << s.num_decode_seqs
      << ", context " << s.num_decode_context_tokens << "}";
  return out.str();
}

bool same_shape(const model::BatchShape& a, const model::BatchShape& b) {
  return a.num_prefill_seqs == b.num_prefill_seqs && a.num_prefill_tokens == b.num_prefill_tokens &&
         a.num_prefill_attention_pairs == b.num_prefill_attention_pairs &&
         a.num_prefill_cached_tokens == b.num_prefill_cached_tokens &&
         a.num_prefill_seqs_completing == b.num_prefill_seqs_completing &&
         a.num_decode_seqs == b.num_decode_seqs &&
         a.num_decode_context_tokens == b.num_decode_context_tokens;
}

/// An arrival pattern: the engine limits and the arrivals of one seed.
/// One case: engine limits (the policy is set by the test) and arrivals.
struct Case {
  ServeConfig limits;
  std::vector<sim::RequestSpec> arrivals;
  bool whole_ms = false;  ///< ShapeRecordingPredictor's whole-millisecond steps
};

/// An arrival pattern: its cases, one per seed 1..num_seeds.
struct Pattern {
  const char* name;
  Case (*make)(uint64_t seed);
  uint64_t num_seeds;
};

ServeConfig limits(int64_t seqs, int64_t batched, int64_t block, int64_t blocks) {
  ServeConfig c;
  c.max_num_seqs = seqs;
  c.max_num_batched_tokens = batched;
  c.block_size_tokens = block;
  c.num_kv_blocks = blocks;
  return c;
}

/// Light load: a few short requests at a time, an ample KV cache.
Case light(uint64_t seed) {
  return {limits(8, 256, 16, 1000),
          sim::poisson_arrivals(4, 60, {{20, 10}, {50, 5}, {8, 30}, {100, 3}, {1, 1}}, seed)};
}

/// Heavy load on a small KV cache (30 blocks of 8 tokens): decodes preempt, and the 200 + 50
/// token request never fits and is rejected.
Case heavy(uint64_t seed) {
  return {limits(8, 128, 8, 30),
          sim::poisson_arrivals(
              150, 80, {{10, 40}, {30, 20}, {60, 60}, {5, 80}, {1, 1}, {200, 50}, {17, 9}}, seed)};
}

/// Long prompts, most over the 256-token step budget: chunked prefill splits them over steps.
Case long_prompts(uint64_t seed) {
  return {limits(6, 256, 16, 400),
          sim::poisson_arrivals(
              12, 40, {{300, 20}, {700, 5}, {1500, 12}, {90, 40}, {256, 1}, {513, 30}}, seed)};
}

/// Bursts: groups of requests arriving at the same instant (ties in input order), moderate KV.
Case bursts(uint64_t seed) {
  Case c{limits(12, 160, 16, 40),
         sim::poisson_arrivals(1, 48, {{40, 25}, {7, 3}, {120, 16}, {64, 64}, {2, 2}}, seed)};
  for (size_t i = 0; i < c.arrivals.size(); ++i) {
    c.arrivals[i].arrival = SimTime::MilliSeconds(static_cast<double>(40 * (i / 6)));
  }
  return c;
}

/// Random limits (down to one sequence, one-token blocks, a one-token budget) and arrivals on
/// whole milliseconds, with whole-millisecond steps on odd seeds: the corners and the ties.
/// Under chunked_prefill the test raises the budget to max_num_seqs.
Case random_limits(uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto uniform = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  Case c{
      limits(uniform(1, 12), uniform(1, 200), uniform(1, 16), uniform(1, 120)), {}, seed % 2 == 1};
  int64_t ms = 0;
  for (int64_t i = uniform(1, 100); i > 0; --i) {
    if (uniform(0, 2) > 0) ms += uniform(0, 6);
    sim::RequestSpec r;
    r.arrival = SimTime::MilliSeconds(static_cast<double>(ms));
    r.num_prompt_tokens = uniform(0, 4) == 0 ? uniform(100, 600) : uniform(1, 60);
    r.num_output_tokens = uniform(1, 50);
    c.arrivals.push_back(r);
  }
  return c;
}

const Pattern kPatterns[] = {
    {"light", light, 4},   {"heavy_preempting", heavy, 4},        {"long_prompts", long_prompts, 4},
    {"bursts", bursts, 4}, {"random_limits", random_limits, 200},
};

/// What the cases cover, summed over seeds (printed, and checked per pattern).
struct Coverage {
  int64_t steps = 0, requests = 0, gaps = 0, preemptions = 0, rejected = 0, chunk_steps = 0,
          mixed_steps = 0;
  int64_t ties = 0;  ///< arrivals at the very end of a step
};

void expect_same_records(const sim::SimResult& loop, const sim::SimResult& simulated) {
  ASSERT_EQ(loop.requests.size(), simulated.requests.size());
  for (size_t i = 0; i < loop.requests.size(); ++i) {
    const sim::RequestRecord& a = loop.requests[i];
    const sim::RequestRecord& b = simulated.requests[i];
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.client_class, b.client_class);
    EXPECT_EQ(a.arrival, b.arrival);
    EXPECT_EQ(a.first_scheduled, b.first_scheduled);
    EXPECT_EQ(a.first_token, b.first_token);
    EXPECT_EQ(a.completion, b.completion);
    EXPECT_EQ(a.num_prompt_tokens, b.num_prompt_tokens);
    EXPECT_EQ(a.num_output_tokens, b.num_output_tokens);
    EXPECT_EQ(a.num_preemptions, b.num_preemptions);
    EXPECT_EQ(a.max_itl, b.max_itl);
    EXPECT_EQ(a.rejected, b.rejected);
  }
  EXPECT_EQ(loop.itl_ns, simulated.itl_ns);
  EXPECT_EQ(loop.num_steps, simulated.num_steps);
  EXPECT_EQ(loop.num_preemptions, simulated.num_preemptions);
  EXPECT_EQ(loop.num_rejected, simulated.num_rejected);
  EXPECT_EQ(loop.end_time, simulated.end_time);
}

class TwinTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(TwinTest, ReferenceSchedulerAndSimulatorTakeTheSameStepsAndGiveTheSameRecords) {
  const auto& [policy_name, pattern_index] = GetParam();
  const Pattern& pattern = kPatterns[pattern_index];
  const sim::BatchingPolicy policy = sim::parse_batching_policy(policy_name, "twin test");
  ASSERT_EQ(sim::batching_policy_name(policy), policy_name);
  Coverage cover;
  for (uint64_t seed = 1; seed <= pattern.num_seeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Case c = pattern.make(seed);
    const std::vector<sim::RequestSpec>& arrivals = c.arrivals;
    ServeConfig config = c.limits;
    config.policy = policy;
    if (policy == sim::BatchingPolicy::kChunkedPrefill) {
      config.max_num_batched_tokens = std::max(config.max_num_batched_tokens, config.max_num_seqs);
    }

    ShapeRecordingPredictor loop_predictor(c.whole_ms);
    VirtualServeClock clock;
    PredictedStepExecutor executor(clock, loop_predictor);
    const ServeResult loop = serve(arrivals, config, executor, clock);

    ShapeRecordingPredictor sim_predictor(c.whole_ms);
    sim::Workload workload;
    workload.open_loop = arrivals;
    sim::FleetConfig fleet;
    fleet.num_replicas = 1;
    fleet.serving = config.serving();
    const sim::SimResult simulated = sim::simulate(workload, fleet, sim_predictor, seed);

    ASSERT_EQ(loop.steps.size(), sim_predictor.shapes.size()) << "number of steps";
    int64_t mismatches = 0;
    for (size_t i = 0; i < loop.steps.size() && mismatches < 3; ++i) {
      if (!same_shape(loop.steps[i].shape, sim_predictor.shapes[i])) {
        ++mismatches;
        ADD_FAILURE() << "step " << i << " at " << loop.steps[i].start.ns() << " ns: reference "
                      << describe(loop.steps[i].shape) << ", simulator "
                      << describe(sim_predictor.shapes[i]);
      }
    }
    expect_same_records(loop.records, simulated);

    cover.steps += static_cast<int64_t>(loop.steps.size());
    cover.requests += static_cast<int64_t>(arrivals.size());
    cover.gaps += static_cast<int64_t>(loop.records.itl_ns.size());
    cover.preemptions += loop.records.num_preemptions;
    cover.rejected += loop.records.num_rejected;
    std::set<SimTime> step_ends;
    for (const ServeStepLog& step : loop.steps) step_ends.insert(step.end);
    for (const sim::RequestSpec& r : arrivals) cover.ties += step_ends.count(r.arrival);
    for (const ServeStepLog& step : loop.steps) {
      cover.chunk_steps += step.shape.num_prefill_cached_tokens > 0 ||
                           step.shape.num_prefill_seqs_completing < step.shape.num_prefill_seqs;
      cover.mixed_steps += step.shape.num_prefill_seqs > 0 && step.shape.num_decode_seqs > 0;
    }
  }
  std::cout << "[twin] " << policy_name << " / " << pattern.name << ": " << cover.steps
            << " steps, " << cover.requests << " requests, " << cover.gaps << " gaps, "
            << cover.preemptions << " preemptions, " << cover.rejected << " rejected, "
            << cover.chunk_steps << " steps with partial chunks, " << cover.mixed_steps
            << " mixed steps, " << cover.ties << " arrivals at a step's end\n";
  // The patterns do what their names say.
  const std::string name = pattern.name;
  if (name == "heavy_preempting" || name == "random_limits") {
    EXPECT_GT(cover.preemptions, 0);
    EXPECT_GT(cover.rejected, 0);
  }
  if (name == "random_limits") {
    EXPECT_GT(cover.ties, 0);
  }
  if (policy_name == "chunked_prefill") {
    EXPECT_GT(cover.mixed_steps, 0);
    if (name == "long_prompts") {
      EXPECT_GT(cover.chunk_steps, 0);
    }
  } else {
    EXPECT_EQ(cover.mixed_steps + cover.chunk_steps, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(
    EveryPolicy, TwinTest,
    ::testing::Combine(::testing::Values("static", "continuous", "chunked_prefill"),
                       ::testing::Range(0, static_cast<int>(std::size(kPatterns)))),
    [](const ::testing::TestParamInfo<TwinTest::ParamType>& info) {
      return std::get<0>(info.param) + "_" + kPatterns[std::get<1>(info.param)].name;
    });

// ---- Prefix caching ---------------------------------------------------------------------
// The reference scheduler's prefix cache on hand-worked sequences (the expected values are
// worked out from the semantics at serve/scheduler.h, step by step in the comments), then
// against the simulator on random keyed workloads (skipped until sim::simulate fills
// SimResult::prefix_cache).

using serve::testing::LinearPredictor;

/// A request whose prompt's whole blocks of `block` tokens carry the trace hashes `hashes`
/// (stored in `pool`), and whose later blocks are keyed by a stream of its own.
sim::RequestSpec keyed(double arrival_s, int64_t prompt, int64_t output,
                       const std::vector<uint64_t>& hashes, int32_t block,
                       std::shared_ptr<std::vector<uint64_t>>& pool) {
  sim::RequestSpec r = serve::testing::request(arrival_s, prompt, output);
  r.prefix.hashes = pool;
  r.prefix.begin = static_cast<int64_t>(pool->size());
  r.prefix.count = static_cast<int32_t>(hashes.size());
  r.prefix.block_tokens = block;
  r.prefix.stream = 1000 + pool->size();
  pool->insert(pool->end(), hashes.begin(), hashes.end());
  return r;
}

/// Whether sim::simulate() implements prefix caching (fills SimResult::prefix_cache).
bool simulator_has_prefix_cache() {
  auto pool = std::make_shared<std::vector<uint64_t>>();
  sim::Workload workload;
  workload.open_loop = {keyed(0, 8, 1, {1, 2}, 4, pool)};
  sim::FleetConfig fleet;
  fleet.serving.num_kv_blocks = 100;
  fleet.serving.prefix_caching = true;
  return !sim::simulate(workload, fleet, LinearPredictor(), 1).prefix_cache.empty();
}

/// The reference scheduler in virtual time with LinearPredictor's steps (a prefill step 10 ms
/// + 1 ms per computed token, a decode step 5 ms + 1 ms per sequence). Once the simulator has
/// a prefix cache, it must give the same records on the same case (checked here, so every
/// hand-worked case is a twin case too; PrefixCache.SimulatorTwinOfTheHandWorkedCases says
/// when it is not).
ServeResult serve_prefix(const std::vector<sim::RequestSpec>& arrivals, int64_t kv_blocks,
                         sim::BatchingPolicy policy = sim::BatchingPolicy::kContinuous) {
  ServeConfig config = limits(8, 1000, 4, kv_blocks);
  config.policy = policy;
  config.prefix_caching = true;
  const LinearPredictor predictor;
  VirtualServeClock clock;
  PredictedStepExecutor executor(clock, predictor);
  ServeResult result = serve(arrivals, config, executor, clock);
  sim::Workload workload;
  workload.open_loop = arrivals;
  sim::FleetConfig fleet;
  fleet.serving = config.serving();
  const sim::SimResult simulated = sim::simulate(workload, fleet, predictor, 1);
  if (!simulated.prefix_cache.empty()) {
    expect_same_records(result.records, simulated);
    for (size_t i = 0; i < arrivals.size(); ++i) {
      EXPECT_EQ(result.records.requests[i].num_cached_prompt_tokens,
                simulated.requests[i].num_cached_prompt_tokens)
          << "request " << i;
    }
    const sim::PrefixCacheStats &a = result.records.prefix_cache.at(0),
                                &b = simulated.prefix_cache.at(0);
    EXPECT_EQ(a.num_prompt_tokens, b.num_prompt_tokens);
    EXPECT_EQ(a.num_cached_prompt_tokens, b.num_cached_prompt_tokens);
    EXPECT_EQ(a.num_saved_prefill_tokens, b.num_saved_prefill_tokens);
    EXPECT_EQ(a.num_evicted_blocks, b.num_evicted_blocks);
  }
  return result;
}

TEST(PrefixCache, SimulatorTwinOfTheHandWorkedCases) {
  if (!simulator_has_prefix_cache()) GTEST_SKIP() << "simulator prefix cache not merged yet";
  SUCCEED() << "every PrefixCache case compares the simulator's records (serve_prefix)";
}

SimTime ms(double v) { return SimTime::MilliSeconds(v); }

TEST(PrefixCache, HitsSkipTheCachedUnitsAndLeaveOneTokenToCompute) {
  // Blocks of 4 tokens (B = S = U = 4), an ample cache; keys K1 = k(1), K12 = k(1, 2), ...
  auto pool = std::make_shared<std::vector<uint64_t>>();
  const std::vector<sim::RequestSpec> arrivals = {
      keyed(0, 10, 2, {1, 2}, 4, pool),  // r0: computes all 10; inserts K1, K12 at 20 ms
      keyed(1, 10, 2, {1, 2}, 4, pool),  // r1: K1, K12 cached: c = 8, computes 2
      keyed(2, 9, 1, {1, 3}, 4, pool),   // r2: K1 cached, K13 not: c = 4, computes 5
      keyed(3, 8, 1, {1, 2}, 4, pool),   // r3: (1+1) x 4 = 8 > 8 - 1: only K1, c = 4
  };
  const ServeResult run = serve_prefix(arrivals, 100);
  const std::vector<sim::RequestRecord>& r = run.records.requests;
  EXPECT_EQ(r[0].num_cached_prompt_tokens, 0);
  EXPECT_EQ(r[1].num_cached_prompt_tokens, 8);
  EXPECT_EQ(r[2].num_cached_prompt_tokens, 4);
  EXPECT_EQ(r[3].num_cached_prompt_tokens, 4);
  // r0: prefill 0-20 ms (10 + 10), decode 20-26 ms. r1: prefill of 2 tokens 1000-1012 ms.
  EXPECT_EQ(r[0].first_token, ms(20));
  EXPECT_EQ(r[0].completion, ms(26));
  EXPECT_EQ(r[1].first_token, ms(1012));
  EXPECT_EQ(r[2].first_token, ms(2015));  // 5 tokens computed
  EXPECT_EQ(r[3].first_token, ms(3014));  // 4 tokens computed
  // r1's prefill step: 2 tokens after 8 cached: 2 x 8 + 2 x 3 / 2 = 19 attention pairs.
  const ServeStepLog& r1_prefill = run.steps[2];
  ASSERT_EQ(r1_prefill.requests, std::vector<int64_t>{1});
  EXPECT_EQ(r1_prefill.shape.num_prefill_tokens, 2);
  EXPECT_EQ(r1_prefill.shape.num_prefill_cached_tokens, 8);
  EXPECT_EQ(r1_prefill.shape.num_prefill_attention_pairs, 19);
  ASSERT_EQ(run.records.prefix_cache.size(), 1u);
  const sim::PrefixCacheStats& stats = run.records.prefix_cache[0];
  EXPECT_EQ(stats.num_prompt_tokens, 10 + 10 + 9 + 8);
  EXPECT_EQ(stats.num_cached_prompt_tokens, 0 + 8 + 4 + 4);
  EXPECT_EQ(stats.num_saved_prefill_tokens, 16);
  EXPECT_EQ(stats.num_evicted_blocks, 0);
}

TEST(PrefixCache, EvictsTheLeastRecentlyFreedEntriesDeepestUnitFirst) {
  // 6 blocks of 4 tokens; each request runs alone and, with one output token, leaves at its
  // prefill's end (KV = its prompt: no unit completed by decodes).
  //  r0 (K1, K12): 2 blocks, both become entries; leaves: LRU [K12, K1] (deepest first), free 4.
  //  r1 (K3, K34): LRU [K12, K1, K34, K3], free 2.
  //  r2 (K5, K56, K567; 12 tokens): 3 new blocks, free 2: evicts K12 (1 block).
  //     LRU [K1, K34, K3, K567, K56, K5], free 0.
  //  r3 (9 tokens, K1, K12): K1 cached, K12 evicted: c = 4, 2 new blocks: claims K1 (not
  //     evicted though at the LRU head), evicts K34 and K3. Inserts K12 again; leaves:
  //     LRU [K567, K56, K5, K12, K1], free 1.
  //  r4 (9 tokens, K3, K34): both evicted: c = 0, 3 blocks: evicts K567, K56. Leaves:
  //     LRU [K5, K12, K1, K34, K3], free 1.
  //  r5 (13 tokens, K5, K56, K567): K5 only (K56 was evicted): c = 4, 3 new blocks: claims
  //     K5, evicts K12 and K1.
  // Evicted blocks: 1 + 2 + 2 + 2 = 7.
  auto pool = std::make_shared<std::vector<uint64_t>>();
  const std::vector<sim::RequestSpec> arrivals = {
      keyed(0, 8, 1, {1, 2}, 4, pool),     keyed(1, 8, 1, {3, 4}, 4, pool),
      keyed(2, 12, 1, {5, 6, 7}, 4, pool), keyed(3, 9, 1, {1, 2}, 4, pool),
      keyed(4, 9, 1, {3, 4}, 4, pool),     keyed(5, 13, 1, {5, 6, 7}, 4, pool),
  };
  const ServeResult run = serve_prefix(arrivals, 6);
  std::vector<int64_t> cached;
  for (const sim::RequestRecord& r : run.records.requests) {
    cached.push_back(r.num_cached_prompt_tokens);
  }
  EXPECT_EQ(cached, (std::vector<int64_t>{0, 0, 0, 4, 0, 4}));
  EXPECT_EQ(run.records.prefix_cache[0].num_evicted_blocks, 7);
  EXPECT_EQ(run.records.prefix_cache[0].num_saved_prefill_tokens, 8);
  EXPECT_EQ(run.records.requests[5].first_token, ms(5000 + 10 + 9));  // 13 - 4 computed
}

TEST(PrefixCache, APreemptedSequenceRecomputesWithWhatIsStillCachedOnly) {
  // 5 blocks of 4 tokens. r0 (K1, K12) and r1 (K3, K34), 8-token prompts, 6 output tokens,
  // arrive together: one prefill step 0-26 ms (10 + 16); all four units become entries held
  // by their sequences; free 1.
  //  26 ms: r0's decode needs a block (its KV reaches 9 tokens): the free one. r1 needs one:
  //     none free, the LRU empty: r1 (the most recent) preempts itself; its entries become
  //     evictable: LRU [K34, K3]. Decode of r0 alone, 26-32 ms.
  //  32, 38, 44 ms: r1's recompute (9 tokens: K3, K34 cached, c = 8, 1 new block) does not fit
  //     (free 0 + evictable 2 - its own matched 2 = 0); r0 decodes.
  //  50 ms: r0 needs a block: evicts K34, the LRU head (1 block). r0 emits its 6th token at
  //     56 ms and leaves: its decodes completed unit 2 (tokens 8-11, KV 13 tokens), inserted;
  //     LRU [K3, K2s, K12, K1] (K2s: unit 2's stream key), free 1.
  //  56 ms: r1's recompute finds K3 but not K34 (evicted: no hit): c = 4, 2 new blocks:
  //     evicts K2s. Prefill of 5 tokens 56-71 ms; its 2nd token, 45 ms after its first.
  //  71-89 ms: 3 decodes; at 89 ms its KV reaches 13 tokens: evicts K12. Done at 95 ms.
  auto pool = std::make_shared<std::vector<uint64_t>>();
  const std::vector<sim::RequestSpec> arrivals = {keyed(0, 8, 6, {1, 2}, 4, pool),
                                                  keyed(0, 8, 6, {3, 4}, 4, pool)};
  const ServeResult run = serve_prefix(arrivals, 5);
  const std::vector<sim::RequestRecord>& r = run.records.requests;
  EXPECT_EQ(r[0].completion, ms(56));
  EXPECT_EQ(r[1].num_preemptions, 1);
  EXPECT_EQ(r[1].num_cached_prompt_tokens, 0);  // at its first admission
  EXPECT_EQ(r[1].max_itl, ms(45));
  EXPECT_EQ(r[1].completion, ms(95));
  const auto recompute = std::find_if(run.steps.begin(), run.steps.end(), [](const auto& step) {
    return step.prefill && step.start == ms(56);
  });
  ASSERT_NE(recompute, run.steps.end());
  EXPECT_EQ(recompute->shape.num_prefill_tokens, 5);
  EXPECT_EQ(recompute->shape.num_prefill_cached_tokens, 4);
  const sim::PrefixCacheStats& stats = run.records.prefix_cache[0];
  EXPECT_EQ(stats.num_cached_prompt_tokens, 0);
  EXPECT_EQ(stats.num_saved_prefill_tokens, 4);  // the recompute's K3
  EXPECT_EQ(stats.num_evicted_blocks, 3);        // K34, K2s, K12
}

TEST(PrefixCache, ChunkedPrefillBudgetsOnlyTheComputedTokens) {
  // chunked_prefill, budget 1000: r1 (K1, K12 cached from r0) computes 2 tokens; the step
  // that admits it also decodes r0 (mixed step), and its chunk starts after 8 cached tokens.
  auto pool = std::make_shared<std::vector<uint64_t>>();
  const std::vector<sim::RequestSpec> arrivals = {keyed(0, 10, 50, {1, 2}, 4, pool),
                                                  keyed(0.1, 10, 2, {1, 2}, 4, pool)};
  const ServeResult run = serve_prefix(arrivals, 100, sim::BatchingPolicy::kChunkedPrefill);
  const auto admit = std::find_if(run.steps.begin(), run.steps.end(), [](const auto& step) {
    return step.prefill && step.start >= ms(100);
  });
  ASSERT_NE(admit, run.steps.end());
  EXPECT_EQ(admit->shape.num_decode_seqs, 1);
  EXPECT_EQ(admit->shape.num_prefill_tokens, 2);
  EXPECT_EQ(admit->shape.num_prefill_cached_tokens, 8);
  EXPECT_EQ(run.records.requests[1].num_cached_prompt_tokens, 8);
}

TEST(PrefixCache, UnitsOfSeveralEngineBlocksAndBlocksOfSeveralKeyedBlocks) {
  // S = 8 on B = 4: units of 8 tokens (2 blocks), keyed by k(1), k(1, 2). S = 2 on B = 4:
  // units of 4 tokens keyed by the 2nd, 4th, ... keyed block.
  auto pool = std::make_shared<std::vector<uint64_t>>();
  const std::vector<sim::RequestSpec> big = {keyed(0, 20, 1, {1, 2}, 8, pool),
                                             keyed(1, 20, 1, {1, 2}, 8, pool)};
  EXPECT_EQ(serve_prefix(big, 100).records.requests[1].num_cached_prompt_tokens, 16);
  const std::vector<sim::RequestSpec> small = {keyed(0, 10, 1, {1, 2, 3, 4, 5}, 2, pool),
                                               keyed(1, 10, 1, {1, 2, 3, 9, 5}, 2, pool)};
  // Units: k(1,2), k(1,2,3,4): the second request shares the first unit only.
  EXPECT_EQ(serve_prefix(small, 100).records.requests[1].num_cached_prompt_tokens, 4);
  const std::vector<sim::RequestSpec> odd = {keyed(0, 12, 1, {1, 2}, 6, pool)};
  try {
    serve_prefix(odd, 100);
    ADD_FAILURE() << "expected InputError";
  } catch (const sim::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "serve: arrivals[0].prefix.block_tokens: 6 tokens per keyed block neither "
                 "divides nor is a multiple of block_size_tokens 4");
  }
}

/// Random keyed workloads: requests drawing their prompts from a few shared prefixes (a
/// common first block, then one of a few second blocks), on a small KV cache so that entries
/// are evicted and decodes preempt.
Case keyed_random(uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto uniform = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  const int32_t block = seed % 3 == 0 ? 8 : 4;
  Case c{limits(uniform(2, 8), uniform(16, 120), 4, uniform(30, 120)), {}, seed % 2 == 1};
  auto pool = std::make_shared<std::vector<uint64_t>>();
  int64_t ms_now = 0;
  for (int64_t i = uniform(10, 60); i > 0; --i) {
    ms_now += uniform(0, 8);
    const int64_t prompt = uniform(1, 90);
    std::vector<uint64_t> hashes;
    for (int64_t j = 0; j < prompt / block; ++j) {
      hashes.push_back(j == 0   ? 1
                       : j == 1 ? static_cast<uint64_t>(uniform(2, 4))
                                : static_cast<uint64_t>(uniform(5, 7) + 10 * j));
    }
    c.arrivals.push_back(
        keyed(static_cast<double>(ms_now) / 1000, prompt, uniform(1, 30), hashes, block, pool));
  }
  return c;
}

class PrefixTwinTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PrefixTwinTest, ReferenceSchedulerAndSimulatorAgreeWithPrefixCaching) {
  const sim::BatchingPolicy policy = sim::parse_batching_policy(GetParam(), "twin test");
  int64_t hits = 0, evicted = 0, preemptions = 0;
  for (uint64_t seed = 1; seed <= 60; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const Case c = keyed_random(seed);
    ServeConfig config = c.limits;
    config.policy = policy;
    config.prefix_caching = true;
    config.max_num_batched_tokens = std::max(config.max_num_batched_tokens, config.max_num_seqs);
    ShapeRecordingPredictor loop_predictor(c.whole_ms);
    VirtualServeClock clock;
    PredictedStepExecutor executor(clock, loop_predictor);
    const ServeResult loop = serve(c.arrivals, config, executor, clock);
    ASSERT_EQ(loop.records.prefix_cache.size(), 1u);
    const sim::PrefixCacheStats& stats = loop.records.prefix_cache[0];
    hits += stats.num_cached_prompt_tokens;
    evicted += stats.num_evicted_blocks;
    preemptions += loop.records.num_preemptions;
    int64_t cached = 0;
    for (const sim::RequestRecord& r : loop.records.requests) cached += r.num_cached_prompt_tokens;
    EXPECT_EQ(cached, stats.num_cached_prompt_tokens);
    EXPECT_GE(stats.num_saved_prefill_tokens, stats.num_cached_prompt_tokens);

    ShapeRecordingPredictor sim_predictor(c.whole_ms);
    sim::Workload workload;
    workload.open_loop = c.arrivals;
    sim::FleetConfig fleet;
    fleet.serving = config.serving();
    const sim::SimResult simulated = sim::simulate(workload, fleet, sim_predictor, seed);
    if (simulated.prefix_cache.empty()) continue;  // checked after the loop
    ASSERT_EQ(loop.steps.size(), sim_predictor.shapes.size()) << "number of steps";
    for (size_t i = 0; i < loop.steps.size(); ++i) {
      ASSERT_TRUE(same_shape(loop.steps[i].shape, sim_predictor.shapes[i]))
          << "step " << i << ": reference " << describe(loop.steps[i].shape) << ", simulator "
          << describe(sim_predictor.shapes[i]);
    }
    expect_same_records(loop.records, simulated);
    for (size_t i = 0; i < loop.records.requests.size(); ++i) {
      EXPECT_EQ(loop.records.requests[i].num_cached_prompt_tokens,
                simulated.requests[i].num_cached_prompt_tokens)
          << "request " << i;
    }
    const sim::PrefixCacheStats& s = simulated.prefix_cache[0];
    EXPECT_EQ(stats.num_prompt_tokens, s.num_prompt_tokens);
    EXPECT_EQ(stats.num_cached_prompt_tokens, s.num_cached_prompt_tokens);
    EXPECT_EQ(stats.num_saved_prefill_tokens, s.num_saved_prefill_tokens);
    EXPECT_EQ(stats.num_evicted_blocks, s.num_evicted_blocks);
  }
  std::cout << "[twin prefix] " << GetParam() << ": " << hits << " cached prompt tokens, "
            << evicted << " evicted blocks, " << preemptions << " preemptions\n";
  EXPECT_GT(hits, 0);
  EXPECT_GT(evicted, 0);
  EXPECT_GT(preemptions, 0);
  if (!simulator_has_prefix_cache()) GTEST_SKIP() << "simulator prefix cache not merged yet";
}

INSTANTIATE_TEST_SUITE_P(EveryPolicy, PrefixTwinTest,
                         ::testing::Values("static", "continuous", "chunked_prefill"));

}  // namespace
}  // namespace llmcap::serve
