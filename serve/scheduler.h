// The reference scheduler: a per-sequence version of each simulator batching policy, short
// and readable, that is the specification of the policy (the simulator's own, in sim/, is the
// aggregate O(1)-per-step twin). The serving loop (serve/serving_loop.h) runs it; the twin
// test (tests/serve/twin_test.cpp) requires both to take the same steps and give the same
// records on the same arrivals.
//
// Semantics: exactly sim::simulate()'s for one unified replica (sim/simulator.h), restated
// here per sequence:
//  - A sequence's KV holds its prompt and every emitted token but the last; t tokens need
//    ceil(t / block_size_tokens) blocks. Admission reserves the blocks of the whole prefill
//    (prompt + tokens emitted before a preemption), also for a chunked prefill; only decodes
//    grow a sequence's KV, by one token per step, taking a new block when its KV fills its
//    blocks.
//  - Admission is FCFS from the front of the waiting queue and stops at the first sequence
//    that does not fit (no skipping); an admitted sequence joins the back of the running list
//    (admission order) and takes the lowest free decoder slot.
//  - A decode that needs a block when none is free preempts the most recently admitted
//    running sequence (possibly itself) until one is: its blocks and slot are freed, its
//    prefill progress is lost (recompute), and it goes back to the FRONT of the waiting queue.
//  - Each policy (serve/schedulers/*.cpp) composes a step from these; the step's shape is
//    the simulator's (model::BatchShape).
//  - At the step's end every decode emits a token, and every prefill chunk that ends its
//    prefill emits one (the first, or the next after those emitted before a preemption); a
//    sequence that has emitted num_output_tokens is done and frees its blocks and slot.
//
// Prefix caching (config.prefix_caching; the simulator's semantics, docs/simulator.md, "Prefix
// caching in the real serving loop"): a keyed request
// (RequestSpec::prefix) of S tokens per keyed block caches units of U = max(S, B) tokens
// (B = block_size_tokens), unit u covering context tokens [uU, (u+1)U) with key
// append_prefix_keys(...)[(u+1)U/S - 1] and U/B blocks.
//  - The cache is a map key -> entry {U/B blocks, refcount}; entries with refcount 0 are
//    evictable and sit in an LRU list in the order they became evictable. Free blocks are
//    those held neither by a sequence nor by an entry; allocation may also take the blocks of
//    evictable entries, evicting whole entries from the LRU head (also for a decode's block,
//    before any preemption).
//  - Admission of a prefill of T tokens matches the longest run of units u = 0, 1, ... in the
//    cache with (u+1)U <= T - 1; c = mU tokens are cached, n = ceil(T/B) - mU/B blocks are new.
//    It fits iff n <= free + evictable blocks - the matched units' evictable blocks. Matched
//    entries get refcount + 1 (leaving the LRU), then the n blocks come from free, evicting
//    from the LRU head while free is short. The prefill starts at num_prefilled = c; token
//    budgets count only the T - c computed tokens.
//  - At a step's end, before tokens are emitted, each unit a prefill chunk completed becomes
//    an entry with refcount 1 held by its sequence, unless the key is in the cache already
//    (then the sequence keeps those blocks privately), chunks in step order.
//  - A sequence that leaves (finishes or is preempted) first inserts the units its decodes
//    completed (its KV is prompt + emitted - 1 tokens) in the same way, then releases every
//    entry it holds (refcount - 1), appending those reaching 0 to the LRU from its last unit to
//    its first, and frees its private blocks. A preempted sequence keeps no claim: its
//    recompute matches what is still cached when it is admitted again.
//  - Records: RequestRecord::num_cached_prompt_tokens = min(c, prompt) at the first admission;
//    records.prefix_cache[0] sums prompt and cached tokens at first admissions, c over every
//    admission (num_saved_prefill_tokens), and evicted blocks.
//  - Every insertion and eviction is also an operation (ServeStep::cache_ops) for the executor,
//    which keeps the cached units' KV (serve/decoder_step_executor.h).
#pragma once

#include <cstdint>
#include <deque>
#include <list>
#include <unordered_map>
#include <vector>

#include "serve/config.h"
#include "serve/step.h"
#include "sim/sim_time.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace llmcap::serve {

