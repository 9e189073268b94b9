// The state of one simulation run and the primitives that change it (internal to the
// simulator; the door is sim/simulator.h). Its member functions live by concept:
//   sim/simulator.cpp     the event loop: arrivals, routing, step start and step end, finishes
//   sim/replica.cpp       queues, the running list, admission, the decoding aggregate, decode
//                         steps with preemption, prefill chunks
//   sim/kv_transfer.cpp   disaggregation: migration to a decode replica, pulls, transfers
//   sim/conservation.cpp  the end-of-run conservation checks
// Batching policies (sim/batch_policy.h) compose steps with the public primitives below;
// routers (sim/router.h) choose replicas from the pools.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "model/step_time.h"
#include "sim/early_stop.h"
#include "sim/event_queue.h"
#include "sim/fleet_config.h"
#include "sim/random.h"
#include "sim/replica.h"
#include "sim/router.h"
#include "sim/sim_options.h"
#include "sim/sim_result.h"
#include "sim/workload.h"

namespace llmcap::sim {

/// One run. All state lives here: simulations on different threads share nothing.
class Engine {
 public:
  Engine(const Workload& workload, const FleetConfig& fleet,
         const std::vector<ReplicaGroup>& groups, uint64_t seed, const SimOptions& options);

  /// Runs every event and returns the result (the semantics are simulate()'s).
  SimResult run();

  // ---- primitives for the batching policies (sim/replica.cpp, sim/kv_transfer.cpp) ----------

  Sequence& sequence(int64_t id) { return sequences_[id]; }
  /// Preemptions so far in the run.
  int64_t num_preemptions() const { return result_.num_preemptions; }
  /// Tokens of a prefill of `seq`: its prompt plus, after a preemption, the tokens it emitted.
  static int64_t prefill_tokens(const Sequence& seq) {
    return seq.num_prompt_tokens + seq.num_emitted;
  }
  /// Whether the front of the queue is a migrating sequence (a decode replica's KV to pull).
  bool front_is_migrating(const Replica& replica) const {
    return sequences_[replica.waiting.front()].state == SeqState::kMigrating;
  }
  /// What admitting a waiting sequence takes on its replica.
  struct Admission {
    int64_t cached_tokens = 0;  ///< of its prefill, tokens found in the prefix cache
    int64_t loaded_tokens = 0;  ///< of cached_tokens, those in the host tier (KV offload)
    int64_t num_tokens = 0;     ///< of its prefill, tokens to compute (the rest)
    /// Free blocks it takes (KvCache::num_free_blocks): the new blocks of its whole prefill
    /// (those loaded from the host tier included) and the evictable cached ones it reuses.
    int64_t num_blocks = 0;
  };
  /// The admission of the front waiting sequence (to be checked against the limits, then
  /// passed to admit_front before any other admission is planned). Without prefix caching:
  /// nothing cached, the blocks of the whole prefill.
  Admission plan_admission(Replica& replica);
  /// Blocks admitting with a first chunk of `num_tokens` takes: admission.num_blocks, or with
  /// ServingConfig::allocate_per_chunk those of its cached tokens and the chunk only.
  int64_t first_chunk_blocks(const Replica& replica, const Admission& admission,
                             int64_t num_tokens) const;
  /// allocate_per_chunk: takes the blocks the next chunk of `num_tokens` of partially
  /// prefilled `id` needs. While they are short, the most recently admitted running sequence is
  /// preempted if it is a partial prefill with no chunk in the step, `id` itself included (as
  /// vLLM v1 preempts from the back, the request itself last); returns false when `id` was
  /// preempted or a decoding sequence (already in the step) is the newest: the chunk waits.
  bool grow_prefill(Replica& replica, SimTime now, int64_t id, int64_t num_tokens);
  /// Moves the front waiting sequence to the back of the running list as a prefill of
  /// prefill_tokens, of which `admission` (plan_admission's) is cached and `num_tokens` are
  /// its first chunk, taking admission.num_blocks free blocks.
  void admit_front(Replica& replica, SimTime now, int64_t num_tokens, const Admission& admission);
  /// Adds a prefill chunk of `num_tokens` after `num_cached` prefilled tokens of `id` to the
  /// step in flight and to its shape.
  void add_chunk(Replica& replica, model::BatchShape& shape, int64_t id, int64_t num_cached,
                 int64_t num_tokens);
  /// Every decoding sequence takes one token; those whose context crosses a block boundary
  /// take a new block, the most recently admitted running sequences being preempted until the
  /// blocks suffice. Equivalent to vLLM's oldest-first walk (each sequence short of a block
  /// preempts from the back, possibly itself): both keep the longest prefix of the running
  /// list whose new blocks fit in the free blocks plus those of the preempted suffix.
  void schedule_decodes(SimTime now, Replica& replica, model::BatchShape& shape);
  /// Pulls the migrating sequence at the front of the queue if a sequence slot (max_num_seqs,
  /// counting transfers in flight) and the blocks of its KV are free: reserves the blocks and
  /// starts the transfer of prompt x kv_bytes_per_token bytes. The transfer waits for both
  /// links to be free (each link carries one transfer at a time, FIFO), holds them for bytes /
  /// min(bandwidths) and lands max(latencies) later.
  bool try_pull_front(Replica& replica, SimTime now);

