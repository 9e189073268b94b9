#include "serve/scheduler.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace llmcap::serve {

using sim::SimTime;
using State = Sequence::State;

Scheduler::Scheduler(const std::vector<sim::RequestSpec>& arrivals, const ServeConfig& config,
                     sim::SimResult& records)
    : config_(config),
      records_(records),
      seqs_(arrivals.size()),
      slot_used_(static_cast<size_t>(config.max_num_seqs), false),
      free_blocks_(config.num_kv_blocks) {
  records_.requests.resize(arrivals.size());
  for (size_t i = 0; i < arrivals.size(); ++i) {
    sim::RequestRecord& rec = records_.requests[i];
    rec.id = static_cast<int64_t>(i);
    rec.client_class = arrivals[i].client_class;
    rec.arrival = arrivals[i].arrival;
    rec.num_prompt_tokens = seqs_[i].num_prompt_tokens = arrivals[i].num_prompt_tokens;
    rec.num_output_tokens = seqs_[i].num_output_tokens = arrivals[i].num_output_tokens;
    const sim::PrefixIdentity& prefix = arrivals[i].prefix;
    if (!config.prefix_caching || !prefix.keyed()) continue;
    // Units of U = max(S, B) tokens; unit u's key is that of the last keyed block in it.
    Sequence& s = seqs_[i];
    const int64_t block = prefix.block_tokens;
    s.unit_tokens = std::max(block, config.block_size_tokens);
    const int64_t context = s.num_prompt_tokens + s.num_output_tokens;
    std::vector<uint64_t> keys;
    sim::append_prefix_keys(prefix, s.num_prompt_tokens, context / block, keys);
    const int64_t per_unit = s.unit_tokens / block;
    for (int64_t u = 0; u < context / s.unit_tokens; ++u) {
      s.unit_keys.push_back(keys[static_cast<size_t>((u + 1) * per_unit - 1)]);
    }
  }
  if (config.prefix_caching) records_.prefix_cache.assign(1, sim::PrefixCacheStats{});
}

int64_t Scheduler::blocks_for(int64_t tokens) const {
  return (tokens + config_.block_size_tokens - 1) / config_.block_size_tokens;
}

void Scheduler::arrive(int64_t id) {
  Sequence& s = mut(id);
  if (blocks_for(s.num_prompt_tokens + s.num_output_tokens) > config_.num_kv_blocks) {
    sim::RequestRecord& rec = record(id);
    rec.rejected = true;
    rec.first_scheduled = rec.first_token = rec.completion = rec.arrival;
    s.state = State::kFinished;
    ++records_.num_rejected;
    ++num_done_;
    return;
  }
  s.state = State::kWaiting;
  waiting_.push_back(id);
}

ServeStep Scheduler::compose(SimTime now) {
  ServeStep step = reference_policy(config_.policy)(*this, now);
  if (step.items.empty()) throw std::logic_error("serve: the scheduler composed an empty step");
  step.cache_ops = std::move(cache_ops_);
  cache_ops_.clear();
  return step;
}

int64_t Scheduler::num_matched_units(int64_t id) const {
  const Sequence& s = seq(id);
  const int64_t t = s.prefill_tokens();
  int64_t m = 0;
  while (m < static_cast<int64_t>(s.unit_keys.size()) && (m + 1) * s.unit_tokens <= t - 1 &&
         cache_.count(s.unit_keys[static_cast<size_t>(m)]) > 0) {
    ++m;
  }
  return m;
}

int64_t Scheduler::num_cached_tokens(int64_t id) const {
  return num_matched_units(id) * seq(id).unit_tokens;
}

bool Scheduler::fits(int64_t id) const {
  const Sequence& s = seq(id);
  const int64_t m = num_matched_units(id);
  const int64_t new_blocks =
      blocks_for(s.prefill_tokens()) - m * s.unit_tokens / config_.block_size_tokens;
  int64_t matched_evictable = 0;
  for (int64_t u = 0; u < m; ++u) {
    const Entry& e = cache_.at(s.unit_keys[static_cast<size_t>(u)]);
    if (e.refcount == 0) matched_evictable += e.num_blocks;
  }
  return new_blocks <= free_blocks_ + evictable_blocks_ - matched_evictable;
}

void Scheduler::evict_lru_head() {
  const uint64_t key = lru_.front();
  lru_.pop_front();
  const int64_t blocks = cache_.at(key).num_blocks;
  cache_.erase(key);
  evictable_blocks_ -= blocks;
  free_blocks_ += blocks;
  records_.prefix_cache[0].num_evicted_blocks += blocks;
  PrefixCacheOp op;
  op.kind = PrefixCacheOp::Kind::kDrop;
  op.key = key;
  cache_ops_.push_back(op);
}

bool Scheduler::take_block() {
  if (free_blocks_ == 0 && !lru_.empty()) evict_lru_head();
  if (free_blocks_ == 0) return false;
  --free_blocks_;
  return true;
}

