#include "serve/scheduler.h"

#include <algorithm>
#include <stdexcept>
#include <string>

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
  }
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
  return step;
}

int64_t Scheduler::admit_front(SimTime now) {
  const int64_t id = waiting_.front();
  waiting_.pop_front();
  Sequence& s = mut(id);
  s.state = State::kPrefilling;
  s.num_prefilled = 0;
  s.num_blocks = blocks_for(s.prefill_tokens());
  free_blocks_ -= s.num_blocks;
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
      while (free_blocks_ == 0 && running_.back() != id) preempt(running_.back());
      if (free_blocks_ == 0) {
        preempt(id);  // the most recently admitted itself: nothing after it is left
        break;
      }
      --free_blocks_;
      ++s.num_blocks;
    }
    step.items.push_back({id, s.slot, s.num_prompt_tokens, s.num_emitted});
    ++step.shape.num_decode_seqs;
    step.shape.num_decode_context_tokens += s.prefill_tokens();
  }
}

void Scheduler::release(int64_t id) {
  Sequence& s = mut(id);
  slot_used_[static_cast<size_t>(s.slot)] = false;
  s.slot = -1;
  free_blocks_ += s.num_blocks;
  s.num_blocks = 0;
  s.num_prefilled = 0;
  running_.erase(std::find(running_.begin(), running_.end(), id));
}

/// vLLM's recompute preemption: all blocks freed, back to the front of the waiting queue.
void Scheduler::preempt(int64_t id) {
  release(id);
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
    release(id);
    s.state = State::kFinished;
    rec.completion = end;
    ++num_done_;
  } else {
    s.state = State::kDecoding;
  }
  return gap;
}

void Scheduler::finish_step(const ServeStep& step, SimTime end) {
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

ReferencePolicy reference_policy(sim::BatchingPolicy policy) {
  switch (policy) {
    case sim::BatchingPolicy::kStatic:
      return compose_static;
    case sim::BatchingPolicy::kContinuous:
      return compose_continuous;
    case sim::BatchingPolicy::kChunkedPrefill:
      return compose_chunked_prefill;
  }
  throw std::invalid_argument("serve: unknown batching policy value " +
                              std::to_string(static_cast<int>(policy)));
}

}  // namespace llmcap::serve
