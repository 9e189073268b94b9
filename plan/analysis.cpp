#include "plan/analysis.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <numeric>
#include <thread>

#include "base/parallel_for.h"
#include "base/text.h"

namespace llmcap::plan {
namespace {

void scale_workload(WorkloadSpec& w, double m) {
  if (!w.classes.empty()) {
    for (ClientClassSpec& c : w.classes) scale_workload(c.workload, m);
    return;
  }
  switch (w.kind) {
    case WorkloadSpec::Kind::kTrace:
      w.rate_multiplier *= m;
      break;
    case WorkloadSpec::Kind::kArrivalProcess:
      w.rate_per_s *= m;
      break;
    case WorkloadSpec::Kind::kClosedLoop:
      w.num_users = std::max<int64_t>(
          1, static_cast<int64_t>(std::llround(static_cast<double>(w.num_users) * m)));
      break;
  }
}

Scenario with_slo_factor(const Scenario& scenario, double f) {
  Scenario s = scenario;
  s.slo.ttft_s *= f;
  s.slo.tpot_s *= f;
  for (ClientClassSpec& c : s.workload.classes) {
    c.slo.ttft_s *= f;
    c.slo.tpot_s *= f;
  }
  return s;
}

/// z with P(|N(0,1)| <= z) = confidence, by bisection on erf.
double two_sided_z(double confidence) {
  double lo = 0;
  double hi = 10;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (std::erf(mid / std::sqrt(2.0)) < confidence ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%%", fraction * 100);
  return buf;
}

std::string signed_percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.3g%%", fraction * 100);
  return buf;
}

std::string usd(double v) { return base::money("USD", v); }  // "USD 32,604.72"

std::string num(double v) { return base::significant(v, 3); }  // never "3.6e+03"

using base::plural;

/// The serving configuration a planned row used.
ServingChoice row_choice(const PlanSession& session, const PlanRow& row) {
  ServingChoice c = session.default_choice(row.instance_type);
  if (session.scenario().tensor_parallel.mode == TensorParallelSpec::Mode::kSearch) {
    c.tp_degree = static_cast<int>(row.tp_degree);
  }
  return c;
}

/// One replanned variant of the scenario: a load multiplier, an SLO factor or a step-time
/// scale, applied to some of the analysed rows.
struct Variant {
  enum class Kind { kLoad, kSlo, kStepTime } kind = Kind::kLoad;
  double factor = 1;
  std::vector<size_t> rows;      ///< indices into the analysed rows
  std::vector<PlanRow> results;  ///< parallel to rows
};

std::vector<CdfPoint> cdf_of(std::vector<double> values, int num_points) {
  std::vector<CdfPoint> out;
  if (values.empty()) return out;
  std::sort(values.begin(), values.end());
  const auto n = static_cast<double>(values.size());
  std::vector<double> fractions;
  const int k = std::max(num_points, 1);
  for (int i = 1; i <= k; ++i) fractions.push_back(static_cast<double>(i) / k);
  for (const double extra : {0.995, 0.999}) {
    if (std::find(fractions.begin(), fractions.end(), extra) == fractions.end()) {
      fractions.push_back(extra);
    }
  }
  std::sort(fractions.begin(), fractions.end());
  for (const double f : fractions) {
    const auto rank = static_cast<size_t>(std::max(1.0, std::ceil(f * n - 1e-9)));
    out.push_back({values[std::min(rank, values.size()) - 1], f});
  }
  return out;
}

}  // namespace

Scenario with_load_multiplier(const Scenario& scenario, double load_multiplier) {
  if (!(load_multiplier > 0) || !std::isfinite(load_multiplier)) {
    throw InputError(scenario.file.string() + ": load multiplier " +
                     std::to_string(load_multiplier) + ": expected a positive number");
  }
  Scenario s = scenario;
  scale_workload(s.workload, load_multiplier);
  return s;
}

StepTimeError step_time_error(const UncertaintySpec& spec, const PlanRow& row,
                              const model::CalibrationProfile* calibration,
                              const MeasuredStepTimeErrors* measured) {
  StepTimeError e;
  const double scale = two_sided_z(spec.confidence) / two_sided_z(0.95);
  if (spec.step_time_error_fraction) {
    e.fraction = *spec.step_time_error_fraction;
    e.source = "the scenario's uncertainty.step_time_error_fraction (" + percent(e.fraction) + ")";
    return e;
  }
  const bool calibrated = calibration != nullptr && row.device_kind == model::DeviceKind::kCpu &&
                          row.predictor_kind == model::PredictorKind::kCalibrated;
  if (calibrated) {
    const double p95 = calibration->fit.p95_rel_error;
    e.fraction = std::min(0.9, p95 * scale);
    e.source = "the calibration profile's fit p95 relative error (" + percent(p95) + ")" +
               (spec.confidence == 0.95 ? "" : ", scaled to " + percent(spec.confidence));
    return e;
  }
  if (measured != nullptr && !row.engine.empty()) {
    const auto it = measured->find({std::string(model::to_string(row.device_kind)), row.engine});
    if (it != measured->end()) {
      e.fraction = std::min(0.9, it->second.p95_abs_error * scale);
      e.source = it->second.source +
                 (spec.confidence == 0.95 ? "" : ", scaled to " + percent(spec.confidence));
      return e;
    }
  }
  e.fraction = std::min(0.9, kDatasheetStepTimeErrorFraction * scale);
  e.source = "the datasheet roofline's assumed error (" + percent(kDatasheetStepTimeErrorFraction) +
             " at 95%, from the H200 probe in docs/model.md)" +
             (spec.confidence == 0.95 ? "" : ", scaled to " + percent(spec.confidence));
  return e;
}

namespace {

/// The rows analysed in depth: the cheapest feasible CPU row and GPU row, the overall cheapest
/// first (the recommendation).
std::vector<const PlanRow*> rows_to_analyse(const PlanResult& result) {
  std::vector<const PlanRow*> rows;
  for (const model::DeviceKind kind : {model::DeviceKind::kCpu, model::DeviceKind::kGpu}) {
    const PlanRow* best = nullptr;
    for (const PlanRow& r : result.rows) {
      if (!r.feasible || r.device_kind != kind || !r.groups.empty()) continue;
      if (best == nullptr || r.usd_per_hour < best->usd_per_hour) best = &r;
    }
    if (best != nullptr) rows.push_back(best);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const PlanRow* x, const PlanRow* y) {
    return x->usd_per_hour < y->usd_per_hour;
  });
  return rows;
}

/// Replaces each device kind's analysed row by the search's cheapest feasible configuration of
/// that kind (rows of `best`, TypeSearchResult::best_row in candidate order) when it is
/// cheaper, or when the plan had no feasible row of that kind; then sorts cheapest first.
void substitute_search_winners(const SearchResult& search, const std::vector<PlanRow>& best,
                               std::vector<const PlanRow*>& rows,
                               std::vector<ServingChoice>& choices) {
  for (const model::DeviceKind kind : {model::DeviceKind::kCpu, model::DeviceKind::kGpu}) {
    const PlanRow* winner = nullptr;
    const ServingChoice* winner_choice = nullptr;
    size_t k = 0;
    for (const TypeSearchResult& t : search.types) {
      if (t.best < 0) continue;
      const PlanRow& r = best[k++];
      if (r.device_kind != kind) continue;
      if (winner == nullptr || r.usd_per_hour < winner->usd_per_hour) {
        winner = &r;
        winner_choice = &t.configs[static_cast<size_t>(t.best)].choice;
      }
    }
    if (winner == nullptr) continue;
    auto it = std::find_if(rows.begin(), rows.end(),
                           [&](const PlanRow* r) { return r->device_kind == kind; });
    if (it == rows.end()) {
      rows.push_back(winner);
      choices.push_back(*winner_choice);
    } else if (winner->usd_per_hour < (*it)->usd_per_hour) {
      choices[static_cast<size_t>(it - rows.begin())] = *winner_choice;
      *it = winner;
    }
  }
  std::vector<size_t> order(rows.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    return rows[x]->usd_per_hour < rows[y]->usd_per_hour;
  });
  std::vector<const PlanRow*> sorted_rows;
  std::vector<ServingChoice> sorted_choices;
  for (const size_t i : order) {
    sorted_rows.push_back(rows[i]);
    sorted_choices.push_back(choices[i]);
  }
  rows = std::move(sorted_rows);
  choices = std::move(sorted_choices);
}

