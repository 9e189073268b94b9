// kChunkedPrefill: Sarathi-Serve / vLLM chunked prefill. Decodes first, then chunks of partial
// prefills (oldest first), then new admissions, all within max_num_batched_tokens. An
// admission reserves the blocks of its whole prefill (vLLM v0's block manager, on which
// Sarathi-Serve is built; Vidur's Sarathi scheduler does the same), so later chunks need no
// new blocks. After a preemption in the step nothing is admitted (as vLLM v1's scheduler).
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
    budget = continue_prefills(engine, replica, now, shape, budget);
    if (engine.num_preemptions() != preemptions_before) return;  // as vLLM v1: no admissions
    admit_chunks(engine, replica, now, shape, budget);
  }
};

}  // namespace

const BatchPolicy& chunked_prefill_policy() {
  static const ChunkedPrefill policy;
  return policy;
}

}  // namespace llmcap::sim
