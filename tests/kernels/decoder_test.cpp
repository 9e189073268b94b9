#include "kernels/decoder.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "decoder_reference.h"

namespace llmcap::kernels {
namespace {

using ::testing::HasSubstr;

// Max |logit - reference| as a fraction of max |reference logit|. f32 weights: the kernels
// accumulate in f32 (vs double here) and may reorder sums. bf16 weights: the stored weights are
// the reference's too, but the kernels may round activations to bf16 for BF16 dot products.
constexpr double kF32Tolerance = 2e-5;
constexpr double kBf16Tolerance = 2e-2;
// int8/int4 paths may quantise activations to int8 per row before every product.
constexpr double kQuantisedTolerance = 8e-2;

DecoderShape tiny_shape() {
  DecoderShape s;
  s.hidden = 64;
  s.intermediate = 96;
  s.num_layers = 2;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.head_dim = 16;
  s.vocab = 50;
  s.rope_theta = 10000.0f;
  s.rms_eps = 1e-5f;
  s.qkv_bias = false;
  return s;
}

using namespace decoder_reference;  // NOLINT: the reference of tests/kernels/decoder_reference.h

TEST(ReferenceDecoder, F32WeightsMatchStraightforwardImplementation) {
  ThreadPool pool(2);
  ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, KvType::kF32, 2, 16, 42);
  EXPECT_LT(max_error_against_reference(dec, {5, 0}, {3, 17}, 3, pool), kF32Tolerance);
}

TEST(ReferenceDecoder, F32WithQkvBiasMatchesStraightforwardImplementation) {
  ThreadPool pool(2);
  DecoderShape s = tiny_shape();
  s.qkv_bias = true;
  s.rope_theta = 500000.0f;
  ReferenceDecoder dec(s, WeightFormat::kF32, KvType::kF32, 1, 16, 7);
  EXPECT_LT(max_error_against_reference(dec, {9}, {44}, 2, pool), kF32Tolerance);
}

TEST(ReferenceDecoder, Bf16WeightsMatchStraightforwardImplementation) {
  ThreadPool pool(2);
  ReferenceDecoder dec(tiny_shape(), WeightFormat::kBf16, KvType::kBf16, 2, 16, 43);
  EXPECT_LT(max_error_against_reference(dec, {7, 1}, {0, 49}, 2, pool), kBf16Tolerance);
}

TEST(ReferenceDecoder, QuantisedWeightsRoughlyMatchStraightforwardImplementation) {
  ThreadPool pool(2);
  for (const WeightFormat f : {WeightFormat::kInt8, WeightFormat::kInt4}) {
    ReferenceDecoder dec(tiny_shape(), f, KvType::kBf16, 1, 16, 44);
    EXPECT_LT(max_error_against_reference(dec, {6}, {5}, 2, pool), kQuantisedTolerance)
        << to_string(f);
  }
}

TEST(ReferenceDecoder, ContextsGrowByOnePerStepUntilFull) {
  ThreadPool pool(1);
  ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, KvType::kBf16, 2, 4, 1);
  EXPECT_THROW(dec.step(pool), std::logic_error);  // before set_contexts
  EXPECT_TRUE(dec.logits().empty());
  const std::vector<int64_t> contexts = {0, 2};
  dec.set_contexts(contexts);
  dec.step(pool);
  EXPECT_EQ(std::vector<int64_t>(dec.contexts().begin(), dec.contexts().end()),
            (std::vector<int64_t>{1, 3}));
  dec.step(pool);  // sequence 1 reaches max_context 4
  EXPECT_EQ(dec.contexts()[1], 4);
  try {
    dec.step(pool);
    FAIL() << "expected logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("sequence 1 is full (max_context 4)"));
  }
  dec.set_contexts(contexts);  // reset
  EXPECT_TRUE(dec.logits().empty());
  EXPECT_EQ(dec.contexts()[1], 2);
  dec.step(pool);
  EXPECT_EQ(dec.contexts()[0], 1);
}

