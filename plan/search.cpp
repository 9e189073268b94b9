#include "plan/search.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <functional>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <thread>

#include "base/json_reader.h"
#include "base/parallel_for.h"
#include "model/input_error.h"
#include "plan/analysis.h"
#include "plan/candidates.h"
#include "plan/planner_detail.h"
#include "plan/scenario.h"
#include "plan/sim_cache.h"
#include "plan/spec_parsers.h"
#include "sim/input_error.h"

namespace llmcap::plan {
namespace {

using nlohmann::json;

using Fields = base::JsonReader;

/// A non-empty array of distinct positive integers at `key` of `section`.
std::vector<int64_t> positive_ints(const Fields& section, const std::string& key) {
  const json& v = section.non_empty_array(key, "a non-empty list of positive integers");
  std::vector<int64_t> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    const std::string item = key + "[" + std::to_string(i) + "]";
    if (!e.is_number_integer() || e.get<int64_t>() <= 0) {
      section.fail(item, "a positive integer", section.shown(e));
    }
    if (std::find(out.begin(), out.end(), e.get<int64_t>()) != out.end()) {
      section.fail(item, "a value not listed before", section.shown(e));
    }
    out.push_back(e.get<int64_t>());
  }
  return out;
}

/// A non-empty array of distinct strings at `key` of `section`, each parsed by `parse`.
template <typename T, typename Parse>
std::vector<T> names(const Fields& section, const std::string& key, Parse parse) {
  const json& v = section.non_empty_array(key, "a non-empty list of names");
  std::vector<T> out;
  for (size_t i = 0; i < v.size(); ++i) {
    const json& e = v[i];
    const std::string item = key + "[" + std::to_string(i) + "]";
    if (!e.is_string()) section.fail(item, "a name (string)", section.shown(e));
    // parse throws model:: or sim::InputError, the same type as plan::InputError.
    const T value =
        parse(e.get<std::string>(), section.file() + ": field \"" + section.name(item) + "\"");
    if (std::find(out.begin(), out.end(), value) != out.end()) {
      section.fail(item, "a name not listed before", section.shown(e));
    }
    out.push_back(value);
  }
  return out;
}

/// A number in the interval from `lo` to `hi` (open or closed at each end).
double fraction(const Fields& section, const std::string& key, double lo, double hi, bool open_lo,
                bool open_hi, const std::string& expected) {
  return section.number(
      key, [&](double v) { return (open_lo ? v > lo : v >= lo) && (open_hi ? v < hi : v <= hi); },
      expected);
}

}  // namespace