/// Price sensitivity: arithmetic on a feasible row's fleet.
void add_price_rows(Analysis& a, const PlanRow& row, double price_change) {
  for (const double sign : {-1.0, 1.0}) {
    SensitivityRow s;
    s.parameter = "price";
    s.factor = 1 + sign * price_change;
    s.change = signed_percent(sign * price_change);
    s.instance_type = row.instance_type;
    s.feasible = true;
    s.num_instances = row.num_instances;
    s.usd_per_hour = row.usd_per_hour * s.factor;
    s.relative_change_usd_per_hour = s.factor - 1;
    a.sensitivity.push_back(s);
  }
}

/// A given fleet: the price rows and the recommendation only.
Analysis analyse_given_fleet(const PlanResult& result, const AnalysisOptions& options) {
  Analysis a;
  if (!result.rows.empty() && result.rows[0].feasible) {
    add_price_rows(a, result.rows[0], options.price_change);
  }
  const PlanRow* r = result.rows.empty() ? nullptr : &result.rows[0];
  a.recommendation =
      r == nullptr ? "Nothing was planned."
      : r->feasible
          ? "The given fleet (" + r->instance_type + ") meets every SLO at " +
                usd(r->usd_per_hour) + " per hour (" + usd(r->annual_usd) +
                " per year); the analyses that replan fleet sizes apply to candidate searches."
          : "The given fleet (" + r->instance_type +
                ") does not meet the SLO: " + r->infeasible_reason + ".";
  return a;
}