 private:
  // ---- the event loop (sim/simulator.cpp) ---------------------------------------------------
  void start_open_loop();
  void schedule_open_arrival(size_t position);
  void start_closed_loop();
  void schedule_user_request(int64_t user, SimTime time);
  void on_arrival(SimTime now, int64_t target);
  /// Request `id` (arrived, recorded) reaches the engine: refused when it fits nowhere, else
  /// routed and queued.
  void admit(SimTime now, int64_t id);
  void add_outstanding(Replica& replica, int64_t delta);
  int64_t route(Pool& pool, int64_t tokens, int64_t id);
  void maybe_schedule(int64_t r, SimTime now);
  bool has_step_work(const Replica& replica) const;
  void on_schedule(SimTime now, int64_t r);
  void on_step_done(SimTime now, int64_t r);
  bool can_run_ahead(const Replica& replica, const model::BatchShape& shape) const;
  SimTime run_decodes_ahead(Replica& replica, model::BatchShape& shape, SimTime end);
  void emit_decode_tokens(Replica& replica, SimTime now);
  void emit_prefill_tokens(Replica& replica, SimTime now);
  void finish(Replica& replica, int64_t id, SimTime now);
  void user_done(int64_t user, SimTime now);
  void check_closed_loop_requests(SimTime now) const;
  SimResult stop(SimTime now, std::string reason);
  void collect_prefix_stats();