SearchSpec parse_search_spec(const json& root, const std::filesystem::path& file) {
  SearchSpec spec;
  const Fields top(root, file.string(), "");
  if (!top.has("search")) return spec;
  const Fields s = top.object("search");
  s.refuse_unknown({"tensor_parallel", "weight_formats", "batching", "max_num_seqs",
                    "chunk_sizes_tokens", "prune", "max_rate"},
                   "unknown field; known: ");
  spec.enabled = true;
  // "search", or a list of degrees, read from `section`'s `key` into `search` / `degrees`.
  const auto parse_tp = [](const Fields& section, const std::string& key, bool& search,
                           std::vector<int>& degrees) {
    const json& tp = section.at(key);
    if (tp.is_string() && tp.get<std::string>() == "search") {
      search = true;
    } else if (tp.is_array()) {
      for (const int64_t d : positive_ints(section, key)) {
        degrees.push_back(static_cast<int>(std::min<int64_t>(d, 1 << 20)));
      }
    } else {
      section.fail(key,
                   "\"search\", a non-empty list of positive integers, or one of those per "
                   "device kind ({\"gpu\": ..., \"cpu\": ...})",
                   section.shown(tp));
    }
  };
  if (s.has("tensor_parallel") && s.at("tensor_parallel").is_object()) {
    const Fields by_kind = s.object("tensor_parallel");
    by_kind.only({"gpu", "cpu"});
    spec.tp_by_kind = true;
    if (by_kind.has("gpu")) parse_tp(by_kind, "gpu", spec.tp_search, spec.tp_degrees);
    if (by_kind.has("cpu")) parse_tp(by_kind, "cpu", spec.cpu_tp_search, spec.cpu_tp_degrees);
  } else if (s.has("tensor_parallel")) {
    parse_tp(s, "tensor_parallel", spec.tp_search, spec.tp_degrees);
  }
  const auto parse_format = [](const std::string& n, const std::string& ctx) {
    return model::parse_weight_format(n, ctx);
  };
  if (s.has("weight_formats") && s.at("weight_formats").is_object()) {
    const base::JsonReader by_kind = s.object("weight_formats");
    by_kind.only({"gpu", "cpu"});
    spec.weight_formats_by_kind = true;
    if (by_kind.has("gpu")) {
      spec.weight_formats = names<model::WeightFormat>(by_kind, "gpu", parse_format);
    }
    if (by_kind.has("cpu")) {
      spec.cpu_weight_formats = names<model::WeightFormat>(by_kind, "cpu", parse_format);
    }
  } else if (s.has("weight_formats")) {
    spec.weight_formats = names<model::WeightFormat>(s, "weight_formats", parse_format);
  }
  if (s.has("batching")) {
    spec.policies =
        names<sim::BatchingPolicy>(s, "batching", [](const std::string& n, const std::string& ctx) {
          return sim::parse_batching_policy(n, ctx);
        });
  }
  if (s.has("max_num_seqs")) spec.max_num_seqs = positive_ints(s, "max_num_seqs");
  if (s.has("chunk_sizes_tokens")) {
    spec.chunk_sizes_tokens = positive_ints(s, "chunk_sizes_tokens");
  }
  spec.prune = s.boolean_or("prune", spec.prune);
  spec.max_rate = s.boolean_or("max_rate", spec.max_rate);
  return spec;
}

UncertaintySpec parse_uncertainty_spec(const json& root, const std::filesystem::path& file) {
  UncertaintySpec spec;
  const Fields top(root, file.string(), "");
  if (!top.has("uncertainty")) return spec;
  const Fields u = top.object("uncertainty");
  u.refuse_unknown({"confidence", "step_time_error_fraction", "price_error_fraction"},
                   "unknown field; known: ");
  if (u.has("confidence")) {
    spec.confidence = fraction(u, "confidence", 0, 1, true, true,
                               "a number between 0 and 1 (exclusive), e.g. 0.95");
  }
  if (u.has("step_time_error_fraction")) {
    spec.step_time_error_fraction =
        fraction(u, "step_time_error_fraction", 0, 0.9, false, false, "a fraction in [0, 0.9]");
  }
  if (u.has("price_error_fraction")) {
    spec.price_error_fraction =
        fraction(u, "price_error_fraction", 0, 0.9, false, false, "a fraction in [0, 0.9]");
  }
  return spec;
}

std::string config_label(const ServingChoice& c) {
  std::string s = "tp=";
  s += c.tp_degree == 0 ? std::string("auto") : std::to_string(c.tp_degree);
  s += ' ';
  s += model::to_string(c.weight_format);
  s += ' ';
  s += sim::batching_policy_name(c.serving.policy);
  if (c.serving.policy == sim::BatchingPolicy::kChunkedPrefill ||
      c.serving.policy == sim::BatchingPolicy::kPrefillFirst) {
    s += " chunk=" + std::to_string(c.serving.max_num_batched_tokens);
  }
  s += " max_num_seqs=" + std::to_string(c.serving.max_num_seqs);
  return s;
}

