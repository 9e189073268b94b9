#include "sim/router.h"

#include <array>

namespace llmcap::sim {

// One factory per file of sim/routers/.
std::unique_ptr<Router> make_round_robin_router(uint64_t stream_seed);
std::unique_ptr<Router> make_least_outstanding_router(uint64_t stream_seed);
std::unique_ptr<Router> make_least_kv_load_router(uint64_t stream_seed);
std::unique_ptr<Router> make_power_of_two_router(uint64_t stream_seed);
std::unique_ptr<Router> make_prefix_aware_router(uint64_t stream_seed);

namespace {

constexpr std::array kRouters = {
    RouterEntry{RouterKind::kRoundRobin, "round_robin", make_round_robin_router},
    RouterEntry{RouterKind::kLeastOutstanding, "least_outstanding", make_least_outstanding_router},
    RouterEntry{RouterKind::kLeastKvLoad, "least_kv_load", make_least_kv_load_router},
    RouterEntry{RouterKind::kPowerOfTwo, "power_of_two", make_power_of_two_router},
    RouterEntry{RouterKind::kPrefixAware, "prefix_aware", make_prefix_aware_router},
};

}  // namespace

std::span<const RouterEntry> router_registry() { return kRouters; }

const RouterEntry* find_router(RouterKind kind) {
  for (const RouterEntry& entry : kRouters) {
    if (entry.kind == kind) return &entry;
  }
  return nullptr;
}

}  // namespace llmcap::sim
