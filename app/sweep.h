// The sweep engine (docs/sweep.md): plans every point of a sweep file, in parallel on one
// machine or across machines with MPI (`mpirun -n N llmcap sweep ...`), each point stored in
// the results database as a run of kind "sweep_point"; points already stored for the same
// sweep are skipped (resume).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "app/sweep_spec.h"
#include "plan/scenario.h"
#include "store/results_store.h"

namespace llmcap::app {

/// What to sweep and how.
struct SweepOptions {
  std::string sweep_file;     ///< the sweep file (docs/sweep.md)
  std::string data_dir;       ///< folder with the hardware/ and instances/ catalogs
  std::string db;             ///< results database flag (store::default_db_path resolves it)
  int jobs = 0;               ///< points at once on this machine (0: CPUs / threads_per_point)
  int threads_per_point = 1;  ///< planner threads of each point (results do not depend on it)
  int64_t max_points = 0;     ///< stop after this many new points (0: all)
  /// The most requests each point's workload may have (plan::Scenario::max_requests; the
  /// sweep's --max-requests): a point above it fails as bad input, as `plan` refuses it.
  int64_t max_requests = plan::kDefaultMaxRequests;
  bool quiet = false;        ///< no progress line per point
  std::string command_line;  ///< stored with each point (store::RunRecord::command_line)
};

/// What a sweep process did.
struct SweepRun {
  enum class Role {
    kCoordinator,    ///< the only process, or MPI rank 0: it stored the points
    kWorker,         ///< an MPI rank other than 0 that planned the points it was handed
    kWorkerStopped,  ///< an MPI rank other than 0 whose input failed as rank 0's did (rank 0
                     ///< reports the error)
  };
  Role role = Role::kCoordinator;
  std::optional<SweepSpec> spec;          ///< the sweep (coordinator only)
  std::optional<store::ResultsStore> db;  ///< the database the points are in (coordinator only)
  size_t num_stored_before = 0;           ///< points of this sweep already stored when it started
  size_t num_done = 0;                    ///< points planned and stored by this run
};

/// Runs the sweep: reads the sweep file (load_sweep), the catalogs and the profile, skips the
/// points already stored, plans the others (options.jobs threads, or one point per MPI rank)
/// and stores each as it finishes. Writes to `err` one line on what it runs and, unless quiet,
/// one progress line per point. Started by mpirun (OMPI_COMM_WORLD_SIZE / PMI_SIZE /
/// PMIX_RANK in the environment) and built with MPI, it initialises MPI and shares the points
/// among the ranks, rank 0 writing the database; otherwise MPI is never touched. Throws
/// base::InputError for bad input (on rank 0 under MPI) and for a point that failed on bad
/// input, std::runtime_error for a point that failed otherwise (the points finished before it
/// stay stored, and "Stopped after N new points ..." is written to `err` first).
SweepRun run_sweep(const SweepOptions& options, std::ostream& err);

/// Whether this build links MPI.
bool built_with_mpi();

}  // namespace llmcap::app
