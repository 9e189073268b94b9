// The planner: the cheapest fleet of each candidate instance type that meets the SLO.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/calibration.h"
#include "model/hardware.h"
#include "model/model_spec.h"
#include "plan/scenario.h"
#include "sim/metrics.h"

namespace llmcap::plan {

/// One client class's share of a planned fleet (scenarios with client classes).
struct ClassRow {
  std::string name;  ///< the class's name in the scenario
  sim::Slo slo;      ///< the class's own p99 TTFT and p99 TPOT bounds, seconds
  /// Roofline prefill of this class's p99 prompt alone (WorkloadSummary::classes), seconds;
  /// 0 when the row failed before the floors were computed.
  double ttft_floor_s = 0;
  /// sim::compute_class_metrics of the class's requests on the row's fleet (the chosen one
  /// for a feasible row, the largest tried for a row that failed at max_instances; all zeros
  /// when nothing was simulated): latencies, counts, slo_attainment against `slo`, and rates
  /// (throughput, goodput_requests_per_s) over the whole run's duration. itl is empty.
  sim::Metrics metrics;
};

/// The answer for one instance type.
struct PlanRow {
  std::string instance_type;  ///< catalog id
  std::string provider;
  std::string instance_name;
  model::DeviceKind device_kind = model::DeviceKind::kCpu;
  std::string hardware_name;  ///< e.g. "1 x NVIDIA A10G" or "Intel Xeon Platinum 8488C"
  bool feasible = false;
  int64_t num_instances = 0;  ///< smallest fleet meeting the SLO (feasible rows)
  int64_t num_replicas_per_instance = 0;
  int64_t tp_degree = 0;
  double instance_usd_per_hour = 0;       ///< catalog price of one instance
  std::string instance_note;              ///< the catalog's note (real specs, unconfirmed figures)
  std::string price_model = "on_demand";  ///< the catalog's price model, e.g. "on_demand"
  double usd_per_hour = 0;                ///< whole fleet
  double usd_per_million_output_tokens = 0;
  double annual_usd = 0;  ///< usd_per_hour x hours_per_year
  /// Floors from the roofline: decode step at batch 1 (context 1 token), and the prefill of
  /// the workload's p99 prompt alone (all classes together; each class's own floor is in
  /// ClassRow::ttft_floor_s).
  double tpot_floor_s = 0;
  double ttft_floor_s = 0;
  /// All requests of the chosen fleet (feasible rows; the largest fleet tried for a row that
  /// failed at max_instances), SLO attainment and goodput against Scenario::slo (for client
  /// classes the tightest bounds; per-class figures against each class's own SLO are in
  /// `classes`).
  sim::Metrics metrics;
  /// One per client class, in scenario order, for scenarios with client classes (names and
  /// SLOs always, metrics as documented at ClassRow); empty for a scenario without classes.
  std::vector<ClassRow> classes;
  std::string infeasible_reason;  ///< why no fleet size works (infeasible rows)
  std::string deployment_rule;    ///< how the model sits on the instance
  std::string predictor;          ///< "roofline (datasheet defaults)" or the calibration used
  int64_t num_simulations = 0;    ///< simulations the search ran
};

/// Facts about the requests of one client class (or of the whole workload).
struct ClassWorkloadSummary {
  std::string name;  ///< the class's name
  int64_t num_requests = 0;
  double mean_prompt_tokens = 0;
  double mean_output_tokens = 0;
  int64_t p99_prompt_tokens = 0;  ///< nearest rank; 0 for a class without requests
};

/// Facts about the workload that the rows share.
struct WorkloadSummary {
  int64_t num_requests = 0;  ///< open loop; 0 for a closed loop
  double span_s = 0;         ///< first to last arrival (open loop), duration_s (closed loop)
  double mean_prompt_tokens = 0;
  double mean_output_tokens = 0;
  int64_t p99_prompt_tokens = 0;  ///< nearest rank over all requests
  /// One per client class, in scenario order (requests with client_class == index); empty
  /// for a scenario without classes.
  std::vector<ClassWorkloadSummary> classes;
};

struct PlanResult {
  std::string model_id;
  int64_t model_num_params = 0;
  WorkloadSummary workload;
  std::vector<PlanRow> rows;  ///< in candidate order
};

/// Receives progress; the CLI prints it, a GUI would forward it as signals. Called from
/// worker threads, serialised by the planner (never two calls at once).
class PlanObserver {
 public:
  virtual ~PlanObserver() = default;
  virtual void on_row_done(const PlanRow& row, size_t num_done, size_t num_total) = 0;
};

struct PlanOptions {
  int num_threads = 0;  ///< 0: std::thread::hardware_concurrency()
  PlanObserver* observer = nullptr;
  /// A calibration profile (llmcap calibrate): CPU instance types then use its measured rates,
  /// transferred to their CPU and share of a socket (model::transfer_efficiency); GPU types
  /// keep the datasheet roofline. Null: the roofline defaults for all. Not owned.
  const model::CalibrationProfile* calibration = nullptr;
};

/// Whether a simulated fleet meets one SLO: no rejected request, at least one completed,
/// p99 TTFT <= slo.ttft_s and p99 TPOT <= slo.tpot_s.
bool meets_slo(const sim::Metrics& metrics, const sim::Slo& slo);

/// One simulated fleet: its metrics over all requests and per client class.
struct FleetEvaluation {
  /// All requests (sim::compute_metrics against Scenario::slo).
  sim::Metrics metrics;
  /// sim::compute_class_metrics against Scenario::class_slos(): one element per client class,
  /// or one element (all requests) for a scenario without classes.
  std::vector<sim::Metrics> classes;
};

/// Whether a fleet meets every class's own SLO: no rejected request (in any class), at
/// least one request completed, and for every class c, its p99 TTFT <= class_slos[c].ttft_s
/// and its p99 TPOT <= class_slos[c].tpot_s (a class without requests, or without requests
/// of >= 2 output tokens for TPOT, has p99 0 and meets its bound). With one class and
/// class_slos = {slo} this is meets_slo(fleet.metrics, slo). Throws InputError when
/// fleet.classes and class_slos differ in size.
bool meets_class_slos(const FleetEvaluation& fleet, const std::vector<sim::Slo>& class_slos);

/// Simulates a fleet of `num_instances` of one instance type on the scenario's workload and
/// returns its metrics (what the planner's search evaluates at each size), overall and per
/// client class. Throws model::InfeasibleError when the model cannot be placed on the
/// instance, and the InputErrors of plan() for bad input.
FleetEvaluation evaluate_fleet(const Scenario& scenario, const model::Catalog& catalog,
                               const std::string& instance_type, int64_t num_instances,
                               const model::CalibrationProfile* calibration = nullptr);

/// Plans every candidate. Search per type: roofline floors first (infeasible with the numbers
/// when the weights do not fit, or a floor exceeds an SLO: the TPOT floor against every
/// class's TPOT bound, the prefill of each class's p99 prompt against that class's TTFT bound;
/// the reason names the first class, in scenario order, that fails), then the fleet size is
/// doubled from 1 until the simulated fleet meets the SLO of every class (meets_class_slos
/// with Scenario::class_slos(); for a scenario without classes that is meets_slo with
/// Scenario::slo) and bisected down to the smallest size that does (fleet size is assumed
/// monotone: more instances never worse; tests check it). Sizes above max_instances are
/// infeasible. Deterministic: each simulation uses the scenario's seed.
/// Throws InputError / model::InputError / sim::InputError for bad input.
PlanResult plan(const Scenario& scenario, const model::Catalog& catalog,
                const PlanOptions& options = {});

}  // namespace llmcap::plan
