// The planner: the cheapest fleet of each candidate instance type that meets the SLO.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/calibration.h"
#include "model/efficiency.h"
#include "model/hardware.h"
#include "model/model_spec.h"
#include "model/roofline.h"
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

/// One tensor-parallel degree tried for an instance type (serving.tensor_parallel "search").
struct TpOptionRow {
  int64_t tp_degree = 0;
  bool feasible = false;
  int64_t num_instances = 0;  ///< smallest fleet meeting the SLO (feasible options)
  int64_t num_replicas_per_instance = 0;
  double usd_per_hour = 0;  ///< whole fleet (feasible options)
  double ttft_p99_s = 0;    ///< of the fleet chosen (or the largest tried); 0 if none ran
  double tpot_p99_s = 0;
  std::string infeasible_reason;
};

/// One group of a given fleet (Scenario::fleet), as deployed.
struct GroupRow {
  std::string field;                                        ///< e.g. "fleet.decode[0]"
  std::string instance_type;                                ///< catalog id
  model::DeviceKind device_kind = model::DeviceKind::kCpu;  ///< the instance type's
  std::string role;                                         ///< "unified", "prefill" or "decode"
  int64_t num_instances = 0;
  int64_t tp_degree = 0;
  int64_t num_replicas_per_instance = 0;
  int64_t num_kv_blocks = 0;  ///< per replica
  double usd_per_hour = 0;    ///< the group's instances
  /// Disaggregated fleets: each replica's share of its instance's network, bytes/s.
  double network_bandwidth_bytes_per_s = 0;
  double tpot_floor_s = 0;  ///< roofline decode step at batch 1 on one of its replicas
  double ttft_floor_s = 0;  ///< roofline prefill of the workload's p99 prompt alone
  std::string deployment_rule;
  std::string predictor;
  std::string engine;  ///< the engine profile that priced it (docs/engines.md); "" for none
};

/// The answer for one instance type, or for a given fleet (Scenario::fleet).
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
  /// The serving configuration the row was planned with, as plan::config_label writes it with
  /// the degree resolved (e.g. "tp=1 bf16 chunked_prefill chunk=2048 max_num_seqs=256"); a
  /// given fleet: its first group's.
  std::string configuration;
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
  /// The engine profile the row was priced with (the scenario's "engine" for its device kind,
  /// else the kind's default, plan::engine_id; "" for the datasheet roofline, or when a
  /// calibration priced it instead).
  std::string engine;
  /// The kind of that predictor (a fleet: its first group's); kRoofline when none was built.
  model::PredictorKind predictor_kind = model::PredictorKind::kRoofline;
  int64_t num_simulations = 0;  ///< simulations the search ran
  /// serving.tensor_parallel "search": every degree tried, ascending; the row itself is the
  /// cheapest feasible one (ties: the lower degree), or, when none is, the lowest degree's row
  /// with every degree's reason. Empty otherwise.
  std::vector<TpOptionRow> tp_options;
  /// A given fleet: its groups, in scenario order. The row then describes the whole fleet:
  /// instance_type "fleet: 2 x a + 3 x b" (with roles when disaggregated), num_instances and
  /// usd_per_hour summed over groups, device_kind gpu if any group has GPUs, tp_degree the
  /// groups' common degree (0 if they differ), floors the best group's (TPOT among groups
  /// that decode, TTFT among those that prefill), feasible when the one simulation meets
  /// every class's SLO (the reason, with the cost, otherwise); cost figures are filled either
  /// way. num_replicas_per_instance is 0.
  std::vector<GroupRow> groups;
  int64_t num_kv_transfers = 0;   ///< a given disaggregated fleet: KV caches moved
  int64_t kv_transfer_bytes = 0;  ///< and their bytes
};

/// The row's kind as shown and written (the run document's "device_kind"): "cpu" or "gpu", or
/// "mixed" for a given fleet whose groups have both.
std::string row_kind_name(const PlanRow& row);

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
  /// Open loop: 24 mean arrival rates by hour of day (plan/fleet_over_day.h,
  /// hourly_requests_per_s); empty for a closed loop or a workload spanning under two hours.
  std::vector<double> hourly_requests_per_s;
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