/// The variants to replan for the analysed rows: each load multiplier, the load and SLO
/// changes, and the step-time error of each row.
std::vector<Variant> variants_to_replan(size_t num_rows, const std::vector<StepTimeError>& errors,
                                        const AnalysisOptions& options) {
  std::vector<Variant> variants;
  auto add_variant = [&](Variant::Kind kind, double factor, size_t row) {
    for (Variant& v : variants) {
      if (v.kind == kind && v.factor == factor) {
        if (std::find(v.rows.begin(), v.rows.end(), row) == v.rows.end()) v.rows.push_back(row);
        return;
      }
    }
    Variant v;
    v.kind = kind;
    v.factor = factor;
    v.rows = {row};
    variants.push_back(std::move(v));
  };
  for (size_t i = 0; i < num_rows; ++i) {
    for (const double m : options.load_multipliers) {
      if (m != 1.0) add_variant(Variant::Kind::kLoad, m, i);
    }
    add_variant(Variant::Kind::kLoad, 1 - options.load_change, i);
    add_variant(Variant::Kind::kLoad, 1 + options.load_change, i);
    add_variant(Variant::Kind::kSlo, 1 - options.slo_change, i);
    add_variant(Variant::Kind::kSlo, 1 + options.slo_change, i);
    if (errors[i].fraction > 0) {
      add_variant(Variant::Kind::kStepTime, 1 - errors[i].fraction, i);
      add_variant(Variant::Kind::kStepTime, 1 + errors[i].fraction, i);
    }
  }
  for (Variant& v : variants) v.results.resize(v.rows.size());
  return variants;
}

/// What the analysed rows were replanned and resimulated into.
struct Replans {
  std::vector<Variant> variants;
  std::vector<RequestLatencies> latencies;  ///< per analysed row
  std::vector<MaxRate> rates;               ///< per analysed row (when computed here)
  int64_t num_simulations = 0;

  /// The replanned row `row` of the variant (kind, factor), or null.
  const PlanRow* result_of(Variant::Kind kind, double factor, size_t row) const {
    for (const Variant& v : variants) {
      if (v.kind != kind || v.factor != factor) continue;
      for (size_t k = 0; k < v.rows.size(); ++k) {
        if (v.rows[k] == row) return &v.results[k];
      }
    }
    return nullptr;
  }
};

