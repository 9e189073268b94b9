// kRoundRobin: the next replica in cyclic order after the last one chosen that can hold the
// request (replica k mod n for the k-th request when all can).
#include <memory>

#include "sim/router.h"

namespace llmcap::sim {
namespace {

class RoundRobinRouter final : public Router {
 public:
  int64_t choose(const Pool& pool, const std::vector<Replica>& /*replicas*/,
                 int64_t tokens) override {
    const auto n = static_cast<int64_t>(pool.replicas.size());
    const bool all_fit = pool.all_fit(tokens);
    int64_t position = next_;
    while (!all_fit && !pool.fits(position, tokens)) position = (position + 1) % n;
    next_ = (position + 1) % n;
    return position;
  }

 private:
  int64_t next_ = 0;  ///< position in the pool
};

}  // namespace

std::unique_ptr<Router> make_round_robin_router(uint64_t /*stream_seed*/) {
  return std::make_unique<RoundRobinRouter>();
}

}  // namespace llmcap::sim
