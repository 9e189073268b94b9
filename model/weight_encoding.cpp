#include "model/weight_encoding.h"

#include <algorithm>

namespace llmcap::model {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Encodings, in bits. Sources:
// - GGUF blocks: ggml/src/ggml-common.h (block_q4_0: f16 d + 16 bytes of nibbles per 32;
//   block_q8_0: f16 d + 32 int8; block_q5_0: f16 d + 4 bytes high bits + 16 bytes; block_q5_1:
//   f16 d, m + 4 + 16; block_q4_K: f16 d, dmin + 12 bytes of 6-bit scales + 128 bytes per 256;
//   block_q5_K: the same + 32 bytes of high bits; block_q6_K: 128 + 64 + 16 int8 scales + f16 d).
// - GPTQ (AutoGPTQ / GPTQModel) and AWQ (AutoAWQ GEMM): qweight int32 packing 8 nibbles,
//   scales f16 [cols/128, rows], qzeros int32 packing 8 nibbles [cols/128, rows/8]; GPTQ adds
//   g_idx int32 [cols].
// - FP8: llm-compressor / ModelOpt per-tensor weight_scale and input_scale (f32); DeepSeek-V3:
//   weight_scale_inv f32 [ceil(rows/128), ceil(cols/128)].
// - MXFP4: OCP Microscaling Formats (MX) v1.0, E2M1 elements, blocks of 32, E8M0 scale.
// - NVFP4: NVIDIA ModelOpt: E2M1 elements, blocks of 16, E4M3 scale; f32 weight_scale_2 and
//   input_scale per tensor.
constexpr TensorEncoding kF32{"f32", 32, 1, 0, 0, 0, 0, 0, WeightFormat::kF32};
constexpr TensorEncoding kBf16{"bf16", 16, 1, 0, 0, 0, 0, 0, WeightFormat::kBf16};
constexpr TensorEncoding kF16{"f16", 16, 1, 0, 0, 0, 0, 0, WeightFormat::kBf16};
constexpr TensorEncoding kFp8Tensor{"fp8", 8, 1, 0, 0, 0, 0, 64, WeightFormat::kFp8};
constexpr TensorEncoding kFp8Block{"fp8-block128", 8, 128, 128, 32, 0, 0, 0, WeightFormat::kFp8};
constexpr TensorEncoding kInt8Row{"int8", 8, 1, 0, 0, 32, 0, 0, WeightFormat::kInt8};
constexpr TensorEncoding kInt4Block{"int4", 4, 1, 32, 16, 0, 0, 0, WeightFormat::kInt4};
constexpr TensorEncoding kQ4_0{"q4_0", 4, 1, 32, 16, 0, 0, 0, WeightFormat::kInt4};
constexpr TensorEncoding kQ5_0{"q5_0", 5, 1, 32, 16, 0, 0, 0, WeightFormat::kInt4};
constexpr TensorEncoding kQ5_1{"q5_1", 5, 1, 32, 32, 0, 0, 0, WeightFormat::kInt4};
constexpr TensorEncoding kQ8_0{"q8_0", 8, 1, 32, 16, 0, 0, 0, WeightFormat::kInt8};
constexpr TensorEncoding kQ4K{"q4_k", 4, 1, 256, 128, 0, 0, 0, WeightFormat::kInt4};
constexpr TensorEncoding kQ5K{"q5_k", 5, 1, 256, 128, 0, 0, 0, WeightFormat::kInt4};
constexpr TensorEncoding kQ6K{"q6_k", 6, 1, 256, 144, 0, 0, 0, WeightFormat::kInt4};
constexpr TensorEncoding kGptq{"gptq-int4-g128", 4, 1, 128, 20, 0, 32, 0, WeightFormat::kInt4};
constexpr TensorEncoding kAwq{"awq-int4-g128", 4, 1, 128, 20, 0, 0, 0, WeightFormat::kInt4};
constexpr TensorEncoding kMxfp4{"mxfp4", 4, 1, 32, 8, 0, 0, 0, WeightFormat::kInt4};
constexpr TensorEncoding kNvfp4{"nvfp4", 4, 1, 16, 8, 0, 0, 64, WeightFormat::kInt4};

bool is_gguf(WeightFormat f) {
  return f == WeightFormat::kQ4_0 || f == WeightFormat::kQ8_0 || f == WeightFormat::kQ4KM ||
         f == WeightFormat::kQ5KM || f == WeightFormat::kQ6K;
}

bool is_vector_like(TensorRole role) {
  return role == TensorRole::kVector || role == TensorRole::kRouter ||
         role == TensorRole::kPositions;
}

bool is_embedding(TensorRole role) {
  return role == TensorRole::kEmbedding || role == TensorRole::kTiedEmbedding ||
         role == TensorRole::kLmHead || role == TensorRole::kPositions;
}

bool is_expert(TensorRole role) {
  return role == TensorRole::kExpertUp || role == TensorRole::kExpertDown;
}

bool is_down(TensorRole role) {
  return role == TensorRole::kMlpDown || role == TensorRole::kExpertDown ||
         role == TensorRole::kSharedDown;
}

/// llama.cpp's use_more_bits(i_layer, n_layers).
bool use_more_bits(int64_t i, int64_t n) {
  return i < n / 8 || i >= 7 * n / 8 || (i - n / 8) % 3 == 2;
}

bool is_falcon(const QuantModel& m) {
  return m.model_type == "falcon" || m.model_type == "RefinedWeb" ||
         m.model_type == "RefinedWebModel";
}

/// The GGUF base type of a format's layer matrices.
TensorEncoding gguf_base(WeightFormat f) {
  switch (f) {
    case WeightFormat::kQ4_0:
      return kQ4_0;
    case WeightFormat::kQ8_0:
      return kQ8_0;
    case WeightFormat::kQ4KM:
      return kQ4K;
    case WeightFormat::kQ5KM:
      return kQ5K;
    default:
      return kQ6K;
  }
}

/// llama_tensor_get_type's choice for a 2-D tensor before the row-length fallback.
TensorEncoding gguf_choice(WeightFormat f, TensorRole role, int64_t layer, const QuantModel& m) {
  const TensorEncoding base = gguf_base(f);
  const int64_t n = m.num_layers;
  const bool k_m = f == WeightFormat::kQ4KM || f == WeightFormat::kQ5KM;
  switch (role) {
    case TensorRole::kLmHead:
    case TensorRole::kTiedEmbedding:
      if (is_falcon(m) || f == WeightFormat::kQ8_0) return kQ8_0;
      return kQ6K;
    case TensorRole::kAttnV: {
      TensorEncoding t = base;
      if (k_m && use_more_bits(layer, n)) t = kQ6K;
      const bool llama_70b =
          (m.model_type == "llama" || m.model_type == "mistral") && n == 80 && m.gqa;
      if (llama_70b && t == kQ4K) t = kQ5K;
      if (m.num_experts == 8) t = kQ8_0;
      return t;
    }
    case TensorRole::kAttnK:
      return m.num_experts == 8 ? kQ8_0 : base;
    case TensorRole::kAttnOut:
      return m.num_experts == 8 && f == WeightFormat::kQ4KM && !is_falcon(m) ? kQ5K : base;
    case TensorRole::kAttnQkv:
      if (f == WeightFormat::kQ4KM) return kQ5K;
      if (f == WeightFormat::kQ5KM) return kQ6K;
      return base;
    default:
      break;
  }
  if (is_down(role) && k_m) {
    if (f == WeightFormat::kQ4KM && is_falcon(m)) {
      return layer < n / 16 ? kQ6K : use_more_bits(layer, n) ? kQ5K : kQ4K;
    }
    if (use_more_bits(layer, n)) return kQ6K;
  }
  return base;
}

/// llama-quantize's fallback when `cols` is not a multiple of the type's block.
TensorEncoding gguf_fallback(TensorEncoding t, int64_t cols) {
  if (cols % t.group_cols == 0) return t;
  if (t == kQ4K)
    t = kQ5_0;
  else if (t == kQ5K)
    t = kQ5_1;
  else if (t == kQ6K)
    t = kQ8_0;
  return cols % t.group_cols == 0 ? t : kF16;
}

}  // namespace