TEST(ReferenceDecoder, SectionTimesCoverTheStepAndDoNotChangeItsResults) {
  ThreadPool pool(2);
  ReferenceDecoder dec(tiny_shape(), WeightFormat::kBf16, KvType::kBf16, 2, 64, 3);
  const std::vector<int64_t> contexts = {5, 40};
  dec.set_contexts(contexts);
  dec.step(pool);
  const std::vector<float> plain(dec.logits().begin(), dec.logits().end());
  dec.set_contexts(contexts);
  StepSections sections;
  sections.seconds[0] = 123.0;  // stale values are cleared by step
  const auto start = std::chrono::steady_clock::now();
  dec.step(pool, best_isa(), &sections);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(std::vector<float>(dec.logits().begin(), dec.logits().end()), plain);
  double sum_s = 0;
  for (int i = 0; i < StepSections::kCount; ++i) {
    EXPECT_GT(sections.seconds[i], 0.0) << StepSections::kNames[i];
    sum_s += sections.seconds[i];
  }
  // The sections tile the step: their sum is at most its wall time (the difference is the
  // argument checks before the first mark and the context update after the last).
  EXPECT_LE(sum_s, wall_s);
  EXPECT_STREQ(StepSections::kNames[3], "attention");
}

TEST(ReferenceDecoder, BatchGivesTheSameResultsAsOneSequenceAtATime) {
  ThreadPool pool(2);
  ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, KvType::kF32, 3, 16, 5);
  const std::vector<int64_t> contexts = {0, 4, 9}, tokens = {1, 2, 3};
  const int64_t vocab = dec.shape().vocab;
  constexpr int kSteps = 2;
  std::vector<std::vector<float>> batched(kSteps);
  dec.set_contexts(contexts, tokens);
  for (int step = 0; step < kSteps; ++step) {
    dec.step(pool);
    batched[step].assign(dec.logits().begin(), dec.logits().end());
  }
  // Each alone, in slot 0 (whose KV the batch run overwrote: set_contexts restores the prefix).
  for (size_t b = 0; b < contexts.size(); ++b) {
    dec.set_contexts(std::span(&contexts[b], 1), std::span(&tokens[b], 1));
    for (int step = 0; step < kSteps; ++step) {
      dec.step(pool);
      const auto alone = dec.logits();
      ASSERT_EQ(alone.size(), static_cast<size_t>(vocab));
      std::vector<double> expected(batched[step].begin() + static_cast<int64_t>(b) * vocab,
                                   batched[step].begin() + static_cast<int64_t>(b + 1) * vocab);
      EXPECT_LT(relative_error(alone, expected), kF32Tolerance)
          << "sequence " << b << ", step " << step;
    }
  }
}

TEST(ReferenceDecoder, SetContextsRestoresTheRandomPrefixThatStepsOverwrote) {
  ThreadPool pool(1);
  ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, KvType::kBf16, 1, 16, 9);
  const std::vector<int64_t> long_context = {9}, short_context = {4}, token = {11};
  dec.set_contexts(long_context, token);
  dec.step(pool);
  const std::vector<float> first(dec.logits().begin(), dec.logits().end());
  dec.set_contexts(short_context, token);
  dec.step(pool);  // writes positions 4 and 5 of the prefix
  dec.step(pool);
  dec.set_contexts(long_context, token);
  dec.step(pool);
  EXPECT_TRUE(std::equal(first.begin(), first.end(), dec.logits().begin()));
}