/// Simulations shared by every plan(), PlanSession and analysis given the same object
/// (PlanOptions::shared_simulations): one simulation of the same fleet, under the same
/// workload, SLOs and options, runs once (docs/search.md, "Reused simulations").
class SharedSimulations;
/// A new, empty SharedSimulations.
std::shared_ptr<SharedSimulations> make_shared_simulations();

struct PlanOptions {
  int num_threads = 0;  ///< 0: std::thread::hardware_concurrency()
  PlanObserver* observer = nullptr;
  /// A calibration profile (llmcap calibrate): CPU instance types then use its measured rates,
  /// transferred to their CPU and share of a socket (model::transfer_efficiency); GPU types
  /// keep the datasheet roofline. Null: the roofline defaults for all. Not owned.
  const model::CalibrationProfile* calibration = nullptr;
  /// Multiplies every predicted step time (> 0; 1 = the predictor as is). The uncertainty
  /// analysis replans at 1 - e and 1 + e for a step-time error e (docs/search.md). Floors
  /// scale with it.
  double step_time_scale = 1.0;
  /// Keep every inter-token gap in the simulations (sim::SimOptions::record_itl_ns) so that
  /// PlanRow::metrics.itl is filled. False: Metrics::itl stays empty (count 0) and each
  /// simulation skips 8 bytes of memory per output token and the ITL selection; the GUI's
  /// what-if runs, which show no ITL, use this.
  bool record_itl = true;
  /// Polled during planning (between candidates and inside every simulation, every 4,096
  /// events; from the planning threads): once it returns true, plan(), PlanSession's methods
  /// and the analyses built on them throw plan::Cancelled. Empty: never.
  std::function<bool()> cancel;
  /// Warm start of plan()'s fleet-size searches (llmcap plan --warm-start): a previous
  /// answer's fleet size per instance type id (sizes <= 0 are ignored). A type listed here
  /// starts its search at that size and steps 1, 2, 4, ... down (or up) from it, instead of
  /// 1, 2, 4, ... from 1: the answer is the same (fleet size is assumed monotone, as plan()
  /// documents), with fewer simulations when the previous size is close. Not used for
  /// serving.tensor_parallel "search" nor a given fleet. PlanSession ignores it. Empty: cold.
  std::map<std::string, int64_t> warm_start_sizes;
  /// Shared with other planning runs of the same scenario and catalog (an analysis's
  /// replans, its configuration search): each run keeps its simulations there, under a
  /// fingerprint of its workload, SLOs, step-time scale and ITL choice, and reuses those of
  /// another with the same fingerprint. Null: each run keeps its own. A model file rewritten
  /// is another context (its size and write time are in the fingerprint); holding one across
  /// edits of the catalog is not allowed (the catalog is not in the fingerprint). The GUI
  /// holds one per window (docs/gui.md).
  std::shared_ptr<SharedSimulations> shared_simulations;
};

/// Thrown when PlanOptions::cancel asked planning to stop; no partial result is returned.
class Cancelled : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
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
  /// Non-empty: the simulation stopped as soon as missing an SLO was certain
  /// (sim::SimOptions::stop_at_certain_p99_miss), and says why; metrics and classes are then
  /// empty. The fleet-size search runs its sizes this way.
  std::string stopped_early_reason;
  bool stopped_early() const { return !stopped_early_reason.empty(); }
};

/// Whether a fleet meets every class's own SLO (false for an evaluation stopped early): no
/// rejected request (in any class), at
/// least one request completed, and for every class c, its p99 TTFT <= class_slos[c].ttft_s
/// and its p99 TPOT <= class_slos[c].tpot_s (a class without requests, or without requests
/// of >= 2 output tokens for TPOT, has p99 0 and meets its bound). With one class and
/// class_slos = {slo} this is meets_slo(fleet.metrics, slo). Throws InputError when
/// fleet.classes and class_slos differ in size.
bool meets_class_slos(const FleetEvaluation& fleet, const std::vector<sim::Slo>& class_slos);

/// The tensor-parallel degrees `instance` can run `model` with, ascending: GPUs: the divisors
/// of num_gpus; CPU instances of whole sockets: the divisors of the socket count, above 1 only
/// when the CPU's catalog record gives its socket link (HardwareSpec::socket_link_*); slices
/// of a socket: 1. Only degrees dividing the model's attention heads (as vLLM requires).
/// Whether the weights fit is not checked here (deployment_for_tp says).
std::vector<int> tp_options(const model::InstanceType& instance, const model::Catalog& catalog,
                            const model::ModelSpec& model);

