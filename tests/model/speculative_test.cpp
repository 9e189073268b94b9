// Speculative decoding in the performance model: the verification's shape in the roofline,
// the draft passes SpeculativePredictor adds, and the draft heads (MTP, EAGLE) as models.
#include "model/speculative.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/roofline.h"
#include "predictor_fixtures.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using llmcap::testing::data_dir;

constexpr double kRelTol = 1e-9;
/// A decode step of Llama-3.1-8B at batch 1 streams 16 GB of weights; three more tokens add
/// their activations, KV writes and attention, well under 1% of that.
constexpr double kSmallBatchRelTol = 0.01;

/// step time = 1 ms + 1 us x new tokens; records every shape it prices.
class LinearPredictor final : public StepTimePredictor {
 public:
  double step_time_s(const BatchShape& b) const override {
    shapes.push_back(b);
    return 1e-3 + 1e-6 * static_cast<double>(b.num_new_tokens());
  }
  mutable std::vector<BatchShape> shapes;
};

BatchShape decode(int64_t num_seqs, int64_t context_per_seq) {
  BatchShape b;
  b.num_decode_seqs = num_seqs;
  b.num_decode_context_tokens = num_seqs * context_per_seq;
  return b;
}

BatchShape with_drafts(BatchShape b, int64_t k) {
  b.num_decode_draft_tokens = k * b.num_decode_seqs;
  b.num_decode_draft_attention_pairs =
      k * b.num_decode_context_tokens + b.num_decode_seqs * k * (k + 1) / 2;
  return b;
}

const OpTime& op(const std::vector<OpTime>& ops, const std::string& name) {
  for (const OpTime& o : ops) {
    if (o.op == name) return o;
  }
  throw std::runtime_error("no operator " + name);
}

ModelSpec llama8b() { return load_model_spec(data_dir() / "models" / "llama-3.1-8b.json"); }

RooflinePredictor h100_like(const ModelSpec& m) {
  Deployment d;
  d.kind = DeviceKind::kGpu;
  d.memory_bandwidth_bytes_per_s = 3.35e12;
  d.peak_flops_per_s = {{"bf16", 989e12}};
  return RooflinePredictor(m, WeightFormat::kBf16, KvFormat::kBf16, d,
                           default_efficiency(DeviceKind::kGpu));
}

TEST(SpeculativePredictor, AddsOneDraftPassPerDraftTokenToTheVerification) {
  // 4 decodes of 100 tokens verifying 3 drafts each, beside a 10-token prefill chunk: the
  // draft runs once over the prefill and the decodes, then twice over the decodes alone, their
  // contexts grown by one draft token each time.
  auto target = std::make_shared<LinearPredictor>();
  auto draft = std::make_shared<LinearPredictor>();
  const SpeculativePredictor p(target, draft, 3);
  BatchShape b = with_drafts(decode(4, 100), 3);
  b.num_prefill_seqs = 1;
  b.num_prefill_tokens = 10;
  b.num_prefill_attention_pairs = 55;
  b.num_prefill_seqs_completing = 1;
  const double s = p.step_time_s(b);
  ASSERT_EQ(target->shapes.size(), 1U);
  EXPECT_EQ(target->shapes[0].num_new_tokens(), 10 + 4 + 12);
  ASSERT_EQ(draft->shapes.size(), 3U);
  EXPECT_EQ(draft->shapes[0].num_new_tokens(), 14);
  EXPECT_EQ(draft->shapes[0].num_decode_draft_tokens, 0);
  EXPECT_EQ(draft->shapes[0].num_decode_context_tokens, 400);
  EXPECT_EQ(draft->shapes[1].num_new_tokens(), 4);
  EXPECT_EQ(draft->shapes[1].num_decode_context_tokens, 404);
  EXPECT_EQ(draft->shapes[2].num_decode_context_tokens, 408);
  const double expected = (1e-3 + 26e-6) + (1e-3 + 14e-6) + 2 * (1e-3 + 4e-6);
  EXPECT_NEAR(s, expected, expected * kRelTol);
}

TEST(SpeculativePredictor, PromptLookupDraftingCostsNothing) {
  auto target = std::make_shared<LinearPredictor>();
  const SpeculativePredictor p(target, nullptr, 4);
  const BatchShape b = with_drafts(decode(2, 50), 4);
  EXPECT_DOUBLE_EQ(p.step_time_s(b), target->step_time_s(b));
  EXPECT_DOUBLE_EQ(p.draft_time_s(b), 0.0);
  EXPECT_THROW(SpeculativePredictor(target, nullptr, 0), std::invalid_argument);
}