TEST(ReferenceDecoder, SizesAndAccounting) {
  DecoderShape s = tiny_shape();
  s.qkv_bias = true;
  ReferenceDecoder dec(s, WeightFormat::kBf16, KvType::kBf16, 2, 32, 3);
  // 2 layers x (K + V) x 2 kv heads x 16 x 2 bytes.
  EXPECT_EQ(dec.kv_bytes_per_token(), 2 * 2 * 2 * 16 * 2);
  int64_t weights = dec.lm_head().bytes() + 4 * s.hidden;
  for (int64_t l = 0; l < s.num_layers; ++l) {
    const auto& w = dec.layer(l);
    EXPECT_EQ(w.qkv.rows(), 4 * 16 + 2 * 2 * 16);
    EXPECT_EQ(w.gate_up.rows(), 2 * s.intermediate);
    weights += w.qkv.bytes() + w.o.bytes() + w.gate_up.bytes() + w.down.bytes() +
               4 * (2 * s.hidden + s.qkv_rows());
  }
  EXPECT_EQ(dec.weight_bytes(), weights);

  const std::vector<int64_t> contexts = {3, 10};
  dec.set_contexts(contexts);
  const auto ops = dec.account();
  std::vector<std::string> names;
  for (const auto& op : ops) names.push_back(op.op);
  EXPECT_EQ(names,
            (std::vector<std::string>{"embedding", "rms_norm", "qkv_proj", "rope", "kv_append",
                                      "attention", "o_proj", "residual_add", "gate_up_proj",
                                      "swiglu", "down_proj", "lm_head", "argmax"}));
  const auto find = [&](const std::string& name) {
    return *std::find_if(ops.begin(), ops.end(), [&](const OpAccount& a) { return a.op == name; });
  };
  // Attention reads K and V at context + 1 tokens: 2 x 2 heads x 16 x 2 bytes per token.
  const int64_t kv_read = (4 + 11) * 2 * 2 * 16 * 2;
  EXPECT_EQ(find("attention").bytes, s.num_layers * (kv_read + 2 * 2 * s.q_dim() * 4));
  EXPECT_EQ(find("attention").flops, s.num_layers * 4 * s.num_heads * (4 + 11) * s.head_dim);
  EXPECT_EQ(find("gate_up_proj").flops, s.num_layers * 2 * 2 * (2 * s.intermediate) * s.hidden);
  EXPECT_EQ(find("lm_head").flops, 2 * 2 * s.vocab * s.hidden);
  EXPECT_EQ(find("lm_head").bytes, dec.lm_head().bytes() + 2 * (s.vocab + s.hidden) * 4);
  EXPECT_EQ(find("qkv_proj").flops,
            s.num_layers * (2 * 2 * s.qkv_rows() * s.hidden + 2 * s.qkv_rows()));
  // The projections and the LM head stream every weight matrix once per step.
  int64_t streamed = 0;
  for (const char* name : {"qkv_proj", "o_proj", "gate_up_proj", "down_proj", "lm_head"}) {
    streamed += find(name).bytes;
  }
  EXPECT_GT(streamed, dec.weight_bytes() - 4 * (2 * s.num_layers + 1) * s.hidden);
}

// The KV cache of every (layer, sequence) holds each head's rows from a 4 KiB boundary
// (kv_capacity_tokens), and max_context tokens still fit.
TEST(ReferenceDecoder, KvHeadsStartOnFourKibBoundaries) {
  for (const KvType type : {KvType::kBf16, KvType::kF32}) {
    ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, type, 2, 37, 3);
    const int64_t elem = type == KvType::kF32 ? 4 : 2;
    for (int64_t l = 0; l < tiny_shape().num_layers; ++l) {
      for (int64_t seq = 0; seq < 2; ++seq) {
        const KvCacheView v = dec.kv_cache(l, seq);
        EXPECT_GE(v.capacity_tokens, 37);
        EXPECT_EQ(v.capacity_tokens, kv_capacity_tokens(37, v.head_dim, type));
        EXPECT_EQ(v.capacity_tokens * v.head_dim * elem % 4096, 0);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(v.k) % 4096, 0u);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(v.v) % 4096, 0u);
      }
    }
  }
}

