// kChunkedPrefill: Sarathi-Serve / vLLM chunked prefill. Decodes first, then chunks of partial
// prefills (oldest first), then new admissions, all within max_num_batched_tokens. An
// admission reserves the blocks of its whole prefill (vLLM v0's block manager, on which
// Sarathi-Serve is built; Vidur's Sarathi scheduler does the same), so later chunks need no
// new blocks. After a preemption in the step nothing is admitted (as vLLM v1's scheduler).
#include <algorithm>

#include "sim/batch_policy.h"
#include "sim/check.h"
#include "sim/engine.h"

namespace llmcap::sim {
namespace {

class ChunkedPrefill final : public BatchPolicy {
 public:
  void compose_step(Engine& engine, Replica& replica, SimTime now,
                    model::BatchShape& shape) const override {
    const int64_t preemptions_before = engine.num_preemptions();
    engine.schedule_decodes(now, replica, shape);
    // Each decode takes 1 + its draft tokens of the budget (vLLM v1 counts spec tokens).
    int64_t budget = replica.serving.max_num_batched_tokens - shape.num_decode_seqs -
                     shape.num_decode_draft_tokens;
    LLMCAP_SIM_CHECK(budget >= 1 || replica.prefilling.empty());
    for (const int64_t id : replica.prefilling) {
      if (budget == 0) break;
      Sequence& seq = engine.sequence(id);
      const int64_t cached = seq.num_prefilled;
      const int64_t chunk = std::min(seq.prefill_target - cached, budget);
      seq.num_prefilled += chunk;
      engine.add_chunk(replica, shape, id, cached, chunk);
      budget -= chunk;
    }
    if (engine.num_preemptions() != preemptions_before) return;  // as vLLM v1: no admissions
    while (!replica.waiting.empty() && budget > 0 &&
           replica.num_running + replica.num_incoming < replica.serving.max_num_seqs) {
      if (engine.front_is_migrating(replica)) {
        if (!engine.try_pull_front(replica, now)) break;
        continue;
      }
      const int64_t id = replica.waiting.front();
      const Engine::Admission admission = engine.plan_admission(replica);
      if (admission.num_blocks > replica.kv.num_free_blocks) break;
      const int64_t chunk = std::min(admission.num_tokens, budget);
      engine.admit_front(replica, now, chunk, admission);
      engine.add_chunk(replica, shape, id, admission.cached_tokens, chunk);
      if (chunk < admission.num_tokens) replica.prefilling.push_back(id);
      budget -= chunk;
    }
  }
};

}  // namespace

const BatchPolicy& chunked_prefill_policy() {
  static const ChunkedPrefill policy;
  return policy;
}

}  // namespace llmcap::sim