int64_t Scheduler::admit_front(SimTime now) {
  const int64_t id = waiting_.front();
  waiting_.pop_front();
  Sequence& s = mut(id);
  s.state = State::kPrefilling;
  // Claim the cached prefix, then take the new blocks, evicting while free ones are short.
  const int64_t m = num_matched_units(id);
  for (int64_t u = 0; u < m; ++u) {
    Entry& e = cache_.at(s.unit_keys[static_cast<size_t>(u)]);
    if (e.refcount++ == 0) {
      lru_.erase(e.lru);
      evictable_blocks_ -= e.num_blocks;
    }
    s.units.push_back(true);
  }
  const int64_t cached = m * s.unit_tokens;
  s.num_prefilled = cached;
  s.cached_prefix_pending = cached > 0;
  s.num_blocks = blocks_for(s.prefill_tokens()) - cached / config_.block_size_tokens;
  while (free_blocks_ < s.num_blocks) {
    if (lru_.empty()) throw std::logic_error("serve: admitted a sequence that does not fit");
    evict_lru_head();
  }
  free_blocks_ -= s.num_blocks;
  if (config_.prefix_caching) {
    sim::PrefixCacheStats& stats = records_.prefix_cache[0];
    if (!s.scheduled) {
      record(id).num_cached_prompt_tokens = std::min(cached, s.num_prompt_tokens);
      stats.num_prompt_tokens += s.num_prompt_tokens;
      stats.num_cached_prompt_tokens += record(id).num_cached_prompt_tokens;
    }
    stats.num_saved_prefill_tokens += cached;
  }
  const auto free_slot = std::find(slot_used_.begin(), slot_used_.end(), false);
  if (free_slot == slot_used_.end()) throw std::logic_error("serve: no free decoder slot");
  *free_slot = true;
  s.slot = free_slot - slot_used_.begin();
  if (!s.scheduled) {
    s.scheduled = true;
    record(id).first_scheduled = now;
  }
  running_.push_back(id);
  return id;
}

void Scheduler::add_prefill_chunk(ServeStep& step, int64_t id, int64_t num_tokens) {
  Sequence& s = mut(id);
  ServeStepItem item{id, s.slot, s.num_prompt_tokens, s.num_emitted};
  item.kind = ServeStepItem::Kind::kPrefill;
  item.num_cached_tokens = s.num_prefilled;
  item.num_chunk_tokens = num_tokens;
  if (s.cached_prefix_pending) {
    s.cached_prefix_pending = false;
    item.unit_tokens = s.unit_tokens;
    for (size_t u = 0; u < s.units.size(); ++u) item.cached_unit_keys.push_back(s.unit_keys[u]);
  }
  s.num_prefilled += num_tokens;
  step.items.push_back(item);
  const int64_t c = num_tokens, p = item.num_cached_tokens;
  model::BatchShape& shape = step.shape;
  ++shape.num_prefill_seqs;
  shape.num_prefill_tokens += c;
  shape.num_prefill_attention_pairs += c * p + c * (c + 1) / 2;
  shape.num_prefill_cached_tokens += p;
  if (item.completes_prefill()) ++shape.num_prefill_seqs_completing;
}

void Scheduler::decode_running(ServeStep& step) {
  for (size_t i = 0; i < running_.size(); ++i) {
    const int64_t id = running_[i];
    Sequence& s = mut(id);
    if (s.state != State::kDecoding) continue;
    // Its KV holds prompt + emitted - 1 tokens; the decode writes one more.
    if ((s.prefill_tokens() - 1) % config_.block_size_tokens == 0) {
      bool taken = take_block();
      while (!taken && running_.back() != id) {
        preempt(running_.back());
        taken = take_block();
      }
      if (!taken) {
        preempt(id);  // the most recently admitted itself: nothing after it is left
        break;
      }
      ++s.num_blocks;
    }
    step.items.push_back({id, s.slot, s.num_prompt_tokens, s.num_emitted});
    ++step.shape.num_decode_seqs;
    step.shape.num_decode_context_tokens += s.prefill_tokens();
  }
}

void Scheduler::insert_units(int64_t id, int64_t kv_tokens) {
  Sequence& s = mut(id);
  if (s.unit_tokens == 0) return;
  const int64_t unit_blocks = s.unit_tokens / config_.block_size_tokens;
  for (auto u = static_cast<int64_t>(s.units.size()); (u + 1) * s.unit_tokens <= kv_tokens; ++u) {
    const uint64_t key = s.unit_keys[static_cast<size_t>(u)];
    const bool cached_by_another = cache_.count(key) > 0;
    s.units.push_back(!cached_by_another);
    if (cached_by_another) continue;
    cache_[key] = Entry{unit_blocks, 1, lru_.end()};
    s.num_blocks -= unit_blocks;
    PrefixCacheOp op;
    op.key = key;
    op.request = id;
    op.slot = s.slot;
    op.num_prompt_tokens = s.num_prompt_tokens;
    op.begin_token = u * s.unit_tokens;
    op.num_tokens = s.unit_tokens;
    cache_ops_.push_back(op);
  }
}

