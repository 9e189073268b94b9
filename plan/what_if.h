// What-if planning: the planner re-run after a small change (load, SLO, prices, a format),
// each type's fleet-size search warm-started from the previous answer. The GUI's sliders run
// it (gui/plan_worker.h); `llmcap plan --warm-start` uses the same warm start through
// PlanOptions::warm_start_sizes. docs/gui.md, "Warm starts".
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/hardware.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "plan/tco.h"

namespace llmcap::plan {

/// What a what-if answer was computed under, as far as whether a fleet meets the SLO goes.
struct VerdictBasis {
  /// Everything but load, SLO and prices that decides a verdict, as text (the GUI's
  /// ScenarioDraft::verdict_context()); two bases compare equal on it.
  std::string context;
  const void* calibration = nullptr;  ///< the calibration profile used (identity), or null
  double load_multiplier = 1.0;
  double ttft_p99_s = 0;  ///< the scenario's single SLO, seconds (0 with client classes)
  double tpot_p99_s = 0;  ///< likewise
};

/// Whether every fleet size that failed the SLO under `previous` fails under `current` too.
/// True when the scenario is the same apart from load, SLO and prices (equal contexts, the
/// same calibration), the load is at least as high and neither SLO bound is looser. This
/// assumes that meeting the SLO is monotone in load and in the bounds, as the fleet-size search
/// already assumes it is in fleet size (docs/gui.md, "Warm starts").
bool failures_carry_over(const VerdictBasis& previous, const VerdictBasis& current);

/// A previous answer to start from.
struct WarmStart {
  /// Fleet size per feasible instance type id (instances).
  std::map<std::string, int64_t> sizes;
  /// Whole-fleet USD per hour per feasible type id: types are searched cheapest first.
  std::map<std::string, double> usd_per_hour;
  double load_multiplier = 1.0;  ///< the load `sizes` were computed at (> 0; else 1 is used)
  /// What `sizes` were computed under; unset: unknown (no failure carries over).
  std::optional<VerdictBasis> basis;
};

/// Options of plan_what_if.
struct WhatIfOptions {
  /// num_threads (0: hardware concurrency), calibration (not owned) and cancel are used;
  /// observer and warm_start_sizes are not (on_row and warm_start replace them), and
  /// record_itl is false on the what-if path (its rows have no ITL).
  PlanOptions plan;
  WarmStart warm_start;          ///< empty sizes: a cold search from each type's lower bound
  VerdictBasis basis;            ///< this run's
  double load_multiplier = 1.0;  ///< this run's load, in the units of warm_start.load_multiplier
  /// The configuration to plan each instance type (by id) with instead of the scenario's own
  /// (PlanSession::default_choice): a full run's search winners (Analysis::search_choices),
  /// so that a what-if keeps the configurations the search chose. A type missing: its own.
  /// Used on the per-type path only.
  std::map<std::string, ServingChoice> choices;
  /// Called once per finished instance type, serialised (never two calls at once), from the
  /// planning threads, with the row, its TCO (null for an infeasible row, and on the path
  /// that plans as a whole, see plan_what_if), how many rows are done and how many there are.
  /// Not called once options.plan.cancel returned true (what-if path). May be empty.
  std::function<void(const PlanRow& row, const TcoRow* tco, size_t num_done, size_t num_total)>
      on_row;
  /// When set, one line per searched type ("<id>: start S, lower bound L -> N instances,
  /// K simulations, T s"), from the planning threads, for tracing the warm start.
  std::function<void(const std::string& line)> trace;
};

/// The answer of a what-if run.
struct WhatIfResult {
  /// Stopped because options.plan.cancel returned true; rows and tco are then empty.
  bool cancelled = false;
  std::vector<PlanRow> rows;  ///< in candidate order (plan/candidates.h)
  /// One per row: the TCO of a feasible row (what-if path), nullopt otherwise.
  std::vector<std::optional<TcoRow>> tco;
  int64_t num_simulations = 0;  ///< over all rows
  WorkloadSummary workload;     ///< the planned workload (for plan::fleet_over_day)
};

/// Whether the warm-started per-type path applies to `scenario`: no given fleet and no
/// tensor-parallel search (those are planned by plan() as a whole).
bool what_if_applies(const Scenario& scenario);

/// Plans `scenario` after a change. When what_if_applies: every candidate type is deployed and
/// its floors checked first (rows ruled out are reported at once), then the ready types'
/// fleet sizes are searched, cheapest previous cost first on one thread and largest previous
/// fleet first on a second (up to options.plan.num_threads threads claim types from these two
/// orders; a thread claims a type with every type whose replicas deploy alike, as many to an
/// instance, and searches them one after the other), each search starting at the previous size
/// scaled by load_multiplier / warm_start.load_multiplier (rounded down) and stepping 1, 2,
/// 4, ... from it, with the proved lower bound of plan/search.h; when
/// failures_carry_over(warm_start.basis, basis), sizes below the previous size are known to fail
/// and are not simulated. Rows carry their TCO (compute_tco), but for types without the scenario's
/// price model (price_model_not_offered: no TCO). Otherwise plan() runs as a whole with
/// options.plan (rows without TCO). Fleet sizes equal plan()'s under the monotonicity plan()
/// assumes. Throws what plan(), resolve_tco (before any simulation) and compute_tco throw for bad
/// input; a cancelled run returns with `cancelled` set instead of throwing.
WhatIfResult plan_what_if(const Scenario& scenario, const model::Catalog& catalog,
                          const WhatIfOptions& options);

/// Reads the warm start of `llmcap plan --warm-start`: the "results" rows of a plan JSON
/// written by `llmcap plan --json` (docs/run-document.md). Each row with "feasible": true gives
/// its "instance_type" (string), "num_instances" (integer >= 1) and "usd_per_hour" (number
/// >= 0); other rows are skipped. load_multiplier is 1 and basis unset. Throws InputError:
/// `<file>: cannot open file`, `<file>: malformed JSON: ...`, `<file>: expected a plan JSON
/// object (llmcap plan --json), got ...`, `<file>: field "results": missing; ...` or
/// `<file>: field "results[i].<key>": expected ..., got ...` (field_path() set).
WarmStart read_warm_start(const std::filesystem::path& path);

}  // namespace llmcap::plan
