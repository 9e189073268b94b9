// A plan run as one JSON document (docs/run-document.md): the plan, its TCO and its analyses.
// This is what `llmcap plan` and the GUI store in the results database, what `llmcap sweep` stores
// per point, and what `llmcap report` renders.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "model/calibration.h"
#include "model/hardware.h"
#include "plan/analysis.h"
#include "plan/answer.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "plan/tco.h"

namespace llmcap::app {

/// Schema version of the run document; readers refuse other versions.
inline constexpr int kRunDocumentVersion = 1;

/// Options of make_plan_run.
struct PlanRunOptions {
  plan::PlanOptions plan;  ///< threads, observer, calibration profile (not owned)
  /// Run the analyses (cost against load, latency CDFs, sensitivity, uncertainty, fleet over
  /// the day). Off: "analysis" holds only what needs no extra simulation.
  bool analysis = true;
};

/// The plan result and its document.
struct PlanRun {
  plan::PlanResult result;
  std::optional<plan::Analysis> analysis;  ///< when PlanRunOptions::analysis
  /// One per result row (same order); default-constructed (num_instances 0) for infeasible
  /// rows and for types that do not offer the scenario's price model (tco_not_offered).
  /// The scenario's "tco" section applied (docs/tco.md).
  std::vector<plan::TcoRow> tco;
  /// With a configuration search: the TCO of each type's best configuration, parallel to
  /// analysis->search_best.
  std::vector<plan::TcoRow> search_tco;
  plan::Answer answer;      ///< what every front end shows first (plan/answer.h)
  nlohmann::json document;  ///< docs/run-document.md; its "answer" is `answer`
  /// Every type the scenario may cost that lacks its price model (plan::ResolvedTco).
  std::vector<plan::PriceModelNotOffered> tco_not_offered;
  std::string tco_price_model;  ///< the scenario's price model ("" when it names none)
};

/// Plans `scenario` on `catalog`, runs the analyses (options.analysis) and the TCO of every
/// feasible row, and builds the run document. Throws what plan::plan, plan::analyse and
/// plan::resolve_tco / compute_tco throw (InputError for bad TCO settings, before planning).
PlanRun make_plan_run(const plan::Scenario& scenario, const model::Catalog& catalog,
                      const PlanRunOptions& options);

}  // namespace llmcap::app
