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
  /// Prefix caching: on the first chunk of an admission that found its first
  /// num_cached_tokens tokens in the prefix cache, the keys of those units (unit u covers
  /// tokens [u unit_tokens, (u+1) unit_tokens)), whose KV the executor kept
  /// (PrefixCacheOp::kStore) and puts in the slot before the chunk runs. Empty otherwise.
  std::vector<uint64_t> cached_unit_keys = {};
  int64_t unit_tokens = 0;

  bool is_prefill() const { return kind == Kind::kPrefill; }
  /// A prefill item whose chunk ends the prefill: the sequence emits a token at the step's end.
  bool completes_prefill() const {
    return is_prefill() && num_cached_tokens + num_chunk_tokens == num_prompt_tokens + num_emitted;
  }
};

/// A change to the prefix cache since the previous step (serve/scheduler.h, prefix caching),
/// for the executor to mirror before it runs the step: kStore keeps the KV of tokens
/// [begin_token, begin_token + num_tokens) of request `request` (in slot `slot`, still there)
/// under `key`; kDrop forgets `key` (evicted).
struct PrefixCacheOp {
  enum class Kind { kStore, kDrop };
  Kind kind = Kind::kStore;
  uint64_t key = 0;
  int64_t request = 0;
  int64_t slot = 0;
  int64_t num_prompt_tokens = 0;  ///< the request's prompt (its tokens after it are emitted)
  int64_t begin_token = 0;
  int64_t num_tokens = 0;
};

/// What one engine step runs, with the shape the simulator gives the same step
/// (model/step_time.h). Items in the policy's order: decodes first (admission order), then
/// prefill chunks (partially prefilled sequences oldest first, then those admitted in the
/// step). kStatic and kContinuous steps are prefill-only or decode-only; kChunkedPrefill steps
/// may hold both.
struct ServeStep {
  /// Prefix caching: the cache's changes since the previous step, in order, to carry out
  /// before the items run.
  std::vector<PrefixCacheOp> cache_ops;
  std::vector<ServeStepItem> items;
  model::BatchShape shape;
};

}  // namespace llmcap::serve
