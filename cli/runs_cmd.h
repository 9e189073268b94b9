// `llmcap runs list|show|compare` (issue 5, item 6; docs/results-store.md): options and
// printing. Storing runs and their summaries is app/run_store.h.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap runs` and its subcommands.
struct RunsArgs {
  std::string data_dir;             ///< --data-dir (unused by runs; kept for symmetry)
  std::string db;                   ///< --db: results database (default store::default_db_path)
  std::string kind;                 ///< list --kind: only runs of this kind ("" = all)
  int64_t limit = 50;               ///< list --limit: newest N (0 = all)
  std::string run;                  ///< show RUN: an id or "latest"
  bool json = false;                ///< show --json
  std::string run_a;                ///< compare RUN_A
  std::string run_b;                ///< compare RUN_B
  bool all = false;                 ///< compare --all: every figure, not only the changes
  std::optional<int64_t> width;     ///< --width (cli/text_layout.h)
  size_t width_columns = 100;       ///< the width resolved (output_width), set when run
  CLI::App* list_cmd = nullptr;     ///< set by add_runs_command
  CLI::App* show_cmd = nullptr;     ///< set by add_runs_command
  CLI::App* compare_cmd = nullptr;  ///< set by add_runs_command
};

/// Registers the `runs` subcommand (options bound to `args`) on `app`.
CLI::App* add_runs_command(CLI::App& app, RunsArgs& args);

/// Runs it; returns an exit code (cli.h). Bad input (an unknown run id, a database that cannot
/// be read, a run without plan results to compare) throws plan::InputError (exit 2).
int run_runs_command(const RunsArgs& args, const std::string& data_dir, std::ostream& out,
                     std::ostream& err);

/// A run id from the command line: a positive integer, or "latest" (0). Throws
/// plan::InputError naming the text.
int64_t parse_run_id(const std::string& text);

}  // namespace llmcap::cli