void expect_invalid(const DecoderShape& s, WeightFormat f, const std::string& message,
                    int64_t max_batch = 1, int64_t max_context = 8,
                    int64_t max_bytes = ReferenceDecoder::kDefaultMaxBytes) {
  try {
    ReferenceDecoder dec(s, f, KvType::kBf16, max_batch, max_context, 1, max_bytes);
    ADD_FAILURE() << "expected invalid_argument containing: " << message;
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr(message));
  }
}

TEST(ReferenceDecoder, RejectsBadShapesWithMessage) {
  DecoderShape s = tiny_shape();
  s.hidden = 0;
  expect_invalid(s, WeightFormat::kF32, "hidden must be >= 1 (got 0)");
  s = tiny_shape();
  s.num_kv_heads = 3;
  expect_invalid(s, WeightFormat::kF32, "num_heads (4) must be a multiple of num_kv_heads (3)");
  s = tiny_shape();
  s.head_dim = 15;
  expect_invalid(s, WeightFormat::kF32, "head_dim must be even");
  s = tiny_shape();
  s.rms_eps = 0;
  expect_invalid(s, WeightFormat::kF32, "rms_eps must be > 0");
  s = tiny_shape();
  s.rope_theta = -1;
  expect_invalid(s, WeightFormat::kF32, "rope_theta must be > 0");
  s = tiny_shape();
  s.intermediate = 100;
  expect_invalid(s, WeightFormat::kInt4, "int4 weights need intermediate to be a multiple of 32");
  expect_invalid(tiny_shape(), WeightFormat::kF32, "max_batch must be >= 1 (got 0)", 0);
  expect_invalid(tiny_shape(), WeightFormat::kF32, "max_context must be >= 1 (got -2)", 1, -2);
}

TEST(ReferenceDecoder, RejectsTooMuchMemoryWithBothNumbers) {
  // f32 tiny weights alone are ~0.15 MB.
  expect_invalid(tiny_shape(), WeightFormat::kF32, "more than max_bytes 100000", 1, 8, 100000);
  try {
    ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, KvType::kF32, 1, 8, 1, 100000);
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("needs "));
  }
  // Llama-3.1-70B-like shapes: the check comes before any allocation.
  DecoderShape big = tiny_shape();
  big.hidden = 8192;
  big.intermediate = 28672;
  big.num_layers = 80;
  big.num_heads = 64;
  big.num_kv_heads = 8;
  big.head_dim = 128;
  big.vocab = 128256;
  expect_invalid(big, WeightFormat::kBf16, "more than max_bytes", 64, 131072);
}

TEST(ReferenceDecoder, SetContextsRejectsBadValues) {
  ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, KvType::kF32, 2, 8, 1);
  const std::vector<int64_t> three = {1, 1, 1}, full = {8}, negative = {-1}, one = {1};
  const std::vector<int64_t> bad_token = {50};
  EXPECT_THROW(dec.set_contexts({}), std::invalid_argument);
  EXPECT_THROW(dec.set_contexts(three), std::invalid_argument);
  EXPECT_THROW(dec.set_contexts(full), std::invalid_argument);
  EXPECT_THROW(dec.set_contexts(negative), std::invalid_argument);
  EXPECT_THROW(dec.set_contexts(one, bad_token), std::invalid_argument);
  EXPECT_THROW(dec.set_contexts(one, three), std::invalid_argument);
  EXPECT_NO_THROW(dec.set_contexts(one));
}

// ---- prefill and slots ----------------------------------------------------------------------

/// Logits rows of the last call, copied.
std::vector<float> logits_copy(const ReferenceDecoder& dec) {
  return {dec.logits().begin(), dec.logits().end()};
}

/// Row `row` of `logits` as doubles (for relative_error).
std::vector<double> logits_row(const std::vector<float>& logits, int64_t row, int64_t vocab) {
  return {logits.begin() + row * vocab, logits.begin() + (row + 1) * vocab};
}

