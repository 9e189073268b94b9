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
  // --from-benchmark mode (cli/calibrate_benchmark.cpp, app/benchmark_fit.h).
  std::vector<std::string> benchmark_files;  ///< --from-benchmark FILE...
  std::string engine;                        ///< --engine ID
  std::string hardware;                      ///< --hardware ID
  int devices = 1;                           ///< --devices N (GPUs)
  int tensor_parallel = 0;                   ///< --tp N (0: --devices)
  int cores = 0;                             ///< --cores N (CPU)
  std::string weight_format = "bf16";        ///< --weight-format
  std::string kv_format = "bf16";            ///< --kv-format
  std::string fit_json_out;                  ///< --json FILE: the fit with every point
  std::string data_dir;                      ///< --data-dir
  unsigned long long seed = 1;               ///< --seed
};

/// Registers the `calibrate` subcommand (options bound to `args`) on `app`.
CLI::App* add_calibrate_command(CLI::App& app, CalibrateArgs& args);

/// Runs it: measures, fits, writes --out / --db, prints the machine, the kernels and the fit
/// to `out` (progress lines to `err` unless --quiet) and stores the run. Returns an exit code
/// (cli.h); bad input throws base::InputError.
int run_calibrate_command(const CalibrateArgs& args, const std::string& command_line,
                          std::ostream& out, std::ostream& err);

/// `calibrate --from-benchmark FILE...`: reads the result files (app/benchmark_files.h), fits
/// the engine profile on the catalog of `data_dir` (app/benchmark_fit.h), writes it to --out
/// (and the fit to --json) only when all of it succeeded, and prints the parameters and every
/// point. Returns an exit code; bad input throws base::InputError.
int run_calibrate_from_benchmark(const CalibrateArgs& args, const std::string& data_dir,
                                 std::ostream& out);

}  // namespace llmcap::cli
