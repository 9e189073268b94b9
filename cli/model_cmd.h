// `llmcap model CONFIG [--context N] [--json FILE]`: what a Hugging Face config.json describes,
// as a planner checks it first: parameters (total and active), weight bytes per format, KV-cache
// bytes per token and for one sequence, the layers grouped by kind, and the fields read
// (issue 28, item 3; docs/model.md, "Model descriptions").
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "model/model_description.h"

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap model`.
struct ModelArgs {
  std::string config;          ///< the config.json
  int64_t context_tokens = 0;  ///< --context (0: the model's max_position_embeddings)
  bool context_given = false;  ///< whether --context was given
  std::string json_out;        ///< --json FILE (empty: none)
};

/// Registers the `model` subcommand (options bound to `args`) on `app`.
CLI::App* add_model_command(CLI::App& app, ModelArgs& args);

/// `{"model", "model_type", "source", "total_params", "active_params", "weight_bytes":
/// {"<weight format>": bytes}, "kv_cache_bytes_per_token": {"<kv format>": bytes},
/// "context_tokens", "kv_cache_bytes_at_context": {"<kv format>": bytes}, "layers": [{"layers":
/// [indices], "mlp", "attention"}] (one entry per kind of layer, in order of first appearance),
/// "fields_read": [...]}`; formats by their canonical names (model/formats.h), kinds worded as
/// print_model words them.
std::string model_to_json(const model::ModelDescription& d, int64_t context_tokens);

/// The breakdown as text.
void print_model(const model::ModelDescription& d, const std::string& config_file,
                 int64_t context_tokens, std::ostream& out);

/// The whole command: read the config, print, and (with --json) write the JSON atomically.
/// Returns an exit code (cli.h); bad input propagates as model::InputError to cli::run (exit 2,
/// no file written).
int run_model_command(const ModelArgs& args, std::ostream& out);

}  // namespace llmcap::cli