TEST(ReferenceDecoder, KvReadFromOneSlotAndWrittenToAnotherGivesTheSameContinuation) {
  // A prefix cache's copy: slot 0 prefills 9 tokens; positions [4, 8) of its KV, with [0, 4),
  // go to slot 1, which then prefills the 9th token after them: its logits are slot 0's,
  // bit for bit (the same KV and the same computation of the last row).
  ThreadPool pool(1);
  ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, KvType::kBf16, 2, 16, 21);
  const std::vector<int64_t> prompt = {3, 14, 15, 9, 26, 5, 35, 8, 9};
  const PrefillSequence whole{0, 0, prompt};
  dec.prefill(std::span(&whole, 1), pool);
  const std::vector<float> expected(dec.logits().begin(), dec.logits().end());
  const std::vector<uint8_t> first = dec.read_kv(0, 0, 4), second = dec.read_kv(0, 4, 4);
  EXPECT_EQ(static_cast<int64_t>(first.size()), 4 * dec.kv_bytes_per_token());
  dec.write_kv(1, 0, first);
  dec.write_kv(1, 4, second);
  EXPECT_EQ(dec.slot_context(1), 8);
  const PrefillSequence rest{1, 8, std::span(prompt).subspan(8)};
  dec.prefill(std::span(&rest, 1), pool);
  EXPECT_EQ(std::vector<float>(dec.logits().begin(), dec.logits().end()), expected);
  EXPECT_EQ(dec.slot_next_token(1), dec.slot_next_token(0));
  const auto message = [&](auto call) {
    try {
      call();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message([&] { dec.read_kv(0, 6, 4); }),
            "ReferenceDecoder: read_kv: positions [6, 10) outside slot 0's context of 9");
  EXPECT_EQ(message([&] { dec.write_kv(1, 10, first); }),
            "ReferenceDecoder: write_kv: positions [10, 14) do not extend slot 1's context of 9 "
            "within max_context 16");
  EXPECT_EQ(message([&] { dec.write_kv(1, 0, std::span(first).first(5)); }),
            "ReferenceDecoder: write_kv: 5 bytes are not whole tokens of " +
                std::to_string(dec.kv_bytes_per_token()) + " bytes");
}

TEST(ReferenceDecoderPrefill, PrefillThenDecodeMatchesSingleTokenSteps) {
  // Greedy chain by single-token steps: step i consumes token t_i at position i. A prefill of
  // t_0..t_{P-1} must give step P-1's logits (the same argmax), and one decode after it step
  // P's logits. f32 weights and KV: only the summation order of the products differs (a
  // P-row matmul against P one-row ones), within kF32Tolerance.
  ThreadPool pool(2);
  for (const KvType kv : {KvType::kF32, KvType::kBf16}) {
    constexpr int64_t kPrompt = 11;
    ReferenceDecoder steps(tiny_shape(), WeightFormat::kF32, kv, 1, 16, 21);
    const std::vector<int64_t> zero = {0}, first = {7};
    steps.set_contexts(zero, first);
    std::vector<int64_t> consumed;
    std::vector<std::vector<float>> step_logits;
    for (int64_t i = 0; i <= kPrompt; ++i) {
      consumed.push_back(steps.next_tokens()[0]);
      steps.step(pool);
      step_logits.push_back(logits_copy(steps));
    }
    ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, kv, 3, 16, 21);
    const std::vector<int64_t> prompt(consumed.begin(), consumed.begin() + kPrompt);
    const PrefillSequence seq{2, 0, prompt};
    dec.prefill(std::span(&seq, 1), pool);
    const int64_t vocab = dec.shape().vocab;
    ASSERT_EQ(dec.logits().size(), static_cast<size_t>(vocab));
    EXPECT_EQ(dec.slot_context(2), kPrompt);
    EXPECT_EQ(dec.slot_next_token(2), consumed[kPrompt]);
    EXPECT_LT(relative_error(dec.logits(), logits_row(step_logits[kPrompt - 1], 0, vocab)),
              kF32Tolerance)
        << to_string(kv);
    const std::vector<int64_t> slot = {2};
    dec.step_slots(slot, pool);
    EXPECT_EQ(dec.slot_context(2), kPrompt + 1);
    EXPECT_LT(relative_error(dec.logits(), logits_row(step_logits[kPrompt], 0, vocab)),
              kF32Tolerance)
        << to_string(kv);
  }
}

