// kContinuous: vLLM v0's default scheduler, prefill first. Admit waiting sequences (FCFS, whole
// prefills within max_num_seqs, the max_num_batched_tokens budget and the free blocks); if any
// were admitted the step is a prefill-only step, otherwise a decode step over every running
// sequence (preempting from the back when blocks run out).
#include "sim/batch_policy.h"
#include "sim/engine.h"

namespace llmcap::sim {
namespace {

class ContinuousBatching final : public BatchPolicy {
 public:
  void compose_step(Engine& engine, Replica& replica, SimTime now,
                    model::BatchShape& shape) const override {
    admit_whole_prefills(engine, replica, now, shape);
    if (shape.num_prefill_seqs == 0) engine.schedule_decodes(now, replica, shape);
  }
};

}  // namespace

const BatchPolicy& continuous_batching_policy() {
  static const ContinuousBatching policy;
  return policy;
}

}  // namespace llmcap::sim