/// The analysis's simulations, in parallel: each variant, the latency CDFs, and (rates_here)
/// each row's maximum rate.
Replans replan(const Scenario& scenario, const model::Catalog& catalog,
               const PlanOptions& plan_options, const PlanSession& base,
               const std::vector<const PlanRow*>& rows, const std::vector<ServingChoice>& choices,
               const std::vector<StepTimeError>& errors, bool rates_here,
               const AnalysisOptions& options) {
  Replans out;
  out.variants = variants_to_replan(rows.size(), errors, options);
  std::vector<Variant>& variants = out.variants;
  std::vector<RequestLatencies>& latencies = out.latencies;
  std::vector<MaxRate>& rates = out.rates;
  latencies.resize(rows.size());
  rates.resize(rows.size());
  const size_t num_tasks = variants.size() + rows.size() + (rates_here ? rows.size() : 0);
  std::vector<int64_t> task_sims(num_tasks, 0);
  // The longest tasks first: the rate bisections (sequential, one instance over the whole
  // workload), then the variants, then the CDFs.
  auto task_at = [&](size_t k) {
    const size_t num_rates = rates_here ? rows.size() : 0;
    if (k < num_rates) return variants.size() + rows.size() + k;
    if (k < num_rates + variants.size()) return k - num_rates;
    return k - num_rates + 0;  // the CDF tasks keep their index (variants.size() + i)
  };
  base::parallel_for(num_tasks, plan_options.num_threads, [&](size_t k) {
    const size_t t = task_at(k);
    if (t < variants.size()) {
      Variant& v = variants[t];
      Scenario sc = v.kind == Variant::Kind::kLoad  ? with_load_multiplier(scenario, v.factor)
                    : v.kind == Variant::Kind::kSlo ? with_slo_factor(scenario, v.factor)
                                                    : scenario;
      PlanOptions po = plan_options;
      if (v.kind == Variant::Kind::kStepTime) po.step_time_scale = v.factor;
      po.record_itl = false;  // no analysis reads ITL: the gaps would cost 8 bytes a token
      const PlanSession session(sc, catalog, po);
      for (size_t k = 0; k < v.rows.size(); ++k) {
        const PlanRow& row = *rows[v.rows[k]];
        const model::InstanceType& instance =
            catalog.instance(row.instance_type, scenario.file.string() + ": instance type");
        const PreparedType type = session.prepare(instance, choices[v.rows[k]]);
        SizeSearch s;
        s.lower_bound = fleet_lower_bound(session, type).num_instances;
        const double hint = v.kind == Variant::Kind::kSlo
                                ? static_cast<double>(row.num_instances)
                                : std::ceil(static_cast<double>(row.num_instances) * v.factor);
        s.start = std::max<int64_t>(static_cast<int64_t>(hint), 1);
        s.first_step = std::max<int64_t>(1, s.start / 8);
        v.results[k] = session.search_size(type, s);
        task_sims[t] += v.results[k].num_simulations;
      }
      return;
    }
    const size_t i = t - variants.size();
    const PlanRow& row = *rows[i % rows.size()];
    if (i < rows.size()) {
      const model::InstanceType& instance =
          catalog.instance(row.instance_type, scenario.file.string() + ": instance type");
      latencies[i] = base.request_latencies(base.prepare(instance, choices[i]), row.num_instances);
      task_sims[t] = 1;
    } else {
      const size_t r = i - rows.size();
      rates[r] =
          max_sustainable_rate(scenario, catalog, row.instance_type, choices[r], plan_options, 1.0,
                               options.max_rate_tolerance, std::max<int64_t>(row.num_instances, 1));
      task_sims[t] = rates[r].num_simulations;
    }
  });
  for (const int64_t s : task_sims) out.num_simulations += s;
  return out;
}

/// Cost against load of analysed row `i`.
CostVsLoad cost_vs_load_of(const PlanRow& row, size_t i, const Replans& replans,
                           const AnalysisOptions& options) {
  CostVsLoad cl;
  cl.instance_type = row.instance_type;
  for (const double m : options.load_multipliers) {
    LoadPoint p;
    p.load_multiplier = m;
    const PlanRow* r = m == 1.0 ? &row : replans.result_of(Variant::Kind::kLoad, m, i);
    if (r != nullptr && r->feasible) {
      p.feasible = true;
      p.num_instances = r->num_instances;
      p.usd_per_hour = r->usd_per_hour;
    }
    cl.points.push_back(p);
  }
  return cl;
}

/// The sensitivity rows of analysed row `i`: price, then load, then SLO, each -/+.
void add_sensitivity(Analysis& a, const PlanRow& row, size_t i, const Replans& replans,
                     const AnalysisOptions& options) {
  add_price_rows(a, row, options.price_change);
  auto replanned = [&](const std::string& parameter, Variant::Kind kind, double change) {
    for (const double sign : {-1.0, 1.0}) {
      SensitivityRow s;
      s.parameter = parameter;
      s.factor = 1 + sign * change;
      s.change = signed_percent(sign * change);
      s.instance_type = row.instance_type;
      const PlanRow* r = replans.result_of(kind, s.factor, i);
      if (r != nullptr && r->feasible) {
        s.feasible = true;
        s.num_instances = r->num_instances;
        s.usd_per_hour = r->usd_per_hour;
        s.relative_change_usd_per_hour = r->usd_per_hour / row.usd_per_hour - 1;
      }
      a.sensitivity.push_back(s);
    }
  };
  replanned("load", Variant::Kind::kLoad, options.load_change);
  replanned("slo", Variant::Kind::kSlo, options.slo_change);
}

