#include "cli/model_cmd.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/output_files.h"
#include "app/plan_output.h"
#include "base/error.h"
#include "base/text.h"
#include "cli/cli.h"
#include "model/formats.h"

namespace llmcap::cli {
namespace {

using model::AttentionKind;
using model::AttentionSpec;
using model::KvFormat;
using model::MlpKind;
using model::MlpSpec;
using model::WeightFormat;
using nlohmann::ordered_json;

constexpr KvFormat kKvFormats[] = {KvFormat::kF32, KvFormat::kBf16, KvFormat::kFp8,
                                   KvFormat::kInt8};

/// `n` with thousands separators: 70,272.
std::string grouped(int64_t n) {
  std::string digits = std::to_string(n < 0 ? -n : n);
  std::string out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return n < 0 ? "-" + out : out;
}

std::string mlp_text(const MlpSpec& m) {
  if (m.kind == MlpKind::kDense) {
    return std::string("dense ") + (m.gated ? "gated " : "") + "MLP " +
           grouped(m.intermediate_size);
  }
  std::string s = "MoE " + std::to_string(m.num_experts) + " experts top-" +
                  std::to_string(m.num_experts_per_token) + " (width " +
                  grouped(m.expert_intermediate_size) + ")";
  if (m.num_shared_experts > 0) {
    s += " + " + std::to_string(m.num_shared_experts) + " shared (width " +
         grouped(m.shared_intermediate_size) + ")";
  }
  return s;
}

std::string attention_text(const AttentionSpec& a) {
  std::string s;
  if (a.kind == AttentionKind::kMla) {
    s = "MLA (kv_lora_rank " + std::to_string(a.kv_lora_rank) + ", q_lora_rank " +
        (a.q_lora_rank > 0 ? std::to_string(a.q_lora_rank) : std::string("none")) + ", qk_rope " +
        std::to_string(a.qk_rope_head_dim) + ", qk_nope " + std::to_string(a.qk_nope_head_dim) +
        ", v " + std::to_string(a.v_head_dim) + "), " + std::to_string(a.num_heads) + " heads";
  } else {
    if (a.kind == AttentionKind::kFull) {
      s = "full attention";
    } else if (a.chunked) {
      s = "chunked attention (" + grouped(a.window_tokens) + "-token chunks)";
    } else {
      s = "sliding-window attention (" + grouped(a.window_tokens) + " tokens)";
    }
    s += ", " + std::to_string(a.num_heads) + " heads";
    if (a.num_kv_heads == 1) {
      s += " / 1 KV head (MQA)";
    } else if (a.num_kv_heads < a.num_heads) {
      s += " / " + std::to_string(a.num_kv_heads) + " KV heads (GQA)";
    }
    s += " x " + std::to_string(a.head_dim);
  }
  if (a.qk_norm) s += ", q/k norm";
  if (a.sinks) s += ", sinks";
  if (a.qkv_bias) s += ", QKV bias";
  return s;
}

/// The layers of one kind (same MLP and attention words), in order of first appearance.
struct LayerGroup {
  std::vector<int64_t> layers;
  std::string mlp;
  std::string attention;
};

std::vector<LayerGroup> layer_groups(const model::ModelDescription& d) {
  std::vector<LayerGroup> groups;
  for (int64_t i = 0; i < static_cast<int64_t>(d.layers.size()); ++i) {
    const std::string mlp = mlp_text(d.layers[i].mlp);
    const std::string attention = attention_text(d.layers[i].attention);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const LayerGroup& g) {
      return g.mlp == mlp && g.attention == attention;
    });
    if (it == groups.end()) {
      groups.push_back({{i}, mlp, attention});
    } else {
      it->layers.push_back(i);
    }
  }
  return groups;
}

