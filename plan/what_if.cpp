#include "plan/what_if.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <utility>

#include "base/error.h"
#include "base/json_reader.h"
#include "base/parallel_for.h"
#include "plan/candidates.h"
#include "plan/search.h"
#include "plan/sim_cache.h"

namespace llmcap::plan {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

WhatIfResult cancelled_result() {
  WhatIfResult r;
  r.cancelled = true;
  return r;
}

/// plan()'s progress as on_row calls (no TCO).
class ForwardingObserver final : public PlanObserver {
 public:
  explicit ForwardingObserver(const WhatIfOptions& options) : options_(options) {}
  void on_row_done(const PlanRow& row, size_t num_done, size_t num_total) override {
    if (options_.on_row) options_.on_row(row, nullptr, num_done, num_total);
  }

 private:
  const WhatIfOptions& options_;
};

/// A given fleet or a tensor-parallel search: the planner as a whole.
WhatIfResult plan_whole(const Scenario& scenario, const model::Catalog& catalog,
                        const WhatIfOptions& options) {
  WhatIfResult out;
  ForwardingObserver observer(options);
  PlanOptions po = options.plan;
  po.observer = &observer;
  po.warm_start_sizes.clear();
  try {
    PlanResult result = plan(scenario, catalog, po);
    out.workload = result.workload;
    for (PlanRow& row : result.rows) {
      out.num_simulations += row.num_simulations;
      out.rows.push_back(std::move(row));
    }
  } catch (const Cancelled&) {
    return cancelled_result();
  }
  out.tco.resize(out.rows.size());
  return out;
}

}  // namespace

bool failures_carry_over(const VerdictBasis& previous, const VerdictBasis& current) {
  return previous.context == current.context && previous.calibration == current.calibration &&
         current.load_multiplier >= previous.load_multiplier &&
         current.ttft_p99_s <= previous.ttft_p99_s && current.tpot_p99_s <= previous.tpot_p99_s;
}

namespace {

/// The groups of `queue`'s types (indices into `prepared`, kept in queue order within a group)
/// whose replicas deploy alike, as many to an instance: their simulations are the same for
/// every fleet size (detail::simulation_key without the replica count, and the replicas per
/// instance). A type whose simulations are not shared is a group of its own. Sets group_of[i].
std::vector<std::vector<size_t>> alike_groups(const std::vector<size_t>& queue,
                                              const std::vector<PreparedType>& prepared,
                                              std::vector<size_t>& group_of) {
  std::vector<std::vector<size_t>> members;
  std::map<std::string, size_t> group_by_key;
  for (const size_t i : queue) {
    const PreparedType& t = prepared[i];
    std::string key = detail::simulation_key(t.deployment, t.efficiency, t.choice.weight_format,
                                             t.fleet, 0, false);
    size_t group = members.size();
    if (!key.empty()) {
      key.append("|").append(std::to_string(t.deployment.num_replicas));
      group = group_by_key.try_emplace(std::move(key), members.size()).first->second;
    }
    if (group == members.size()) members.emplace_back();
    group_of[i] = group;
    members[group].push_back(i);
  }
  return members;
}

}  // namespace

bool what_if_applies(const Scenario& scenario) {
  return !scenario.fleet && scenario.tensor_parallel.mode != TensorParallelSpec::Mode::kSearch;
}