TEST(ReferenceDecoderPrefill, PrefillMatchesStraightforwardImplementation) {
  // The double-precision reference consumes the prompt one token at a time.
  ThreadPool pool(2);
  DecoderShape s = tiny_shape();
  s.qkv_bias = true;
  ReferenceDecoder dec(s, WeightFormat::kF32, KvType::kF32, 1, 16, 13);
  const std::vector<int64_t> zero = {0};
  dec.set_contexts(zero);  // slot 0 empty: the reference starts with an empty KV cache
  ReferenceSequence ref(dec, 0);
  const std::vector<int64_t> prompt = {3, 49, 0, 17, 17, 8};
  std::vector<double> expected;
  for (const int64_t t : prompt) expected = ref.step(t);
  const PrefillSequence seq{0, 0, prompt};
  dec.prefill(std::span(&seq, 1), pool);
  EXPECT_LT(relative_error(dec.logits(), expected), kF32Tolerance);
  // The next decode consumes the argmax, as the reference does.
  const int64_t next = dec.slot_next_token(0);
  const std::vector<int64_t> slot = {0};
  dec.step_slots(slot, pool);
  EXPECT_LT(relative_error(dec.logits(), ref.step(next)), kF32Tolerance);
}

TEST(ReferenceDecoderPrefill, QuantisedPrefillRoughlyMatchesSingleTokenSteps) {
  ThreadPool pool(2);
  for (const WeightFormat f : {WeightFormat::kInt8, WeightFormat::kInt4}) {
    ReferenceDecoder steps(tiny_shape(), f, KvType::kBf16, 1, 16, 5);
    const std::vector<int64_t> zero = {0}, first = {3};
    steps.set_contexts(zero, first);
    std::vector<int64_t> consumed;
    for (int i = 0; i < 7; ++i) {
      consumed.push_back(steps.next_tokens()[0]);
      steps.step(pool);
    }
    const std::vector<float> last = logits_copy(steps);
    ReferenceDecoder dec(tiny_shape(), f, KvType::kBf16, 1, 16, 5);
    const PrefillSequence seq{0, 0, consumed};
    dec.prefill(std::span(&seq, 1), pool);
    EXPECT_LT(relative_error(dec.logits(), logits_row(last, 0, dec.shape().vocab)),
              kQuantisedTolerance)
        << to_string(f);
  }
}

TEST(ReferenceDecoderPrefill, SeveralSequencesInOneCallMatchEachAlone) {
  ThreadPool pool(2);
  const std::vector<int64_t> a = {1, 2, 3, 4, 5}, b = {9}, c = {40, 41, 42, 43, 44, 45, 46, 47, 48};
  const std::vector<PrefillSequence> together = {{2, 0, a}, {0, 0, b}, {1, 0, c}};
  ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, KvType::kBf16, 3, 16, 8);
  dec.prefill(together, pool);
  const std::vector<float> rows = logits_copy(dec);
  const int64_t vocab = dec.shape().vocab;
  ASSERT_EQ(rows.size(), static_cast<size_t>(3 * vocab));
  EXPECT_EQ(dec.slot_context(2), 5);
  EXPECT_EQ(dec.slot_context(0), 1);
  EXPECT_EQ(dec.slot_context(1), 9);
  for (size_t i = 0; i < together.size(); ++i) {
    ReferenceDecoder alone(tiny_shape(), WeightFormat::kF32, KvType::kBf16, 3, 16, 8);
    alone.prefill(std::span(&together[i], 1), pool);
    EXPECT_LT(relative_error(alone.logits(), logits_row(rows, static_cast<int64_t>(i), vocab)),
              kF32Tolerance)
        << "sequence " << i;
    EXPECT_EQ(alone.slot_next_token(together[i].slot), dec.slot_next_token(together[i].slot));
  }
}