/// Why `instance` cannot run `model` at `tp_degree` (e.g. "tp 2 is larger than the instance's
/// 1 GPU (NVIDIA A10G)"), or "" when tp_options lists it.
std::string tp_refusal(const model::InstanceType& instance, const model::Catalog& catalog,
                       const model::ModelSpec& model, int tp_degree);

/// model::make_deployment at a chosen tensor-parallel degree; 0, or the degree make_deployment
/// picks itself (1 on a CPU), gives make_deployment's deployment unchanged. Other degrees, GPUs:
/// tp_degree GPUs per replica, num_gpus / tp_degree replicas, replica memory tp x GPU memory less
/// tp activation reserves (make_deployment's rule at that degree), links the GPU's interconnect.
/// CPUs of whole sockets: tp_degree sockets per replica (each device one socket: its peak bandwidth
/// and FLOP/s), sockets / tp_degree replicas, instance memory split evenly, one activation reserve
/// per replica, links the CPU's socket link (HardwareSpec::socket_link_bandwidth_bytes_per_s).
/// Throws model::InfeasibleError when the weights plus one max-length sequence of KV do not fit a
/// replica, and InputError naming the instance, tp_refusal's reason and tp_options for a degree the
/// instance cannot run.
model::Deployment deployment_for_tp(const model::InstanceType& instance,
                                    const model::Catalog& catalog, const model::ModelSpec& model,
                                    model::WeightFormat weight_format, model::KvFormat kv_format,
                                    const model::Efficiency& efficiency, int tp_degree);

/// `efficiency` for `deployment`: unchanged, except a CPU replica over tp > 1 sockets, whose
/// all-reduce latency becomes 2 (tp - 1) x cpu.socket_link_latency_s (a ring all-reduce takes
/// 2 (tp - 1) steps, each crossing the link once; Patarasuk & Yuan, JPDC 2009). The
/// bandwidth term is the roofline's: link bytes / (socket link bandwidth x
/// link_bandwidth_fraction). `cpu` may be null for GPUs.
model::Efficiency tp_efficiency(model::Efficiency efficiency, const model::Deployment& deployment,
                                const model::HardwareSpec* cpu);

/// Simulates a fleet of `num_instances` of one instance type on the scenario's workload and
/// returns its metrics (what the planner's search evaluates at each size), overall and per
/// client class. The tensor-parallel degree is the scenario's for the type (automatic unless
/// serving.tensor_parallel names it). Throws model::InfeasibleError when the model cannot be
/// placed on the instance, and the InputErrors of plan() for bad input.
FleetEvaluation evaluate_fleet(const Scenario& scenario, const model::Catalog& catalog,
                               const std::string& instance_type, int64_t num_instances,
                               const model::CalibrationProfile* calibration = nullptr);

/// Simulates the scenario's given fleet (Scenario::fleet; InputError without one) once and
/// returns its metrics. Throws model::InfeasibleError when a group cannot deploy the model,
/// InputError for an unknown instance id, a refused tensor-parallel degree or, when
/// disaggregated, an instance type without network figures; and the InputErrors of plan().
FleetEvaluation evaluate_given_fleet(const Scenario& scenario, const model::Catalog& catalog,
                                     const model::CalibrationProfile* calibration = nullptr);

/// One serving configuration of an instance type: what the configuration search varies
/// (plan/search.h). The scenario's own is PlanSession::default_choice.
struct ServingChoice {
  int tp_degree = 0;  ///< 0: model::make_deployment's degree; else one of tp_options
  model::WeightFormat weight_format = model::WeightFormat::kBf16;
  /// Engine limits (policy, max_num_seqs, max_num_batched_tokens, block size); num_kv_blocks
  /// is ignored (the deployment fixes it).
  sim::ServingConfig serving;
};

