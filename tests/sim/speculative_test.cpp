// Speculative decoding in the simulator against hand-worked sequences: each decode step
// verifies k draft tokens per sequence and advances it by the accepted ones, the token budget
// counts the drafts, and tokens and blocks are conserved. Semantics: sim/simulator.h
// ("Speculative decoding").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "sim/input_error.h"
#include "sim/simulator.h"
#include "sim_test_helpers.h"

namespace llmcap::sim {
namespace {

using testing::chunks;
using testing::error_of;
using testing::expect_shapes;
using ::testing::HasSubstr;
using testing::mixed;
using testing::ms;
using testing::one_replica;
using testing::open_loop;
using testing::prefill;
using testing::RecordingPredictor;
using testing::request;
using testing::verify;

constexpr double kStepS = 0.001;  // every step lasts 1 ms, whatever its tokens

FleetConfig speculative_replica(BatchingPolicy policy, int64_t block_size_tokens, int64_t blocks,
                                std::vector<double> rates) {
  FleetConfig fleet = one_replica(policy, block_size_tokens, blocks);
  fleet.serving.speculative.num_draft_tokens = static_cast<int64_t>(rates.size());
  fleet.serving.speculative.acceptance_rates = std::move(rates);
  return fleet;
}

TEST(SpeculativeDecoding, EachStepVerifiesTheDraftsAndKeepsTheAcceptedOnes) {
  // k = 2, both drafts always accepted: 3 tokens per decode step. Prompt 4, output 10: the
  // prefill emits token 1, then steps at context 5, 8, 11 emit 3 each (10 in all).
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult r =
      simulate(open_loop({request(0, 4, 10)}),
               speculative_replica(BatchingPolicy::kContinuous, 4, 64, {1.0, 1.0}), predictor, 1);
  expect_shapes(predictor.shapes,
                {prefill(1, 4, 10), verify(1, 5, 2), verify(1, 8, 2), verify(1, 11, 2)});
  EXPECT_EQ(r.requests[0].first_token, ms(1));
  EXPECT_EQ(r.requests[0].completion, ms(4));
  EXPECT_EQ(r.requests[0].max_itl, ms(1));
}

TEST(SpeculativeDecoding, FractionalAcceptanceAdvancesByTheRunningFloor) {
  // 1 + 0.5 + 0.25 = 1.75 tokens per step: step n advances floor((n + 1) 1.75) - floor(n
  // 1.75) = 1, 2, 2, 2, 1, 2 tokens (1, 3, 5, 7, 8, 10 in all). After its first token the
  // request needs 9 more: the sixth decode step ends it, one token past its end unused.
  const RecordingPredictor predictor(kStepS, 0);
  const SimResult r =
      simulate(open_loop({request(0, 4, 10)}),
               speculative_replica(BatchingPolicy::kContinuous, 4, 64, {0.5, 0.25}), predictor, 1);
  expect_shapes(predictor.shapes,
                {prefill(1, 4, 10), verify(1, 5, 2), verify(1, 6, 2), verify(1, 8, 2),
                 verify(1, 10, 2), verify(1, 12, 2), verify(1, 13, 2)});
  EXPECT_EQ(r.requests[0].completion, ms(7));
}

TEST(SpeculativeDecoding, TheChunkBudgetCountsEveryDecodesDrafts) {
  // Budget 8, k = 2: A's decode takes 1 + 2 tokens of it, so B (prompt 10, arrived during
  // A's prefill) gets a first chunk of 5 and its last 5 in the next step.
  FleetConfig fleet = speculative_replica(BatchingPolicy::kChunkedPrefill, 4, 64, {1.0, 1.0});
  fleet.serving.max_num_seqs = 2;
  fleet.serving.max_num_batched_tokens = 8;
  const RecordingPredictor predictor(kStepS, 0);
  simulate(open_loop({request(0, 4, 7), request(0.5, 10, 1)}), fleet, predictor, 1);
  expect_shapes(predictor.shapes,
                {chunks(1, 4, 10, 0, 1), mixed(chunks(1, 5, 15, 0, 0), verify(1, 5, 2)),
                 mixed(chunks(1, 5, 5 * 5 + 15, 5, 1), verify(1, 8, 2))});
}

TEST(SpeculativeDecoding, WithNothingAcceptedTheStepsAreThoseOfPlainDecoding) {
  // Acceptance 0 at every position: one token per step, as without drafts, so every request
  // has the same timeline (the predictor ignores the drafts' tokens), preemptions included.
  std::vector<RequestSpec> requests;
  for (int i = 0; i < 40; ++i) {
    requests.push_back(request(0.3 * i, 20 + (i * 37) % 90, 1 + (i * 53) % 70));
  }
  const RecordingPredictor plain_predictor(kStepS, 0);
  const RecordingPredictor spec_predictor(kStepS, 0);
  const FleetConfig plain = one_replica(BatchingPolicy::kChunkedPrefill, 16, 40);
  const FleetConfig spec =
      speculative_replica(BatchingPolicy::kChunkedPrefill, 16, 40, {0.0, 0.0, 0.0});
  const SimResult a = simulate(open_loop(requests), plain, plain_predictor, 7);
  const SimResult b = simulate(open_loop(requests), spec, spec_predictor, 7);
  ASSERT_GT(a.num_preemptions, 0);
  EXPECT_EQ(a.num_preemptions, b.num_preemptions);
  ASSERT_EQ(a.requests.size(), b.requests.size());
  for (size_t i = 0; i < a.requests.size(); ++i) {
    EXPECT_EQ(a.requests[i].first_token, b.requests[i].first_token) << "request " << i;
    EXPECT_EQ(a.requests[i].completion, b.requests[i].completion) << "request " << i;
    EXPECT_EQ(a.requests[i].max_itl, b.requests[i].max_itl) << "request " << i;
  }
  ASSERT_EQ(spec_predictor.shapes.size(), plain_predictor.shapes.size());
  for (const model::BatchShape& s : spec_predictor.shapes) {
    EXPECT_EQ(s.num_decode_draft_tokens, 3 * s.num_decode_seqs);
  }
}

TEST(SpeculativeDecoding, ConservesTokensAndBlocksUnderPreemption) {
  // A small KV cache and long outputs force preemptions while sequences advance 2.5 tokens
  // per step on average. The run's end checks (every request's tokens emitted exactly once,
  // every block free) abort on a violation; here: everything finished, in fewer decode steps
  // than tokens, and each request's last token no earlier than its first.
  std::vector<RequestSpec> requests;
  for (int i = 0; i < 60; ++i) {
    requests.push_back(request(0.2 * i, 10 + (i * 29) % 60, 2 + (i * 41) % 120));
  }
  for (const BatchingPolicy policy :
       {BatchingPolicy::kContinuous, BatchingPolicy::kChunkedPrefill}) {
    SCOPED_TRACE(batching_policy_name(policy));
    FleetConfig fleet = speculative_replica(policy, 4, 90, {0.9, 0.4, 0.2});
    fleet.serving.max_num_batched_tokens = 1024;
    const RecordingPredictor predictor(kStepS, 0.0001);
    const SimResult r = simulate(open_loop(requests), fleet, predictor, 3);
    EXPECT_GT(r.num_preemptions, 0);
    int64_t decode_steps = 0;
    int64_t decoded_tokens = 0;
    for (const model::BatchShape& s : predictor.shapes) {
      decode_steps += s.num_decode_seqs > 0 ? 1 : 0;
      EXPECT_EQ(s.num_decode_draft_tokens, 3 * s.num_decode_seqs);
    }
    for (const RequestRecord& rec : r.requests) {
      ASSERT_FALSE(rec.rejected);
      EXPECT_GE(rec.completion, rec.first_token);
      decoded_tokens += rec.num_output_tokens - 1;
    }
    EXPECT_LT(decode_steps, decoded_tokens);
  }
}

TEST(SpeculativeDecoding, RefusesRatesThatAreNotNonIncreasingFractions) {
  const RecordingPredictor predictor(kStepS, 0);
  const Workload w = open_loop({request(0, 4, 4)});
  FleetConfig fleet = speculative_replica(BatchingPolicy::kContinuous, 4, 64, {0.8, 1.2});
  EXPECT_THAT(error_of([&] { simulate(w, fleet, predictor, 1); }),
              HasSubstr("serving.speculative.acceptance_rates[1]: expected a fraction in [0, 1], "
                        "got 1.2"));
  fleet = speculative_replica(BatchingPolicy::kContinuous, 4, 64, {0.5, 0.7});
  EXPECT_THAT(error_of([&] { simulate(w, fleet, predictor, 1); }),
              HasSubstr("serving.speculative.acceptance_rates[1]: expected at most 0.5 (a draft "
                        "position is accepted only when every earlier one is), got 0.7"));
  fleet.serving.speculative.num_draft_tokens = 3;
  EXPECT_THAT(error_of([&] { simulate(w, fleet, predictor, 1); }),
              HasSubstr("serving.speculative.acceptance_rates: expected one rate per draft token "
                        "(3), got 2"));
  fleet = speculative_replica(BatchingPolicy::kChunkedPrefill, 4, 64, {0.5, 0.5});
  fleet.serving.max_num_seqs = 4;
  fleet.serving.max_num_batched_tokens = 8;
  EXPECT_THAT(error_of([&] { simulate(w, fleet, predictor, 1); }),
              HasSubstr("serving.max_num_batched_tokens: chunked_prefill gives every running "
                        "decode 3 tokens (1 + its draft tokens) of the step's budget, so it must "
                        "be >= 3 x serving.max_num_seqs (12), got 8"));
}

}  // namespace
}  // namespace llmcap::sim