void Scheduler::release(int64_t id, int64_t kv_tokens) {
  Sequence& s = mut(id);
  insert_units(id, kv_tokens);  // the units its decodes completed
  for (auto u = static_cast<int64_t>(s.units.size()) - 1; u >= 0; --u) {
    if (!s.units[static_cast<size_t>(u)]) continue;
    const uint64_t key = s.unit_keys[static_cast<size_t>(u)];
    Entry& e = cache_.at(key);
    if (--e.refcount == 0) {
      e.lru = lru_.insert(lru_.end(), key);
      evictable_blocks_ += e.num_blocks;
    }
  }
  s.units.clear();
  s.cached_prefix_pending = false;
  slot_used_[static_cast<size_t>(s.slot)] = false;
  s.slot = -1;
  free_blocks_ += s.num_blocks;
  s.num_blocks = 0;
  s.num_prefilled = 0;
  running_.erase(std::find(running_.begin(), running_.end(), id));
}

/// vLLM's recompute preemption: all blocks freed, back to the front of the waiting queue.
void Scheduler::preempt(int64_t id) {
  const Sequence& s = seq(id);
  release(id, s.state == State::kPrefilling ? s.num_prefilled : s.prefill_tokens() - 1);
  mut(id).state = State::kWaiting;
  waiting_.push_front(id);
  ++record(id).num_preemptions;
  ++records_.num_preemptions;
}

SimTime Scheduler::emit(int64_t id, SimTime end) {
  Sequence& s = mut(id);
  sim::RequestRecord& rec = record(id);
  SimTime gap = SimTime::Zero();
  if (s.num_emitted == 0) {
    rec.first_token = end;
  } else {
    gap = end - s.last_token;
    rec.max_itl = std::max(rec.max_itl, gap);
  }
  ++s.num_emitted;
  s.last_token = end;
  if (s.num_emitted == s.num_output_tokens) {
    release(id, s.prefill_tokens() - 1);  // the last token never enters the KV
    s.state = State::kFinished;
    rec.completion = end;
    ++num_done_;
  } else {
    s.state = State::kDecoding;
  }
  return gap;
}

void Scheduler::finish_step(const ServeStep& step, SimTime end) {
  // Prefix caching: the units the step's prefill chunks completed, in step order, before any
  // sequence leaves.
  for (const ServeStepItem& item : step.items) {
    if (item.is_prefill()) insert_units(item.request, seq(item.request).num_prefilled);
  }
  // Decodes first, in admission order. (The simulator lists the gaps of the sequences that
  // decoded in the previous decode step, then of those that joined since, in joining order:
  // the same list, as under kStatic and kContinuous a sequence joins the decoders after every
  // one admitted before it, and under kChunkedPrefill, where every step decodes once some
  // sequence does, the gaps of one step are all equal.)
  for (const ServeStepItem& item : step.items) {
    if (!item.is_prefill()) records_.itl_ns.push_back(emit(item.request, end).ns());
  }
  // Then the prefills that end in this step, in step order; a recompute's token has a gap.
  for (const ServeStepItem& item : step.items) {
    if (!item.completes_prefill()) continue;
    const bool recompute = seq(item.request).num_emitted > 0;
    const SimTime gap = emit(item.request, end);
    if (recompute) records_.itl_ns.push_back(gap.ns());
  }
}

void Scheduler::check_blocks_returned() const {
  int64_t cached = 0;
  bool all_evictable = true;
  for (const auto& [key, entry] : cache_) {
    cached += entry.num_blocks;
    all_evictable = all_evictable && entry.refcount == 0;
  }
  if (free_blocks_ + cached != config_.num_kv_blocks || cached != evictable_blocks_ ||
      !all_evictable) {
    throw std::logic_error(
        "serve: KV blocks not returned at the end: " + std::to_string(free_blocks_) + " free, " +
        std::to_string(cached) + " cached (" + std::to_string(evictable_blocks_) +
        " evictable) of " + std::to_string(config_.num_kv_blocks));
  }
}

ReferencePolicy reference_policy(sim::BatchingPolicy policy) {
  switch (policy) {
    case sim::BatchingPolicy::kStatic:
      return compose_static;
    case sim::BatchingPolicy::kContinuous:
      return compose_continuous;
    case sim::BatchingPolicy::kChunkedPrefill:
      return compose_chunked_prefill;
    case sim::BatchingPolicy::kPrefillFirst:
      break;  // not in the reference engine (serving_loop.cpp refuses it first)
  }
  throw std::invalid_argument("serve: unknown batching policy value " +
                              std::to_string(static_cast<int>(policy)));
}

}  // namespace llmcap::serve