std::vector<ServingChoice> search_configs(const SearchSpec& spec, const ServingChoice& base,
                                          const std::vector<int>& allowed_tp_degrees) {
  std::vector<int> tps;
  if (spec.tp_search) {
    tps = allowed_tp_degrees;
  } else if (!spec.tp_degrees.empty()) {
    for (const int d : spec.tp_degrees) {
      if (std::find(allowed_tp_degrees.begin(), allowed_tp_degrees.end(), d) !=
          allowed_tp_degrees.end()) {
        tps.push_back(d);
      }
    }
  } else {
    tps = {base.tp_degree};
  }
  const std::vector<model::WeightFormat> formats =
      spec.weight_formats.empty() ? std::vector{base.weight_format} : spec.weight_formats;
  const std::vector<sim::BatchingPolicy> policies =
      spec.policies.empty() ? std::vector{base.serving.policy} : spec.policies;
  const std::vector<int64_t> seqs =
      spec.max_num_seqs.empty() ? std::vector{base.serving.max_num_seqs} : spec.max_num_seqs;
  const std::vector<int64_t> chunks = spec.chunk_sizes_tokens.empty()
                                          ? std::vector{base.serving.max_num_batched_tokens}
                                          : spec.chunk_sizes_tokens;
  std::vector<ServingChoice> out;
  for (const int tp : tps) {
    for (const model::WeightFormat wf : formats) {
      for (const sim::BatchingPolicy policy : policies) {
        for (const int64_t n : seqs) {
          const bool decode_first = policy == sim::BatchingPolicy::kChunkedPrefill;
          const bool chunked = decode_first || policy == sim::BatchingPolicy::kPrefillFirst;
          const std::vector<int64_t> budgets =
              chunked ? chunks : std::vector{base.serving.max_num_batched_tokens};
          for (const int64_t budget : budgets) {
            if (decode_first && budget < n) continue;  // the simulator refuses it
            ServingChoice c = base;
            c.tp_degree = tp;
            c.weight_format = wf;
            c.serving.policy = policy;
            c.serving.max_num_seqs = n;
            c.serving.max_num_batched_tokens = budget;
            out.push_back(c);
          }
        }
      }
    }
  }
  return out;
}

namespace {

/// min over 1 <= T <= t_max of time(T) / T, from below, where time(T) is the step time of the
/// relaxed shape of T new tokens (one sequence, T prefill tokens, T attention pairs, nothing
/// cached, no LM head): for T in [a, b] with time non-decreasing, time(T) / T >= time(a) / b.
/// Grid points grow by 2% (the bound loses at most that).
double min_seconds_per_token(const model::StepTimePredictor& p, int64_t t_max) {
  auto time_of = [&](int64_t t) {
    model::BatchShape b;
    b.num_prefill_seqs = 1;
    b.num_prefill_tokens = t;
    b.num_prefill_attention_pairs = t;
    return p.step_time_s(b);
  };
  double best = std::numeric_limits<double>::infinity();
  int64_t a = 1;
  while (a <= t_max) {
    const int64_t next = std::max<int64_t>(a + 1, static_cast<int64_t>(std::floor(a * 1.02)));
    const int64_t b = std::min(next - 1, t_max);
    best = std::min(best, time_of(a) / static_cast<double>(b));
    a = next;
  }
  return best;
}

}  // namespace

FleetBound fleet_lower_bound(const PlanSession& session, const PreparedType& type) {
  return fleet_lower_bound(session.workload(), session.scenario().class_slos(), type);
}

