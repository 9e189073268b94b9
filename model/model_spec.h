// A decoder-only transformer read from a Hugging Face config.json: dense shapes for the common
// case, and the per-layer description (model/model_description.h) for the other families.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include "model/formats.h"
#include "model/model_description.h"

namespace llmcap::model {

/// Architecture family, from config.json "model_type". kDescribed: any other family of
/// known_description_model_types(), whose layers ModelSpec::description holds.
enum class Architecture { kLlama, kMistral, kQwen2, kGptNeox, kDescribed };

/// Shapes of a decoder-only transformer. All counts are per model (not per device).
/// llama, mistral, qwen2 and gpt_neox files fill the dense fields below and leave `description`
/// empty. Every other family (mixture-of-experts, MLA, sliding-window, ...) sets `description`,
/// which is then authoritative for parameters, weight bytes, KV bytes and the operator graph;
/// its dense fields hold the first layer's values (intermediate_size: the first dense layer's
/// width, else one routed expert's) for readers that need one number.
struct ModelSpec {
  std::string id;  ///< "llmcap_id" of the file, else the file stem
  Architecture architecture = Architecture::kLlama;
  int64_t hidden_size = 0;        ///< d_model
  int64_t intermediate_size = 0;  ///< MLP inner width
  int64_t num_layers = 0;
  int64_t num_attention_heads = 0;
  int64_t num_kv_heads = 0;  ///< == num_attention_heads without GQA
  int64_t head_dim = 0;      ///< hidden_size / num_attention_heads unless given
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  bool tie_word_embeddings = false;  ///< LM head shares the embedding matrix
  bool gated_mlp = true;             ///< SwiGLU (3 matrices) vs GELU MLP (2 matrices)
  bool parallel_residual = false;    ///< GPT-NeoX: attention and MLP read the same input
  bool qkv_bias = false;             ///< Qwen2 and GPT-NeoX carry biases on Q, K, V
  bool mlp_bias = false;             ///< GPT-NeoX carries biases on the MLP and output proj.
  /// LayerNorm with weight and bias (GPT-NeoX) instead of RMSNorm with a weight only.
  bool norm_bias = false;
  std::string source;  ///< "source" key of the file (where the config came from)
  /// Per-layer description (architecture kDescribed only), shared and immutable.
  std::shared_ptr<const ModelDescription> description;
  /// Multi-token-prediction modules the model was trained with (ModelDescription::
  /// num_mtp_layers; 0 for a dense config, whose architectures have none).
  int64_t num_mtp_layers() const;

  /// Parameters in the transformer layers' weight matrices (QKV, output projection, MLP),
  /// the ones streamed from memory once per step: excludes embeddings, norms and biases.
  /// A described model: the matrices one token multiplies by (k routed experts per MoE layer).
  int64_t num_layer_matrix_params() const;
  /// Total parameter count: embeddings, LM head (unless tied), layer matrices, biases, norms.
  /// Llama-3.1-8B: 8,030,261,248.
  int64_t num_params() const;
  /// Bytes of all weights stored in `format`, tensor by tensor (ModelDescription::weight_bytes
  /// of describe_layers): the uniform formats store every matrix, embeddings included, in the
  /// format; checkpoint formats keep embeddings, LM head and routers as they ship them
  /// (model/formats.h); norms and biases bf16 (GGUF: f32).
  int64_t weight_bytes(WeightFormat format) const;
  /// KV-cache bytes per token over all layers: 2 (K and V) x layers x kv_heads x head_dim x
  /// element size. Llama-3.1-8B in bf16: 131,072. A described model: every layer caching every
  /// token (ModelDescription::kv_cache_bytes_per_token; MLA: the latent), so sliding-window
  /// layers count at the full context, a conservative bound used for KV capacity.
  int64_t kv_cache_bytes_per_token(KvFormat format) const;
  /// Memory one cached token takes on a replica of `tp_degree` (>= 1) devices:
  /// kv_cache_bytes_per_token, except that an MLA layer's latent is kept whole on every device
  /// (it has no heads to split; vLLM replicates it across tensor-parallel ranks), so it counts
  /// tp_degree times. DeepSeek-V3 bf16 at tp 8: 8 x 70,272 = 562,176. Dense models: equal to
  /// kv_cache_bytes_per_token.
  int64_t kv_cache_bytes_per_token_on_replica(KvFormat format, int tp_degree) const;
};

/// Bytes of one layer weight matrix of shape [out_features, in_features] stored in `format` as an
/// ordinary layer matrix (the format's bulk encoding, weight_encoding.h): f32 4, bf16 2 bytes
/// per weight; int8 1 byte per weight plus one f32 scale per output row; int4 half a byte per
/// weight plus one bf16 scale per block of 32 weights along a row: out x (ceil(in/2) +
/// 2 x ceil(in/32)); fp8 1 byte per weight plus 8 bytes of per-tensor scales; the others as
/// their encodings. Tensors whose class a format stores differently (embeddings, LM head,
/// GGUF's raised layers) are priced by ModelSpec::weight_bytes, not here.
int64_t matrix_weight_bytes(int64_t out_features, int64_t in_features, WeightFormat format);

/// config.json model_type of a dense architecture ("llama", ...); "" for kDescribed.
std::string_view model_type_of(Architecture architecture);

/// `model`'s description, or for a dense model one built from its dense fields (every layer
/// alike), so that every model can be counted tensor by tensor.
ModelDescription describe_layers(const ModelSpec& model);

/// The facts of `model` the mixed weight formats' rules read.
QuantModel quant_model(const ModelSpec& model);

/// Throws InputError("<context>: weight format "mxfp4-experts" stores routed experts in MXFP4,
/// and model M has none (a dense model); use mxfp4 for every layer matrix") when `format` is
/// not valid for `model`'s tensor classes (format_needs_experts without MoE layers).
void check_weight_format(const ModelSpec& model, WeightFormat format, const std::string& context);

/// Reads a Hugging Face config.json: model_type llama, mistral, qwen2 or gpt_neox as dense
/// fields, any other of known_description_model_types() through load_model_description (the
/// result's `description` set). Throws InputError naming the file, field and value: missing
/// file, malformed JSON, a missing/mistyped/non-positive field, an unsupported model_type
/// (lists the known ones), num_attention_heads not divisible by num_key_value_heads, and the
/// errors of load_model_description.
ModelSpec load_model_spec(const std::filesystem::path& config_json);

}  // namespace llmcap::model
