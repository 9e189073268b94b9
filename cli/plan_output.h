// The text form of a plan run (`llmcap plan`): the comparison table and the summary after it.
// Its JSON and CSV forms are app/plan_output.h.
#pragma once

#include <ostream>
#include <string>

#include "plan/answer.h"
#include "plan/planner.h"
#include "plan/scenario.h"

namespace llmcap::app {
struct PlanRun;
}

namespace llmcap::cli {

/// Human-readable comparison table (feasible rows cheapest first, then infeasible ones with
/// their reasons), then a mark for each row priced at other than on-demand. For a scenario
/// with client classes the header lists each class (source, arrival process, requests, SLO)
/// and each feasible row is followed by one line per class: its p99 TTFT and p99 TPOT beside
/// its own bounds, SLO attainment and goodput (docs/metrics.md).
void print_plan_table(const plan::Scenario& scenario, const plan::PlanResult& result,
                      std::ostream& out);

/// The answer card (plan/answer.h) as the first lines of `llmcap plan`: the recommended fleet,
/// its configuration, cost under the scenario's price model and currency, range, binding
/// constraint, runner-up, the other device kind and the "why not" lines.
void print_answer(const plan::Answer& answer, std::ostream& out);

/// `v` with `decimals` digits after the point, e.g. (5.576, 2) -> "5.58".
std::string fixed_decimals(double v, int decimals);

/// `v` rounded to a whole number with thousands separators, e.g. 1234567 -> "1,234,567",
/// -1234 -> "-1,234".
std::string grouped_thousands(double v);

/// After the plan table: each feasible row's TCO (cheapest first: price model, instances
/// billed, USD per hour, per year, per million input and output tokens, per thousand
/// requests, the converted currency, owned alternatives, notes), then the analyses'
/// uncertainty ranges, sustainable rates and recommendation when they ran.
void print_run_summary(const app::PlanRun& run, std::ostream& out);

}  // namespace llmcap::cli
