// What a fleet is: its replicas (in groups), their engine limits, batching policy, role and
// network share, and the routers between them; and the validation of all of it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "model/step_time.h"
#include "sim/workload.h"

namespace llmcap::sim {

/// How a replica forms each step, chosen by name (semantics in full at simulate() and in
/// docs/simulator.md; each policy's code is sim/policies/<name>.cpp).
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
///  - kPrefillFirst: SGLang's scheduler (without --enable-mixed-chunk, its default): prefill
///    steps have priority, each of at most max_num_batched_tokens new tokens (its
///    chunked_prefill_size): partial prefills first, then waiting sequences, each chunked to
///    the budget left; a decode step over every running sequence only when no chunk can run.
enum class BatchingPolicy { kStatic, kContinuous, kChunkedPrefill, kPrefillFirst };
/// "static" | "continuous" | "chunked_prefill" | "prefill_first". Throws InputError("<context>:
/// unknown batching policy "x"; known: static, continuous, chunked_prefill, prefill_first").
BatchingPolicy parse_batching_policy(const std::string& name, const std::string& context);
/// The name parse_batching_policy() reads ("static", "continuous", "chunked_prefill",
/// "prefill_first").
const char* batching_policy_name(BatchingPolicy policy);

/// How a sequence's KV cache takes a replica's blocks when some layers attend to a sliding
/// window (vLLM v1's hybrid KV-cache manager: each layer group allocates its own blocks, a
/// window group frees those that fall out of its window). num_kv_blocks then counts units:
/// a sequence of t tokens, b = ceil(t / block_size_tokens) blocks of tokens, holds
/// full_units_per_block x b + sum over windows of units_per_block x min(b, window_blocks)
/// units. The default (1 unit per block, no windows) is every layer caching every token.
struct KvWindowGroup {
  int64_t window_blocks = 0;    ///< blocks a window layer keeps at most: ceil((w-1)/block) + 1
  int64_t units_per_block = 0;  ///< units one block of tokens takes in these layers (> 0)
  bool operator==(const KvWindowGroup&) const = default;
};
struct KvLayout {
  int64_t full_units_per_block = 1;  ///< units one block of tokens takes in full layers (>= 0)
  std::vector<KvWindowGroup> windows;
  /// Units a sequence of `blocks` blocks of tokens holds.
  int64_t units_for_blocks(int64_t blocks) const {
    int64_t units = full_units_per_block * blocks;
    for (const KvWindowGroup& w : windows)
      units += w.units_per_block * std::min(blocks, w.window_blocks);
    return units;
  }
  bool operator==(const KvLayout&) const = default;
};

/// Tokens of the longest sequence `num_units` units of `layout` hold, in whole blocks of
/// `block_size_tokens` (num_units x block_size_tokens for the default layout); a layout of
/// window layers only holds any length once its windows fit (returns INT64_MAX / 4 then).
int64_t kv_capacity_tokens(const KvLayout& layout, int64_t num_units, int64_t block_size_tokens);

/// KV offload: a second tier of prefix-cache units in host memory behind a replica's GPU
/// prefix cache (semantics at simulate(), "KV offload"). Requires prefix caching.
struct KvOffloadConfig {
  int64_t num_host_blocks = 0;  ///< KV blocks the host tier holds at most (>= 0; 0: off)
  /// GPU <-> host bandwidth of the replica (all its GPUs' links together), bytes per second
  /// (> 0 when on): a load of b blocks adds b x block_bytes / this to the step it runs in.
  double host_link_bytes_per_s = 0;
  int64_t block_bytes = 0;  ///< bytes of one KV block (all layers, K and V; > 0 when on)
  bool operator==(const KvOffloadConfig&) const = default;
};

/// The most draft tokens per step a replica may verify (validation bound; engines use 1 to 8).
inline constexpr int64_t kMaxDraftTokens = 64;

/// Speculative decoding on a replica (semantics at simulate(), "Speculative decoding"): each
/// decode step verifies num_draft_tokens draft tokens per decoding sequence and the sequence
/// keeps, on average, 1 + the sum of acceptance_rates tokens of the step.
struct SpeculativeConfig {
  int64_t num_draft_tokens = 0;  ///< k, draft tokens per sequence and step; 0: off
  /// acceptance_rates[i]: the fraction of steps in which draft position i + 1 is accepted
  /// (every earlier one being accepted too), so non-increasing, each in [0, 1]; k entries.
  std::vector<double> acceptance_rates;
  /// Tokens a decoding sequence emits per step on average: 1 + sum of acceptance_rates.
  double tokens_per_step() const {
    double tokens = 1.0;
    for (const double a : acceptance_rates) tokens += a;
    return tokens;
  }
  bool operator==(const SpeculativeConfig&) const = default;
};

/// Engine limits of one replica (the names are vLLM's).
struct ServingConfig {
  BatchingPolicy policy = BatchingPolicy::kContinuous;
  int64_t max_num_seqs = 256;  ///< sequences running at once
  /// New tokens per step: the prefill admission budget (kStatic, kContinuous), or the chunk
  /// budget shared by decodes and prefill chunks (kChunkedPrefill, where it must be >=
  /// max_num_seqs so that every running decode fits in a step).
  int64_t max_num_batched_tokens = 16384;
  int64_t block_size_tokens = 16;  ///< tokens per KV-cache block
  int64_t num_kv_blocks = 0;       ///< KV-cache blocks (units of kv_layout) of the replica (> 0)
  KvLayout kv_layout;              ///< default: every layer caches every token
  /// Automatic prefix caching (vLLM's APC, SGLang's radix cache; semantics at simulate()):
  /// blocks of computed KV stay cached after their sequence leaves, and a prefill starts
  /// after the longest cached prefix of its request's keyed blocks (RequestSpec::prefix).
  bool prefix_caching = false;
  /// With prefix caching: before each step, a waiting queue of at most
  /// kLongestPrefixQueueLimit sequences is reordered by the tokens of each the cache holds,
  /// longest first (stable), as SGLang's "lpm" schedule policy does; otherwise FCFS.
  bool longest_prefix_first = false;
  /// kChunkedPrefill only (allocates_per_chunk()): a prefill takes the blocks of each chunk
  /// when it is scheduled, as vLLM v1's KV cache manager does (allocate_slots for the step's
  /// tokens), instead of those of its whole prefill at admission (vLLM v0's block manager).
  /// Not for kPrefillFirst: SGLang admits a prompt only when its whole input fits, and prefill
  /// priority with chunk-wise blocks could starve the decodes that hold the cache.
  bool allocate_per_chunk = false;
  bool allocates_per_chunk() const {
    return allocate_per_chunk && policy == BatchingPolicy::kChunkedPrefill;
  }
  KvOffloadConfig kv_offload;  ///< default: off
  /// Speculative decoding (off when num_draft_tokens is 0). The step times come from the
  /// predictor, which prices the draft (model/speculative.h); the simulator adds the draft
  /// tokens to each step's shape and advances the decodes by the accepted tokens.
  SpeculativeConfig speculative;
};

/// SGLang's lpm policy falls back to FCFS above this queue length (schedule_policy.py).
inline constexpr size_t kLongestPrefixQueueLimit = 128;

/// Router across the replicas of a fleet, chosen by name (semantics at simulate(); each
/// router's code is sim/routers/<name>.cpp).
///  - kRoundRobin: replicas in turn.
///  - kLeastOutstanding: the replica with the fewest requests routed to it and not finished.
///  - kLeastKvLoad: the replica whose KV cache has the most free blocks after those its
///    waiting requests' prompts need; ties go to the lowest index.
///  - kPowerOfTwo: power of two choices (Mitzenmacher, IEEE TPDS 2001): two distinct replicas
///    drawn at random (seeded stream Stream::kRouter), the one with fewer outstanding
///    requests; ties go to the lower index.
///  - kPrefixAware: the replica with the least prompt tokens its prefix cache lacks plus KV
///    load (blocks held by sequences or needed by its waiting queue, in tokens): NVIDIA
///    Dynamo's KV-aware routing cost; ties go to the lower index. Without prefix caching or
///    keyed requests it routes by KV load alone.
enum class RouterKind { kRoundRobin, kLeastOutstanding, kLeastKvLoad, kPowerOfTwo, kPrefixAware };
/// "round_robin" | "least_outstanding" | "least_kv_load" | "power_of_two" | "prefix_aware".
/// Throws InputError("<context>: unknown router "x"; known: round_robin, least_outstanding,
/// least_kv_load, power_of_two, prefix_aware").
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
  /// Time from a request's arrival to its reaching the engine's scheduler (the serving
  /// front end: API server, tokenization), >= 0: added before every request's first token,
  /// never overlapping a step. Zero (the default): requests reach the scheduler as they arrive.
  SimTime frontend_latency = SimTime::Zero();
};

