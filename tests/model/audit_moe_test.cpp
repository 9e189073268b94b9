// The claim audit on mixture-of-experts, MLA and sliding-window models (issue 28, item 7): the
// models folder with its families, the bound of a step that reads only the experts its tokens
// reach, window-aware KV, and any weight format by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/audit.h"
#include "model/input_error.h"
#include "model/model_spec.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using llmcap::testing::data_dir;
using llmcap::testing::error_message;
using ::testing::HasSubstr;

// Sums of the same products in another order: equal to rounding.
constexpr double kRelTol = 1e-12;

const std::vector<ModelSpec>& all_models() {
  static const std::vector<ModelSpec> models = load_models(data_dir() / "models");
  return models;
}

const ModelSpec& model(const std::string& id) {
  for (const ModelSpec& m : all_models()) {
    if (m.id == id) return m;
  }
  throw std::runtime_error("no model " + id);
}

const Catalog& catalog() {
  static const Catalog c = Catalog::load(data_dir());
  return c;
}

/// A TPOT claim of `model_id` on one H100 SXM, bf16 weights and KV cache unless changed.
Claim h100_claim(const std::string& model_id, int64_t batch, int64_t context_tokens) {
  Claim c;
  c.id = "moe";
  c.kind = ClaimKind::kTpot;
  c.hardware = "h100-sxm";
  c.model = model_id;
  c.weight_format = WeightFormat::kBf16;
  c.kv_format = KvFormat::kBf16;
  c.batch = batch;
  c.context_tokens = context_tokens;
  c.tpot_s = 1.0;
  c.source = "test";
  c.as_of = "2026-12-02";
  return c;
}

/// The first MoE layer's MLP of `m`.
const MlpSpec& moe_mlp(const ModelSpec& m) {
  for (const LayerSpec& layer : m.description->layers) {
    if (layer.mlp.kind == MlpKind::kMoe) return layer.mlp;
  }
  throw std::runtime_error("no MoE layer in " + m.id);
}

// ---- The models a claim may name ----------------------------------------------------------------

TEST(AuditModels, IncludeTheFamiliesFolderSoAClaimMayNameAMoEModel) {
  std::vector<std::string> ids;
  for (const ModelSpec& m : all_models()) ids.push_back(m.id);
  EXPECT_THAT(ids, ::testing::IsSupersetOf({"llama-3.1-8b", "qwen3-30b-a3b", "deepseek-v3",
                                            "gpt-oss-120b", "mixtral-8x7b", "kimi-k2"}));
  const std::vector<Claim> claims = parse_claims(
      R"({"claims": [{"id": "q", "hardware": "h100-sxm", "model": "qwen3-30b-a3b",
          "weight_format": "q4_k_m", "batch": 1, "context_tokens": 512, "tpot_s": 0.01,
          "source": "test", "as_of": "2026-12-02"}]})",
      "moe.json", catalog(), all_models());
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_EQ(claims[0].model, "qwen3-30b-a3b");
  EXPECT_EQ(claims[0].weight_format, WeightFormat::kQ4KM);
}

TEST(AuditModels, AnUnknownModelListsTheFamiliesIdsToo) {
  const std::string m = error_message<InputError>([] {
    parse_claims(R"({"claims": [{"id": "q", "hardware": "h100-sxm", "model": "qwen3-31b",
        "batch": 1, "context_tokens": 512, "tpot_s": 0.01, "source": "t", "as_of": "t"}]})",
                 "moe.json", catalog(), all_models());
  });
  EXPECT_THAT(m, HasSubstr("moe.json: claim \"q\": field \"model\": unknown model \"qwen3-31b\"; "
                           "known: "));
  EXPECT_THAT(m, HasSubstr("llama-3.1-8b"));
  EXPECT_THAT(m, HasSubstr("qwen3-30b-a3b"));
  EXPECT_THAT(m, HasSubstr("deepseek-v3"));
}

TEST(AuditModels, TwoFilesWithOneIdAreRefusedNamingBoth) {
  const auto dir = llmcap::testing::fresh_temp_dir();
  const std::string config =
      llmcap::testing::read_text(data_dir() / "models" / "families" / "qwen3-30b-a3b.json");
  llmcap::testing::write_text(dir / "a.json", config);
  llmcap::testing::write_text(dir / "families" / "b.json", config);
  EXPECT_EQ(error_message<InputError>([&] { load_models(dir); }),
            (dir / "families" / "b.json").string() +
                ": model id \"qwen3-30b-a3b\" is also the id of " + (dir / "a.json").string() +
                "; a claim could not tell them apart");
}

TEST(AuditModels, ExpertsOnlyMxfp4OnADenseModelIsRefusedWithTheField) {
  const std::string m = error_message<InputError>([] {
    parse_claims(R"({"claims": [{"id": "d", "hardware": "h100-sxm", "model": "llama-3.1-8b",
        "weight_format": "mxfp4-experts", "batch": 1, "context_tokens": 512, "tpot_s": 0.01,
        "source": "t", "as_of": "t"}]})",
                 "dense.json", catalog(), all_models());
  });
  EXPECT_THAT(m, HasSubstr("dense.json: claim \"d\": field \"weight_format\": weight format "
                           "\"mxfp4-experts\""));
  EXPECT_THAT(m, HasSubstr("has none (a dense model); expected a format for every layer matrix"));
}

