// A fleet of model replicas serving requests with static, continuous or chunked-prefill batching
// over a paged KV cache, behind a router.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/step_time.h"
#include "sim/sim_time.h"
#include "sim/workload.h"

namespace llmcap::sim {

/// How a replica forms each step, chosen by name (semantics in full at simulate() and in
/// docs/simulator.md).
///  - kStatic: request-level batching (Orca, Yu et al. OSDI 2022, calls it that): a batch of
///    waiting requests is admitted (FCFS, the same limits as kContinuous) only when the
///    replica is empty; it runs one prefill step and then decode steps until every member has
///    finished; nothing joins a batch in progress.
///  - kContinuous: iteration-level batching as vLLM v0's default scheduler does it (Kwon et
///    al., SOSP 2023): prefill-first, new sequences join at any step.
///  - kChunkedPrefill: Sarathi-Serve (Agrawal et al., OSDI 2024) / vLLM's chunked-prefill
///    scheduler: each step has a budget of max_num_batched_tokens new tokens, taken first by
///    one token per running decode, then by prefill chunks of partially prefilled sequences
///    (oldest first), then by chunks of newly admitted waiting ones; decodes and prefill
///    chunks share one step.
enum class BatchingPolicy { kStatic, kContinuous, kChunkedPrefill };
/// "static" | "continuous" | "chunked_prefill". Throws InputError("<context>: unknown batching
/// policy "x"; known: static, continuous, chunked_prefill").
BatchingPolicy parse_batching_policy(const std::string& name, const std::string& context);
/// The name parse_batching_policy() reads ("static", "continuous", "chunked_prefill").
const char* batching_policy_name(BatchingPolicy policy);

/// Engine limits of one replica (the names are vLLM's).
struct ServingConfig {
  BatchingPolicy policy = BatchingPolicy::kContinuous;
  int64_t max_num_seqs = 256;  ///< sequences running at once
  /// New tokens per step: the prefill admission budget (kStatic, kContinuous), or the chunk
  /// budget shared by decodes and prefill chunks (kChunkedPrefill, where it must be >=
  /// max_num_seqs so that every running decode fits in a step).
  int64_t max_num_batched_tokens = 16384;
  int64_t block_size_tokens = 16;  ///< tokens per KV-cache block
  int64_t num_kv_blocks = 0;       ///< KV-cache blocks of the replica (> 0)
};

/// Router across the replicas of a fleet, chosen by name (semantics at simulate()).
///  - kRoundRobin: replicas in turn.
///  - kLeastOutstanding: the replica with the fewest requests routed to it and not finished.
///  - kLeastKvLoad: the replica whose KV cache has the most free blocks after those its
///    waiting requests' prompts need; ties go to the lowest index.
///  - kPowerOfTwo: power of two choices (Mitzenmacher, IEEE TPDS 2001): two distinct replicas
///    drawn at random (seeded stream Stream::kRouter), the one with fewer outstanding
///    requests; ties go to the lower index.
enum class RouterKind { kRoundRobin, kLeastOutstanding, kLeastKvLoad, kPowerOfTwo };
/// "round_robin" | "least_outstanding" | "least_kv_load" | "power_of_two". Throws
/// InputError("<context>: unknown router "x"; known: round_robin, least_outstanding,
/// least_kv_load, power_of_two").
RouterKind parse_router(const std::string& name, const std::string& context);
/// The name parse_router() reads.
const char* router_name(RouterKind router);

/// The part a replica plays (docs/simulator.md, "Disaggregated prefill and decode").
///  - kUnified: prefills and decodes its own requests (the usual engine).
///  - kPrefill: a prefill pool member: runs prefills only; a request whose prefill finished
///    (its first token emitted) moves, KV cache and all, to a decode replica.
///  - kDecode: a decode pool member: pulls the KV caches of prefilled requests and decodes
///    them (and recomputes, locally, those it preempts).
/// A fleet is either all kUnified or prefill and decode pools (at least one of each):
/// disaggregation as in DistServe (Zhong et al., OSDI 2024) and Splitwise (Patel et al.,
/// ISCA 2024).
enum class ReplicaRole { kUnified, kPrefill, kDecode };
/// "unified" | "prefill" | "decode".
const char* replica_role_name(ReplicaRole role);

/// A group of identical replicas (e.g. the replicas of one instance type): their number,
/// engine limits, step-time predictor, role and network share.
struct ReplicaGroup {
  std::string name;  ///< names the group in error messages, e.g. "aws-p5.48xlarge tp=2"
  int64_t num_replicas = 1;
  ServingConfig serving;
  /// Step times of one replica of this group. Not owned; must outlive simulate(). Null: the
  /// predictor passed to simulate() (an error for the overload without one).
  const model::StepTimePredictor* predictor = nullptr;
  ReplicaRole role = ReplicaRole::kUnified;
  /// Disaggregated fleets only: each replica's share of its instance's network, bytes per
  /// second per direction (> 0), and the one-way network latency in seconds (>= 0).
  double network_bandwidth_bytes_per_s = 0;
  double network_latency_s = 0;
};

struct FleetConfig {
  /// Homogeneous fleet (`groups` empty): num_replicas replicas with `serving`, all using the
  /// predictor passed to simulate().
  int64_t num_replicas = 1;
  ServingConfig serving;
  /// Routes arrivals among every replica, or, in a disaggregated fleet, within the prefill
  /// pool.
  RouterKind router = RouterKind::kLeastOutstanding;
  /// Mixed or disaggregated fleet: when non-empty, the fleet is these groups' replicas,
  /// numbered in group order (group 0's replicas first), and num_replicas and serving above
  /// are unused.
  std::vector<ReplicaGroup> groups;
  /// Disaggregated fleets: routes prefilled requests within the decode pool.
  RouterKind decode_router = RouterKind::kLeastOutstanding;
  /// Disaggregated fleets: KV-cache bytes per token of one replica's model (all layers, K and
  /// V; model::ModelSpec::kv_cache_bytes_per_token), > 0. A prefilled prompt of p tokens moves
  /// p x kv_bytes_per_token bytes.
  int64_t kv_bytes_per_token = 0;
};

/// What happened to one request. Times are absolute simulated times.
struct RequestRecord {
  int64_t id = 0;        ///< index in arrival order (per simulation)
  int64_t replica = -1;  ///< the replica it was routed to (in a disaggregated fleet: prefilled on)
  int32_t client_class = 0;  ///< RequestSpec::client_class (0 in a closed loop)
  /// Disaggregated fleets: the decode replica its KV cache moved to; -1 otherwise (also for a
  /// request done at the end of its prefill, with one output token).
  int32_t decode_replica = -1;
  SimTime arrival;
  SimTime first_scheduled;  ///< start of the step that first ran (a chunk of) its prefill
  SimTime first_token;      ///< end of the step that emitted its first output token
  SimTime completion;       ///< end of the step that emitted its last output token
  int64_t num_prompt_tokens = 0;
  int64_t num_output_tokens = 0;
  int64_t num_preemptions = 0;  ///< times its KV cache was freed and recomputed
  SimTime max_itl;              ///< largest gap between two consecutive output tokens
  bool rejected = false;        ///< prompt + output can never fit in any replica's KV cache
  /// Disaggregated fleets (decode_replica >= 0): when the decode replica pulled its KV cache
  /// (reserved the blocks and asked for the transfer) and when the KV landed there. The
  /// transfer takes latency + bytes / bandwidth after any transfer queued before it on either
  /// end's link (see simulate()). Zero otherwise.
  SimTime kv_transfer_start;
  SimTime kv_transfer_end;
};

/// Options of one run that change what is recorded, never what happens.
/// Per client class (index = RequestSpec::client_class) p99 bounds for
/// SimOptions::stop_at_certain_p99_miss, in seconds, with the semantics of sim::Slo and
/// metrics.h: TTFT = first_token - arrival, TPOT = (completion - first_token) / (output - 1)
/// over requests of >= 2 output tokens, p99 by nearest rank. A class beyond the vectors is
/// not watched.
struct P99Bounds {
  std::vector<double> ttft_s;
  std::vector<double> tpot_s;
};

struct SimOptions {
  /// Stop the run as soon as its verdict against these p99 bounds is certain to be "missed",
  /// which is all the planner's fleet-size search needs of a failing fleet: a request is
  /// rejected, or more TTFTs (or TPOTs) of one class lie above its bound than the p99 allows
  /// (with n values, the nearest-rank p99 exceeds a bound once n - ceil(0.99 n) + 1 values
  /// do). A run that meets the bounds runs to the end, unchanged. Open-loop workloads only
  /// (a closed loop's request count is not known in advance); ignored for a closed loop.
  /// A stopped run sets SimResult::stopped_early and stop_reason; its records are incomplete.
  std::optional<P99Bounds> stop_at_certain_p99_miss;
  /// Polled every 4,096 events (from the simulating thread); once it returns true the run
  /// stops (SimResult::cancelled, stopped_early). For a caller whose answer is no longer
  /// wanted (a GUI input changed). Empty: never.
  std::function<bool()> cancel;
  /// Keep every inter-token gap in SimResult::itl_ns: memory grows with output tokens (8 bytes
  /// each), so very large runs turn it off (the per-request max_itl is kept either way).
  bool record_itl_ns = true;
  /// Width of the windows of the per-replica time series (SimResult::time_series); zero (the
  /// default) records none. Must be >= 0.
  SimTime time_series_interval = SimTime::Zero();
};

/// One window [start, end) of one replica's time series. Means are time averages over the
/// window (integrals of piecewise-constant signals, exact to the nanosecond), so a window
/// without a step boundary is still described; the last window ends at SimResult::end_time
/// and its means are over that shorter span.
struct InstanceWindow {
  SimTime start;
  SimTime end;
  int64_t num_steps = 0;           ///< steps that started in the window
  double mean_num_waiting = 0;     ///< requests routed here and not admitted (queue length)
  int64_t max_num_waiting = 0;     ///< largest queue length held for a positive time
  double mean_batch_size = 0;      ///< sequences in the step in flight (0 while idle)
  double mean_kv_utilization = 0;  ///< KV blocks held / num_kv_blocks
  double busy_fraction = 0;        ///< fraction of the window with a step in flight
};

struct SimResult {
  std::vector<RequestRecord> requests;  ///< one per request, in id order
  /// Every inter-token gap (ns) of every request, in the order they happened (within one step
  /// in the replica's admission order). Used for ITL percentiles. Empty unless
  /// SimOptions::record_itl_ns.
  std::vector<int64_t> itl_ns;
  SimTime end_time;  ///< completion of the last step
  int64_t num_steps = 0;
  int64_t num_preemptions = 0;
  int64_t num_rejected = 0;
  int64_t num_kv_transfers = 0;   ///< disaggregated fleets: KV caches moved to decode replicas
  int64_t kv_transfer_bytes = 0;  ///< their bytes in all
  /// time_series[r][w]: window w of replica r, windows of SimOptions::time_series_interval
  /// from 0 to end_time (at least one). Empty when the interval is zero.
  std::vector<std::vector<InstanceWindow>> time_series;
  /// SimOptions::stop_at_certain_p99_miss stopped the run at end_time: requests, itl_ns and
  /// the counts cover only what happened until then, the time series are empty, and
  /// compute_metrics refuses the result. stop_reason says which bound and why.
  bool stopped_early = false;
  std::string stop_reason;
  bool cancelled = false;  ///< stopped by SimOptions::cancel (then also stopped_early)
};

/// Runs the fleet on the workload until every request has finished (or been rejected).
/// Deterministic for a given (workload, config, predictor, seed); no global state, so several
/// simulations may run on several threads at once (the predictors are only called const).
/// `predictor` serves a homogeneous fleet and the groups of fleet.groups without their own.
/// Throws InputError, before anything runs, for a bad configuration or workload: non-positive
/// limits, an unknown policy or router value, a chunked_prefill chunk budget below one token
/// or below max_num_seqs, a negative time-series interval, a request with fewer than 1 prompt
/// or output token, a negative think time; for groups (messages name `fleet.groups[i]
/// ("name")`): unified groups beside prefill or decode ones, a disaggregated fleet without a
/// prefill or a decode group, a non-positive kv_bytes_per_token or network bandwidth, a
/// negative latency, static batching in a decode pool, ...
///
/// Cost: O(log) work per request and O(1) amortised work per step (plus O(log) per step for
/// the event queue and the max-ITL bookkeeping), whatever the batch size, so a run costs in
/// steps and requests, not tokens; SimOptions::record_itl_ns and the time series add O(output
/// tokens) and O(windows) memory respectively (docs/simulator.md).
///
/// Semantics (a discrete-event simulation; events ordered by (time, phase, sequence), see
/// event_queue.h):
///  - Arrivals. Open loop: each request arrives at its `arrival` (ids are given in arrival
///    order, ties in input order). Closed loop: user i sends its first request at a uniformly
///    random offset in [0, think_time_s); after each completion (or rejection) it thinks for
///    an exponentially distributed time with mean think_time_s and sends the next one; lengths
///    are drawn uniformly from `lengths`; no request is sent at or after duration_s, requests
///    in flight finish. `seed` drives the closed loop's random streams (start offsets, think
///    times and lengths each have their own stream) and the power-of-two router's
///    (Stream::kRouter); an open loop with another router uses no randomness.
///  - Rejection. A request fits a replica when the KV blocks it needs there are at most the
///    replica's whole cache (ceil(tokens / block_size_tokens) <= num_kv_blocks), tokens being
///    prompt + output (a unified or decode replica) or the prompt (a prefill replica). A
///    request that fits no replica (no prefill or no decode replica, when disaggregated) is
///    rejected on arrival without being routed: rejected = true, replica = -1,
///    first_scheduled, first_token and completion = arrival.
///  - Routing, in arrival order, among the replicas the request fits (every replica of a
///    homogeneous fleet; mixed fleets skip those whose cache is too small). kRoundRobin: the
///    next fitting replica in cyclic order after the last one chosen (replica k mod n for the
///    k-th request when all fit). kLeastOutstanding: the replica with the fewest requests
///    routed to it and not yet finished. kLeastKvLoad: the replica with the largest
///    num_free_blocks - (sum over its waiting queue of ceil(KV tokens / block_size_tokens)),
///    KV tokens being the prefill (the prompt plus, after a preemption, the tokens emitted so
///    far) or, for a migrating sequence, the KV it brings. kPowerOfTwo: with one fitting
///    replica, it; otherwise, over the m fitting ones, a = index(m), b = index(m - 1), b +=
///    (b >= a) from the router stream (two distinct replicas), the one with fewer outstanding
///    requests. Ties go to the lowest index. Routers see replicas of every group alike, so
///    least_outstanding and least_kv_load send more work to faster or larger replicas.
///  - KV cache. A sequence's KV holds its prompt and every emitted token but the last (whose
///    KV the next decode step writes); t tokens need ceil(t / block_size_tokens) blocks.
///    Admission reserves the blocks of the whole prefill, also under kChunkedPrefill (as vLLM
///    v0's block manager, on which Sarathi-Serve is built, and Vidur's Sarathi scheduler), so
///    only decodes ever grow a sequence's KV.
///  - Steps. An idle replica with work schedules a step decision at the current time in the
///    kSchedule phase, so every arrival of that instant is seen. A preempted sequence's
///    prefill ("recompute") covers its prompt plus the tokens it has emitted. Admission is
///    FCFS and stops at the first waiting sequence that does not fit (no skipping).
///    kContinuous (vLLM v0's default, prefill first): admit waiting sequences while running +
///    admitted < max_num_seqs, the admitted prefill tokens <= max_num_batched_tokens (a first
///    one over the budget is admitted alone) and ceil(prefill tokens / block) blocks are free.
///    If any were admitted, the step is a prefill-only step: num_prefill_attention_pairs = sum
///    c(c+1)/2, no cached tokens, num_prefill_seqs_completing = number admitted. Otherwise it
///    is a decode step over all running sequences (oldest first), each writing one more KV
///    entry: a sequence that needs a new block when none is free preempts the most recently
///    admitted running sequence (all its blocks freed, num_preemptions + 1, back to the FRONT
///    of the waiting queue), possibly itself, until it fits. num_decode_context_tokens = sum
///    of prompt + emitted tokens.
///    kStatic: as kContinuous, but sequences are admitted only when no sequence is running
///    (the replica is empty); otherwise the step is a decode step as above. Members that
///    finish leave the batch (no padding is modelled); a preempted member waits for the next
///    batch.
///    kChunkedPrefill: budget = max_num_batched_tokens. (1) Decodes: every decoding sequence
///    takes one token, growing KV and preempting exactly as a kContinuous decode step (a
///    partially prefilled sequence, the most recently admitted, is the first victim).
///    (2) Partially prefilled sequences, oldest first: a chunk of c = min(remaining prefill,
///    budget left) tokens after the p already prefilled (their blocks are already held).
///    (3) Only if nothing was preempted in this step (as vLLM v1's scheduler): admit waiting
///    sequences FCFS while budget is left, running < max_num_seqs and the blocks of the whole
///    prefill are free, each with a first chunk of c = min(prefill tokens, budget left). The
///    step's shape sums both: per chunk c*p + c(c+1)/2 attention pairs and p cached tokens,
///    completing = chunks that finish their sequence's prefill. A sequence's first_scheduled
///    is the start of the step of its first chunk; a preempted partial prefill loses its
///    progress (recompute).
///    Every step lasts SimTime::Seconds(predictor.step_time_s(shape)).
///  - Step end (kStepComplete). Every decode of the step emits its next token and every
///    sequence whose prefill finished in the step emits one token: its first (first_token)
///    or, for a recompute, the next one after those it emitted before preemption (as vLLM
///    samples at the end of any prefill; first_token is not re-emitted). A chunk that does not
///    finish its prefill emits nothing. Each token after the first records the gap to the
///    sequence's previous token in itl_ns (if recorded) and max_itl (a gap across a
///    preemption included). A sequence that has emitted num_output_tokens is done: its blocks
///    are freed, completion is recorded, its router count drops and its closed-loop user
///    starts thinking (finishers of one step in admission order). A request with one output
///    token is done at the end of its prefill step.
///  - Time series (SimOptions::time_series_interval > 0): per replica and window, time
///    averages of the waiting-queue length, the batch size of the step in flight, the KV
///    blocks held / num_kv_blocks and busy (a step in flight), plus the steps started and the
///    largest queue length held for a positive time (InstanceWindow).
///  - Mixed fleets (fleet.groups, all kUnified): every replica runs its group's policy, limits
///    and predictor; nothing else differs.
///  - Disaggregated fleets (kPrefill and kDecode groups): arrivals are routed within the
///    prefill pool (fleet.router). A prefill replica runs prefill steps as above; at the end
///    of the step that finishes a request's prefill it emits the first token (first_token:
///    TTFT is the prefill plus its first token, as DistServe measures it). A request with one
///    output token is then done; any other leaves the prefill replica's running set, its KV
///    blocks (ceil(prompt / block)) still held there, is routed within the decode pool
///    (fleet.decode_router, its own stream substream_seed(seed, 1) / Stream::kRouter; tokens
///    prompt + output; the count of outstanding requests moves from the prefill replica to
///    the decode replica) and joins the back of that replica's waiting queue as migrating.
///    A decode replica pulls migrating sequences from the front of its queue (FCFS, never
///    skipping; as DistServe's decoding instances fetch the KV when they have room), at any
///    time, also while a step is in flight: when running + transfers in flight <
///    max_num_seqs and ceil(prompt / block) blocks are free it reserves them (the KV of the
///    prompt; the first token's KV is written by its first decode step) and starts the
///    transfer of bytes = prompt x kv_bytes_per_token: start = max(now, the prefill
///    replica's link free, the decode replica's link free), both links busy until start +
///    bytes / min(the two network_bandwidth_bytes_per_s), landing max(the two latencies)
///    later (kv_transfer_start = now, kv_transfer_end = landing). At the landing the prefill
///    replica frees the blocks and the sequence joins the decode replica's decoders (if a
///    step is in flight, when it ends) as its most recently admitted running sequence; its
///    second token comes at the end of its first decode step there, so the transfer shows in
///    the gap after the first token (ITL, TPOT, E2E). Decode replicas preempt and recompute
///    locally like any replica (a recompute is a prefill at the decode replica). Prefill
///    replicas never decode, so never preempt; their held blocks stop admissions until
///    transfers free them.
///  - End. Conservation checks: every request finished exactly once or was rejected, the
///    tokens emitted step by step add up to every request's num_output_tokens, every KV block
///    is free, no queue holds anything; a violation is a bug and aborts with file:line
///    (sim/check.h).
SimResult simulate(const Workload& workload, const FleetConfig& fleet,
                   const model::StepTimePredictor& predictor, uint64_t seed,
                   const SimOptions& options = {});

/// simulate() for a fleet of groups that each carry their predictor (fleet.groups non-empty,
/// every group's predictor set; InputError otherwise).
SimResult simulate(const Workload& workload, const FleetConfig& fleet, uint64_t seed,
                   const SimOptions& options = {});

}  // namespace llmcap::sim
