// The configuration search per instance type with analytic pruning, the maximum sustainable
// request rate per instance, and the Pareto frontier of cost against p99 latency (issue 5,
// item 1). Method, bounds and their proofs: docs/search.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/hardware.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "plan/search_spec.h"

namespace llmcap::plan {

/// A configuration's name, e.g. "tp=1 bf16 continuous max_num_seqs=256" or
/// "tp=2 int8 chunked_prefill chunk=2048 max_num_seqs=128" (tp=auto for degree 0).
std::string config_label(const ServingChoice& choice);

/// The configurations SearchSpec lists for one instance type, in the order documented at
/// SearchSpec (duplicates removed; degrees the type cannot run and chunked_prefill chunks
/// below max_num_seqs left out). `base` is the scenario's own configuration for the type.
std::vector<ServingChoice> search_configs(const SearchSpec& spec, const ServingChoice& base,
                                          const std::vector<int>& allowed_tp_degrees);

/// The analytic lower bound on the fleet size of one prepared configuration (docs/search.md,
/// "Bounds"). For an open-loop workload: every fleet meeting every class's p99 SLO has at
/// least num_instances instances, given the predictor's step time is non-decreasing in each
/// field of a batch shape. A closed loop (requests not known in advance) gets 1.
struct FleetBound {
  int64_t num_instances = 1;
  /// Seconds per new token, at least, of any step: prefill tokens and decode tokens (the
  /// same for chunked_prefill, whose steps mix them).
  double prefill_s_per_token = 0;
  double decode_s_per_token = 0;
  double work_s = 0;     ///< replica-seconds the SLO-meeting requests need, at least
  double horizon_s = 0;  ///< first arrival to the latest deadline of an SLO-meeting request
};
FleetBound fleet_lower_bound(const PlanSession& session, const PreparedType& type);
/// The same for workload `w` judged by `class_slos` (Scenario::class_slos()).
FleetBound fleet_lower_bound(const sim::Workload& w, const std::vector<sim::Slo>& class_slos,
                             const PreparedType& type);

/// One configuration of one instance type, tried or pruned.
struct ConfigResult {
  /// kFeasible: its smallest SLO-meeting fleet was found. kInfeasible: it cannot deploy, a
  /// floor exceeds an SLO, or max_instances is not enough. kPrunedBound: its lower-bound
  /// cost cannot beat the best found (no simulation). kCut: simulated up to the size whose
  /// cost would tie the best found, without meeting the SLO (cannot be the cheapest).
  enum class Outcome { kFeasible, kInfeasible, kPrunedBound, kCut };
  ServingChoice choice;
  std::string label;  ///< config_label
  Outcome outcome = Outcome::kInfeasible;
  int64_t lower_bound_instances = 1;  ///< fleet_lower_bound (1 when not deployable)
  int64_t num_instances = 0;          ///< kFeasible
  double usd_per_hour = 0;            ///< kFeasible
  double ttft_p99_s = 0;              ///< kFeasible: of the chosen fleet
  double tpot_p99_s = 0;
  std::string reason;  ///< why not feasible (or pruned)
  int64_t num_simulations = 0;
};
/// "feasible" | "infeasible" | "pruned_bound" | "cut".
const char* outcome_name(ConfigResult::Outcome outcome);

/// The search over one instance type.
struct TypeSearchResult {
  std::string instance_type;
  model::DeviceKind device_kind = model::DeviceKind::kCpu;
  double instance_usd_per_hour = 0;
  std::vector<ConfigResult> configs;  ///< in search_configs order
  int64_t num_configs_tried = 0;      ///< simulated at least once
  int64_t num_configs_pruned = 0;     ///< skipped without simulation (floors, deploy, bound)
  /// Index into configs of the cheapest feasible one (ties: the lower index); -1: none.
  int64_t best = -1;
  PlanRow best_row;  ///< the best configuration's planner row (feasible), else a row of reasons
  /// Maximum sustainable rate per instance of the best configuration's planned fleet
  /// (SearchSpec::max_rate; 0 when not computed or no configuration is feasible):
  /// max_sustainable_rate.
  double max_load_multiplier_per_instance = 0;
  double max_requests_per_s_per_instance = 0;
  int64_t num_simulations = 0;  ///< all of this type's, the rate bisection included
};

struct SearchResult {
  std::vector<TypeSearchResult> types;  ///< in candidate order
  int64_t num_configs = 0;
  int64_t num_configs_tried = 0;
  int64_t num_configs_pruned = 0;
  int64_t num_simulations = 0;
};

/// Runs the scenario's search (Scenario::search; with it disabled, each type's scenario
/// configuration alone) over every candidate type, types in parallel on options.num_threads
/// threads. Per type: every configuration is deployed and its floors checked, its fleet lower
/// bound computed; then (pruned, the default) configurations are visited by ascending
/// lower-bound cost, a configuration whose lower-bound cost exceeds the best found (or ties
/// it at a higher index) is skipped, and each fleet-size search starts at the bound and stops
/// at the size whose cost would exceed the best. The answer equals exhaustive enumeration (no
/// pruning) whenever fleet size is monotone and the predictor monotone (docs/search.md);
/// tests check it. Deterministic. Throws InputError for a scenario with a given fleet, for
/// a search that leaves no valid configuration, and what plan() throws.
SearchResult run_search(const Scenario& scenario, const model::Catalog& catalog,
                        const PlanOptions& options = {});

/// What one instance of a fleet of `num_instances` (>= 1) instances of `instance_id` with
/// `choice` sustains within every class's SLO: the largest load multiplier m (Scenario
/// with_load_multiplier, plan/analysis.h) at which that fleet meets the SLO, by bisection on m
/// until hi / lo <= 1 + relative_tolerance, starting at `start` (> 0) and doubling or halving
/// to bracket it within [2^-12, 2^12] (assumes the SLO is monotone in load), divided by
/// num_instances. load_multiplier is m / num_instances; requests_per_s is m x the workload's
/// offered rate (requests / arrival span at multiplier 1) / num_instances for an open loop,
/// the measured throughput at m / num_instances for a closed loop. Measured on the planned
/// fleet (not on one instance alone), so requests_per_s x num_instances covers the offered
/// load whenever that fleet meets the SLO at m = 1, bursty arrivals included (docs/search.md,
/// "Sustainable rate"). 0 when the fleet fails even at 2^-12 or cannot deploy.
struct MaxRate {
  double load_multiplier = 0;
  double requests_per_s = 0;
  int64_t num_simulations = 0;
};
MaxRate max_sustainable_rate(const Scenario& scenario, const model::Catalog& catalog,
                             const std::string& instance_id, const ServingChoice& choice,
                             const PlanOptions& options = {}, double start = 1.0,
                             double relative_tolerance = 0.05, int64_t num_instances = 1);

/// A point of cost against p99 latency.
struct CostLatencyPoint {
  double usd_per_hour = 0;
  double ttft_p99_s = 0;
  double tpot_p99_s = 0;
};
/// The Pareto frontier of cost against p99 latency (docs/search.md): indices of the points no
/// other point dominates, a point dominating another when it is no worse in all of
/// usd_per_hour, p99 TTFT and p99 TPOT and better in at least one (of equal points the first
/// is kept). Sorted by usd_per_hour, then p99 TTFT, p99 TPOT, index.
std::vector<size_t> pareto_frontier(const std::vector<CostLatencyPoint>& points);

}  // namespace llmcap::plan
