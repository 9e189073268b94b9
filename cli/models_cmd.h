// `llmcap models`: the model ids a scenario may name (issue 30, item 7), one line each.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace llmcap::cli {

struct ModelsArgs {
  std::string data_dir;          ///< --data-dir
  std::optional<int64_t> width;  ///< --width (cli/text_layout.h)
};

/// Registers the `models` subcommand (options bound to `args`) on `app`.
CLI::App* add_models_command(CLI::App& app, ModelsArgs& args);

/// Lists every model file of `<data_dir>/models/` and `models/families/` in id order: id (what
/// a scenario's "model" names), model type, parameters total and active (billions), context
/// length (max_position_embeddings), the file. A file that does not read is listed with its
/// error, and the exit code is then 2 (kExitBadInput); 0 otherwise. No models folder:
/// base::InputError naming it. Lines fit the width (--width, cli/text_layout.h): the file
/// column is cut first.
int run_models_command(const ModelsArgs& args, const std::string& data_dir, std::ostream& out);

}  // namespace llmcap::cli
