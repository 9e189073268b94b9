// The serving loop (serve/serving_loop.h) with continuous batching: hand-worked step
// sequences, the simulator record for record, the reference decoder driven step by step, and
// bad input. (Moved from tests/cli/serve_bench_test.cpp; every policy against the simulator is
// tests/serve/twin_test.cpp.)
#include "serve/serving_loop.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/decoder.h"
#include "kernels/thread_pool.h"
#include "serve/clock.h"
#include "serve/decoder_step_executor.h"
#include "serve/serve_test_helpers.h"
#include "serve/step_executor.h"
#include "sim/input_error.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace llmcap::serve {
namespace {

using sim::SimTime;
using ::testing::HasSubstr;

using serve::testing::LinearPredictor;
using serve::testing::request;

SimTime ms(double v) { return SimTime::MilliSeconds(v); }

/// The loop in virtual time, each step lasting what `predictor` says (and running `inner`).
ServeResult serve_virtually(const std::vector<sim::RequestSpec>& arrivals,
                            const ServeConfig& config, const model::StepTimePredictor& predictor,
                            StepExecutor* inner = nullptr) {
  VirtualServeClock clock;
  PredictedStepExecutor executor(clock, predictor, inner);
  return serve(arrivals, config, executor, clock);
}

sim::SimResult simulate_same(const std::vector<sim::RequestSpec>& arrivals,
                             const ServeConfig& config, const model::StepTimePredictor& predictor) {
  sim::Workload workload;
  workload.open_loop = arrivals;
  sim::FleetConfig fleet;
  fleet.serving = config.serving();
  return sim::simulate(workload, fleet, predictor, 1);
}

void expect_same_records(const sim::SimResult& loop, const sim::SimResult& simulated) {
  ASSERT_EQ(loop.requests.size(), simulated.requests.size());
  for (size_t i = 0; i < loop.requests.size(); ++i) {
    const sim::RequestRecord& a = loop.requests[i];
    const sim::RequestRecord& b = simulated.requests[i];
    SCOPED_TRACE("request " + std::to_string(i));
    EXPECT_EQ(a.id, b.id);
    EXPECT_EQ(a.arrival, b.arrival);
    EXPECT_EQ(a.first_scheduled, b.first_scheduled);
    EXPECT_EQ(a.first_token, b.first_token);
    EXPECT_EQ(a.completion, b.completion);
    EXPECT_EQ(a.num_preemptions, b.num_preemptions);
    EXPECT_EQ(a.max_itl, b.max_itl);
    EXPECT_EQ(a.rejected, b.rejected);
    EXPECT_EQ(a.num_prompt_tokens, b.num_prompt_tokens);
    EXPECT_EQ(a.num_output_tokens, b.num_output_tokens);
  }
  EXPECT_EQ(loop.num_steps, simulated.num_steps);
  EXPECT_EQ(loop.num_preemptions, simulated.num_preemptions);
  EXPECT_EQ(loop.num_rejected, simulated.num_rejected);
  EXPECT_EQ(loop.end_time, simulated.end_time);
}

TEST(ServeLoop, ThreeRequestsFollowTheHandWorkedStepSequence) {
  // A (t=0, prompt 4, output 3), B (t=1 ms, 6, 2), C (t=2 ms, 3, 2); max_num_seqs 2.
  //  0-14 ms  prefill A (4 tokens: 10 + 4 ms)        A's first token at 14
  // 14-30     prefill B (C waits: 2 running)         B's first token at 30
  // 30-37     decode A, B (5 + 2 ms)                 B done (2 tokens)
  // 37-50     prefill C (3 tokens)                   C's first token at 50
  // 50-57     decode A, C                            A done (3 tokens), C done
  const std::vector<sim::RequestSpec> arrivals = {request(0, 4, 3), request(0.001, 6, 2),
                                                  request(0.002, 3, 2)};
  ServeConfig config;
  config.max_num_seqs = 2;
  config.max_num_batched_tokens = 8;
  config.block_size_tokens = 4;
  config.num_kv_blocks = 100;
  const LinearPredictor predictor;
  const ServeResult result = serve_virtually(arrivals, config, predictor);

  struct Expected {
    double start_ms, end_ms;
    bool prefill;
    std::vector<int64_t> requests;
  };
  const std::vector<Expected> expected = {{0, 14, true, {0}},
                                          {14, 30, true, {1}},
                                          {30, 37, false, {0, 1}},
                                          {37, 50, true, {2}},
                                          {50, 57, false, {0, 2}}};
  ASSERT_EQ(result.steps.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    EXPECT_EQ(result.steps[i].start, ms(expected[i].start_ms));
    EXPECT_EQ(result.steps[i].exec_start, ms(expected[i].start_ms));
    EXPECT_EQ(result.steps[i].end, ms(expected[i].end_ms));
    EXPECT_EQ(result.steps[i].prefill, expected[i].prefill);
    EXPECT_EQ(result.steps[i].requests, expected[i].requests);
  }
  // Shapes as the simulator composes them: B's prefill and the first decode.
  EXPECT_EQ(result.steps[1].shape.num_prefill_tokens, 6);
  EXPECT_EQ(result.steps[1].shape.num_prefill_attention_pairs, 6 * 7 / 2);
  EXPECT_EQ(result.steps[1].shape.num_prefill_seqs_completing, 1);
  EXPECT_EQ(result.steps[2].shape.num_decode_seqs, 2);
  EXPECT_EQ(result.steps[2].shape.num_decode_context_tokens, (4 + 1) + (6 + 1));

  const auto& r = result.records.requests;
  EXPECT_EQ(r[0].first_token, ms(14));
  EXPECT_EQ(r[0].completion, ms(57));
  EXPECT_EQ(r[0].max_itl, ms(23));  // 14 -> 37
  EXPECT_EQ(r[1].first_scheduled, ms(14));
  EXPECT_EQ(r[1].first_token, ms(30));
  EXPECT_EQ(r[1].completion, ms(37));
  EXPECT_EQ(r[2].first_scheduled, ms(37));
  EXPECT_EQ(r[2].first_token, ms(50));
  EXPECT_EQ(r[2].completion, ms(57));
  EXPECT_EQ(result.records.num_steps, 5);
  EXPECT_EQ(result.loop_overhead_s, 0.0);  // virtual time: no loop overhead
  expect_same_records(result.records, simulate_same(arrivals, config, predictor));
}

TEST(ServeLoop, PrefillAdmitsUpToTheTokenBudgetAndAFirstLongPromptAlone) {
  // Budget 8: A (5) and B (3) share a prefill; C (9, over the budget) goes alone next.
  const std::vector<sim::RequestSpec> arrivals = {request(0, 5, 1), request(0, 3, 1),
                                                  request(0, 9, 1)};
  ServeConfig config;
  config.max_num_seqs = 4;
  config.max_num_batched_tokens = 8;
  config.block_size_tokens = 4;
  config.num_kv_blocks = 100;
  const LinearPredictor predictor;
  const ServeResult result = serve_virtually(arrivals, config, predictor);
  ASSERT_EQ(result.steps.size(), 2u);
  EXPECT_EQ(result.steps[0].requests, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(result.steps[0].end, ms(18));
  EXPECT_EQ(result.steps[1].requests, (std::vector<int64_t>{2}));
  EXPECT_EQ(result.steps[1].end, ms(18 + 19));
  expect_same_records(result.records, simulate_same(arrivals, config, predictor));
}

TEST(ServeLoop, MatchesTheSimulatorRecordForRecordUnderPreemptionAndRejection) {
  // A tight KV cache (24 blocks of 4 tokens) and bursts of arrivals: decodes preempt, and the
  // 100 + 10 token request never fits (28 blocks) and is rejected.
  const std::vector<sim::LengthSample> lengths = {{10, 20},  {30, 5}, {5, 40}, {60, 30},
                                                  {100, 10}, {1, 1},  {7, 2}};
  ServeConfig config;
  config.max_num_seqs = 6;
  config.max_num_batched_tokens = 40;
  config.block_size_tokens = 4;
  config.num_kv_blocks = 24;
  const LinearPredictor predictor(/*with_context=*/true);
  for (const uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const std::vector<sim::RequestSpec> arrivals = sim::poisson_arrivals(30, 300, lengths, seed);
    const ServeResult result = serve_virtually(arrivals, config, predictor);
    EXPECT_GT(result.records.num_preemptions, 0);
    EXPECT_GT(result.records.num_rejected, 0);
    expect_same_records(result.records, simulate_same(arrivals, config, predictor));
    ASSERT_EQ(static_cast<int64_t>(result.steps.size()), result.records.num_steps);
  }
}

kernels::DecoderShape tiny_shape() {
  kernels::DecoderShape s;
  s.hidden = 64;
  s.intermediate = 96;
  s.num_layers = 2;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.head_dim = 16;
  s.vocab = 50;
  return s;
}

TEST(ServeLoop, DrivesTheReferenceDecoderThroughPrefillsDecodesAndRecomputes) {
  // The real decoder runs every step (slots, KV contexts and recomputes checked by the
  // executor); time is virtual, so the records are the simulator's.
  const std::vector<sim::LengthSample> lengths = {{10, 12}, {20, 5}, {4, 30}, {30, 10}};
  ServeConfig config;
  config.max_num_seqs = 4;
  config.max_num_batched_tokens = 48;
  config.block_size_tokens = 4;
  config.num_kv_blocks = 16;
  const std::vector<sim::RequestSpec> arrivals = sim::poisson_arrivals(40, 60, lengths, 7);
  kernels::ThreadPool pool(1);  // threaded prefill is covered by tests/kernels
  kernels::ReferenceDecoder decoder(tiny_shape(), kernels::WeightFormat::kF32,
                                    kernels::KvType::kBf16, config.max_num_seqs, 40, 3);
  DecoderStepExecutor real(decoder, pool, 11);
  const LinearPredictor predictor(/*with_context=*/true);
  const ServeResult result = serve_virtually(arrivals, config, predictor, &real);
  EXPECT_GT(result.records.num_preemptions, 0);
  expect_same_records(result.records, simulate_same(arrivals, config, predictor));
  for (const sim::RequestRecord& r : result.records.requests) {
    EXPECT_EQ(static_cast<int64_t>(real.emitted(r.id).size()), r.num_output_tokens)
        << "request " << r.id;
    for (const int64_t token : real.emitted(r.id)) {
      EXPECT_GE(token, 0);
      EXPECT_LT(token, 50);
    }
  }
}

TEST(ServeLoop, DecoderExecutorRefusesAStepThatDisagreesWithTheDecoder) {
  kernels::ThreadPool pool(1);
  kernels::ReferenceDecoder decoder(tiny_shape(), kernels::WeightFormat::kF32,
                                    kernels::KvType::kF32, 2, 16, 3);
  DecoderStepExecutor executor(decoder, pool, 1);
  ServeStep decode;
  decode.items.push_back({0, 1, 5, 1});  // slot 1 holds nothing, the loop expects 5 KV tokens
  try {
    executor.execute(decode);
    ADD_FAILURE() << "expected logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("request 0 in slot 1: the decoder holds 0 KV tokens, the loop "
                          "expects 5"));
  }
  ServeStep prefill;
  ServeStepItem recompute{3, 0, 5, 2};  // a recompute of 2 tokens never emitted
  recompute.kind = ServeStepItem::Kind::kPrefill;
  recompute.num_chunk_tokens = 5 + 2;
  prefill.items.push_back(recompute);
  try {
    executor.execute(prefill);
    ADD_FAILURE() << "expected logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("request 3 has 0 tokens kept, the loop says 2 emitted"));
  }
  ServeStep chunk;
  ServeStepItem later{4, 1, 9, 0};  // a second chunk of 3 tokens after 3 cached
  later.kind = ServeStepItem::Kind::kPrefill;
  later.num_cached_tokens = 3;
  later.num_chunk_tokens = 3;
  chunk.items.push_back(later);
  try {
    executor.execute(chunk);
    ADD_FAILURE() << "expected logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("request 4 in slot 1: the decoder holds 0 KV tokens, the loop's chunk "
                          "starts after 3"));
  }
}

