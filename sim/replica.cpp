// Engine primitives on one replica's state: the waiting queue, the running list, admission,
// the decoding sequences in aggregate, decode steps with preemption, prefill chunks.
#include <algorithm>
#include <span>

#include "sim/check.h"
#include "sim/engine.h"

namespace llmcap::sim {
namespace {

/// Window groups (KvLayout): a decoder's layers of window group g take a block at its block
/// boundaries while its context offset + k is at most window_blocks x block size, i.e. at
/// decode counters k below stop = window_blocks x block - offset + 1. Adds a joining decoder to
/// the groups it still grows in.
void join_windows(Replica& replica, Sequence& seq, int64_t id) {
  const int64_t block = replica.kv.block_size_tokens;
  const int64_t phase = floor_mod(seq.offset(), block);
  for (std::size_t g = 0; g < replica.window_growth.size(); ++g) {
    const int64_t stop = replica.kv.layout.windows[g].window_blocks * block - seq.offset() + 1;
    if (replica.num_decode_steps >= stop) continue;
    seq.window_growing |= uint32_t{1} << g;
    replica.window_growth[g].growing.add(phase, 1);
    replica.window_growth[g].stops.push(Finish{stop, seq.admit_order, id});
  }
}

/// Takes a leaving decoder out of the window groups it grows in.
void leave_windows(Replica& replica, Sequence& seq) {
  const int64_t phase = floor_mod(seq.offset(), replica.kv.block_size_tokens);
  for (std::size_t g = 0; g < replica.window_growth.size(); ++g) {
    if (seq.window_growing & (uint32_t{1} << g)) replica.window_growth[g].growing.add(phase, -1);
  }
  seq.window_growing = 0;
}

}  // namespace

/// Tokens of KV a waiting sequence needs when admitted: its prefill, or, migrating, the KV
/// it brings (its prompt and every emitted token but the last).
int64_t Engine::waiting_kv_tokens(const Sequence& seq) const {
  return prefill_tokens(seq) - (seq.state == SeqState::kMigrating ? 1 : 0);
}

/// Queues `id` as kWaiting (needs a prefill) or kMigrating (KV to pull).
void Engine::push_waiting(Replica& replica, int64_t id, SimTime now, bool front, SeqState state) {
  Sequence& seq = sequences_[id];
  seq.state = state;
  if (front) {
    replica.waiting.push_front(id);
  } else {
    replica.waiting.push_back(id);
  }
  replica.waiting_blocks += replica.kv.blocks_for(waiting_kv_tokens(seq));
  replica.series.set(WindowRecorder::kWaiting, now, static_cast<int64_t>(replica.waiting.size()));
}

Engine::Admission Engine::plan_admission(Replica& replica) {
  Sequence& seq = sequences_[replica.waiting.front()];
  const int64_t target = prefill_tokens(seq);
  Admission a{0, 0, target, replica.kv.blocks_for(target)};
  planned_units_.clear();
  planned_host_.clear();
  if (!replica.prefix_cache || !seq.prefix.keyed()) return a;
  PrefixCache& cache = *replica.prefix_cache;
  seq.unit_tokens = std::max<int64_t>(seq.prefix.block_tokens, replica.kv.block_size_tokens);
  const int64_t unit_blocks = seq.unit_tokens / replica.kv.block_size_tokens;
  // At least one token is computed (vLLM caps a hit at the prefill's tokens - 1).
  const int64_t max_units = (target - 1) / seq.unit_tokens;
  if (max_units == 0) return a;
  const std::span<const uint64_t> keys = unit_keys(seq, max_units, seq.unit_tokens);
  // Each unit is looked up on the GPU, then in the host tier (KV offload); the match ends at
  // the first unit found in neither.
  const PrefixCache* host = replica.host_cache ? &*replica.host_cache : nullptr;
  int64_t evictable_matched = 0;
  int64_t loaded = 0;
  for (const uint64_t key : keys) {
    const int32_t e = cache.find(key);
    const int32_t h = e < 0 && host != nullptr ? host->find(key) : -1;
    if (e < 0 && h < 0) break;
    planned_units_.push_back(e);
    planned_host_.push_back(h);
    if (e >= 0 && cache.entry(e).refcount == 0) evictable_matched += unit_blocks;
    if (h >= 0) ++loaded;
  }
  const auto matched = static_cast<int64_t>(planned_units_.size());
  a.cached_tokens = matched * seq.unit_tokens;
  a.loaded_tokens = loaded * seq.unit_tokens;
  a.num_tokens = target - a.cached_tokens;
  a.num_blocks = a.num_blocks - (matched - loaded) * unit_blocks + evictable_matched;
  return a;
}

int64_t Engine::first_chunk_blocks(const Replica& replica, const Admission& admission,
                                   int64_t num_tokens) const {
  if (!replica.serving.allocates_per_chunk()) return admission.num_blocks;
  const int64_t whole = replica.kv.blocks_for(admission.cached_tokens + admission.num_tokens);
  return admission.num_blocks - whole + replica.kv.blocks_for(admission.cached_tokens + num_tokens);
}

bool Engine::grow_prefill(Replica& replica, SimTime now, int64_t id, int64_t num_tokens) {
  const Sequence& seq = sequences_[id];
  const int64_t need = replica.kv.blocks_for(seq.num_prefilled + num_tokens) -
                       replica.kv.blocks_for(seq.num_prefilled);
  while (need > replica.kv.num_free_blocks) {
    const int64_t tail = replica.running_tail;
    const Sequence& victim = sequences_[tail];
    if (victim.state != SeqState::kPrefilling || victim.in_step) return false;
    preempt_last(replica, now);
    if (tail == id) return false;
  }
  take_blocks(replica, need);
  return true;
}

void Engine::admit_front(Replica& replica, SimTime now, int64_t num_tokens,
                         const Admission& admission) {
  const int64_t id = replica.waiting.front();
  replica.waiting.pop_front();
  Sequence& seq = sequences_[id];
  replica.waiting_blocks -= replica.kv.blocks_for(prefill_tokens(seq));
  replica.series.set(WindowRecorder::kWaiting, now, static_cast<int64_t>(replica.waiting.size()));
  seq.state = SeqState::kPrefilling;
  seq.prefill_target = prefill_tokens(seq);
  seq.num_prefilled = admission.cached_tokens + num_tokens;
  seq.admit_order = replica.next_admit_order++;
  if (replica.prefix_cache) {
    int64_t reused = 0;
    for (const int32_t e : planned_units_) reused += e >= 0 ? replica.prefix_cache->acquire(e) : 0;
    replica.kv.num_free_blocks -= reused;
    seq.units.assign(planned_units_.begin(), planned_units_.end());
    // Host units leave the host tier before take_blocks' evictions can offload into it.
    if (admission.loaded_tokens > 0) load_planned_units(replica, seq);
    take_blocks(replica, admission.num_blocks - reused);
    planned_units_.clear();
    PrefixCacheStats& stats = replica.prefix_stats;
    stats.num_saved_prefill_tokens += admission.cached_tokens;
    stats.num_loaded_tokens += admission.loaded_tokens;
    if (!seq.scheduled) {  // first admission: its prefill is its prompt
      const int64_t cached_prompt = std::min(admission.cached_tokens, seq.num_prompt_tokens);
      result_.requests[id].num_cached_prompt_tokens = cached_prompt;
      stats.num_prompt_tokens += seq.num_prompt_tokens;
      stats.num_cached_prompt_tokens += cached_prompt;
      stats.num_host_cached_prompt_tokens += admission.loaded_tokens;
    }
  } else {
    replica.kv.num_free_blocks -= admission.num_blocks;
  }
  if (!seq.scheduled) {
    seq.scheduled = true;
    result_.requests[id].first_scheduled = now;
  }
  link_running(replica, id);
}

/// Keys of the first `num_units` cache units of `seq` (Sequence::unit_tokens each): key
/// index (u + 1) x U / S - 1 of its blocks of S = prefix.block_tokens tokens.
std::span<const uint64_t> Engine::unit_keys(const Sequence& seq, int64_t num_units,
                                            int64_t unit_tokens) {
  std::vector<uint64_t>& keys = seq.unit_keys;
  if (seq.unit_keys_tokens != unit_tokens || static_cast<int64_t>(keys.size()) < num_units) {
    // Computed once for the whole prefill (admission asks for fewer units than the chunks
    // complete), again only for units beyond it (a decode's, at leave).
    const int64_t want = std::max(num_units, (prefill_tokens(seq) + unit_tokens - 1) / unit_tokens);
    const int64_t per_unit = unit_tokens / seq.prefix.block_tokens;
    keys.clear();
    keys.reserve(static_cast<size_t>(want * per_unit));  // one allocation, not one per doubling
    append_prefix_keys(seq.prefix, seq.num_prompt_tokens, want * per_unit, keys);
    if (per_unit > 1) {
      for (int64_t u = 0; u < want; ++u) keys[u] = keys[(u + 1) * per_unit - 1];
      keys.resize(static_cast<size_t>(want));
    }
    seq.unit_keys_tokens = unit_tokens;
  }
  return {keys.data(), static_cast<size_t>(num_units)};
}

/// Tokens of the prompt of waiting-to-be-routed `seq` that `replica`'s prefix cache holds (its
/// longest cached run of units, at most prompt - 1 tokens); 0 without a cache.
int64_t Engine::cached_prefix_tokens(const Replica& replica, const Sequence& seq) {
  if (!replica.prefix_cache || !seq.prefix.keyed()) return 0;
  const int64_t unit_tokens =
      std::max<int64_t>(seq.prefix.block_tokens, replica.kv.block_size_tokens);
  const int64_t max_units = (seq.num_prompt_tokens - 1) / unit_tokens;
  if (max_units == 0) return 0;
  int64_t matched = 0;
  for (const uint64_t key : unit_keys(seq, max_units, unit_tokens)) {
    if (replica.prefix_cache->find(key) < 0) break;
    ++matched;
  }
  return matched * unit_tokens;
}

/// SGLang's longest-prefix-match order: the waiting queue (when it holds 2 to
/// kLongestPrefixQueueLimit sequences) sorted by the tokens of each the cache holds, longest
/// first, ties in queue order. Each is measured by its prompt (cached_prefix_tokens), also a
/// preempted one, whose emitted tokens admission may match as well.
void Engine::order_by_prefix(Replica& replica) {
  const size_t n = replica.waiting.size();
  if (n < 2 || n > kLongestPrefixQueueLimit) return;
  order_scratch_.clear();
  for (size_t i = 0; i < n; ++i) {
    const int64_t id = replica.waiting.at(i);
    const Sequence& seq = sequences_[id];
    const int64_t cached = seq.state == SeqState::kWaiting ? cached_prefix_tokens(replica, seq) : 0;
    order_scratch_.emplace_back(-cached, id);
  }
  std::stable_sort(order_scratch_.begin(), order_scratch_.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  ids_scratch_.clear();
  for (const auto& [minus_cached, id] : order_scratch_) ids_scratch_.push_back(id);
  replica.waiting.assign(ids_scratch_);
}

/// Takes `num_blocks` free blocks: evictable cache entries are evicted, least recently freed
/// first, while the blocks that are free and not cached fall short.
void Engine::take_blocks(Replica& replica, int64_t num_blocks) {
  replica.kv.num_free_blocks -= num_blocks;
  if (!replica.prefix_cache) return;
  PrefixCache& cache = *replica.prefix_cache;
  while (replica.kv.num_free_blocks < cache.evictable_blocks()) {
    const uint64_t key = cache.entry(cache.lru_front()).key;
    const int64_t blocks = cache.evict_lru();
    replica.prefix_stats.num_evicted_blocks += blocks;
    if (replica.host_cache) offload_unit(replica, key, blocks);
  }
}

/// KV offload: the units of the admission just planned that the host tier holds leave it and
/// become GPU cache entries `seq` holds (or units it keeps privately when their key came
/// twice in its prefix); their blocks are among the admission's new blocks. Loading them takes
/// blocks x block_bytes / host_link_bytes_per_s, added to the step being composed.
void Engine::load_planned_units(Replica& replica, Sequence& seq) {
  PrefixCache& host = *replica.host_cache;
  PrefixCache& cache = *replica.prefix_cache;
  const int64_t unit_blocks = seq.unit_tokens / replica.kv.block_size_tokens;
  const auto n = static_cast<int64_t>(planned_host_.size());
  const std::span<const uint64_t> keys = unit_keys(seq, n, seq.unit_tokens);
  int64_t loaded = 0;
  for (int64_t u = 0; u < n; ++u) {
    if (planned_host_[static_cast<size_t>(u)] < 0) continue;
    const uint64_t key = keys[static_cast<size_t>(u)];
    const int32_t h = host.find(key);
    if (h >= 0) host.erase(h);
    seq.units[static_cast<size_t>(u)] =
        cache.find(key) >= 0 ? -1 : cache.insert(key, unit_blocks, 1);
    loaded += unit_blocks;
  }
  const KvOffloadConfig& offload = replica.serving.kv_offload;
  const double load_s = static_cast<double>(loaded) * static_cast<double>(offload.block_bytes) /
                        offload.host_link_bytes_per_s;
  replica.prefix_stats.num_loaded_blocks += loaded;
  replica.prefix_stats.load_s += load_s;
  replica.step_load_s += load_s;
}

/// KV offload: a unit evicted from the GPU cache is copied to the host tier (asynchronously:
/// no step waits for it), the host's least recently stored units dropped for room; a unit
/// larger than the whole tier is not kept.
void Engine::offload_unit(Replica& replica, uint64_t key, int64_t num_blocks) {
  const int64_t capacity = replica.serving.kv_offload.num_host_blocks;
  if (num_blocks > capacity) return;
  PrefixCache& host = *replica.host_cache;
  PrefixCacheStats& stats = replica.prefix_stats;
  LLMCAP_SIM_CHECK(host.find(key) < 0);  // it was on the GPU: in no other tier
  while (host.evictable_blocks() + num_blocks > capacity) {
    stats.num_host_evicted_blocks += host.evict_lru();
  }
  host.insert(key, num_blocks, 0);
  stats.num_offloaded_blocks += num_blocks;
}

/// A new GPU cache entry for `key` (not on the GPU); with KV offload, a host copy of the key
/// is dropped (a key lives in at most one tier).
int32_t Engine::insert_gpu_unit(Replica& replica, uint64_t key, int64_t num_blocks,
                                int64_t refcount) {
  if (replica.host_cache) {
    const int32_t h = replica.host_cache->find(key);
    if (h >= 0) replica.prefix_stats.num_host_dropped_blocks += replica.host_cache->erase(h);
  }
  return replica.prefix_cache->insert(key, num_blocks, refcount);
}

/// At the end of a step with a prefill chunk of `seq`: the units its prefill has completed
/// since its last chunk become cache entries it holds (or stay its own when their key is
/// already cached).
void Engine::insert_prefilled_units(Replica& replica, Sequence& seq) {
  if (!replica.prefix_cache || seq.unit_tokens == 0) return;
  const int64_t done = seq.num_prefilled / seq.unit_tokens;
  const auto first = static_cast<int64_t>(seq.units.size());
  if (done <= first) return;
  PrefixCache& cache = *replica.prefix_cache;
  const int64_t unit_blocks = seq.unit_tokens / replica.kv.block_size_tokens;
  const std::span<const uint64_t> keys = unit_keys(seq, done, seq.unit_tokens);
  seq.units.reserve(seq.unit_keys.size());  // the whole prefill's units (one allocation)
  for (int64_t u = first; u < done; ++u) {
    const uint64_t key = keys[static_cast<size_t>(u)];
    seq.units.push_back(cache.find(key) >= 0 ? -1 : insert_gpu_unit(replica, key, unit_blocks, 1));
  }
}

/// A sequence holding `num_blocks` blocks whose KV holds `kv_tokens` tokens leaves the
/// running set (finish or preemption): its units from the last to the first, the ones its
/// decodes completed cached as evictable (when their key is not cached yet), those it holds
/// released; every other block is freed. Without a prefix cache: all its blocks are freed.
void Engine::release_blocks(Replica& replica, Sequence& seq, int64_t num_blocks,
                            int64_t kv_tokens) {
  if (!replica.prefix_cache || seq.unit_tokens == 0) {
    replica.kv.num_free_blocks += num_blocks;
    return;
  }
  PrefixCache& cache = *replica.prefix_cache;
  const int64_t unit_blocks = seq.unit_tokens / replica.kv.block_size_tokens;
  const auto held = static_cast<int64_t>(seq.units.size());
  const int64_t full = std::max(held, kv_tokens / seq.unit_tokens);
  int64_t own = num_blocks;  // blocks not in an entry it holds
  for (const int32_t e : seq.units) own -= e >= 0 ? unit_blocks : 0;
  if (full > held) {
    const std::span<const uint64_t> keys = unit_keys(seq, full, seq.unit_tokens);
    for (int64_t u = full - 1; u >= held; --u) {
      if (cache.find(keys[static_cast<size_t>(u)]) >= 0) continue;
      insert_gpu_unit(replica, keys[static_cast<size_t>(u)], unit_blocks, 0);
      own -= unit_blocks;
      replica.kv.num_free_blocks += unit_blocks;
    }
  }
  for (int64_t u = held - 1; u >= 0; --u) {
    const int32_t e = seq.units[static_cast<size_t>(u)];
    if (e >= 0) replica.kv.num_free_blocks += cache.release(e);
  }
  LLMCAP_SIM_CHECK(own >= 0);
  replica.kv.num_free_blocks += own;
  seq.units.clear();
}

void Engine::link_running(Replica& replica, int64_t id) {
  Sequence& seq = sequences_[id];
  seq.prev = replica.running_tail;
  seq.next = -1;
  if (replica.running_tail >= 0) {
    sequences_[replica.running_tail].next = id;
  } else {
    replica.running_head = id;
  }
  replica.running_tail = id;
  ++replica.num_running;
}

void Engine::unlink_running(Replica& replica, int64_t id) {
  Sequence& seq = sequences_[id];
  if (seq.prev >= 0) {
    sequences_[seq.prev].next = seq.next;
  } else {
    replica.running_head = seq.next;
  }
  if (seq.next >= 0) {
    sequences_[seq.next].prev = seq.prev;
  } else {
    replica.running_tail = seq.prev;
  }
  seq.prev = seq.next = -1;
  --replica.num_running;
}

int64_t Engine::phase_of(const Replica& replica, const Sequence& seq) {
  return floor_mod(seq.offset(), replica.kv.block_size_tokens);
}

/// Phase of the decoders that need a new block in the decode step taking the counter from
/// k to k + 1 (their context c = offset + k has c mod block == 1).
int64_t Engine::needing_phase(const Replica& replica, int64_t k) {
  return floor_mod(1 - k, replica.kv.block_size_tokens);
}

int64_t Engine::decoder_emitted(const Replica& replica, const Sequence& seq) const {
  return seq.num_emitted + (replica.num_decode_steps - seq.join_step);
}

/// A sequence whose prefill has just finished (and which has output left) starts decoding.
void Engine::join_decoders(Replica& replica, int64_t id) {
  Sequence& seq = sequences_[id];
  seq.state = SeqState::kDecoding;
  seq.join_step = replica.num_decode_steps;
  replica.phase_counts.add(phase_of(replica, seq), 1);
  if (replica.kv.windowed) join_windows(replica, seq, id);
  replica.decode_context_tokens += seq.num_prompt_tokens + seq.num_emitted;
  ++replica.num_decoders;
  replica.finishes.push(
      Finish{seq.join_step + seq.num_output_tokens - seq.num_emitted, seq.admit_order, id});
  replica.new_decoders.emplace_back(id, seq.admit_order);
}

/// Takes a decoding sequence out of the aggregate (finish or preemption at the current
/// counter): fixes its num_emitted (at most its output: a speculative step may advance past
/// its last token) and last_token, folds the gaps since its first decode step into max_itl,
/// and returns the KV blocks it holds (those of the whole advance).
int64_t Engine::leave_decoders(Replica& replica, int64_t id) {
  Sequence& seq = sequences_[id];
  const int64_t k = replica.num_decode_steps;
  const int64_t advanced = decoder_emitted(replica, seq);
  const int64_t context = seq.num_prompt_tokens + advanced;
  replica.phase_counts.add(phase_of(replica, seq), -1);
  if (replica.kv.windowed) leave_windows(replica, seq);
  replica.decode_context_tokens -= context;
  --replica.num_decoders;
  if (k > seq.join_step) {
    RequestRecord& record = result_.requests[id];
    const SimTime gap = SimTime::Nanoseconds(replica.gaps.max_from(seq.join_step + 1));
    record.max_itl = std::max(record.max_itl, gap);
    seq.last_token = replica.last_decode_end;
  }
  seq.num_emitted = std::min(advanced, seq.num_output_tokens);
  return replica.kv.blocks_for(context - 1);
}

/// Preempts the most recently admitted running sequence (vLLM's recompute preemption): all
/// its blocks are freed and it goes back to the front of the waiting queue. Returns its id.
int64_t Engine::preempt_last(Replica& replica, SimTime now) {
  const int64_t id = replica.running_tail;
  LLMCAP_SIM_CHECK(id >= 0);
  Sequence& seq = sequences_[id];
  int64_t blocks = 0;
  int64_t kv_tokens = 0;
  // With prefix caching, a sequence no workload keyed keys its own KV when preempted, so that
  // its recompute finds what is still cached, as vLLM hashes every prompt's blocks.
  const bool key_privately = replica.prefix_cache && !seq.prefix.keyed();
  if (key_privately) {
    seq.prefix.stream = prefix_chain(kPrivateStreamSalt, static_cast<uint64_t>(id));
    seq.prefix.block_tokens = static_cast<int32_t>(replica.kv.block_size_tokens);
    seq.unit_tokens = replica.kv.block_size_tokens;
    seq.unit_keys.clear();
    seq.unit_keys_tokens = 0;
  }
  if (seq.state == SeqState::kDecoding) {
    blocks = leave_decoders(replica, id);
    kv_tokens = seq.num_prompt_tokens + seq.num_emitted - 1;
  } else {  // a partial prefill holds the blocks of its whole prefill, or of its chunks so far
    LLMCAP_SIM_CHECK(seq.state == SeqState::kPrefilling && !seq.in_step);
    if (key_privately) kv_tokens = seq.num_prefilled;  // its computed chunks
    blocks = replica.kv.blocks_for(replica.serving.allocates_per_chunk() ? seq.num_prefilled
                                                                         : seq.prefill_target);
    std::erase(replica.prefilling, id);
    seq.num_prefilled = 0;
  }
  unlink_running(replica, id);
  release_blocks(replica, seq, blocks, kv_tokens);
  ++result_.requests[id].num_preemptions;
  ++result_.num_preemptions;
  push_waiting(replica, id, now, /*front=*/true, SeqState::kWaiting);
  return id;
}

void Engine::add_chunk(Replica& replica, model::BatchShape& shape, int64_t id, int64_t num_cached,
                       int64_t num_tokens) {
  Sequence& seq = sequences_[id];
  seq.in_step = true;
  replica.step_prefills.push_back(id);
  ++shape.num_prefill_seqs;
  shape.num_prefill_tokens += num_tokens;
  shape.num_prefill_attention_pairs += num_tokens * num_cached + num_tokens * (num_tokens + 1) / 2;
  shape.num_prefill_cached_tokens += num_cached;
  if (num_cached + num_tokens == seq.prefill_target) ++shape.num_prefill_seqs_completing;
}

void Engine::schedule_decodes(SimTime now, Replica& replica, model::BatchShape& shape) {
  if (replica.num_decoders == 0) return;
  const int64_t k = replica.num_decode_steps;
  const int64_t advance = replica.decode_advance(replica.num_decode_passes);
  int64_t needed = units_needed(replica, k, advance);
  while (needed > replica.kv.num_free_blocks) {
    preempt_last(replica, now);
    needed = units_needed(replica, k, advance);
  }
  take_blocks(replica, needed);
  if (replica.num_decoders == 0) return;
  replica.step_has_decodes = true;
  replica.step_advance = advance;
  shape.num_decode_seqs = replica.num_decoders;
  shape.num_decode_draft_tokens =
      replica.serving.speculative.num_draft_tokens * replica.num_decoders;
  set_decode_context(replica, replica.decode_context_tokens, shape);
}

/// The shape's decode context (and, with speculative decoding, the drafts' attention pairs)
/// for the replica's decoders at `context_tokens` (Replica::decode_context_tokens, or what it
/// will be after the steps a decode run plans).
void Engine::set_decode_context(const Replica& replica, int64_t context_tokens,
                                model::BatchShape& shape) {
  shape.num_decode_context_tokens = context_tokens;
  const int64_t drafts = replica.serving.speculative.num_draft_tokens;
  if (drafts > 0) {
    shape.num_decode_draft_attention_pairs =
        drafts * context_tokens + replica.num_decoders * drafts * (drafts + 1) / 2;
  }
}

/// Units the decoders take in a decode step advancing the counter from k by `advance`
/// tokens: at each counter k + j, those whose context crosses a block boundary.
int64_t Engine::units_needed(Replica& replica, int64_t k, int64_t advance) {
  int64_t needed = 0;
  for (int64_t j = 0; j < advance; ++j) {
    const int64_t phase = needing_phase(replica, k + j);
    needed += replica.kv.windowed ? window_units_needed(replica, k + j, phase)
                                  : replica.phase_counts.get(phase);
  }
  return needed;
}

/// Units the decoders at `phase` take in the decode step from counter k (a windowed layout):
/// first drops from the window groups the decoders whose windows are full by k.
int64_t Engine::window_units_needed(Replica& replica, int64_t k, int64_t phase) {
  const auto self = static_cast<int32_t>(&replica - replicas_.data());
  const int64_t block = replica.kv.block_size_tokens;
  int64_t needed = replica.kv.layout.full_units_per_block * replica.phase_counts.get(phase);
  for (std::size_t g = 0; g < replica.window_growth.size(); ++g) {
    Replica::WindowGrowth& w = replica.window_growth[g];
    const uint32_t bit = uint32_t{1} << g;
    while (!w.stops.empty() && w.stops.top().finish_step <= k) {
      const Finish f = w.stops.top();
      w.stops.pop();
      Sequence& seq = sequences_[f.id];
      if (seq.state != SeqState::kDecoding || seq.admit_order != f.admit_order ||
          seq.replica != self || !(seq.window_growing & bit)) {
        continue;  // stale: it left the decoders since
      }
      w.growing.add(floor_mod(seq.offset(), block), -1);
      seq.window_growing &= ~bit;
    }
    needed += replica.kv.layout.windows[g].units_per_block * w.growing.get(phase);
  }
  return needed;
}

/// Drops decode gaps that no running sequence can ask about any more.
void Engine::drop_stale_gaps(Replica& replica) {
  for (int64_t id = replica.running_head; id >= 0; id = sequences_[id].next) {
    const Sequence& seq = sequences_[id];
    if (seq.state == SeqState::kDecoding) {
      replica.gaps.drop_below(seq.join_step + 1);  // the oldest decoder joined first
      return;
    }
  }
  replica.gaps.clear();
}

/// The end of a step with decodes: every decoding sequence emits its next step_advance tokens
/// (one without speculative decoding; those past a sequence's last token are not emitted).
/// Those that decoded in the previous decode step see the gap since its end; those that
/// joined since (the most recently admitted decoders, so the end of the running order) see
/// the gap since their prefill's token. Those done are added to replica.finishing.
void Engine::emit_decode_tokens(Replica& replica, SimTime now) {
  const int64_t start = replica.num_decode_steps;
  const int64_t k = start + replica.step_advance;
  const SimTime common_gap = now - replica.last_decode_end;
  replica.first_gaps.clear();
  for (const auto& [id, admit_order] : replica.new_decoders) {
    Sequence& seq = sequences_[id];
    if (seq.state != SeqState::kDecoding || seq.admit_order != admit_order) continue;
    LLMCAP_SIM_CHECK(seq.join_step == start);
    const SimTime gap = now - seq.last_token;
    replica.first_gaps.push_back(gap.ns());
    RequestRecord& record = result_.requests[id];
    record.max_itl = std::max(record.max_itl, gap);
  }
  replica.new_decoders.clear();
  if (options_.record_itl_ns) {
    const auto num_old = replica.num_decoders - static_cast<int64_t>(replica.first_gaps.size());
    result_.itl_ns.insert(result_.itl_ns.end(), static_cast<size_t>(num_old), common_gap.ns());
    result_.itl_ns.insert(result_.itl_ns.end(), replica.first_gaps.begin(),
                          replica.first_gaps.end());
  }
  if (options_.record_itl_runs) {
    const auto num_old = replica.num_decoders - static_cast<int64_t>(replica.first_gaps.size());
    if (num_old > 0) add_gap_run(common_gap.ns(), num_old);
    for (const int64_t gap : replica.first_gaps) add_gap_run(gap, 1);
  }
  replica.num_decode_steps = k;
  if (replica.num_decode_passes > 0) replica.gaps.push(start, common_gap.ns());
  ++replica.num_decode_passes;
  replica.last_decode_end = now;
  replica.decode_context_tokens += replica.num_decoders * replica.step_advance;
  int64_t emitted = replica.num_decoders * replica.step_advance;
  while (!replica.finishes.empty() && replica.finishes.top().finish_step <= k) {
    const Finish f = replica.finishes.top();
    replica.finishes.pop();
    const Sequence& seq = sequences_[f.id];
    if (seq.state != SeqState::kDecoding || seq.admit_order != f.admit_order) continue;
    LLMCAP_SIM_CHECK(f.finish_step > start);
    emitted -= k - f.finish_step;  // the advance past its last token
    replica.finishing.emplace_back(f.admit_order, f.id);
  }
  num_emitted_tokens_ += emitted;
  num_tokens_in_chunks_ += emitted - replica.num_decoders;
}

/// Whether the step just composed starts a decode run (run_decodes_ahead): only decodes, an
/// empty queue, no partial prefill and no sliding-window layers (whose growth is not
/// computed ahead).
bool Engine::can_run_ahead(const Replica& replica, const model::BatchShape& shape) const {
  return run_ahead_ && shape.num_prefill_seqs == 0 && replica.waiting.empty() &&
         replica.prefilling.empty() && !replica.kv.windowed && replica.step_load_s == 0;
}

/// Decode run-ahead (SimOptions::decode_run_ahead). While its queue is empty and every
/// running sequence decodes, every batching policy composes a replica's step alike
/// (schedule_decodes only), and only an arrival can change the replica from outside (in an
/// open loop without front-end latency, on unified replicas). So each step in flight that
/// ends before the next arrival, brings no sequence to its last token and is followed by a
/// step whose blocks are free (no preemption) is ended, and the next one composed, here
/// rather than by events: on_step_done and on_schedule would do the same at that instant,
/// and other replicas' events in between touch nothing of this replica. Each step composed
/// is priced by the replica's DecodeRunPricer. `end`: the end of the step in flight.
/// Returns the end of the step left in flight, whose kStepDone the caller schedules.
SimTime Engine::run_decodes_ahead(Replica& replica, model::BatchShape& shape, SimTime end) {
  // Fixed through the run: the decoders (no join, finish or preemption), hence the shape's
  // sequence and draft counts, and the counter of the next finish (a stale entry ends the run
  // too; the event path pops it).
  const int64_t finish_step =
      replica.finishes.empty() ? INT64_MAX : replica.finishes.top().finish_step;
  // The step that may follow the one in flight, from the counter `k`, pass and free blocks
  // after it: units_needed(replica, k, advance) with the phase kept as k grows.
  int64_t k = replica.num_decode_steps + replica.step_advance;
  int64_t pass = replica.num_decode_passes + 1;
  int64_t free = replica.kv.num_free_blocks;
  const int64_t block = replica.kv.block_size_tokens;
  int64_t phase = needing_phase(replica, k);
  int64_t next_needed = 0;
  int64_t next_advance = 0;
  const bool one_token = replica.advance_scaled == Replica::kAdvanceScale;  // no speculation
  const auto plan_next = [&] {
    if (finish_step <= k) return false;
    int64_t p = phase;
    if (one_token) {  // the common case without a loop: 10% faster on prefix_sim_bench
      next_advance = 1;
      next_needed = replica.phase_counts.get(p);
      p = p == 0 ? block - 1 : p - 1;
    } else {
      next_advance = replica.decode_advance(pass);
      next_needed = 0;
      for (int64_t a = 0; a < next_advance; ++a) {
        next_needed += replica.phase_counts.get(p);
        p = p == 0 ? block - 1 : p - 1;
      }
    }
    if (next_needed > free) return false;  // that step preempts
    free -= next_needed;
    phase = p;
    k += next_advance;
    ++pass;
    return true;
  };
  bool started = false;
  double rounded_s = -1;  // the last step time checked and rounded (-1: none yet)
  SimTime step;
  int64_t num_priced = 0;
  const auto price = [&](int64_t advance, int64_t context_tokens) {
    // As schedule_decodes: its blocks (taken below), its advance, its context.
    replica.step_advance = advance;
    set_decode_context(replica, context_tokens, shape);
    if (!started) {
      replica.run_pricer->start(shape);
      started = true;
    }
    const double step_s = replica.run_pricer->step_time_s(shape);
    if (step_s != rounded_s) {
      LLMCAP_SIM_CHECK(std::isfinite(step_s) && step_s > 0);
      rounded_s = step_s;
      step = SimTime::Seconds(step_s);
    }
    end = end + step;
    ++num_priced;
  };
  bool go = end < next_arrival_;
  if (go && !replica.new_decoders.empty()) {
    // The step composed by the event path may end decoders' first gaps: emitted as
    // on_step_done does. No later step of the run has new decoders.
    go = plan_next();
    if (go) {
      emit_decode_tokens(replica, end);  // no finish: nothing else of on_step_done applies
      take_blocks(replica, next_needed);
      price(next_advance, replica.decode_context_tokens);
    }
  }
  // The other steps' emissions, as emit_decode_tokens would make them (every decoder old,
  // none finishing), applied once for the run: the counter, pass, context and token counts,
  // the blocks taken (nothing reads the cache meanwhile, and taking blocks only evicts, in LRU
  // order, until the free blocks cover the evictable ones) and the gaps, whose GapMax entries
  // are kept as GapMax::push keeps them.
  const int64_t num_decoders = replica.num_decoders;
  const bool record_itl_ns = options_.record_itl_ns;
  const bool record_itl_runs = options_.record_itl_runs;
  int64_t counter = replica.num_decode_steps;
  int64_t advance = replica.step_advance;
  int64_t context_tokens = replica.decode_context_tokens;
  int64_t blocks = 0;
  int64_t num_emits = 0;
  SimTime last_end = replica.last_decode_end;
  const bool first_pass = replica.num_decode_passes == 0;
  gap_entries_.clear();
  // The gaps come in runs of equal gaps (equal step times): each run is recorded once, as
  // add_gap_run and GapMax::push would keep it step by step (the last entry of equal gaps).
  int64_t run_gap_ns = -1;
  int64_t run_count = 0;  // ITL gaps in the run
  int64_t run_k = -1;     // the run's last GapMax entry's counter (-1: none)
  const auto end_gap_run = [&] {
    if (record_itl_runs && run_count > 0) add_gap_run(run_gap_ns, run_count);
    if (run_k >= 0) {
      while (!gap_entries_.empty() && gap_entries_.back().second <= run_gap_ns) {
        gap_entries_.pop_back();
      }
      gap_entries_.emplace_back(run_k, run_gap_ns);
    }
  };
  while (go && end < next_arrival_ && plan_next()) {
    const int64_t gap_ns = (end - last_end).ns();
    if (record_itl_ns) {
      result_.itl_ns.insert(result_.itl_ns.end(), static_cast<size_t>(num_decoders), gap_ns);
    }
    if (gap_ns != run_gap_ns) {
      end_gap_run();
      run_gap_ns = gap_ns;
      run_count = 0;
      run_k = -1;
    }
    run_count += num_decoders;
    if (num_emits > 0 || !first_pass) run_k = counter;
    counter += advance;
    context_tokens += num_decoders * advance;
    last_end = end;
    blocks += next_needed;
    advance = next_advance;
    ++num_emits;
    price(advance, context_tokens);
  }
  end_gap_run();
  if (num_emits > 0) {
    const int64_t emitted = context_tokens - replica.decode_context_tokens;
    for (const auto& [key, gap_ns] : gap_entries_) replica.gaps.push(key, gap_ns);
    replica.num_decode_steps = counter;
    replica.num_decode_passes += num_emits;
    replica.last_decode_end = last_end;
    replica.decode_context_tokens = context_tokens;
    num_emitted_tokens_ += emitted;
    num_tokens_in_chunks_ += emitted - num_decoders * num_emits;
    take_blocks(replica, blocks);
  }
  result_.num_steps += num_priced;
  result_.num_steps_run_ahead += num_priced;
  work_since_poll_ += num_priced;  // steps run ahead count as events (cancel)
  drop_stale_gaps(replica);        // once: queries ask about gaps from a decoder's join on
  return end;
}

}  // namespace llmcap::sim