FleetBound fleet_lower_bound(const sim::Workload& w, const std::vector<sim::Slo>& slos,
                             const PreparedType& type) {
  FleetBound bound;
  if (w.closed_loop || w.open_loop.empty() || !type.ready() || type.predictor == nullptr) {
    return bound;
  }
  const sim::ServingConfig& serving = type.fleet.serving;
  int64_t max_tokens = 1;
  for (const sim::RequestSpec& r : w.open_loop) {
    max_tokens = std::max(max_tokens, r.num_prompt_tokens + r.num_output_tokens);
  }
  if (serving.policy == sim::BatchingPolicy::kChunkedPrefill) {
    // Every step holds at most max_num_batched_tokens new tokens, decodes and chunks mixed.
    bound.prefill_s_per_token =
        min_seconds_per_token(*type.predictor, serving.max_num_batched_tokens);
    bound.decode_s_per_token = bound.prefill_s_per_token;
  } else {
    // Prefill steps: up to the budget, or one prompt (with recompute, prompt + output) over it.
    bound.prefill_s_per_token = min_seconds_per_token(
        *type.predictor, std::max(serving.max_num_batched_tokens, max_tokens));
    // Decode steps: one token per running sequence, at most max_num_seqs.
    bound.decode_s_per_token = min_seconds_per_token(*type.predictor, serving.max_num_seqs);
  }
  const size_t num_classes = slos.size();
  std::vector<std::vector<double>> work(num_classes);
  std::vector<int64_t> num_multi(num_classes, 0);  // requests with >= 2 output tokens
  double first = std::numeric_limits<double>::infinity();
  double last_deadline = -std::numeric_limits<double>::infinity();
  for (const sim::RequestSpec& r : w.open_loop) {
    const size_t c =
        std::min<size_t>(static_cast<size_t>(std::max(r.client_class, 0)), num_classes - 1);
    const double arrival = r.arrival.seconds();
    first = std::min(first, arrival);
    last_deadline =
        std::max(last_deadline, arrival + slos[c].ttft_s +
                                    static_cast<double>(r.num_output_tokens - 1) * slos[c].tpot_s);
    work[c].push_back(static_cast<double>(r.num_prompt_tokens) * bound.prefill_s_per_token +
                      static_cast<double>(r.num_output_tokens - 1) * bound.decode_s_per_token);
    if (r.num_output_tokens >= 2) ++num_multi[c];
  }
  for (size_t c = 0; c < num_classes; ++c) {
    const auto n = static_cast<int64_t>(work[c].size());
    if (n == 0) continue;
    // Nearest-rank p99 <= bound: at least ceil(0.99 n) requests meet TTFT, and ceil(0.99 m)
    // of the m with >= 2 output tokens meet TPOT; so at least k meet both.
    auto at_least = [](int64_t count) {
      return static_cast<int64_t>(std::ceil(0.99 * static_cast<double>(count)));
    };
    const int64_t k = n - (n - at_least(n)) - (num_multi[c] - at_least(num_multi[c]));
    if (k <= 0) continue;
    std::nth_element(work[c].begin(), work[c].begin() + (k - 1), work[c].end());
    bound.work_s += std::accumulate(work[c].begin(), work[c].begin() + k, 0.0);
  }
  bound.horizon_s = last_deadline - first;
  if (!(bound.horizon_s > 0) || !(bound.work_s > 0)) return bound;
  // Rounding guard: a relative 1e-9 below the exact quotient.
  const double replicas = std::ceil(bound.work_s / bound.horizon_s * (1 - 1e-9));
  const double per_instance = static_cast<double>(std::max(1, type.deployment.num_replicas));
  bound.num_instances =
      std::max<int64_t>(1, static_cast<int64_t>(std::ceil(replicas / per_instance)));
  return bound;
}

const char* outcome_name(ConfigResult::Outcome outcome) {
  switch (outcome) {
    case ConfigResult::Outcome::kFeasible:
      return "feasible";
    case ConfigResult::Outcome::kInfeasible:
      return "infeasible";
    case ConfigResult::Outcome::kPrunedBound:
      return "pruned_bound";
    case ConfigResult::Outcome::kCut:
      return "cut";
  }
  return "?";
}

