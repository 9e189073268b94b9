// `llmcap validate`: options and printing; the engine is app::run_validation
// (app/validation.h), stored by app::store_validate_run.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

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

}  // namespace llmcap::cli
