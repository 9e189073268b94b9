// Internal to plan/ (not a door): the simulations of one planning context, shared by its
// candidates. Two instance types whose replicas deploy alike (the same accelerator, degree,
// formats, efficiency and serving limits: g5.xlarge and g5.8xlarge, or g5.12xlarge's four
// replicas and four g5.xlarge) run the same simulation for the same number of replicas; the
// cache runs it once and hands every asker the same evaluation (docs/search.md, "Reused
// simulations").
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "model/deployment.h"
#include "model/efficiency.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "sim/fleet_config.h"
#include "sim/metrics.h"
#include "sim/workload.h"

namespace llmcap::plan::detail {

/// What decides one simulation of a planning context beyond the context itself (its model,
/// KV format, workload, seed, SLOs and step-time scale): the replica's deployment (all but its
/// rule text and replicas per instance), the efficiency its predictor was made with, the
/// weight format, the fleet's serving limits, router and front-end latency, the number of
/// replicas, and whether the run stops at a certain miss. Empty when the simulation must not
/// be shared (an efficiency with calibrated rates, whose tables are not part of the key).
std::string simulation_key(const model::Deployment& deployment, const model::Efficiency& efficiency,
                           model::WeightFormat weight_format, const sim::FleetConfig& fleet,
                           int64_t num_replicas, bool stop_at_certain_miss);

/// The evaluations of one context, by simulation_key. Thread-safe: a second asker of a key
/// whose simulation is running waits for it instead of running it again. A run that throws
/// (a cancelled one) is forgotten, so a later asker runs it anew.
class SimulationCache {
 public:
  /// The evaluation of `key`, running `run` when no asker has (an empty key always runs).
  FleetEvaluation get_or_run(const std::string& key, const std::function<FleetEvaluation()>& run);
  /// Distinct simulations run (and kept) so far.
  int64_t num_run() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::shared_future<FleetEvaluation>> runs_;
};

/// A fingerprint of what a planning context's simulations share: the model (its config path,
/// the file's size and last write time, id and size; the draft model's path and file the same), KV
/// format, seed, the workload (every request's arrival, lengths and class), the SLOs of each class,
/// the step-time scale, the ITL choice and the calibration profile used. Empty for a closed loop
/// (not shared).
std::string context_fingerprint(const Scenario& scenario, const model::ModelSpec& model,
                                const sim::Workload& workload,
                                const std::vector<sim::Slo>& class_slos, double step_time_scale,
                                bool record_itl, const model::CalibrationProfile* calibration);

}  // namespace llmcap::plan::detail

namespace llmcap::plan {

/// The caches of many planning contexts, by context_fingerprint (PlanOptions::shared_simulations).
class SharedSimulations {
 public:
  /// The cache of the context with `fingerprint` (made on first use; lives as long as this).
  detail::SimulationCache& for_context(const std::string& fingerprint);
  /// Contexts kept so far (the GUI starts a new SharedSimulations past a bound).
  size_t num_contexts() const;
  /// Distinct simulations run and kept over every context.
  int64_t num_run() const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<detail::SimulationCache>> caches_;
};

}  // namespace llmcap::plan
