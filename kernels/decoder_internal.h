// Helpers the reference decoder's translation units share (decoder.cpp, decoder_moe.cpp).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/thread_pool.h"

namespace llmcap::kernels::detail {

/// A seed for item `index` of stream `stream` derived from the decoder's seed (stream 1:
/// matrices, 2: f32 vectors, 3: the KV prefix).
uint64_t derive_seed(uint64_t seed, uint64_t stream, uint64_t index);

/// n floats uniform in [lo, hi), deterministic for `seed`.
std::vector<float> random_vector(int64_t n, uint64_t seed, float lo, float hi);

/// act[b][i] = SwiGLU(gate, up of feature i) for the gate_up_row layout of gu (rows of
/// 2 x intermediate), the feature blocks split over the pool as the product split its rows.
void swiglu_blocks(const float* gu, float* act, int64_t batch, int64_t intermediate,
                   ThreadPool& pool, Isa isa);

/// x[i] += y[i].
inline void add_in_place(std::span<float> x, std::span<const float> y) {
  for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
}

/// Runs fn(b) for each row b of a batch, the rows split over the pool's threads (element-wise
/// operators run on the pool like the projections, as an engine runs them).
template <class Fn>
void for_rows(ThreadPool& pool, int64_t batch, const Fn& fn) {
  if (batch == 1) {
    fn(int64_t{0});
    return;
  }
  pool.parallel_for(batch, [&fn](int64_t begin, int64_t end, int) {
    for (int64_t b = begin; b < end; ++b) fn(b);
  });
}

}  // namespace llmcap::kernels::detail