namespace {

TypeSearchResult search_type(const PlanSession& session, const model::InstanceType& instance,
                             const PlanOptions& options) {
  const Scenario& sc = session.scenario();
  const SearchSpec& spec = sc.search;
  TypeSearchResult out;
  out.instance_type = instance.id;
  out.device_kind = instance.kind;
  out.instance_usd_per_hour = instance.usd_per_hour;
  const ServingChoice base = session.default_choice(instance.id);
  SearchSpec kind_spec = spec;  // the weight formats and degrees of this type's device kind
  if (spec.weight_formats_by_kind && instance.kind == model::DeviceKind::kCpu) {
    kind_spec.weight_formats = spec.cpu_weight_formats;
  }
  if (spec.tp_by_kind && instance.kind == model::DeviceKind::kCpu) {
    kind_spec.tp_search = spec.cpu_tp_search;
    kind_spec.tp_degrees = spec.cpu_tp_degrees;
  }
  const std::vector<ServingChoice> choices =
      search_configs(kind_spec, base, tp_options(instance, session.catalog(), session.model()));
  const bool prune = spec.enabled ? spec.prune : false;

  std::vector<PreparedType> prepared;
  std::vector<double> bound_cost(choices.size(), 0);
  for (size_t i = 0; i < choices.size(); ++i) {
    ConfigResult r;
    r.choice = choices[i];
    r.label = config_label(choices[i]);
    prepared.push_back(session.prepare(instance, choices[i]));
    if (!prepared[i].ready()) {
      r.reason = prepared[i].row.infeasible_reason;
    } else {
      r.lower_bound_instances = prune ? fleet_lower_bound(session, prepared[i]).num_instances : 1;
    }
    bound_cost[i] = static_cast<double>(r.lower_bound_instances) * instance.usd_per_hour;
    out.configs.push_back(std::move(r));
  }
  // Visit by ascending lower-bound cost (ties: index) when pruning, else in order.
  std::vector<size_t> order(choices.size());
  std::iota(order.begin(), order.end(), 0);
  if (prune) {
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return bound_cost[a] < bound_cost[b]; });
  }
  double best_cost = std::numeric_limits<double>::infinity();
  size_t best_index = choices.size();
  std::vector<PlanRow> rows(choices.size());
  for (const size_t i : order) {
    ConfigResult& r = out.configs[i];
    if (!prepared[i].ready()) {
      r.outcome = ConfigResult::Outcome::kInfeasible;
      ++out.num_configs_pruned;
      continue;
    }
    // Does config i beat the best (cost, index) at cost x?
    auto beats = [&](double cost) {
      return cost < best_cost || (cost == best_cost && i < best_index);
    };
    if (prune && !beats(bound_cost[i])) {
      r.outcome = ConfigResult::Outcome::kPrunedBound;
      r.reason = "lower bound " + std::to_string(r.lower_bound_instances) +
                 " instances costs at least the best configuration found";
      ++out.num_configs_pruned;
      continue;
    }
    SizeSearch search;
    search.lower_bound = r.lower_bound_instances;
    if (prune && best_index < choices.size()) {
      // The largest size whose cost still beats the best.
      int64_t cap = static_cast<int64_t>(std::floor(best_cost / instance.usd_per_hour)) + 1;
      while (cap > 0 && !beats(static_cast<double>(cap) * instance.usd_per_hour)) --cap;
      search.cap = std::max<int64_t>(cap, 1);
    }
    rows[i] = session.search_size(prepared[i], search);
    ++out.num_configs_tried;
    r.num_simulations = rows[i].num_simulations;
    out.num_simulations += rows[i].num_simulations;
    if (rows[i].feasible) {
      r.outcome = ConfigResult::Outcome::kFeasible;
      r.num_instances = rows[i].num_instances;
      r.usd_per_hour = rows[i].usd_per_hour;
      r.ttft_p99_s = rows[i].metrics.ttft.p99_s;
      r.tpot_p99_s = rows[i].metrics.tpot.p99_s;
      if (beats(r.usd_per_hour)) {
        best_cost = r.usd_per_hour;
        best_index = i;
      }
    } else {
      const bool capped = search.cap > 0 && search.cap < sc.max_instances;
      r.outcome = capped ? ConfigResult::Outcome::kCut : ConfigResult::Outcome::kInfeasible;
      r.reason = rows[i].infeasible_reason;
    }
  }
  if (best_index < choices.size()) {
    out.best = static_cast<int64_t>(best_index);
    out.best_row = rows[best_index];
  } else {
    // No feasible configuration: the first configuration's row with every reason.
    out.best_row = rows.empty() || choices.empty() ? PlanRow{} : prepared[0].row;
    std::string reasons;
    for (const ConfigResult& r : out.configs) {
      reasons += (reasons.empty() ? "" : "; ") + r.label + ": " + r.reason;
    }
    out.best_row.feasible = false;
    out.best_row.infeasible_reason = "no configuration meets the SLO: " + reasons;
  }
  out.best_row.num_simulations = out.num_simulations;
  if (spec.enabled && spec.max_rate && out.best >= 0) {
    const MaxRate rate =
        max_sustainable_rate(sc, session.catalog(), instance.id, choices[best_index], options, 1.0,
                             0.05, std::max<int64_t>(out.best_row.num_instances, 1));
    out.max_load_multiplier_per_instance = rate.load_multiplier;
    out.max_requests_per_s_per_instance = rate.requests_per_s;
    out.num_simulations += rate.num_simulations;
  }
  return out;
}

}  // namespace

