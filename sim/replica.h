// The state of one replica and of the sequences it serves (internal to the simulator): the
// waiting queue, the running list in admission order, the decoding sequences in aggregate
// (a decode step costs O(1), not O(batch)), the KV cache and the time series.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <queue>
#include <utility>
#include <vector>

#include "model/step_time.h"
#include "sim/fleet_config.h"
#include "sim/id_deque.h"
#include "sim/kv_cache.h"
#include "sim/prefix_cache.h"
#include "sim/prefix_keys.h"
#include "sim/sim_result.h"
#include "sim/sim_time.h"
#include "sim/time_series.h"

namespace llmcap::sim {

class BatchPolicy;

/// kMigrating: prefilled on a prefill replica (which still holds its KV), waiting in a decode
/// replica's queue to be pulled; kTransferring: pulled, its KV on the wire.
enum class SeqState : uint8_t {
  kWaiting,
  kPrefilling,
  kDecoding,
  kFinished,
  kMigrating,
  kTransferring
};

/// Simulation-side state of one request (its RequestRecord holds the reported fields).
///
/// A decoding sequence is not touched by the steps it takes part in: all decoding sequences of
/// a replica advance together, so its emitted tokens are num_emitted + (the replica's decode
/// counter - join_step) and its context (prompt + emitted) is offset + counter, where offset =
/// prompt + num_emitted - join_step is fixed while it decodes. Hence a step costs O(1), not
/// O(batch).
struct Sequence {
  int64_t num_prompt_tokens = 0;
  int64_t num_output_tokens = 0;
  /// Output tokens emitted; while decoding, those emitted when it joined at join_step.
  int64_t num_emitted = 0;
  int64_t prefill_target = 0;  ///< tokens of its current prefill (prompt + emitted at admission)
  int64_t num_prefilled = 0;   ///< of prefill_target, those scheduled so far
  int64_t join_step = 0;       ///< replica decode counter when it started decoding
  int64_t admit_order = -1;    ///< replica admission counter at its (last) admission
  int64_t prev = -1;           ///< running list (admission order) links
  int64_t next = -1;
  int64_t user = -1;             ///< closed-loop user, or -1
  SimTime last_token;            ///< time of its last token (while decoding: as of join_step)
  int32_t replica = -1;          ///< where it is served now (a decode replica once migrated)
  int32_t prefill_replica = -1;  ///< disaggregated: the prefill replica holding its KV in transit
  SeqState state = SeqState::kWaiting;
  bool scheduled = false;
  bool in_step = false;  ///< has a prefill chunk in the step in flight
  /// Decoding, bit g: its layers of window group g (KvLayout::windows) still take a block at
  /// its next block boundary (Replica::window_growth).
  uint32_t window_growing = 0;
  // Prefix caching (Replica::prefix_cache): its blocks' keys, and, while admitted, its units.
  PrefixIdentity prefix;
  int64_t unit_tokens = 0;  ///< tokens of one cache unit on its replica; 0: nothing cached
  /// Its first units (matched at admission or completed by its prefill so far): the cache
  /// entry it holds for each, or -1 for a unit it keeps privately (its key was already cached).
  std::vector<int32_t> units;
  /// Engine::unit_keys' cache: its units' keys for units of unit_keys_tokens tokens.
  mutable std::vector<uint64_t> unit_keys;
  mutable int64_t unit_keys_tokens = 0;

  int64_t offset() const { return num_prompt_tokens + num_emitted - join_step; }
};

/// A heap entry: the decoding sequence `id` admitted as `admit_order` emits its last token at
/// the end of the decode step that brings the counter to finish_step. Stale once the sequence
/// is preempted (its admit_order changes or it stops decoding).
struct Finish {
  int64_t finish_step;
  int64_t admit_order;
  int64_t id;
  bool operator>(const Finish& o) const {
    return finish_step != o.finish_step ? finish_step > o.finish_step : admit_order > o.admit_order;
  }
};

/// Sliding maximum of the decode-step gaps, each keyed by the decode counter at the start of
/// its step (the gap: the step's end minus the previous decode step's end), for queries over
/// keys >= l: a deque of (k, g_k) with decreasing g, so the answer is the first entry with
/// index >= l. Entries below every live query are dropped.
class GapMax {
 public:
  void push(int64_t k, int64_t gap_ns) {
    while (!entries_.empty() && entries_.back().second <= gap_ns) entries_.pop_back();
    entries_.emplace_back(k, gap_ns);
  }
  /// Largest g_k with k >= l (pushed so far); 0 when none.
  int64_t max_from(int64_t l) const {
    const auto it = std::lower_bound(
        entries_.begin(), entries_.end(), l,
        [](const std::pair<int64_t, int64_t>& e, int64_t value) { return e.first < value; });
    return it == entries_.end() ? 0 : it->second;
  }
  void drop_below(int64_t l) {
    while (!entries_.empty() && entries_.front().first < l) entries_.pop_front();
  }
  void clear() { entries_.clear(); }

