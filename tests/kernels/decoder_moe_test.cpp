// The reference decoder's mixture-of-experts MLP (kernels/decoder.h, DecoderShape::is_moe):
// against a straightforward per-token implementation, its routing statistics, its scalar twin
// and its checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "decoder_reference.h"
#include "kernels/decoder.h"

namespace llmcap::kernels {
namespace {

using decoder_reference::ReferenceSequence;
using decoder_reference::relative_error;
using ::testing::HasSubstr;

// Max |logit - reference| / max |reference logit| (as decoder_test.cpp): f32 weights differ by
// the kernels' f32 accumulation order only; bf16 weights may meet bf16-rounded activations.
constexpr double kF32Tolerance = 2e-5;
constexpr double kBf16Tolerance = 2e-2;
// The scalar twin against the vector path, f32 weights: summation order only.
constexpr double kScalarTwinTolerance = 2e-5;
// Mean distinct experts per layer and step against E (1 - (1 - k/E)^T): the mean of 96 samples
// whose own standard deviation is ~1.2 experts at E 16, k 4, T 3.
constexpr double kDistinctExpertsTolerance = 0.75;

/// A two-layer model of 8 experts, top-2, with a shared expert (`shared` false: none).
DecoderShape tiny_moe_shape(bool shared = true) {
  DecoderShape s;
  s.hidden = 64;
  s.num_layers = 2;
  s.num_heads = 4;
  s.num_kv_heads = 2;
  s.head_dim = 16;
  s.vocab = 50;
  s.num_experts = 8;
  s.experts_per_token = 2;
  s.expert_intermediate = 32;
  s.shared_intermediate = shared ? 64 : 0;
  return s;
}

/// Steps `dec` `steps` times from `contexts` and `tokens` beside one reference per sequence;
/// returns the largest relative logit error, and checks per layer and step that the decoder's
/// experts_hit() is the number of distinct experts the references chose.
double moe_error_against_reference(ReferenceDecoder& dec, const std::vector<int64_t>& contexts,
                                   const std::vector<int64_t>& tokens, int steps,
                                   ThreadPool& pool) {
  dec.set_contexts(contexts, tokens);
  std::vector<ReferenceSequence> refs;
  for (size_t b = 0; b < contexts.size(); ++b) refs.emplace_back(dec, static_cast<int64_t>(b));
  const auto vocab = static_cast<size_t>(dec.shape().vocab);
  const auto layers = static_cast<size_t>(dec.shape().num_layers);
  double worst = 0;
  for (int step = 0; step < steps; ++step) {
    const std::vector<int64_t> consumed(dec.next_tokens().begin(), dec.next_tokens().end());
    dec.step(pool);
    for (size_t b = 0; b < contexts.size(); ++b) {
      worst = std::max(
          worst, relative_error(dec.logits().subspan(b * vocab, vocab), refs[b].step(consumed[b])));
    }
    EXPECT_EQ(dec.experts_hit().size(), layers);
    for (size_t l = 0; l < layers; ++l) {
      std::set<int64_t> chosen;
      for (const ReferenceSequence& r : refs) {
        const auto& c = r.chosen()[static_cast<size_t>(step) * layers + l];
        chosen.insert(c.begin(), c.end());
      }
      EXPECT_EQ(dec.experts_hit()[l], static_cast<int64_t>(chosen.size()))
          << "step " << step << ", layer " << l;
    }
  }
  return worst;
}

TEST(MoeDecoder, F32WeightsMatchStraightforwardPerTokenImplementation) {
  ThreadPool pool(2);
  ReferenceDecoder dec(tiny_moe_shape(), WeightFormat::kF32, KvType::kF32, 3, 16, 7);
  EXPECT_LT(moe_error_against_reference(dec, {3, 0, 5}, {1, 17, 33}, 3, pool), kF32Tolerance);
}

TEST(MoeDecoder, Bf16WeightsWithoutSharedExpertMatchStraightforwardImplementation) {
  ThreadPool pool(2);
  ReferenceDecoder dec(tiny_moe_shape(false), WeightFormat::kBf16, KvType::kBf16, 2, 16, 8);
  EXPECT_LT(moe_error_against_reference(dec, {4, 2}, {5, 40}, 2, pool), kBf16Tolerance);
}

TEST(MoeDecoder, ScalarTwinGivesTheVectorPathsLogits) {
  ThreadPool pool(2);
  ReferenceDecoder dec(tiny_moe_shape(), WeightFormat::kF32, KvType::kF32, 4, 16, 9);
  const std::vector<int64_t> contexts = {1, 6, 2, 9}, tokens = {3, 11, 29, 47};
  dec.set_contexts(contexts, tokens);
  dec.step(pool, best_isa());
  const std::vector<float> vector_logits(dec.logits().begin(), dec.logits().end());
  const std::vector<int64_t> vector_hits(dec.experts_hit().begin(), dec.experts_hit().end());
  dec.set_contexts(contexts, tokens);
  dec.step(pool, Isa::kScalar);
  std::vector<double> reference(vector_logits.begin(), vector_logits.end());
  EXPECT_LT(relative_error(dec.logits(), reference), kScalarTwinTolerance);
  EXPECT_EQ(std::vector<int64_t>(dec.experts_hit().begin(), dec.experts_hit().end()), vector_hits);
}

TEST(MoeDecoder, QuantisedWeightsGiveFiniteLogitsDeterminedByTheSeed) {
  ThreadPool pool(2);
  for (const WeightFormat f : {WeightFormat::kInt8, WeightFormat::kInt4}) {
    std::vector<std::vector<float>> runs;
    for (int run = 0; run < 2; ++run) {
      ReferenceDecoder dec(tiny_moe_shape(), f, KvType::kBf16, 2, 16, 11);
      dec.set_contexts(std::vector<int64_t>{2, 5}, std::vector<int64_t>{4, 8});
      dec.step(pool);
      dec.step(pool);
      runs.emplace_back(dec.logits().begin(), dec.logits().end());
    }
    for (const float v : runs[0]) ASSERT_TRUE(std::isfinite(v)) << to_string(f);
    EXPECT_EQ(runs[0], runs[1]) << to_string(f);
  }
}

TEST(MoeDecoder, DistinctExpertsPerStepFollowUniformTopKOfRandomLogits) {
  ThreadPool pool(2);
  DecoderShape s = tiny_moe_shape(false);
  s.num_layers = 4;
  s.num_experts = 16;
  s.experts_per_token = 4;
  s.vocab = 500;
  s.hidden = 512;  // wide enough that a router row's norm varies little between experts
  s.num_heads = 8;
  s.num_kv_heads = 4;
  s.head_dim = 64;
  s.expert_intermediate = 64;
  ReferenceDecoder dec(s, WeightFormat::kF32, KvType::kBf16, 3, 64, 12);
  const int64_t batch = 3;
  std::vector<int> times_hit(static_cast<size_t>(s.num_experts), 0);
  double sum = 0;
  int samples = 0;
  for (int64_t i = 0; i < 24; ++i) {
    // Distinct tokens and contexts, as the sequences of a serving batch.
    const std::vector<int64_t> contexts = {i, 2 * i + 1, 40 - i};
    const std::vector<int64_t> tokens = {(7 * i) % s.vocab, (7 * i + 101) % s.vocab,
                                         (13 * i + 250) % s.vocab};
    dec.set_contexts(contexts, tokens);
    dec.step(pool);
    for (const int64_t hit : dec.experts_hit()) {
      EXPECT_GE(hit, s.experts_per_token);
      EXPECT_LE(hit, batch * s.experts_per_token);
      sum += static_cast<double>(hit);
      ++samples;
    }
  }
  const double k_over_e =
      static_cast<double>(s.experts_per_token) / static_cast<double>(s.num_experts);
  const double expected =
      static_cast<double>(s.num_experts) * (1 - std::pow(1 - k_over_e, static_cast<double>(batch)));
  EXPECT_NEAR(sum / samples, expected, kDistinctExpertsTolerance);
  // One sequence: exactly k experts per layer.
  dec.set_contexts(std::vector<int64_t>{5}, std::vector<int64_t>{9});
  dec.step(pool);
  for (const int64_t hit : dec.experts_hit()) EXPECT_EQ(hit, s.experts_per_token);
}

TEST(MoeDecoder, WeightBytesAndAccountingCountTheExperts) {
  ThreadPool pool(1);
  const DecoderShape s = tiny_moe_shape();
  ReferenceDecoder dec(s, WeightFormat::kInt8, KvType::kBf16, 1, 8, 3);
  const DecoderLayerWeights& w = dec.layer(0);
  ASSERT_EQ(w.expert_gate_up.size(), 8u);
  EXPECT_EQ(w.expert_gate_up[0].rows(), 2 * s.expert_intermediate);
  EXPECT_EQ(w.expert_down[0].cols(), s.expert_intermediate);
  EXPECT_EQ(w.router.rows(), s.num_experts);
  EXPECT_EQ(w.shared_gate_up.rows(), 2 * s.shared_intermediate);
  const int64_t per_layer = w.qkv.bytes() + w.o.bytes() + w.router.bytes() +
                            8 * (w.expert_gate_up[0].bytes() + w.expert_down[0].bytes()) +
                            w.shared_gate_up.bytes() + w.shared_down.bytes() + 4 * 2 * s.hidden;
  EXPECT_EQ(dec.weight_bytes(), 2 * per_layer + dec.lm_head().bytes() + 4 * s.hidden);

  dec.set_contexts(std::vector<int64_t>{3});
  dec.step(pool);  // one token: k experts per layer
  dec.set_contexts(std::vector<int64_t>{3});
  const std::vector<OpAccount> ops = dec.account();
  std::vector<std::string> names;
  for (const OpAccount& op : ops) names.push_back(op.op);
  EXPECT_THAT(names, ::testing::IsSupersetOf({"router", "expert_gate_up_proj", "expert_swiglu",
                                              "expert_down_proj", "shared_gate_up_proj"}));
  EXPECT_THAT(names, ::testing::Not(::testing::Contains("gate_up_proj")));
  for (const OpAccount& op : ops) {
    if (op.op != "expert_gate_up_proj") continue;
    const int64_t pairs = s.experts_per_token;  // batch 1 x k
    EXPECT_EQ(op.bytes, 2 * 2 * w.expert_gate_up[0].bytes() +
                            2 * pairs * (2 * s.expert_intermediate + s.hidden) * 4);
    EXPECT_EQ(op.flops, 2 * 2 * pairs * 2 * s.expert_intermediate * s.hidden);
  }
}

TEST(MoeDecoder, RejectsBadExpertShapesNamingTheField) {
  const auto message = [](DecoderShape s, WeightFormat f) {
    try {
      ReferenceDecoder dec(s, f, KvType::kBf16, 1, 8, 1);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  DecoderShape s = tiny_moe_shape();
  s.experts_per_token = 9;
  EXPECT_THAT(message(s, WeightFormat::kF32),
              HasSubstr("experts_per_token must be in [1, num_experts 8] (got 9)"));
  s = tiny_moe_shape();
  s.expert_intermediate = 0;
  EXPECT_THAT(message(s, WeightFormat::kF32), HasSubstr("expert_intermediate must be in"));
  s = tiny_moe_shape();
  s.expert_intermediate = 40;
  EXPECT_THAT(message(s, WeightFormat::kInt4),
              HasSubstr("int4 weights need expert_intermediate to be a multiple of 32 (got 40)"));
  DecoderShape dense;
  dense.hidden = 64;
  dense.intermediate = 96;
  dense.num_layers = 1;
  dense.num_heads = 4;
  dense.num_kv_heads = 2;
  dense.head_dim = 16;
  dense.vocab = 50;
  dense.experts_per_token = 2;
  EXPECT_THAT(message(dense, WeightFormat::kF32),
              HasSubstr("must be 0 without experts (got 2, 0, 0)"));
}

}  // namespace
}  // namespace llmcap::kernels
