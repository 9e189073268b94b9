// Batching policies against hand-worked cases: the exact step sequence of small workloads.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/input_error.h"
#include "sim/simulator.h"
#include "sim_test_helpers.h"

namespace llmcap::sim {
namespace {

using testing::chunks;
using testing::decode;
using testing::expect_shapes;
using ::testing::HasSubstr;
using testing::mixed;
using testing::ms;
using testing::one_replica;
using testing::open_loop;
using testing::prefill;
using testing::RecordingPredictor;
using testing::request;

// ---- the same three requests under each policy -------------------------------------------------
// R0 arrives at 0 ms (prompt 10, output 3); R1 and R2 at 5 ms (prompt 20, output 2; prompt 5,
// output 1). step = 10 ms + 1 ms per new token; the KV cache (100 blocks of 16) plays no part.

Workload three_requests() {
  return open_loop({request(0, 10, 3), request(5, 20, 2), request(5, 5, 1)});
}

TEST(BatchingPolicyHandTest, ContinuousPrefillsFirstAndJoinsAtAnyStep) {
  RecordingPredictor predictor(0.010, 0.001);
  const SimResult r =
      simulate(three_requests(), one_replica(BatchingPolicy::kContinuous, 16, 100), predictor, 1);
  // t=0   prefill [R0] (10 tokens) = 20 ms.
  // t=20  R0 token 1. Prefill first: prefill [R1, R2] (25 tokens, 210 + 15 pairs) = 35 ms.
  // t=55  R1 token 1; R2 token 1 = last. decode [R0, R1] (contexts 11 + 21) = 12 ms.
  // t=67  R0 token 2 (gap 47); R1 token 2 = last (gap 12). decode [R0] (context 12) = 11 ms.
  // t=78  R0 token 3 = last (gap 11).
  expect_shapes(predictor.shapes,
                {prefill(1, 10, 55), prefill(2, 25, 225), decode(2, 32), decode(1, 12)});
  EXPECT_EQ(r.requests[0].completion, ms(78));
  EXPECT_EQ(r.requests[1].first_token, ms(55));
  EXPECT_EQ(r.requests[1].completion, ms(67));
  EXPECT_EQ(r.requests[2].completion, ms(55));
  EXPECT_EQ(r.itl_ns, (std::vector<int64_t>{ms(47).ns(), ms(12).ns(), ms(11).ns()}));
}

TEST(BatchingPolicyHandTest, StaticRunsEachBatchToTheEnd) {
  RecordingPredictor predictor(0.010, 0.001);
  const SimResult r =
      simulate(three_requests(), one_replica(BatchingPolicy::kStatic, 16, 100), predictor, 1);
  // t=0   empty replica: batch [R0]: prefill (10 tokens) = 20 ms.
  // t=5   R1, R2 arrive and wait: a batch is running.
  // t=20  R0 token 1. decode [R0] (context 11) = 11 ms.
  // t=31  R0 token 2 (gap 11). decode [R0] (context 12) = 11 ms.
  // t=42  R0 token 3 = last: the replica is empty. Batch [R1, R2]: prefill (25 tokens) = 35 ms.
  // t=77  R1 token 1; R2 token 1 = last. decode [R1] (context 21) = 11 ms.
  // t=88  R1 token 2 = last (gap 11).
  expect_shapes(predictor.shapes, {prefill(1, 10, 55), decode(1, 11), decode(1, 12),
                                   prefill(2, 25, 225), decode(1, 21)});
  const RequestRecord& r0 = r.requests[0];
  const RequestRecord& r1 = r.requests[1];
  const RequestRecord& r2 = r.requests[2];
  EXPECT_EQ(r0.first_scheduled, ms(0));
  EXPECT_EQ(r0.first_token, ms(20));
  EXPECT_EQ(r0.completion, ms(42));
  EXPECT_EQ(r0.max_itl, ms(11));
  EXPECT_EQ(r1.first_scheduled, ms(42));
  EXPECT_EQ(r1.first_token, ms(77));
  EXPECT_EQ(r1.completion, ms(88));
  EXPECT_EQ(r1.max_itl, ms(11));
  EXPECT_EQ(r2.first_scheduled, ms(42));
  EXPECT_EQ(r2.first_token, ms(77));
  EXPECT_EQ(r2.completion, ms(77));
  EXPECT_EQ(r.itl_ns, (std::vector<int64_t>{ms(11).ns(), ms(11).ns(), ms(11).ns()}));
  EXPECT_EQ(r.num_steps, 5);
  EXPECT_EQ(r.end_time, ms(88));
}

TEST(BatchingPolicyHandTest, ChunkedPrefillSharesEachStepsTokenBudget) {
  RecordingPredictor predictor(0.010, 0.001);
  FleetConfig fleet = one_replica(BatchingPolicy::kChunkedPrefill, 16, 100);
  fleet.serving.max_num_batched_tokens = 16;
  fleet.serving.max_num_seqs = 4;
  const SimResult r = simulate(three_requests(), fleet, predictor, 1);
  // Budget 16 new tokens per step.
  // t=0   no decodes; admit R0 with a chunk of all its 10 tokens (55 pairs) = 20 ms.
  // t=5   R1, R2 arrive and wait.
  // t=20  R0 token 1. decode R0 (context 11): 1 token, 15 left. Admit R1 with a chunk of 15 of
  //       its 20 tokens (120 pairs; its prefill is not finished). 16 tokens = 26 ms.
  // t=46  R0 token 2 (gap 26); R1 emits nothing. decode R0 (context 12): 15 left. R1's last
  //       5 tokens after 15 cached: 5*15 + 15 = 90 pairs, completing; 10 left. Admit R2 with
  //       all its 5 tokens (15 pairs), completing. 11 tokens = 21 ms.
  // t=67  R0 token 3 = last (gap 21); R1 token 1; R2 token 1 = last. decode R1 (context 21)
  //       = 11 ms.
  // t=78  R1 token 2 = last (gap 11).
  expect_shapes(predictor.shapes,
                {prefill(1, 10, 55), mixed(chunks(1, 15, 120, 0, 0), decode(1, 11)),
                 mixed(chunks(2, 10, 105, 15, 2), decode(1, 12)), decode(1, 21)});
  const RequestRecord& r0 = r.requests[0];
  const RequestRecord& r1 = r.requests[1];
  const RequestRecord& r2 = r.requests[2];
  EXPECT_EQ(r0.first_scheduled, ms(0));
  EXPECT_EQ(r0.first_token, ms(20));
  EXPECT_EQ(r0.completion, ms(67));
  EXPECT_EQ(r0.max_itl, ms(26));
  EXPECT_EQ(r1.first_scheduled, ms(20));  // the step of its first chunk
  EXPECT_EQ(r1.first_token, ms(67));      // the end of the step of its last chunk
  EXPECT_EQ(r1.completion, ms(78));
  EXPECT_EQ(r1.max_itl, ms(11));
  EXPECT_EQ(r2.first_scheduled, ms(46));
  EXPECT_EQ(r2.first_token, ms(67));
  EXPECT_EQ(r2.completion, ms(67));
  EXPECT_EQ(r.itl_ns, (std::vector<int64_t>{ms(26).ns(), ms(21).ns(), ms(11).ns()}));
  EXPECT_EQ(r.num_steps, 4);
  EXPECT_EQ(r.num_preemptions, 0);
}

TEST(BatchingPolicyHandTest, PrefillFirstChunksPromptsToItsBudgetBeforeAnyDecode) {
  RecordingPredictor predictor(0.010, 0.001);
  FleetConfig fleet = one_replica(BatchingPolicy::kPrefillFirst, 16, 100);
  fleet.serving.max_num_batched_tokens = 16;
  fleet.serving.max_num_seqs = 4;
  const SimResult r = simulate(three_requests(), fleet, predictor, 1);
  // Budget 16 prefill tokens per step; decodes only when no prefill can run (SGLang).
  // t=0   admit R0 with all its 10 tokens (55 pairs) = 20 ms.
  // t=5   R1, R2 arrive and wait.
  // t=20  R0 token 1. Prefill first: admit R1 with a chunk of 16 of its 20 tokens (136 pairs);
  //       the budget is spent, R2 waits. 16 tokens = 26 ms; R0 does not decode.
  // t=46  R1's last 4 tokens after 16 (4*16 + 10 = 74 pairs), then R2's 5 (15 pairs), both
  //       completing. 9 tokens = 19 ms.
  // t=65  R1 token 1; R2 token 1 = last. No prefill left: decode [R0, R1] (11 + 21) = 12 ms.
  // t=77  R0 token 2 (gap 57); R1 token 2 = last (gap 12). decode [R0] (context 12) = 11 ms.
  // t=88  R0 token 3 = last (gap 11).
  expect_shapes(predictor.shapes, {prefill(1, 10, 55), chunks(1, 16, 136, 0, 0),
                                   chunks(2, 9, 89, 16, 2), decode(2, 32), decode(1, 12)});
  EXPECT_EQ(r.requests[0].completion, ms(88));
  EXPECT_EQ(r.requests[0].max_itl, ms(57));
  EXPECT_EQ(r.requests[1].first_scheduled, ms(20));
  EXPECT_EQ(r.requests[1].first_token, ms(65));
  EXPECT_EQ(r.requests[1].completion, ms(77));
  EXPECT_EQ(r.requests[2].first_scheduled, ms(46));
  EXPECT_EQ(r.requests[2].completion, ms(65));
  EXPECT_EQ(r.itl_ns, (std::vector<int64_t>{ms(57).ns(), ms(12).ns(), ms(11).ns()}));
  EXPECT_EQ(r.num_steps, 5);
}

TEST(ChunkedPrefillTest, PerChunkAllocationAdmitsEarlierAndPreemptsTheNewestChunkThatCannotGrow) {
  // vLLM v1's allocation: a prefill takes blocks chunk by chunk. 6 blocks of 4 tokens, budget
  // 9. A (prompt 17, output 5) at 0, B (prompt 20, output 1) at 0.5 ms; every step 1 ms.
  RecordingPredictor predictor(0.001, 0);
  FleetConfig fleet = one_replica(BatchingPolicy::kChunkedPrefill, 4, 6);
  fleet.serving.max_num_batched_tokens = 9;
  fleet.serving.max_num_seqs = 4;
  fleet.serving.allocate_per_chunk = true;
  const Workload w = open_loop({request(0, 17, 5), request(0.5, 20, 1)});
  const SimResult r = simulate(w, fleet, predictor, 1);
  // t=0  A's first 9 tokens (3 blocks; 3 free).
  // t=1  A's last 8 (5 blocks; 1 free), completing; B admitted with the 1 token left of the
  //      budget (1 block; 0 free), which a whole-prefill reservation (5 blocks) would refuse.
  // t=2  A decodes (context 18, its 5th block has room). B's next chunk of 8 needs 2 blocks,
  //      none is free, and B is the newest: it is preempted (its block freed; 1 free).
  // t=3, t=4  A decodes (19, 20); B needs 2 blocks for a first chunk of 8: it waits.
  // t=5  A decodes (21) into the free block and finishes (6 blocks freed).
  // t=6.. B again, alone: 9, 9 and 2 tokens.
  expect_shapes(predictor.shapes,
                {chunks(1, 9, 45, 0, 0), chunks(2, 9, 8 * 9 + 36 + 1, 9, 1), decode(1, 18),
                 decode(1, 19), decode(1, 20), decode(1, 21), chunks(1, 9, 45, 0, 0),
                 chunks(1, 9, 9 * 9 + 45, 9, 0), chunks(1, 2, 2 * 18 + 3, 18, 1)});
  EXPECT_EQ(r.requests[1].num_preemptions, 1);
  EXPECT_EQ(r.requests[1].first_token, ms(9));
  // Reserving whole prefills, B waits for A instead and is never preempted.
  fleet.serving.allocate_per_chunk = false;
  const RecordingPredictor whole(0.001, 0);
  const SimResult r_whole = simulate(w, fleet, whole, 1);
  EXPECT_EQ(r_whole.requests[1].num_preemptions, 0);
  EXPECT_EQ(r_whole.requests[1].first_scheduled, ms(6));
}

TEST(ChunkedPrefillTest, PerChunkAllocationConservesBlocksUnderPressure) {
  // Long prompts on a small cache under both chunked policies: the run's end checks (every
  // block free, every token emitted once) abort on a violation.
  std::vector<RequestSpec> requests;
  for (int i = 0; i < 50; ++i) {
    requests.push_back(request(0.4 * i, 30 + (i * 53) % 150, 1 + (i * 31) % 60));
  }
  // prefill_first ignores the switch (ServingConfig::allocates_per_chunk).
  for (const BatchingPolicy policy :
       {BatchingPolicy::kChunkedPrefill, BatchingPolicy::kPrefillFirst}) {
    SCOPED_TRACE(batching_policy_name(policy));
    FleetConfig fleet = one_replica(policy, 4, 60);
    fleet.serving.max_num_batched_tokens = 64;
    fleet.serving.max_num_seqs = 16;
    fleet.serving.allocate_per_chunk = true;
    RecordingPredictor predictor(0.001, 0.00001);
    const SimResult r = simulate(open_loop(requests), fleet, predictor, 5);
    EXPECT_GT(r.num_preemptions, 0);
    for (const RequestRecord& rec : r.requests) EXPECT_FALSE(rec.rejected);
  }
}

// ---- static batching --------------------------------------------------------------------------

TEST(StaticBatchingTest, NothingJoinsABatchInProgress) {
  RecordingPredictor predictor(0.010, 0);  // 10 ms per step
  FleetConfig fleet = one_replica(BatchingPolicy::kStatic, 16, 100);
  fleet.serving.max_num_seqs = 2;
  // A (prompt 4, output 1), B (4, 3), C (4, 1), all at 0.
  const Workload w = open_loop({request(0, 4, 1), request(0, 4, 3), request(0, 4, 1)});
  const SimResult r = simulate(w, fleet, predictor, 1);
  // t=0   batch [A, B] (max_num_seqs 2): prefill 8 tokens.
  // t=10  A done; B token 1. A's slot stays empty: decode [B] (context 5).
  // t=20  B token 2. decode [B] (context 6).
  // t=30  B done. Batch [C]: prefill.  t=40  C done.
  expect_shapes(predictor.shapes,
                {prefill(2, 8, 20), decode(1, 5), decode(1, 6), prefill(1, 4, 10)});
  EXPECT_EQ(r.requests[0].completion, ms(10));
  EXPECT_EQ(r.requests[1].completion, ms(30));
  EXPECT_EQ(r.requests[2].first_scheduled, ms(30));
  EXPECT_EQ(r.requests[2].completion, ms(40));
  // Continuous batching gives A's slot to C at once: prefill [C] at 10, done at 20.
  RecordingPredictor continuous_predictor(0.010, 0);
  fleet.serving.policy = BatchingPolicy::kContinuous;
  const SimResult c = simulate(w, fleet, continuous_predictor, 1);
  EXPECT_EQ(c.requests[2].first_scheduled, ms(10));
  EXPECT_EQ(c.requests[2].completion, ms(20));
}

TEST(StaticBatchingTest, PreemptedMemberIsRecomputedInTheNextBatch) {
  RecordingPredictor predictor(0.010, 0);
  // Blocks of 1 token, 6 blocks. A, B: prompt 2, output 4 at 0; C: prompt 1, output 1 at 1 ms.
  const Workload w = open_loop({request(0, 2, 4), request(0, 2, 4), request(1, 1, 1)});
  const SimResult r = simulate(w, one_replica(BatchingPolicy::kStatic, 1, 6), predictor, 1);
  // t=0   batch [A, B]: prefill 4 tokens, 2 blocks each, 2 free.      -> tokens 1 at 10
  // t=1   C waits (a batch is running).
  // t=10  decode [A, B]: one new block each, 0 free.                   -> tokens 2 at 20
  // t=20  A needs a 4th block: B (the most recently admitted) is preempted (3 blocks freed,
  //       front of the queue: [B, C]). decode [A] (context 4), 2 free.  -> A token 3 at 30
  // t=30  A is still running: no admission. decode [A] (context 5).    -> A token 4 at 40: done
  // t=40  empty: batch [B (recompute of 2 + 2 tokens), C (1 token)]: prefill 5 tokens,
  //       10 + 1 pairs.                                                -> B token 3, C done at 50
  // t=50  decode [B] (context 5).                                      -> B token 4 at 60: done
  expect_shapes(predictor.shapes, {prefill(2, 4, 6), decode(2, 6), decode(1, 4), decode(1, 5),
                                   prefill(2, 5, 11), decode(1, 5)});
  const RequestRecord& a = r.requests[0];
  const RequestRecord& b = r.requests[1];
  const RequestRecord& c = r.requests[2];
  EXPECT_EQ(a.completion, ms(40));
  EXPECT_EQ(b.num_preemptions, 1);
  EXPECT_EQ(b.first_token, ms(10));  // not re-emitted by the recompute
  EXPECT_EQ(b.max_itl, ms(30));      // 20 -> 50, across the preemption
  EXPECT_EQ(b.completion, ms(60));
  EXPECT_EQ(c.first_scheduled, ms(40));
  EXPECT_EQ(c.completion, ms(50));
  EXPECT_EQ(r.num_preemptions, 1);
  EXPECT_EQ(testing::emitted_tokens(predictor.shapes), 4 + 4 + 1);
}

// ---- chunked prefill --------------------------------------------------------------------------

TEST(ChunkedPrefillTest, PartialPrefillHoldsItsWholePrefillAndIsPreemptedForDecodes) {
  RecordingPredictor predictor(0.010, 0);  // 10 ms per step
  // Blocks of 1 token, 8 blocks; budget 4 tokens per step. A: prompt 2, output 5; B: prompt
  // 6, output 1; both at 0 (each fits alone: 7 blocks).
  FleetConfig fleet = one_replica(BatchingPolicy::kChunkedPrefill, 1, 8);
  fleet.serving.max_num_batched_tokens = 4;
  fleet.serving.max_num_seqs = 4;
  const SimResult r =
      simulate(open_loop({request(0, 2, 5), request(0, 6, 1)}), fleet, predictor, 1);
  // t=0   admit A (chunk of its 2 tokens, 2 blocks) and B (first chunk 2 of 6; its whole
  //       prefill's 6 blocks are reserved): 0 free.           -> A token 1 at 10, B nothing
  // t=10  decode A (context 3) needs a block, none free: B (the last admitted, partially
  //       prefilled) is preempted: its 6 blocks freed, its progress lost. 5 free after A's.
  //       A step with a preemption admits nothing.             -> A token 2 at 20
  // t=20  decode A (context 4), 4 free. B needs all 6 blocks of its prefill (its 3-token
  //       first chunk alone would fit): it waits.              -> A token 3 at 30
  // t=30  decode A (context 5), 3 free.                        -> A token 4 at 40
  // t=40  decode A (context 6), 2 free.                        -> A token 5 at 50: done, 8 free
  // t=50  admit B again: chunk 4 of 6 (6 blocks reserved).
  // t=60  B's last 2 tokens after 4 cached (2*4 + 3 = 11 pairs). -> B token 1 at 70: done
  expect_shapes(predictor.shapes, {chunks(2, 4, 6, 0, 1), decode(1, 3), decode(1, 4), decode(1, 5),
                                   decode(1, 6), chunks(1, 4, 10, 0, 0), chunks(1, 2, 11, 4, 1)});
  const RequestRecord& a = r.requests[0];
  const RequestRecord& b = r.requests[1];
  EXPECT_EQ(a.completion, ms(50));
  EXPECT_EQ(a.max_itl, ms(10));
  EXPECT_EQ(a.num_preemptions, 0);
  EXPECT_EQ(b.num_preemptions, 1);
  EXPECT_EQ(b.first_scheduled, ms(0));
  EXPECT_EQ(b.first_token, ms(70));
  EXPECT_EQ(b.completion, ms(70));
  EXPECT_EQ(r.num_preemptions, 1);
  EXPECT_EQ(testing::emitted_tokens(predictor.shapes), 5 + 1);
}

TEST(ChunkedPrefillTest, BoundsDecodeStallsAndDelaysTheLongPrompt) {
  // D (prompt 4, output 6) at 0 and L (prompt 64, output 1) at 15 ms; step = 10 ms + 1 ms per
  // new token.
  const Workload w = open_loop({request(0, 4, 6), request(15, 64, 1)});
  // Continuous: t=0 prefill D (14 ms); t=14 decode D (11 ms); t=25 prefill L alone (74 ms):
  // D stalls; t=99 L done, decode D -> D's gap 110 - 25 = 85 ms.
  RecordingPredictor continuous(0.010, 0.001);
  const SimResult c = simulate(w, one_replica(BatchingPolicy::kContinuous, 16, 100), continuous, 1);
  EXPECT_EQ(c.requests[0].max_itl, ms(85));
  EXPECT_EQ(c.requests[1].completion, ms(99));
  // Chunked, budget 16: t=0 D (4 tokens, 14 ms); t=14 decode D (11 ms); from t=25 four steps
  // of decode D + a 15-token chunk of L (26 ms each: 51, 77, 103, 129; D's last token at
  // 129); t=129 L's last 4 tokens after 60 cached (14 ms) -> L done at 143.
  RecordingPredictor chunked(0.010, 0.001);
  FleetConfig fleet = one_replica(BatchingPolicy::kChunkedPrefill, 16, 100);
  fleet.serving.max_num_batched_tokens = 16;
  fleet.serving.max_num_seqs = 4;
  const SimResult k = simulate(w, fleet, chunked, 1);
  EXPECT_EQ(k.requests[0].max_itl, ms(26));  // one step at the full budget
  EXPECT_EQ(k.requests[0].completion, ms(129));
  EXPECT_EQ(k.requests[1].first_scheduled, ms(25));
  EXPECT_EQ(k.requests[1].completion, ms(143));
  ASSERT_EQ(chunked.shapes.size(), 7u);
  expect_shapes(
      {chunked.shapes[2], chunked.shapes[5], chunked.shapes[6]},
      {mixed(chunks(1, 15, 120, 0, 0), decode(1, 6)),
       mixed(chunks(1, 15, 15 * 45 + 120, 45, 0), decode(1, 9)), chunks(1, 4, 4 * 60 + 10, 60, 1)});
}

// ---- names and impossible configurations ------------------------------------------------------

std::string error_of(const FleetConfig& fleet, const SimOptions& options = {}) {
  RecordingPredictor predictor(0.01, 0);
  try {
    simulate(open_loop({request(0, 1, 1)}), fleet, predictor, 1, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(BatchingPolicyInputTest, ParsesNamesAndListsTheKnownOnes) {
  EXPECT_EQ(parse_batching_policy("static", "x"), BatchingPolicy::kStatic);
  EXPECT_EQ(parse_batching_policy("continuous", "x"), BatchingPolicy::kContinuous);
  EXPECT_EQ(parse_batching_policy("chunked_prefill", "x"), BatchingPolicy::kChunkedPrefill);
  EXPECT_EQ(parse_batching_policy("prefill_first", "x"), BatchingPolicy::kPrefillFirst);
  for (const BatchingPolicy p : {BatchingPolicy::kStatic, BatchingPolicy::kContinuous,
                                 BatchingPolicy::kChunkedPrefill, BatchingPolicy::kPrefillFirst}) {
    EXPECT_EQ(parse_batching_policy(batching_policy_name(p), "x"), p);
  }
  try {
    parse_batching_policy("sarathi", "scenario.json: field \"serving.policy\"");
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("scenario.json: field \"serving.policy\": unknown batching "
                                    "policy \"sarathi\"; known: static, continuous, "
                                    "chunked_prefill, prefill_first"));
  }
}

TEST(BatchingPolicyInputTest, RefusesImpossibleConfigurationsWithTheReason) {
  FleetConfig fleet = one_replica(BatchingPolicy::kChunkedPrefill, 16, 10);
  fleet.serving.max_num_batched_tokens = 0;
  EXPECT_THAT(error_of(fleet),
              HasSubstr("serving.max_num_batched_tokens: chunked_prefill needs a chunk budget of "
                        "at least 1 token per step, got 0"));
  fleet.serving.max_num_batched_tokens = 100;
  fleet.serving.max_num_seqs = 256;
  EXPECT_THAT(error_of(fleet),
              HasSubstr("serving.max_num_batched_tokens: chunked_prefill gives every running "
                        "decode one token of the step's budget, so it must be >= "
                        "serving.max_num_seqs (256), got 100"));
  fleet.serving.max_num_seqs = 100;  // equal is enough
  EXPECT_EQ(error_of(fleet), "no error");
  // The same budget is fine for the other policies (a prompt over it is admitted alone).
  fleet.serving.max_num_seqs = 256;
  fleet.serving.policy = BatchingPolicy::kContinuous;
  EXPECT_EQ(error_of(fleet), "no error");
  fleet.serving.policy = static_cast<BatchingPolicy>(7);
  EXPECT_THAT(error_of(fleet),
              HasSubstr("serving.policy: expected static, continuous, chunked_prefill or "
                        "prefill_first, got value 7"));
  fleet.serving.policy = BatchingPolicy::kStatic;
  fleet.router = static_cast<RouterKind>(-1);
  EXPECT_THAT(error_of(fleet),
              HasSubstr("fleet.router: expected round_robin, least_outstanding, "
                        "least_kv_load, power_of_two or prefix_aware, got value -1"));
  fleet.router = RouterKind::kRoundRobin;
  SimOptions options;
  options.time_series_interval = SimTime::Nanoseconds(-5);
  EXPECT_THAT(error_of(fleet, options),
              HasSubstr("options.time_series_interval: expected >= 0 ns (0: no time series), got "
                        "-5 ns"));
}

}  // namespace
}  // namespace llmcap::sim