TEST(SpeculativePredictor, PricesARunOfDecodeStepsExactlyAsEachStepAlone) {
  // An MTP-style head of the target's last layer drafting 2 tokens, both priced by the roofline.
  const ModelSpec m = llama8b();
  auto target = std::make_shared<RooflinePredictor>(h100_like(m));
  auto draft = std::make_shared<RooflinePredictor>(h100_like(draft_head_spec(m, 1)));
  const SpeculativePredictor p(target, draft, 2);
  for (const int64_t seqs : {1, 16}) {
    EXPECT_TRUE(testing::prices_each_step_alike(p, testing::decode_run(seqs, 500, 30, 2)));
  }
}

TEST(SpeculativeVerification, EachDraftTokenIsALogitRowAndAQueryOfItsSequence) {
  // One sequence of 1,000 tokens verifying 3 drafts vs 4 sequences of 1,000: the same tokens
  // and logit rows (LM head, linear layers), attention over 1,000 + 3,006 pairs vs 4,000, and
  // the KV read once (1,000 entries + 3 written) instead of 4,000 times.
  const RooflinePredictor p = h100_like(llama8b());
  const std::vector<OpTime> verify = p.breakdown(with_drafts(decode(1, 1000), 3));
  const std::vector<OpTime> four = p.breakdown(decode(4, 1000));
  EXPECT_NEAR(op(verify, "lm_head").flops, op(four, "lm_head").flops,
              op(four, "lm_head").flops * kRelTol);
  EXPECT_NEAR(op(verify, "qkv_proj").flops, op(four, "qkv_proj").flops,
              op(four, "qkv_proj").flops * kRelTol);
  EXPECT_NEAR(op(verify, "attention").flops / op(four, "attention").flops, 4006.0 / 4000.0,
              kRelTol);
  EXPECT_LT(op(verify, "attention").bytes, 0.3 * op(four, "attention").bytes);
}

TEST(SpeculativeVerification, AtBatchOneThreeDraftsCostAboutOneDecodeStep) {
  const RooflinePredictor p = h100_like(llama8b());
  const double plain_s = p.step_time_s(decode(1, 1000));
  const double verify_s = p.step_time_s(with_drafts(decode(1, 1000), 3));
  EXPECT_GT(verify_s, plain_s);
  EXPECT_LT(verify_s, plain_s * (1 + kSmallBatchRelTol));
}

TEST(DraftHead, IsTheTargetsLastLayerOnItsEmbeddingAndHead) {
  // Llama-3.1-8B's layer in bf16: q and o 4096 x 4096, k and v 1024 x 4096, gate, up and
  // down 3 x 14336 x 4096, two norms of 4096: 218,112,000 parameters, 436,224,000 bytes.
  const ModelSpec m = llama8b();
  const ModelSpec head = draft_head_spec(m, 1);
  EXPECT_EQ(head.num_layers, 1);
  EXPECT_EQ(head.hidden_size, m.hidden_size);
  EXPECT_EQ(head.vocab_size, m.vocab_size);
  EXPECT_EQ(draft_head_weight_bytes(m, 1, WeightFormat::kBf16), 436'224'000);
  EXPECT_EQ(draft_head_weight_bytes(m, 2, WeightFormat::kBf16), 2 * 436'224'000);
  EXPECT_THROW(draft_head_spec(m, 0), std::invalid_argument);
}

TEST(DraftHead, OfADescribedModelCopiesItsLastLayer) {
  // DeepSeek-V3's MTP module is one more MoE layer like its last (arXiv 2412.19437, 2.2).
  const ModelSpec v3 = load_model_spec(data_dir() / "models" / "families" / "deepseek-v3.json");
  const ModelSpec head = draft_head_spec(v3, 1);
  ASSERT_NE(head.description, nullptr);
  ASSERT_EQ(head.description->layers.size(), 1U);
  EXPECT_EQ(head.description->layers[0], v3.description->layers.back());
  EXPECT_EQ(v3.description->layers.size(), 61U);  // the target is left as it was
  const int64_t layer_bytes = draft_head_weight_bytes(v3, 1, WeightFormat::kBf16);
  EXPECT_GT(layer_bytes, 0);
  EXPECT_LT(layer_bytes, v3.weight_bytes(WeightFormat::kBf16) / 50);
}

}  // namespace
}  // namespace llmcap::model
