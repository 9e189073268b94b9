// A per-layer description of a decoder-only transformer read from a Hugging Face config.json,
// for the families ModelSpec (model_spec.h) cannot represent: mixture-of-experts MLPs, MLA
// attention, sliding-window layers, nested text configs (issue 28). The predictor prices it
// layer kind by layer kind (model/roofline.h), the weight formats tensor by tensor
// (model/weight_encoding.h), and `llmcap model` prints it (docs/model.md, "Model descriptions").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/formats.h"
#include "model/weight_encoding.h"

namespace llmcap::model {

/// How a layer's attention caches and reads keys and values.
enum class AttentionKind {
  kFull,           ///< every token attends to every earlier token
  kSlidingWindow,  ///< every token attends to the last `window_tokens` tokens (itself included)
  kMla,            ///< DeepSeek multi-head latent attention: one compressed latent per token
};

/// One layer's attention. Head counts are per model (not per device).
struct AttentionSpec {
  AttentionKind kind = AttentionKind::kFull;
  int64_t num_heads = 0;      ///< query heads
  int64_t num_kv_heads = 0;   ///< K/V heads (GQA groups; 1: MQA); == num_heads for MLA
  int64_t head_dim = 0;       ///< per-head width of Q and K (MLA: qk_nope + qk_rope)
  int64_t window_tokens = 0;  ///< kSlidingWindow only: tokens a query sees (and the cache keeps)
  /// kSlidingWindow only: Llama-4's chunked attention (a query sees the tokens of its own chunk
  /// of window_tokens), cached like a window of that size.
  bool chunked = false;
  // MLA only (DeepSeek-V2 paper, Liu et al. 2024, sec. 2.1): zero elsewhere.
  int64_t q_lora_rank = 0;  ///< 0: queries are not compressed (DeepSeek-V2-Lite)
  int64_t kv_lora_rank = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t v_head_dim = 0;
  bool qkv_bias = false;         ///< biases on Q, K, V
  bool out_bias = false;         ///< bias on the output projection
  bool qk_norm = false;          ///< per-head RMSNorm of q and k (Qwen3, Gemma-3, Llama-4)
  bool qk_norm_weights = false;  ///< the q/k norms carry a head_dim weight each (Llama-4's do not)
  bool sinks = false;            ///< one learned attention-sink logit per head (gpt-oss)

  bool operator==(const AttentionSpec&) const = default;
};

/// One layer's MLP.
enum class MlpKind { kDense, kMoe };

struct MlpSpec {
  MlpKind kind = MlpKind::kDense;
  bool gated = true;              ///< gate, up, down (SwiGLU/GeGLU) vs up, down (GELU)
  bool bias = false;              ///< biases on the MLP (and, for MoE, on each expert's matrices)
  int64_t intermediate_size = 0;  ///< kDense: inner width
  // kMoe only.
  int64_t num_experts = 0;               ///< routed experts
  int64_t num_experts_per_token = 0;     ///< top-k
  int64_t expert_intermediate_size = 0;  ///< inner width of one routed expert
  int64_t num_shared_experts = 0;        ///< experts every token goes through
  int64_t shared_intermediate_size = 0;  ///< inner width of all shared experts together
  bool shared_expert_gate = false;       ///< Qwen2-MoE: a [1, hidden] sigmoid gate
  bool router_bias = false;              ///< a bias on the router (gpt-oss)
  bool score_correction_bias = false;    ///< DeepSeek-V3's per-expert routing bias

  bool operator==(const MlpSpec&) const = default;
};

struct LayerSpec {
  AttentionSpec attention;
  MlpSpec mlp;

  bool operator==(const LayerSpec&) const = default;
};

/// The weights of a model stored in one tensor encoding (weight_bytes_by_encoding).
struct WeightTensorBytes {
  std::string encoding;    ///< TensorEncoding::name: "q4_k", "q6_k", "bf16", "f32", ...
  int64_t num_params = 0;  ///< parameters stored in it
  int64_t bytes = 0;       ///< their bytes, scales included
};

/// A decoder-only transformer, layer by layer. All counts are per model.
struct ModelDescription {
  std::string id;          ///< "llmcap_id" of the file, else the file stem
  std::string model_type;  ///< config.json "model_type" (of text_config when nested)
  std::string source;      ///< "source" key of the file
  int64_t hidden_size = 0;
  int64_t vocab_size = 0;
  int64_t max_position_embeddings = 0;
  bool tie_word_embeddings = false;   ///< the LM head is the embedding matrix (counted once)
  int64_t num_learned_positions = 0;  ///< rows of a learned position table (OPT: max + 2)
  bool lm_head_bias = false;          ///< GPT-J
  bool layer_norm_bias = false;       ///< LayerNorm (weight + bias) instead of RMSNorm
  int64_t num_norms_per_layer = 2;    ///< Gemma-2/3: 4; GPT-J, Falcon-7B: 1
  std::vector<LayerSpec> layers;      ///< decoder layers (MTP layers excluded)
  /// Multi-token-prediction modules after the decoder layers (DeepSeek-V3's
  /// num_nextn_predict_layers: 1): not in `layers` nor the parameter counts; a scenario's
  /// speculative method "mtp" needs at least one.
  int64_t num_mtp_layers = 0;
  std::vector<std::string> fields_read;  ///< config fields read, in reading order, dotted

