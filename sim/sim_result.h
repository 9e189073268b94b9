// What one simulation run reports: a record per request, the inter-token gaps, counts and the
// per-replica time series.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/sim_time.h"

namespace llmcap::sim {

/// What happened to one request. Times are absolute simulated times.
struct RequestRecord {
  int64_t id = 0;        ///< index in arrival order (per simulation)
  int64_t replica = -1;  ///< the replica it was routed to (in a disaggregated fleet: prefilled on)
  int32_t client_class = 0;  ///< RequestSpec::client_class (0 in a closed loop)
  /// Disaggregated fleets: the decode replica its KV cache moved to; -1 otherwise (also for a
  /// request done at the end of its prefill, with one output token).
  int32_t decode_replica = -1;
  SimTime arrival;
  SimTime first_scheduled;  ///< start of the step that first ran (a chunk of) its prefill
  SimTime first_token;      ///< end of the step that emitted its first output token
  SimTime completion;       ///< end of the step that emitted its last output token
  int64_t num_prompt_tokens = 0;
  int64_t num_output_tokens = 0;
  int64_t num_preemptions = 0;  ///< times its KV cache was freed and recomputed
  SimTime max_itl;              ///< largest gap between two consecutive output tokens
  bool rejected = false;        ///< prompt + output can never fit in any replica's KV cache
  /// Disaggregated fleets (decode_replica >= 0): when the decode replica pulled its KV cache
  /// (reserved the blocks and asked for the transfer) and when the KV landed there. The
  /// transfer takes latency + bytes / bandwidth after any transfer queued before it on either
  /// end's link (see simulate()). Zero otherwise.
  SimTime kv_transfer_start;
  SimTime kv_transfer_end;
  /// Prefix caching (ServingConfig::prefix_caching): tokens of its prompt whose KV its first
  /// admission found in the replica's prefix cache (not computed). 0 without prefix caching.
  int64_t num_cached_prompt_tokens = 0;
};

/// One replica's prefix cache over a run (ServingConfig::prefix_caching).
struct PrefixCacheStats {
  int64_t num_prompt_tokens = 0;         ///< prompt tokens of the requests first admitted here
  int64_t num_cached_prompt_tokens = 0;  ///< of those, found in the cache at first admission
  /// Prefill tokens not computed because the cache held them, every admission counted (a
  /// recompute after a preemption included).
  int64_t num_saved_prefill_tokens = 0;
  int64_t num_evicted_blocks = 0;  ///< cached blocks taken back for other use
  // KV offload (ServingConfig::kv_offload; 0 when off): the host tier behind the cache.
  /// Of num_cached_prompt_tokens, those loaded from the host tier at first admission.
  int64_t num_host_cached_prompt_tokens = 0;
  /// Of num_saved_prefill_tokens, those loaded from the host tier, every admission counted.
  int64_t num_loaded_tokens = 0;
  int64_t num_loaded_blocks = 0;        ///< host blocks loaded back into the GPU cache
  int64_t num_offloaded_blocks = 0;     ///< evicted blocks copied to the host tier
  int64_t num_host_evicted_blocks = 0;  ///< host blocks dropped, least recently stored first
  /// Host blocks dropped because their unit was computed again into the GPU cache (a key is
  /// in at most one tier).
  int64_t num_host_dropped_blocks = 0;
  int64_t num_host_blocks = 0;  ///< blocks in the host tier at the end of the run
  double load_s = 0;            ///< seconds that loads added to steps
  /// num_cached_prompt_tokens / num_prompt_tokens (0 when nothing was admitted).
  double hit_rate() const {
    return num_prompt_tokens > 0 ? static_cast<double>(num_cached_prompt_tokens) /
                                       static_cast<double>(num_prompt_tokens)
                                 : 0.0;
  }
};

/// One window [start, end) of one replica's time series. Means are time averages over the
/// window (integrals of piecewise-constant signals, exact to the nanosecond), so a window
/// without a step boundary is still described; the last window ends at SimResult::end_time
/// and its means are over that shorter span.
struct InstanceWindow {
  SimTime start;
  SimTime end;
  int64_t num_steps = 0;           ///< steps that started in the window
  double mean_num_waiting = 0;     ///< requests routed here and not admitted (queue length)
  int64_t max_num_waiting = 0;     ///< largest queue length held for a positive time
  double mean_batch_size = 0;      ///< sequences in the step in flight (0 while idle)
  double mean_kv_utilization = 0;  ///< KV blocks held / num_kv_blocks
  double busy_fraction = 0;        ///< fraction of the window with a step in flight
};

/// `count` inter-token gaps of `gap_ns` nanoseconds each (SimResult::itl_runs).
struct GapRun {
  int64_t gap_ns = 0;
  int64_t count = 0;
  bool operator==(const GapRun&) const = default;
};

struct SimResult {
  std::vector<RequestRecord> requests;  ///< one per request, in id order
  /// Every inter-token gap (ns) of every request, each replica's in the order they happened
  /// (within one step in the replica's admission order; replicas interleave as
  /// SimOptions::decode_run_ahead leaves them). Used for ITL percentiles. Empty unless
  /// SimOptions::record_itl_ns.
  std::vector<int64_t> itl_ns;
  /// The same gaps as runs (SimOptions::record_itl_runs): gap_ns repeated count times, each
  /// replica's in the order they happened (replicas interleave as SimOptions::decode_run_ahead
  /// leaves them); consecutive equal gaps share a run. Empty unless recorded.
  std::vector<GapRun> itl_runs;
  SimTime end_time;  ///< completion of the last step
  int64_t num_steps = 0;
  /// Of num_steps, those ended (and the next composed) by decode run-ahead rather than by an
  /// event (SimOptions::decode_run_ahead): a measure of the simulator's own work, not of
  /// the simulated system.
  int64_t num_steps_run_ahead = 0;
  int64_t num_preemptions = 0;
  int64_t num_rejected = 0;
  int64_t num_kv_transfers = 0;   ///< disaggregated fleets: KV caches moved to decode replicas
  int64_t kv_transfer_bytes = 0;  ///< their bytes in all
  /// time_series[r][w]: window w of replica r, windows of SimOptions::time_series_interval
  /// from 0 to end_time (at least one). Empty when the interval is zero.
  std::vector<std::vector<InstanceWindow>> time_series;
  /// prefix_cache[r]: replica r's prefix cache; empty without prefix caching.
  std::vector<PrefixCacheStats> prefix_cache;
  /// SimOptions::stop_at_certain_p99_miss stopped the run at end_time: requests, itl_ns and
  /// the counts cover only what happened until then, the time series are empty, and
  /// compute_metrics refuses the result. stop_reason says which bound and why.
  bool stopped_early = false;
  std::string stop_reason;
  bool cancelled = false;  ///< stopped by SimOptions::cancel (then also stopped_early)
};

}  // namespace llmcap::sim
