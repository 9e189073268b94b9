// The expert-grouped product of a mixture-of-experts layer (issue 28, docs/kernels.md): each
// token is routed to k of E experts with gate weights, and one projection of the layer is
//   y[t] = sum_j gate[t][j] * (x[t] W_{expert[t][j]}^T).
// The tokens are gathered per expert, so each expert's weights are read from memory once per
// call for all the tokens routed to it (not once per token), and experts no token is routed to
// are not read at all: a decode step of B tokens reads the distinct experts they hit.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace llmcap::kernels {

/// The routing of `tokens` tokens to `k` experts each: expert[t * k + j] in [0, E) and its gate
/// weight gate[t * k + j]. A token may not name one expert twice.
struct MoeRouting {
  int64_t tokens = 0;
  int64_t k = 0;
  std::vector<int32_t> expert;
  std::vector<float> gate;
};

/// Experts, in order, that `routing` sends at least one token to, with the tokens of each (the
/// gather lists of moe_matmul).
struct ExpertGroups {
  std::vector<int32_t> experts;              ///< distinct experts hit, ascending
  std::vector<std::vector<int64_t>> tokens;  ///< per hit expert: its tokens, ascending
  std::vector<std::vector<float>> gates;     ///< per hit expert: the gate of each token
};
/// Groups the routing by expert. Throws std::invalid_argument for an expert outside
/// [0, num_experts), a token naming one expert twice, or sizes other than tokens x k.
ExpertGroups group_by_expert(const MoeRouting& routing, int64_t num_experts);

/// y = the routed sum above, for x of shape [tokens, cols] and y of [tokens, rows] (row-major),
/// with every expert a matrix of `rows` x `cols` in any one format. Each hit expert's tokens
/// are gathered into contiguous rows, multiplied with kernels::matmul on `isa` (its scalar path
/// is the twin of the vector ones) and scattered back, scaled by their gates; y is overwritten.
/// Throws std::invalid_argument for experts of different shapes or formats, mismatched sizes,
/// or a bad routing (group_by_expert).
void moe_matmul(std::span<const PackedWeights> experts, const MoeRouting& routing,
                std::span<const float> x, std::span<float> y, ThreadPool& pool,
                Isa isa = best_isa());

/// Bytes of expert weights one moe_matmul call reads: the hit experts' matrices, once each.
int64_t moe_weight_bytes_read(std::span<const PackedWeights> experts, const MoeRouting& routing);

}  // namespace llmcap::kernels
