#include "sim/batch_policy.h"

#include <algorithm>
#include <array>

#include "sim/engine.h"

namespace llmcap::sim {

// One accessor per file of sim/policies/.
const BatchPolicy& static_batching_policy();
const BatchPolicy& continuous_batching_policy();
const BatchPolicy& chunked_prefill_policy();
const BatchPolicy& prefill_first_policy();

namespace {

constexpr std::array kPolicies = {
    BatchPolicyEntry{BatchingPolicy::kStatic, "static", static_batching_policy},
    BatchPolicyEntry{BatchingPolicy::kContinuous, "continuous", continuous_batching_policy},
    BatchPolicyEntry{BatchingPolicy::kChunkedPrefill, "chunked_prefill", chunked_prefill_policy},
    BatchPolicyEntry{BatchingPolicy::kPrefillFirst, "prefill_first", prefill_first_policy},
};

}  // namespace

std::span<const BatchPolicyEntry> batch_policy_registry() { return kPolicies; }

const BatchPolicyEntry* find_batch_policy(BatchingPolicy kind) {
  for (const BatchPolicyEntry& entry : kPolicies) {
    if (entry.kind == kind) return &entry;
  }
  return nullptr;
}

void BatchPolicy::admit_whole_prefills(Engine& engine, Replica& replica, SimTime now,
                                       model::BatchShape& shape) {
  while (!replica.waiting.empty()) {
    if (replica.num_running + replica.num_incoming >= replica.serving.max_num_seqs) break;
    if (engine.front_is_migrating(replica)) {
      if (!engine.try_pull_front(replica, now)) break;
      continue;
    }
    const int64_t id = replica.waiting.front();
    const Engine::Admission admission = engine.plan_admission(replica);
    if (shape.num_prefill_seqs > 0 &&
        shape.num_prefill_tokens + admission.num_tokens > replica.serving.max_num_batched_tokens) {
      break;
    }
    if (admission.num_blocks > replica.kv.num_free_blocks) break;
    engine.admit_front(replica, now, admission.num_tokens, admission);
    engine.add_chunk(replica, shape, id, admission.cached_tokens, admission.num_tokens);
  }
}

int64_t BatchPolicy::continue_prefills(Engine& engine, Replica& replica, SimTime now,
                                       model::BatchShape& shape, int64_t budget) {
  // By index: a chunk's blocks may preempt partial prefills (allocate_per_chunk).
  for (size_t i = 0; i < replica.prefilling.size() && budget > 0; ++i) {
    const int64_t id = replica.prefilling[i];
    Sequence& seq = engine.sequence(id);
    const int64_t cached = seq.num_prefilled;
    const int64_t chunk = std::min(seq.prefill_target - cached, budget);
    if (replica.serving.allocates_per_chunk() && !engine.grow_prefill(replica, now, id, chunk)) {
      if (seq.state != SeqState::kPrefilling) break;  // preempted itself: the newest
      // It waits for a newer decode's blocks; nothing newer takes blocks before it (vLLM v1
      // would preempt the newer requests).
      return 0;
    }
    seq.num_prefilled += chunk;
    engine.add_chunk(replica, shape, id, cached, chunk);
    budget -= chunk;
  }
  return budget;
}

void BatchPolicy::admit_chunks(Engine& engine, Replica& replica, SimTime now,
                               model::BatchShape& shape, int64_t budget) {
  while (!replica.waiting.empty() && budget > 0 &&
         replica.num_running + replica.num_incoming < replica.serving.max_num_seqs) {
    if (engine.front_is_migrating(replica)) {
      if (!engine.try_pull_front(replica, now)) break;
      continue;
    }
    const int64_t id = replica.waiting.front();
    Engine::Admission admission = engine.plan_admission(replica);
    const int64_t chunk = std::min(admission.num_tokens, budget);
    admission.num_blocks = engine.first_chunk_blocks(replica, admission, chunk);
    if (admission.num_blocks > replica.kv.num_free_blocks) break;
    engine.admit_front(replica, now, chunk, admission);
    engine.add_chunk(replica, shape, id, admission.cached_tokens, chunk);
    if (chunk < admission.num_tokens) replica.prefilling.push_back(id);
    budget -= chunk;
  }
}

}  // namespace llmcap::sim
