#include "sim/metrics.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

#include "base/stats.h"
#include "sim/input_error.h"

namespace llmcap::sim {
namespace {

/// Nearest-rank p50/p90/p99 and max of `values` (reordered in place; non-empty) into `d`,
/// converted by `to_s`. Selection instead of a full sort: O(n), and each quantile is the exact
/// nearest-rank value. Ranks are found in ascending order, each over the part above the last.
template <typename T, typename ToSeconds>
void select_quantiles(std::vector<T>& values, Distribution& d, ToSeconds to_s) {
  auto from = values.begin();
  for (const auto& [percent, out] :
       {std::pair<int64_t, double*>{50, &d.p50_s}, std::pair<int64_t, double*>{90, &d.p90_s},
        std::pair<int64_t, double*>{99, &d.p99_s}}) {
    const auto at = values.begin() + base::nearest_rank_index(d.count, percent);
    std::nth_element(from, at, values.end());
    *out = to_s(*at);
    from = at;
  }
  d.max_s = to_s(*std::max_element(from, values.end()));
}

/// The ITL summary of `items`, each `count_of(item)` gaps of `gap_of(item)` ns (one per token:
/// SimResult::itl_ns; or runs: SimResult::itl_runs), exact as a sort of every gap would give
/// it, without copying them: one pass for the count, sum, minimum and maximum, one for a
/// histogram of 2^16 buckets over [min, max] that finds the bucket of each rank, then one pass
/// per distinct bucket of p50, p90 and p99 (at most three) that gathers that bucket's items
/// and selects in them (nth_element when each item is one gap, else a sort and a walk of the
/// counts). The sum is exact in integer nanoseconds.
template <typename Item, typename GapOf, typename CountOf>
Distribution summarize_gaps(const std::vector<Item>& items, GapOf gap_of, CountOf count_of) {
  Distribution d;
  int64_t sum_ns = 0;
  int64_t min_ns = INT64_MAX;
  int64_t max_ns = INT64_MIN;
  for (const Item& item : items) {
    const int64_t g = gap_of(item);
    const int64_t n = count_of(item);
    if (n <= 0) continue;
    d.count += n;
    sum_ns += g * n;
    min_ns = std::min(min_ns, g);
    max_ns = std::max(max_ns, g);
  }
  if (d.count == 0) return d;
  const auto to_s = [](int64_t ns) { return SimTime::Nanoseconds(ns).seconds(); };
  d.mean_s = to_s(sum_ns) / static_cast<double>(d.count);
  d.max_s = to_s(max_ns);
  constexpr int kBucketBits = 16;
  const auto range = static_cast<uint64_t>(max_ns) - static_cast<uint64_t>(min_ns);
  int shift = 0;
  while ((range >> shift) >= (uint64_t{1} << kBucketBits)) ++shift;
  const auto bucket_of = [&](int64_t g) {
    return static_cast<size_t>((static_cast<uint64_t>(g) - static_cast<uint64_t>(min_ns)) >> shift);
  };
  thread_local std::vector<int64_t> counts;
  counts.assign(size_t{1} << kBucketBits, 0);
  for (const Item& item : items) {
    if (count_of(item) > 0) counts[bucket_of(gap_of(item))] += count_of(item);
  }
  // Each rank's bucket and its rank among that bucket's gaps (ranks ascend: one walk).
  struct Wanted {
    double* out;
    int64_t rank;
    size_t bucket = 0;
    int64_t rank_in_bucket = 0;
  };
  Wanted wanted[] = {{&d.p50_s, base::nearest_rank_index(d.count, 50)},
                     {&d.p90_s, base::nearest_rank_index(d.count, 90)},
                     {&d.p99_s, base::nearest_rank_index(d.count, 99)}};
  size_t b = 0;
  int64_t below = 0;  // gaps in buckets before b
  for (Wanted& w : wanted) {
    while (below + counts[b] <= w.rank) below += counts[b++];
    w.bucket = b;
    w.rank_in_bucket = w.rank - below;
  }
  thread_local std::vector<GapRun> in_bucket;
  for (size_t i = 0; i < std::size(wanted); ++i) {
    if (i > 0 && wanted[i].bucket == wanted[i - 1].bucket) continue;  // done with i - 1
    in_bucket.clear();
    for (const Item& item : items) {
      if (count_of(item) > 0 && bucket_of(gap_of(item)) == wanted[i].bucket) {
        in_bucket.push_back({gap_of(item), count_of(item)});
      }
    }
    const auto by_gap = [](const GapRun& a, const GapRun& b) { return a.gap_ns < b.gap_ns; };
    const auto in_bucket_count = static_cast<int64_t>(counts[wanted[i].bucket]);
    if (in_bucket_count == static_cast<int64_t>(in_bucket.size())) {  // one gap an item
      for (size_t j = i; j < std::size(wanted) && wanted[j].bucket == wanted[i].bucket; ++j) {
        const auto at = in_bucket.begin() + wanted[j].rank_in_bucket;
        std::nth_element(in_bucket.begin(), at, in_bucket.end(), by_gap);
        *wanted[j].out = to_s(at->gap_ns);
      }
      continue;
    }
    std::sort(in_bucket.begin(), in_bucket.end(), by_gap);
    for (size_t j = i; j < std::size(wanted) && wanted[j].bucket == wanted[i].bucket; ++j) {
      int64_t seen = 0;
      for (const GapRun& run : in_bucket) {
        seen += run.count;
        if (seen > wanted[j].rank_in_bucket) {
          *wanted[j].out = to_s(run.gap_ns);
          break;
        }
      }
    }
  }
  if (in_bucket.capacity() > (size_t{1} << 22)) std::vector<GapRun>().swap(in_bucket);
  return d;
}

}  // namespace

Distribution summarize_values(std::vector<double> values_s) {
  Distribution d;
  if (values_s.empty()) return d;
  d.count = static_cast<int64_t>(values_s.size());
  double sum = 0;
  for (const double v : values_s) sum += v;  // in the given (deterministic) order
  d.mean_s = sum / static_cast<double>(d.count);
  select_quantiles(values_s, d, [](double v) { return v; });
  return d;
}

namespace {

/// Latencies, counts and SLO attainment over the records with class_of(i) == wanted (every
/// record when class_of is null), judged by `slo`; rates over `duration_s`.
Metrics metrics_over(const SimResult& result, const std::vector<int32_t>* class_of, int32_t wanted,
                     const Slo& slo, double duration_s) {
  Metrics m;
  std::vector<double> ttft, tpot, e2e, queueing;
  int64_t num_meeting_slo = 0;
  int64_t num_output_tokens = 0;
  if (class_of == nullptr) {
    for (auto* v : {&ttft, &tpot, &e2e, &queueing}) v->reserve(result.requests.size());
  }
  for (size_t i = 0; i < result.requests.size(); ++i) {
    if (class_of != nullptr && (*class_of)[i] != wanted) continue;
    const RequestRecord& r = result.requests[i];
    ++m.num_requests;
    m.num_preemptions += r.num_preemptions;
    if (r.rejected) {
      ++m.num_rejected;
      continue;  // no latencies; never meets the SLO
    }
    ++m.num_completed;
    num_output_tokens += r.num_output_tokens;
    m.num_prompt_tokens += r.num_prompt_tokens;
    m.num_cached_prompt_tokens += r.num_cached_prompt_tokens;
    const double ttft_s = (r.first_token - r.arrival).seconds();
    ttft.push_back(ttft_s);
    e2e.push_back((r.completion - r.arrival).seconds());
    queueing.push_back((r.first_scheduled - r.arrival).seconds());
    bool meets = ttft_s <= slo.ttft_s;
    if (r.num_output_tokens >= 2) {
      const double tpot_s =
          (r.completion - r.first_token).seconds() / static_cast<double>(r.num_output_tokens - 1);
      tpot.push_back(tpot_s);
      meets = meets && tpot_s <= slo.tpot_s;
    }
    if (meets) ++num_meeting_slo;
  }
  m.ttft = summarize_values(std::move(ttft));
  m.tpot = summarize_values(std::move(tpot));
  m.e2e_latency = summarize_values(std::move(e2e));
  m.queueing_delay = summarize_values(std::move(queueing));
  m.duration_s = duration_s;
  if (m.num_requests > 0) {
    m.slo_attainment = static_cast<double>(num_meeting_slo) / static_cast<double>(m.num_requests);
  }
  if (m.num_prompt_tokens > 0) {
    m.prefix_cache_hit_rate =
        static_cast<double>(m.num_cached_prompt_tokens) / static_cast<double>(m.num_prompt_tokens);
  }
  if (duration_s > 0) {
    m.throughput_requests_per_s = static_cast<double>(m.num_completed) / duration_s;
    m.throughput_output_tokens_per_s = static_cast<double>(num_output_tokens) / duration_s;
    m.goodput_requests_per_s = static_cast<double>(num_meeting_slo) / duration_s;
  }
  return m;
}

/// First arrival to last completion over every record; 0 without records.
double run_duration_s(const SimResult& result) {
  if (result.requests.empty()) return 0;
  SimTime first_arrival = SimTime::Max();
  SimTime last_completion = SimTime::Zero();
  for (const RequestRecord& r : result.requests) {
    first_arrival = std::min(first_arrival, r.arrival);
    last_completion = std::max(last_completion, r.completion);
  }
  return (last_completion - first_arrival).seconds();
}

std::string to_text(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

}  // namespace

namespace {

/// compute_metrics and compute_class_metrics need every request finished.
void refuse_stopped(const SimResult& result, const char* function) {
  if (result.stopped_early) {
    throw std::invalid_argument(std::string(function) +
                                ": the run stopped early (SimOptions::stop_at_certain_p99_miss; " +
                                result.stop_reason + "); its records are incomplete");
  }
}

}  // namespace

Metrics compute_metrics(const SimResult& result, const Slo& slo) {
  refuse_stopped(result, "compute_metrics");
  Metrics m = metrics_over(result, nullptr, 0, slo, run_duration_s(result));
  m.num_preemptions = result.num_preemptions;
  for (const PrefixCacheStats& replica : result.prefix_cache) {
    m.num_saved_prefill_tokens += replica.num_saved_prefill_tokens;
    m.num_evicted_blocks += replica.num_evicted_blocks;
    m.num_kv_offload_loaded_tokens += replica.num_loaded_tokens;
    m.kv_offload_load_s += replica.load_s;
  }
  m.itl = !result.itl_runs.empty()
              ? summarize_gaps(
                    result.itl_runs, [](const GapRun& r) { return r.gap_ns; },
                    [](const GapRun& r) { return r.count; })
              : summarize_gaps(
                    result.itl_ns, [](int64_t g) { return g; }, [](int64_t) { return int64_t{1}; });
  return m;
}

std::vector<Metrics> compute_class_metrics(const SimResult& result, const Workload& workload,
                                           const std::vector<Slo>& class_slos) {
  refuse_stopped(result, "compute_class_metrics");
  const std::string context = "compute_class_metrics: ";
  if (class_slos.empty()) {
    throw InputError(context + "class_slos: expected one SLO per client class, got none");
  }
  const auto num_classes = static_cast<int64_t>(class_slos.size());
  std::vector<int32_t> class_of(result.requests.size(), 0);
  if (!workload.closed_loop) {
    const std::vector<RequestSpec>& offered = workload.open_loop;
    if (offered.size() != result.requests.size()) {
      throw InputError(context + "the result has " + std::to_string(result.requests.size()) +
                       " requests, the workload " + std::to_string(offered.size()) +
                       "; expected the result of simulating this workload");
    }
    for (size_t i = 0; i < offered.size(); ++i) {
      const RequestRecord& r = result.requests[i];
      if (r.arrival != offered[i].arrival || r.num_prompt_tokens != offered[i].num_prompt_tokens) {
        throw InputError(context + "request " + std::to_string(i) + ": arrival " +
                         to_text(r.arrival.seconds()) + " s, prompt " +
                         std::to_string(r.num_prompt_tokens) +
                         " tokens in the result; expected the workload's arrival " +
                         to_text(offered[i].arrival.seconds()) + " s, prompt " +
                         std::to_string(offered[i].num_prompt_tokens) + " tokens");
      }
      const int32_t c = offered[i].client_class;
      if (c < 0 || c >= num_classes) {
        throw InputError(context + "request " + std::to_string(i) + ": client_class " +
                         std::to_string(c) + ": expected 0 to " + std::to_string(num_classes - 1) +
                         " (one SLO per class)");
      }
      class_of[i] = c;
    }
  }
  const double duration_s = run_duration_s(result);
  std::vector<Metrics> per_class;
  per_class.reserve(class_slos.size());
  for (int32_t c = 0; c < static_cast<int32_t>(num_classes); ++c) {
    per_class.push_back(
        metrics_over(result, &class_of, c, class_slos[static_cast<size_t>(c)], duration_s));
  }
  return per_class;
}

}  // namespace llmcap::sim
