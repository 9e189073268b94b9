#include "serve/decoder_step_executor.h"

#include <stdexcept>
#include <string>

#include "base/random.h"
#include "kernels/decoder.h"
#include "kernels/thread_pool.h"

namespace llmcap::serve {
DecoderStepExecutor::DecoderStepExecutor(kernels::ReferenceDecoder& decoder,
                                         kernels::ThreadPool& pool, uint64_t seed)
    : decoder_(decoder), pool_(pool), seed_(seed) {}

std::vector<int64_t> DecoderStepExecutor::emitted(int64_t id) const {
  if (id < 0 || id >= static_cast<int64_t>(emitted_.size())) return {};
  return emitted_[static_cast<size_t>(id)];
}

void DecoderStepExecutor::set_prefixes(const std::vector<sim::RequestSpec>& arrivals) {
  block_tokens_.assign(arrivals.size(), 0);
  prompt_keys_.assign(arrivals.size(), {});
  for (size_t i = 0; i < arrivals.size(); ++i) {
    const sim::PrefixIdentity& prefix = arrivals[i].prefix;
    if (!prefix.keyed()) continue;
    block_tokens_[i] = prefix.block_tokens;
    sim::append_prefix_keys(prefix, arrivals[i].num_prompt_tokens,
                            arrivals[i].num_prompt_tokens / prefix.block_tokens, prompt_keys_[i]);
  }
}

int64_t DecoderStepExecutor::prompt_token(int64_t id, int64_t p) const {
  const auto vocab = static_cast<uint64_t>(decoder_.shape().vocab);
  // The key of the whole keyed block holding p, else the request id.
  uint64_t source = static_cast<uint64_t>(id) * 0xD1B54A32D192ED03ull;
  const auto r = static_cast<size_t>(id);
  if (r < block_tokens_.size() && block_tokens_[r] > 0) {
    const auto block = static_cast<size_t>(p / block_tokens_[r]);
    if (block < prompt_keys_[r].size()) source = prompt_keys_[r][block] ^ 0x5851F42D4C957F2Dull;
  }
  uint64_t state = seed_ ^ source ^ (static_cast<uint64_t>(p) * 0x8CB92BA72F3D8DD7ull);
  return static_cast<int64_t>(base::splitmix64_next(state) % vocab);
}

std::vector<int64_t> DecoderStepExecutor::prefill_tokens(int64_t request, int64_t num_prompt_tokens,
                                                         int64_t begin, int64_t end) const {
  const std::vector<int64_t>& emitted = emitted_[static_cast<size_t>(request)];
  std::vector<int64_t> t;
  t.reserve(static_cast<size_t>(end - begin));
  for (int64_t p = begin; p < end; ++p) {
    t.push_back(p >= num_prompt_tokens ? emitted[static_cast<size_t>(p - num_prompt_tokens)]
                                       : prompt_token(request, p));
  }
  return t;
}

void DecoderStepExecutor::apply(const PrefixCacheOp& op) {
  const std::string unit = "serve-bench: prefix cache unit " + std::to_string(op.key);
  if (op.kind == PrefixCacheOp::Kind::kDrop) {
    if (kept_.erase(op.key) == 0) throw std::logic_error(unit + " dropped but not kept");
    return;
  }
  if (kept_.count(op.key) > 0) throw std::logic_error(unit + " stored twice");
  if (decoder_.slot_context(op.slot) < op.begin_token + op.num_tokens) {
    throw std::logic_error(
        unit + " of request " + std::to_string(op.request) + ": slot " + std::to_string(op.slot) +
        " holds " + std::to_string(decoder_.slot_context(op.slot)) +
        " KV tokens, the unit ends at " + std::to_string(op.begin_token + op.num_tokens));
  }
  KeptUnit& kept = kept_[op.key];
  kept.kv = decoder_.read_kv(op.slot, op.begin_token, op.num_tokens);
  kept.tokens = prefill_tokens(op.request, op.num_prompt_tokens, op.begin_token,
                               op.begin_token + op.num_tokens);
}

void DecoderStepExecutor::restore_cached_prefix(const ServeStepItem& item) {
  for (size_t u = 0; u < item.cached_unit_keys.size(); ++u) {
    const auto it = kept_.find(item.cached_unit_keys[u]);
    const std::string who = "serve-bench: request " + std::to_string(item.request) + ": unit " +
                            std::to_string(u) + " of its cached prefix";
    if (it == kept_.end()) throw std::logic_error(who + " is not kept");
    const int64_t begin = static_cast<int64_t>(u) * item.unit_tokens;
    if (it->second.tokens !=
        prefill_tokens(item.request, item.num_prompt_tokens, begin, begin + item.unit_tokens)) {
      throw std::logic_error(who +
                             " holds the KV of other token ids (prefix keys that claim "
                             "equal blocks whose tokens differ)");
    }
    decoder_.write_kv(item.slot, begin, it->second.kv);
    reused_kv_tokens_ += item.unit_tokens;
  }
}

void DecoderStepExecutor::execute(const ServeStep& step) {
  for (const ServeStepItem& item : step.items) {
    if (item.request >= static_cast<int64_t>(emitted_.size())) {
      emitted_.resize(static_cast<size_t>(item.request) + 1);
    }
  }
  for (const PrefixCacheOp& op : step.cache_ops) apply(op);
  for (const ServeStepItem& item : step.items) {
    if (!item.cached_unit_keys.empty()) restore_cached_prefix(item);
  }
  std::vector<std::vector<int64_t>> tokens;
  std::vector<kernels::PrefillSequence> prefills;
  std::vector<int64_t> decode_slots;
  tokens.reserve(step.items.size());
  for (const ServeStepItem& item : step.items) {
    const std::string who = "serve-bench: request " + std::to_string(item.request);
    if (item.is_prefill()) {
      const std::vector<int64_t>& emitted = emitted_[static_cast<size_t>(item.request)];
      if (static_cast<int64_t>(emitted.size()) != item.num_emitted) {
        throw std::logic_error(who + " has " + std::to_string(emitted.size()) +
                               " tokens kept, the loop says " + std::to_string(item.num_emitted) +
                               " emitted");
      }
      if (item.num_cached_tokens > 0 &&
          decoder_.slot_context(item.slot) != item.num_cached_tokens) {
        throw std::logic_error(
            who + " in slot " + std::to_string(item.slot) + ": the decoder holds " +
            std::to_string(decoder_.slot_context(item.slot)) +
            " KV tokens, the loop's chunk starts after " + std::to_string(item.num_cached_tokens));
      }
      tokens.push_back(prefill_tokens(item.request, item.num_prompt_tokens, item.num_cached_tokens,
                                      item.num_cached_tokens + item.num_chunk_tokens));
      prefills.push_back(
          kernels::PrefillSequence{item.slot, item.num_cached_tokens, tokens.back()});
    } else {
      const int64_t expected = item.num_prompt_tokens + item.num_emitted - 1;
      if (decoder_.slot_context(item.slot) != expected) {
        throw std::logic_error(who + " in slot " + std::to_string(item.slot) +
                               ": the decoder holds " +
                               std::to_string(decoder_.slot_context(item.slot)) +
                               " KV tokens, the loop expects " + std::to_string(expected));
      }
      decode_slots.push_back(item.slot);
    }
  }
  if (!prefills.empty()) decoder_.prefill(prefills, pool_);
  if (!decode_slots.empty()) decoder_.step_slots(decode_slots, pool_);
  for (const ServeStepItem& item : step.items) {
    if (item.is_prefill() && !item.completes_prefill()) continue;
    emitted_[static_cast<size_t>(item.request)].push_back(decoder_.slot_next_token(item.slot));
  }
}

}  // namespace llmcap::serve