TEST(ServeLoop, DrivesTheReferenceDecoderUnderEveryPolicy) {
  // Static batches, continuous batching and chunked prefill (a budget of 8 tokens splits the
  // prompts into chunks that share steps with decodes) on the real decoder, in virtual time:
  // the executor checks every slot's KV against the loop, and the records are the simulator's.
  const std::vector<sim::LengthSample> lengths = {{10, 12}, {20, 5}, {4, 30}, {30, 10}, {1, 1}};
  const std::vector<sim::RequestSpec> arrivals = sim::poisson_arrivals(40, 40, lengths, 5);
  const LinearPredictor predictor(/*with_context=*/true);
  for (const char* name : {"static", "continuous", "chunked_prefill"}) {
    SCOPED_TRACE(name);
    ServeConfig config;
    config.policy = sim::parse_batching_policy(name, "test");
    config.max_num_seqs = 4;
    config.max_num_batched_tokens = 8;
    config.block_size_tokens = 4;
    config.num_kv_blocks = 16;
    kernels::ThreadPool pool(1);
    kernels::ReferenceDecoder decoder(tiny_shape(), kernels::WeightFormat::kF32,
                                      kernels::KvType::kBf16, config.max_num_seqs, 40, 3);
    DecoderStepExecutor real(decoder, pool, 11);
    const ServeResult result = serve_virtually(arrivals, config, predictor, &real);
    expect_same_records(result.records, simulate_same(arrivals, config, predictor));
    EXPECT_GT(result.records.num_preemptions, 0);
    int64_t chunks = 0;
    for (const ServeStepLog& step : result.steps) {
      chunks += step.shape.num_prefill_cached_tokens > 0;
    }
    EXPECT_EQ(chunks > 0, config.policy == sim::BatchingPolicy::kChunkedPrefill);
    for (const sim::RequestRecord& r : result.records.requests) {
      EXPECT_EQ(static_cast<int64_t>(real.emitted(r.id).size()), r.num_output_tokens)
          << "request " << r.id;
    }
  }
}