/// One request as the reference scheduler sees it.
struct Sequence {
  enum class State { kNotArrived, kWaiting, kPrefilling, kDecoding, kFinished };
  State state = State::kNotArrived;
  int64_t num_prompt_tokens = 0;
  int64_t num_output_tokens = 0;
  int64_t num_emitted = 0;    ///< output tokens emitted so far
  int64_t num_prefilled = 0;  ///< kPrefilling: tokens of the prefill scheduled so far
  int64_t num_blocks = 0;     ///< KV blocks held privately (not in cache entries)
  int64_t slot = -1;          ///< decoder slot while admitted
  sim::SimTime last_token;    ///< when it emitted its latest token
  bool scheduled = false;     ///< (a chunk of) its prefill has run: first_scheduled is set

  // Prefix caching (unit_tokens > 0 only with config.prefix_caching and a keyed request).
  int64_t unit_tokens = 0;          ///< U = max(prefix.block_tokens, block_size_tokens)
  std::vector<uint64_t> unit_keys;  ///< key of unit u of its context, u < (prompt+output)/U
  /// The units [0, size) of its KV dealt with since its admission (matched, or completed and
  /// inserted): true where it holds the unit's cache entry, false where it keeps the unit's
  /// blocks privately (the key was cached by another sequence first).
  std::vector<bool> units;
  /// Its current admission's cached prefix (kv copied from the cache) is not yet in a step.
  bool cached_prefix_pending = false;

  /// Tokens of its prefill: the prompt, plus (a recompute) the tokens emitted before.
  int64_t prefill_tokens() const { return num_prompt_tokens + num_emitted; }
};

/// The scheduler of one replica: per-sequence state, the waiting queue, the running list, the
/// KV blocks and decoder slots, and the records (sim::RequestRecord, SimResult counts and
/// itl_ns) in the simulator's form.
class Scheduler {
 public:
  /// `arrivals` (sorted, validated: serve/serving_loop.h validate_serve) and `config` are not
  /// owned and must outlive the scheduler; `records` gets one record per arrival.
  Scheduler(const std::vector<sim::RequestSpec>& arrivals, const ServeConfig& config,
            sim::SimResult& records);

  // ---- What the serving loop calls -------------------------------------------------------

  /// Request `id` has arrived: rejected (records filled, done) when prompt + output can never
  /// fit the KV cache, otherwise queued at the back of the waiting queue.
  void arrive(int64_t id);
  /// Nothing waits and nothing runs.
  bool idle() const { return waiting_.empty() && running_.empty(); }
  /// Requests finished or rejected.
  int64_t num_done() const { return num_done_; }
  /// The end-of-run conservation check: every block is free or in an evictable cache entry.
  /// Throws std::logic_error otherwise (a bug).
  void check_blocks_returned() const;
  /// The next step per config.policy, decided at `now`. Throws std::logic_error if it comes
  /// out empty (a bug: a replica that is not idle always has a step to run).
  ServeStep compose(sim::SimTime now);
  /// The step `step` ended at `end`: tokens emitted, records and itl_ns updated (in the
  /// simulator's order: the decodes' gaps in admission order, then those of the prefills
  /// that end a recompute, in step order), finished sequences free their blocks and slots.
  void finish_step(const ServeStep& step, sim::SimTime end);

  // ---- Building blocks of the policies (serve/schedulers/) -------------------------------

  const ServeConfig& config() const { return config_; }
  const std::deque<int64_t>& waiting() const { return waiting_; }
  const std::vector<int64_t>& running() const { return running_; }  ///< admission order
  int64_t num_free_blocks() const { return free_blocks_; }
  /// Blocks of evictable prefix-cache entries (refcount 0), which allocation may take.
  int64_t num_evictable_blocks() const { return evictable_blocks_; }
  int64_t num_preemptions() const { return records_.num_preemptions; }
  const Sequence& seq(int64_t id) const { return seqs_[static_cast<size_t>(id)]; }
  /// Blocks that `tokens` tokens of KV need.
  int64_t blocks_for(int64_t tokens) const;

  /// Tokens of waiting sequence `id`'s prefill that the prefix cache holds now (the matched
  /// units' tokens; 0 without prefix caching): the prefill computes only the rest.
  int64_t num_cached_tokens(int64_t id) const;
  /// The new blocks of waiting sequence `id`'s admission fit (without prefix caching: the
  /// blocks of its whole prefill are free).
  bool fits(int64_t id) const;