WhatIfResult plan_what_if(const Scenario& sc, const model::Catalog& catalog,
                          const WhatIfOptions& options) {
  if (!what_if_applies(sc)) return plan_whole(sc, catalog, options);
  const auto cancelled = [&options] { return options.plan.cancel && options.plan.cancel(); };
  const WarmStart& warm = options.warm_start;
  PlanOptions session_options = options.plan;
  session_options.num_threads = 1;
  session_options.observer = nullptr;
  session_options.record_itl = false;  // what-if rows show no ITL
  session_options.warm_start_sizes.clear();
  (void)resolve_tco(sc, catalog);  // a price model an instance lacks: before any work
  const PlanSession session(sc, catalog, session_options);
  const std::vector<const model::InstanceType*> types = resolve_candidates(sc, catalog);
  const size_t n = types.size();
  std::vector<PlanRow> rows(n);
  std::vector<std::optional<TcoRow>> tcos(n);
  size_t num_done = 0;
  std::mutex mutex;
  std::atomic<bool> failed{false};
  const bool carry_failures =
      warm.basis.has_value() && failures_carry_over(*warm.basis, options.basis);
  const double scale =
      warm.load_multiplier > 0 ? options.load_multiplier / warm.load_multiplier : 1.0;
  auto finish_row = [&](size_t i, const PlanRow& row) {
    std::optional<TcoRow> tco;
    if (row.feasible && row.num_instances > 0 &&
        price_model_not_offered(row, sc, catalog).empty()) {
      tco = compute_tco(row, sc, catalog, session.summary());
    }
    const std::lock_guard lock(mutex);
    rows[i] = row;
    tcos[i] = tco;
    if (!cancelled() && options.on_row) {
      options.on_row(rows[i], tco ? &*tco : nullptr, ++num_done, n);
    }
  };
  // Deploy every type and check its floors first (no simulation): types ruled out show at
  // once; the others are searched cheapest-first by the previous answer's cost, so the rows
  // that matter most update first.
  std::vector<PreparedType> prepared(n);
  std::vector<size_t> queue;
  for (size_t i = 0; i < n; ++i) {
    if (cancelled()) break;
    const auto chosen = options.choices.find(types[i]->id);
    prepared[i] = session.prepare(*types[i], chosen != options.choices.end()
                                                 ? chosen->second
                                                 : session.default_choice(types[i]->id));
    if (prepared[i].ready()) {
      queue.push_back(i);
    } else {
      finish_row(i, prepared[i].row);
    }
  }
  const auto previous_cost = [&](size_t i) {
    const auto it = warm.usd_per_hour.find(types[i]->id);
    return it != warm.usd_per_hour.end() ? it->second : std::numeric_limits<double>::infinity();
  };
  std::stable_sort(queue.begin(), queue.end(),
                   [&](size_t a, size_t b) { return previous_cost(a) < previous_cost(b); });
  // One thread walks the types cheapest first (the rows that matter most come first); a
  // second walks them largest previous fleet first, as a large fleet's search takes longest
  // (a simulation costs in steps, and steps grow with replicas at a given load): started
  // last, it would finish alone. A type is searched by whichever thread claims it first.
  std::vector<size_t> largest_first = queue;
  const auto previous_size = [&](size_t i) {
    const auto it = warm.sizes.find(types[i]->id);
    return it != warm.sizes.end() ? it->second : int64_t{0};
  };
  std::stable_sort(largest_first.begin(), largest_first.end(),
                   [&](size_t a, size_t b) { return previous_size(a) > previous_size(b); });
  // Types whose replicas deploy alike, as many to an instance, run the same simulations for
  // the same fleet size (g5.xlarge and g5.8xlarge): one walk searches all of such a group, one
  // after the other, the first simulating and the rest reading the shared simulations. Split
  // over two walks, one would wait for the simulation the other is running.
  std::vector<size_t> group_of(n);
  const std::vector<std::vector<size_t>> members = alike_groups(queue, prepared, group_of);
  std::vector<std::atomic<bool>> claimed(members.size());
  auto search_type = [&](size_t i) {
    const PreparedType& type = prepared[i];
    SizeSearch search;
    search.lower_bound = std::max<int64_t>(1, fleet_lower_bound(session, type).num_instances);
    const auto prev = warm.sizes.find(types[i]->id);
    if (prev != warm.sizes.end() && prev->second > 0) {
      // The previous size scaled by the load change, rounded down: a small change keeps it,
      // and the search then needs the size and the one below it. Down, as the scaled size
      // overestimates a grown load's fleet (a larger fleet multiplexes its requests better)
      // and a size that fails stops early (SimOptions::stop_at_certain_p99_miss) where one
      // that passes runs to the end: starting at or below the answer costs less.
      const auto guess =
          static_cast<int64_t>(std::floor(static_cast<double>(prev->second) * scale));
      // The previous answer was the smallest passing size, so every smaller one failed;
      // under a load no lower and an SLO no looser they fail again.
      if (carry_failures) search.lower_bound = std::max(search.lower_bound, prev->second);
      search.start = std::max(search.lower_bound, guess);
      search.first_step = 1;
    }
    const auto t0 = std::chrono::steady_clock::now();
    const PlanRow row = session.search_size(type, search);
    if (options.trace) {
      char line[512];
      std::snprintf(line, sizeof line,
                    "%s: start %lld, lower bound %lld -> %lld instances, %lld simulations, "
                    "%.3f s",
                    types[i]->id.c_str(), static_cast<long long>(search.start),
                    static_cast<long long>(search.lower_bound),
                    static_cast<long long>(row.num_instances),
                    static_cast<long long>(row.num_simulations), seconds_since(t0));
      options.trace(line);
    }
    finish_row(i, row);
  };
  auto work = [&](const std::vector<size_t>& order) {
    for (const size_t first : order) {
      if (claimed[group_of[first]].exchange(true)) continue;
      for (const size_t i : members[group_of[first]]) {
        if (cancelled() || failed.load()) return;
        try {
          search_type(i);
        } catch (...) {
          failed = true;  // the other walks stop; parallel_for rethrows the first failure
          throw;
        }
      }
    }
  };
  const int threads =
      std::max(1, std::min<int>(options.plan.num_threads > 0
                                    ? options.plan.num_threads
                                    : static_cast<int>(std::thread::hardware_concurrency()),
                                static_cast<int>(queue.size())));
  // One walk per thread: walk 1 takes the largest-first order, every other walk the
  // cheapest-first one.
  try {
    base::parallel_for(static_cast<size_t>(threads), threads,
                       [&](size_t walk) { work(walk == 1 ? largest_first : queue); });
  } catch (const Cancelled&) {
    return cancelled_result();
  }
  if (cancelled()) return cancelled_result();
  WhatIfResult out;
  for (const PlanRow& r : rows) out.num_simulations += r.num_simulations;
  out.rows = std::move(rows);
  out.tco = std::move(tcos);
  out.workload = session.summary();
  return out;
}

WarmStart read_warm_start(const std::filesystem::path& path) {
  const std::string file = path.string();
  const nlohmann::json doc = base::read_json_file(path);
  if (!doc.is_object()) {
    throw base::InputError::bad_document(file, "a plan JSON object (llmcap plan --json)",
                                         doc.dump().substr(0, 40));
  }
  const base::JsonReader top(doc, file, "");
  if (!top.has("results")) top.fail_missing("results", "expected the rows of llmcap plan --json");
  const nlohmann::json& results = top.array("results", "an array of plan rows");
  WarmStart warm;
  for (size_t i = 0; i < results.size(); ++i) {
    const base::JsonReader row = top.element("results", i, "a plan row object");
    if (!row.boolean("feasible")) continue;
    const std::string id = row.non_empty_string("instance_type");
    warm.sizes[id] = row.positive_int("num_instances");
    warm.usd_per_hour[id] = row.non_negative_number("usd_per_hour");
  }
  return warm;
}

}  // namespace llmcap::plan
