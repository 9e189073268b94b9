#include "model/model_spec.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "base/json_reader.h"
#include "model/input_error.h"
#include "model/json_file.h"

namespace llmcap::model {
namespace {

using nlohmann::json;

/// `field` as true or false, or `fallback` when absent or null.
bool optional_boolean(const base::JsonReader& r, const std::string& field, bool fallback) {
  return r.has_value(field) ? r.boolean(field) : fallback;
}

/// Reads the fields of one config.json, naming the file in every error: an absent required
/// field reads "expected ..., got nothing (field missing)", integers may be written 4096.0, and
/// null stands for an absent optional number or boolean (the caller checks has_value).
base::JsonReader config_reader(const json& doc, const std::string& file) {
  base::JsonReaderStyle style;
  style.missing_names_expected = true;
  style.whole_floats = true;
  return base::JsonReader(doc, file, "", style);
}

/// The weight matrices of one layer as (out_features, in_features).
struct LayerMatrices {
  int64_t shapes[7][2];
  int count;
};

LayerMatrices layer_matrices(const ModelSpec& m) {
  const int64_t q = m.num_attention_heads * m.head_dim;
  const int64_t kv = m.num_kv_heads * m.head_dim;
  const int64_t h = m.hidden_size;
  const int64_t i = m.intermediate_size;
  LayerMatrices out{{{q, h}, {kv, h}, {kv, h}, {h, q}, {i, h}, {h, i}, {i, h}}, 6};
  if (m.gated_mlp) out.count = 7;  // gate, up, down
  return out;
}

int64_t num_layer_bias_params(const ModelSpec& m) {
  int64_t n = 0;
  if (m.qkv_bias) n += (m.num_attention_heads + 2 * m.num_kv_heads) * m.head_dim;
  // Output projection and MLP biases (GPT-NeoX: dense, dense_h_to_4h, dense_4h_to_h).
  if (m.mlp_bias) n += m.hidden_size + (m.gated_mlp ? 2 : 1) * m.intermediate_size + m.hidden_size;
  return n;
}

/// One norm's parameters: RMSNorm weight (hidden) or LayerNorm weight + bias (2 x hidden).
int64_t num_norm_params(const ModelSpec& m) { return (m.norm_bias ? 2 : 1) * m.hidden_size; }

/// Norm and bias parameters of the whole model (2 norms per layer + the final norm), kept bf16.
int64_t num_small_params(const ModelSpec& m) {
  return m.num_layers * (2 * num_norm_params(m) + num_layer_bias_params(m)) + num_norm_params(m);
}

int64_t num_embedding_matrices(const ModelSpec& m) { return m.tie_word_embeddings ? 1 : 2; }

/// A ModelSpec of any family load_model_description reads: its description, and the first
/// layer's dense fields.
ModelSpec described_model_spec(const std::filesystem::path& config_json) {
  auto d = std::make_shared<ModelDescription>(load_model_description(config_json));
  if (d->layers.empty()) {
    throw InputError::refused_field(config_json.string(), "num_hidden_layers",
                                    "expected at least one layer, got 0");
  }
  ModelSpec m;
  m.id = d->id;
  m.source = d->source;
  m.architecture = Architecture::kDescribed;
  const LayerSpec& first = d->layers.front();
  m.hidden_size = d->hidden_size;
  m.num_layers = static_cast<int64_t>(d->layers.size());
  m.num_attention_heads = first.attention.num_heads;
  m.num_kv_heads = first.attention.num_kv_heads;
  m.head_dim = first.attention.head_dim;
  m.vocab_size = d->vocab_size;
  m.max_position_embeddings = d->max_position_embeddings;
  m.tie_word_embeddings = d->tie_word_embeddings;
  m.gated_mlp = first.mlp.gated;
  m.qkv_bias = first.attention.qkv_bias;
  m.mlp_bias = first.mlp.bias;
  m.norm_bias = d->layer_norm_bias;
  m.intermediate_size = first.mlp.expert_intermediate_size;
  for (const LayerSpec& layer : d->layers) {
    if (layer.mlp.kind == MlpKind::kDense) {
      m.intermediate_size = layer.mlp.intermediate_size;
      break;
    }
  }
  m.description = std::move(d);
  return m;
}

}  // namespace

int64_t matrix_weight_bytes(int64_t out_features, int64_t in_features, WeightFormat format) {
  const TensorEncoding e = encoding_for(format, TensorRole::kAttnQ, 0, in_features, {});
  return tensor_bytes(e, out_features, in_features);
}

int64_t ModelSpec::num_layer_matrix_params() const {
  if (description) return description->num_active_layer_matrix_params();
  const LayerMatrices mats = layer_matrices(*this);
  int64_t per_layer = 0;
  for (int k = 0; k < mats.count; ++k) per_layer += mats.shapes[k][0] * mats.shapes[k][1];
  return num_layers * per_layer;
}

int64_t ModelSpec::num_mtp_layers() const { return description ? description->num_mtp_layers : 0; }

int64_t ModelSpec::num_params() const {
  if (description) return description->num_params();
  return num_embedding_matrices(*this) * vocab_size * hidden_size + num_layer_matrix_params() +
         num_small_params(*this);
}

int64_t ModelSpec::weight_bytes(WeightFormat format) const {
  if (description) return description->weight_bytes(format);
  return describe_layers(*this).weight_bytes(format);
}

std::string_view model_type_of(Architecture architecture) {
  switch (architecture) {
    case Architecture::kLlama:
      return "llama";
    case Architecture::kMistral:
      return "mistral";
    case Architecture::kQwen2:
      return "qwen2";
    case Architecture::kGptNeox:
      return "gpt_neox";
    case Architecture::kDescribed:
      break;
  }
  return "";
}

ModelDescription describe_layers(const ModelSpec& m) {
  if (m.description) return *m.description;
  ModelDescription d;
  d.id = m.id;
  d.model_type = model_type_of(m.architecture);
  d.source = m.source;
  d.hidden_size = m.hidden_size;
  d.vocab_size = m.vocab_size;
  d.max_position_embeddings = m.max_position_embeddings;
  d.tie_word_embeddings = m.tie_word_embeddings;
  d.layer_norm_bias = m.norm_bias;
  AttentionSpec a;
  a.num_heads = m.num_attention_heads;
  a.num_kv_heads = m.num_kv_heads;
  a.head_dim = m.head_dim;
  a.qkv_bias = m.qkv_bias;
  a.out_bias = m.mlp_bias;  // GPT-NeoX's output projection bias comes with its MLP biases
  MlpSpec mlp;
  mlp.gated = m.gated_mlp;
  mlp.bias = m.mlp_bias;
  mlp.intermediate_size = m.intermediate_size;
  d.layers.assign(static_cast<std::size_t>(m.num_layers), LayerSpec{a, mlp});
  return d;
}

QuantModel quant_model(const ModelSpec& model) {
  if (model.description) return quant_model(*model.description);
  QuantModel q;
  q.model_type = model_type_of(model.architecture);
  q.num_layers = model.num_layers;
  q.gqa = model.num_kv_heads < model.num_attention_heads;
  return q;
}

int64_t ModelSpec::kv_cache_bytes_per_token(KvFormat format) const {
  if (description) return description->kv_cache_bytes_per_token(format);
  return static_cast<int64_t>(2 * num_layers * num_kv_heads * head_dim *
                              static_cast<int64_t>(bytes_per_element(format)));
}

int64_t ModelSpec::kv_cache_bytes_per_token_on_replica(KvFormat format, int tp_degree) const {
  if (!description) return kv_cache_bytes_per_token(format);
  int64_t mla_elements = 0;
  for (const LayerSpec& layer : description->layers) {
    const AttentionSpec& a = layer.attention;
    if (a.kind == AttentionKind::kMla) mla_elements += a.kv_lora_rank + a.qk_rope_head_dim;
  }
  const auto element_bytes = static_cast<int64_t>(bytes_per_element(format));
  return kv_cache_bytes_per_token(format) + (tp_degree - 1) * mla_elements * element_bytes;
}

void check_weight_format(const ModelSpec& model, WeightFormat format, const std::string& context) {
  if (!format_needs_experts(format) || quant_model(model).num_experts > 0) return;
  throw InputError(context + ": weight format \"" + std::string(to_string(format)) +
                   "\" stores routed experts in MXFP4, and model " + model.id +
                   " has none (a dense model); expected a format for every layer matrix, such "
                   "as mxfp4");
}

namespace {

/// The integers of a dense config within kMaxConfigInteger (and the layers within kMaxLayers),
/// so that the products of the shape fit 64-bit integers; an error names the field.
void check_dense_bounds(const base::JsonReader& r, const ModelSpec& m) {
  const std::pair<const char*, int64_t> fields[] = {
      {"hidden_size", m.hidden_size},
      {"intermediate_size", m.intermediate_size},
      {"num_attention_heads", m.num_attention_heads},
      {"num_key_value_heads", m.num_kv_heads},
      {"head_dim", m.head_dim},
      {"vocab_size", m.vocab_size},
      {"max_position_embeddings", m.max_position_embeddings}};
  for (const auto& [key, value] : fields) {
    if (value > kMaxConfigInteger) {
      r.fail(key, "an integer up to " + std::to_string(kMaxConfigInteger), std::to_string(value));
    }
  }
  if (m.num_layers > kMaxLayers) {
    r.fail("num_hidden_layers", "an integer up to " + std::to_string(kMaxLayers) + " (layers)",
           std::to_string(m.num_layers));
  }
}

}  // namespace

ModelSpec load_model_spec(const std::filesystem::path& config_json) {
  const std::string file = config_json.string();
  const json doc = read_json_file(config_json);
  if (!doc.is_object()) {
    throw InputError::bad_document(file, "a JSON object (a Hugging Face config.json)",
                                   std::string(doc.type_name()));
  }
  const base::JsonReader r = config_reader(doc, file);

  ModelSpec m;
  const std::string model_type = r.non_empty_string("model_type");
  if (model_type == "llama") {
    m.architecture = Architecture::kLlama;
  } else if (model_type == "mistral") {
    m.architecture = Architecture::kMistral;
  } else if (model_type == "qwen2") {
    m.architecture = Architecture::kQwen2;
  } else if (model_type == "gpt_neox") {
    m.architecture = Architecture::kGptNeox;
  } else {
    return described_model_spec(config_json);
  }

  m.id = r.non_empty_string_or("llmcap_id", config_json.stem().string());
  m.source = r.non_empty_string_or("source", "");
  m.hidden_size = r.positive_int("hidden_size");
  m.intermediate_size = r.positive_int("intermediate_size");
  m.num_layers = r.positive_int("num_hidden_layers");
  m.num_attention_heads = r.positive_int("num_attention_heads");
  m.vocab_size = r.positive_int("vocab_size");
  m.max_position_embeddings = r.positive_int("max_position_embeddings");
  m.tie_word_embeddings = optional_boolean(r, "tie_word_embeddings", false);

  if (m.architecture == Architecture::kGptNeox) {
    // GPT-NeoX (HF GPTNeoXLayer): fused QKV with bias, dense (out) with bias, GELU MLP
    // (dense_h_to_4h, dense_4h_to_h) with biases, LayerNorm, no GQA.
    m.num_kv_heads = m.num_attention_heads;
    m.gated_mlp = false;
    m.parallel_residual = optional_boolean(r, "use_parallel_residual", true);
    m.qkv_bias = true;
    m.mlp_bias = true;
    m.norm_bias = true;
  } else {
    m.num_kv_heads = r.has_value("num_key_value_heads") ? r.positive_int("num_key_value_heads")
                                                        : m.num_attention_heads;
    m.qkv_bias = m.architecture == Architecture::kQwen2;
  }

  if (m.num_attention_heads % m.num_kv_heads != 0) {
    r.fail("num_key_value_heads",
           "a divisor of num_attention_heads " + std::to_string(m.num_attention_heads),
           std::to_string(m.num_kv_heads));
  }
  if (r.has_value("head_dim") && m.architecture != Architecture::kGptNeox) {
    m.head_dim = r.positive_int("head_dim");
  } else {
    if (m.hidden_size % m.num_attention_heads != 0) {
      r.fail("num_attention_heads",
             "a divisor of hidden_size " + std::to_string(m.hidden_size) +
                 " (or an explicit \"head_dim\")",
             std::to_string(m.num_attention_heads));
    }
    m.head_dim = m.hidden_size / m.num_attention_heads;
  }
  check_dense_bounds(r, m);
  check_model_size(describe_layers(m), file);
  return m;
}

}  // namespace llmcap::model
