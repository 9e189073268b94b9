// The step executor of the real serving loop: runs each step on the reference decoder
// (kernels/decoder.h).
#pragma once

#include <cstdint>
#include <vector>

#include "serve/step.h"
#include "serve/step_executor.h"

namespace llmcap::kernels {
class ReferenceDecoder;
class ThreadPool;
}  // namespace llmcap::kernels

namespace llmcap::serve {

/// Runs steps on a ReferenceDecoder (slots = ServeStepItem::slot; needs max_batch >=
/// max_num_seqs and max_context >= the longest prompt + output). A sequence's prefill tokens
/// are the request's prompt token ids (drawn from `seed`, the request id and the position,
/// uniform over the vocabulary) followed by the tokens it has emitted (a recompute). The
/// prefill items of a step run as one ReferenceDecoder::prefill call, each over its chunk's
/// tokens after cached_tokens = num_cached_tokens (0 for a whole prefill or a first chunk, so
/// a recompute overwrites the slot); the decode items then run as one step_slots call over
/// their slots (a kChunkedPrefill step with both is two decoder calls). After each step the
/// token each decode and each completing prefill emitted (the greedy argmax) is kept for a
/// later recompute; a chunk that does not end its prefill emits nothing.
/// Throws std::logic_error when the loop and the decoder disagree (a bug): before a decode, a
/// slot's KV does not hold num_prompt_tokens + num_emitted - 1 tokens; before a prefill item,
/// the tokens kept for a request are not num_emitted, or (a later chunk) the slot's KV does
/// not hold num_cached_tokens tokens.
class DecoderStepExecutor final : public StepExecutor {
 public:
  /// `decoder` and `pool` are not owned and must outlive this object.
  DecoderStepExecutor(kernels::ReferenceDecoder& decoder, kernels::ThreadPool& pool, uint64_t seed);
  void execute(const ServeStep& step) override;
  /// The tokens request `id` has emitted so far (empty for an unknown id).
  std::vector<int64_t> emitted(int64_t id) const;

 private:
  /// Token ids [begin, end) of request `item.request`'s prefill (prompt, then emitted tokens).
  std::vector<int64_t> prefill_tokens(const ServeStepItem& item, int64_t begin, int64_t end) const;

  kernels::ReferenceDecoder& decoder_;
  kernels::ThreadPool& pool_;
  uint64_t seed_;
  std::vector<std::vector<int64_t>> emitted_;  ///< by request id: tokens emitted so far
};

}  // namespace llmcap::serve
