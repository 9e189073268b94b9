// The simulator's door: simulate() runs a fleet of model replicas serving requests with static,
// continuous or chunked-prefill batching over a paged KV cache, behind a router. The fleet's
// description is sim/fleet_config.h, the options sim/sim_options.h, the results
// sim/sim_result.h; the event loop is sim/simulator.cpp (docs/architecture.md lists the rest).
#pragma once

#include <cstdint>

#include "model/step_time.h"
#include "sim/fleet_config.h"
#include "sim/sim_options.h"
#include "sim/sim_result.h"
#include "sim/sim_time.h"
#include "sim/workload.h"

namespace llmcap::sim {

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
///    only decodes ever grow a sequence's KV; unless ServingConfig::allocates_per_chunk()
///    (kChunkedPrefill with allocate_per_chunk, vLLM v1): a prefill then holds the blocks of
///    its prefilled tokens (cached ones included), admission needs those of its cached tokens
///    and first chunk, and each later chunk takes its own before it is scheduled. A chunk
///    short of blocks preempts the most recently admitted running sequence while that is a
///    partial prefill with no chunk in the step; when that is itself, it is preempted (as
///    vLLM v1's scheduler preempts from the back, the request itself last); when it is a
///    decoding sequence (already in the step), the chunk waits and nothing later in the step
///    (chunks, admissions) takes blocks. vLLM v1 would preempt that newer decode instead.
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
///    kPrefillFirst (SGLang's scheduler): budget = max_num_batched_tokens (its
///    chunked_prefill_size). If any prefill chunk can run, the step is a prefill-only step:
///    partially prefilled sequences first (oldest first), then waiting sequences admitted FCFS
///    while budget is left, running < max_num_seqs and the blocks of the whole prefill are free,
///    each a chunk of min(remaining prefill, budget left). Otherwise it is a decode step over
///    every running sequence, as kContinuous's.
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
///  - Prefix caching (ServingConfig::prefix_caching, on unified replicas whose KV layout has
///    no sliding windows; not applied to disaggregated pools). A keyed request
///    (RequestSpec::prefix, sim/prefix_keys.h) of S-token key blocks on KV blocks of B tokens
///    (one must divide the other) is cached in units of U = max(S, B) tokens (U / B blocks),
///    unit u keyed by its last key block's chained key. The replica keeps a map key -> entry
///    {blocks, reference count}; entries no running sequence holds are evictable, in an LRU
///    list, and count as free blocks. Admission of a prefill of T tokens matches the longest
///    run of cached units from unit 0 with (u + 1) U <= T - 1 (one token is always computed,
///    as vLLM caps a hit): c = matched x U tokens are cached and only T - c computed (the
///    chunk's shape counts c as cached tokens; token budgets count computed tokens); it takes
///    the new blocks ceil(T / B) - matched x U / B plus the evictable matched units, and fits
///    when those are free. Matched entries gain a reference; new blocks come from the blocks
///    that are free and uncached, and when those run short, evictable entries are evicted
///    whole from the LRU head. At the end of a step each prefill chunk's completed units
///    become entries its sequence holds (a unit whose key is already cached stays the
///    sequence's own). A sequence leaving (finish or preemption) walks its units from the
///    last to the first: units its decodes completed (its KV: prompt + emitted - 1 tokens)
///    are cached as evictable when absent, held entries lose a reference and join the LRU
///    tail when none is left; its other blocks are freed. A preempted sequence keeps no
///    claim: its recompute matches only what is still cached. An unkeyed sequence is keyed
///    privately when preempted (stream prefix_chain(kPrivateStreamSalt, its id), blocks of B
///    tokens), so its decoded units and a partial prefill's computed chunks are cached as it
///    leaves and its recompute can reuse them. RequestRecord::
///    num_cached_prompt_tokens is min(c, prompt) at its first admission; SimResult::
///    prefix_cache has each replica's PrefixCacheStats.
///  - KV offload (ServingConfig::kv_offload, num_host_blocks > 0, with a prefix cache): a host
///    tier of at most num_host_blocks blocks behind the prefix cache, an LRU of units (SGLang's
///    HiCache, vLLM's offloading connector). A unit evicted from the GPU cache is copied there
///    (on eviction, a write-back tier: HiCache's documented write_through copies units when
///    computed; asynchronously: no step time), the host's least recently stored units dropped
///    for room (a unit larger than the tier is not kept). A key
///    is in at most one tier: a load removes the host copy, and a unit computed into the GPU
///    cache drops its host copy. Admission matches unit after unit on the GPU, else in the
///    host tier, until a unit is in neither; host units are always loaded, never recomputed
///    (as vLLM's offloading connector and LMCache load every hit). Loading b blocks takes
///    b x block_bytes / host_link_bytes_per_s; the loaded units count among the cached tokens
///    c, take new blocks like computed ones, become GPU entries the sequence holds, and the
///    load's time is added to the duration of the step its first chunk runs in (a synchronous
///    load; vLLM's connector can overlap it). A preempted sequence's units are evictable,
///    so its recompute finds them on the GPU, in the host tier once evicted, or recomputes
///    them. PrefixCacheStats counts host hits (also within the cached prompt tokens), loads,
///    copies and drops; the end of the run checks that every block copied out was loaded
///    back, dropped or is still in the tier.
///  - Speculative decoding (ServingConfig::speculative, k = num_draft_tokens > 0). Every decode
///    step verifies k draft tokens per decoding sequence: the step's shape adds k x sequences
///    draft tokens and their attention pairs (model::BatchShape; the predictor prices the
///    draft's passes, model/speculative.h), and under kChunkedPrefill each decode takes 1 + k
///    tokens of the budget (as vLLM v1 counts spec tokens). Mean-field acceptance: every
///    decoding sequence of the replica advances by the same a_n tokens in its n-th decode
///    step (n counted per replica from 0), a_n = floor((n + 1) m) - floor(n m) with m = 1 +
///    sum of acceptance_rates (the expected tokens per step; a_n is 1 for every n without
///    drafts), so per-sequence variation of the accepted count is not modelled. A sequence
///    needing fewer tokens than a_n emits those and finishes. The step takes the blocks the
///    decoders' contexts cross into over the a_n tokens (KV of the verified tokens; the
///    rejected drafts' slots beyond them are not reserved); a preemption frees them as usual.
///    A step's tokens reach the client together: each decoding sequence records one ITL gap
///    per step (itl_ns, itl_runs: one per chunk, as a streaming client and vLLM's serving
///    benchmark see them), while TPOT counts tokens.
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
///    tokens emitted step by step add up to every request's num_output_tokens (with
///    speculative decoding, the ITL gaps to its chunks), every KV block
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
