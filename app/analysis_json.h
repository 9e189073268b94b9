// The "analysis" object of the run document (docs/run-document.md) from plan::analyse.
#pragma once

#include <nlohmann/json.hpp>

#include "plan/analysis.h"

namespace llmcap::app {

/// The keys "search", "pareto", "cost_vs_load", "latency_cdf", "sensitivity", "uncertainty"
/// and "recommendation" of the run document's "analysis" (docs/run-document.md), plus
/// "rows_analysed" and "num_simulations". ("fleet_over_day" is the TCO's.) Keys whose list is
/// empty are left out.
nlohmann::json analysis_to_json(const plan::Analysis& analysis);

}  // namespace llmcap::app
