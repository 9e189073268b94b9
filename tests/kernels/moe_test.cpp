// Tests of kernels/moe.h: the expert-grouped product equals the routed sum of per-token
// products on every instruction path and weight format, reads only the experts hit, and
// refuses bad routings.
#include "kernels/moe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace llmcap::kernels {
namespace {

using ::testing::HasSubstr;

/// moe_matmul adds the k gated products of a token in expert order, the reference in routing
/// order: f32 sums of k terms in two orders differ by at most k roundings of their magnitude.
constexpr double kSumOrderRel = 8 * 0x1.0p-24;

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(gen);
  return v;
}

/// Top-k routing of `tokens` tokens over `experts` experts, k distinct experts per token.
MoeRouting random_routing(int64_t tokens, int64_t k, int64_t experts, uint32_t seed) {
  std::mt19937 gen(seed);
  MoeRouting r;
  r.tokens = tokens;
  r.k = k;
  std::vector<int32_t> ids(static_cast<size_t>(experts));
  for (int64_t e = 0; e < experts; ++e) ids[static_cast<size_t>(e)] = static_cast<int32_t>(e);
  std::uniform_real_distribution<float> gate(0.0f, 1.0f);
  for (int64_t t = 0; t < tokens; ++t) {
    std::shuffle(ids.begin(), ids.end(), gen);
    for (int64_t j = 0; j < k; ++j) {
      r.expert.push_back(ids[static_cast<size_t>(j)]);
      r.gate.push_back(gate(gen));
    }
  }
  return r;
}

TEST(Moe, HandCaseTwoTokensTwoExpertsEach) {
  // Experts: E0 = [1 0; 0 1], E1 = [2 0; 0 2], E2 = [0 1; 1 0]. Token 0 = [1 2] to E0 (0.5) and
  // E2 (0.25): 0.5 [1 2] + 0.25 [2 1] = [1 1.25]; token 1 = [3 -1] to E1 (1) and E0 (2):
  // [6 -2] + [6 -2] = [12 -4].
  ThreadPool pool(1);
  std::vector<PackedWeights> experts;
  experts.push_back(PackedWeights::pack(WeightFormat::kF32, std::vector<float>{1, 0, 0, 1}, 2, 2));
  experts.push_back(PackedWeights::pack(WeightFormat::kF32, std::vector<float>{2, 0, 0, 2}, 2, 2));
  experts.push_back(PackedWeights::pack(WeightFormat::kF32, std::vector<float>{0, 1, 1, 0}, 2, 2));
  MoeRouting r;
  r.tokens = 2;
  r.k = 2;
  r.expert = {0, 2, 1, 0};
  r.gate = {0.5f, 0.25f, 1.0f, 2.0f};
  const std::vector<float> x = {1, 2, 3, -1};
  std::vector<float> y(4);
  moe_matmul(experts, r, x, y, pool, Isa::kScalar);
  EXPECT_EQ(y, (std::vector<float>{1, 1.25f, 12, -4}));
}

TEST(Moe, EveryPathEqualsTheRoutedSumOfPerTokenProducts) {
  ThreadPool pool(2);
  for (const Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (!isa_supported(isa)) continue;
    for (const WeightFormat f :
         {WeightFormat::kF32, WeightFormat::kBf16, WeightFormat::kInt8, WeightFormat::kInt4}) {
      const int64_t rows = 48, cols = 128, num_experts = 8, tokens = 11, k = 2;
      std::vector<PackedWeights> experts;
      for (int64_t e = 0; e < num_experts; ++e) {
        experts.push_back(PackedWeights::random(f, rows, cols, 100 + static_cast<uint64_t>(e)));
      }
      const MoeRouting r = random_routing(tokens, k, num_experts, 5);
      const std::vector<float> x = random_values(tokens * cols, 9);
      std::vector<float> y(static_cast<size_t>(tokens * rows));
      moe_matmul(experts, r, x, y, pool, isa);
      // The reference: each token alone through each of its experts, on the same path (the
      // kernels treat each activation row on its own, so batching does not change a row).
      for (int64_t t = 0; t < tokens; ++t) {
        std::vector<double> ref(static_cast<size_t>(rows), 0.0), magnitude(ref.size(), 0.0);
        for (int64_t j = 0; j < k; ++j) {
          std::vector<float> one(static_cast<size_t>(rows));
          matmul(experts[static_cast<size_t>(r.expert[static_cast<size_t>(t * k + j)])],
                 std::span<const float>(x).subspan(static_cast<size_t>(t * cols),
                                                   static_cast<size_t>(cols)),
                 1, one, pool, isa);
          const float g = r.gate[static_cast<size_t>(t * k + j)];
          for (int64_t i = 0; i < rows; ++i) {
            ref[static_cast<size_t>(i)] += g * one[static_cast<size_t>(i)];
            magnitude[static_cast<size_t>(i)] += std::fabs(g * one[static_cast<size_t>(i)]);
          }
        }
        for (int64_t i = 0; i < rows; ++i) {
          EXPECT_NEAR(y[static_cast<size_t>(t * rows + i)], ref[static_cast<size_t>(i)],
                      kSumOrderRel * magnitude[static_cast<size_t>(i)] + 1e-30)
              << to_string(isa) << " " << to_string(f) << " token " << t << " row " << i;
        }
      }
    }
  }
}

TEST(Moe, AStepReadsTheDistinctExpertsItsTokensHitOnce) {
  std::vector<PackedWeights> experts;
  for (int e = 0; e < 8; ++e)
    experts.push_back(PackedWeights::random(WeightFormat::kInt8, 32, 64, 1));
  MoeRouting r;
  r.tokens = 3;
  r.k = 2;
  r.expert = {1, 5, 5, 1, 1, 5};  // three tokens, all on experts 1 and 5
  r.gate = {1, 1, 1, 1, 1, 1};
  EXPECT_EQ(moe_weight_bytes_read(experts, r), 2 * experts.front().bytes());
  const ExpertGroups g = group_by_expert(r, 8);
  EXPECT_EQ(g.experts, (std::vector<int32_t>{1, 5}));
  EXPECT_EQ(g.tokens[0], (std::vector<int64_t>{0, 1, 2}));
}

TEST(Moe, BadRoutingsAndShapesAreRefused) {
  ThreadPool pool(1);
  std::vector<PackedWeights> experts;
  experts.push_back(PackedWeights::random(WeightFormat::kF32, 4, 4, 1));
  experts.push_back(PackedWeights::random(WeightFormat::kF32, 4, 4, 2));
  MoeRouting r;
  r.tokens = 1;
  r.k = 2;
  r.expert = {0, 2};
  r.gate = {1, 1};
  std::vector<float> x(4), y(4);
  const auto message = [&](const MoeRouting& routing) {
    try {
      moe_matmul(experts, routing, x, y, pool, Isa::kScalar);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message(r), "moe routing: token 0 names expert 2, expected one of [0, 2)");
  r.expert = {1, 1};
  EXPECT_EQ(message(r), "moe routing: token 0 names expert 1 twice");
  r.gate = {1};
  EXPECT_THAT(message(r), HasSubstr("expected tokens x k = 2 experts and gates, got 2 and 1"));
  r.gate = {1, 1};
  r.expert = {0, 1};
  x.resize(3);
  EXPECT_EQ(message(r), "moe_matmul: expected x of 4 and y of 4 floats, got 3 and 4");
  x.resize(4);
  experts.push_back(PackedWeights::random(WeightFormat::kF32, 4, 8, 3));
  EXPECT_EQ(message(r), "moe_matmul: experts differ in shape or format");
}

}  // namespace
}  // namespace llmcap::kernels
