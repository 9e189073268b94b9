// `llmcap serve-bench`: the reference decoder run as a real continuous-batching server on this
// CPU beside the simulator replaying the same arrivals with the calibrated predictor (issue 4,
// item 5; docs/simulator.md, "Validation against a real serving loop (serve-bench)"). The
// command: its options, the printed side-by-side table, the files it writes and the run it
// stores. The benchmark itself is app::run_serve_bench (app/serve_bench.h); its JSON, CSV and
// stored forms are app/serve_bench_output.h.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "app/serve_bench.h"

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap serve-bench` (defaults documented at add_serve_bench_command and in
/// docs/simulator.md): those that shape the run, and where its outputs go.
struct ServeBenchArgs {
  app::ServeBenchOptions bench;  ///< every option that shapes the run, and --quiet
  std::string json_out;          ///< --json
  std::string steps_csv;         ///< --steps-csv: every step of the real runs (diagnostic)
  std::string requests_csv;      ///< --requests-csv: every request, measured beside simulated
  std::string data_dir;          ///< --data-dir
  std::string results_db;        ///< --results-db: results database the run is stored in
  bool no_store = false;         ///< --no-store
};

/// Registers the `serve-bench` subcommand (options bound to `args`) on `app`.
CLI::App* add_serve_bench_command(CLI::App& app, ServeBenchArgs& args);

/// The side-by-side table and, per load, the run's details.
void print_serve_bench(const app::ServeBenchReport& report, std::ostream& out);

/// The whole command: run the benchmark (app::run_serve_bench: validate, calibrate or read the
/// profile, estimate saturation, run every load for real and in simulation; progress to `err`
/// unless --quiet), (with --json, --steps-csv, --requests-csv) write those files atomically,
/// print, and store the run in the results database (kind "serve-bench",
/// app::store_serve_bench_run; unless --no-store; a storage failure is a warning on `err`).
/// Returns an exit code (cli.h); errors propagate as exceptions to cli::run (model::InputError,
/// sim::InputError, std::invalid_argument), and nothing is stored then.
int run_serve_bench_command(const ServeBenchArgs& args, const std::filesystem::path& data_dir,
                            const std::string& command_line, std::ostream& out, std::ostream& err);

}  // namespace llmcap::cli