  /// Moves the front of the waiting queue to the back of the running list as kPrefilling:
  /// claims its cached prefix, reserves the new blocks of its whole prefill (the caller
  /// checked fits()), evicting while free blocks are short, takes the lowest free slot, sets
  /// first_scheduled to `now` the first time. Its prefill starts after the cached tokens
  /// (num_prefilled). Returns its id.
  int64_t admit_front(sim::SimTime now);
  /// Adds to `step` a chunk of `num_tokens` prefill tokens of running sequence `id` after the
  /// num_prefilled already scheduled or cached (a whole prefill: all the rest), and its terms
  /// to the shape: c*p + c(c+1)/2 attention pairs, p cached tokens, completing if it ends the
  /// prefill.
  void add_prefill_chunk(ServeStep& step, int64_t id, int64_t num_tokens);
  /// Every decoding sequence, oldest first, decodes one token in `step`; one whose KV fills its
  /// blocks takes a new one (free, or evicting the LRU head's entry), first preempting the most
  /// recently admitted running sequences (possibly itself, which then does not decode) while
  /// none is available.
  void decode_running(ServeStep& step);

 private:
  Sequence& mut(int64_t id) { return seqs_[static_cast<size_t>(id)]; }
  sim::RequestRecord& record(int64_t id) { return records_.requests[static_cast<size_t>(id)]; }
  void preempt(int64_t id);
  /// Sequence `id` leaves with `kv_tokens` tokens of KV: its prefix-cache claims and
  /// private blocks are released, its slot freed, and it is taken off the running list.
  void release(int64_t id, int64_t kv_tokens);

  // Prefix caching.
  struct Entry {
    int64_t num_blocks = 0;
    int64_t refcount = 0;
    std::list<uint64_t>::iterator lru;  ///< its place in lru_ while refcount == 0
  };
  /// Units of `id`'s prefill the cache holds now (see num_cached_tokens).
  int64_t num_matched_units(int64_t id) const;
  /// Deals with the units of `id` complete within its first `kv_tokens` tokens: each becomes
  /// an entry held by it, or (key already cached) stays private.
  void insert_units(int64_t id, int64_t kv_tokens);
  /// Takes one block: a free one, else the blocks of the LRU head's entry (evicted). False
  /// when neither is left.
  bool take_block();
  void evict_lru_head();

  std::unordered_map<uint64_t, Entry> cache_;
  std::list<uint64_t> lru_;  ///< evictable keys, the head evicted first
  int64_t evictable_blocks_ = 0;
  std::vector<PrefixCacheOp> cache_ops_;  ///< since the last composed step
  /// Sequence `id` emits a token at `end`; returns the gap since its previous one (or zero
  /// for its first token).
  sim::SimTime emit(int64_t id, sim::SimTime end);

  const ServeConfig& config_;
  sim::SimResult& records_;
  std::vector<Sequence> seqs_;
  std::deque<int64_t> waiting_;   ///< FCFS; preempted sequences rejoin at the front
  std::vector<int64_t> running_;  ///< admitted, holding KV blocks, in admission order
  std::vector<bool> slot_used_;   ///< decoder slots
  int64_t free_blocks_ = 0;
  int64_t num_done_ = 0;
};

/// A reference batching policy: composes the next step of `s` at `now`.
using ReferencePolicy = ServeStep (*)(Scheduler& s, sim::SimTime now);

// One file each in serve/schedulers/.
ServeStep compose_static(Scheduler& s, sim::SimTime now);
ServeStep compose_continuous(Scheduler& s, sim::SimTime now);
ServeStep compose_chunked_prefill(Scheduler& s, sim::SimTime now);
/// vLLM v0 admission (kStatic, kContinuous; serve/schedulers/continuous.cpp): whole prefills,
/// FCFS, while running < max_num_seqs, the step's prefill tokens (computed: less the cached
/// ones) stay within max_num_batched_tokens (a first one over it is admitted alone) and the
/// blocks fit (Scheduler::fits).
void admit_whole_prefills(Scheduler& s, sim::SimTime now, ServeStep& step);

/// The reference version of `policy`. Throws std::invalid_argument for a value outside the
/// enum.
ReferencePolicy reference_policy(sim::BatchingPolicy policy);

}  // namespace llmcap::serve