/// The uncertainty range of analysed row `i` under its step-time error and the price error.
UncertaintyRow uncertainty_of(const PlanRow& row, size_t i, const StepTimeError& error,
                              const UncertaintySpec& uspec, const Replans& replans) {
  UncertaintyRow u;
  u.instance_type = row.instance_type;
  u.confidence = uspec.confidence;
  u.num_instances = row.num_instances;
  u.usd_per_hour = row.usd_per_hour;
  u.step_time_error_fraction = error.fraction;
  u.step_time_error_source = error.source;
  u.price_error_fraction = uspec.price_error_fraction;
  u.num_instances_low = row.num_instances;
  u.num_instances_high = row.num_instances;
  if (error.fraction > 0) {
    const PlanRow* lo = replans.result_of(Variant::Kind::kStepTime, 1 - error.fraction, i);
    const PlanRow* hi = replans.result_of(Variant::Kind::kStepTime, 1 + error.fraction, i);
    // Faster steps never need more instances than planned (monotonicity); a search that
    // says otherwise is kept at the planned size, so that low <= planned <= high.
    u.num_instances_low = lo != nullptr && lo->feasible
                              ? std::min(lo->num_instances, row.num_instances)
                              : row.num_instances;
    u.feasible_high = hi != nullptr && hi->feasible;
    u.num_instances_high = u.feasible_high ? std::max(hi->num_instances, row.num_instances) : 0;
  }
  const double price = row.instance_usd_per_hour;
  const double p = uspec.price_error_fraction;
  u.usd_per_hour_low = static_cast<double>(u.num_instances_low) * price * (1 - p);
  u.usd_per_hour_high =
      u.feasible_high ? static_cast<double>(u.num_instances_high) * price * (1 + p) : 0;
  const double step_width =
      u.feasible_high ? static_cast<double>(u.num_instances_high - u.num_instances_low) * price
                      : std::numeric_limits<double>::infinity();
  const double price_width = static_cast<double>(row.num_instances) * price * 2 * p;
  const std::string conf = percent(u.confidence);
  if (step_width == 0 && price_width == 0) {
    u.dominant_assumption = "none";
  } else {
    u.dominant_assumption = step_width >= price_width ? "step_time" : "price";
  }
  const std::string size_text =
      !u.feasible_high ? "at least " + plural(u.num_instances_low, "instance") +
                             " (no fleet meets the SLO with step times " +
                             percent(u.step_time_error_fraction) + " slower)"
      : u.num_instances_low == u.num_instances_high
          ? plural(u.num_instances_low, "instance")
          : std::to_string(u.num_instances_low) + " to " + plural(u.num_instances_high, "instance");
  u.text = size_text + ", " + usd(u.usd_per_hour_low) +
           (u.feasible_high ? " to " + usd(u.usd_per_hour_high) : " or more") + " per hour (" +
           conf + ")";
  return u;
}