// ---- What a decode step reads -------------------------------------------------------------------

TEST(DecodeStepWeightBytes, OneTokenReadsTheActiveParametersLessTheInputEmbedding) {
  const ModelSpec& m = model("qwen3-30b-a3b");  // untied; bf16 stores every tensor in 2 bytes
  const ModelDescription& d = *m.description;
  const double active_less_embedding =
      static_cast<double>(d.num_active_params() - d.vocab_size * d.hidden_size);
  EXPECT_NEAR(d.decode_step_weight_bytes(WeightFormat::kBf16, 1), 2 * active_less_embedding,
              kRelTol * 2 * active_less_embedding);
}

TEST(DecodeStepWeightBytes, ABatchReachesTheExpectedDistinctExpertsUnderUniformRouting) {
  const ModelSpec& m = model("qwen3-30b-a3b");
  const ModelDescription& d = *m.description;
  const MlpSpec& mlp = moe_mlp(m);
  const double e = static_cast<double>(mlp.num_experts);            // 128
  const double k = static_cast<double>(mlp.num_experts_per_token);  // 8
  // Bytes of every routed expert of every layer, bf16: layers x E x 3 x hidden x width x 2.
  const double all_experts = static_cast<double>(d.layers.size()) * e * 3.0 *
                             static_cast<double>(d.hidden_size) *
                             static_cast<double>(mlp.expert_intermediate_size) * 2.0;
  const double one_token = d.decode_step_weight_bytes(WeightFormat::kBf16, 1);
  const double batch = 16;
  const double reached = 1.0 - std::pow(1.0 - k / e, batch);  // 0.644 of the experts
  const double expected = one_token + all_experts * (reached - k / e);
  EXPECT_NEAR(d.decode_step_weight_bytes(WeightFormat::kBf16, batch), expected, kRelTol * expected);
  // A huge batch reaches every expert: all weights but the input embedding.
  const double all_but_embedding = static_cast<double>(d.weight_bytes(WeightFormat::kBf16)) -
                                   2.0 * static_cast<double>(d.vocab_size * d.hidden_size);
  EXPECT_NEAR(d.decode_step_weight_bytes(WeightFormat::kBf16, 1e6), all_but_embedding,
              kRelTol * all_but_embedding);
}

TEST(DecodeStepWeightBytes, ADenseModelReadsAllWeightsLessTheInputEmbeddingAtAnyBatch) {
  const ModelSpec& m = model("llama-3.1-8b");
  const ModelDescription d = describe_layers(m);
  const double expected =
      static_cast<double>(m.weight_bytes(WeightFormat::kInt4) -
                          matrix_weight_bytes(m.vocab_size, m.hidden_size, WeightFormat::kInt4));
  EXPECT_EQ(d.decode_step_weight_bytes(WeightFormat::kInt4, 1), expected);
  EXPECT_EQ(d.decode_step_weight_bytes(WeightFormat::kInt4, 7), expected);
}

TEST(DecodeStepWeightBytes, RefusesFewerThanOneToken) {
  const ModelDescription& d = *model("qwen3-30b-a3b").description;
  EXPECT_EQ(error_message<std::invalid_argument>(
                [&] { d.decode_step_weight_bytes(WeightFormat::kBf16, 0); }),
            "decode_step_weight_bytes: num_tokens must be >= 1, got 0.000000");
}

// ---- The bound --------------------------------------------------------------------------------

TEST(AuditMoeBound, StreamsTheActiveExpertsNotAllWeights) {
  const ModelSpec& m = model("qwen3-30b-a3b");
  const Claim c = h100_claim("qwen3-30b-a3b", 1, 1000);
  const ClaimAudit a = audit_claim(c, catalog(), all_models());
  const double weights = m.description->decode_step_weight_bytes(WeightFormat::kBf16, 1);
  const double kv = 1000.0 * static_cast<double>(m.kv_cache_bytes_per_token(KvFormat::kBf16));
  EXPECT_EQ(a.bytes_per_step, std::llround(weights + kv));
  // About 3.3 B active parameters of 30.5 B: the step reads about a ninth of the weights.
  EXPECT_LT(static_cast<double>(a.bytes_per_step), 0.15 * static_cast<double>(a.weight_bytes));
  EXPECT_NEAR(*a.lower_bound_s, (weights + kv) / 3.35e12, kRelTol * *a.lower_bound_s);
  EXPECT_THAT(a.explanation, HasSubstr("of 128 experts per MoE layer, 8 per token, 1 token "
                                       "reaches 128 x (1 - (1 - 8/128)^1) = 8 under uniform "
                                       "routing, each in bf16"));
}

