// Internal to plan/ (not a door: include plan/planner.h): the planning context and the pieces
// that planner.cpp (workload summary, deployment, candidates made ready, a given fleet),
// fleet_search.cpp (floors and the fleet-size search per type) and plan_session.cpp (plan(),
// PlanSession, evaluate_fleet) share.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "model/hardware.h"
#include "model/model_spec.h"
#include "model/step_time.h"
#include "plan/candidates.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "plan/sim_cache.h"
#include "sim/simulator.h"

namespace llmcap::plan::detail {

/// `seconds` with 3 significant digits and " s" (messages).
std::string format_s(double seconds);

/// Facts about `w`'s requests (per client class of `spec` too).
WorkloadSummary summarize_workload(const sim::Workload& w, const WorkloadSpec& spec);

/// The largest prompt + output tokens of one request of `w`.
int64_t max_request_tokens(const sim::Workload& w);

/// What every planning step needs: the scenario, catalog, model and workload (all outliving
/// the context) and the options that apply to every simulation.
struct Context {
  const Scenario& scenario;
  const model::Catalog& catalog;
  const model::ModelSpec& model;
  const sim::Workload& workload;
  const WorkloadSummary& summary;
  int64_t max_request_tokens;
  const model::CalibrationProfile* calibration;
  /// Scenario::class_slos(): one per client class, or {scenario.slo} without classes.
  const std::vector<sim::Slo>& class_slos;
  double step_time_scale = 1.0;  ///< PlanOptions::step_time_scale
  bool record_itl = true;        ///< PlanOptions::record_itl
  std::function<bool()> cancel;  ///< PlanOptions::cancel
  /// The context's simulations, shared by its candidates (null: none shared).
  SimulationCache* simulations = nullptr;

  /// SimOptions with this context's cancel hook and ITL choice.
  sim::SimOptions sim_options() const {
    sim::SimOptions o;
    o.record_itl_ns = false;
    o.record_itl_runs = record_itl;  // the same ITL figures, one entry per step, not per token
    o.cancel = cancel;
    return o;
  }
  /// Throws Cancelled when PlanOptions::cancel says so.
  void check_cancel() const {
    if (cancel && cancel()) throw Cancelled("planning cancelled");
  }

  bool has_classes() const { return !scenario.workload.classes.empty(); }
  /// " of class \"name\"" for a scenario with classes, "" without (messages).
  std::string of_class(size_t c) const {
    return has_classes() ? " of class \"" + scenario.workload.classes[c].name + "\"" : "";
  }
};

/// Roofline time of the prefill of one prompt of `num_tokens` tokens alone in a step, seconds.
double prefill_floor_s(const model::StepTimePredictor& predictor, int64_t num_tokens);

/// The metrics of one simulation's result; throws Cancelled for a cancelled run.
FleetEvaluation evaluate(const Context& ctx, const sim::SimResult& result);

/// One instance type (at one tensor-parallel degree) made ready to simulate, or the reason it
/// cannot serve the scenario.
struct Candidate : PreparedType {
  /// `stop_at_certain_miss`: the fleet-size search only needs the verdict of a failing size,
  /// so the run stops once missing an SLO is certain (sim::SimOptions::stop_at_certain_p99_miss;
  /// the evaluation then carries only the reason). A size that meets every SLO runs in full.
  FleetEvaluation simulate(const Context& ctx, int64_t num_instances,
                           bool stop_at_certain_miss = false) {
    fleet.num_replicas = num_instances * deployment.num_replicas;
    ++row.num_simulations;
    const auto run = [&] {
      sim::SimOptions options = ctx.sim_options();
      if (stop_at_certain_miss) {
        sim::P99Bounds bounds;
        for (const sim::Slo& slo : ctx.class_slos) {
          bounds.ttft_s.push_back(slo.ttft_s);
          bounds.tpot_s.push_back(slo.tpot_s);
        }
        options.stop_at_certain_p99_miss = std::move(bounds);
      }
      return evaluate(ctx,
                      sim::simulate(ctx.workload, fleet, *predictor, ctx.scenario.seed, options));
    };
    if (ctx.simulations == nullptr) return run();
    return ctx.simulations->get_or_run(
        simulation_key(deployment, efficiency, choice.weight_format, fleet, fleet.num_replicas,
                       stop_at_certain_miss),
        run);
  }

