// The serving loop: one replica serving arrivals in real (or virtual) time, step after step,
// with the reference scheduler of its batching policy (serve/scheduler.h) and a step executor
// (the reference decoder for real, or a predictor on a virtual clock).
#pragma once

#include <cstdint>
#include <vector>

#include "model/step_time.h"
#include "serve/clock.h"
#include "serve/config.h"
#include "serve/step.h"
#include "serve/step_executor.h"
#include "sim/sim_time.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace llmcap::serve {

/// One step of a run, as the loop took it.
struct ServeStepLog {
  sim::SimTime start;       ///< the decision (admission) time
  sim::SimTime exec_start;  ///< when execute() was called
  sim::SimTime end;         ///< when execute() returned: the step's tokens are emitted then
  /// The step has prefill work (shape.num_prefill_seqs > 0). kStatic and kContinuous steps
  /// are prefill-only or decode-only; a kChunkedPrefill step with prefill chunks may also
  /// hold decodes.
  bool prefill = false;
  std::vector<int64_t> requests;  ///< the items' request ids, in step order
  model::BatchShape shape;
};

struct ServeResult {
  /// Records in the simulator's form (sim/simulator.h: requests by id in arrival order,
  /// end_time, num_steps, num_preemptions, num_rejected, and itl_ns, every inter-token gap in
  /// the simulator's order), so that sim::compute_metrics gives the real run's metrics by the
  /// same definitions. RequestRecord::replica is left -1.
  sim::SimResult records;
  std::vector<ServeStepLog> steps;
  /// Mean over steps that started as soon as the previous one ended (no idle wait between) of
  /// (next start - this start - this step's execute() time): the loop's own per-step
  /// scheduling and bookkeeping, the simulator's step_overhead_s. 0 with a virtual clock.
  double loop_overhead_s = 0;
};

/// Throws sim::InputError ("serve: ...") for a non-positive limit, a policy value outside the
/// enum, a kChunkedPrefill budget below max_num_seqs, or a request with arrival < 0, fewer
/// than 1 prompt or output token, or out of order; with prefix_caching, for a keyed request
/// whose block_tokens neither divides nor is a multiple of block_size_tokens, or whose hashes
/// [begin, begin + count) are not all given.
void validate_serve(const std::vector<sim::RequestSpec>& arrivals, const ServeConfig& config);

/// Serves `arrivals` (sorted by arrival; ids follow that order) on one replica with
/// config.policy exactly as sim::simulate() with the same sim::ServingConfig
/// (ServeConfig::serving()) and one unified replica: a request whose prompt + output needs
/// more blocks than num_kv_blocks is rejected on arrival; at each decision (when idle and a
/// request arrives, or when a step ends), every request that has arrived by now() joins the
/// FCFS waiting queue, then the reference scheduler (serve/scheduler.h) composes the step,
/// the executor runs it, and its tokens are emitted at its end (clock.now() after execute()).
/// For kContinuous (vLLM v0's prefill-first scheduler, Kwon et al., SOSP 2023), the default:
/// waiting requests are admitted (running < max_num_seqs, admitted prompt tokens <=
/// max_num_batched_tokens unless the first, ceil(prefill / block) blocks free; stop at the
/// first that does not fit) and, if any were, the step is a prefill of exactly those;
/// otherwise every running sequence decodes one token, a sequence needing a new block
/// preempting (recompute) the most recently admitted ones until the blocks suffice. An
/// admitted sequence takes the lowest free decoder slot. With a VirtualServeClock and a
/// PredictedStepExecutor the steps and records equal simulate()'s for the same predictor
/// (tests/serve/twin_test.cpp). Throws sim::InputError as validate_serve, and whatever the
/// executor throws.
ServeResult serve(const std::vector<sim::RequestSpec>& arrivals, const ServeConfig& config,
                  StepExecutor& executor, ServeClock& clock);

}  // namespace llmcap::serve