/// A request whose prompt's whole blocks of 4 tokens carry `hashes` (kept in `pool`), with a
/// stream of its own after them unless `stream` is given.
sim::RequestSpec keyed_request(double arrival_s, int64_t prompt, int64_t output,
                               const std::vector<uint64_t>& hashes,
                               std::shared_ptr<std::vector<uint64_t>>& pool, uint64_t stream = 0) {
  sim::RequestSpec r = request(arrival_s, prompt, output);
  r.prefix.hashes = pool;
  r.prefix.begin = static_cast<int64_t>(pool->size());
  r.prefix.count = static_cast<int32_t>(hashes.size());
  r.prefix.block_tokens = 4;
  r.prefix.stream = stream != 0 ? stream : 1000 + pool->size();
  pool->insert(pool->end(), hashes.begin(), hashes.end());
  return r;
}

TEST(ServeLoop, PrefixCachingReusesTheKvAndDecodesTheSameTokens) {
  // Prompts built from a common first block and one of three second blocks (then blocks of
  // their own), on the real decoder in virtual time, with and without prefix caching: the
  // greedy tokens of every request are the same, and every token the cache saved was KV
  // copied into a slot rather than computed. A small KV cache makes entries evicted and
  // decodes preempt.
  auto pool = std::make_shared<std::vector<uint64_t>>();
  std::vector<sim::RequestSpec> arrivals;
  for (int64_t i = 0; i < 24; ++i) {
    const int64_t prompt = 9 + (i * 7) % 20;
    std::vector<uint64_t> hashes = {1, static_cast<uint64_t>(2 + i % 3)};
    for (int64_t j = 2; j < prompt / 4; ++j) hashes.push_back(100 * static_cast<uint64_t>(i) + j);
    arrivals.push_back(
        keyed_request(0.02 * static_cast<double>(i), prompt, 3 + (i * 5) % 9, hashes, pool));
  }
  const LinearPredictor predictor(/*with_context=*/true);
  for (const char* name : {"static", "continuous", "chunked_prefill"}) {
    SCOPED_TRACE(name);
    ServeConfig config;
    config.policy = sim::parse_batching_policy(name, "test");
    config.max_num_seqs = 4;
    config.max_num_batched_tokens = 12;
    config.block_size_tokens = 4;
    config.num_kv_blocks = 24;
    std::vector<std::vector<int64_t>> tokens[2];
    for (const bool caching : {false, true}) {
      config.prefix_caching = caching;
      kernels::ThreadPool pool_threads(1);
      kernels::ReferenceDecoder decoder(tiny_shape(), kernels::WeightFormat::kF32,
                                        kernels::KvType::kF32, config.max_num_seqs, 48, 3);
      DecoderStepExecutor real(decoder, pool_threads, 11);
      real.set_prefixes(arrivals);
      const ServeResult result = serve_virtually(arrivals, config, predictor, &real);
      for (const sim::RequestRecord& r : result.records.requests) {
        tokens[caching].push_back(real.emitted(r.id));
        EXPECT_EQ(static_cast<int64_t>(tokens[caching].back().size()), r.num_output_tokens);
      }
      if (!caching) continue;
      const sim::PrefixCacheStats& stats = result.records.prefix_cache.at(0);
      EXPECT_GT(stats.num_cached_prompt_tokens, 0);
      EXPECT_GT(stats.num_evicted_blocks, 0);
      EXPECT_EQ(real.num_reused_kv_tokens(), stats.num_saved_prefill_tokens);
      if (config.policy != sim::BatchingPolicy::kStatic) {
        EXPECT_GT(result.records.num_preemptions, 0);
      }
    }
    EXPECT_EQ(tokens[0], tokens[1]);
  }
}

