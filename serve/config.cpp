#include "serve/config.h"

namespace llmcap::serve {

sim::ServingConfig ServeConfig::serving() const {
  sim::ServingConfig s;
  s.policy = policy;
  s.max_num_seqs = max_num_seqs;
  s.max_num_batched_tokens = max_num_batched_tokens;
  s.block_size_tokens = block_size_tokens;
  s.num_kv_blocks = num_kv_blocks;
  s.prefix_caching = prefix_caching;
  return s;
}

}  // namespace llmcap::serve