SearchResult run_search(const Scenario& scenario, const model::Catalog& catalog,
                        const PlanOptions& options) {
  if (scenario.fleet) {
    throw InputError(scenario.file.string() +
                     ": field \"search\": a given \"fleet\" is evaluated as it is; the "
                     "configuration search is for candidates");
  }
  const std::vector<const model::InstanceType*> candidates = resolve_candidates(scenario, catalog);
  const PlanSession session(scenario, catalog, options);
  SearchResult result;
  result.types.resize(candidates.size());
  // The most replicas of the scenario's own configuration first: a type's configurations are
  // searched together, and their fleets scale with that one's.
  const std::vector<size_t> order = detail::longest_first(
      candidates.size(), options.num_threads, session.workload(), session.scenario().class_slos(),
      [&](size_t i) {
        return session.prepare(*candidates[i], session.default_choice(candidates[i]->id));
      });
  base::parallel_for(candidates.size(), options.num_threads, [&](size_t k) {
    const size_t i = order[k];
    result.types[i] = search_type(session, *candidates[i], options);
  });
  for (const TypeSearchResult& t : result.types) {
    result.num_configs += static_cast<int64_t>(t.configs.size());
    result.num_configs_tried += t.num_configs_tried;
    result.num_configs_pruned += t.num_configs_pruned;
    result.num_simulations += t.num_simulations;
  }
  if (result.num_configs == 0) {
    throw InputError(scenario.file.string() +
                     ": field \"search\": no valid configuration for any candidate (a "
                     "chunked_prefill chunk must be at least max_num_seqs, and a tensor-parallel "
                     "degree must be one the instance type allows)");
  }
  return result;
}

