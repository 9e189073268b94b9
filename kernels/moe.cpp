#include "kernels/moe.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace llmcap::kernels {

ExpertGroups group_by_expert(const MoeRouting& routing, int64_t num_experts) {
  const int64_t n = routing.tokens * routing.k;
  if (routing.tokens < 0 || routing.k < 1 || static_cast<int64_t>(routing.expert.size()) != n ||
      static_cast<int64_t>(routing.gate.size()) != n) {
    throw std::invalid_argument("moe routing: expected tokens x k = " + std::to_string(n) +
                                " experts and gates, got " + std::to_string(routing.expert.size()) +
                                " and " + std::to_string(routing.gate.size()));
  }
  std::vector<std::vector<int64_t>> tokens(static_cast<size_t>(num_experts));
  std::vector<std::vector<float>> gates(static_cast<size_t>(num_experts));
  for (int64_t t = 0; t < routing.tokens; ++t) {
    for (int64_t j = 0; j < routing.k; ++j) {
      const int32_t e = routing.expert[static_cast<size_t>(t * routing.k + j)];
      if (e < 0 || e >= num_experts) {
        throw std::invalid_argument("moe routing: token " + std::to_string(t) + " names expert " +
                                    std::to_string(e) + ", expected one of [0, " +
                                    std::to_string(num_experts) + ")");
      }
      auto& list = tokens[static_cast<size_t>(e)];
      if (!list.empty() && list.back() == t) {
        throw std::invalid_argument("moe routing: token " + std::to_string(t) + " names expert " +
                                    std::to_string(e) + " twice");
      }
      list.push_back(t);
      gates[static_cast<size_t>(e)].push_back(routing.gate[static_cast<size_t>(t * routing.k + j)]);
    }
  }
  ExpertGroups out;
  for (int64_t e = 0; e < num_experts; ++e) {
    if (tokens[static_cast<size_t>(e)].empty()) continue;
    out.experts.push_back(static_cast<int32_t>(e));
    out.tokens.push_back(std::move(tokens[static_cast<size_t>(e)]));
    out.gates.push_back(std::move(gates[static_cast<size_t>(e)]));
  }
  return out;
}

void moe_matmul(std::span<const PackedWeights> experts, const MoeRouting& routing,
                std::span<const float> x, std::span<float> y, ThreadPool& pool, Isa isa) {
  if (experts.empty()) throw std::invalid_argument("moe_matmul: no experts");
  const int64_t rows = experts.front().rows(), cols = experts.front().cols();
  for (const PackedWeights& w : experts) {
    if (w.rows() != rows || w.cols() != cols || w.format() != experts.front().format()) {
      throw std::invalid_argument("moe_matmul: experts differ in shape or format");
    }
  }
  if (static_cast<int64_t>(x.size()) != routing.tokens * cols ||
      static_cast<int64_t>(y.size()) != routing.tokens * rows) {
    throw std::invalid_argument("moe_matmul: expected x of " +
                                std::to_string(routing.tokens * cols) + " and y of " +
                                std::to_string(routing.tokens * rows) + " floats, got " +
                                std::to_string(x.size()) + " and " + std::to_string(y.size()));
  }
  const ExpertGroups groups = group_by_expert(routing, static_cast<int64_t>(experts.size()));
  std::fill(y.begin(), y.end(), 0.0f);
  std::vector<float> gathered, product;
  for (size_t g = 0; g < groups.experts.size(); ++g) {
    const std::vector<int64_t>& tokens = groups.tokens[g];
    const auto n = static_cast<int64_t>(tokens.size());
    gathered.resize(static_cast<size_t>(n * cols));
    product.resize(static_cast<size_t>(n * rows));
    for (int64_t i = 0; i < n; ++i) {
      std::copy_n(x.begin() + tokens[static_cast<size_t>(i)] * cols, cols,
                  gathered.begin() + i * cols);
    }
    matmul(experts[static_cast<size_t>(groups.experts[g])], gathered, n, product, pool, isa);
    for (int64_t i = 0; i < n; ++i) {
      const float gate = groups.gates[g][static_cast<size_t>(i)];
      float* out = y.data() + tokens[static_cast<size_t>(i)] * rows;
      const float* p = product.data() + i * rows;
      for (int64_t r = 0; r < rows; ++r) out[r] += gate * p[r];
    }
  }
}

int64_t moe_weight_bytes_read(std::span<const PackedWeights> experts, const MoeRouting& routing) {
  const ExpertGroups groups = group_by_expert(routing, static_cast<int64_t>(experts.size()));
  int64_t bytes = 0;
  for (const int32_t e : groups.experts) bytes += experts[static_cast<size_t>(e)].bytes();
  return bytes;
}

}  // namespace llmcap::kernels