TEST(ServeLoop, DecoderExecutorRefusesCachedKvOfOtherTokenIds) {
  // r1 shares r0's first keyed block and its stream: its second unit's key is that of r0's
  // second unit, which r0's decodes completed with its own output tokens, while r1's prompt
  // has other token ids there (a multi-turn session's next turn would have r0's output).
  auto pool = std::make_shared<std::vector<uint64_t>>();
  const std::vector<sim::RequestSpec> arrivals = {keyed_request(0, 4, 10, {1}, pool, 7),
                                                  keyed_request(1, 12, 2, {1}, pool, 7)};
  ServeConfig config;
  config.max_num_seqs = 2;
  config.block_size_tokens = 4;
  config.num_kv_blocks = 16;
  config.prefix_caching = true;
  kernels::ThreadPool threads(1);
  kernels::ReferenceDecoder decoder(tiny_shape(), kernels::WeightFormat::kF32,
                                    kernels::KvType::kF32, 2, 16, 3);
  DecoderStepExecutor real(decoder, threads, 11);
  real.set_prefixes(arrivals);
  try {
    serve_virtually(arrivals, config, LinearPredictor(), &real);
    ADD_FAILURE() << "expected logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("request 1: unit 1 of its cached prefix holds the KV of other token "
                          "ids"));
  }
}