/// The search rows and the Pareto frontier: from the configuration search when it ran, else
/// from the plan's rows (one configuration each).
void add_search_and_pareto(Analysis& a, bool run_search_section, const SearchResult& search,
                           const PlanResult& result, const PlanSession& base,
                           const std::vector<const PlanRow*>& rows,
                           const std::vector<MaxRate>& rates) {
  std::vector<CostLatencyPoint> points;
  std::vector<ParetoRow> candidates;
  if (run_search_section) {
    for (const TypeSearchResult& t : search.types) {
      SearchRow s;
      s.instance_type = t.instance_type;
      s.configs_tried = t.num_configs_tried;
      s.configs_pruned = t.num_configs_pruned;
      if (t.best >= 0) {
        s.best_config = t.best_row.configuration;  // the label with the degree resolved
        s.feasible = true;
        s.num_instances = t.best_row.num_instances;
        s.usd_per_hour = t.best_row.usd_per_hour;
      }
      s.max_load_multiplier_per_instance = t.max_load_multiplier_per_instance;
      s.max_requests_per_s_per_instance = t.max_requests_per_s_per_instance;
      a.search.push_back(std::move(s));
      for (const ConfigResult& c : t.configs) {
        if (c.outcome != ConfigResult::Outcome::kFeasible) continue;
        points.push_back({c.usd_per_hour, c.ttft_p99_s, c.tpot_p99_s});
        candidates.push_back({t.instance_type, c.label, c.num_instances, c.usd_per_hour,
                              c.ttft_p99_s, c.tpot_p99_s});
      }
    }
  } else {
    for (size_t i = 0; i < rows.size(); ++i) {
      SearchRow s;
      s.instance_type = rows[i]->instance_type;
      s.configs_tried = 1;
      s.best_config = rows[i]->configuration;
      s.feasible = true;
      s.num_instances = rows[i]->num_instances;
      s.usd_per_hour = rows[i]->usd_per_hour;
      s.max_load_multiplier_per_instance = rates[i].load_multiplier;
      s.max_requests_per_s_per_instance = rates[i].requests_per_s;
      a.search.push_back(std::move(s));
    }
    for (const PlanRow& r : result.rows) {
      if (!r.feasible || !r.groups.empty()) continue;
      points.push_back({r.usd_per_hour, r.metrics.ttft.p99_s, r.metrics.tpot.p99_s});
      candidates.push_back({r.instance_type, config_label(row_choice(base, r)), r.num_instances,
                            r.usd_per_hour, r.metrics.ttft.p99_s, r.metrics.tpot.p99_s});
    }
  }
  for (const size_t i : pareto_frontier(points)) a.pareto.push_back(candidates[i]);
}

/// The recommendation paragraph, from the analysed rows and the sections already filled.
std::string recommendation(const Scenario& scenario, const PlanResult& result,
                           const std::vector<const PlanRow*>& rows, const Analysis& a,
                           bool run_search_section, const SearchResult& search) {
  std::string text;
  const WorkloadSummary& w = result.workload;
  const std::string slo = "p99 TTFT <= " + num(scenario.slo.ttft_s) +
                          " s and p99 TPOT <= " + num(scenario.slo.tpot_s) + " s" +
                          (scenario.workload.classes.empty() ? "" : " (the tightest class)");
  if (rows.empty()) {
    text = "No candidate instance type meets " + slo + " for " + result.model_id +
           " on this workload within max_instances (" + std::to_string(scenario.max_instances) +
           "); see each row's reason.";
  } else {
    const PlanRow& best = *rows[0];
    const UncertaintyRow& u = a.uncertainty[0];
    text = "For " + result.model_id + " serving " +
           (w.num_requests > 0 ? plural(w.num_requests, "request") + " over " + num(w.span_s) + " s"
                               : std::string("a closed loop of users")) +
           " with " + slo + ", the cheapest fleet is " + std::to_string(best.num_instances) +
           " x " + best.instance_type + " (" + best.hardware_name + ") at " +
           usd(best.usd_per_hour) + " per hour (" + usd(best.annual_usd) + " per year, " +
           usd(best.usd_per_million_output_tokens) + " per million output tokens). ";
    text += "Allowing for a step-time error of " + percent(u.step_time_error_fraction) +
            (u.price_error_fraction > 0 ? " and a price error of " + percent(u.price_error_fraction)
                                        : std::string("")) +
            ", it is " + u.text + "; the dominant assumption is " +
            (u.dominant_assumption == "step_time"
                 ? "the step-time prediction (" + u.step_time_error_source + ")"
             : u.dominant_assumption == "price" ? std::string("the price")
                                                : std::string("neither (both errors are 0)")) +
            ". ";
    if (rows.size() > 1) {
      const PlanRow& other = *rows[1];
      text += "The cheapest " +
              std::string(other.device_kind == model::DeviceKind::kCpu ? "CPU" : "GPU") +
              " option, " + std::to_string(other.num_instances) + " x " + other.instance_type +
              ", costs " + usd(other.usd_per_hour) + " per hour (" +
              num(other.usd_per_hour / best.usd_per_hour) + " times as much). ";
    } else {
      // Only a statement about the other kind when the plan had candidates of it.
      const model::DeviceKind other_kind = best.device_kind == model::DeviceKind::kCpu
                                               ? model::DeviceKind::kGpu
                                               : model::DeviceKind::kCpu;
      const bool tried_other =
          std::any_of(result.rows.begin(), result.rows.end(),
                      [&](const PlanRow& r) { return r.device_kind == other_kind; });
      if (tried_other) {
        text += std::string("No ") + (other_kind == model::DeviceKind::kGpu ? "GPU" : "CPU") +
                " instance type meets the SLO. ";
      }
    }
    const LoadPoint* doubled = nullptr;
    for (const LoadPoint& p : a.cost_vs_load[0].points) {
      if (p.load_multiplier == 2.0) doubled = &p;
    }
    if (doubled != nullptr) {
      text += doubled->feasible
                  ? "At twice the load it needs " + plural(doubled->num_instances, "instance") +
                        " (" + usd(doubled->usd_per_hour) + " per hour). "
                  : "At twice the load no fleet within max_instances meets the "
                    "SLO. ";
    }
    if (run_search_section) {
      const TypeSearchResult* cheapest = nullptr;
      for (const TypeSearchResult& t : search.types) {
        if (t.best < 0) continue;
        if (cheapest == nullptr || t.best_row.usd_per_hour < cheapest->best_row.usd_per_hour) {
          cheapest = &t;
        }
      }
      if (cheapest != nullptr) {
        text += "The configuration search finds " +
                std::to_string(cheapest->best_row.num_instances) + " x " + cheapest->instance_type +
                " with " + cheapest->configs[static_cast<size_t>(cheapest->best)].label + " at " +
                usd(cheapest->best_row.usd_per_hour) + " per hour the cheapest of " +
                plural(search.num_configs, "configuration") + ".";
      }
    }
  }
  while (!text.empty() && text.back() == ' ') text.pop_back();
  return text;
}

}  // namespace

