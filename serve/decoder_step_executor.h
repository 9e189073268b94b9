// The step executor of the real serving loop: runs each step on the reference decoder
// (kernels/decoder.h).
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "serve/step.h"
#include "serve/step_executor.h"
#include "sim/workload.h"

namespace llmcap::kernels {
class ReferenceDecoder;
class ThreadPool;
}  // namespace llmcap::kernels

namespace llmcap::serve {

/// Runs steps on a ReferenceDecoder (slots = ServeStepItem::slot; needs max_batch >=
/// max_num_seqs and max_context >= the longest prompt + output). A sequence's prefill tokens
/// are the request's prompt token ids followed by the tokens it has emitted (a recompute). A
/// prompt token id is drawn (uniform over the vocabulary) from `seed`, its position and: the
/// key of its keyed block when it lies in a whole keyed block of the prompt (set_prefixes;
/// sim/prefix_keys.h), else the request id; so requests whose prefix keys agree have the same
/// token ids there. The prefill items of a step run as one ReferenceDecoder::prefill call,
/// each over its chunk's tokens after cached_tokens = num_cached_tokens (0 for a whole prefill
/// or a first chunk without cached prefix, so a recompute overwrites the slot); the decode
/// items then run as one step_slots call over their slots (a kChunkedPrefill step with both
/// is two decoder calls). After each step the token each decode and each completing prefill
/// emitted (the greedy argmax) is kept for a later recompute; a chunk that does not end its
/// prefill emits nothing.
/// Prefix caching: the executor keeps the KV of every unit the scheduler caches. Before a
/// step's items run it carries out the step's cache_ops in order (kStore copies the unit's KV
/// out of its slot with ReferenceDecoder::read_kv, with the unit's token ids; kDrop forgets
/// it), then writes the kept KV of each item's cached_unit_keys into the item's slot
/// (write_kv), so that the chunk after them finds its cached prefix in place and only the rest
/// is computed.
/// Throws std::logic_error when the loop and the decoder disagree (a bug): before a decode, a
/// slot's KV does not hold num_prompt_tokens + num_emitted - 1 tokens; before a prefill item,
/// the tokens kept for a request are not num_emitted, or (a later chunk, or after a cached
/// prefix) the slot's KV does not hold num_cached_tokens tokens; a unit stored twice, dropped
/// or used while not kept; or a kept unit whose token ids are not those of the request that
/// uses it (prefix keys that claim equal blocks the token ids do not have, as a multi-turn
/// session's outputs would).
class DecoderStepExecutor final : public StepExecutor {
 public:
  /// `decoder` and `pool` are not owned and must outlive this object.
  DecoderStepExecutor(kernels::ReferenceDecoder& decoder, kernels::ThreadPool& pool, uint64_t seed);
  /// The prefix identities of the requests (by id: arrival order) the next steps serve; by
  /// default none is keyed. Call before serving a workload with keyed requests.
  void set_prefixes(const std::vector<sim::RequestSpec>& arrivals);
  void execute(const ServeStep& step) override;
  /// The tokens request `id` has emitted so far (empty for an unknown id).
  std::vector<int64_t> emitted(int64_t id) const;
  /// Prompt token id of request `id` (of num_prompt_tokens) at position `p`.
  int64_t prompt_token(int64_t id, int64_t p) const;
  /// Prefix caching: units kept now, and tokens of KV written from kept units into slots so far.
  int64_t num_kept_units() const { return static_cast<int64_t>(kept_.size()); }
  int64_t num_reused_kv_tokens() const { return reused_kv_tokens_; }

 private:
  /// Token ids [begin, end) of request `request`'s prefill (prompt, then emitted tokens).
  std::vector<int64_t> prefill_tokens(int64_t request, int64_t num_prompt_tokens, int64_t begin,
                                      int64_t end) const;
  void apply(const PrefixCacheOp& op);
  /// Writes the kept KV of `item`'s cached units into its slot.
  void restore_cached_prefix(const ServeStepItem& item);

  struct KeptUnit {
    std::vector<uint8_t> kv;      ///< ReferenceDecoder::read_kv's layout
    std::vector<int64_t> tokens;  ///< the token ids it holds the KV of
  };

  kernels::ReferenceDecoder& decoder_;
  kernels::ThreadPool& pool_;
  uint64_t seed_;
  std::vector<std::vector<int64_t>> emitted_;  ///< by request id: tokens emitted so far
  /// By request id: its keyed block size (0: not keyed) and the keys of its prompt's whole
  /// keyed blocks.
  std::vector<int64_t> block_tokens_;
  std::vector<std::vector<uint64_t>> prompt_keys_;
  std::unordered_map<uint64_t, KeptUnit> kept_;
  int64_t reused_kv_tokens_ = 0;
};

}  // namespace llmcap::serve