MaxRate max_sustainable_rate(const Scenario& scenario, const model::Catalog& catalog,
                             const std::string& instance_id, const ServingChoice& choice,
                             const PlanOptions& options, double start, double relative_tolerance,
                             int64_t num_instances) {
  MaxRate out;
  const int64_t fleet = std::max<int64_t>(num_instances, 1);
  const model::InstanceType& instance =
      catalog.instance(instance_id, scenario.file.string() + ": instance type");
  double base_rate = 0;
  // test(m): whether the fleet meets the SLO at load multiplier m.
  sim::Metrics passing_metrics;
  auto test = [&](double m) -> int {  // 1 pass, 0 fail, -1 cannot deploy
    const PlanSession session(with_load_multiplier(scenario, m), catalog, options);
    const PreparedType type = session.prepare(instance, choice);
    if (!type.ready()) return -1;
    ++out.num_simulations;
    const FleetEvaluation e = session.evaluate(type, fleet);
    const bool ok = meets_class_slos(e, session.scenario().class_slos());
    if (ok) passing_metrics = e.metrics;
    return ok ? 1 : 0;
  };
  {
    const PlanSession base(scenario, catalog, options);
    if (base.summary().num_requests > 0 && base.summary().span_s > 0) {
      base_rate = static_cast<double>(base.summary().num_requests) / base.summary().span_s;
    }
  }
  constexpr double kMinMultiplier = 1.0 / 4096;
  constexpr double kMaxMultiplier = 4096;
  double m = std::clamp(start > 0 ? start : 1.0, kMinMultiplier, kMaxMultiplier);
  double lo = 0;
  double hi = 0;
  const int first = test(m);
  if (first < 0) return out;
  if (first == 1) {
    lo = m;
    while (hi == 0) {
      if (lo >= kMaxMultiplier) {
        hi = lo;
        break;
      }
      const double up = std::min(lo * 2, kMaxMultiplier);
      if (test(up) == 1) {
        lo = up;
      } else {
        hi = up;
      }
    }
  } else {
    hi = m;
    while (lo == 0) {
      if (hi <= kMinMultiplier) return out;
      const double down = std::max(hi / 2, kMinMultiplier);
      if (test(down) == 1) {
        lo = down;
      } else {
        hi = down;
      }
    }
  }
  sim::Metrics lo_metrics = passing_metrics;
  while (hi > lo * (1 + relative_tolerance)) {
    const double mid = std::sqrt(lo * hi);
    if (test(mid) == 1) {
      lo = mid;
      lo_metrics = passing_metrics;
    } else {
      hi = mid;
    }
  }
  const auto n = static_cast<double>(fleet);
  out.load_multiplier = lo / n;
  const bool closed = scenario.workload.kind == WorkloadSpec::Kind::kClosedLoop &&
                      scenario.workload.classes.empty();
  out.requests_per_s = (closed ? lo_metrics.throughput_requests_per_s : lo * base_rate) / n;
  return out;
}

std::vector<size_t> pareto_frontier(const std::vector<CostLatencyPoint>& points) {
  std::vector<size_t> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](size_t i) {
    return std::tuple(points[i].usd_per_hour, points[i].ttft_p99_s, points[i].tpot_p99_s, i);
  };
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return key(a) < key(b); });
  std::vector<size_t> frontier;
  for (const size_t i : order) {
    const CostLatencyPoint& p = points[i];
    bool dominated = false;
    // Only points before i in the order can dominate it (or equal it).
    for (const size_t j : frontier) {
      const CostLatencyPoint& q = points[j];
      if (q.usd_per_hour <= p.usd_per_hour && q.ttft_p99_s <= p.ttft_p99_s &&
          q.tpot_p99_s <= p.tpot_p99_s) {
        dominated = true;  // better somewhere, or equal (the first of equal points is kept)
        break;
      }
    }
    if (!dominated) frontier.push_back(i);
  }
  return frontier;
}

namespace detail {

std::vector<size_t> longest_first(size_t n, int num_threads, const sim::Workload& workload,
                                  const std::vector<sim::Slo>& class_slos,
                                  const std::function<PreparedType(size_t)>& prepare) {
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  if (num_threads == 1) return order;
  std::vector<int64_t> replicas(n, 0);
  std::vector<std::string> keys(n);
  base::parallel_for(n, num_threads, [&](size_t i) {
    PreparedType t = prepare(i);
    if (!t.ready() || t.predictor == nullptr) return;
    replicas[i] = fleet_lower_bound(workload, class_slos, t).num_instances *
                  std::max(1, t.deployment.num_replicas);
    t.fleet.num_replicas = replicas[i];
    keys[i] = simulation_key(t.deployment, t.efficiency, t.choice.weight_format, t.fleet,
                             replicas[i], false);
  });
  std::set<std::string> seen;
  std::vector<bool> repeat(n, false);
  for (size_t i = 0; i < n; ++i) repeat[i] = !keys[i].empty() && !seen.insert(keys[i]).second;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (repeat[a] != repeat[b]) return !repeat[a];
    return replicas[a] > replicas[b];
  });
  return order;
}

}  // namespace detail
}  // namespace llmcap::plan
