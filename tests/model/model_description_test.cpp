#include "model/model_description.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "model/input_error.h"
#include "model/model_spec.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using llmcap::testing::data_dir;
using llmcap::testing::fresh_temp_dir;
using llmcap::testing::read_text;
using llmcap::testing::replace_once;
using llmcap::testing::write_text;

/// The issue's tolerance against a model card's parameter count.
constexpr double kCardRelTol = 0.005;

ModelDescription family(const std::string& name) {
  return load_model_description(data_dir() / "models" / "families" / (name + ".json"));
}

std::string error_of(const std::filesystem::path& path) {
  try {
    load_model_description(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

/// `name`'s shipped config with `from` replaced by `to`, written to a scratch file.
std::filesystem::path edited(const std::string& name, const std::string& from,
                             const std::string& to) {
  const std::filesystem::path path = fresh_temp_dir() / (name + ".json");
  write_text(path, replace_once(read_text(data_dir() / "models" / "families" / (name + ".json")),
                                from, to));
  return path;
}

void expect_card(int64_t ours, double card) {
  EXPECT_NEAR(static_cast<double>(ours), card, kCardRelTol * card) << "ours: " << ours;
}

// ---- Parameters against the model cards (sources in each config's "source") ---------------

TEST(ModelDescriptionParams, MixtralMatchesCard) {
  // mistralai/Mixtral-8x7B-v0.1 card: 46.7B total, 12.9B active per token.
  const ModelDescription m = family("mixtral-8x7b");
  expect_card(m.num_params(), 46.7e9);
  expect_card(m.num_active_params(), 12.9e9);
}

TEST(ModelDescriptionParams, OlmoeMatchesPaper) {
  // allenai/OLMoE-1B-7B-0924 (arXiv 2409.02060): 6.9B total, 1.3B active per token. Every
  // layer sparse: 64 experts of width 1024, top-8; untied embeddings.
  const ModelDescription m = family("olmoe-1b-7b");
  ASSERT_EQ(m.layers.size(), 16u);
  const MlpSpec& mlp = m.layers.front().mlp;
  EXPECT_EQ(mlp.kind, MlpKind::kMoe);
  EXPECT_EQ(mlp.num_experts, 64);
  EXPECT_EQ(mlp.num_experts_per_token, 8);
  EXPECT_EQ(mlp.expert_intermediate_size, 1024);
  EXPECT_EQ(mlp.num_shared_experts, 0);
  EXPECT_TRUE(m.layers.front().attention.qk_norm);
  expect_card(m.num_params(), 6.9e9);
  // 1.28B counted with both embedding matrices: the paper's 1.3B at its precision.
  EXPECT_NEAR(static_cast<double>(m.num_active_params()), 1.3e9, 0.05e9);
}

TEST(ModelDescriptionParams, Qwen3MoeMatchesCardTotalAndNonEmbedding) {
  // Qwen/Qwen3-30B-A3B card: 30.5B total, 29.9B non-embedding, "3.3B activated".
  const ModelDescription m = family("qwen3-30b-a3b");
  expect_card(m.num_params(), 30.5e9);
  expect_card(m.num_params() - 2 * 151936 * 2048, 29.9e9);
  // Counted with both embedding matrices we get 3.353B: 1.6% above the card's 3.3B, which
  // is the figure truncated to two digits (3.35 -> 3.3); not within 0.5%.
  EXPECT_NEAR(static_cast<double>(m.num_active_params()), 3.353e9, 0.001e9);
}

TEST(ModelDescriptionParams, DeepSeekV3MatchesCard) {
  // deepseek-ai/DeepSeek-V3 card: 671B total (685B with the 14B MTP module, excluded here),
  // 37B activated. The 37B leaves out the input embedding (129280 x 7168 = 926.7M): with it
  // the count is 37.55B, without it 36.63B, which is 37B at the card's precision.
  const ModelDescription m = family("deepseek-v3");
  expect_card(m.num_params(), 671e9);
  const int64_t input_embedding = int64_t{129280} * 7168;
  EXPECT_NEAR(static_cast<double>(m.num_active_params() - input_embedding), 37e9, 0.5e9);
}

TEST(ModelDescriptionParams, Gemma2MatchesHuggingFaceCount) {
  // google/gemma-2-9b: 9.24B parameters (tied LM head counted once).
  const ModelDescription m = family("gemma-2-9b");
  expect_card(m.num_params(), 9.24e9);
  EXPECT_EQ(m.num_active_params(), m.num_params());
}

TEST(ModelDescriptionParams, GptOssMatchesCardTable) {
  // OpenAI gpt-oss model card, table 1: 120b 116.83B total, 5.13B active; 20b 20.91B, 3.61B.
  // The card's active count includes the unembedding only; ours adds the input embedding
  // (201088 x 2880 = 579,133,440).
  const int64_t input_embedding = int64_t{201088} * 2880;
  const ModelDescription big = family("gpt-oss-120b");
  expect_card(big.num_params(), 116.83e9);
  expect_card(big.num_active_params() - input_embedding, 5.13e9);
  const ModelDescription small = family("gpt-oss-20b");
  expect_card(small.num_params(), 20.91e9);
  expect_card(small.num_active_params() - input_embedding, 3.61e9);
}

TEST(ModelDescriptionParams, Qwen2MoeMatchesCard) {
  // Qwen/Qwen1.5-MoE-A2.7B card: 14.3B total, 2.7B activated.
  const ModelDescription m = family("qwen1.5-moe-a2.7b");
  expect_card(m.num_params(), 14.3e9);
  expect_card(m.num_active_params(), 2.7e9);
}

TEST(ModelDescriptionParams, DeepSeekV2LiteMatchesCardTotal) {
  // deepseek-ai/DeepSeek-V2-Lite card: 15.7B total, 2.4B activated. Ours: 2.661B with both
  // embedding matrices, 2.451B without the input embedding (102400 x 2048): the card's 2.4B is
  // matched only to its own precision.
  const ModelDescription m = family("deepseek-v2-lite");
  expect_card(m.num_params(), 15.7e9);
  EXPECT_NEAR(static_cast<double>(m.num_active_params() - int64_t{102400} * 2048), 2.4e9, 0.06e9);
}

TEST(ModelDescriptionParams, Gemma3TextMatchesTechnicalReport) {
  // Gemma 3 technical report, table 1 (27B): 1,416M embedding + 25,600M non-embedding; the
  // 417M vision encoder is not counted.
  const ModelDescription m = family("gemma-3-27b");
  expect_card(m.num_params(), 27.016e9);
  expect_card(m.num_params() - int64_t{262208} * 5376, 25.6e9);
}

TEST(ModelDescriptionParams, Qwen3MatchesCard) {
  // Qwen/Qwen3-8B card: 8.2B total, 6.95B non-embedding.
  const ModelDescription m = family("qwen3-8b");
  expect_card(m.num_params(), 8.2e9);
  expect_card(m.num_params() - 2 * int64_t{151936} * 4096, 6.95e9);
}

TEST(ModelDescriptionParams, Phi3AndPhi4MatchCards) {
  expect_card(family("phi-4").num_params(), 14.7e9);  // microsoft/phi-4: 14.7B
  // microsoft/Phi-3-mini-4k-instruct: 3.8B; ours 3.821B (0.55%: the card rounds to 2 digits).
  EXPECT_NEAR(static_cast<double>(family("phi-3-mini-4k").num_params()), 3.8e9, 0.05e9);
}

TEST(ModelDescriptionParams, FalconFormsAgreeAndMatchHuggingFaceCounts) {
  // The falcon and legacy RefinedWebModel configs of Falcon-7B describe the same model.
  const ModelDescription modern = family("falcon-7b");
  const ModelDescription legacy = family("falcon-7b-refinedwebmodel");
  EXPECT_EQ(modern.num_params(), legacy.num_params());
  EXPECT_EQ(modern.kv_cache_bytes_per_token(KvFormat::kBf16),
            legacy.kv_cache_bytes_per_token(KvFormat::kBf16));
  // Hugging Face's counts (7.22B, 41.8B) count the tied LM head a second time (it is stored
  // twice in the checkpoint); the cards round them to 7B and 40B.
  expect_card(modern.num_params() + int64_t{65024} * 4544, 7.22e9);
  expect_card(family("falcon-40b-refinedweb").num_params() + int64_t{65024} * 8192, 41.8e9);
}

TEST(ModelDescriptionParams, GptJMatchesCardExactFigure) {
  // EleutherAI/gpt-j-6b card: n_parameters 6,053,381,344 (ours 0.04% below).
  expect_card(family("gpt-j-6b").num_params(), 6'053'381'344.0);
}

TEST(ModelDescriptionParams, OptMatchesPaper) {
  // OPT paper, table 1: 6.7B; ours 6.658B with 2,050 learned positions (0.6%: the paper rounds).
  EXPECT_NEAR(static_cast<double>(family("opt-6.7b").num_params()), 6.7e9, 0.05e9);
}

TEST(ModelDescriptionParams, Llama4ScoutTextModel) {
  // meta-llama/Llama-4-Scout-17B-16E card: 17B active, 109B total with the vision encoder
  // (not described here): the text model counts 107.77B and 17.17B.
  const ModelDescription m = family("llama-4-scout");
  EXPECT_NEAR(static_cast<double>(m.num_params()), 109e9, 1.5e9);
  EXPECT_NEAR(static_cast<double>(m.num_active_params()), 17e9, 0.2e9);
}

TEST(ModelDescriptionParams, KimiK2CountsAsDeepSeekV3Shapes) {
  // moonshotai/Kimi-K2-Instruct: "1T" total, 32B activated. The DeepSeek-V3 layout with 384
  // experts, 64 heads and one dense layer gives 1.026T and 32.86B (31.69B without the input
  // embedding).
  const ModelDescription m = family("kimi-k2");
  EXPECT_NEAR(static_cast<double>(m.num_params()), 1.0e12, 0.05e12);
  EXPECT_NEAR(static_cast<double>(m.num_active_params()), 32e9, 1e9);
}

TEST(ModelDescriptionParams, DenseFamiliesAgreeWithModelSpec) {
  // llama, mistral, qwen2 and gpt_neox: every shipped config reads the same through both.
  for (const auto& entry : std::filesystem::directory_iterator(data_dir() / "models")) {
    if (entry.path().extension() != ".json") continue;
    const ModelSpec spec = load_model_spec(entry.path());
    const ModelDescription d = load_model_description(entry.path());
    SCOPED_TRACE(entry.path().string());
    EXPECT_EQ(d.num_params(), spec.num_params());
    EXPECT_EQ(d.num_active_params(), spec.num_params());
    for (WeightFormat f : {WeightFormat::kBf16, WeightFormat::kInt8, WeightFormat::kInt4}) {
      EXPECT_EQ(d.weight_bytes(f), spec.weight_bytes(f));
    }
    EXPECT_EQ(d.kv_cache_bytes_per_token(KvFormat::kBf16),
              spec.kv_cache_bytes_per_token(KvFormat::kBf16));
  }
}

// ---- KV cache, by hand ------------------------------------------------------------------------

TEST(ModelDescriptionKv, DeepSeekV3CachesOneLatentPerLayer) {
  // 61 layers x (kv_lora_rank 512 + qk_rope_head_dim 64) x 2 bytes.
  const ModelDescription m = family("deepseek-v3");
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 61 * (512 + 64) * 2);
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 70'272);
  EXPECT_EQ(m.kv_cache_bytes_for_sequence(4096, KvFormat::kFp8), int64_t{4096} * 61 * 576);
}

TEST(ModelDescriptionKv, Gemma2HalfTheLayersCapAtTheWindow) {
  // 42 layers x 2 (K, V) x 8 KV heads x 256 x 2 bytes = 344,064 per token.
  const ModelDescription m = family("gemma-2-9b");
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 42 * 2 * 8 * 256 * 2);
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 344'064);
  // At 8,192 tokens: 21 full layers x 8,192 + 21 sliding layers x 4,096, 8,192 bytes each.
  const int64_t per_layer_token = 2 * 8 * 256 * 2;
  EXPECT_EQ(m.kv_cache_bytes_for_sequence(8192, KvFormat::kBf16),
            (21 * 8192 + 21 * 4096) * per_layer_token);
  EXPECT_EQ(m.kv_cache_bytes_for_sequence(8192, KvFormat::kBf16), 2'113'929'216);
  // Below the window every layer keeps every token.
  EXPECT_EQ(m.kv_cache_bytes_for_sequence(1000, KvFormat::kBf16), 1000 * 344'064);
}

TEST(ModelDescriptionKv, GptOssSlidingLayersKeep128Tokens) {
  // 36 layers x 2 x 8 x 64 x 2 = 73,728 per token; at 131,072 tokens 18 full layers keep all
  // of them and 18 sliding layers 128.
  const ModelDescription m = family("gpt-oss-120b");
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 36 * 2 * 8 * 64 * 2);
  EXPECT_EQ(m.kv_cache_bytes_for_sequence(131072, KvFormat::kBf16),
            (int64_t{18} * 131072 + 18 * 128) * (2 * 8 * 64 * 2));
}

TEST(ModelDescriptionKv, Gemma3FiveSlidingLayersPerGlobal) {
  // 62 layers, every 6th global (10 of them), 52 sliding at 1,024; 2 x 16 x 128 x 2 = 8,192
  // bytes per layer and token.
  const ModelDescription m = family("gemma-3-27b");
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 62 * 8192);
  EXPECT_EQ(m.kv_cache_bytes_for_sequence(32768, KvFormat::kBf16),
            (int64_t{10} * 32768 + 52 * 1024) * 8192);
}

TEST(ModelDescriptionKv, Phi3MiniEveryLayerSlides) {
  // 32 layers x 2 x 32 heads x 96 (3072 / 32) x 2 bytes = 393,216 per token; every layer keeps
  // at most 2,047 tokens.
  const ModelDescription m = family("phi-3-mini-4k");
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 32 * 2 * 32 * 96 * 2);
  EXPECT_EQ(m.kv_cache_bytes_for_sequence(4096, KvFormat::kBf16), int64_t{32} * 2047 * 12'288);
  // Phi-4 has no window: 40 x 2 x 10 x 128 x 2 per token, all kept.
  const ModelDescription phi4 = family("phi-4");
  EXPECT_EQ(phi4.kv_cache_bytes_for_sequence(16384, KvFormat::kBf16),
            int64_t{16384} * 40 * 2 * 10 * 128 * 2);
}

TEST(ModelDescriptionKv, MqaAndGqaUseTheirKvHeads) {
  // Falcon-7B: one KV head of 64: 32 x 2 x 64 x 2 = 8,192. Qwen3-30B-A3B: 48 x 2 x 4 x 128 x 2.
  EXPECT_EQ(family("falcon-7b").kv_cache_bytes_per_token(KvFormat::kBf16), 8192);
  EXPECT_EQ(family("qwen3-30b-a3b").kv_cache_bytes_per_token(KvFormat::kBf16), 98'304);
  // Mixtral: 32 x 2 x 8 x 128 x 2.
  EXPECT_EQ(family("mixtral-8x7b").kv_cache_bytes_per_token(KvFormat::kBf16), 131'072);
  // DeepSeek-V2-Lite: 27 x (512 + 64) x 2.
  EXPECT_EQ(family("deepseek-v2-lite").kv_cache_bytes_per_token(KvFormat::kBf16), 31'104);
}

// ---- Layer kinds ------------------------------------------------------------------------------

TEST(ModelDescriptionLayers, DeepSeekV3FirstThreeLayersDense) {
  const ModelDescription m = family("deepseek-v3");
  ASSERT_EQ(m.layers.size(), 61u);  // the MTP layer is not a decoder layer
  EXPECT_EQ(m.layers[2].mlp.kind, MlpKind::kDense);
  EXPECT_EQ(m.layers[2].mlp.intermediate_size, 18432);
  const MlpSpec& moe = m.layers[3].mlp;
  EXPECT_EQ(moe.kind, MlpKind::kMoe);
  EXPECT_EQ(moe.num_experts, 256);
  EXPECT_EQ(moe.num_experts_per_token, 8);
  EXPECT_EQ(moe.num_shared_experts, 1);
  EXPECT_EQ(moe.shared_intermediate_size, 2048);
  EXPECT_EQ(m.layers[60].attention.kind, AttentionKind::kMla);
  EXPECT_EQ(m.layers[60].attention.q_lora_rank, 1536);
}

TEST(ModelDescriptionLayers, Gemma2EvenLayersSlide) {
  const ModelDescription m = family("gemma-2-9b");
  EXPECT_EQ(m.layers[0].attention.kind, AttentionKind::kSlidingWindow);
  EXPECT_EQ(m.layers[0].attention.window_tokens, 4096);
  EXPECT_EQ(m.layers[1].attention.kind, AttentionKind::kFull);
  EXPECT_TRUE(m.tie_word_embeddings);
}

TEST(ModelDescriptionLayers, Llama4EveryFourthLayerIsGlobal) {
  const ModelDescription m = family("llama-4-scout");
  EXPECT_EQ(m.model_type, "llama4_text");
  EXPECT_EQ(m.layers[2].attention.kind, AttentionKind::kSlidingWindow);
  EXPECT_EQ(m.layers[3].attention.kind, AttentionKind::kFull);
  EXPECT_EQ(m.layers[3].mlp.num_shared_experts, 1);
}

TEST(ModelDescriptionLayers, RecordsTheFieldsRead) {
  const ModelDescription m = family("gemma-3-27b");
  EXPECT_THAT(m.fields_read, ::testing::Contains("text_config.sliding_window_pattern"));
  EXPECT_THAT(m.fields_read, ::testing::Not(::testing::Contains("text_config.rope_theta")));
}

TEST(ModelDescriptionBytes, Bf16IsTwoBytesPerParameter) {
  const ModelDescription m = family("mixtral-8x7b");
  EXPECT_EQ(m.weight_bytes(WeightFormat::kBf16), 2 * m.num_params());
}

TEST(ModelDescriptionBytes, Int4ExpertsAreSixteenthsPlusScales) {
  // Qwen3-30B-A3B in int4: every matrix as out x (in/2 + 2 x in/32); norms in bf16.
  const ModelDescription m = family("qwen3-30b-a3b");
  const auto int4 = [](int64_t out, int64_t in) { return out * (in / 2 + 2 * (in / 32)); };
  const int64_t attention = int4(4096, 2048) + 2 * int4(512, 2048) + int4(2048, 4096);
  const int64_t experts = 128 * (2 * int4(768, 2048) + int4(2048, 768));
  const int64_t layer = attention + experts + int4(128, 2048) + 2 * (2 * 2048 + 2 * 128);
  const int64_t total = 48 * layer + 2 * int4(151936, 2048) + 2 * 2048;
  EXPECT_EQ(m.weight_bytes(WeightFormat::kInt4), total);
}

// ---- Bad input ---------------------------------------------------------------------------------

TEST(ModelDescriptionErrors, UnknownModelTypeListsTheKnownOnes) {
  const auto path =
      edited("mixtral-8x7b", R"("model_type": "mixtral")", R"("model_type": "mamba")");
  EXPECT_EQ(error_of(path), path.string() +
                                ": field \"model_type\": unknown model type \"mamba\"; "
                                "known: " +
                                known_description_model_types());
}

TEST(ModelDescriptionErrors, ExpertsPerTokenAboveExpertCount) {
  const auto path =
      edited("mixtral-8x7b", R"("num_experts_per_tok": 2)", R"("num_experts_per_tok": 9)");
  EXPECT_EQ(error_of(path), path.string() +
                                ": field \"num_experts_per_tok\": expected at most "
                                "num_local_experts 8, got 9");
}

TEST(ModelDescriptionErrors, KvHeadsNotDividingHeads) {
  const auto path =
      edited("qwen3-30b-a3b", R"("num_key_value_heads": 4)", R"("num_key_value_heads": 5)");
  EXPECT_EQ(error_of(path), path.string() +
                                ": field \"num_key_value_heads\": expected a divisor "
                                "of num_attention_heads 32, got 5");
}

TEST(ModelDescriptionErrors, WindowLargerThanTheContext) {
  const auto path = edited("gemma-2-9b", R"("sliding_window": 4096)", R"("sliding_window": 9000)");
  EXPECT_EQ(error_of(path), path.string() +
                                ": field \"sliding_window\": expected at most "
                                "max_position_embeddings 8192, got 9000");
}

TEST(ModelDescriptionErrors, MlaRankMissing) {
  const auto path = edited("deepseek-v3", R"("kv_lora_rank": 512,)", "");
  EXPECT_EQ(error_of(path), path.string() +
                                ": field \"kv_lora_rank\": expected a positive "
                                "integer, got nothing (field missing)");
}

TEST(ModelDescriptionErrors, NestedFieldNamedWithItsPath) {
  const auto path =
      edited("gemma-3-27b", R"("num_hidden_layers": 62)", R"("num_hidden_layers": 0)");
  EXPECT_EQ(error_of(path), path.string() +
                                ": field \"text_config.num_hidden_layers\": expected "
                                "a positive integer, got 0");
}

TEST(ModelDescriptionErrors, HeadsNotDividingHiddenWithoutHeadDim) {
  const auto path =
      edited("falcon-7b", R"("num_attention_heads": 71)", R"("num_attention_heads": 70)");
  EXPECT_EQ(error_of(path), path.string() +
                                ": field \"num_attention_heads\": expected a divisor "
                                "of the hidden size 4544 (or an explicit "
                                "\"head_dim\"), got 70");
}

TEST(ModelDescriptionErrors, LayerTypesOfTheWrongLength) {
  const auto path = edited("gpt-oss-120b", R"(["sliding_attention", "full_attention", )", "[");
  EXPECT_EQ(error_of(path), path.string() +
                                ": field \"layer_types\": expected 36 entries "
                                "(num_hidden_layers), got 34 entries");
}

TEST(ModelDescriptionErrors, NestedConfigWithoutTextConfig) {
  const std::filesystem::path path = fresh_temp_dir() / "llama4.json";
  write_text(path, R"({"model_type": "llama4"})");
  EXPECT_EQ(error_of(path), path.string() +
                                ": field \"text_config\": expected an object (the "
                                "text model), got nothing (field missing)");
}

TEST(ModelDescriptionErrors, OptEmbeddingProjectionRefused) {
  const auto path =
      edited("opt-6.7b", R"("word_embed_proj_dim": 4096)", R"("word_embed_proj_dim": 512)");
  EXPECT_EQ(error_of(path), path.string() +
                                ": field \"word_embed_proj_dim\": expected equal to "
                                "hidden_size 4096 (embedding projections are not "
                                "described), got 512");
}

TEST(ModelDescriptionErrors, MissingFileNamed) {
  EXPECT_EQ(error_of("/nonexistent/config.json"), "/nonexistent/config.json: cannot open file");
}

}  // namespace
}  // namespace llmcap::model
