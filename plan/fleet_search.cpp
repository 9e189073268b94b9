// The fleet-size search of one instance type: its floors, then sizes simulated until the
// smallest that meets every class's SLO is found (plan/planner.h, SizeSearch).
#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "base/text.h"
#include "plan/planner_detail.h"

namespace llmcap::plan::detail {

/// The search's checks before any simulation: the TPOT floor against every class's bound,
/// each class's p99 prompt against its own TTFT bound (without classes: the workload's p99
/// prompt against Scenario::slo), and the longest request against a replica's KV cache.
void check_floors(const Context& ctx, Candidate& c) {
  const Scenario& sc = ctx.scenario;
  PlanRow& row = c.row;
  for (size_t k = 0; k < ctx.class_slos.size(); ++k) {
    if (row.tpot_floor_s > ctx.class_slos[k].tpot_s) {
      row.infeasible_reason = "TPOT floor at batch 1 is " + format_s(row.tpot_floor_s) + " > SLO " +
                              format_s(ctx.class_slos[k].tpot_s) + ctx.of_class(k) + " (" +
                              c.deployment.rule + ")";
      return;
    }
  }
  for (size_t k = 0; k < ctx.class_slos.size(); ++k) {
    int64_t p = ctx.summary.p99_prompt_tokens;
    double floor_s = row.ttft_floor_s;
    if (ctx.has_classes()) {
      if (ctx.summary.classes[k].num_requests == 0) continue;  // nothing to serve
      p = ctx.summary.classes[k].p99_prompt_tokens;
      floor_s = prefill_floor_s(*c.predictor, p);
      row.classes[k].ttft_floor_s = floor_s;
    }
    if (floor_s > ctx.class_slos[k].ttft_s) {
      row.infeasible_reason = "TTFT floor for the p99 prompt" + ctx.of_class(k) + " (" +
                              std::to_string(std::max<int64_t>(p, 1)) +
                              " tokens, prefilled alone) is " + format_s(floor_s) + " > SLO " +
                              format_s(ctx.class_slos[k].ttft_s);
      return;
    }
  }
  const int64_t kv_bytes_per_token =
      c.deployment.expert_parallel
          ? ctx.model.kv_cache_bytes_per_token(sc.kv_format)
          : ctx.model.kv_cache_bytes_per_token_on_replica(sc.kv_format, c.deployment.tp_degree);
  const int64_t block = c.fleet.serving.block_size_tokens;
  const int64_t needed_blocks = (ctx.max_request_tokens + block - 1) / block;
  // With sliding-window layers, the units of the window-aware layout (sim::KvLayout).
  const int64_t needed_units = c.fleet.serving.kv_layout.units_for_blocks(needed_blocks);
  if (c.fleet.serving.num_kv_blocks < needed_units) {
    row.infeasible_reason =
        "the longest request (" + std::to_string(ctx.max_request_tokens) + " tokens) needs " +
        base::gb(static_cast<double>(needed_blocks * block * kv_bytes_per_token)) +
        " of KV cache, a replica has " + base::gb(static_cast<double>(c.deployment.kv_cache_bytes));
  }
}

/// What a fleet that fails meets_class_slos misses. Without classes: "p99 TTFT x s, p99 TPOT
/// y s". With classes: each class that misses its SLO, e.g. `class "chat": p99 TTFT 3.1 s
/// (SLO 2 s), p99 TPOT 0.04 s (SLO 0.05 s)`, joined by "; ", with its rejected requests.
std::string slo_miss_text(const Context& ctx, const FleetEvaluation& e) {
  if (!ctx.has_classes()) {
    return "p99 TTFT " + format_s(e.metrics.ttft.p99_s) + ", p99 TPOT " +
           format_s(e.metrics.tpot.p99_s);
  }
  std::string text;
  for (size_t k = 0; k < e.classes.size() && k < ctx.class_slos.size(); ++k) {
    const sim::Metrics& m = e.classes[k];
    const sim::Slo& slo = ctx.class_slos[k];
    if (m.num_rejected == 0 && m.ttft.p99_s <= slo.ttft_s && m.tpot.p99_s <= slo.tpot_s) continue;
    text += (text.empty() ? "" : "; ") + std::string("class \"") +
            ctx.scenario.workload.classes[k].name + "\": p99 TTFT " + format_s(m.ttft.p99_s) +
            " (SLO " + format_s(slo.ttft_s) + "), p99 TPOT " + format_s(m.tpot.p99_s) + " (SLO " +
            format_s(slo.tpot_s) + ")";
    if (m.num_rejected > 0) text += ", " + std::to_string(m.num_rejected) + " rejected";
  }
  if (text.empty()) {  // no class misses: nothing completed
    text = std::to_string(e.metrics.num_completed) + " of " +
           std::to_string(e.metrics.num_requests) + " requests completed";
  }
  return text;
}

void fill_cost(PlanRow& row, double usd_per_hour, const sim::Metrics& metrics,
               const WorkloadSummary& summary, double hours_per_year) {
  row.usd_per_hour = usd_per_hour;
  row.annual_usd = usd_per_hour * hours_per_year;
  const bool open_loop = summary.num_requests > 0 && summary.span_s > 0;
  const double tokens_per_hour = open_loop
                                     ? static_cast<double>(summary.num_requests) / summary.span_s *
                                           summary.mean_output_tokens * 3600.0
                                     : metrics.throughput_output_tokens_per_s * 3600.0;
  row.usd_per_million_output_tokens =
      tokens_per_hour > 0 ? usd_per_hour / tokens_per_hour * 1e6 : 0.0;
}

/// The fleet-size search of a prepared candidate (SizeSearch documents the order).
PlanRow search_size_of(const Context& ctx, Candidate c, const SizeSearch& search) {
  const Scenario& sc = ctx.scenario;
  if (!c.ready()) return std::move(c.row);
  PlanRow& row = c.row;
  const int64_t cap = search.cap > 0 ? std::min(search.cap, sc.max_instances) : sc.max_instances;
  const int64_t lower = std::max<int64_t>(search.lower_bound, 1);
  if (lower > cap) {
    row.infeasible_reason = "the fleet-size lower bound (" + std::to_string(lower) +
                            " instances) is above the largest size tried (" + std::to_string(cap) +
                            ")";
    return std::move(row);
  }
  const int64_t start = std::clamp<int64_t>(search.start > 0 ? search.start : lower, lower, cap);
  int64_t step = search.first_step > 0 ? search.first_step : start;
  // Bracket the answer: `failing` fails (or is below the bound), `passing` passes.
  int64_t failing = lower - 1;
  int64_t passing = 0;
  // Sizes below the cap stop as soon as they certainly miss the SLO; the cap runs in full, as
  // an infeasible row quotes its metrics.
  const auto stop_early = [cap](int64_t size) { return size < cap; };
  FleetEvaluation best = c.simulate(ctx, start, stop_early(start));
  if (meets_class_slos(best, ctx.class_slos)) {
    passing = start;
    while (passing - failing > 1) {  // walk down
      const int64_t probe = passing - step;
      if (probe <= failing) break;
      FleetEvaluation e = c.simulate(ctx, probe, stop_early(probe));
      if (!meets_class_slos(e, ctx.class_slos)) {
        failing = probe;
        break;
      }
      passing = probe;
      best = std::move(e);
      step *= 2;
    }
  } else {
    failing = start;
    FleetEvaluation last = std::move(best);
    int64_t last_size = start;
    while (true) {  // walk up
      if (failing >= cap) {
        // `last` is the cap's evaluation, which ran in full (stop_early(cap) is false).
        row.infeasible_reason =
            cap == sc.max_instances
                ? "SLO not met with " + std::to_string(last_size) +
                      " instances (the scenario's max_instances): " + slo_miss_text(ctx, last)
                : "SLO not met with " + std::to_string(last_size) +
                      " instances (the largest size tried: a larger fleet costs more than the "
                      "best found): " +
                      slo_miss_text(ctx, last);
        row.metrics = last.metrics;
        c.keep_class_metrics(last);
        return std::move(row);
      }
      const int64_t probe = std::min(failing + step, cap);
      FleetEvaluation e = c.simulate(ctx, probe, stop_early(probe));
      if (meets_class_slos(e, ctx.class_slos)) {
        passing = probe;
        best = std::move(e);
        break;
      }
      failing = probe;
      last = std::move(e);
      last_size = probe;
      step *= 2;
    }
  }
  while (passing - failing > 1) {
    const int64_t mid = failing + (passing - failing) / 2;
    FleetEvaluation m = c.simulate(ctx, mid, stop_early(mid));
    if (meets_class_slos(m, ctx.class_slos)) {
      passing = mid;
      best = std::move(m);
    } else {
      failing = mid;
    }
  }

  row.feasible = true;
  row.num_instances = passing;
  row.metrics = best.metrics;
  c.keep_class_metrics(best);
  fill_cost(row, static_cast<double>(passing) * c.instance->usd_per_hour, best.metrics, ctx.summary,
            sc.hours_per_year);
  return std::move(row);
}

/// Deploys and checks the floors of one configuration.
Candidate prepare_candidate(const Context& ctx, const model::InstanceType& instance,
                            const ServingChoice& choice) {
  Candidate c =
      make_candidate(ctx, instance, choice.tp_degree, choice.serving, choice.weight_format);
  if (c.ready()) check_floors(ctx, c);
  return c;
}

/// The fleet-size search for one instance type at one tensor-parallel degree (0: automatic).
PlanRow plan_one_tp(const Context& ctx, const model::InstanceType& instance, int tp_degree,
                    const SizeSearch& search = {}) {
  const Scenario& sc = ctx.scenario;
  ServingChoice choice{tp_degree, weight_format_for(sc, instance.kind),
                       serving_for(sc, instance, ctx.catalog)};
  return search_size_of(ctx, prepare_candidate(ctx, instance, choice), search);
}

/// The degree the scenario fixes for `instance`: 0 (automatic) unless kPerType names it.
int chosen_tp(const Scenario& sc, const std::string& instance_id) {
  if (sc.tensor_parallel.mode != TensorParallelSpec::Mode::kPerType) return 0;
  const auto it = sc.tensor_parallel.per_type.find(instance_id);
  return it == sc.tensor_parallel.per_type.end() ? 0 : it->second;
}

/// One candidate: its fixed degree, or (kSearch) every degree tp_options() lists, keeping the
/// cheapest feasible fleet (ties: the lower degree). A fixed degree's search starts at the
/// type's size in `start_sizes` when it has one (PlanOptions::warm_start_sizes).
PlanRow plan_one(const Context& ctx, const model::InstanceType& instance,
                 const std::map<std::string, int64_t>& start_sizes) {
  const Scenario& sc = ctx.scenario;
  if (sc.tensor_parallel.mode != TensorParallelSpec::Mode::kSearch) {
    SizeSearch search;
    const auto start = start_sizes.find(instance.id);
    if (start != start_sizes.end() && start->second > 0) {
      // The previous answer, then steps of 1, 2, 4, ... away from it.
      search.start = start->second;
      search.first_step = 1;
    }
    return plan_one_tp(ctx, instance, chosen_tp(sc, instance.id), search);
  }
  std::vector<PlanRow> rows;
  for (const int tp : tp_options(instance, ctx.catalog, ctx.model)) {
    rows.push_back(plan_one_tp(ctx, instance, tp));
  }
  size_t best = 0;
  int64_t num_simulations = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    num_simulations += rows[i].num_simulations;
    const bool better = rows[i].feasible &&
                        (!rows[best].feasible || rows[i].usd_per_hour < rows[best].usd_per_hour);
    if (better) best = i;
  }
  PlanRow row = rows[best];
  row.num_simulations = num_simulations;
  for (const PlanRow& r : rows) {
    TpOptionRow option;
    option.tp_degree = r.tp_degree;
    option.feasible = r.feasible;
    option.num_instances = r.num_instances;
    option.num_replicas_per_instance = r.num_replicas_per_instance;
    option.usd_per_hour = r.usd_per_hour;
    option.ttft_p99_s = r.metrics.ttft.p99_s;
    option.tpot_p99_s = r.metrics.tpot.p99_s;
    option.infeasible_reason = r.infeasible_reason;
    row.tp_options.push_back(std::move(option));
  }
  if (!row.feasible) {
    std::string reasons;
    for (const PlanRow& r : rows) {
      reasons += (reasons.empty() ? "" : "; ") + std::string("tp=") + std::to_string(r.tp_degree) +
                 ": " + r.infeasible_reason;
    }
    row.infeasible_reason = "no tensor-parallel degree meets the SLO: " + reasons;
  }
  return row;
}

}  // namespace llmcap::plan::detail
