// The engine limits of the serving loop (serve/serving_loop.h) and its reference scheduler
// (serve/scheduler.h).
#pragma once

#include <cstdint>

#include "sim/simulator.h"

namespace llmcap::serve {

/// Engine limits of the serving loop: those of sim::ServingConfig, so that the loop and the
/// simulator are configured by the same numbers (names are vLLM's). One replica, unified role.
struct ServeConfig {
  /// The batching policy the reference scheduler follows (semantics at sim::simulate()).
  sim::BatchingPolicy policy = sim::BatchingPolicy::kContinuous;
  int64_t max_num_seqs = 16;  ///< sequences running at once (= decoder slots)
  /// New tokens per step: prompt tokens admitted per prefill step (kStatic, kContinuous), or
  /// the budget decodes and prefill chunks share (kChunkedPrefill; then >= max_num_seqs).
  int64_t max_num_batched_tokens = 1024;
  int64_t block_size_tokens = 16;  ///< tokens per KV-cache block
  int64_t num_kv_blocks = 0;       ///< KV-cache blocks (> 0)
  /// Automatic prefix caching of keyed requests (RequestSpec::prefix; semantics at
  /// serve/scheduler.h), as sim::ServingConfig::prefix_caching.
  bool prefix_caching = false;

  /// The simulator's configuration of the same engine.
  sim::ServingConfig serving() const;
};

}  // namespace llmcap::serve
