// kPrefixAware: the replica with the least work for the request: the prompt tokens its prefix
// cache lacks (the prefill it would compute) plus the KV its running and waiting sequences
// hold or need (used blocks that are not evictable, plus the waiting queue's blocks, in
// tokens), among those that can hold the request; ties go to the lowest index. This is the
// cost NVIDIA Dynamo's KV-aware router minimises (overlap weight 1: prefill blocks plus active
// blocks), and the prefix-cache and load scorers of llm-d's inference scheduler combined.
#include <memory>

#include "sim/router.h"

namespace llmcap::sim {
namespace {

class PrefixAwareRouter final : public Router {
 public:
  bool needs_cached_tokens() const override { return true; }
  int64_t choose(const Pool& pool, const std::vector<Replica>& replicas, int64_t tokens) override {
    const auto n = static_cast<int64_t>(pool.replicas.size());
    const bool all_fit = pool.all_fit(tokens);
    int64_t chosen = -1;
    int64_t best_cost = 0;
    for (int64_t position = 0; position < n; ++position) {
      if (!all_fit && !pool.fits(position, tokens)) continue;
      const Replica& replica = replicas[pool.replicas[position]];
      // Used blocks exclude evictable cached ones (KvCache counts those as free).
      const int64_t load_blocks = replica.kv.num_used_blocks() + replica.waiting_blocks;
      const int64_t cost = pool.prompt_tokens - pool.cached_tokens[position] +
                           load_blocks * replica.kv.block_size_tokens;
      if (chosen < 0 || cost < best_cost) {
        chosen = position;
        best_cost = cost;
      }
    }
    return chosen;
  }
};

}  // namespace

std::unique_ptr<Router> make_prefix_aware_router(uint64_t /*stream_seed*/) {
  return std::make_unique<PrefixAwareRouter>();
}

}  // namespace llmcap::sim