int64_t tensor_bytes(const TensorEncoding& e, int64_t rows, int64_t cols) {
  int64_t bits = rows * ceil_div(cols * e.data_bits, 8) * 8;
  if (e.group_cols > 0) {
    bits += ceil_div(rows, e.group_rows) * ceil_div(cols, e.group_cols) * e.group_bits;
  }
  bits += rows * e.row_bits + cols * e.column_bits + e.tensor_bits;
  return ceil_div(bits, 8);
}

TensorEncoding encoding_for(WeightFormat format, TensorRole role, int64_t layer, int64_t cols,
                            const QuantModel& model) {
  if (is_gguf(format)) {
    if (is_vector_like(role)) return kF32;
    if (role == TensorRole::kEmbedding) return gguf_fallback(gguf_base(format), cols);
    return gguf_fallback(gguf_choice(format, role, layer, model), cols);
  }
  if (role == TensorRole::kVector) return kBf16;
  switch (format) {
    case WeightFormat::kF32:
      return kF32;
    case WeightFormat::kBf16:
      return kBf16;
    case WeightFormat::kInt8:
      return kInt8Row;
    case WeightFormat::kInt4:
      return kInt4Block;
    case WeightFormat::kGptqInt4:
      return is_embedding(role) || role == TensorRole::kRouter ? kF16 : kGptq;
    case WeightFormat::kAwqInt4:
      return is_embedding(role) || role == TensorRole::kRouter ? kF16 : kAwq;
    case WeightFormat::kMxfp4Experts:
      return is_expert(role) ? kMxfp4 : kBf16;
    default:
      break;
  }
  if (is_embedding(role) || role == TensorRole::kRouter) return kBf16;
  switch (format) {
    case WeightFormat::kFp8:
      return kFp8Tensor;
    case WeightFormat::kFp8Block:
      return kFp8Block;
    case WeightFormat::kMxfp4:
      return kMxfp4;
    case WeightFormat::kNvfp4:
      return kNvfp4;
    default:
      return kBf16;
  }
}

