// kLeastKvLoad: the replica with the largest num_free_blocks - (sum over its waiting queue of
// ceil(KV tokens / block_size_tokens)), among those that can hold the request; ties go to the
// lowest index.
#include <memory>

#include "sim/router.h"

namespace llmcap::sim {
namespace {

class LeastKvLoadRouter final : public Router {
 public:
  int64_t choose(const Pool& pool, const std::vector<Replica>& replicas, int64_t tokens) override {
    const auto n = static_cast<int64_t>(pool.replicas.size());
    const bool all_fit = pool.all_fit(tokens);
    int64_t chosen = -1;
    int64_t best_room = 0;
    for (int64_t position = 0; position < n; ++position) {
      if (!all_fit && !pool.fits(position, tokens)) continue;
      const Replica& replica = replicas[pool.replicas[position]];
      const int64_t room = replica.kv.num_free_blocks - replica.waiting_blocks;
      if (chosen < 0 || room > best_room) {
        chosen = position;
        best_room = room;
      }
    }
    return chosen;
  }
};

}  // namespace

std::unique_ptr<Router> make_least_kv_load_router(uint64_t /*stream_seed*/) {
  return std::make_unique<LeastKvLoadRouter>();
}

}  // namespace llmcap::sim
