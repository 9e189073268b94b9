#include "plan/answer.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>

#include "base/text.h"

namespace llmcap::plan {
namespace {

/// A priced fleet the answer may name.
struct Option {
  const PlanRow* row = nullptr;
  const TcoRow* tco = nullptr;
  bool from_search = false;
};

double cost_per_hour(const TcoRow& t) {
  return t.converted ? t.in_currency.per_hour : t.usd_per_hour;
}
double cost_per_year(const TcoRow& t) {
  return t.converted ? t.in_currency.per_year : t.annual_usd;
}

std::string kind_name(model::DeviceKind kind) {
  return kind == model::DeviceKind::kCpu ? "cpu" : "gpu";
}
std::string kind_title(const std::string& kind) { return kind == "cpu" ? "CPU" : "GPU"; }

AnswerOption to_option(const Option& o) {
  AnswerOption a;
  a.instance_type = o.row->instance_type;
  a.device_kind = row_kind_name(*o.row);
  a.hardware_name = o.row->hardware_name;
  a.num_instances = o.row->num_instances;
  a.num_instances_billed = o.tco->num_instances_billed;
  a.configuration = o.row->configuration;
  a.from_search = o.from_search;
  a.price_model = o.tco->price_model;
  a.cost_per_hour = cost_per_hour(*o.tco);
  a.cost_per_year = cost_per_year(*o.tco);
  a.cost_per_million_output_tokens = o.tco->converted ? o.tco->in_currency.per_million_output_tokens
                                                      : o.tco->usd_per_million_output_tokens;
  return a;
}

/// "2 x aws-g6e.xlarge at USD 3.72/hour".
std::string fleet_text(const AnswerOption& o, const std::string& currency) {
  return base::sized_fleet(o.num_instances, o.instance_type) + " at " +
         base::money(currency, o.cost_per_hour) + "/hour";
}

/// The ratio as "2.4 times" (2 significant digits below 10, whole numbers above).
std::string times(double ratio) {
  return (ratio < 9.95 ? base::fixed(ratio, 1) : base::grouped(ratio, 0)) + " times";
}

/// An infeasible reason without its parenthesised detail after the comparison, e.g. "TPOT
/// floor at batch 1 is 0.113 s > SLO 0.05 s (2 replicas, ...)" -> "... > SLO 0.05 s".
std::string short_reason(const std::string& reason) {
  const size_t gt = reason.find('>');
  if (gt != std::string::npos) {  // "p99 TPOT 0.12 s > SLO 0.1 s (...)": up to the detail
    const size_t cut = reason.find(" (", gt);
    std::string s = cut != std::string::npos ? reason.substr(0, cut) : reason;
    if (s.size() > 140) s = s.substr(0, 137) + "...";
    return base::printable(s);
  }
  // "model "m" on instance "i": weights need 16.06 GB, 15.46 GB usable: 16060522496 bytes
  // ...": the instance is named already; up to the first detail after the figures.
  std::string_view rest = reason;
  if (rest.starts_with("model \"")) {
    const size_t colon = rest.find("\": ");
    if (colon != std::string_view::npos) rest.remove_prefix(colon + 3);
  }
  size_t cut = std::string_view::npos;
  for (const char* mark : {": ", "; "}) cut = std::min(cut, rest.find(mark));
  std::string s(rest.substr(0, cut));
  if (s.size() > 140) s = s.substr(0, 137) + "...";
  return base::printable(s);
}

/// How near an infeasible row came: its batch-1 TPOT floor over the bound (infinite when no
/// floor was computed, e.g. the model does not fit).
double nearness(const PlanRow& r, const Scenario& scenario) {
  return r.tpot_floor_s > 0 && scenario.slo.tpot_s > 0 ? r.tpot_floor_s / scenario.slo.tpot_s
                                                       : std::numeric_limits<double>::infinity();
}

/// The binding constraint of the recommended row (Answer::binding_constraint).
void set_binding(Answer& a, const Scenario& scenario, const PlanRow& row) {
  // The p99 nearest its bound over the whole workload and each class against its own SLO.
  double ttft_ratio = row.metrics.ttft.p99_s / scenario.slo.ttft_s;
  double tpot_ratio = row.metrics.tpot.p99_s / scenario.slo.tpot_s;
  for (const ClassRow& c : row.classes) {
    if (c.slo.ttft_s > 0) ttft_ratio = std::max(ttft_ratio, c.metrics.ttft.p99_s / c.slo.ttft_s);
    if (c.slo.tpot_s > 0) tpot_ratio = std::max(tpot_ratio, c.metrics.tpot.p99_s / c.slo.tpot_s);
  }
  const bool tpot_nearer = tpot_ratio >= ttft_ratio;
  const double ratio = tpot_nearer ? tpot_ratio : ttft_ratio;
  a.binding_margin = 1 - ratio;
  const std::string metric = tpot_nearer ? "TPOT" : "TTFT";
  const std::string margin = base::fixed(100 * a.binding_margin, 0) + "% margin";
  const std::string p99 =
      "p99 " + metric + " " +
      base::fixed(1e3 * (tpot_nearer ? row.metrics.tpot.p99_s : row.metrics.ttft.p99_s), 1) +
      " ms against " +
      base::fixed(1e3 * (tpot_nearer ? scenario.slo.tpot_s : scenario.slo.ttft_s), 1) + " ms";
  if (row.metrics.num_preemptions > 0) {
    a.binding_constraint = "kv_capacity";
    a.binding_text =
        "KV cache capacity: " + base::plural(row.metrics.num_preemptions, "preemption") +
        " for want of KV blocks; " + p99 + " (" + margin + ")";
  } else if (row.num_instances == 1) {
    a.binding_constraint = "none";
    a.binding_text = "none, one instance suffices; " + p99 + " (" + margin + ")";
  } else {
    a.binding_constraint = tpot_nearer ? "tpot" : "ttft";
    a.binding_text = metric + ": " + p99 + " (" + margin + "), the smallest fleet meeting the SLO";
  }
}

/// The uncertainty range of the recommendation (Answer::has_range).
void set_range(Answer& a, const Analysis* analysis) {
  if (analysis == nullptr) return;
  for (const UncertaintyRow& u : analysis->uncertainty) {
    if (u.instance_type != a.recommended.instance_type ||
        u.num_instances != a.recommended.num_instances || u.usd_per_hour <= 0) {
      continue;
    }
    const double scale = a.recommended.cost_per_hour / u.usd_per_hour;
    a.has_range = true;
    a.confidence = u.confidence;
    a.cost_per_hour_low = u.usd_per_hour_low * scale;
    a.cost_per_hour_high = u.feasible_high ? u.usd_per_hour_high * scale : 0;
    a.dominant_assumption = u.dominant_assumption;
    return;
  }
}

/// The options ranked cheapest first under the scenario's price model.
std::vector<Option> ranked_options(const PlanResult& result, const Analysis* analysis,
                                   const std::vector<TcoRow>& tco,
                                   const std::vector<TcoRow>& search_tco) {
  std::vector<Option> options;
  if (analysis != nullptr && !analysis->search_best.empty() &&
      search_tco.size() == analysis->search_best.size()) {
    for (size_t i = 0; i < search_tco.size(); ++i) {
      if (search_tco[i].num_instances > 0) {
        options.push_back({&analysis->search_best[i], &search_tco[i], true});
      }
    }
  } else {
    for (size_t i = 0; i < result.rows.size() && i < tco.size(); ++i) {
      if (result.rows[i].feasible && tco[i].num_instances > 0) {
        options.push_back({&result.rows[i], &tco[i], false});
      }
    }
  }
  std::stable_sort(options.begin(), options.end(), [](const Option& x, const Option& y) {
    if (x.tco->annual_usd != y.tco->annual_usd) return x.tco->annual_usd < y.tco->annual_usd;
    return x.row->instance_type < y.row->instance_type;
  });
  return options;
}

std::string headline(const Answer& a) {
  const AnswerOption& r = a.recommended;
  std::string h = base::sized_fleet(r.num_instances, r.instance_type) + " (" + r.hardware_name +
                  ", " + r.configuration + ") at " + base::money(a.currency, r.cost_per_hour) +
                  "/hour " + r.price_model + ", " +
                  base::money(a.currency, a.cost_per_month, true) + "/month, " +
                  base::money(a.currency, r.cost_per_year, true) + "/year";
  if (a.has_range) {
    h += "; " + base::fixed(100 * a.confidence, 0) + "% range " +
         base::money(a.currency, a.cost_per_hour_low) + " to " +
         (a.cost_per_hour_high > 0 ? base::money(a.currency, a.cost_per_hour_high)
                                   : std::string("no fleet")) +
         "/hour";
  }
  return h;
}

}  // namespace

Answer make_answer(const Scenario& scenario, const PlanResult& result, const Analysis* analysis,
                   const std::vector<TcoRow>& tco, const std::vector<TcoRow>& search_tco) {
  Answer a;
  a.price_model = scenario.tco.price_model_given ? scenario.tco.price_model : "catalog";
  a.currency = scenario.tco.currency.empty() ? "USD" : scenario.tco.currency;
  const std::vector<Option> options = ranked_options(result, analysis, tco, search_tco);

  // Infeasible types, cheapest instance first: the "why not" lines' second half.
  std::vector<const PlanRow*> infeasible;
  for (const PlanRow& r : result.rows) {
    if (!r.feasible) infeasible.push_back(&r);
  }
  // Types that hold the model first (their floors were computed), each group cheapest
  // instance first: the near misses a buyer asks about before the types too small for it.
  std::stable_sort(infeasible.begin(), infeasible.end(), [](const PlanRow* x, const PlanRow* y) {
    const bool x_fits = x->tpot_floor_s > 0;
    const bool y_fits = y->tpot_floor_s > 0;
    if (x_fits != y_fits) return x_fits;
    return x->instance_usd_per_hour < y->instance_usd_per_hour;
  });
  const bool searched = !options.empty() && options.front().from_search;
  auto infeasible_of_search = [&](const PlanRow& r) {
    // With a search, a type is infeasible when no configuration of it was.
    if (!searched) return true;
    return std::none_of(options.begin(), options.end(),
                        [&](const Option& o) { return o.row->instance_type == r.instance_type; });
  };

  if (options.empty()) {
    a.feasible = false;
    a.headline = "No candidate fleet meets the SLO within max_instances (" +
                 std::to_string(scenario.max_instances) + "); each type's reason follows.";
    for (const PlanRow* r : infeasible) {
      if (a.why_not.size() >= 4) break;
      a.why_not.push_back(r->instance_type + ": " + short_reason(r->infeasible_reason));
    }
    return a;
  }
  a.feasible = true;
  const Option& best = options.front();
  a.recommended = to_option(best);
  a.cost_per_month = a.recommended.cost_per_year / 12;
  set_range(a, analysis);
  set_binding(a, scenario, *best.row);

  size_t next = 1;
  if (options.size() > 1) a.runner_up = to_option(options[next++]);

  // The other device kind, only when the plan had candidates of it.
  const model::DeviceKind other = best.row->device_kind == model::DeviceKind::kCpu
                                      ? model::DeviceKind::kGpu
                                      : model::DeviceKind::kCpu;
  a.other_kind_candidate =
      std::any_of(result.rows.begin(), result.rows.end(),
                  [&](const PlanRow& r) { return r.groups.empty() && r.device_kind == other; });
  if (a.other_kind_candidate) {
    a.other_kind = kind_name(other);
    const auto it = std::find_if(options.begin(), options.end(),
                                 [&](const Option& o) { return o.row->device_kind == other; });
    if (it != options.end()) {
      a.other_kind_cheapest = to_option(*it);
      a.other_kind_cost_ratio = a.other_kind_cheapest->cost_per_hour / a.recommended.cost_per_hour;
      a.other_kind_text = "The cheapest " + kind_title(a.other_kind) + " fleet, " +
                          fleet_text(*a.other_kind_cheapest, a.currency) + ", costs " +
                          times(a.other_kind_cost_ratio) + " as much.";
    } else {
      // The nearest miss: the smallest batch-1 TPOT floor against its bound.
      const PlanRow* nearest = nullptr;
      int64_t count = 0;
      for (const PlanRow* r : infeasible) {
        if (r->device_kind != other || !r->groups.empty()) continue;
        ++count;
        if (nearest == nullptr || nearness(*r, scenario) < nearness(*nearest, scenario)) {
          nearest = r;
        }
      }
      a.other_kind_text = "No " + kind_title(a.other_kind) + " instance type meets the SLO (" +
                          std::to_string(count) + " tried)" +
                          (nearest != nullptr ? "; the nearest, " + nearest->instance_type + ": " +
                                                    short_reason(nearest->infeasible_reason)
                                              : std::string()) +
                          ".";
    }
  }

  // Why not the next few: up to two more feasible types, then up to three infeasible ones.
  for (size_t i = next; i < options.size() && a.why_not.size() < 2; ++i) {
    const AnswerOption o = to_option(options[i]);
    if (a.other_kind_cheapest && o.instance_type == a.other_kind_cheapest->instance_type) continue;
    a.why_not.push_back(fleet_text(o, a.currency) + " (" +
                        times(o.cost_per_hour / a.recommended.cost_per_hour) + " as much)");
  }
  size_t infeasible_lines = 0;
  for (const PlanRow* r : infeasible) {
    if (infeasible_lines >= 3) break;
    if (!infeasible_of_search(*r)) continue;
    a.why_not.push_back(r->instance_type + ": " + short_reason(r->infeasible_reason));
    ++infeasible_lines;
  }
  a.headline = headline(a);
  return a;
}

}  // namespace llmcap::plan
