// Routers: how a request is placed on a replica of a pool. One interface, one file per router
// (sim/routers/), and a registry that maps RouterKind and the router's name to its factory.
// Adding a router: a file in sim/routers/ and one line in the registry (sim/router.cpp).
// Internal to the simulator.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "sim/fleet_config.h"
#include "sim/replica.h"

namespace llmcap::sim {

class Router;

/// The replicas one router chooses among: every replica, or the prefill or decode pool of a
/// disaggregated fleet. Outstanding counts and KV capacities are packed here for the scans.
struct Pool {
  std::unique_ptr<Router> router;
  std::vector<int64_t> replicas;         ///< replica indices, ascending
  std::vector<int64_t> outstanding;      ///< Replica::num_outstanding, parallel to replicas
  std::vector<int64_t> capacity_tokens;  ///< kv_capacity_tokens of each replica, parallel
  int64_t min_capacity_tokens = 0;
  int64_t max_capacity_tokens = 0;
  /// For a router that needs_cached_tokens(), filled before each choice: the request's prompt
  /// tokens and, parallel to replicas, the tokens of it each replica's prefix cache holds.
  int64_t prompt_tokens = 0;
  std::vector<int64_t> cached_tokens;

  /// Whether every replica can hold `tokens` of KV (always, in a homogeneous fleet).
  bool all_fit(int64_t tokens) const { return tokens <= min_capacity_tokens; }
  /// Whether the replica at `position` can hold `tokens` of KV.
  bool fits(int64_t position, int64_t tokens) const { return capacity_tokens[position] >= tokens; }
};

class Router {
 public:
  virtual ~Router() = default;
  /// The position in `pool` (an index into pool.replicas) of the replica for a request that
  /// needs `tokens` tokens of KV cache there (<= pool.max_capacity_tokens). Replicas whose
  /// cache is too small are skipped; when every replica is large enough the choice is the
  /// plain router's. Ties go to the lowest position. `replicas` is the whole fleet.
  virtual int64_t choose(const Pool& pool, const std::vector<Replica>& replicas,
                         int64_t tokens) = 0;
  /// Whether choose() reads pool.prompt_tokens and pool.cached_tokens.
  virtual bool needs_cached_tokens() const { return false; }
};

struct RouterEntry {
  RouterKind kind;
  const char* name;  ///< as scenarios spell it (parse_router)
  /// A router for one pool; `stream_seed` seeds its random stream (Stream::kRouter), if any.
  std::unique_ptr<Router> (*make)(uint64_t stream_seed);
};

/// Every router, in RouterKind order.
std::span<const RouterEntry> router_registry();
/// The entry of `kind`, or null for a value outside the enum.
const RouterEntry* find_router(RouterKind kind);

}  // namespace llmcap::sim
