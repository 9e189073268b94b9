// kPrefillFirst: SGLang's scheduler without mixed chunks (its default): a step is a prefill step
// whenever any prefill work can be scheduled, else a decode step over every running sequence.
// A prefill step takes max_num_batched_tokens new tokens (SGLang's chunked_prefill_size): the
// partially prefilled sequences first (oldest first), then waiting sequences FCFS, each a chunk
// of min(its remaining prefill, the budget left), so a long prompt is chunked over several
// prefill steps while the running decodes wait.
#include "sim/batch_policy.h"
#include "sim/engine.h"

namespace llmcap::sim {
namespace {

class PrefillFirst final : public BatchPolicy {
 public:
  void compose_step(Engine& engine, Replica& replica, SimTime now,
                    model::BatchShape& shape) const override {
    const int64_t budget =
        continue_prefills(engine, replica, now, shape, replica.serving.max_num_batched_tokens);
    admit_chunks(engine, replica, now, shape, budget);
    if (shape.num_prefill_seqs == 0) engine.schedule_decodes(now, replica, shape);
  }
};

}  // namespace

const BatchPolicy& prefill_first_policy() {
  static const PrefillFirst policy;
  return policy;
}

}  // namespace llmcap::sim