TEST(ReferenceDecoderPrefill, ChunkedPrefillAndReusedSlotMatchOneWholePrefill) {
  ThreadPool pool(2);
  const std::vector<int64_t> prompt = {5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
  ReferenceDecoder whole(tiny_shape(), WeightFormat::kF32, KvType::kBf16, 2, 16, 4);
  const PrefillSequence all{1, 0, prompt};
  whole.prefill(std::span(&all, 1), pool);
  const std::vector<float> expected = logits_copy(whole);

  ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, KvType::kBf16, 2, 16, 4);
  // Slot 1 first holds another, longer sequence; a prefill with cached_tokens 0 replaces it.
  const std::vector<int64_t> other = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
  const PrefillSequence before{1, 0, other};
  dec.prefill(std::span(&before, 1), pool);
  const std::span<const int64_t> p(prompt);
  const PrefillSequence first{1, 0, p.subspan(0, 4)};
  dec.prefill(std::span(&first, 1), pool);
  EXPECT_EQ(dec.slot_context(1), 4);
  const PrefillSequence rest{1, 4, p.subspan(4)};
  dec.prefill(std::span(&rest, 1), pool);
  EXPECT_EQ(dec.slot_context(1), 10);
  EXPECT_LT(relative_error(dec.logits(), logits_row(expected, 0, dec.shape().vocab)),
            kF32Tolerance);
  EXPECT_EQ(dec.slot_next_token(1), whole.slot_next_token(1));
}

TEST(ReferenceDecoderPrefill, StepSlotsAdvancesOnlyTheGivenSlotsInTheirOrder) {
  ThreadPool pool(2);
  const std::vector<int64_t> a = {1, 2, 3}, b = {4, 5}, c = {6, 7, 8, 9};
  const std::vector<PrefillSequence> seqs = {{0, 0, a}, {1, 0, b}, {2, 0, c}};
  ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, KvType::kF32, 3, 16, 6);
  dec.prefill(seqs, pool);
  const std::vector<int64_t> slots = {2, 0};
  dec.step_slots(slots, pool);
  const std::vector<float> rows = logits_copy(dec);
  const int64_t vocab = dec.shape().vocab;
  ASSERT_EQ(rows.size(), static_cast<size_t>(2 * vocab));
  EXPECT_EQ(dec.slot_context(2), 5);
  EXPECT_EQ(dec.slot_context(0), 4);
  EXPECT_EQ(dec.slot_context(1), 2);  // not stepped
  // Row i belongs to slots[i]: each matches that slot stepped alone.
  for (size_t i = 0; i < slots.size(); ++i) {
    ReferenceDecoder alone(tiny_shape(), WeightFormat::kF32, KvType::kF32, 3, 16, 6);
    alone.prefill(seqs, pool);
    alone.step_slots(std::span(&slots[i], 1), pool);
    EXPECT_LT(relative_error(alone.logits(), logits_row(rows, static_cast<int64_t>(i), vocab)),
              kF32Tolerance)
        << "slot " << slots[i];
  }
}

/// Runs `fn` and expects std::invalid_argument whose message contains `message`.
template <class Fn>
void expect_invalid_call(Fn fn, const std::string& message) {
  try {
    fn();
    ADD_FAILURE() << "expected invalid_argument containing: " << message;
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr(message));
  }
}