/// "layer 3", "layers 3-60", "layers 0, 2, ..., 34" (a step above 1), else runs joined by
/// commas ("layers 0-2, 4-6, 8-10").
std::string range_text(const std::vector<int64_t>& layers) {
  if (layers.size() == 1) return "layer " + std::to_string(layers[0]);
  const int64_t step = layers[1] - layers[0];
  bool progression = true;
  for (std::size_t k = 1; k < layers.size(); ++k) progression &= layers[k] - layers[k - 1] == step;
  if (progression && step == 1) {
    return "layers " + std::to_string(layers.front()) + "-" + std::to_string(layers.back());
  }
  if (progression && layers.size() > 2) {
    return "layers " + std::to_string(layers[0]) + ", " + std::to_string(layers[1]) + ", ..., " +
           std::to_string(layers.back());
  }
  std::string out = "layers ";
  for (std::size_t k = 0; k < layers.size();) {
    std::size_t end = k;
    while (end + 1 < layers.size() && layers[end + 1] == layers[end] + 1) ++end;
    if (k > 0) out += ", ";
    out += std::to_string(layers[k]);
    if (end > k) out += "-" + std::to_string(layers[end]);
    k = end + 1;
  }
  return out;
}

bool has_experts(const model::ModelDescription& d) {
  return std::any_of(d.layers.begin(), d.layers.end(),
                     [](const model::LayerSpec& l) { return l.mlp.kind == MlpKind::kMoe; });
}

/// The weight formats that apply to `d` (mxfp4-experts needs routed experts).
std::vector<WeightFormat> formats_for(const model::ModelDescription& d) {
  std::vector<WeightFormat> out;
  for (WeightFormat f : model::kAllWeightFormats) {
    if (!model::format_needs_experts(f) || has_experts(d)) out.push_back(f);
  }
  return out;
}

/// A parameter count in B (1e9), M or K with three significant digits: "5.21B", "266K".
std::string params_text(int64_t n) {
  const double v = static_cast<double>(n);
  if (v >= 1e9) return base::fixed(v / 1e9, v >= 1e11 ? 1 : 2) + "B";
  if (v >= 1e6) return base::fixed(v / 1e6, v >= 1e8 ? 0 : 1) + "M";
  return base::fixed(v / 1e3, 0) + "K";
}

/// "4.89 bits per parameter: q4_k 5.21B params, q6_k 1.93B, f32 266K".
std::string encoding_text(const model::ModelDescription& d, WeightFormat f) {
  const int64_t params = d.num_params();
  std::string s = base::fixed(8.0 * static_cast<double>(d.weight_bytes(f)) /
                                  static_cast<double>(std::max<int64_t>(1, params)),
                              2) +
                  " bits per parameter";
  const std::vector<model::WeightTensorBytes> parts = d.weight_bytes_by_encoding(f);
  if (parts.size() > 1) {
    s += ":";
    for (std::size_t k = 0; k < parts.size(); ++k) {
      s += (k == 0 ? " " : ", ") + parts[k].encoding + " " + params_text(parts[k].num_params) +
           (k == 0 ? " params" : "");
    }
  }
  return s;
}

int64_t context_of(const model::ModelDescription& d, int64_t context_tokens) {
  return context_tokens > 0 ? context_tokens : d.max_position_embeddings;
}

}  // namespace

CLI::App* add_model_command(CLI::App& app, ModelArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "model",
      "Describe a Hugging Face config.json: parameters total and active, weight bytes per "
      "format, KV-cache bytes per token and at a context, layer kinds (docs/model.md)");
  cmd->add_option("config", args.config, "config.json (e.g. data/models/families/*.json)")
      ->required()
      ->option_text("FILE");
  cmd->add_option("--context", args.context_tokens,
                  "Tokens of the one sequence whose KV cache is sized (sliding-window layers "
                  "keep at most their window)")
      ->each([&args](const std::string&) { args.context_given = true; })
      ->option_text("N (default: max_position_embeddings)");
  cmd->add_option("--json", args.json_out,
                  "Write {model_type, total_params, active_params, weight_bytes, "
                  "kv_cache_bytes_per_token, kv_cache_bytes_at_context, layers, ...} to FILE")
      ->option_text("FILE");
  return cmd;
}