TEST(AuditMoeBound, ABatchStreamsTheDistinctExpertsItsTokensReach) {
  const ModelSpec& m = model("qwen3-30b-a3b");
  const ClaimAudit a = audit_claim(h100_claim("qwen3-30b-a3b", 16, 1000), catalog(), all_models());
  const double weights = m.description->decode_step_weight_bytes(WeightFormat::kBf16, 16);
  const double kv =
      16.0 * 1000.0 * static_cast<double>(m.kv_cache_bytes_per_token(KvFormat::kBf16));
  EXPECT_EQ(a.bytes_per_step, std::llround(weights + kv));
  EXPECT_THAT(a.explanation, HasSubstr("16 tokens reach 128 x (1 - (1 - 8/128)^16) = 82.42"));
}

TEST(AuditMoeBound, SlidingWindowLayersReadOnlyTheirWindowOfKv) {
  const ModelSpec& m = model("gpt-oss-120b");  // half its layers see a 128-token window
  Claim c = h100_claim("gpt-oss-120b", 2, 8192);
  c.weight_format = WeightFormat::kMxfp4Experts;
  const ClaimAudit a = audit_claim(c, catalog(), all_models());
  const double weights = m.description->decode_step_weight_bytes(WeightFormat::kMxfp4Experts, 2);
  const double kv =
      2.0 * static_cast<double>(m.description->kv_cache_bytes_for_sequence(8192, KvFormat::kBf16));
  EXPECT_LT(kv, 2.0 * 8192 * static_cast<double>(m.kv_cache_bytes_per_token(KvFormat::kBf16)));
  EXPECT_EQ(a.bytes_per_step, std::llround(weights + kv));
  EXPECT_THAT(a.explanation, HasSubstr("sliding-window layers keep only their window"));
  EXPECT_EQ(a.weight_bytes, m.weight_bytes(WeightFormat::kMxfp4Experts));
}

TEST(AuditMoeBound, MlaAttentionFlopsUseItsDecompressedHeadWidths) {
  const ModelSpec& m = model("deepseek-v3");
  Claim c = h100_claim("deepseek-v3", 1, 4096);
  c.hardware = "aws-p5en.48xlarge";  // 8 x H200: holds fp8-block DeepSeek-V3
  c.weight_format = WeightFormat::kFp8Block;
  const ClaimAudit a = audit_claim(c, catalog(), all_models());
  // 61 layers x 128 heads x (128 + 64 + 128) widths x 4096 tokens x 2 FLOPs.
  const double attention = 2.0 * 61 * 128 * (128 + 64 + 128) * 4096.0;
  const double matrices = 2.0 * (static_cast<double>(m.num_layer_matrix_params()) +
                                 static_cast<double>(m.vocab_size * m.hidden_size));
  EXPECT_NEAR(a.flops_per_step, matrices + attention, kRelTol * a.flops_per_step);
  const double kv = 4096.0 * 61 * (512 + 64);  // one bf16 latent of 576 per layer and token
  EXPECT_EQ(
      a.bytes_per_step,
      std::llround(m.description->decode_step_weight_bytes(WeightFormat::kFp8Block, 1) + kv * 2));
}

TEST(AuditMoeBound, AnyWeightFormatByNamePricesItsBytes) {
  const ModelSpec& m = model("qwen3-30b-a3b");
  Claim c = h100_claim("qwen3-30b-a3b", 1, 512);
  c.weight_format = WeightFormat::kQ4KM;
  const ClaimAudit a = audit_claim(c, catalog(), all_models());
  EXPECT_EQ(a.weight_format, WeightFormat::kQ4KM);
  EXPECT_EQ(a.weight_bytes, m.weight_bytes(WeightFormat::kQ4KM));
  EXPECT_THAT(a.explanation, HasSubstr("qwen3-30b-a3b in q4_k_m"));
  EXPECT_THAT(a.explanation, HasSubstr("each in q4_k_m"));
  ASSERT_TRUE(a.predicted_s.has_value());
  EXPECT_GT(*a.predicted_s, *a.lower_bound_s);
}

// ---- The shipped claims ----------------------------------------------------------------------

TEST(AuditMoeClaims, ShippedClaimsParseAndAreNotImpossibleOnceOnlyActiveExpertsStream) {
  const std::vector<Claim> claims =
      read_claims(data_dir() / "claims" / "moe-claims.json", catalog(), all_models());
  ASSERT_EQ(claims.size(), 2u);
  for (const Claim& c : claims) {
    const ClaimAudit a = audit_claim(c, catalog(), all_models());
    EXPECT_EQ(a.model, "deepseek-v3");
    EXPECT_TRUE(a.fits) << c.id;
    // Reading all 377 GB of int4 weights per token at 460.8 GB/s would take 0.8 s, far above the
    // claimed 71-100 ms; the 8 experts of 256 a token reaches take about 45 ms.
    EXPECT_LT(*a.lower_bound_s, *a.claimed_s) << c.id;
    EXPECT_GT(static_cast<double>(a.weight_bytes) / 460.8e9, *a.claimed_s) << c.id;
    EXPECT_NE(a.verdict, Verdict::kImpossible) << c.id << ": " << a.explanation;
  }
}

}  // namespace
}  // namespace llmcap::model
