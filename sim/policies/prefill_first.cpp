// kPrefillFirst: SGLang's scheduler without mixed chunks (its default): a step is a prefill step
// whenever any prefill work can be scheduled, else a decode step over every running sequence.
// A prefill step takes max_num_batched_tokens new tokens (SGLang's chunked_prefill_size): the
// partially prefilled sequences first (oldest first), then waiting sequences FCFS, each a chunk
// of min(its remaining prefill, the budget left), so a long prompt is chunked over several
// prefill steps while the running decodes wait.
#include <algorithm>

#include "sim/batch_policy.h"
#include "sim/engine.h"

namespace llmcap::sim {
namespace {

class PrefillFirst final : public BatchPolicy {
 public:
  void compose_step(Engine& engine, Replica& replica, SimTime now,
                    model::BatchShape& shape) const override {
    int64_t budget = replica.serving.max_num_batched_tokens;
    for (const int64_t id : replica.prefilling) {
      if (budget == 0) break;
      Sequence& seq = engine.sequence(id);
      const int64_t cached = seq.num_prefilled;
      const int64_t chunk = std::min(seq.prefill_target - cached, budget);
      seq.num_prefilled += chunk;
      engine.add_chunk(replica, shape, id, cached, chunk);
      budget -= chunk;
    }
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
    if (shape.num_prefill_seqs == 0) engine.schedule_decodes(now, replica, shape);
  }
};

}  // namespace

const BatchPolicy& prefill_first_policy() {
  static const PrefillFirst policy;
  return policy;
}

}  // namespace llmcap::sim
