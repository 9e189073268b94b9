#include "serve/decoder_step_executor.h"

#include <stdexcept>
#include <string>

#include "base/random.h"
#include "kernels/decoder.h"
#include "kernels/thread_pool.h"

namespace llmcap::serve {
namespace {}  // namespace

DecoderStepExecutor::DecoderStepExecutor(kernels::ReferenceDecoder& decoder,
                                         kernels::ThreadPool& pool, uint64_t seed)
    : decoder_(decoder), pool_(pool), seed_(seed) {}

std::vector<int64_t> DecoderStepExecutor::emitted(int64_t id) const {
  if (id < 0 || id >= static_cast<int64_t>(emitted_.size())) return {};
  return emitted_[static_cast<size_t>(id)];
}

std::vector<int64_t> DecoderStepExecutor::prefill_tokens(const ServeStepItem& item, int64_t begin,
                                                         int64_t end) const {
  const std::vector<int64_t>& emitted = emitted_[static_cast<size_t>(item.request)];
  const auto vocab = static_cast<uint64_t>(decoder_.shape().vocab);
  std::vector<int64_t> t;
  t.reserve(static_cast<size_t>(end - begin));
  for (int64_t p = begin; p < end; ++p) {
    if (p >= item.num_prompt_tokens) {
      t.push_back(emitted[static_cast<size_t>(p - item.num_prompt_tokens)]);
      continue;
    }
    uint64_t state = seed_ ^ (static_cast<uint64_t>(item.request) * 0xD1B54A32D192ED03ull) ^
                     (static_cast<uint64_t>(p) * 0x8CB92BA72F3D8DD7ull);
    t.push_back(static_cast<int64_t>(base::splitmix64_next(state) % vocab));
  }
  return t;
}

void DecoderStepExecutor::execute(const ServeStep& step) {
  for (const ServeStepItem& item : step.items) {
    if (item.request >= static_cast<int64_t>(emitted_.size())) {
      emitted_.resize(static_cast<size_t>(item.request) + 1);
    }
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
      tokens.push_back(prefill_tokens(item, item.num_cached_tokens,
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
