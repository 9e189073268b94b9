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
  std::string instance_note;         ///< the catalog's note (real specs, unconfirmed figures)
  std::string price_model = "on_demand";  ///< the catalog's price model, e.g. "on_demand"
  double usd_per_hour = 0;                ///< whole fleet
  double usd_per_million_output_tokens = 0;
  double annual_usd = 0;  ///< usd_per_hour x hours_per_year
  /// Floors from the roofline: decode step at batch 1 (context 1 token), and the prefill of
  /// the workload's p99 prompt alone.
  double tpot_floor_s = 0;
  double ttft_floor_s = 0;
  sim::Metrics metrics;           ///< of the chosen fleet (feasible rows)
  std::string infeasible_reason;  ///< why no fleet size works (infeasible rows)
  std::string deployment_rule;    ///< how the model sits on the instance
  std::string predictor;          ///< "roofline (datasheet defaults)" or the calibration used
  int64_t num_simulations = 0;    ///< simulations the search ran
};

/// Facts about the workload that the rows share.
struct WorkloadSummary {
  int64_t num_requests = 0;
  double span_s = 0;  ///< first to last arrival (open loop)
  double mean_prompt_tokens = 0;
  double mean_output_tokens = 0;
  int64_t p99_prompt_tokens = 0;
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

/// Whether a simulated fleet meets the scenario's SLO: no rejected request, p99 TTFT <=
/// slo.ttft_s and p99 TPOT <= slo.tpot_s.
bool meets_slo(const sim::Metrics& metrics, const sim::Slo& slo);

/// Simulates a fleet of `num_instances` of one instance type on the scenario's workload and
/// returns its metrics (what the planner's search evaluates at each size). Throws
/// model::InfeasibleError when the model cannot be placed on the instance, and the InputErrors
/// of plan() for bad input.
sim::Metrics evaluate_fleet(const Scenario& scenario, const model::Catalog& catalog,
                            const std::string& instance_type, int64_t num_instances,
                            const model::CalibrationProfile* calibration = nullptr);

/// Plans every candidate. Search per type: roofline floors first (infeasible with the numbers
/// when a floor exceeds the SLO or the weights do not fit), then the fleet size is doubled from
/// 1 until the simulated fleet meets the SLO and bisected down to the smallest size that does
/// (fleet size is assumed monotone: more instances never worse; tests check it). Sizes above
/// max_instances are infeasible. Deterministic: each simulation uses the scenario's seed.
/// Throws InputError / model::InputError / sim::InputError for bad input.
PlanResult plan(const Scenario& scenario, const model::Catalog& catalog,
                const PlanOptions& options = {});

}  // namespace llmcap::plan