Analysis analyse(const Scenario& scenario, const model::Catalog& catalog, const PlanResult& result,
                 const AnalysisOptions& options) {
  PlanOptions plan_options = options.plan;
  plan_options.observer = nullptr;
  plan_options.step_time_scale = 1.0;
  const UncertaintySpec& uspec = scenario.uncertainty;

  std::vector<const PlanRow*> rows = rows_to_analyse(result);
  if (scenario.fleet) return analyse_given_fleet(result, options);

  Analysis a;

  // The configuration search.
  SearchResult search;
  const bool run_search_section = scenario.search.enabled && options.search;
  if (run_search_section) {
    search = run_search(scenario, catalog, plan_options);
    a.num_simulations += search.num_simulations;
    for (const TypeSearchResult& t : search.types) {
      if (t.best < 0) continue;
      a.search_best.push_back(t.best_row);
      a.search_choices[t.instance_type] = t.configs[static_cast<size_t>(t.best)].choice;
    }
  }

  const PlanSession base(scenario, catalog, plan_options);
  std::vector<ServingChoice> choices;
  for (const PlanRow* r : rows) choices.push_back(row_choice(base, *r));
  if (run_search_section) substitute_search_winners(search, a.search_best, rows, choices);
  std::vector<StepTimeError> errors;
  for (const PlanRow* r : rows) {
    a.rows_analysed.push_back(r->instance_type);
    errors.push_back(step_time_error(uspec, *r, plan_options.calibration, options.measured_errors));
  }

  // Variants, latency CDFs and (without the search) each row's maximum rate.
  const bool rates_here = options.max_rate && !run_search_section;
  const Replans replans =
      replan(scenario, catalog, plan_options, base, rows, choices, errors, rates_here, options);
  a.num_simulations += replans.num_simulations;

  for (size_t i = 0; i < rows.size(); ++i) {
    const PlanRow& row = *rows[i];
    a.cost_vs_load.push_back(cost_vs_load_of(row, i, replans, options));
    for (const char* metric : {"ttft", "tpot"}) {
      LatencyCdf c;
      c.instance_type = row.instance_type;
      c.num_instances = row.num_instances;
      c.metric = metric;
      c.points = cdf_of(
          std::string(metric) == "ttft" ? replans.latencies[i].ttft_s : replans.latencies[i].tpot_s,
          options.num_cdf_points);
      a.latency_cdf.push_back(std::move(c));
    }
    add_sensitivity(a, row, i, replans, options);
    a.uncertainty.push_back(uncertainty_of(row, i, errors[i], uspec, replans));
  }

  add_search_and_pareto(a, run_search_section, search, result, base, rows, replans.rates);
  a.recommendation = recommendation(scenario, result, rows, a, run_search_section, search);
  return a;
}

}  // namespace llmcap::plan
