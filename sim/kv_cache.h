// The paged KV cache of one replica, in blocks (internal to the simulator): the block
// accounting of admission, decode growth, preemption and KV transfers, and the count of
// decoding sequences per block phase that lets a decode step find, in O(1), how many of them
// need a new block.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "sim/fleet_config.h"

namespace llmcap::sim {

inline int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
inline int64_t floor_mod(int64_t a, int64_t m) {
  const int64_t r = a % m;
  return r < 0 ? r + m : r;
}

/// Blocks of one replica's KV cache. A sequence of t tokens of KV holds
/// blocks_for(t) = ceil(t / block_size_tokens) blocks, or with sliding-window layers
/// (`layout`, fleet_config.h) that many blocks of tokens' units.
struct KvCache {
  KvCache(int64_t block_size, int64_t blocks, KvLayout kv_layout = {})
      : block_size_tokens(block_size),
        num_blocks(blocks),
        num_free_blocks(blocks),
        layout(std::move(kv_layout)),
        windowed(!layout.windows.empty() || layout.full_units_per_block != 1) {}
  int64_t blocks_for(int64_t tokens) const {
    const int64_t blocks = ceil_div(tokens, block_size_tokens);
    return windowed ? layout.units_for_blocks(blocks) : blocks;
  }
  int64_t num_used_blocks() const { return num_blocks - num_free_blocks; }

  int64_t block_size_tokens;  ///< tokens per block
  int64_t num_blocks;         ///< the whole cache
  int64_t num_free_blocks;    ///< neither held by a running sequence nor reserved
  /// A prefill replica's blocks of prefilled KV not yet moved to a decode replica (counted
  /// in the used blocks: freed when the transfer lands).
  int64_t num_held_blocks = 0;
  KvLayout layout;
  bool windowed;  ///< layout is not the default (one unit per block, no windows)
};

/// Number of decoding sequences per KV phase (context length mod block size, relative to the
/// replica's decode counter): a flat array for the usual block sizes, an ordered map for huge
/// ones (at most max_num_seqs phases are ever in use).
class PhaseCounts {
 public:
  static constexpr int64_t kMaxFlatBlockSize = int64_t{1} << 16;
  explicit PhaseCounts(int64_t block_size_tokens) {
    if (block_size_tokens <= kMaxFlatBlockSize) flat_.assign(block_size_tokens, 0);
  }
  void add(int64_t phase, int64_t delta) {
    if (!flat_.empty()) {
      flat_[phase] += delta;
    } else if ((sparse_[phase] += delta) == 0) {
      sparse_.erase(phase);
    }
  }
  int64_t get(int64_t phase) const {
    if (!flat_.empty()) return flat_[phase];
    const auto it = sparse_.find(phase);
    return it == sparse_.end() ? 0 : it->second;
  }

 private:
  std::vector<int64_t> flat_;
  std::map<int64_t, int64_t> sparse_;
};

}  // namespace llmcap::sim
