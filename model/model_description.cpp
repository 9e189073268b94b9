#include "model/model_description.h"

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/json_reader.h"
#include "model/input_error.h"
#include "model/json_file.h"
#include "model/model_spec.h"

namespace llmcap::model {
namespace {

using nlohmann::json;

constexpr const char* kKnownTypes =
    "deepseek_v2, deepseek_v3, falcon (also RefinedWeb, RefinedWebModel), gemma2, gemma3, "
    "gemma3_text, gpt_neox, gpt_oss, gptj, kimi_k2, llama, llama4, llama4_text, mistral, mixtral, "
    "olmoe, opt, phi3, qwen2, qwen2_moe, qwen3, qwen3_moe";

/// A JsonReader that remembers which fields it read (their dotted names, once each, in order).
class Fields {
 public:
  Fields(base::JsonReader r, std::vector<std::string>* read) : r_(std::move(r)), read_(read) {}

  const base::JsonReader& reader() const { return r_; }
  bool has(const std::string& k) const {
    const bool present = r_.has_value(k);
    if (present) note(k);
    return present;
  }
  int64_t positive_int(const std::string& k) const {
    note(k);
    return bounded(k, r_.positive_int(k));
  }
  int64_t positive_int_or(const std::string& k, int64_t fallback) const {
    return has(k) ? bounded(k, r_.positive_int(k)) : fallback;
  }
  int64_t non_negative_int_or(const std::string& k, int64_t fallback) const {
    return has(k) ? bounded(k, r_.non_negative_int(k)) : fallback;
  }
  /// `v`, the value of `k`, within kMaxLayers (layer counts) or kMaxConfigInteger.
  int64_t bounded(const std::string& k, int64_t v) const {
    const bool layers = k == "num_hidden_layers" || k == "n_layer";
    const int64_t max = layers ? kMaxLayers : kMaxConfigInteger;
    if (v > max) {
      r_.fail(k, "an integer up to " + std::to_string(max) + (layers ? " (layers)" : ""),
              std::to_string(v));
    }
    return v;
  }
  bool boolean_or(const std::string& k, bool fallback) const {
    return has(k) ? r_.boolean(k) : fallback;
  }
  std::string string_or(const std::string& k, const std::string& fallback) const {
    return has(k) ? r_.string(k) : fallback;
  }
  /// The first of `keys` present (legacy aliases), read as a positive integer.
  int64_t positive_int_any(const std::vector<std::string>& keys) const {
    for (const std::string& k : keys) {
      if (has(k)) return bounded(k, r_.positive_int(k));
    }
    return positive_int(keys.front());
  }
  /// An array of non-negative integers, or empty when absent.
  std::vector<int64_t> int_list(const std::string& k) const {
    std::vector<int64_t> out;
    if (!has(k)) return out;
    const json& a = r_.array(k, "an array of layer indices");
    for (const json& v : a) {
      if (!v.is_number_integer() || v.get<int64_t>() < 0) {
        r_.fail(k, "an array of non-negative integers", r_.shown(a));
      }
      out.push_back(v.get<int64_t>());
    }
    return out;
  }
  /// An array of strings, or empty when absent.
  std::vector<std::string> string_list(const std::string& k) const {
    std::vector<std::string> out;
    if (!has(k)) return out;
    const json& a = r_.array(k, "an array of strings");
    for (const json& v : a) {
      if (!v.is_string()) r_.fail(k, "an array of strings", r_.shown(a));
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  [[noreturn]] void fail(const std::string& k, const std::string& expected,
                         const std::string& got) const {
    r_.fail(k, expected, got);
  }

 private:
  void note(const std::string& k) const {
    const std::string n = r_.name(k);
    if (std::find(read_->begin(), read_->end(), n) == read_->end()) read_->push_back(n);
  }

  base::JsonReader r_;
  std::vector<std::string>* read_;
};

base::JsonReaderStyle config_style() {
  base::JsonReaderStyle style;
  style.missing_names_expected = true;
  style.whole_floats = true;
  return style;
}

bool contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// ---- Attention ---------------------------------------------------------------------------------

/// Heads, KV heads and head_dim of a standard (non-MLA) attention, checked. `kv_key` is the
/// config's name of the KV head count ("" when the family has none: MHA).
AttentionSpec read_heads(const Fields& f, int64_t hidden, const std::string& heads_key,
                         const std::string& kv_key) {
  AttentionSpec a;
  a.num_heads = f.positive_int(heads_key);
  a.num_kv_heads = kv_key.empty() ? a.num_heads : f.positive_int_or(kv_key, a.num_heads);
  if (a.num_heads % a.num_kv_heads != 0) {
    f.fail(kv_key, "a divisor of " + heads_key + " " + std::to_string(a.num_heads),
           std::to_string(a.num_kv_heads));
  }
  if (f.has("head_dim")) {
    a.head_dim = f.positive_int("head_dim");
  } else {
    if (hidden % a.num_heads != 0) {
      f.fail(heads_key,
             "a divisor of the hidden size " + std::to_string(hidden) +
                 " (or an explicit \"head_dim\")",
             std::to_string(a.num_heads));
    }
    a.head_dim = hidden / a.num_heads;
  }
  return a;
}

/// The sliding window read from `key`, checked against the context (0 when absent or null).
int64_t read_window(const Fields& f, const std::string& key, int64_t max_positions) {
  if (!f.has(key)) return 0;
  const int64_t w = f.positive_int(key);
  if (w > max_positions) {
    f.fail(key, "at most max_position_embeddings " + std::to_string(max_positions),
           std::to_string(w));
  }
  return w;
}

/// Which layers slide, from "layer_types" when the config lists them, else `fallback(i)`.
template <typename Fallback>
std::vector<bool> sliding_layers(const Fields& f, int64_t num_layers, Fallback fallback) {
  std::vector<bool> out(num_layers);
  const std::vector<std::string> types = f.string_list("layer_types");
  if (!types.empty() && static_cast<int64_t>(types.size()) != num_layers) {
    f.fail("layer_types", std::to_string(num_layers) + " entries (num_hidden_layers)",
           std::to_string(types.size()) + " entries");
  }
  for (int64_t i = 0; i < num_layers; ++i) {
    if (types.empty()) {
      out[i] = fallback(i);
    } else if (types[i] == "sliding_attention" || types[i] == "full_attention") {
      out[i] = types[i] == "sliding_attention";
    } else {
      f.fail("layer_types", "\"sliding_attention\" or \"full_attention\" per layer",
             "\"" + types[i] + "\" at layer " + std::to_string(i));
    }
  }
  return out;
}

// ---- MLP ---------------------------------------------------------------------------------------

MlpSpec dense_mlp(int64_t width, bool gated, bool bias) {
  MlpSpec m;
  m.intermediate_size = width;
  m.gated = gated;
  m.bias = bias;
  return m;
}

/// A MoE MLP with `experts_key` routed experts of width `width_key`, top-k from `top_k_key`.
MlpSpec read_moe(const Fields& f, const std::string& experts_key, const std::string& top_k_key,
                 const std::string& width_key) {
  MlpSpec m;
  m.kind = MlpKind::kMoe;
  m.num_experts = f.positive_int(experts_key);
  m.num_experts_per_token = f.positive_int(top_k_key);
  if (m.num_experts_per_token > m.num_experts) {
    f.fail(top_k_key, "at most " + experts_key + " " + std::to_string(m.num_experts),
           std::to_string(m.num_experts_per_token));
  }
  m.expert_intermediate_size = f.positive_int(width_key);
  return m;
}

// ---- Families ----------------------------------------------------------------------------------

/// Fields every family has under these names (GPT-J, OPT and Falcon read their own).
void read_common(const Fields& f, ModelDescription& d, bool tie_default) {
  d.hidden_size = f.positive_int("hidden_size");
  d.vocab_size = f.positive_int("vocab_size");
  d.max_position_embeddings = f.positive_int("max_position_embeddings");
  d.tie_word_embeddings = f.boolean_or("tie_word_embeddings", tie_default);
}

/// Llama-like families: RMSNorm, gated MLP, RoPE, GQA; the MoE and window variants differ in
/// which fields say which layers are sparse or sliding.
void read_llama_like(const Fields& f, ModelDescription& d) {
  const std::string& t = d.model_type;
  const bool gemma = t == "gemma2" || t == "gemma3_text";
  read_common(f, d, gemma);  // Gemma ties its LM head by default
  const int64_t L = f.positive_int("num_hidden_layers");
  AttentionSpec attn = read_heads(f, d.hidden_size, "num_attention_heads", "num_key_value_heads");
  if (gemma) d.num_norms_per_layer = 4;  // pre/post attention and pre/post feed-forward
  bool mlp_bias = false;
  if (t == "qwen2" || t == "qwen2_moe") {
    attn.qkv_bias = true;
  } else if (t != "mistral" && t != "mixtral" && t != "phi3") {
    attn.qkv_bias = attn.out_bias = f.boolean_or("attention_bias", false);
    mlp_bias = t == "llama" && f.boolean_or("mlp_bias", false);
  }
  // OLMoE normalises q and k too (over all heads at once; priced as the per-head norms).
  if (t == "qwen3" || t == "qwen3_moe" || t == "gemma3_text" || t == "olmoe") attn.qk_norm = true;
  attn.qk_norm_weights = attn.qk_norm;
  if (t == "llama4_text" && f.boolean_or("use_qk_norm", false)) attn.qk_norm = true;

  // Sliding windows.
  std::vector<bool> sliding(L, false);
  int64_t window = 0;
  if (t == "mistral" || t == "mixtral" || t == "phi3") {
    window = read_window(f, "sliding_window", d.max_position_embeddings);
    sliding.assign(L, window > 0);
  } else if (t == "gemma2" || t == "gemma3_text") {
    window = read_window(f, "sliding_window", d.max_position_embeddings);
    const int64_t pattern = t == "gemma2" ? 2 : f.positive_int_or("sliding_window_pattern", 6);
    sliding = sliding_layers(f, L, [&](int64_t i) {
      // HF Gemma2: even layers slide; Gemma3: all but every pattern-th.
      return window > 0 && (t == "gemma2" ? i % 2 == 0 : (i + 1) % pattern != 0);
    });
  } else if (t == "llama4_text") {
    // Chunked attention (a query sees its own chunk of attention_chunk_size tokens) on the RoPE
    // layers; every no_rope_layer_interval-th layer (NoPE) attends to all. A chunked layer
    // caches at most one chunk, counted here as a window of that size.
    window = read_window(f, "attention_chunk_size", d.max_position_embeddings);
    const std::vector<int64_t> rope = f.int_list("no_rope_layers");  // 1: RoPE (chunked)
    const int64_t interval = f.positive_int_or("no_rope_layer_interval", 4);
    for (int64_t i = 0; i < L; ++i) {
      const bool uses_rope = rope.empty() ? (i + 1) % interval != 0
                                          : (i < static_cast<int64_t>(rope.size()) && rope[i]);
      sliding[i] = window > 0 && uses_rope;
    }
  } else if (f.boolean_or("use_sliding_window", false)) {  // Qwen2/3 (+MoE)
    window = read_window(f, "sliding_window", d.max_position_embeddings);
    const int64_t from = f.non_negative_int_or("max_window_layers", L);
    sliding = sliding_layers(f, L, [&](int64_t i) { return window > 0 && i >= from; });
  }

  // MLPs.
  std::vector<MlpSpec> mlps(L);
  if (t == "mixtral") {
    mlps.assign(L, read_moe(f, "num_local_experts", "num_experts_per_tok", "intermediate_size"));
  } else if (t == "olmoe") {  // every layer sparse; intermediate_size is one expert's width
    mlps.assign(L, read_moe(f, "num_experts", "num_experts_per_tok", "intermediate_size"));
  } else if (t == "qwen2_moe" || t == "qwen3_moe") {
    MlpSpec moe = read_moe(f, "num_experts", "num_experts_per_tok", "moe_intermediate_size");
    if (t == "qwen2_moe" && f.has("shared_expert_intermediate_size")) {
      moe.num_shared_experts = 1;
      moe.shared_intermediate_size = f.positive_int("shared_expert_intermediate_size");
      moe.shared_expert_gate = true;
    }
    const int64_t step = f.positive_int_or("decoder_sparse_step", 1);
    const std::vector<int64_t> dense_only = f.int_list("mlp_only_layers");
    const int64_t dense_width =
        f.has("intermediate_size") ? f.positive_int("intermediate_size") : 0;
    for (int64_t i = 0; i < L; ++i) {
      const bool sparse = !contains(dense_only, i) && (i + 1) % step == 0;
      if (!sparse && dense_width == 0) f.positive_int("intermediate_size");  // throws: missing
      mlps[i] = sparse ? moe : dense_mlp(dense_width, true, false);
    }
  } else if (t == "llama4_text") {
    MlpSpec moe = read_moe(f, "num_local_experts", "num_experts_per_tok", "intermediate_size");
    moe.num_shared_experts = 1;
    moe.shared_intermediate_size = moe.expert_intermediate_size;
    const int64_t dense_width = f.positive_int("intermediate_size_mlp");
    std::vector<int64_t> moe_layers = f.int_list("moe_layers");
    const int64_t step = f.positive_int_or("interleave_moe_layer_step", 1);
    for (int64_t i = 0; i < L; ++i) {
      const bool sparse =
          f.reader().has_value("moe_layers") ? contains(moe_layers, i) : (i + 1) % step == 0;
      mlps[i] = sparse ? moe : dense_mlp(dense_width, true, false);
    }
  } else {
    mlps.assign(L, dense_mlp(f.positive_int("intermediate_size"), true, mlp_bias));
  }

  for (int64_t i = 0; i < L; ++i) {
    LayerSpec layer{attn, mlps[i]};
    if (sliding[i]) {
      layer.attention.kind = AttentionKind::kSlidingWindow;
      layer.attention.window_tokens = window;
    }
    if (t == "llama4_text") {
      layer.attention.chunked = sliding[i];
      if (!sliding[i]) layer.attention.qk_norm = false;  // NoPE layers have no q/k norm
    }
    d.layers.push_back(layer);
  }
}

/// DeepSeek-V2/V3 and Kimi-K2: MLA attention, MoE after the first first_k_dense_replace layers.
void read_deepseek(const Fields& f, ModelDescription& d) {
  read_common(f, d, false);
  const int64_t L = f.positive_int("num_hidden_layers");
  AttentionSpec a;
  a.kind = AttentionKind::kMla;
  a.num_heads = f.positive_int("num_attention_heads");
  a.num_kv_heads = a.num_heads;
  a.q_lora_rank = f.has("q_lora_rank") ? f.positive_int("q_lora_rank") : 0;
  a.kv_lora_rank = f.positive_int("kv_lora_rank");
  a.qk_rope_head_dim = f.positive_int("qk_rope_head_dim");
  a.qk_nope_head_dim = f.positive_int("qk_nope_head_dim");
  a.v_head_dim = f.positive_int("v_head_dim");
  a.head_dim = a.qk_nope_head_dim + a.qk_rope_head_dim;
  a.qkv_bias = a.out_bias = f.boolean_or("attention_bias", false);

  MlpSpec moe = read_moe(f, "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size");
  moe.num_shared_experts = f.non_negative_int_or("n_shared_experts", 0);
  moe.shared_intermediate_size = moe.num_shared_experts * moe.expert_intermediate_size;
  moe.score_correction_bias = f.string_or("topk_method", "") == "noaux_tc";
  const int64_t first_dense = f.non_negative_int_or("first_k_dense_replace", 0);
  const int64_t freq = f.positive_int_or("moe_layer_freq", 1);
  const MlpSpec dense = dense_mlp(f.positive_int("intermediate_size"), true, false);
  d.num_mtp_layers = f.non_negative_int_or("num_nextn_predict_layers", 0);  // excluded from layers
  for (int64_t i = 0; i < L; ++i) {
    d.layers.push_back({a, i >= first_dense && i % freq == 0 ? moe : dense});
  }
}

/// gpt-oss: alternating sliding (128) and full attention with sinks and biases; every layer MoE
/// with biased experts and router.
void read_gpt_oss(const Fields& f, ModelDescription& d) {
  read_common(f, d, false);
  const int64_t L = f.positive_int("num_hidden_layers");
  AttentionSpec a = read_heads(f, d.hidden_size, "num_attention_heads", "num_key_value_heads");
  a.qkv_bias = a.out_bias = f.boolean_or("attention_bias", true);
  a.sinks = true;
  const int64_t window = read_window(f, "sliding_window", d.max_position_embeddings);
  const std::vector<bool> sliding =
      sliding_layers(f, L, [&](int64_t i) { return window > 0 && i % 2 == 0; });
  const std::string top_k_key =
      f.reader().has_value("num_experts_per_tok") ? "num_experts_per_tok" : "experts_per_token";
  MlpSpec moe = read_moe(f, "num_local_experts", top_k_key, "intermediate_size");
  moe.bias = true;
  moe.router_bias = true;
  for (int64_t i = 0; i < L; ++i) {
    LayerSpec layer{a, moe};
    if (sliding[i]) {
      layer.attention.kind = AttentionKind::kSlidingWindow;
      layer.attention.window_tokens = window;
    }
    d.layers.push_back(layer);
  }
}

/// Falcon (model_type falcon) and its legacy RefinedWeb (40B: new decoder architecture) and
/// RefinedWebModel (7B) keys: LayerNorm, fused QKV, 4h GELU MLP, MQA or grouped KV heads.
void read_falcon(const Fields& f, ModelDescription& d) {
  d.hidden_size = f.positive_int_any({"hidden_size", "n_embed"});
  d.vocab_size = f.positive_int("vocab_size");
  d.max_position_embeddings = f.positive_int_or("max_position_embeddings", 2048);  // HF default
  d.tie_word_embeddings = f.boolean_or("tie_word_embeddings", true);
  d.layer_norm_bias = true;
  const int64_t L = f.positive_int_any({"num_hidden_layers", "n_layer"});
  const bool new_arch = f.boolean_or("new_decoder_architecture", d.model_type == "RefinedWeb");
  const bool multi_query = f.boolean_or("multi_query", true);
  const std::string heads_key =
      f.reader().has_value("num_attention_heads")
          ? "num_attention_heads"
          : (f.reader().has_value("n_head") ? "n_head" : "num_attention_heads");
  const std::string kv_key = f.reader().has_value("num_kv_heads") ? "num_kv_heads" : "n_head_kv";
  AttentionSpec a = read_heads(f, d.hidden_size, heads_key, new_arch ? kv_key : "");
  if (!new_arch && multi_query) a.num_kv_heads = 1;
  const bool bias = f.boolean_or("bias", false);
  a.qkv_bias = a.out_bias = bias;
  const bool parallel = f.boolean_or("parallel_attn", true);
  d.num_norms_per_layer =
      new_arch ? f.positive_int_or("num_ln_in_parallel_attn", 2) : (parallel ? 1 : 2);
  const int64_t ffn = f.positive_int_or("ffn_hidden_size", 4 * d.hidden_size);
  for (int64_t i = 0; i < L; ++i) d.layers.push_back({a, dense_mlp(ffn, false, bias)});
}

/// GPT-J: one LayerNorm per layer (parallel attention and MLP), no attention biases, a biased
/// 4h GELU MLP and a biased LM head.
void read_gptj(const Fields& f, ModelDescription& d) {
  d.hidden_size = f.positive_int("n_embd");
  d.vocab_size = f.positive_int("vocab_size");
  d.max_position_embeddings = f.positive_int("n_positions");
  d.tie_word_embeddings = f.boolean_or("tie_word_embeddings", false);
  d.lm_head_bias = true;
  d.layer_norm_bias = true;
  d.num_norms_per_layer = 1;
  const int64_t L = f.positive_int("n_layer");
  const AttentionSpec a = read_heads(f, d.hidden_size, "n_head", "");
  const int64_t inner = f.positive_int_or("n_inner", 4 * d.hidden_size);
  f.positive_int_or("rotary_dim", a.head_dim);
  for (int64_t i = 0; i < L; ++i) d.layers.push_back({a, dense_mlp(inner, false, true)});
}

/// GPT-NeoX (as ModelSpec reads it): LayerNorm, biases everywhere, 2-matrix GELU MLP, no GQA.
void read_gpt_neox(const Fields& f, ModelDescription& d) {
  read_common(f, d, false);
  d.layer_norm_bias = true;
  const int64_t L = f.positive_int("num_hidden_layers");
  AttentionSpec a = read_heads(f, d.hidden_size, "num_attention_heads", "");
  a.qkv_bias = a.out_bias = f.boolean_or("attention_bias", true);
  const int64_t inner = f.positive_int("intermediate_size");
  f.boolean_or("use_parallel_residual", true);
  for (int64_t i = 0; i < L; ++i) d.layers.push_back({a, dense_mlp(inner, false, true)});
}

/// OPT: learned positions (max_position_embeddings + 2 rows), LayerNorm, biases everywhere,
/// ReLU MLP of ffn_dim, tied LM head.
void read_opt(const Fields& f, ModelDescription& d) {
  read_common(f, d, true);
  d.layer_norm_bias = true;
  d.num_learned_positions = d.max_position_embeddings + 2;  // HF OPTLearnedPositionalEmbedding
  if (f.has("word_embed_proj_dim") && f.positive_int("word_embed_proj_dim") != d.hidden_size) {
    f.fail("word_embed_proj_dim",
           "equal to hidden_size " + std::to_string(d.hidden_size) +
               " (embedding projections are not described)",
           f.reader().got("word_embed_proj_dim"));
  }
  const int64_t L = f.positive_int("num_hidden_layers");
  AttentionSpec a = read_heads(f, d.hidden_size, "num_attention_heads", "");
  const bool bias = f.boolean_or("enable_bias", true);
  a.qkv_bias = a.out_bias = bias;
  const int64_t ffn = f.positive_int("ffn_dim");
  for (int64_t i = 0; i < L; ++i) d.layers.push_back({a, dense_mlp(ffn, false, bias)});
}

// ---- Counting ----------------------------------------------------------------------------------

/// `copies` tensors of [rows, cols], of which `active_copies` are read per token, with the role
/// and layer the weight formats' rules read (model/weight_encoding.h). A kVector tensor (norm,
/// bias, sink) is 1-D.
struct Tensor {
  int64_t rows;
  int64_t cols;
  int64_t copies = 1;
  int64_t active_copies = 1;
  TensorRole role = TensorRole::kAttnQ;
  int64_t layer = 0;
  bool matrix() const { return role != TensorRole::kVector; }
};

/// Appends the tensors of one layer, tagging each with `layer`.
class LayerTensors {
 public:
  LayerTensors(std::vector<Tensor>& out, int64_t layer) : out_(out), layer_(layer) {}
  void add(TensorRole role, int64_t rows, int64_t cols, int64_t copies = 1,
           int64_t active_copies = 1) {
    out_.push_back({rows, cols, copies, active_copies, role, layer_});
  }
  void vector(int64_t n, int64_t copies = 1, int64_t active_copies = 1) {
    add(TensorRole::kVector, 1, n, copies, active_copies);
  }

 private:
  std::vector<Tensor>& out_;
  int64_t layer_;
};

void add_attention(const AttentionSpec& a, int64_t h, bool fused_qkv, LayerTensors& out) {
  if (a.kind == AttentionKind::kMla) {
    const int64_t q_out = a.num_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim);
    if (a.q_lora_rank > 0) {
      out.add(TensorRole::kAttnQ, a.q_lora_rank, h);      // q_a_proj
      out.vector(a.q_lora_rank);                          // q_a_layernorm
      out.add(TensorRole::kAttnQ, q_out, a.q_lora_rank);  // q_b_proj
    } else {
      out.add(TensorRole::kAttnQ, q_out, h);  // q_proj
    }
    out.add(TensorRole::kAttnLatent, a.kv_lora_rank + a.qk_rope_head_dim, h);  // kv_a_proj
    out.vector(a.kv_lora_rank);                                                // kv_a_layernorm
    out.add(TensorRole::kAttnLatent, a.num_heads * (a.qk_nope_head_dim + a.v_head_dim),
            a.kv_lora_rank);                                       // kv_b_proj
    out.add(TensorRole::kAttnOut, h, a.num_heads * a.v_head_dim);  // o_proj
    if (a.out_bias) out.vector(h);
    return;
  }
  const int64_t q = a.num_heads * a.head_dim;
  const int64_t kv = a.num_kv_heads * a.head_dim;
  if (fused_qkv) {
    out.add(TensorRole::kAttnQkv, q + 2 * kv, h);
  } else {
    out.add(TensorRole::kAttnQ, q, h);
    out.add(TensorRole::kAttnK, kv, h);
    out.add(TensorRole::kAttnV, kv, h);
  }
  out.add(TensorRole::kAttnOut, h, q);
  if (a.qkv_bias) out.vector(q + 2 * kv);
  if (a.out_bias) out.vector(h);
  if (a.qk_norm && a.qk_norm_weights) out.vector(2 * a.head_dim);
  if (a.sinks) out.vector(a.num_heads);
}

/// An MLP of inner width `width`, `copies` times, `active` of them per token.
void add_ffn(int64_t h, int64_t width, bool gated, bool bias, int64_t copies, int64_t active,
             TensorRole up, TensorRole down, LayerTensors& out) {
  out.add(up, width, h, (gated ? 2 : 1) * copies, (gated ? 2 : 1) * active);  // (gate,) up
  out.add(down, h, width, copies, active);                                    // down
  if (bias) out.vector((gated ? 2 : 1) * width + h, copies, active);
}

void add_mlp(const MlpSpec& m, int64_t h, LayerTensors& out) {
  if (m.kind == MlpKind::kDense) {
    add_ffn(h, m.intermediate_size, m.gated, m.bias, 1, 1, TensorRole::kMlpUp, TensorRole::kMlpDown,
            out);
    return;
  }
  out.add(TensorRole::kRouter, m.num_experts, h);
  if (m.router_bias) out.vector(m.num_experts);
  if (m.score_correction_bias) out.vector(m.num_experts);
  add_ffn(h, m.expert_intermediate_size, m.gated, m.bias, m.num_experts, m.num_experts_per_token,
          TensorRole::kExpertUp, TensorRole::kExpertDown, out);
  if (m.num_shared_experts > 0) {
    add_ffn(h, m.shared_intermediate_size, m.gated, false, 1, 1, TensorRole::kSharedUp,
            TensorRole::kSharedDown, out);
  }
  if (m.shared_expert_gate) out.vector(h);
}

void add_layer(const ModelDescription& d, std::size_t i, std::vector<Tensor>& out) {
  LayerTensors t(out, static_cast<int64_t>(i));
  add_attention(d.layers[i].attention, d.hidden_size, has_fused_qkv(d.model_type), t);
  add_mlp(d.layers[i].mlp, d.hidden_size, t);
}

std::vector<Tensor> all_tensors(const ModelDescription& d) {
  const int64_t h = d.hidden_size;
  const int64_t norm = (d.layer_norm_bias ? 2 : 1) * h;
  std::vector<Tensor> out;
  LayerTensors top(out, 0);
  if (d.tie_word_embeddings) {
    top.add(TensorRole::kTiedEmbedding, d.vocab_size, h);
  } else {
    top.add(TensorRole::kEmbedding, d.vocab_size, h);
    top.add(TensorRole::kLmHead, d.vocab_size, h);
  }
  if (d.lm_head_bias) top.vector(d.vocab_size);
  if (d.num_learned_positions > 0) top.add(TensorRole::kPositions, d.num_learned_positions, h);
  top.vector(norm);  // final norm
  for (std::size_t i = 0; i < d.layers.size(); ++i) {
    LayerTensors(out, static_cast<int64_t>(i)).vector(d.num_norms_per_layer * norm);
    add_layer(d, i, out);
  }
  return out;
}

int64_t kv_elements_per_token(const AttentionSpec& a) {
  if (a.kind == AttentionKind::kMla) return a.kv_lora_rank + a.qk_rope_head_dim;
  return 2 * a.num_kv_heads * a.head_dim;
}

int64_t element_bytes(KvFormat format) { return static_cast<int64_t>(bytes_per_element(format)); }

}  // namespace

double expected_fraction_of_experts_hit(double num_experts, double experts_per_token,
                                        double num_tokens) {
  return -std::expm1(num_tokens * std::log1p(-experts_per_token / num_experts));
}

bool has_fused_qkv(std::string_view model_type) {
  return model_type == "phi3" || model_type == "falcon" || model_type == "RefinedWeb" ||
         model_type == "RefinedWebModel" || model_type == "gpt_neox";
}

QuantModel quant_model(const ModelDescription& model) {
  QuantModel q;
  q.model_type = model.model_type;
  q.num_layers = static_cast<int64_t>(model.layers.size());
  for (const LayerSpec& layer : model.layers) {
    if (layer.mlp.kind == MlpKind::kMoe && q.num_experts == 0)
      q.num_experts = layer.mlp.num_experts;
    if (layer.attention.num_kv_heads < layer.attention.num_heads) q.gqa = true;
  }
  return q;
}

int64_t ModelDescription::num_params() const {
  int64_t n = 0;
  for (const Tensor& t : all_tensors(*this)) n += t.rows * t.cols * t.copies;
  return n;
}

int64_t ModelDescription::num_active_params() const {
  int64_t n = 0;
  for (const Tensor& t : all_tensors(*this)) n += t.rows * t.cols * t.active_copies;
  return n;
}

int64_t ModelDescription::num_active_layer_matrix_params() const {
  std::vector<Tensor> tensors;
  for (std::size_t i = 0; i < layers.size(); ++i) add_layer(*this, i, tensors);
  int64_t n = 0;
  for (const Tensor& t : tensors) {
    if (t.matrix()) n += t.rows * t.cols * t.active_copies;
  }
  return n;
}

int64_t ModelDescription::weight_bytes(WeightFormat format) const {
  const QuantModel q = quant_model(*this);
  int64_t n = 0;
  for (const Tensor& t : all_tensors(*this)) {
    n += t.copies * tensor_bytes(encoding_for(format, t.role, t.layer, t.cols, q), t.rows, t.cols);
  }
  return n;
}

double ModelDescription::decode_step_weight_bytes(WeightFormat format, double num_tokens) const {
  if (!(num_tokens >= 1)) {
    throw std::invalid_argument("decode_step_weight_bytes: num_tokens must be >= 1, got " +
                                std::to_string(num_tokens));
  }
  const QuantModel q = quant_model(*this);
  double n = 0;
  for (const Tensor& t : all_tensors(*this)) {
    if (t.role == TensorRole::kEmbedding || t.role == TensorRole::kPositions) continue;
    const double bytes = static_cast<double>(
        t.copies * tensor_bytes(encoding_for(format, t.role, t.layer, t.cols, q), t.rows, t.cols));
    if (t.active_copies >= t.copies) {
      n += bytes;
      continue;
    }
    // Routed experts: the expected fraction of them the step's tokens reach.
    n += bytes * expected_fraction_of_experts_hit(static_cast<double>(t.copies),
                                                  static_cast<double>(t.active_copies), num_tokens);
  }
  return n;
}

std::vector<WeightTensorBytes> ModelDescription::weight_bytes_by_encoding(
    WeightFormat format) const {
  const QuantModel q = quant_model(*this);
  std::vector<WeightTensorBytes> out;
  for (const Tensor& t : all_tensors(*this)) {
    const TensorEncoding e = encoding_for(format, t.role, t.layer, t.cols, q);
    auto it = std::find_if(out.begin(), out.end(),
                           [&](const WeightTensorBytes& w) { return w.encoding == e.name; });
    if (it == out.end()) it = out.insert(out.end(), {std::string(e.name), 0, 0});
    it->num_params += t.copies * t.rows * t.cols;
    it->bytes += t.copies * tensor_bytes(e, t.rows, t.cols);
  }
  return out;
}

int64_t ModelDescription::kv_cache_bytes_per_token(KvFormat format) const {
  int64_t n = 0;
  for (const LayerSpec& layer : layers) n += kv_elements_per_token(layer.attention);
  return n * element_bytes(format);
}

int64_t ModelDescription::kv_cache_bytes_for_sequence(int64_t num_tokens, KvFormat format) const {
  int64_t n = 0;
  for (const LayerSpec& layer : layers) {
    const AttentionSpec& a = layer.attention;
    const int64_t cached = a.kind == AttentionKind::kSlidingWindow
                               ? std::min(num_tokens, a.window_tokens)
                               : num_tokens;
    n += cached * kv_elements_per_token(a);
  }
  return n * element_bytes(format);
}

std::string known_description_model_types() { return kKnownTypes; }

ModelDescription load_model_description(const std::filesystem::path& config_json) {
  const std::string file = config_json.string();
  const json doc = read_json_file(config_json);
  if (!doc.is_object()) {
    throw InputError::bad_document(file, "a JSON object (a Hugging Face config.json)",
                                   std::string(doc.type_name()));
  }
  ModelDescription d;
  const Fields top(base::JsonReader(doc, file, "", config_style()), &d.fields_read);
  d.id = top.reader().non_empty_string_or("llmcap_id", config_json.stem().string());
  d.source = top.reader().non_empty_string_or("source", "");
  std::string type = top.reader().non_empty_string("model_type");
  top.has("model_type");
  const bool nested = type == "gemma3" || type == "llama4";
  const Fields f = nested ? Fields(top.reader().object("text_config", "an object (the text model)"),
                                   &d.fields_read)
                          : top;
  if (nested) {
    type = f.reader().non_empty_string_or("model_type", type + "_text");
    f.has("model_type");
  }
  d.model_type = type;
  if (type == "llama" || type == "mistral" || type == "mixtral" || type == "olmoe" ||
      type == "qwen2" || type == "qwen2_moe" || type == "qwen3" || type == "qwen3_moe" ||
      type == "gemma2" || type == "gemma3_text" || type == "phi3" || type == "llama4_text") {
    read_llama_like(f, d);
  } else if (type == "deepseek_v2" || type == "deepseek_v3" || type == "kimi_k2") {
    read_deepseek(f, d);
  } else if (type == "gpt_oss") {
    read_gpt_oss(f, d);
  } else if (type == "falcon" || type == "RefinedWeb" || type == "RefinedWebModel") {
    read_falcon(f, d);
  } else if (type == "gptj") {
    read_gptj(f, d);
  } else if (type == "gpt_neox") {
    read_gpt_neox(f, d);
  } else if (type == "opt") {
    read_opt(f, d);
  } else {
    f.reader().fail_refused("model_type",
                            "unknown model type \"" + type + "\"; known: " + kKnownTypes);
  }
  check_model_size(d, file);
  return d;
}

void check_model_size(const ModelDescription& d, const std::string& file) {
  double params = 0;
  for (const Tensor& t : all_tensors(d)) {
    params +=
        static_cast<double>(t.rows) * static_cast<double>(t.cols) * static_cast<double>(t.copies);
  }
  if (params <= kMaxModelParams) return;
  std::ostringstream reason;
  reason << "the shape gives " << params << " parameters (hidden_size " << d.hidden_size << ", "
         << d.layers.size() << " layers); expected at most 1e15 (the largest published models "
         << "have about 2e12)";
  throw InputError::refused_field(file, "hidden_size", reason.str());
}

}  // namespace llmcap::model