/// The fleet as groups: `fleet.groups`, or one group of fleet.num_replicas x fleet.serving.
/// Groups without a predictor get `default_predictor` (which may be null).
std::vector<ReplicaGroup> resolve_groups(const FleetConfig& fleet,
                                         const model::StepTimePredictor* default_predictor);

/// Whether any group is a prefill or decode pool member.
bool is_disaggregated(const std::vector<ReplicaGroup>& groups);

/// Largest KV capacity, in tokens, of the replicas of `role` (ceil(t / block) <= blocks
/// exactly when t <= blocks x block).
int64_t max_capacity_tokens(const std::vector<ReplicaGroup>& groups, ReplicaRole role);

/// Whether a request of these lengths can be served somewhere (otherwise it is rejected).
bool request_fits(const std::vector<ReplicaGroup>& groups, bool disaggregated,
                  int64_t num_prompt_tokens, int64_t num_output_tokens);

/// Checks `fleet` as resolved into `groups` (resolve_groups). Throws InputError naming the
/// field (`fleet.num_replicas`, `serving.max_num_seqs`, `fleet.groups[i] ("name"): ...`, ...),
/// the value and what was expected: non-positive limits, an unknown policy, router or role
/// value, a chunked_prefill chunk budget below one token or below max_num_seqs, a missing
/// predictor, unified groups beside prefill or decode ones, a disaggregated fleet without a
/// prefill or a decode group, a non-positive kv_bytes_per_token or network bandwidth, a
/// negative latency, static batching in a decode pool, more than 2^30 replicas.
void validate_fleet(const FleetConfig& fleet, const std::vector<ReplicaGroup>& groups);

/// Checks that `workload` can run on the fleet of `groups`. Throws InputError naming the field
/// (`closed_loop.num_users`, `closed_loop.lengths[i]`, `open_loop[i]`, ...), the value and what
/// was expected: a request with fewer than 1 prompt or output token or a negative arrival, a
/// negative user count or think time, a non-positive duration, no length sample, or a closed
/// loop without think time none of whose requests fits any replica (it would loop forever).
void validate_workload(const Workload& workload, const std::vector<ReplicaGroup>& groups);

/// Checks one request's prefix identity (`context` names it, e.g. "open_loop[3]"): throws
/// InputError unless block_tokens >= 1, its hashes lie within the pool, and, on every group
/// with prefix caching, its block size and the KV block size divide one another (the cache
/// unit is the larger of the two).
void check_prefix_identity(const PrefixIdentity& prefix, const std::vector<ReplicaGroup>& groups,
                           const std::string& context);

}  // namespace llmcap::sim
