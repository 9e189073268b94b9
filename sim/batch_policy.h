// Batching policies: how a replica composes its next step. One interface, one file per policy
// (sim/policies/), and a registry that maps BatchingPolicy and the policy's name to it.
// Adding a policy: a file in sim/policies/ and one line in the registry (sim/batch_policy.cpp).
// Internal to the simulator: a policy works on the replica's state through the engine's
// primitives (sim/engine.h), which keep the KV blocks, the running list and the records
// consistent.
#pragma once

#include <span>

#include "model/step_time.h"
#include "sim/fleet_config.h"
#include "sim/sim_time.h"

namespace llmcap::sim {

class Engine;
struct Replica;

class BatchPolicy {
 public:
  virtual ~BatchPolicy() = default;
  /// Composes the next step of the idle `replica` at `now`: admits, preempts and chunks
  /// sequences through `engine`, adding each to `shape`. An empty shape: no step can run now.
  virtual void compose_step(Engine& engine, Replica& replica, SimTime now,
                            model::BatchShape& shape) const = 0;

 protected:
  /// vLLM v0 admission (kContinuous, kStatic): whole prefills, FCFS, stopping at the first
  /// waiting sequence that does not fit (max_num_seqs, the max_num_batched_tokens budget that
  /// a first prefill alone may exceed, the blocks of its whole prefill). A migrating sequence
  /// met on the way is pulled (no prefill) if it fits.
  static void admit_whole_prefills(Engine& engine, Replica& replica, SimTime now,
                                   model::BatchShape& shape);
  /// Chunked prefills (kChunkedPrefill, kPrefillFirst): the next chunk of each partially
  /// prefilled sequence, oldest first, min(its remaining prefill, the budget left) tokens
  /// (their blocks already held, unless allocate_per_chunk). Returns the budget left.
  /// With allocates_per_chunk() each chunk first takes its blocks (Engine::grow_prefill); one
  /// that cannot is preempted when it is the newest, else waits, and then no later chunk or
  /// admission runs in the step (0 is returned).
  static int64_t continue_prefills(Engine& engine, Replica& replica, SimTime now,
                                   model::BatchShape& shape, int64_t budget);
  /// Then waiting sequences FCFS while budget is left, running < max_num_seqs and the blocks
  /// of the whole prefill are free, each with a first chunk of min(its prefill, the budget
  /// left); one not finished joins replica.prefilling. A migrating sequence met on the way is
  /// pulled if it fits.
  static void admit_chunks(Engine& engine, Replica& replica, SimTime now, model::BatchShape& shape,
                           int64_t budget);
};

struct BatchPolicyEntry {
  BatchingPolicy kind;
  const char* name;  ///< as scenarios spell it (parse_batching_policy)
  const BatchPolicy& (*get)();
};

/// Every batching policy, in BatchingPolicy order.
std::span<const BatchPolicyEntry> batch_policy_registry();
/// The entry of `kind`, or null for a value outside the enum.
const BatchPolicyEntry* find_batch_policy(BatchingPolicy kind);

}  // namespace llmcap::sim