 private:
  std::deque<std::pair<int64_t, int64_t>> entries_;
};

/// One replica of the fleet: its engine limits, predictor and policy, and everything it holds.
struct Replica {
  Replica(const ReplicaGroup& group, const BatchPolicy& batch_policy,
          int64_t time_series_interval_ns)
      : serving(group.serving),
        predictor(group.predictor),
        policy(&batch_policy),
        role(group.role),
        network_bandwidth_bytes_per_s(group.network_bandwidth_bytes_per_s),
        network_latency(SimTime::Seconds(group.network_latency_s)),
        kv(group.serving.block_size_tokens, group.serving.num_kv_blocks, group.serving.kv_layout),
        phase_counts(group.serving.block_size_tokens),
        series(time_series_interval_ns) {
    for (std::size_t g = 0; g < kv.layout.windows.size(); ++g) {
      window_growth.push_back({PhaseCounts(kv.block_size_tokens), {}});
    }
    if (serving.prefix_caching && !kv.windowed && role == ReplicaRole::kUnified) {
      prefix_cache.emplace();
      if (serving.kv_offload.num_host_blocks > 0) host_cache.emplace();
    }
    if (serving.speculative.num_draft_tokens > 0) {
      advance_scaled =
          std::llround(serving.speculative.tokens_per_step() * static_cast<double>(kAdvanceScale));
    }
  }

  ServingConfig serving;
  const model::StepTimePredictor* predictor;
  /// Prices the steps of decode run-ahead (Engine::run_decodes_ahead); null without it.
  std::unique_ptr<model::DecodeRunPricer> run_pricer;
  const BatchPolicy* policy;  ///< serving.policy's implementation (batch_policy.h)
  ReplicaRole role;
  double network_bandwidth_bytes_per_s;
  SimTime network_latency;
  KvCache kv;
  int32_t pool = 0;        ///< index of its pool (Engine::pools_)
  int32_t pool_index = 0;  ///< its position in that pool
  // Disaggregation.
  SimTime link_free;               ///< its network link is busy until then (FIFO transfers)
  int64_t num_incoming = 0;        ///< pulled KV transfers on their way here (blocks reserved)
  std::vector<int64_t> landed;     ///< transfers that landed while a step was in flight
  std::vector<int64_t> migrating;  ///< scratch: prefilled in the step that just ended

  IdDeque waiting;  ///< FCFS; preempted sequences rejoin at the front
  /// Sum over `waiting` of ceil(KV tokens / block): a prefill's tokens, or the KV a migrating
  /// sequence brings.
  int64_t waiting_blocks = 0;
  // Running sequences (admitted, holding KV), a linked list in admission order.
  int64_t running_head = -1;
  int64_t running_tail = -1;
  int64_t num_running = 0;
  int64_t next_admit_order = 0;
  std::vector<int64_t> prefilling;     ///< partially prefilled (chunked), admission order
  std::vector<int64_t> step_prefills;  ///< prefill chunks of the step in flight, admission order
  bool step_has_decodes = false;       ///< the step in flight advances every decoding sequence
  // Decoding sequences, in aggregate.
  int64_t num_decoders = 0;
  /// Sum of their prompt + emitted tokens (with speculative decoding, a sequence that emitted
  /// its last token within a step counts the step's whole advance until it leaves).
  int64_t decode_context_tokens = 0;
  /// Decode counter: the tokens each decoding sequence has advanced by (one per decode step;
  /// with speculative decoding, each step's advance).
  int64_t num_decode_steps = 0;
  int64_t num_decode_passes = 0;  ///< decode steps run so far
  int64_t step_advance = 0;       ///< tokens each decoder emits in the decode step in flight
  /// Speculative decoding: the expected tokens per decode step (SpeculativeConfig::
  /// tokens_per_step) x kAdvanceScale, rounded; kAdvanceScale without it.
  int64_t advance_scaled = kAdvanceScale;
  static constexpr int64_t kAdvanceScale = int64_t{1} << 20;
  /// Tokens each decoder emits in decode step `pass` (0-based): the integer steps of
  /// floor(pass x tokens per step), which average to tokens per step (all decoders alike).
  int64_t decode_advance(int64_t pass) const {
    return ((pass + 1) * advance_scaled) / kAdvanceScale - (pass * advance_scaled) / kAdvanceScale;
  }
  SimTime last_decode_end;  ///< end of the last decode step
  std::priority_queue<Finish, std::vector<Finish>, std::greater<>> finishes;
  std::vector<std::pair<int64_t, int64_t>> new_decoders;  ///< (id, admit_order) before 1st decode
  PhaseCounts phase_counts;  ///< decoders by floor_mod(offset, block size)
  /// Per window group of kv.layout: the decoders whose window layers still grow, by phase, and
  /// the decode counter at which each stops (its context passes window_blocks x block size;
  /// stale entries as in `finishes`).
  struct WindowGrowth {
    PhaseCounts growing;
    std::priority_queue<Finish, std::vector<Finish>, std::greater<>> stops;
  };
  std::vector<WindowGrowth> window_growth;
  GapMax gaps;
  std::vector<std::pair<int64_t, int64_t>> finishing;  ///< scratch: (admit_order, id)
  std::vector<int64_t> first_gaps;                     ///< scratch: gaps of new decoders (ns)

  /// The prefix cache (ServingConfig::prefix_caching on a unified replica whose KV layout
  /// has no sliding windows); kv.num_free_blocks counts its evictable blocks as free.
  std::optional<PrefixCache> prefix_cache;
  PrefixCacheStats prefix_stats;
  /// KV offload (ServingConfig::kv_offload, with a prefix cache): the host tier, every entry
  /// evictable (refcount 0), its blocks at most kv_offload.num_host_blocks; a key is in at
  /// most one of prefix_cache and host_cache.
  std::optional<PrefixCache> host_cache;
  double step_load_s = 0;  ///< the step being composed or in flight: seconds of host loads

  bool busy = false;  ///< a step is in flight
  bool schedule_pending = false;
  int64_t num_outstanding = 0;  ///< routed here and not finished
  WindowRecorder series;
};

}  // namespace llmcap::sim
