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

/// How the plan's text is laid out (cli/text_layout.h).
struct TextOptions {
  size_t width = 100;    ///< columns: the table fits them, prose is wrapped to them
  bool verbose = false;  ///< infeasible reasons whole, not cut to their first clause
};

/// Human-readable comparison table (feasible rows cheapest first, then infeasible ones with
/// their reasons), then a mark for each row priced at other than on-demand. The table fits
/// `options.width`: the hardware column takes what is left (cut with "…"), "USD/M out" is left
/// out when even that is too narrow, and each infeasible reason is cut to its first clause
/// (cli::first_clause) unless `options.verbose`. For a scenario
/// with client classes the header lists each class (source, arrival process, requests, SLO)
/// and each feasible row is followed by one line per class: its p99 TTFT and p99 TPOT beside
/// its own bounds, SLO attainment and goodput (docs/metrics.md).
void print_plan_table(const plan::Scenario& scenario, const plan::PlanResult& result,
                      std::ostream& out, const TextOptions& options = {});

/// The answer card (plan/answer.h) as the first lines of `llmcap plan`: the recommended fleet,
/// its configuration, cost under the scenario's price model and currency, range, binding
/// constraint, runner-up, the other device kind and the "why not" lines; each line wrapped to
/// `width` with its continuation lines under the text after the label.
void print_answer(const plan::Answer& answer, std::ostream& out, size_t width = 100);

/// A row's hardware name cut to its essentials for the table: vendor words ("NVIDIA", "AMD",
/// "Intel", "Platinum") and parenthesised notes dropped, "8 x " as "8x ", escaped
/// (base::printable). E.g. "8 x NVIDIA H100 SXM5 80GB" -> "8x H100 SXM5 80GB", "Intel Xeon
/// Platinum 8488C (AWS custom), 32 vCPU" -> "Xeon 8488C, 32 vCPU".
std::string hardware_essentials(const std::string& hardware_name);

/// A given fleet's hardware name ("2 x (1 x NVIDIA L40S) + 1 x (Intel Xeon 6975P-C (AWS
/// custom, Granite Rapids), 384 vCPU)") with each group's hardware cut to its essentials:
/// "2x (1x L40S) + 1x (Xeon 6975P-C, 384 vCPU)".
std::string fleet_hardware_essentials(const std::string& hardware_name);

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
