// Latency and throughput metrics of a simulation (definitions: docs/metrics.md).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/simulator.h"

namespace llmcap::sim {

/// Summary of one metric over requests (or, for ITL, over token gaps). Quantiles use the
/// nearest-rank rule: the q-quantile of n sorted values is value[ceil(q*n) - 1].
struct Distribution {
  int64_t count = 0;
  double mean_s = 0, p50_s = 0, p90_s = 0, p99_s = 0, max_s = 0;
};

/// Nearest-rank summary of `values_s` (any order). All zeros when empty.
Distribution summarize_values(std::vector<double> values_s);

/// A per-request latency objective: a request meets it when its TTFT <= ttft_s and its TPOT
/// <= tpot_s. The fleet-level objective (used by the planner) is that the p99 of each is
/// within its bound.
struct Slo {
  double ttft_s = 0;
  double tpot_s = 0;
};

struct Metrics {
  Distribution ttft;            ///< first_token - arrival
  Distribution tpot;            ///< (completion - first_token) / (output - 1), output >= 2
  Distribution itl;             ///< gaps between consecutive output tokens
  Distribution e2e_latency;     ///< completion - arrival
  Distribution queueing_delay;  ///< first_scheduled - arrival
  int64_t num_requests = 0;
  int64_t num_completed = 0;
  int64_t num_rejected = 0;
  int64_t num_preemptions = 0;
  double duration_s = 0;  ///< first arrival to last completion
  double throughput_requests_per_s = 0;
  double throughput_output_tokens_per_s = 0;
  double goodput_requests_per_s = 0;  ///< completed requests meeting the SLO per second
  double slo_attainment = 0;          ///< fraction of requests meeting the SLO
  /// Prefix caching: prompt tokens of the completed requests, and of those the tokens their
  /// first admission found in the prefix cache (RequestRecord::num_cached_prompt_tokens).
  int64_t num_prompt_tokens = 0;
  int64_t num_cached_prompt_tokens = 0;
  /// num_cached_prompt_tokens / num_prompt_tokens (0 without prefix caching).
  double prefix_cache_hit_rate = 0;
  /// compute_metrics only (0 per class): over every replica's SimResult::prefix_cache, prefill
  /// tokens not computed because the cache held them (recomputes included) and cached blocks
  /// evicted.
  int64_t num_saved_prefill_tokens = 0;
  int64_t num_evicted_blocks = 0;
  /// compute_metrics only, KV offload (0 when off): of num_saved_prefill_tokens, those loaded
  /// from the host tier, and the seconds those loads added to steps (all replicas together).
  int64_t num_kv_offload_loaded_tokens = 0;
  double kv_offload_load_s = 0;
};

/// Metrics of a whole run against one SLO (definitions: docs/metrics.md). Throws
/// std::invalid_argument for a run that stopped early (SimResult::stopped_early).
Metrics compute_metrics(const SimResult& result, const Slo& slo);

/// Metrics of each client class against its own SLO: element c covers the requests with
/// client_class == c, judged by class_slos[c] (a request meets it when TTFT <= ttft_s and,
/// with >= 2 output tokens, TPOT <= tpot_s; rejected requests never do). Classes are taken
/// from the offered workload, not from the records: result.requests[i] is the record of
/// workload.open_loop[i] (the simulator numbers requests in arrival order, ties in input
/// order, and an open loop from load_trace, generate_arrivals or merge_client_classes is
/// sorted); a closed loop is all class 0.
///
/// Per class: latency distributions, counts (num_requests, num_completed, num_rejected),
/// num_preemptions (summed over the class's records), slo_attainment (class requests meeting
/// the class SLO / class requests). Rates (throughput_*, goodput_requests_per_s) are divided
/// by the duration of the whole run (first arrival to last completion over every class), so
/// the classes' rates add up to the fleet's and are comparable; duration_s is that duration.
/// ITL is left empty (count 0): SimResult::itl_ns does not say which request a gap belongs
/// to.
///
/// Throws std::invalid_argument for a run that stopped early; InputError when class_slos is
/// empty, when a request's client_class is negative or >= class_slos.size() ("request i:
/// client_class c: expected 0 to n-1"), or when the result does not belong to the workload (a
/// different number of requests, or record i's arrival or prompt length differs from open_loop[i]).
std::vector<Metrics> compute_class_metrics(const SimResult& result, const Workload& workload,
                                           const std::vector<Slo>& class_slos);

}  // namespace llmcap::sim
