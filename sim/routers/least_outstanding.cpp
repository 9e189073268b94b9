// kLeastOutstanding: the replica with the fewest requests routed to it and not yet finished,
// among those that can hold the request; ties go to the lowest index.
#include <algorithm>
#include <memory>

#include "sim/router.h"

namespace llmcap::sim {
namespace {

class LeastOutstandingRouter final : public Router {
 public:
  int64_t choose(const Pool& pool, const std::vector<Replica>& /*replicas*/,
                 int64_t tokens) override {
    if (pool.all_fit(tokens)) {
      // The first minimum: ties go to the lowest index.
      return std::min_element(pool.outstanding.begin(), pool.outstanding.end()) -
             pool.outstanding.begin();
    }
    const auto n = static_cast<int64_t>(pool.replicas.size());
    int64_t chosen = -1;
    for (int64_t position = 0; position < n; ++position) {
      if (pool.fits(position, tokens) &&
          (chosen < 0 || pool.outstanding[position] < pool.outstanding[chosen])) {
        chosen = position;
      }
    }
    return chosen;
  }
};

}  // namespace

std::unique_ptr<Router> make_least_outstanding_router(uint64_t /*stream_seed*/) {
  return std::make_unique<LeastOutstandingRouter>();
}

}  // namespace llmcap::sim