std::string model_to_json(const model::ModelDescription& d, int64_t context_tokens) {
  const int64_t context = context_of(d, context_tokens);
  ordered_json j;
  j["model"] = d.id;
  j["model_type"] = d.model_type;
  j["source"] = d.source;
  j["total_params"] = d.num_params();
  j["active_params"] = d.num_active_params();
  ordered_json weights = ordered_json::object();
  ordered_json encodings = ordered_json::object();
  for (WeightFormat f : formats_for(d)) {
    weights[std::string(to_string(f))] = d.weight_bytes(f);
    ordered_json parts = ordered_json::array();
    for (const model::WeightTensorBytes& w : d.weight_bytes_by_encoding(f)) {
      parts.push_back({{"encoding", w.encoding}, {"params", w.num_params}, {"bytes", w.bytes}});
    }
    encodings[std::string(to_string(f))] = parts;
  }
  j["weight_bytes"] = weights;
  j["weight_bytes_by_encoding"] = encodings;
  ordered_json per_token = ordered_json::object();
  ordered_json at_context = ordered_json::object();
  for (KvFormat f : kKvFormats) {
    per_token[std::string(to_string(f))] = d.kv_cache_bytes_per_token(f);
    at_context[std::string(to_string(f))] = d.kv_cache_bytes_for_sequence(context, f);
  }
  j["kv_cache_bytes_per_token"] = per_token;
  j["context_tokens"] = context;
  j["kv_cache_bytes_at_context"] = at_context;
  ordered_json layers = ordered_json::array();
  for (const LayerGroup& g : layer_groups(d)) {
    ordered_json group;
    group["layers"] = g.layers;
    group["mlp"] = g.mlp;
    group["attention"] = g.attention;
    layers.push_back(std::move(group));
  }
  j["layers"] = layers;
  j["fields_read"] = d.fields_read;
  return j.dump(2) + "\n";
}

void print_model(const model::ModelDescription& d, const std::string& config_file,
                 int64_t context_tokens, std::ostream& out) {
  const int64_t context = context_of(d, context_tokens);
  out << "Model " << d.id << " (" << d.model_type << ") from " << config_file << "\n";
  if (!d.source.empty()) out << "source: " << d.source << "\n";
  out << "\nparameters: " << grouped(d.num_params()) << " total"
      << (d.tie_word_embeddings ? " (the tied embedding once)" : "") << ", "
      << grouped(d.num_active_params())
      << " active per decode token (input embedding and LM head included)\n";
  out << "\nweight bytes (docs/model.md, \"Weight formats\"):\n";
  for (WeightFormat f : formats_for(d)) {
    out << "  " << to_string(f) << ": " << grouped(d.weight_bytes(f)) << " = "
        << base::gb(static_cast<double>(d.weight_bytes(f))) << " (" << encoding_text(d, f) << ")\n";
  }
  out << "\nKV cache, bytes per token (every layer caches every token) and for one sequence of "
      << grouped(context) << " tokens (sliding-window layers keep their window):\n";
  for (KvFormat f : kKvFormats) {
    out << "  " << to_string(f) << ": " << grouped(d.kv_cache_bytes_per_token(f)) << " per token, "
        << grouped(d.kv_cache_bytes_for_sequence(context, f)) << " at " << grouped(context) << " = "
        << base::gb(static_cast<double>(d.kv_cache_bytes_for_sequence(context, f))) << "\n";
  }
  out << "\nlayers (" << d.layers.size() << "):\n";
  for (const LayerGroup& g : layer_groups(d)) {
    out << "  " << range_text(g.layers) << " (" << g.layers.size() << "): " << g.mlp << "; "
        << g.attention << "\n";
  }
  out << "\nembeddings: "
      << (d.tie_word_embeddings ? "LM head tied to the input embedding" : "untied LM head");
  if (d.num_learned_positions > 0) {
    out << ", " << grouped(d.num_learned_positions) << " learned positions";
  }
  out << "\n\nfields read:";
  for (const std::string& f : d.fields_read) out << " " << f;
  out << "\n";
}

int run_model_command(const ModelArgs& args, std::ostream& out) {
  app::check_output_paths({{"--json", args.json_out}}, {{"config", args.config}});
  const model::ModelDescription d = model::load_model_description(args.config);
  if (args.context_given &&
      (args.context_tokens < 1 || args.context_tokens > d.max_position_embeddings)) {
    throw base::InputError(
        "--context: expected a number of tokens from 1 to the model's "
        "max_position_embeddings (" +
        std::to_string(d.max_position_embeddings) + "), got " +
        std::to_string(args.context_tokens));
  }
  const std::string json_text = args.json_out.empty() ? "" : model_to_json(d, args.context_tokens);
  print_model(d, args.config, args.context_tokens, out);
  app::OutputSet outputs;
  outputs.add("--json", args.json_out, json_text);
  outputs.commit();
  return kExitOk;
}

}  // namespace llmcap::cli
