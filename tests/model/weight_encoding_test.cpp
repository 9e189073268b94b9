#include "model/weight_encoding.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "model/input_error.h"
#include "model/model_description.h"
#include "model/model_spec.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using llmcap::testing::data_dir;

/// A published file is its tensors plus metadata (tokenizer, ~8 MB for Llama 3's 128k
/// vocabulary): tensor bytes must come within this of the file's size.
constexpr double kPublishedFileRelTol = 0.005;

ModelSpec model_file(const std::string& name) {
  return load_model_spec(data_dir() / "models" / (name + ".json"));
}

ModelDescription family(const std::string& name) {
  return load_model_description(data_dir() / "models" / "families" / (name + ".json"));
}

/// llama.cpp's use_more_bits rule, written out for the tests' hand arithmetic.
bool more_bits(int64_t i, int64_t n) { return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2; }

TEST(TensorEncoding, GgufBlocksHaveTheirPublishedSizes) {
  const QuantModel dense{"llama", 32, 0, true};
  // ggml-common.h: block_q4_0 18 bytes per 32, block_q8_0 34, block_q4_K 144 per 256,
  // block_q5_K 176, block_q6_K 210.
  const auto bytes_of = [&](WeightFormat f, TensorRole role, int64_t layer) {
    return tensor_bytes(encoding_for(f, role, layer, 256, dense), 1, 256);
  };
  EXPECT_EQ(bytes_of(WeightFormat::kQ4_0, TensorRole::kAttnQ, 0), 8 * 18);
  EXPECT_EQ(bytes_of(WeightFormat::kQ8_0, TensorRole::kAttnQ, 0), 8 * 34);
  EXPECT_EQ(bytes_of(WeightFormat::kQ4KM, TensorRole::kAttnQ, 0), 144);
  EXPECT_EQ(bytes_of(WeightFormat::kQ5KM, TensorRole::kAttnQ, 0), 176);
  EXPECT_EQ(bytes_of(WeightFormat::kQ6K, TensorRole::kAttnQ, 0), 210);
  // Norms stay f32 in GGUF.
  EXPECT_EQ(bytes_of(WeightFormat::kQ4KM, TensorRole::kVector, 0), 4 * 256);
}

TEST(TensorEncoding, CheckpointFormatsCountTheirScales) {
  const QuantModel dense{"llama", 32, 0, true};
  const auto bytes = [&](WeightFormat f, int64_t rows, int64_t cols) {
    return tensor_bytes(encoding_for(f, TensorRole::kAttnQ, 0, cols, dense), rows, cols);
  };
  // GPTQ: nibbles, f16 scale + 4-bit zero per 128 columns of a row, int32 g_idx per column.
  EXPECT_EQ(bytes(WeightFormat::kGptqInt4, 4096, 4096),
            4096 * 4096 / 2 + 32 * 4096 * 2 + 32 * 4096 / 2 + 4 * 4096);
  EXPECT_EQ(bytes(WeightFormat::kAwqInt4, 4096, 4096),
            4096 * 4096 / 2 + 32 * 4096 * 2 + 32 * 4096 / 2);
  // FP8 per tensor: a byte per weight and two f32 scales.
  EXPECT_EQ(bytes(WeightFormat::kFp8, 1024, 4096), 1024 * 4096 + 8);
  // DeepSeek-V3's expert up projection [2048, 7168] in 128x128 blocks: 16 x 56 f32 scales.
  EXPECT_EQ(bytes(WeightFormat::kFp8Block, 2048, 7168), 2048 * 7168 + 16 * 56 * 4);
  // A partial block still carries a scale: [100, 200] has 1 x 2 blocks.
  EXPECT_EQ(bytes(WeightFormat::kFp8Block, 100, 200), 100 * 200 + 2 * 4);
  // MXFP4: 16 bytes of E2M1 + one E8M0 byte per 32 weights (gpt-oss's fused gate/up).
  EXPECT_EQ(bytes(WeightFormat::kMxfp4, 5760, 2880), 5760 * 2880 / 2 + 5760 * 90);
  // NVFP4: 8 bytes + one E4M3 byte per 16 weights, two f32 scales per tensor.
  EXPECT_EQ(bytes(WeightFormat::kNvfp4, 4096, 4096), 4096 * 4096 / 2 + 4096 * 256 + 8);
}

