// `llmcap calibrate`: options and printing; the sweep is kernels::run_calibration, its
// profile app::to_profile (app/profile.h), stored by app::store_calibration_run.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap calibrate`.
struct CalibrateArgs {
  bool quick = false;
  int threads = 0;
  std::string json_out;
  std::string db_out;
  bool quiet = false;
  bool test_sweep = false;               ///< hidden: tiny in-cache shapes, for the CLI tests
  std::string results_db;                ///< --results-db: results database the run is stored in
  bool no_store = false;                 ///< --no-store
  std::string fit_statistic = "median";  ///< --fit-statistic: "median" or "min"
  std::vector<std::string> models;       ///< --model: model configs whose shapes are timed too
};

/// Registers the `calibrate` subcommand (options bound to `args`) on `app`.
CLI::App* add_calibrate_command(CLI::App& app, CalibrateArgs& args);

/// Runs it: measures, fits, writes --out / --db, prints the machine, the kernels and the fit
/// to `out` (progress lines to `err` unless --quiet) and stores the run. Returns an exit code
/// (cli.h); bad input throws base::InputError.
int run_calibrate_command(const CalibrateArgs& args, const std::string& command_line,
                          std::ostream& out, std::ostream& err);

}  // namespace llmcap::cli
