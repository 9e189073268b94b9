#include "model/model_spec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "model/input_error.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using llmcap::testing::fresh_temp_dir;
using llmcap::testing::read_text;
using llmcap::testing::replace_once;
using llmcap::testing::test_data;
using llmcap::testing::write_text;
using ::testing::HasSubstr;

/// Published parameter counts are rounded (e.g. "70.55B"); they must match to this.
constexpr double kKnownFigureRelTol = 1e-3;

ModelSpec load_fixture(const std::string& name) {
  return load_model_spec(test_data("models/" + name + ".json"));
}

TEST(ModelSpec, LoadsLlama31_8bShapes) {
  const ModelSpec m = load_fixture("llama-3.1-8b");
  EXPECT_EQ(m.id, "llama-3.1-8b");
  EXPECT_EQ(m.architecture, Architecture::kLlama);
  EXPECT_EQ(m.hidden_size, 4096);
  EXPECT_EQ(m.intermediate_size, 14336);
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.num_attention_heads, 32);
  EXPECT_EQ(m.num_kv_heads, 8);
  EXPECT_EQ(m.head_dim, 128);  // 4096 / 32
  EXPECT_EQ(m.vocab_size, 128256);
  EXPECT_EQ(m.max_position_embeddings, 131072);
  EXPECT_FALSE(m.tie_word_embeddings);
  EXPECT_TRUE(m.gated_mlp);
  EXPECT_FALSE(m.parallel_residual);
  EXPECT_FALSE(m.qkv_bias);
  EXPECT_FALSE(m.mlp_bias);
  EXPECT_FALSE(m.norm_bias);
  EXPECT_THAT(m.source, HasSubstr("meta-llama/Llama-3.1-8B"));
}

TEST(ModelSpec, Llama31_8bParamCountIsExact) {
  const ModelSpec m = load_fixture("llama-3.1-8b");
  // Per layer: q 4096x4096 = 16,777,216; k, v 1024x4096 = 4,194,304 each; o 16,777,216;
  // gate, up, down 14336x4096 = 58,720,256 each (176,160,768) -> 218,103,808 matrix params.
  const int64_t per_layer_matrices = 16'777'216 + 2 * 4'194'304 + 16'777'216 + 3 * 58'720'256;
  ASSERT_EQ(per_layer_matrices, 218'103'808);
  EXPECT_EQ(m.num_layer_matrix_params(), 32 * per_layer_matrices);  // 6,979,321,856
  // Embedding and untied LM head 128256x4096 = 525,336,576 each; 2 RMSNorm weights of 4096
  // per layer; a final norm of 4096.
  const int64_t total = 2 * 525'336'576 + 32 * (per_layer_matrices + 2 * 4096) + 4096;
  EXPECT_EQ(total, 8'030'261'248);
  EXPECT_EQ(m.num_params(), 8'030'261'248);
}

TEST(ModelSpec, Llama31_8bKvBytesPerToken) {
  const ModelSpec m = load_fixture("llama-3.1-8b");
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 2 * 32 * 8 * 128 * 2);  // 131,072
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 131'072);
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kF32), 262'144);
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kFp8), 65'536);
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kInt8), 65'536);
}