/// An instance type deployed with one ServingChoice, its floors checked: ready to simulate.
struct PreparedType {
  /// Identity, deployment rule, predictor name and floors; infeasible_reason set when the
  /// model cannot be placed or a floor exceeds an SLO (plan()'s messages). num_simulations
  /// is 0.
  PlanRow row;
  ServingChoice choice;
  const model::InstanceType* instance = nullptr;  ///< in the session's catalog
  model::Deployment deployment;
  /// The efficiency the predictor was made with (engine, calibration and tensor parallelism
  /// applied).
  model::Efficiency efficiency;
  /// Step times of one replica (scaled by PlanOptions::step_time_scale); null when the model
  /// cannot be placed.
  std::shared_ptr<const model::StepTimePredictor> predictor;
  sim::FleetConfig fleet;  ///< serving limits with num_kv_blocks, router; num_replicas unset
  bool ready() const { return row.infeasible_reason.empty(); }
};

/// Where the fleet-size search of PlanSession::search_size starts and where it stops.
/// Sizes tried: `start`, then up (failing) or down (passing) by steps first_step, 2 x, 4 x,
/// ... until the answer is bracketed, then bisection. With the defaults (start 1, first
/// step 1) this is plan()'s search: 1, 2, 4, 8, ... then bisection.
struct SizeSearch {
  /// Sizes below this are known to fail (a proved lower bound, plan/search.h); >= 1.
  int64_t lower_bound = 1;
  int64_t start = 0;       ///< first size simulated; 0: lower_bound; clamped to the range
  int64_t first_step = 0;  ///< 0: the start size (doubling)
  /// Largest size tried; 0: Scenario::max_instances (larger values are capped by it). A
  /// search that fails at a smaller cap returns an infeasible row whose reason says so.
  int64_t cap = 0;
};

/// Per-request latencies of one simulated fleet (the latency CDFs of plan/analysis.h).
struct RequestLatencies {
  std::vector<double> ttft_s;  ///< every completed request, in request order
  std::vector<double> tpot_s;  ///< completed requests with >= 2 output tokens, in order
};

/// The model and workload of a scenario, loaded once, for planning many configurations of
/// many instance types (the configuration search and the analyses). Const methods may run on
/// several threads at once. Keeps a copy of the scenario; `catalog` and
/// options.calibration must outlive the session. Throws what plan() throws for bad input
/// (before any simulation).
class PlanSession {
 public:
  PlanSession(const Scenario& scenario, const model::Catalog& catalog,
              const PlanOptions& options = {});
  ~PlanSession();
  PlanSession(const PlanSession&) = delete;
  PlanSession& operator=(const PlanSession&) = delete;

  const Scenario& scenario() const;
  const model::Catalog& catalog() const;
  const model::ModelSpec& model() const;
  const sim::Workload& workload() const;
  const WorkloadSummary& summary() const;
  /// The scenario's configuration for `instance_id`: its degree rule, weight format and
  /// serving limits.
  ServingChoice default_choice(const std::string& instance_id) const;
  /// Deploys the model and checks the floors (no simulation). InputError for a degree the
  /// type cannot run (tp_refusal).
  PreparedType prepare(const model::InstanceType& instance, const ServingChoice& choice) const;
  /// Simulates `num_instances` of a ready type. InputError when not ready.
  FleetEvaluation evaluate(const PreparedType& type, int64_t num_instances) const;
  /// The per-request TTFT and TPOT of `num_instances` of a ready type (one simulation).
  RequestLatencies request_latencies(const PreparedType& type, int64_t num_instances) const;
  /// The smallest fleet of a prepared type meeting every class's SLO, searched as
  /// `search` says (plan()'s rules and monotonicity assumption); a type that is not ready
  /// returns its row unchanged. row.num_simulations counts the simulations run.
  PlanRow search_size(const PreparedType& type, const SizeSearch& search = {}) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Plans every candidate, or evaluates a given fleet (Scenario::fleet: one row, see
/// PlanRow::groups). Before any simulation, refuses (InputError naming the file, the field,
/// the degree, the reason and the degrees allowed) a tensor-parallel degree that
/// serving.tensor_parallel or a fleet group fixes and its instance type cannot run
/// (tp_refusal), and unknown instance ids there. The degree per type: automatic, fixed, or
/// (kSearch) each of tp_options searched in turn, keeping the cheapest (PlanRow::tp_options).
/// Search per type: roofline floors first (infeasible with the numbers
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