  // ---- queues, running list, decoders (sim/replica.cpp) -------------------------------------
  int64_t waiting_kv_tokens(const Sequence& seq) const;
  void push_waiting(Replica& replica, int64_t id, SimTime now, bool front, SeqState state);
  void link_running(Replica& replica, int64_t id);
  void unlink_running(Replica& replica, int64_t id);
  static int64_t phase_of(const Replica& replica, const Sequence& seq);
  static int64_t needing_phase(const Replica& replica, int64_t k);
  int64_t window_units_needed(Replica& replica, int64_t k, int64_t phase);
  int64_t units_needed(Replica& replica, int64_t k, int64_t advance);
  /// SimResult::itl_runs gains `count` gaps of `gap_ns`: the last run grows when its gap is
  /// the same (a decode run of equal steps keeps one run).
  void add_gap_run(int64_t gap_ns, int64_t count) {
    std::vector<GapRun>& runs = result_.itl_runs;
    if (!runs.empty() && runs.back().gap_ns == gap_ns) {
      runs.back().count += count;
    } else {
      runs.push_back({gap_ns, count});
    }
  }
  static void set_decode_context(const Replica& replica, int64_t context_tokens,
                                 model::BatchShape& shape);
  int64_t decoder_emitted(const Replica& replica, const Sequence& seq) const;
  void join_decoders(Replica& replica, int64_t id);
  int64_t leave_decoders(Replica& replica, int64_t id);
  int64_t preempt_last(Replica& replica, SimTime now);
  // ---- prefix caching (sim/replica.cpp) -----------------------------------------------------
  std::span<const uint64_t> unit_keys(const Sequence& seq, int64_t num_units, int64_t unit_tokens);
  int64_t cached_prefix_tokens(const Replica& replica, const Sequence& seq);
  void order_by_prefix(Replica& replica);
  std::vector<std::pair<int64_t, int64_t>> order_scratch_;  ///< order_by_prefix()
  /// run_decodes_ahead(): a run's GapMax entries, pushed to the replica's at its end.
  std::vector<std::pair<int64_t, int64_t>> gap_entries_;
  std::vector<int64_t> ids_scratch_;
  void take_blocks(Replica& replica, int64_t num_blocks);
  void insert_prefilled_units(Replica& replica, Sequence& seq);
  void release_blocks(Replica& replica, Sequence& seq, int64_t num_blocks, int64_t kv_tokens);
  // ---- KV offload (sim/replica.cpp) ---------------------------------------------------------
  void load_planned_units(Replica& replica, Sequence& seq);
  void offload_unit(Replica& replica, uint64_t key, int64_t num_blocks);
  int32_t insert_gpu_unit(Replica& replica, uint64_t key, int64_t num_blocks, int64_t refcount);
  void drop_stale_gaps(Replica& replica);

  // ---- disaggregation (sim/kv_transfer.cpp) -------------------------------------------------
  void migrate(Replica& prefill, int64_t id, SimTime now);
  void pull_transfers(Replica& replica, SimTime now);
  void on_transfer_done(SimTime now, int64_t id);
  void land(Replica& decode, int64_t id);

  // ---- end of run (sim/conservation.cpp) ----------------------------------------------------
  void check_conservation() const;
  void check_host_tier(const Replica& replica) const;

  struct User {
    RequestSpec next;  ///< the request it will send at its pending arrival (arrival unset)
    Session session;   ///< its conversation (ClosedLoopWorkload::sessions)
  };

  const Workload& workload_;
  const FleetConfig& fleet_;
  const SimOptions& options_;
  const bool disaggregated_;  ///< prefill and decode pools
  RandomStream start_stream_;
  RandomStream think_stream_;
  RandomStream lengths_stream_;
  std::optional<SessionTurns> session_turns_;  ///< closed loop with sessions
  EventQueue events_;
  std::vector<Replica> replicas_;
  std::vector<Pool> pools_;  ///< [0]: arrivals (all, or the prefill pool); [1]: decode pool
  std::vector<User> users_;
  std::vector<int64_t> open_order_;  ///< open-loop request indices in arrival order
  /// SimOptions::decode_run_ahead, where it is exact: an open loop with no front-end latency
  /// on unified replicas with no time series (nothing but an arrival reaches a replica from
  /// outside, and arrivals are known in advance).
  bool run_ahead_ = false;
  SimTime next_arrival_ = SimTime::Max();  ///< the next open-loop arrival (Max: none left)
  std::vector<Sequence> sequences_;        ///< by request id, parallel to result_.requests
  static constexpr uint32_t kCancelPollEvents = 4096;  ///< SimOptions::cancel
  uint32_t work_since_poll_ = 0;    ///< events and steps run ahead since the last poll
  P99EarlyStop early_stop_;         ///< SimOptions::stop_at_certain_p99_miss
  int64_t num_emitted_tokens_ = 0;  ///< counted step by step, checked against the requests
  /// Speculative decoding: tokens emitted after the first of their step's chunk (no ITL gap).
  int64_t num_tokens_in_chunks_ = 0;
  std::vector<uint64_t> key_scratch_;   ///< unit_keys()
  std::vector<int32_t> planned_units_;  ///< plan_admission(): the cache entries it matched
  /// plan_admission(), per matched unit: -1, or its host-tier entry (then planned_units_ has -1)
  std::vector<int32_t> planned_host_;
  SimResult result_;
};

}  // namespace llmcap::sim