  /// Total parameters: embeddings (a tied LM head once), learned positions, all layers
  /// (every expert), norms and biases. Excludes multi-token-prediction layers and vision towers.
  int64_t num_params() const;
  /// Parameters one decode token reads: the input embedding matrix and the LM head (a tied one
  /// once), attention, the router, shared experts and `num_experts_per_token` routed experts per
  /// MoE layer, norms and biases (as the Mistral and Qwen model cards count "active").
  int64_t num_active_params() const;
  /// Parameters of the layers' weight matrices one decode token multiplies by (attention, the
  /// router, shared experts and `num_experts_per_token` routed experts): no embeddings, norms,
  /// biases or sinks. The FLOPs of a token are about 2 x this (plus the LM head and attention).
  int64_t num_active_layer_matrix_params() const;
  /// Bytes of all weights in `format`, tensor by tensor as encoding_for (weight_encoding.h)
  /// stores each (its role and layer decide in the mixed formats); norms, biases and sinks in
  /// bf16 (f32 in the GGUF formats). Llama-3.1-8B in q4_k_m: 4,912,898,048.
  int64_t weight_bytes(WeightFormat format) const;
  /// Bytes of weights one decode step of `num_tokens` tokens (>= 1; one per sequence) reads at
  /// the least, each tensor in its encoding of `format` as weight_bytes stores it: every tensor
  /// except the untied input embedding and a learned position table (a step reads one row of
  /// each per token); a tied embedding counts whole (it is the LM head). A routed expert's
  /// tensors count once per distinct expert the step's tokens reach under uniform top-k routing,
  /// num_experts x (1 - (1 - k / num_experts)^num_tokens) per MoE layer (k of them for one token,
  /// all of them as num_tokens grows); attention, routers and shared experts count whole.
  /// A dense model: weight_bytes less the input embedding table. Throws std::invalid_argument
  /// for num_tokens < 1.
  double decode_step_weight_bytes(WeightFormat format, double num_tokens) const;
  /// weight_bytes split by tensor encoding, in order of first use (embedding first).
  std::vector<WeightTensorBytes> weight_bytes_by_encoding(WeightFormat format) const;
  /// KV-cache bytes per token if every layer caches every token: per layer 2 x kv_heads x
  /// head_dim elements (MLA: kv_lora_rank + qk_rope_head_dim, one latent and no separate V).
  /// DeepSeek-V3 bf16: 61 x 576 x 2 = 70,272.
  int64_t kv_cache_bytes_per_token(KvFormat format) const;
  /// KV-cache bytes of one sequence of `num_tokens` tokens (>= 0): a sliding-window layer keeps
  /// min(num_tokens, window_tokens), every other layer num_tokens.
  int64_t kv_cache_bytes_for_sequence(int64_t num_tokens, KvFormat format) const;
};

/// The expected fraction of a layer's routed experts that `num_tokens` tokens reach when each
/// picks `experts_per_token` of `num_experts` uniformly: 1 - (1 - k/E)^T (computed as
/// -expm1(T log1p(-k/E))). The roofline keeps log1p(-k/E) per node for its hot path.
double expected_fraction_of_experts_hit(double num_experts, double experts_per_token,
                                        double num_tokens);

/// The facts of `model` the mixed weight formats' rules read (weight_encoding.h).
QuantModel quant_model(const ModelDescription& model);

/// Families whose checkpoints fuse Q, K and V into one matrix (GGUF "attn_qkv"): phi3, falcon
/// (and its legacy RefinedWeb types), gpt_neox.
bool has_fused_qkv(std::string_view model_type);

/// Model types load_model_description reads, comma-separated.
std::string known_description_model_types();

/// Reads a Hugging Face config.json of any family of known_description_model_types() (a
/// gemma3 / llama4 file's nested "text_config"). Throws InputError naming the file, field and
/// value: missing file, malformed JSON, a missing/mistyped/non-positive field, an unknown
/// model_type (lists the known ones), heads that do not divide, experts per token above the
/// expert count, a window above max_position_embeddings, missing MLA ranks, and the bounds of
/// check_model_size.
ModelDescription load_model_description(const std::filesystem::path& config_json);

/// Bounds of a model's shape (docs/model.md, "Bounds"): every integer a config gives at most
/// kMaxConfigInteger, and the layer count at most kMaxLayers (the readers refuse more, naming
/// the field); the whole model at most kMaxModelParams parameters, so that every count of
/// parameters and bytes derived from the shape fits a 64-bit integer.
inline constexpr int64_t kMaxConfigInteger = int64_t{1} << 24;  // 16,777,216
inline constexpr int64_t kMaxLayers = 65'536;
inline constexpr double kMaxModelParams = 1e15;

/// Throws InputError::refused_field when `d` (read from `file`) stores more than
/// kMaxModelParams parameters: `<file>: field "hidden_size": the shape gives 3.4e+21
/// parameters (hidden_size 1000000000, 32 layers); expected at most 1e15 (the largest
/// published models have about 2e12)`. The parameters are summed in double precision, so the
/// check itself cannot overflow.
void check_model_size(const ModelDescription& d, const std::string& file);

}  // namespace llmcap::model
