// `llmcap validate`: options and printing; the engine is app::run_validation
// (app/validation.h), stored by app::store_validate_run.
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "app/published.h"
#include "app/validation.h"

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap validate`.
struct ValidateArgs {
  std::vector<std::string> models;
  std::string profile;
  std::string save_profile;  ///< --save-profile: the quick calibration's profile, written
  std::vector<std::string> formats = {"bf16", "int8", "int4"};
  std::vector<int64_t> batches = {1, 4, 16, 32};
  std::vector<int64_t> contexts = {128, 1024, 4096};
  int runs = 5;
  int threads = 0;
  bool no_retime = false;  ///< --no-retime
  int steady_steps = 1;    ///< --steady-steps
  std::string json_out;
  std::string data_dir;
  bool quiet = false;
  std::string results_db;  ///< --results-db: results database the run is stored in
  bool no_store = false;   ///< --no-store
  /// --moe: add the mixture-of-experts model <data dir>/models/families/olmoe-1b-7b.json to
  /// the models (the defaults or --model's), its rows in the same table.
  bool moe = false;
  /// --published: validate against published measurements instead (app/published.h), read
  /// from published_file (default: <data dir>/validation/published.json).
  bool published = false;
  std::string published_file;  ///< --published-file
  uint64_t seed = 1;           ///< --seed: the published rows' simulations
  bool datasheet = false;      ///< --datasheet: price the rows without engine profiles
};

/// Registers the `validate` subcommand (options bound to `args`) on `app`.
CLI::App* add_validate_command(CLI::App& app, ValidateArgs& args);

/// Runs it with the models of `data_dir` (when no --model is given): calibrates (or reads
/// --profile), validates, writes --json, prints the table to `out` (progress lines to `err`
/// unless --quiet) and stores the run. Returns an exit code (cli.h); bad input throws
/// base::InputError.
int run_validate_command(const ValidateArgs& args, const std::string& data_dir,
                         const std::string& command_line, std::ostream& out, std::ostream& err);

/// The error table, its summary, and the error by operator (median over the points of
/// predicted / measured - 1, and each operator's median share of the measured step).
void print_validation(const app::ValidationResult& result, std::ostream& out);

/// `llmcap validate --published`: reads the published measurements, predicts each, writes
/// --json and prints the table of rows and the error summary per device kind, metric and
/// split to `out` (cli/validate_published.cpp). Nothing is stored. Bad input throws
/// base::InputError.
int run_validate_published(const ValidateArgs& args, const std::string& data_dir,
                           std::ostream& out);

/// The table of predictions, the summaries and the targets of `predictions`; `use_engines`
/// says how they were priced (PublishedOptions::use_engines).
void print_published(const std::vector<app::PublishedPrediction>& predictions,
                     const std::filesystem::path& file, bool use_engines, std::ostream& out);

}  // namespace llmcap::cli
