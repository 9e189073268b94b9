// `llmcap sweep SWEEP.json` (issue 5, item 7; docs/sweep.md): options and printing; the engine
// (the points, local threads and MPI, storage, resume) is app::run_sweep (app/sweep.h).
#pragma once

#include <cstdint>
#include <ostream>
#include <string>

#include "plan/scenario.h"

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap sweep`.
struct SweepArgs {
  std::string data_dir;       ///< --data-dir (empty: the CLI's default resolution)
  std::string sweep_file;     ///< SWEEP.json
  std::string db;             ///< --db: results database (default store::default_db_path)
  int jobs = 0;               ///< --jobs: points at once on this machine (0: CPUs / threads)
  int threads_per_point = 1;  ///< --threads-per-point: planner threads of each point
  int64_t max_points = 0;     ///< --max-points: stop after this many new points (0: all)
  /// --max-requests: the most requests each point's workload may have (as plan's flag).
  int64_t max_requests = plan::kDefaultMaxRequests;
  bool quiet = false;  ///< --quiet: no progress lines
};

/// Registers the `sweep` subcommand (options bound to `args`) on `app`.
CLI::App* add_sweep_command(CLI::App& app, SweepArgs& args);

/// Runs it (app::run_sweep with the catalogs of `data_dir`), then, on the process that stored
/// the points, prints the table of every point and a summary line to `out`; returns an exit
/// code (cli.h). Bad input throws the InputErrors cli::run maps to 2; an MPI rank other than 0
/// whose input failed as rank 0's did returns 2 silently (rank 0 reports it).
int run_sweep_command(const SweepArgs& args, const std::string& data_dir, std::ostream& out,
                      std::ostream& err);

}  // namespace llmcap::cli