  /// Copies the per-class metrics of `e` into the row (scenarios with classes).
  void keep_class_metrics(const FleetEvaluation& e) {
    for (size_t c = 0; c < row.classes.size() && c < e.classes.size(); ++c) {
      row.classes[c].metrics = e.classes[c];
    }
  }
};

/// Deploys the model on `instance` with `tp_degree` (0: the automatic rule) and `serving`
/// limits: identity, deployment, predictor, KV blocks and floors. infeasible_reason is set
/// only when the model cannot be placed (model::InfeasibleError).
Candidate make_candidate(const Context& ctx, const model::InstanceType& instance, int tp_degree,
                         const sim::ServingConfig& serving, model::WeightFormat weight_format);

/// The search's checks before any simulation (plan()'s floors); sets c.row.infeasible_reason
/// when one fails.
void check_floors(const Context& ctx, Candidate& c);

/// What a fleet that fails meets_class_slos misses (messages).
std::string slo_miss_text(const Context& ctx, const FleetEvaluation& e);

/// Cost figures of a fleet costing usd_per_hour. The output tokens per hour are the offered
/// load's (requests / arrival span x mean output tokens of `summary`) for an open loop, as
/// compute_tco counts them (one per-token cost per row), else the simulated throughput of
/// `metrics` (a closed loop).
void fill_cost(PlanRow& row, double usd_per_hour, const sim::Metrics& metrics,
               const WorkloadSummary& summary, double hours_per_year);

/// The fleet-size search of a prepared candidate (SizeSearch documents the order).
PlanRow search_size_of(const Context& ctx, Candidate c, const SizeSearch& search);

/// Deploys and checks the floors of one configuration.
Candidate prepare_candidate(const Context& ctx, const model::InstanceType& instance,
                            const ServingChoice& choice);

/// The degree the scenario fixes for `instance_id`: 0 (automatic) unless kPerType names it.
int chosen_tp(const Scenario& sc, const std::string& instance_id);

/// One candidate's row (plan()'s search per type; PlanOptions::warm_start_sizes as
/// `start_sizes`).
/// The order to search n instance types in on num_threads threads so that the threads finish
/// together (plan() and run_search use it): the longest search first, estimated by the
/// replicas of the type's lower-bound fleet (fleet_lower_bound of prepare(i), plan/search.h:
/// a simulation costs in steps, and at a given load the steps grow with the replicas; 0 for a
/// type that does not deploy or whose floors rule it out, which runs no simulation). Types
/// whose first probe has one simulation key (alike types, plan/sim_cache.h) share their
/// simulations: the first of each key comes in that order, the others after every first, so
/// that no thread waits for a simulation another is running. Only the order of work changes,
/// never a row. Index order (prepare not called) with one thread.
std::vector<size_t> longest_first(size_t n, int num_threads, const sim::Workload& workload,
                                  const std::vector<sim::Slo>& class_slos,
                                  const std::function<PreparedType(size_t)>& prepare);

PlanRow plan_one(const Context& ctx, const model::InstanceType& instance,
                 const std::map<std::string, int64_t>& start_sizes);

/// Refuses, before any simulation, a degree the scenario fixes that its instance type cannot
/// run, and unknown instance ids there (InputError).
void check_fixed_tp(const Scenario& sc, const model::Catalog& catalog,
                    const model::ModelSpec& model);

/// Refuses, before any simulation, an "engine" id the catalog does not have (listing the known
/// ones) or one of the other device kind: `<file>: field "engine.gpu": unknown engine "x";
/// known: ...` / `... "vllm-cpu" is an engine for cpu, not gpu`.
void check_engines(const Scenario& sc, const model::Catalog& catalog);

/// The scenario's fleet made ready: one candidate per group, and the simulator's groups.
struct GivenFleet {
  std::vector<Candidate> groups;  ///< parallel to Scenario::fleet->groups
  sim::FleetConfig fleet;
  PlanRow row;  ///< identity, cost and floors; infeasible_reason when a group cannot deploy
};

/// The scenario's given fleet deployed (no simulation).
GivenFleet prepare_fleet(const Context& ctx);

/// Simulates the scenario's given fleet once and fills its row.
PlanRow plan_given_fleet(const Context& ctx);

}  // namespace llmcap::plan::detail
