// A plan run as one JSON document (docs/run-document.md): the plan, its TCO and its analyses.
// This is what `llmcap plan` stores in the results database, what `llmcap sweep` stores per
// point, and what `llmcap report` renders.
#pragma once

#include <nlohmann/json.hpp>

#include "model/calibration.h"
#include "model/hardware.h"
#include "plan/planner.h"
#include "plan/scenario.h"

namespace llmcap::cli {

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
  nlohmann::json document;  ///< docs/run-document.md
};

/// Plans `scenario` on `catalog` and builds the run document. Throws what plan::plan throws.
PlanRun make_plan_run(const plan::Scenario& scenario, const model::Catalog& catalog,
                      const PlanRunOptions& options);

}  // namespace llmcap::cli