TEST(ServeLoop, RejectsBadInputWithMessage) {
  const LinearPredictor predictor;
  ServeConfig config;
  config.num_kv_blocks = 10;
  const auto message = [&](const std::vector<sim::RequestSpec>& arrivals, const ServeConfig& c) {
    try {
      serve_virtually(arrivals, c, predictor);
    } catch (const sim::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(message({request(0, 4, 0)}, config),
              HasSubstr("serve: arrivals[0]: expected arrival >= 0 and prompt and output tokens "
                        ">= 1, got arrival 0 ns, 4 and 0 tokens"));
  EXPECT_THAT(message({request(1, 4, 1), request(0.5, 4, 1)}, config),
              HasSubstr("serve: arrivals[1]: not sorted (arrives before arrivals[0])"));
  ServeConfig no_blocks = config;
  no_blocks.num_kv_blocks = 0;
  EXPECT_THAT(message({request(0, 4, 1)}, no_blocks),
              HasSubstr("serve: num_kv_blocks: expected a positive integer, got 0"));
  ServeConfig small_budget = config;
  small_budget.policy = sim::BatchingPolicy::kChunkedPrefill;
  small_budget.max_num_batched_tokens = 8;
  EXPECT_THAT(message({request(0, 4, 1)}, small_budget),
              HasSubstr("serve: max_num_batched_tokens: chunked_prefill gives every running "
                        "decode one token of the step's budget, so it must be >= max_num_seqs "
                        "(16), got 8"));
}

}  // namespace
}  // namespace llmcap::serve