TEST(ReferenceDecoderPrefill, RejectsBadPrefillsWithMessage) {
  ThreadPool pool(1);
  ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, KvType::kF32, 2, 8, 1);
  const std::vector<int64_t> three = {1, 2, 3}, none = {}, bad = {1, 50}, nine(9, 1);
  const auto run = [&](std::vector<PrefillSequence> seqs) { dec.prefill(seqs, pool); };
  expect_invalid_call([&] { run({}); }, "prefill: 0 sequences outside [1, max_batch 2]");
  expect_invalid_call(
      [&] {
        run({{0, 0, three}, {1, 0, three}, {1, 0, three}});
      },
      "prefill: 3 sequences outside [1, max_batch 2]");
  expect_invalid_call(
      [&] {
        run({{2, 0, three}});
      },
      "prefill: sequence 0 (slot 2): slot outside [0, max_batch 2)");
  expect_invalid_call(
      [&] {
        run({{1, 0, three}, {1, 0, three}});
      },
      "prefill: sequence 1 (slot 1): slot also used by sequence 0");
  expect_invalid_call([&] { run({{0, 0, none}}); }, "prefill: sequence 0 (slot 0): no tokens");
  expect_invalid_call([&] { run({{0, 0, bad}}); }, "token 50 at 1 outside [0, vocab 50)");
  expect_invalid_call([&] { run({{0, 1, three}}); }, "cached_tokens 1 outside [0, slot context 0]");
  expect_invalid_call([&] { run({{0, 0, nine}}); }, "cached_tokens 0 + 9 tokens > max_context 8");
  // Nothing changed: the slots are still empty and no logits were written.
  EXPECT_EQ(dec.slot_context(0), 0);
  EXPECT_EQ(dec.slot_context(1), 0);
  EXPECT_TRUE(dec.logits().empty());
  try {
    dec.slot_context(2);
    ADD_FAILURE() << "expected out_of_range";
  } catch (const std::out_of_range& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("slot_context: slot 2 outside [0, max_batch 2)"));
  }
}

TEST(ReferenceDecoderPrefill, RejectsBadStepSlotsWithMessage) {
  ThreadPool pool(1);
  ReferenceDecoder dec(tiny_shape(), WeightFormat::kF32, KvType::kF32, 2, 4, 1);
  const std::vector<int64_t> none = {}, out = {0, 2}, twice = {1, 1}, one = {1};
  expect_invalid_call([&] { dec.step_slots(none, pool); },
                      "step_slots: 0 slots outside [1, max_batch 2]");
  expect_invalid_call([&] { dec.step_slots(out, pool); },
                      "step_slots: slot 2 outside [0, max_batch 2)");
  expect_invalid_call([&] { dec.step_slots(twice, pool); }, "step_slots: slot 1 appears twice");
  const std::vector<int64_t> prompt = {1, 2, 3, 4};
  const PrefillSequence full{1, 0, prompt};
  dec.prefill(std::span(&full, 1), pool);
  try {
    dec.step_slots(one, pool);
    ADD_FAILURE() << "expected logic_error";
  } catch (const std::logic_error& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr("sequence 1 is full (max_context 4)"));
  }
}

TEST(GateUpRow, GateAndUpOfTheSameFeaturesShareABlockAndTheLastBlockIsShort) {
  // intermediate 100: block 0 holds gate rows of features 0-63 then their up rows; block 1 the
  // remaining 36 features, gate then up.
  EXPECT_EQ(gate_up_row(0, 100, false), 0);
  EXPECT_EQ(gate_up_row(63, 100, false), 63);
  EXPECT_EQ(gate_up_row(0, 100, true), 64);
  EXPECT_EQ(gate_up_row(63, 100, true), 127);
  EXPECT_EQ(gate_up_row(64, 100, false), 128);
  EXPECT_EQ(gate_up_row(99, 100, false), 163);
  EXPECT_EQ(gate_up_row(64, 100, true), 164);
  EXPECT_EQ(gate_up_row(99, 100, true), 199);
  // Every row used once.
  std::set<int64_t> rows;
  for (int64_t i = 0; i < 100; ++i) {
    rows.insert(gate_up_row(i, 100, false));
    rows.insert(gate_up_row(i, 100, true));
  }
  EXPECT_EQ(rows.size(), 200u);
  EXPECT_EQ(*rows.rbegin(), 199);
}

}  // namespace
}  // namespace llmcap::kernels
