// The answer of a plan run (issue 30, item 1): the one recommendation every front end shows
// first (the CLI at the top, the GUI's answer card, the report's first page, the plan's --json
// "answer"). Computed once per run from the plan, its analyses and its TCO, so the figures agree
// to the cent wherever they appear. Definitions: docs/metrics.md ("Answer").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "plan/analysis.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "plan/tco.h"

namespace llmcap::plan {

/// One priced fleet the answer names: the recommendation, the runner-up, the cheapest of the
/// other device kind. Money is in Answer::currency under Answer::price_model.
struct AnswerOption {
  std::string instance_type;  ///< catalog id
  std::string device_kind;    ///< "cpu" | "gpu"
  std::string hardware_name;  ///< e.g. "1 x NVIDIA L40S"
  int64_t num_instances = 0;  ///< planned (serving) instances
  int64_t num_instances_billed = 0;
  std::string configuration;  ///< PlanRow::configuration
  bool from_search = false;   ///< the configuration search's best for this type
  std::string price_model;    ///< the offer it is costed at (TcoRow::price_model)
  double cost_per_hour = 0;   ///< fleet, per hour in service
  double cost_per_year = 0;
  double cost_per_million_output_tokens = 0;
};

struct Answer {
  /// Whether any fleet meets the SLO. When false only `headline`, `why_not`, price_model and
  /// currency are filled.
  bool feasible = false;
  AnswerOption recommended;
  std::string price_model;    ///< the scenario's tco.price_model, "catalog" when it named none
  std::string currency;       ///< "USD" or the scenario's tco.currency
  double cost_per_month = 0;  ///< cost_per_year / 12
  /// The 95% (UncertaintySpec::confidence) range of the cost per hour: the uncertainty
  /// analysis of the recommended type and configuration, its USD range scaled by the
  /// recommendation's cost per hour over the analysed USD per hour (so it is under the same
  /// price model and currency). has_range false when no analysis ran for that fleet.
  bool has_range = false;
  double cost_per_hour_low = 0;
  double cost_per_hour_high = 0;  ///< 0 when the high step-time case meets no SLO
  double confidence = 0.95;
  std::string dominant_assumption;  ///< "step_time" | "price" | "none" ("" without range)
  /// What holds the fleet at its size: "tpot" or "ttft" (the p99 nearest its bound),
  /// "kv_capacity" (the chosen fleet preempted requests for want of KV cache blocks), or
  /// "none" (one instance, already the smallest fleet, with margin on both bounds).
  std::string binding_constraint;
  /// 1 - p99 / bound of the binding metric (tpot or ttft; for kv_capacity and none: of the
  /// latency metric nearest its bound), e.g. 0.22 = 22% headroom.
  double binding_margin = 0;
  std::string binding_text;               ///< one sentence
  std::optional<AnswerOption> runner_up;  ///< the next cheapest type (another instance type)
  /// The other device kind than the recommendation's, only when the plan had candidates of it.
  bool other_kind_candidate = false;
  std::string other_kind;                           ///< "cpu" | "gpu" ("" when not a candidate)
  std::optional<AnswerOption> other_kind_cheapest;  ///< its cheapest feasible fleet
  double other_kind_cost_ratio = 0;                 ///< its cost per hour / the recommendation's
  std::string other_kind_text;  ///< one sentence (also when none of that kind is feasible)
  /// One line each for the next few types after the runner-up: a feasible one's cost and
  /// ratio, an infeasible one's reason (cheapest instance price first).
  std::vector<std::string> why_not;
  std::string headline;  ///< one line: "2 x aws-g6e.xlarge (...) at USD 3.72/hour ..."
};

/// The answer of a plan run. `tco` is parallel to result.rows (TcoRow of a feasible row;
/// default for an infeasible row). With `analysis` and a configuration search, `search_tco`
/// is parallel to analysis->search_best and the options are those rows (each type's best
/// configuration); otherwise they are the plan's feasible rows of one instance type (a given
/// fleet: its one row). Options are ranked by TcoRow::annual_usd (the scenario's price model),
/// ties by instance type. Deterministic; throws nothing for consistent inputs.
Answer make_answer(const Scenario& scenario, const PlanResult& result, const Analysis* analysis,
                   const std::vector<TcoRow>& tco, const std::vector<TcoRow>& search_tco);

}  // namespace llmcap::plan
