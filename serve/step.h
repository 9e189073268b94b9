// What one step of the serving loop runs: the sequences of the step, each a decode or a prefill
// (chunk), with the batch shape the simulator gives the same step.
#pragma once

#include <cstdint>
#include <vector>

#include "model/step_time.h"

namespace llmcap::serve {

/// One sequence of a step, as the executor needs it.
struct ServeStepItem {
  enum class Kind {
    kDecode,   ///< one token: consumes the last emitted token
    kPrefill,  ///< a prefill, or a chunk of one (kChunkedPrefill)
  };
  int64_t request = 0;            ///< request id (index in arrival order)
  int64_t slot = 0;               ///< decoder slot, 0..max_num_seqs-1
  int64_t num_prompt_tokens = 0;  ///< the request's prompt
  /// Output tokens emitted before the step. A prefill covers num_prompt_tokens + num_emitted
  /// tokens (more than the prompt only when recomputing after a preemption); a decode
  /// consumes the last emitted token at position num_prompt_tokens + num_emitted - 1.
  int64_t num_emitted = 0;
  Kind kind = Kind::kDecode;
  /// Prefill items: the chunk is the prefill's tokens [num_cached_tokens, num_cached_tokens +
  /// num_chunk_tokens); the tokens before it are already in the KV cache (earlier chunks of
  /// the same prefill). A whole prefill has num_cached_tokens 0 and num_chunk_tokens =
  /// num_prompt_tokens + num_emitted. Unused (0) for a decode.
  int64_t num_cached_tokens = 0;
  int64_t num_chunk_tokens = 0;

  bool is_prefill() const { return kind == Kind::kPrefill; }
  /// A prefill item whose chunk ends the prefill: the sequence emits a token at the step's end.
  bool completes_prefill() const {
    return is_prefill() && num_cached_tokens + num_chunk_tokens == num_prompt_tokens + num_emitted;
  }
};

/// What one engine step runs, with the shape the simulator gives the same step
/// (model/step_time.h). Items in the policy's order: decodes first (admission order), then
/// prefill chunks (partially prefilled sequences oldest first, then those admitted in the
/// step). kStatic and kContinuous steps are prefill-only or decode-only; kChunkedPrefill steps
/// may hold both.
struct ServeStep {
  std::vector<ServeStepItem> items;
  model::BatchShape shape;
};

}  // namespace llmcap::serve
