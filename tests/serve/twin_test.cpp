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
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "model/step_time.h"
#include "serve/clock.h"
#include "serve/config.h"
#include "serve/serving_loop.h"
#include "serve/step_executor.h"
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

}  // namespace
}  // namespace llmcap::serve