double mean_layer_tensor_bytes(WeightFormat format, TensorRole role, int64_t rows, int64_t cols,
                               const QuantModel& model) {
  const int64_t n = std::max<int64_t>(1, model.num_layers);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    sum +=
        static_cast<double>(tensor_bytes(encoding_for(format, role, i, cols, model), rows, cols));
  }
  return sum / static_cast<double>(n);
}

TensorRole role_of_matrix(std::string_view node, std::string_view matrix, bool fused_qkv) {
  const bool down = matrix == "down_proj";
  if (node == "experts") return down ? TensorRole::kExpertDown : TensorRole::kExpertUp;
  if (node == "shared_experts") return down ? TensorRole::kSharedDown : TensorRole::kSharedUp;
  if (node == "router") return TensorRole::kRouter;
  if (down) return TensorRole::kMlpDown;
  if (matrix == "gate_proj" || matrix == "up_proj") return TensorRole::kMlpUp;
  if (matrix == "o_proj") return TensorRole::kAttnOut;
  if (matrix == "kv_a_proj_with_mqa" || matrix == "kv_b_proj") return TensorRole::kAttnLatent;
  if (fused_qkv) return TensorRole::kAttnQkv;
  if (matrix == "k_proj") return TensorRole::kAttnK;
  if (matrix == "v_proj") return TensorRole::kAttnV;
  return TensorRole::kAttnQ;
}

bool format_needs_experts(WeightFormat format) { return format == WeightFormat::kMxfp4Experts; }

}  // namespace llmcap::model
