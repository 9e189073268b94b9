// `llmcap sweep SWEEP.json` (issue 5, item 7; docs/sweep.md): plans every point of a grid of
// scenario overrides, in parallel on one machine (--jobs) or across machines with MPI
// (`mpirun -n N llmcap sweep ...`), each point stored in the results database as a run of kind
// "sweep_point"; points already stored for the same sweep are skipped (resume).
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

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
  bool quiet = false;         ///< --quiet: no progress lines
};

/// One point of a sweep: the base scenario with one value per grid field.
struct SweepPoint {
  /// Canonical key: the overrides as compact JSON with sorted field names, e.g.
  /// `{"slo.tpot_p99_s":0.03,"workload.rate_multiplier":2}` (values as written in the grid).
  std::string key;
  std::string label;  ///< "workload.rate_multiplier=2 slo.tpot_p99_s=0.03", grid order
  std::vector<std::pair<std::string, std::string>> values;  ///< field, value as JSON text
  std::string scenario_json;  ///< the base scenario with the overrides applied (JSON text)
};

/// A sweep file, read and checked (docs/sweep.md).
struct SweepSpec {
  std::filesystem::path file;           ///< the sweep file
  std::string name;                     ///< "name", default the file's stem
  std::filesystem::path scenario_path;  ///< "scenario", resolved against the sweep's folder
  std::filesystem::path profile_path;   ///< "profile" (resolved), empty when absent
  bool analysis = false;                ///< "analysis": run the plan analyses per point
  /// Stable id: name + "-" + 16 hex digits of a hash of the base scenario (parsed, canonical),
  /// the analysis flag and the profile's text. The grid is not part of it, so a sweep whose
  /// grid grows keeps the points it has.
  std::string sweep_id;
  std::vector<std::string> fields;  ///< grid fields in file order
  std::vector<SweepPoint> points;   ///< cartesian product, the last field varying fastest
};

/// Reads and checks a sweep file: every grid field is a dotted path the scenario reader reads
/// (probed with a value of the wrong type), every value is accepted by the scenario reader on
/// its own, every point loads. Throws plan::InputError naming the file, the field, the value
/// and what was expected (or the scenario reader's own message).
SweepSpec load_sweep(const std::filesystem::path& file);

/// Registers the `sweep` subcommand (options bound to `args`) on `app`.
CLI::App* add_sweep_command(CLI::App& app, SweepArgs& args);

/// Runs it; returns an exit code (cli.h). Bad input throws the InputErrors cli::run maps to 2.
/// Started by mpirun (OMPI_COMM_WORLD_SIZE / PMI_SIZE / PMIX_RANK in the environment) and
/// built with MPI, it initialises MPI and shares the points among the ranks, rank 0 writing
/// the database; otherwise MPI is never touched.
int run_sweep_command(const SweepArgs& args, const std::string& data_dir, std::ostream& out,
                      std::ostream& err);

}  // namespace llmcap::cli
