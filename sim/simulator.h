// A fleet of model replicas serving requests with continuous batching over a paged KV cache.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/step_time.h"
#include "sim/sim_time.h"
#include "sim/workload.h"

namespace llmcap::sim {

/// Engine limits of one replica (the names are vLLM's).
struct ServingConfig {
  int64_t max_num_seqs = 256;              ///< sequences running at once
  int64_t max_num_batched_tokens = 16384;  ///< new tokens per step (prefill admission budget)
  int64_t block_size_tokens = 16;          ///< tokens per KV-cache block
  int64_t num_kv_blocks = 0;               ///< KV-cache blocks of the replica (> 0)
};

/// Router across the replicas of a fleet, chosen by name.
enum class RouterKind { kRoundRobin, kLeastOutstanding };
/// "round_robin" | "least_outstanding". Throws InputError("<context>: unknown router "x";
/// known: round_robin, least_outstanding").
RouterKind parse_router(const std::string& name, const std::string& context);

struct FleetConfig {
  int64_t num_replicas = 1;
  ServingConfig serving;
  RouterKind router = RouterKind::kLeastOutstanding;
};

/// What happened to one request. Times are absolute simulated times.
struct RequestRecord {
  int64_t id = 0;  ///< index in arrival order (per simulation)
  int64_t replica = -1;
  SimTime arrival;
  SimTime first_scheduled;  ///< start of the step that first ran its prefill
  SimTime first_token;      ///< end of the step that emitted its first output token
  SimTime completion;       ///< end of the step that emitted its last output token
  int64_t num_prompt_tokens = 0;
  int64_t num_output_tokens = 0;
  int64_t num_preemptions = 0;  ///< times its KV cache was freed and recomputed
  SimTime max_itl;              ///< largest gap between two consecutive output tokens
  bool rejected = false;        ///< prompt + output can never fit in the replica's KV cache
};

struct SimResult {
  std::vector<RequestRecord> requests;  ///< one per request, in id order
  /// Every inter-token gap (ns) of every request, in the order they happened. Used for ITL
  /// percentiles.
  std::vector<int64_t> itl_ns;
  SimTime end_time;  ///< completion of the last step
  int64_t num_steps = 0;
  int64_t num_preemptions = 0;
  int64_t num_rejected = 0;
};

/// Runs the fleet on the workload until every request has finished (or been rejected).
/// Deterministic for a given (workload, config, predictor, seed); no global state, so several
/// simulations may run on several threads at once (the predictor is only called const).
/// Throws InputError for a bad configuration or workload (non-positive limits, a request with
/// fewer than 1 prompt or output token, negative think time, ...).
///
/// Semantics (a discrete-event simulation; events ordered by (time, phase, sequence), see
/// event_queue.h):
///  - Arrivals. Open loop: each request arrives at its `arrival` (ids are given in arrival
///    order, ties in input order). Closed loop: user i sends its first request at a uniformly
///    random offset in [0, think_time_s); after each completion (or rejection) it thinks for
///    an exponentially distributed time with mean think_time_s and sends the next one; lengths
///    are drawn uniformly from `lengths`; no request is sent at or after duration_s, requests
///    in flight finish. `seed` drives the closed loop's random streams (start offsets, think
///    times and lengths each have their own stream); an open loop uses no randomness.
///  - Rejection. A request whose prompt + output tokens need more KV blocks than a replica's
///    whole cache (ceil((prompt + output) / block_size_tokens) > num_kv_blocks) is rejected on
///    arrival without being routed: rejected = true, replica = -1, first_scheduled,
///    first_token and completion = arrival.
///  - Routing. kRoundRobin: replica (k mod num_replicas) for the k-th routed request in arrival
///    order. kLeastOutstanding: the replica with the fewest requests routed to it and not yet
///    finished; ties go to the lowest index.
///  - KV cache. A sequence's KV holds its prompt and every emitted token but the last (whose
///    KV the next decode step writes); t tokens need ceil(t / block_size_tokens) blocks.
///  - Steps. An idle replica with work schedules a step decision at the current time in the
///    kSchedule phase, so every arrival of that instant is seen. The decision is vLLM v0's
///    default (prefill first): admit waiting sequences in FCFS order while running + admitted
///    < max_num_seqs, the admitted prompt tokens <= max_num_batched_tokens (a first prompt
///    over the budget is admitted alone) and ceil(prompt tokens / block) blocks are free; stop
///    at the first that does not fit (no skipping). A preempted sequence's "prompt" is its
///    prompt plus the tokens it has emitted (recompute). If any were admitted, the step is a
///    prefill-only step: num_prefill_attention_pairs = sum c(c+1)/2, no cached tokens,
///    num_prefill_seqs_completing = number admitted. Otherwise it is a decode step over all
///    running sequences (oldest first), each writing one more KV entry: a sequence that needs a
///    new block when none is free preempts the most recently admitted running sequence (all
///    its blocks freed, num_preemptions + 1, back to the FRONT of the waiting queue), possibly
///    itself, until it fits. num_decode_context_tokens = sum of prompt + emitted tokens.
///    The step lasts SimTime::Seconds(predictor.step_time_s(shape)).
///  - Step end (kStepComplete). Every sequence of the step emits one output token: a decode
///    its next one, a first prefill its first one (first_token), and a recompute prefill the
///    next one after those it emitted before preemption (as vLLM samples at the end of any
///    prefill; first_token is not re-emitted). Each token after the first records the gap to
///    the sequence's previous token in itl_ns and max_itl (a gap across a preemption
///    included). A sequence that has emitted num_output_tokens is done: its blocks are freed,
///    completion is recorded, its router count drops and its closed-loop user starts
///    thinking. A request with one output token is done at the end of its prefill step.
///  - End. Conservation checks: every request finished exactly once or was rejected, every
///    request emitted exactly num_output_tokens tokens, every KV block is free, no queue holds
///    anything; a violation is a bug and aborts with file:line (sim/check.h).
SimResult simulate(const Workload& workload, const FleetConfig& fleet,
                   const model::StepTimePredictor& predictor, uint64_t seed);

}  // namespace llmcap::sim