TEST(TensorEncoding, KQuantsFallBackOnRowsNotAMultipleOf256) {
  // Qwen2.5-0.5B's hidden size 896 = 3.5 x 256: llama-quantize stores Q4_K rows as Q5_0 and
  // Q6_K rows as Q8_0.
  const QuantModel m{"qwen2", 24, 0, true};
  EXPECT_EQ(encoding_for(WeightFormat::kQ4KM, TensorRole::kAttnQ, 1, 896, m).name, "q5_0");
  EXPECT_EQ(encoding_for(WeightFormat::kQ4KM, TensorRole::kTiedEmbedding, 0, 896, m).name, "q8_0");
  EXPECT_EQ(encoding_for(WeightFormat::kQ4KM, TensorRole::kAttnQ, 1, 1024, m).name, "q4_k");
}

TEST(TensorEncoding, KQuantMixRaisesHalfTheLayersOfAttnVAndFfnDown) {
  const QuantModel m{"llama", 32, 0, true};
  int raised_v = 0;
  int raised_down = 0;
  for (int64_t i = 0; i < 32; ++i) {
    raised_v += encoding_for(WeightFormat::kQ4KM, TensorRole::kAttnV, i, 4096, m).name == "q6_k";
    raised_down +=
        encoding_for(WeightFormat::kQ4KM, TensorRole::kMlpDown, i, 14336, m).name == "q6_k";
    EXPECT_EQ(encoding_for(WeightFormat::kQ4KM, TensorRole::kAttnQ, i, 4096, m).name, "q4_k");
  }
  // Layers 0-3 and 28-31, and 6, 9, ..., 27: 16 of 32.
  EXPECT_EQ(raised_v, 16);
  EXPECT_EQ(raised_down, 16);
  EXPECT_EQ(encoding_for(WeightFormat::kQ4KM, TensorRole::kLmHead, 0, 4096, m).name, "q6_k");
  EXPECT_EQ(encoding_for(WeightFormat::kQ4KM, TensorRole::kEmbedding, 0, 4096, m).name, "q4_k");
  EXPECT_EQ(encoding_for(WeightFormat::kQ8_0, TensorRole::kLmHead, 0, 4096, m).name, "q8_0");
}

TEST(TensorEncoding, EightExpertModelsKeepAttentionKAndVInQ8_0) {
  const QuantModel mixtral{"mixtral", 32, 8, true};
  EXPECT_EQ(encoding_for(WeightFormat::kQ4KM, TensorRole::kAttnK, 5, 4096, mixtral).name, "q8_0");
  EXPECT_EQ(encoding_for(WeightFormat::kQ4KM, TensorRole::kAttnV, 5, 4096, mixtral).name, "q8_0");
  EXPECT_EQ(encoding_for(WeightFormat::kQ4KM, TensorRole::kAttnOut, 5, 4096, mixtral).name, "q5_k");
  EXPECT_EQ(encoding_for(WeightFormat::kQ4KM, TensorRole::kExpertDown, 0, 14336, mixtral).name,
            "q6_k");
  EXPECT_EQ(encoding_for(WeightFormat::kQ4KM, TensorRole::kRouter, 0, 4096, mixtral).name, "f32");
}