TEST(ModelSpec, Llama31_8bWeightBytesPerFormat) {
  const ModelSpec m = load_fixture("llama-3.1-8b");
  // Norm weights stay bf16: 32 x 2 x 4096 + 4096 = 266,240 params = 532,480 bytes.
  const int64_t norm_params = 266'240;
  const int64_t matrix_params = 8'030'261'248 - norm_params;          // 8,029,995,008
  EXPECT_EQ(m.weight_bytes(WeightFormat::kBf16), 2 * 8'030'261'248);  // 16,060,522,496
  EXPECT_EQ(m.weight_bytes(WeightFormat::kF32), 4 * matrix_params + 2 * norm_params);
  // fp8 checkpoints keep the embedding and LM head in bf16 and carry two f32 scales per layer
  // matrix (7 per layer).
  const int64_t embedding_params = 2 * 128'256 * 4096;
  EXPECT_EQ(
      m.weight_bytes(WeightFormat::kFp8),
      (matrix_params - embedding_params) + 2 * embedding_params + 32 * 7 * 8 + 2 * norm_params);
  // int8: one f32 scale per output row. Rows: embedding + LM head 2 x 128256 = 256,512; per
  // layer q 4096 + k 1024 + v 1024 + o 4096 + gate 14336 + up 14336 + down 4096 = 43,008.
  const int64_t rows = 2 * 128'256 + 32 * 43'008;  // 1,632,768
  EXPECT_EQ(m.weight_bytes(WeightFormat::kInt8), matrix_params + 4 * rows + 2 * norm_params);
  EXPECT_EQ(m.weight_bytes(WeightFormat::kInt8), 8'037'058'560);
  // int4: 0.5 + 2/32 = 0.5625 = 9/16 bytes per weight (every in_features divides by 32).
  EXPECT_EQ(m.weight_bytes(WeightFormat::kInt4), matrix_params / 16 * 9 + 2 * norm_params);
  EXPECT_EQ(m.weight_bytes(WeightFormat::kInt4), 4'517'404'672);
}

TEST(ModelSpec, MatrixWeightBytesRoundsPartialBlocks) {
  // int4 row of 40 weights: 20 bytes of nibbles + 2 blocks x 2 bytes of scales = 24 bytes.
  EXPECT_EQ(matrix_weight_bytes(3, 40, WeightFormat::kInt4), 3 * 24);
  EXPECT_EQ(matrix_weight_bytes(3, 40, WeightFormat::kInt8), 3 * 40 + 3 * 4);
  EXPECT_EQ(matrix_weight_bytes(3, 40, WeightFormat::kBf16), 240);
}

TEST(ModelSpec, Llama31_70bParamCount) {
  const ModelSpec m = load_fixture("llama-3.1-70b");
  // Per layer: q, o 8192^2 = 67,108,864 each; k, v 1024x8192 = 8,388,608 each; gate, up, down
  // 28672x8192 = 234,881,024 each; 2 norms x 8192.
  const int64_t per_layer = 2 * 67'108'864 + 2 * 8'388'608 + 3 * 234'881'024 + 2 * 8192;
  const int64_t total = 2 * 128'256LL * 8192 + 80 * per_layer + 8192;
  EXPECT_EQ(total, 70'553'706'496);
  EXPECT_EQ(m.num_params(), total);
  EXPECT_NEAR(static_cast<double>(m.num_params()), 70.55e9, 70.55e9 * kKnownFigureRelTol);
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 2 * 80 * 8 * 128 * 2);  // 327,680
  EXPECT_EQ(m.weight_bytes(WeightFormat::kBf16), 141'107'412'992);               // 2 x params
}

TEST(ModelSpec, Mistral7bParamCount) {
  const ModelSpec m = load_fixture("mistral-7b-v0.1");
  EXPECT_EQ(m.architecture, Architecture::kMistral);
  // Same layers as Llama-3.1-8B (218,103,808 matrix + 8192 norm params), vocab 32000.
  const int64_t total = 2 * 32'000LL * 4096 + 32 * (218'103'808LL + 2 * 4096) + 4096;
  EXPECT_EQ(total, 7'241'732'096);
  EXPECT_EQ(m.num_params(), total);
  EXPECT_NEAR(static_cast<double>(m.num_params()), 7.24e9, 7.24e9 * kKnownFigureRelTol);
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 131'072);
}

TEST(ModelSpec, Qwen25_7bHasQkvBias) {
  const ModelSpec m = load_fixture("qwen2.5-7b");
  EXPECT_EQ(m.architecture, Architecture::kQwen2);
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_FALSE(m.mlp_bias);
  EXPECT_EQ(m.head_dim, 128);  // 3584 / 28
  // Per layer: q, o 3584^2 = 12,845,056 each; k, v 512x3584 = 1,835,008 each; gate, up, down
  // 18944x3584 = 67,895,296 each; q/k/v biases 3584 + 512 + 512 = 4608; 2 norms x 3584.
  const int64_t matrices = 2 * 12'845'056 + 2 * 1'835'008 + 3 * 67'895'296;  // 233,046,016
  const int64_t small = 4608 + 2 * 3584;                                     // 11,776
  const int64_t total = 2 * 152'064LL * 3584 + 28 * (matrices + small) + 3584;
  EXPECT_EQ(total, 7'615'616'512);
  EXPECT_EQ(m.num_params(), total);
  EXPECT_EQ(m.num_layer_matrix_params(), 28 * matrices);
  EXPECT_NEAR(static_cast<double>(m.num_params()), 7.62e9, 7.62e9 * kKnownFigureRelTol);
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 2 * 28 * 4 * 128 * 2);  // 57,344
  // int4: matrices (incl. embeddings) at 9/16 byte, biases and norms at 2 bytes.
  const int64_t small_params = 28 * small + 3584;  // 333,312
  EXPECT_EQ(m.weight_bytes(WeightFormat::kInt4),
            (total - small_params) / 16 * 9 + 2 * small_params);  // 4,284,263,424
}

TEST(ModelSpec, GptNeox20bParamCount) {
  const ModelSpec m = load_fixture("gpt-neox-20b");
  EXPECT_EQ(m.id, "gpt-neox-20b");  // no llmcap_id: the file stem
  EXPECT_EQ(m.architecture, Architecture::kGptNeox);
  EXPECT_FALSE(m.gated_mlp);
  EXPECT_TRUE(m.parallel_residual);
  EXPECT_TRUE(m.qkv_bias);
  EXPECT_TRUE(m.mlp_bias);
  EXPECT_TRUE(m.norm_bias);
  EXPECT_EQ(m.num_kv_heads, 64);
  EXPECT_EQ(m.head_dim, 96);  // 6144 / 64
  // Per layer: fused QKV 3 x 6144^2 = 113,246,208 (+ bias 18,432); dense 6144^2 = 37,748,736
  // (+ bias 6144); h_to_4h and 4h_to_h 24576x6144 = 150,994,944 each (+ biases 24,576 and
  // 6144); two LayerNorms with weight and bias 4 x 6144 = 24,576.
  const int64_t per_layer = 113'246'208 + 18'432 + 37'748'736 + 6144 + 2 * 150'994'944 + 24'576 +
                            6144 + 24'576;  // 453,064,704
  const int64_t total = 2 * 50'432LL * 6144 + 44 * per_layer + 2 * 6144;
  EXPECT_EQ(total, 20'554'567'680);
  EXPECT_EQ(m.num_params(), total);
  EXPECT_NEAR(static_cast<double>(m.num_params()), 20.55e9, 20.55e9 * kKnownFigureRelTol);
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 2 * 44 * 64 * 96 * 2);  // 1,081,344
}

// ---- Options and defaults ----------------------------------------------------------------

/// A small valid llama config; tests replace one line of it.
const char* const kBaseConfig = R"({
  "model_type": "llama",
  "hidden_size": 4096,
  "intermediate_size": 14336,
  "num_hidden_layers": 32,
  "num_attention_heads": 32,
  "num_key_value_heads": 8,
  "vocab_size": 128256,
  "max_position_embeddings": 8192,
  "tie_word_embeddings": false
})";

std::filesystem::path write_config(const std::string& text) {
  const auto path = fresh_temp_dir() / "config.json";
  write_text(path, text);
  return path;
}

TEST(ModelSpec, TiedEmbeddingsCountOnce) {
  const ModelSpec m = load_model_spec(write_config(replace_once(
      kBaseConfig, "\"tie_word_embeddings\": false", "\"tie_word_embeddings\": true")));
  EXPECT_TRUE(m.tie_word_embeddings);
  EXPECT_EQ(m.num_params(), 8'030'261'248 - 128'256LL * 4096);  // 7,504,924,672
  EXPECT_EQ(m.id, "config");                                    // file stem
}

TEST(ModelSpec, DefaultsWithoutOptionalKeys) {
  const std::string text =
      replace_once(replace_once(kBaseConfig, "\"num_key_value_heads\": 8,\n", ""),
                   ",\n  \"tie_word_embeddings\": false", "");
  const ModelSpec m = load_model_spec(write_config(text));
  EXPECT_EQ(m.num_kv_heads, 32);  // defaults to num_attention_heads
  EXPECT_FALSE(m.tie_word_embeddings);
}

TEST(ModelSpec, ExplicitHeadDim) {
  const ModelSpec m = load_model_spec(write_config(
      replace_once(kBaseConfig, "\"vocab_size\"", "\"head_dim\": 64, \"vocab_size\"")));
  EXPECT_EQ(m.head_dim, 64);
  EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16), 2 * 32 * 8 * 64 * 2);
  // q and o shrink to 2048x4096, k and v to 512x4096.
  EXPECT_EQ(m.num_layer_matrix_params(),
            32 * (2 * 2048 * 4096 + 2 * 512 * 4096 + 3 * 14336LL * 4096));
}

TEST(ModelSpec, GptNeoxSequentialResidual) {
  const std::string neox = read_text(test_data("models/gpt-neox-20b.json"));
  const ModelSpec m = load_model_spec(write_config(
      replace_once(neox, "\"use_parallel_residual\": true", "\"use_parallel_residual\": false")));
  EXPECT_FALSE(m.parallel_residual);
}

// ---- Bad input ------------------------------------------------------------------------------

std::string load_error(const std::filesystem::path& path) {
  try {
    load_model_spec(path);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected InputError for " << path;
  return "";
}

TEST(ModelSpecErrors, MissingFile) {
  const auto path = fresh_temp_dir() / "nope.json";
  EXPECT_EQ(load_error(path), path.string() + ": cannot open file");
}

TEST(ModelSpecErrors, MalformedJson) {
  const auto path = write_config("{\"model_type\": \"llama\",");
  const std::string msg = load_error(path);
  EXPECT_THAT(msg, HasSubstr(path.string() + ": malformed JSON: "));
  EXPECT_THAT(msg, HasSubstr("parse error"));  // nlohmann's message follows
}

TEST(ModelSpecErrors, NotAnObject) {
  const auto path = write_config("[1, 2]");
  EXPECT_THAT(load_error(path), HasSubstr(path.string() + ": expected a JSON object"));
}

TEST(ModelSpecErrors, NegativeLayers) {
  const auto path = write_config(
      replace_once(kBaseConfig, "\"num_hidden_layers\": 32", "\"num_hidden_layers\": -3"));
  EXPECT_EQ(load_error(path),
            path.string() + ": field \"num_hidden_layers\": expected a positive integer, got -3");
}

TEST(ModelSpecErrors, TheErrorCarriesFileFieldValueAndExpectation) {
  const auto path = write_config(
      replace_once(kBaseConfig, "\"num_hidden_layers\": 32", "\"num_hidden_layers\": -3"));
  try {
    load_model_spec(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), path.string());
    EXPECT_EQ(e.field_path(), "num_hidden_layers");
    EXPECT_EQ(e.value(), "-3");
    EXPECT_EQ(e.expected(), "a positive integer");
  }
}

TEST(ModelSpecErrors, MissingField) {
  const auto path = write_config(replace_once(kBaseConfig, "\"hidden_size\": 4096,", ""));
  const std::string msg = load_error(path);
  EXPECT_THAT(msg, HasSubstr(path.string()));
  EXPECT_THAT(msg, HasSubstr("field \"hidden_size\": expected a positive integer"));
  EXPECT_THAT(msg, HasSubstr("field missing"));
}

TEST(ModelSpecErrors, MistypedField) {
  const auto path =
      write_config(replace_once(kBaseConfig, "\"vocab_size\": 128256", "\"vocab_size\": \"big\""));
  EXPECT_EQ(load_error(path),
            path.string() + ": field \"vocab_size\": expected a positive integer, got \"big\"");
}

TEST(ModelSpecErrors, FractionalInteger) {
  const auto path = write_config(
      replace_once(kBaseConfig, "\"intermediate_size\": 14336", "\"intermediate_size\": 1.5"));
  const std::string msg = load_error(path);
  EXPECT_THAT(msg, HasSubstr("field \"intermediate_size\""));
  EXPECT_THAT(msg, HasSubstr("got 1.5"));
}

TEST(ModelSpecErrors, MistypedBool) {
  const auto path = write_config(replace_once(kBaseConfig, "\"tie_word_embeddings\": false",
                                              "\"tie_word_embeddings\": \"no\""));
  EXPECT_EQ(load_error(path),
            path.string() + ": field \"tie_word_embeddings\": expected true or false, got \"no\"");
}

TEST(ModelSpecErrors, UnsupportedModelTypeListsKnownOnes) {
  const auto path = write_config(
      replace_once(kBaseConfig, "\"model_type\": \"llama\"", "\"model_type\": \"gpt2\""));
  EXPECT_EQ(load_error(path), path.string() +
                                  ": field \"model_type\": unknown model type \"gpt2\"; " +
                                  "known: " + known_description_model_types());
}

TEST(ModelSpecErrors, MissingModelType) {
  const auto path = write_config(replace_once(kBaseConfig, "\"model_type\": \"llama\",", ""));
  const std::string msg = load_error(path);
  EXPECT_THAT(msg, HasSubstr("field \"model_type\": expected a non-empty string"));
}

TEST(ModelSpecErrors, KvHeadsMustDivideHeads) {
  const auto path = write_config(
      replace_once(kBaseConfig, "\"num_key_value_heads\": 8", "\"num_key_value_heads\": 5"));
  EXPECT_EQ(load_error(path), path.string() +
                                  ": field \"num_key_value_heads\": expected a divisor of "
                                  "num_attention_heads 32, got 5");
}

TEST(ModelSpecErrors, HeadsMustDivideHiddenWithoutHeadDim) {
  const auto path = write_config(replace_once(
      replace_once(kBaseConfig, "\"num_attention_heads\": 32", "\"num_attention_heads\": 24"),
      "\"num_key_value_heads\": 8", "\"num_key_value_heads\": 6"));
  const std::string msg = load_error(path);
  EXPECT_THAT(msg, HasSubstr("field \"num_attention_heads\""));
  EXPECT_THAT(msg, HasSubstr("divisor of hidden_size 4096"));
  EXPECT_THAT(msg, HasSubstr("got 24"));
}

TEST(ModelSpecErrors, EmptyLlmcapId) {
  const auto path = write_config(
      replace_once(kBaseConfig, "\"vocab_size\"", "\"llmcap_id\": \"\", \"vocab_size\""));
  EXPECT_THAT(load_error(path),
              HasSubstr("field \"llmcap_id\": expected a non-empty string, got \"\""));
}

}  // namespace
}  // namespace llmcap::model
