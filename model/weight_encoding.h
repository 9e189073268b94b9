// How each tensor of a model is stored in a weight format (model/formats.h), exact in bytes:
// bits per weight, the shape of a quantisation group and the bytes of its scales, per-row,
// per-column and per-tensor extras, and which encoding each tensor class gets in a mixed format
// (GGUF K-quant mixes, experts-only MXFP4, checkpoints that keep embeddings in bf16).
// Sources per encoding in weight_encoding.cpp; docs/model.md, "Weight formats".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "model/formats.h"

namespace llmcap::model {

/// The storage of one weight tensor of shape [rows (out_features), cols (in_features)].
/// Bits = rows x ceil(cols x data_bits / 8) x 8   (rows packed whole bytes)
///      + ceil(rows / group_rows) x ceil(cols / group_cols) x group_bits   (when group_cols > 0)
///      + rows x row_bits + cols x column_bits + tensor_bits;  bytes = ceil(bits / 8).
struct TensorEncoding {
  std::string_view name;    ///< "bf16", "q4_k", "q6_k", "gptq-int4-g128", "mxfp4", ...
  int64_t data_bits = 16;   ///< bits of each weight's code
  int64_t group_rows = 1;   ///< rows of a group sharing scales (fp8-block: 128)
  int64_t group_cols = 0;   ///< columns of a group along a row; 0: no groups
  int64_t group_bits = 0;   ///< scale (and zero point / minimum / sub-scale) bits per group
  int64_t row_bits = 0;     ///< per output row (int8's f32 row scale: 32)
  int64_t column_bits = 0;  ///< per input column (GPTQ's int32 group index: 32)
  int64_t tensor_bits = 0;  ///< per tensor (fp8's and nvfp4's two f32 scales: 64)
  /// Kernel class it computes as (kF32, kBf16, kFp8, kInt8 or kInt4; model/formats.h).
  WeightFormat kernel = WeightFormat::kBf16;

  bool operator==(const TensorEncoding& other) const { return name == other.name; }
};

/// Bytes of a [rows, cols] tensor in `encoding` (formula above). rows, cols >= 0.
int64_t tensor_bytes(const TensorEncoding& encoding, int64_t rows, int64_t cols);

/// What a weight tensor is, as the quantisation recipes tell them apart.
enum class TensorRole {
  kEmbedding,      ///< input token embedding (untied)
  kTiedEmbedding,  ///< an embedding that is also the LM head
  kLmHead,         ///< output matrix (untied)
  kPositions,      ///< learned position embedding (OPT)
  kAttnQ,          ///< q_proj, MLA's q_a_proj / q_b_proj
  kAttnK,          ///< k_proj
  kAttnV,          ///< v_proj
  kAttnQkv,        ///< a fused query-key-value matrix (Phi-3, Falcon, GPT-NeoX)
  kAttnLatent,     ///< MLA's kv_a_proj_with_mqa and kv_b_proj
  kAttnOut,        ///< o_proj
  kMlpUp,          ///< a dense MLP's gate and up projections
  kMlpDown,        ///< a dense MLP's down projection
  kRouter,         ///< a mixture-of-experts router
  kExpertUp,       ///< a routed expert's gate and up projections
  kExpertDown,     ///< a routed expert's down projection
  kSharedUp,       ///< shared experts' gate and up projections
  kSharedDown,     ///< shared experts' down projection
  kVector,         ///< norms, biases, sinks (1-D)
};

/// The model facts the mixed formats' rules read.
struct QuantModel {
  std::string model_type;   ///< config.json model_type ("llama", "falcon", ...)
  int64_t num_layers = 0;   ///< decoder layers
  int64_t num_experts = 0;  ///< routed experts of a MoE layer (0: dense)
  bool gqa = false;         ///< fewer K/V heads than query heads
};

/// The encoding of one tensor: `role` in decoder layer `layer` (0-based; ignored for tensors
/// outside the layers), with `cols` input columns (K-quants need a multiple of 256 and fall back
/// as llama-quantize does: Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, then f16).
/// GGUF mixes (llama.cpp src/llama-quant.cpp, llama_tensor_get_type): the output matrix (or a
/// tied embedding) is Q6_K unless the format is Q8_0 (Falcon: Q8_0); q4_k_m / q5_k_m raise
/// attn_v and every ffn_down (dense, experts, shared) to Q6_K on the layers where
/// use_more_bits(i, n) = i < n/8 || i >= 7n/8 || (i - n/8) % 3 == 2; an 8-expert model's attn_k
/// and attn_v are Q8_0 and (q4_k_m) attn_output Q5_K; a fused attn_qkv is Q5_K (q4_k_m) or Q6_K
/// (q5_k_m); a Llama-70B-class model (80 layers, GQA) raises the remaining Q4_K attn_v to Q5_K;
/// Falcon's ffn_down (q4_k_m) is Q6_K on the first n/16 layers, Q5_K where use_more_bits.
/// Vectors and routers are f32 in GGUF and bf16 elsewhere.
TensorEncoding encoding_for(WeightFormat format, TensorRole role, int64_t layer, int64_t cols,
                            const QuantModel& model);

/// Mean bytes of a [rows, cols] tensor of `role` over the model's layers (the K-quant mixes
/// vary by layer): what one layer of a step reads on average.
double mean_layer_tensor_bytes(WeightFormat format, TensorRole role, int64_t rows, int64_t cols,
                               const QuantModel& model);

/// The role of matrix `matrix` ("q_proj", "down_proj", ...) of operator node `node` ("experts",
/// "shared_experts", "router", "qkv_proj", "mlp", ...) of model/op_graph.h; q, k and v of a
/// family with fused QKV (has_fused_qkv) are kAttnQkv.
TensorRole role_of_matrix(std::string_view node, std::string_view matrix, bool fused_qkv);

/// True when `format` stores anything differently for `role` than for a dense model's layer
/// matrices (used to refuse mxfp4-experts on a dense model).
bool format_needs_experts(WeightFormat format);

}  // namespace llmcap::model
