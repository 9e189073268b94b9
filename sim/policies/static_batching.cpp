// kStatic: request-level batching. As kContinuous, but sequences are admitted only when no
// sequence is running (the replica is empty); otherwise the step is a decode step. Members that
// finish leave the batch (no padding is modelled); a preempted member waits for the next batch.
#include "sim/batch_policy.h"
#include "sim/engine.h"

namespace llmcap::sim {
namespace {

class StaticBatching final : public BatchPolicy {
 public:
  void compose_step(Engine& engine, Replica& replica, SimTime now,
                    model::BatchShape& shape) const override {
    if (replica.num_running == 0) admit_whole_prefills(engine, replica, now, shape);
    if (shape.num_prefill_seqs == 0) engine.schedule_decodes(now, replica, shape);
  }
};

}  // namespace

const BatchPolicy& static_batching_policy() {
  static const StaticBatching policy;
  return policy;
}

}  // namespace llmcap::sim
