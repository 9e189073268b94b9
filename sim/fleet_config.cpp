#include "sim/fleet_config.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <utility>

#include "base/text.h"
#include "sim/batch_policy.h"
#include "sim/input_error.h"
#include "sim/router.h"

namespace llmcap::sim {

namespace {

using base::describe;

/// "a, b, c" (separator ", ") or "a, b or c" (last separator " or ") of a registry's names.
template <typename Registry>
std::string names_of(const Registry& registry, const char* last_separator) {
  std::string out;
  for (size_t i = 0; i < registry.size(); ++i) {
    if (i > 0) out += i + 1 == registry.size() ? last_separator : ", ";
    out += registry[i].name;
  }
  return out;
}

/// ServingConfig::kv_offload: off, or a capacity with a link, a block size and prefix caching.
void validate_kv_offload(const ServingConfig& serving, const std::string& prefix) {
  const KvOffloadConfig& o = serving.kv_offload;
  if (o.num_host_blocks < 0) {
    throw InputError(prefix + "serving.kv_offload.num_host_blocks: expected >= 0 (0: off), got " +
                     std::to_string(o.num_host_blocks));
  }
  if (o.num_host_blocks == 0) return;
  if (!(o.host_link_bytes_per_s > 0) || !std::isfinite(o.host_link_bytes_per_s)) {
    throw InputError(prefix +
                     "serving.kv_offload.host_link_bytes_per_s: expected a positive number of "
                     "bytes per second, got " +
                     describe(o.host_link_bytes_per_s));
  }
  if (o.block_bytes <= 0) {
    throw InputError(prefix + "serving.kv_offload.block_bytes: expected a positive integer, got " +
                     std::to_string(o.block_bytes));
  }
  if (!serving.prefix_caching) {
    throw InputError(prefix +
                     "serving.kv_offload: expected serving.prefix_caching on (the host tier keeps "
                     "prefix-cache units), got it off");
  }
}

/// k >= 0; with k > 0, k acceptance rates in [0, 1], non-increasing.
void validate_speculative(const SpeculativeConfig& spec, const std::string& prefix) {
  const std::string field = prefix + "serving.speculative.";
  if (spec.num_draft_tokens < 0 || spec.num_draft_tokens > kMaxDraftTokens) {
    throw InputError(field + "num_draft_tokens: expected 0 (off) to " +
                     std::to_string(kMaxDraftTokens) + ", got " +
                     std::to_string(spec.num_draft_tokens));
  }
  if (spec.num_draft_tokens == 0) return;
  if (static_cast<int64_t>(spec.acceptance_rates.size()) != spec.num_draft_tokens) {
    throw InputError(field + "acceptance_rates: expected one rate per draft token (" +
                     std::to_string(spec.num_draft_tokens) + "), got " +
                     std::to_string(spec.acceptance_rates.size()));
  }
  for (size_t i = 0; i < spec.acceptance_rates.size(); ++i) {
    const double a = spec.acceptance_rates[i];
    if (!(a >= 0.0 && a <= 1.0)) {
      throw InputError(field + "acceptance_rates[" + std::to_string(i) +
                       "]: expected a fraction in [0, 1], got " + describe(a));
    }
    if (i > 0 && a > spec.acceptance_rates[i - 1]) {
      throw InputError(field + "acceptance_rates[" + std::to_string(i) + "]: expected at most " +
                       describe(spec.acceptance_rates[i - 1]) +
                       " (a draft position is accepted only when every earlier one is), got " +
                       describe(a));
    }
  }
}

void validate_serving(const ServingConfig& serving, const std::string& prefix) {
  auto positive = [&prefix](const char* name, int64_t value) {
    if (value <= 0) {
      throw InputError(prefix + name + ": expected a positive integer, got " +
                       std::to_string(value));
    }
  };
  if (find_batch_policy(serving.policy) == nullptr) {
    throw InputError(prefix + "serving.policy: expected " +
                     names_of(batch_policy_registry(), " or ") + ", got value " +
                     std::to_string(static_cast<int>(serving.policy)));
  }
  positive("serving.max_num_seqs", serving.max_num_seqs);
  validate_speculative(serving.speculative, prefix);
  if (serving.policy == BatchingPolicy::kChunkedPrefill) {
    if (serving.max_num_batched_tokens < 1) {
      throw InputError(
          prefix +
          "serving.max_num_batched_tokens: chunked_prefill needs a chunk budget of at least 1 "
          "token per step, got " +
          std::to_string(serving.max_num_batched_tokens));
    }
    const int64_t per_decode = 1 + std::max<int64_t>(0, serving.speculative.num_draft_tokens);
    if (serving.max_num_batched_tokens < serving.max_num_seqs * per_decode) {
      throw InputError(
          prefix + "serving.max_num_batched_tokens: chunked_prefill gives every running decode " +
          (per_decode == 1 ? std::string("one token")
                           : std::to_string(per_decode) + " tokens (1 + its draft tokens)") +
          " of the step's budget, so it must be >= " +
          (per_decode == 1 ? std::string("serving.max_num_seqs (")
                           : std::to_string(per_decode) + " x serving.max_num_seqs (") +
          std::to_string(serving.max_num_seqs * per_decode) + "), got " +
          std::to_string(serving.max_num_batched_tokens));
    }
  }
  positive("serving.max_num_batched_tokens", serving.max_num_batched_tokens);
  positive("serving.block_size_tokens", serving.block_size_tokens);
  positive("serving.num_kv_blocks", serving.num_kv_blocks);
  if (serving.kv_layout.full_units_per_block < 0) {
    throw InputError(prefix + "serving.kv_layout.full_units_per_block: expected >= 0, got " +
                     std::to_string(serving.kv_layout.full_units_per_block));
  }
  for (const KvWindowGroup& w : serving.kv_layout.windows) {
    if (w.window_blocks < 1 || w.units_per_block < 1) {
      throw InputError(prefix +
                       "serving.kv_layout.windows: expected positive window blocks and "
                       "units per block, got " +
                       std::to_string(w.window_blocks) + " and " +
                       std::to_string(w.units_per_block));
    }
  }
  if (serving.kv_layout.full_units_per_block == 0 && serving.kv_layout.windows.empty()) {
    throw InputError(prefix + "serving.kv_layout: expected full layers or windows, got neither");
  }
  validate_kv_offload(serving, prefix);
}

void validate_router(RouterKind kind, const char* field) {
  if (find_router(kind) == nullptr) {
    throw InputError(std::string(field) + ": expected " + names_of(router_registry(), " or ") +
                     ", got value " + std::to_string(static_cast<int>(kind)));
  }
}

/// One group of a mixed or disaggregated fleet (`prefix` names it).
void validate_group(const ReplicaGroup& g, const std::string& prefix, bool disaggregated) {
  if (g.num_replicas <= 0) {
    throw InputError(prefix + "num_replicas: expected a positive integer, got " +
                     std::to_string(g.num_replicas));
  }
  validate_serving(g.serving, prefix);
  if (g.predictor == nullptr) {
    throw InputError(prefix + "predictor: expected a step-time predictor, got none");
  }
  const auto role = static_cast<int>(g.role);
  if (role < static_cast<int>(ReplicaRole::kUnified) ||
      role > static_cast<int>(ReplicaRole::kDecode)) {
    throw InputError(prefix + "role: expected unified, prefill or decode, got value " +
                     std::to_string(role));
  }
  if (!disaggregated) return;
  if (!(g.network_bandwidth_bytes_per_s > 0) || !std::isfinite(g.network_bandwidth_bytes_per_s)) {
    throw InputError(prefix +
                     "network_bandwidth_bytes_per_s: a disaggregated fleet moves KV caches "
                     "over the network, expected a positive number, got " +
                     describe(g.network_bandwidth_bytes_per_s));
  }
  if (!(g.network_latency_s >= 0) || !std::isfinite(g.network_latency_s)) {
    throw InputError(prefix + "network_latency_s: expected a non-negative number, got " +
                     describe(g.network_latency_s));
  }
  if (g.role == ReplicaRole::kDecode && g.serving.policy == BatchingPolicy::kStatic) {
    throw InputError(prefix +
                     "serving.policy: static batching cannot serve a decode pool (requests "
                     "arrive there one by one, prefilled, and would join a batch in "
                     "progress); expected continuous or chunked_prefill");
  }
}

}  // namespace

BatchingPolicy parse_batching_policy(const std::string& name, const std::string& context) {
  for (const BatchPolicyEntry& entry : batch_policy_registry()) {
    if (name == entry.name) return entry.kind;
  }
  throw InputError(context + ": unknown batching policy \"" + name +
                   "\"; known: " + names_of(batch_policy_registry(), ", "));
}

const char* batching_policy_name(BatchingPolicy policy) {
  const BatchPolicyEntry* entry = find_batch_policy(policy);
  return entry ? entry->name : "?";
}

RouterKind parse_router(const std::string& name, const std::string& context) {
  for (const RouterEntry& entry : router_registry()) {
    if (name == entry.name) return entry.kind;
  }
  throw InputError(context + ": unknown router \"" + name +
                   "\"; known: " + names_of(router_registry(), ", "));
}

const char* router_name(RouterKind router) {
  const RouterEntry* entry = find_router(router);
  return entry ? entry->name : "?";
}

const char* replica_role_name(ReplicaRole role) {
  switch (role) {
    case ReplicaRole::kUnified:
      return "unified";
    case ReplicaRole::kPrefill:
      return "prefill";
    case ReplicaRole::kDecode:
      return "decode";
  }
  return "?";
}

std::vector<ReplicaGroup> resolve_groups(const FleetConfig& fleet,
                                         const model::StepTimePredictor* default_predictor) {
  std::vector<ReplicaGroup> groups = fleet.groups;
  if (groups.empty()) {
    ReplicaGroup g;
    g.num_replicas = fleet.num_replicas;
    g.serving = fleet.serving;
    groups.push_back(std::move(g));
  }
  for (ReplicaGroup& g : groups) {
    if (g.predictor == nullptr) g.predictor = default_predictor;
  }
  return groups;
}

int64_t kv_capacity_tokens(const KvLayout& layout, int64_t num_units, int64_t block_size_tokens) {
  if (layout.windows.empty() && layout.full_units_per_block == 1) {
    return num_units * block_size_tokens;
  }
  if (layout.units_for_blocks(0) > num_units) return 0;
  constexpr int64_t kUnbounded = INT64_MAX / 4;
  if (layout.full_units_per_block == 0) {
    // Window layers only: past the largest window, a sequence takes no more.
    int64_t widest = 0;
    for (const KvWindowGroup& w : layout.windows) widest = std::max(widest, w.window_blocks);
    if (layout.units_for_blocks(widest) <= num_units) return kUnbounded;
  }
  // Largest b with units_for_blocks(b) <= num_units (non-decreasing in b).
  int64_t lo = 0, hi = num_units + 1;
  while (hi - lo > 1) {
    const int64_t mid = lo + (hi - lo) / 2;
    (layout.units_for_blocks(mid) <= num_units ? lo : hi) = mid;
  }
  return lo > kUnbounded / block_size_tokens ? kUnbounded : lo * block_size_tokens;
}

bool is_disaggregated(const std::vector<ReplicaGroup>& groups) {
  return std::any_of(groups.begin(), groups.end(),
                     [](const ReplicaGroup& g) { return g.role != ReplicaRole::kUnified; });
}

int64_t max_capacity_tokens(const std::vector<ReplicaGroup>& groups, ReplicaRole role) {
  int64_t best = 0;
  for (const ReplicaGroup& g : groups) {
    if (g.role == role) {
      best = std::max(best, kv_capacity_tokens(g.serving.kv_layout, g.serving.num_kv_blocks,
                                               g.serving.block_size_tokens));
    }
  }
  return best;
}

bool request_fits(const std::vector<ReplicaGroup>& groups, bool disaggregated,
                  int64_t num_prompt_tokens, int64_t num_output_tokens) {
  if (!disaggregated) {
    return num_prompt_tokens + num_output_tokens <=
           max_capacity_tokens(groups, ReplicaRole::kUnified);
  }
  return num_prompt_tokens <= max_capacity_tokens(groups, ReplicaRole::kPrefill) &&
         num_prompt_tokens + num_output_tokens <= max_capacity_tokens(groups, ReplicaRole::kDecode);
}

void validate_fleet(const FleetConfig& fleet, const std::vector<ReplicaGroup>& groups) {
  validate_router(fleet.router, "fleet.router");
  if (fleet.frontend_latency < SimTime::Zero()) {
    throw InputError("fleet.frontend_latency: expected a non-negative time, got " +
                     std::to_string(fleet.frontend_latency.seconds()) + " s");
  }
  const bool disaggregated = is_disaggregated(groups);
  if (fleet.groups.empty()) {
    if (fleet.num_replicas <= 0) {
      throw InputError("fleet.num_replicas: expected a positive integer, got " +
                       std::to_string(fleet.num_replicas));
    }
    validate_serving(fleet.serving, "");
    if (groups.front().predictor == nullptr) {
      throw InputError("fleet: expected a step-time predictor, got none");
    }
    return;
  }
  int64_t num_replicas = 0;
  bool any_unified = false;
  bool any_prefill = false;
  bool any_decode = false;
  for (size_t i = 0; i < groups.size(); ++i) {
    const ReplicaGroup& g = groups[i];
    validate_group(g,
                   "fleet.groups[" + std::to_string(i) + "] (\"" + g.name + "\"): ", disaggregated);
    any_unified = any_unified || g.role == ReplicaRole::kUnified;
    any_prefill = any_prefill || g.role == ReplicaRole::kPrefill;
    any_decode = any_decode || g.role == ReplicaRole::kDecode;
    num_replicas += g.num_replicas;
    if (num_replicas > (int64_t{1} << 30)) {
      throw InputError("fleet.groups: expected at most 2^30 replicas in all, got more");
    }
  }
  if (!disaggregated) return;
  if (any_unified) {
    throw InputError(
        "fleet.groups: a fleet is either all unified replicas or prefill and decode pools; "
        "got unified groups beside prefill or decode ones");
  }
  if (!any_prefill || !any_decode) {
    throw InputError(std::string("fleet.groups: a disaggregated fleet needs at least one "
                                 "prefill and one decode group, got no ") +
                     (any_prefill ? "decode" : "prefill") + " group");
  }
  validate_router(fleet.decode_router, "fleet.decode_router");
  if (fleet.kv_bytes_per_token <= 0) {
    throw InputError(
        "fleet.kv_bytes_per_token: a disaggregated fleet moves each prompt's KV cache, "
        "expected a positive integer, got " +
        std::to_string(fleet.kv_bytes_per_token));
  }
}

void validate_workload(const Workload& workload, const std::vector<ReplicaGroup>& groups) {
  const bool disaggregated = is_disaggregated(groups);
  if (workload.closed_loop) {
    const ClosedLoopWorkload& closed = *workload.closed_loop;
    if (closed.num_users < 0) {
      throw InputError("closed_loop.num_users: expected a non-negative integer, got " +
                       std::to_string(closed.num_users));
    }
    if (!(closed.think_time_s >= 0) || !std::isfinite(closed.think_time_s)) {
      throw InputError("closed_loop.think_time_s: expected a non-negative number, got " +
                       describe(closed.think_time_s));
    }
    if (!(closed.duration_s > 0) || !std::isfinite(closed.duration_s)) {
      throw InputError("closed_loop.duration_s: expected a positive number, got " +
                       describe(closed.duration_s));
    }
    if (closed.sessions) check_session_options(*closed.sessions, "closed_loop.sessions.");
    if (closed.num_users > 0 && closed.lengths.empty()) {
      throw InputError("closed_loop.lengths: expected at least one sample, got none");
    }
    for (size_t i = 0; i < closed.lengths.size(); ++i) {
      const LengthSample& s = closed.lengths[i];
      if (s.num_prompt_tokens < 1 || s.num_output_tokens < 1) {
        throw InputError("closed_loop.lengths[" + std::to_string(i) +
                         "]: expected prompt and output tokens >= 1, got " +
                         std::to_string(s.num_prompt_tokens) + " and " +
                         std::to_string(s.num_output_tokens));
      }
    }
    if (closed.think_time_s == 0 && closed.num_users > 0) {
      // With no think time, users whose requests are all rejected would loop forever at t=0.
      const bool any_fits =
          std::any_of(closed.lengths.begin(), closed.lengths.end(), [&](const LengthSample& s) {
            return request_fits(groups, disaggregated, s.num_prompt_tokens, s.num_output_tokens);
          });
      if (!any_fits) {
        const int64_t capacity_tokens = max_capacity_tokens(
            groups, disaggregated ? ReplicaRole::kDecode : ReplicaRole::kUnified);
        throw InputError("closed_loop.lengths: no request fits in a replica's KV cache (" +
                         std::to_string(capacity_tokens) + " tokens) and think_time_s is 0");
      }
    }
  } else {
    for (size_t i = 0; i < workload.open_loop.size(); ++i) {
      const RequestSpec& r = workload.open_loop[i];
      if (r.arrival < SimTime::Zero() || r.num_prompt_tokens < 1 || r.num_output_tokens < 1) {
        throw InputError("open_loop[" + std::to_string(i) +
                         "]: expected arrival >= 0 and prompt and output tokens >= 1, got " +
                         "arrival " + std::to_string(r.arrival.ns()) + " ns, " +
                         std::to_string(r.num_prompt_tokens) + " and " +
                         std::to_string(r.num_output_tokens) + " tokens");
      }
      if (r.prefix.keyed() || r.prefix.count != 0) {
        check_prefix_identity(r.prefix, groups, "open_loop[" + std::to_string(i) + "]");
      }
    }
  }
}

void check_prefix_identity(const PrefixIdentity& prefix, const std::vector<ReplicaGroup>& groups,
                           const std::string& context) {
  if (prefix.block_tokens < 1) {
    throw InputError(context +
                     ".prefix.block_tokens: expected >= 1 for a request with hashes, got " +
                     std::to_string(prefix.block_tokens));
  }
  if (prefix.count < 0 || prefix.begin < 0 ||
      (prefix.count > 0 &&
       (prefix.hashes == nullptr ||
        prefix.begin + prefix.count > static_cast<int64_t>(prefix.hashes->size())))) {
    throw InputError(context + ".prefix: expected its " + std::to_string(prefix.count) +
                     " hashes from " + std::to_string(prefix.begin) +
                     " within the trace's hash pool, got a pool of " +
                     std::to_string(prefix.hashes ? prefix.hashes->size() : 0) + " hashes");
  }
  for (size_t g = 0; g < groups.size(); ++g) {
    const ServingConfig& serving = groups[g].serving;
    if (!serving.prefix_caching) continue;
    const int64_t a = prefix.block_tokens;
    const int64_t b = serving.block_size_tokens;
    if (a % b != 0 && b % a != 0) {
      throw InputError(context + ": its prefix blocks of " + std::to_string(a) +
                       " tokens do not map onto the KV blocks of " + std::to_string(b) +
                       " tokens of fleet group " + std::to_string(g) + " (\"" + groups[g].name +
                       "\"); expected one block size to divide the other");
    }
  }
}

}  // namespace llmcap::sim