TEST(WeightBytes, Llama31_8bQ4KMMatchesTheHandCountAndThePublishedFile) {
  const ModelSpec m = model_file("llama-3.1-8b");
  const int64_t h = 4096, inter = 14336, kv = 1024, vocab = 128256, layers = 32;
  const auto q4k = [](int64_t n) { return n / 256 * 144; };
  const auto q6k = [](int64_t n) { return n / 256 * 210; };
  int64_t expected = q4k(vocab * h) + q6k(vocab * h);  // token_embd Q4_K, output Q6_K
  for (int64_t i = 0; i < layers; ++i) {
    expected += q4k(2 * h * h + kv * h + 2 * inter * h);  // q, o, k, gate, up
    expected += more_bits(i, layers) ? q6k(kv * h) + q6k(h * inter) : q4k(kv * h) + q4k(h * inter);
  }
  expected += (2 * layers + 1) * h * 4;  // norms in f32
  EXPECT_EQ(expected, 4'912'898'048);
  EXPECT_EQ(m.weight_bytes(WeightFormat::kQ4KM), expected);
  // bartowski/Meta-Llama-3.1-8B-Instruct-GGUF, Q4_K_M: 4.92 GB (tensors plus metadata).
  EXPECT_NEAR(static_cast<double>(expected), 4.92e9, kPublishedFileRelTol * 4.92e9);
  // Q8_0 (output Q8_0 too): 34 bytes per 32 weights; the same repository's file is 8.54 GB.
  const int64_t norms = (2 * layers + 1) * h;
  const int64_t q8 = (m.num_params() - norms) / 32 * 34 + norms * 4;
  EXPECT_EQ(m.weight_bytes(WeightFormat::kQ8_0), q8);
  EXPECT_NEAR(static_cast<double>(q8), 8.54e9, kPublishedFileRelTol * 8.54e9);
}

TEST(WeightBytes, Llama2_7bGptqAndAwqMatchTheHandCount) {
  const ModelSpec m = model_file("llama-2-7b");
  const int64_t h = 4096, inter = 11008, vocab = 32000, layers = 32;
  const auto awq = [](int64_t out, int64_t in) {
    return out * in / 2 + (in + 127) / 128 * out * 5 / 2;
  };
  const int64_t awq_layer = 4 * awq(h, h) + 2 * awq(inter, h) + awq(h, inter);
  const int64_t g_idx = 4 * (6 * h + inter);
  const int64_t f16_rest = 2 * vocab * h * 2 + (2 * layers + 1) * h * 2;
  EXPECT_EQ(m.weight_bytes(WeightFormat::kAwqInt4), layers * awq_layer + f16_rest);
  EXPECT_EQ(m.weight_bytes(WeightFormat::kGptqInt4), layers * (awq_layer + g_idx) + f16_rest);
  // TheBloke/Llama-2-7B-GPTQ (main) and -AWQ: 3.90 GB and 3.89 GB.
  EXPECT_NEAR(static_cast<double>(m.weight_bytes(WeightFormat::kGptqInt4)), 3.90e9,
              kPublishedFileRelTol * 3.90e9);
  EXPECT_NEAR(static_cast<double>(m.weight_bytes(WeightFormat::kAwqInt4)), 3.89e9,
              kPublishedFileRelTol * 3.89e9);
}

TEST(WeightBytes, Fp8KeepsEmbeddingsAndLmHeadInBf16) {
  const ModelSpec m = model_file("llama-3.1-8b");
  const int64_t h = 4096, vocab = 128256, layers = 32;
  const int64_t norms = (2 * layers + 1) * h;
  const int64_t layer_matrix_params = m.num_params() - 2 * vocab * h - norms;
  EXPECT_EQ(m.weight_bytes(WeightFormat::kFp8),
            layer_matrix_params + 7 * layers * 8 + 2 * vocab * h * 2 + 2 * norms);
}

TEST(WeightBytes, GptOssShipsExpertsInMxfp4AndTheRestInBf16) {
  const ModelDescription d = family("gpt-oss-120b");
  int64_t expert_params = 0;
  for (const WeightTensorBytes& w : d.weight_bytes_by_encoding(WeightFormat::kMxfp4Experts)) {
    if (w.encoding == "mxfp4") {
      expert_params = w.num_params;
      EXPECT_EQ(w.bytes, w.num_params / 32 * 17);
    } else {
      EXPECT_EQ(w.encoding, "bf16");
      EXPECT_EQ(w.bytes, 2 * w.num_params);
    }
  }
  // 36 layers x 128 experts x (2 x 2880 x 2880 + 2880 x 2880) weights.
  EXPECT_EQ(expert_params, int64_t{36} * 128 * 3 * 2880 * 2880);
  EXPECT_LT(d.weight_bytes(WeightFormat::kMxfp4Experts), d.weight_bytes(WeightFormat::kBf16) / 3);
}

TEST(WeightBytes, UniformFormatsAreUnchangedByTheEncodingTable) {
  // The per-row and per-block formulas the kernels' formats always had.
  EXPECT_EQ(matrix_weight_bytes(4096, 4096, WeightFormat::kInt8), 4096 * 4096 + 4 * 4096);
  EXPECT_EQ(matrix_weight_bytes(4096, 4096, WeightFormat::kInt4), 4096 * (2048 + 2 * 128));
  EXPECT_EQ(matrix_weight_bytes(10, 33, WeightFormat::kInt4), 10 * (17 + 2 * 2));
  EXPECT_EQ(matrix_weight_bytes(3, 5, WeightFormat::kBf16), 30);
}

}  // namespace
}  // namespace llmcap::model
