// The analyses of a plan (issue 5, items 1 and 2, and the report's charts): cost against load,
// latency CDFs, sensitivity, uncertainty ranges, the configuration search and its Pareto
// frontier, the maximum sustainable rate per instance, and a one-paragraph recommendation.
// Method: docs/search.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/hardware.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "plan/search.h"

namespace llmcap::plan {

/// The scenario at `load_multiplier` (> 0; InputError otherwise) times its load: a trace's
/// rate_multiplier, an arrival process's rate_per_s, a closed loop's num_users (rounded, at
/// least 1), and each client class's own source likewise. The rest is unchanged.
Scenario with_load_multiplier(const Scenario& scenario, double load_multiplier);

/// The step-time error a validation against published measurements measured for one device
/// kind and engine (app::published_step_time_errors): the nearest-rank p95 of |predicted /
/// published - 1| over its held-out rows, and one line saying so.
struct MeasuredStepTimeError {
  double p95_abs_error = 0;
  int64_t rows = 0;
  std::string source;
};
/// By (device kind "cpu" | "gpu", engine id).
using MeasuredStepTimeErrors = std::map<std::pair<std::string, std::string>, MeasuredStepTimeError>;

struct AnalysisOptions {
  /// Threads, calibration profile (not owned); observer and step_time_scale are ignored.
  PlanOptions plan;
  /// Load multipliers of the cost-against-load points (1 is the plan itself).
  std::vector<double> load_multipliers = {0.5, 1.0, 1.5, 2.0};
  double price_change = 0.2;  ///< sensitivity: prices x (1 -/+ this), arithmetic
  /// sensitivity: load x (1 -/+ this), replanned; the default 0.5 reuses the cost-against-
  /// load points at 0.5 and 1.5 (no extra simulation)
  double load_change = 0.5;
  double slo_change = 0.2;   ///< sensitivity: both SLO bounds x (1 -/+ this), replanned
  int num_cdf_points = 100;  ///< latency CDF: points at fractions k / n (plus 0.995, 0.999)
  /// Run the scenario's "search" (when present) and the maximum sustainable rate per instance.
  bool search = true;
  bool max_rate = true;
  /// The rate bisection stops when hi / lo <= 1 + this (max_sustainable_rate).
  double max_rate_tolerance = 0.05;
  /// Measured step-time errors by device kind and engine (not owned; null: none): the
  /// uncertainty of a row priced with an engine uses its entry (step_time_error).
  const MeasuredStepTimeErrors* measured_errors = nullptr;
};

struct LoadPoint {
  double load_multiplier = 0;
  bool feasible = false;
  int64_t num_instances = 0;
  double usd_per_hour = 0;
};
struct CostVsLoad {
  std::string instance_type;
  std::vector<LoadPoint> points;  ///< in AnalysisOptions::load_multipliers order
};

struct CdfPoint {
  double latency_s = 0;
  double fraction = 0;  ///< of requests with latency <= latency_s (nearest rank)
};
struct LatencyCdf {
  std::string instance_type;
  int64_t num_instances = 0;
  std::string metric;  ///< "ttft" | "tpot"
  std::vector<CdfPoint> points;
};

struct SensitivityRow {
  std::string parameter;  ///< "price" | "load" | "slo"
  std::string change;     ///< e.g. "-20%", "+20%" ("slo": "-20%" is tighter bounds)
  double factor = 1;      ///< the multiplier applied
  std::string instance_type;
  bool feasible = false;
  int64_t num_instances = 0;
  double usd_per_hour = 0;
  double relative_change_usd_per_hour = 0;  ///< against the plan's row; 0 when infeasible
};

struct UncertaintyRow {
  std::string instance_type;
  double confidence = 0.95;
  int64_t num_instances = 0;            ///< as planned
  int64_t num_instances_low = 0;        ///< replanned with step times x (1 - e)
  int64_t num_instances_high = 0;       ///< replanned with step times x (1 + e); 0 if infeasible
  bool feasible_high = true;            ///< whether a fleet meets the SLO at 1 + e
  double usd_per_hour = 0;              ///< as planned
  double usd_per_hour_low = 0;          ///< low size x price x (1 - p)
  double usd_per_hour_high = 0;         ///< high size x price x (1 + p); 0 if infeasible
  double step_time_error_fraction = 0;  ///< e
  std::string step_time_error_source;   ///< where e came from
  double price_error_fraction = 0;      ///< p
  /// "step_time" or "price" (the one whose error widens the cost range more; "none" when both
  /// are 0), and a sentence naming it with its share.
  std::string dominant_assumption;
  std::string text;  ///< e.g. "6 to 7 instances, USD 20.1 to 25.3 per hour (95%)"
};

/// One instance type's search summary.
struct SearchRow {
  std::string instance_type;
  int64_t configs_tried = 0;
  int64_t configs_pruned = 0;
  std::string best_config;  ///< PlanRow::configuration of the best, "" when none is feasible
  bool feasible = false;
  int64_t num_instances = 0;
  double usd_per_hour = 0;
  double max_load_multiplier_per_instance = 0;  ///< 0 when not computed
  double max_requests_per_s_per_instance = 0;
};

struct ParetoRow {
  std::string instance_type;
  std::string config;
  int64_t num_instances = 0;
  double usd_per_hour = 0;
  double ttft_p99_s = 0;
  double tpot_p99_s = 0;
};

struct Analysis {
  /// Instance types analysed in depth: the cheapest feasible CPU fleet and GPU fleet, each
  /// the configuration search's winner for that device kind when a search ran and found one
  /// cheaper than the plan's row (the analysis then describes that configuration).
  std::vector<std::string> rows_analysed;
  /// With "search": the best configuration's row of every type with a feasible one
  /// (PlanRow::configuration names it), in candidate order; empty without a search.
  std::vector<PlanRow> search_best;
  /// With "search": the configuration of each search_best row, by instance type id (what a
  /// later what-if plans each type with: WhatIfOptions::choices).
  std::map<std::string, ServingChoice> search_choices;
  /// With "search": every candidate; without: the analysed rows (their scenario
  /// configuration, with the maximum sustainable rate per instance).
  std::vector<SearchRow> search;
  /// Pareto frontier over the searched configurations' cheapest fleets (with "search"), or
  /// over the plan's feasible rows (without); docs/search.md defines it.
  std::vector<ParetoRow> pareto;
  std::vector<CostVsLoad> cost_vs_load;
  std::vector<LatencyCdf> latency_cdf;
  std::vector<SensitivityRow> sensitivity;
  std::vector<UncertaintyRow> uncertainty;
  std::string recommendation;   ///< one paragraph
  int64_t num_simulations = 0;  ///< run by the analysis (not the plan)
};

/// The analyses of `result` (plan(scenario, catalog) with options.plan's calibration). Replans
/// only the analysed rows, each fleet-size search starting from the planned size scaled, on
/// options.plan.num_threads threads. A given fleet (Scenario::fleet) gets the price
/// sensitivity and the recommendation only. Deterministic. Throws what plan() throws.
Analysis analyse(const Scenario& scenario, const model::Catalog& catalog, const PlanResult& result,
                 const AnalysisOptions& options = {});

/// The step-time error fraction the uncertainty analysis uses for `row` at `spec.confidence`,
/// and its source (docs/search.md, "Uncertainty").
struct StepTimeError {
  double fraction = 0;
  std::string source;
};
/// In order: the scenario's uncertainty.step_time_error_fraction; for a calibrated CPU row the
/// profile's fit p95 error; for a row priced with an engine that `measured` has an entry for
/// (its device kind and PlanRow::engine), that measured p95 error; else the datasheet
/// roofline's assumed error. The last three are 95% figures scaled to spec.confidence (normal
/// quantiles) and capped at 0.9.
StepTimeError step_time_error(const UncertaintySpec& spec, const PlanRow& row,
                              const model::CalibrationProfile* calibration,
                              const MeasuredStepTimeErrors* measured = nullptr);

}  // namespace llmcap::plan
