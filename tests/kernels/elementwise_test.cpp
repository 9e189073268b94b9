#include "kernels/elementwise.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmcap::kernels {
namespace {

using ::testing::HasSubstr;

/// RMSNorm: f32 sum of squares in another order and f32 scaling, relative to |out|.
constexpr double kRmsNormRelTol = 2e-6;
/// RoPE: the same table, two f32 products and a sum per element; relative to |x|.
constexpr double kRopeAbsTol = 1e-6;
/// SwiGLU: the polynomial exp (< 4e-7 relative), 1 + e, the product and the division.
constexpr double kSwigluRelTol = 1e-6;

std::vector<float> random_vector(int64_t n, uint32_t seed, float lo = -2.0f, float hi = 2.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

std::string name(Isa isa) { return std::string(to_string(isa)); }

TEST(RmsNorm, MatchesFormulaOnEveryIsa) {
  for (Isa isa : supported_isas()) {
    for (int64_t dim : {1, 7, 16, 33, 64, 100, 4096}) {
      for (int64_t rows : {1, 3}) {
        SCOPED_TRACE(name(isa) + " dim " + std::to_string(dim) + " rows " + std::to_string(rows));
        // One element past an aligned start, so spans are unaligned.
        std::vector<float> xb = random_vector(rows * dim + 1, 1 + dim);
        std::vector<float> w = random_vector(dim, 2 + dim, 0.5f, 1.5f);
        std::span<const float> x(xb.data() + 1, rows * dim);
        std::vector<float> out(rows * dim);
        const float eps = 1e-5f;
        rms_norm(x, w, dim, eps, out, isa);
        for (int64_t r = 0; r < rows; ++r) {
          double ss = 0;
          for (int64_t i = 0; i < dim; ++i) ss += double(x[r * dim + i]) * x[r * dim + i];
          const double inv = 1.0 / std::sqrt(ss / dim + eps);
          for (int64_t i = 0; i < dim; ++i) {
            const double want = x[r * dim + i] * inv * w[i];
            ASSERT_NEAR(out[r * dim + i], want, kRmsNormRelTol * std::abs(want) + 1e-30)
                << "row " << r << " i " << i;
          }
        }
      }
    }
  }
}

TEST(RmsNorm, InPlaceAndKnownValues) {
  for (Isa isa : supported_isas()) {
    // x = (3, 4): mean square 12.5, eps 0: out = x / sqrt(12.5) * w.
    std::vector<float> x = {3, 4, 3, 4};
    std::vector<float> w = {1, 2};
    rms_norm(x, w, 2, 0.0f, x, isa);
    const double r = std::sqrt(12.5);
    EXPECT_NEAR(x[0], 3 / r, 1e-6) << name(isa);
    EXPECT_NEAR(x[1], 8 / r, 1e-6) << name(isa);
    EXPECT_NEAR(x[2], 3 / r, 1e-6) << name(isa);
    EXPECT_NEAR(x[3], 8 / r, 1e-6) << name(isa);
    // All zeros with eps: zeros, not NaN.
    std::vector<float> z(5, 0.0f), wz(5, 1.0f), oz(5, 1.0f);
    rms_norm(z, wz, 5, 1e-6f, oz, isa);
    for (float v : oz) EXPECT_EQ(v, 0.0f) << name(isa);
  }
}

TEST(Rope, PositionZeroIsIdentity) {
  for (Isa isa : supported_isas()) {
    std::vector<float> x = random_vector(3 * 80, 5);
    std::vector<float> y = x;
    rope(y, 3, 80, 64, 0, 10000.0f, isa);
    EXPECT_EQ(x, y) << name(isa);
  }
}

TEST(Rope, PositionOneRotatesByKnownAngles) {
  // rotary_dim 4, theta 100: frequencies 100^0 = 1 and 100^(-1/2) = 0.1; position 1 rotates the
  // pairs (x0, x2) by 1 rad and (x1, x3) by 0.1 rad; x4, x5 (past rotary_dim) are untouched.
  for (Isa isa : supported_isas()) {
    std::vector<float> x = {1, 2, 3, 4, 5, 6, -1, 0.5f, 2, -3, 7, 8};
    rope(x, 2, 6, 4, 1, 100.0f, isa);
    auto check = [&](int64_t h, double a0, double a1, double a2, double a3, double a4, double a5) {
      const double c1 = std::cos(1.0), s1 = std::sin(1.0), c2 = std::cos(0.1), s2 = std::sin(0.1);
      const float* y = x.data() + h * 6;
      EXPECT_NEAR(y[0], a0 * c1 - a2 * s1, kRopeAbsTol) << name(isa);
      EXPECT_NEAR(y[2], a0 * s1 + a2 * c1, kRopeAbsTol) << name(isa);
      EXPECT_NEAR(y[1], a1 * c2 - a3 * s2, kRopeAbsTol) << name(isa);
      EXPECT_NEAR(y[3], a1 * s2 + a3 * c2, kRopeAbsTol) << name(isa);
      EXPECT_EQ(y[4], a4) << name(isa);
      EXPECT_EQ(y[5], a5) << name(isa);
    };
    check(0, 1, 2, 3, 4, 5, 6);
    check(1, -1, 0.5, 2, -3, 7, 8);
  }
}

TEST(Rope, EveryIsaMatchesDoubleRotationOnOddShapes) {
  for (Isa isa : supported_isas()) {
    for (auto [head_dim, rotary_dim] :
         {std::pair<int64_t, int64_t>{128, 128}, {80, 80}, {64, 32}, {96, 34}, {6, 2}}) {
      for (int64_t position : {1, 17, 4099, 131071}) {
        SCOPED_TRACE(name(isa) + " head_dim " + std::to_string(head_dim) + " rotary " +
                     std::to_string(rotary_dim) + " pos " + std::to_string(position));
        const int64_t heads = 5;
        std::vector<float> xb = random_vector(heads * head_dim + 1, 3 + head_dim);
        std::vector<float> before(xb.begin() + 1, xb.end());
        std::span<float> x(xb.data() + 1, heads * head_dim);
        rope(x, heads, head_dim, rotary_dim, position, 500000.0f, isa);
        const int64_t half = rotary_dim / 2;
        for (int64_t h = 0; h < heads; ++h) {
          for (int64_t i = 0; i < head_dim; ++i) {
            const double x_i = before[h * head_dim + i];
            double want = x_i;
            if (i < rotary_dim) {
              const int64_t j = i % half;
              const double angle = position * std::pow(500000.0, -2.0 * j / rotary_dim);
              const double c = std::cos(angle), s = std::sin(angle);
              want = i < half ? x_i * c - before[h * head_dim + i + half] * s
                              : before[h * head_dim + i - half] * s + x_i * c;
            }
            ASSERT_NEAR(x[h * head_dim + i], want, 4 * kRopeAbsTol) << "head " << h << " i " << i;
          }
        }
      }
    }
  }
}

TEST(Swiglu, MatchesFormulaOverTheRangeOnEveryIsa) {
  for (Isa isa : supported_isas()) {
    for (int64_t n : {1, 5, 8, 15, 16, 17, 1000}) {
      SCOPED_TRACE(name(isa) + " n " + std::to_string(n));
      std::vector<float> gb = random_vector(n + 1, 7 + n, -30.0f, 30.0f);
      std::vector<float> u = random_vector(n, 8 + n);
      std::span<const float> g(gb.data() + 1, n);
      std::vector<float> out(n);
      swiglu(g, u, out, isa);
      for (int64_t i = 0; i < n; ++i) {
        const double want = g[i] / (1.0 + std::exp(-double(g[i]))) * u[i];
        ASSERT_NEAR(out[i], want, kSwigluRelTol * std::abs(want) + 1e-37) << "i " << i;
      }
    }
  }
}

TEST(Swiglu, PolynomialExpErrorBoundAcrossRange) {
  // Sweep gate over [-87, 87] (where 1/(1 + e^-g) is representable) with up = 1: the vector
  // paths' exp error shows directly in silu.
  std::vector<float> g, u;
  for (double x = -87; x <= 87; x += 0.0137) g.push_back(static_cast<float>(x));
  u.assign(g.size(), 1.0f);
  for (Isa isa : supported_isas()) {
    std::vector<float> out(g.size());
    swiglu(g, u, out, isa);
    double worst = 0;
    for (size_t i = 0; i < g.size(); ++i) {
      const double want = g[i] / (1.0 + std::exp(-double(g[i])));
      if (want != 0) worst = std::max(worst, std::abs(out[i] - want) / std::abs(want));
    }
    EXPECT_LE(worst, kSwigluRelTol) << name(isa);
  }
}

TEST(Swiglu, ExtremesAndAliasing) {
  for (Isa isa : supported_isas()) {
    std::vector<float> g = {0.0f, 100.0f, -100.0f, 1.0f, -1.0f, 50.0f, -50.0f, 2.0f, 3.0f};
    std::vector<float> u(g.size(), 2.0f);
    swiglu(g, u, g, isa);  // out aliases gate
    EXPECT_EQ(g[0], 0.0f) << name(isa);
    EXPECT_NEAR(g[1], 200.0f, 1e-4) << name(isa);
    EXPECT_NEAR(g[2], 0.0f, 1e-30) << name(isa);
    EXPECT_NEAR(g[3], 2.0 / (1 + std::exp(-1.0)), 1e-6) << name(isa);
    EXPECT_NEAR(g[4], -2.0 / (1 + std::exp(1.0)), 1e-6) << name(isa);
    for (float v : g) EXPECT_TRUE(std::isfinite(v)) << name(isa);
  }
}

void expect_invalid(const std::function<void()>& f, const std::string& message) {
  try {
    f();
    ADD_FAILURE() << "no exception, expected: " << message;
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr(message));
  }
}

/// f32 -> bf16 by the definition: the nearest bf16 in double arithmetic, ties to the even
/// mantissa; written independently of kernels/bf16.h.
uint16_t nearest_bf16(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x40);
  const uint32_t down = u & 0xFFFF0000u;
  const uint32_t up = down + 0x10000u;  // next bf16 away from zero (carries into the exponent)
  float fd, fu;
  std::memcpy(&fd, &down, 4);
  std::memcpy(&fu, &up, 4);
  // Past the largest bf16 the next value up is 2^128 (unbounded exponent), as IEEE 754 rounds.
  const double next_up = std::isinf(fu) ? std::copysign(std::ldexp(1.0, 128), f) : double(fu);
  const double dd = std::abs(double(f) - double(fd)), du = std::abs(next_up - double(f));
  if (dd < du) return static_cast<uint16_t>(down >> 16);
  if (du < dd) return static_cast<uint16_t>(up >> 16);
  return static_cast<uint16_t>(((down >> 16) & 1u) == 0 ? down >> 16 : up >> 16);
}

TEST(ConvertToBf16, EveryIsaRoundsToNearestEvenBitForBitOnOddLengths) {
  std::vector<float> special = {0.0f,
                                -0.0f,
                                1.0f,
                                -1.0f,
                                INFINITY,
                                -INFINITY,
                                std::numeric_limits<float>::max(),  // rounds up to infinity
                                std::numeric_limits<float>::denorm_min(),
                                -std::numeric_limits<float>::denorm_min(),
                                std::numeric_limits<float>::min(),  // smallest normal
                                3.0e-39f,                           // subnormal: not flushed
                                std::nanf(""),
                                -std::nanf("")};
  for (const uint32_t bits : {0x3F808000u,     // tie, even below: rounds down
                              0x3F818000u,     // tie, odd below: rounds up
                              0x3F808001u,     // just above the tie
                              0x3F807FFFu,     // just below the tie
                              0x7F7FFFFFu,     // largest finite
                              0x7FA00000u}) {  // signalling NaN: made quiet
    float f;
    std::memcpy(&f, &bits, 4);
    special.push_back(f);
  }
  std::vector<float> values = random_vector(1000, 77, -1e3f, 1e3f);
  values.insert(values.begin() + 5, special.begin(), special.end());
  for (Isa isa : supported_isas()) {
    for (const int64_t n : {int64_t{1}, int64_t{7}, int64_t{15}, int64_t{17}, int64_t{33},
                            static_cast<int64_t>(values.size()) - 1}) {
      SCOPED_TRACE(name(isa) + " n " + std::to_string(n));
      // From the second element on, so neither span is aligned.
      const std::span<const float> x(values.data() + 1, static_cast<size_t>(n));
      std::vector<uint16_t> out_buffer(static_cast<size_t>(n) + 2, 0xABCD);
      const std::span<uint16_t> out(out_buffer.data() + 1, static_cast<size_t>(n));
      convert_to_bf16(x, out, isa);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[i], nearest_bf16(x[i])) << "element " << i << " = " << x[i];
      }
      EXPECT_EQ(out_buffer.front(), 0xABCD) << "wrote before the output";
      EXPECT_EQ(out_buffer.back(), 0xABCD) << "wrote past the output";
    }
  }
}

TEST(Elementwise, InvalidArguments) {
  std::vector<float> x(12), w(4), out(12);
  expect_invalid([&] { rms_norm(x, w, 0, 1e-5f, out); }, "rms_norm: dim must be >= 1, got 0");
  expect_invalid([&] { rms_norm(x, w, 3, 1e-5f, out); }, "rms_norm: weight.size() (4) != dim (3)");
  expect_invalid([&] { rms_norm(std::span<const float>(x).first(10), w, 4, 1e-5f, out); },
                 "rms_norm: x.size() (10) is not a multiple of dim (4)");
  expect_invalid([&] { rms_norm(x, w, 4, 1e-5f, std::span<float>(out).first(8)); },
                 "rms_norm: out.size() (8) != x.size() (12)");
  expect_invalid([&] { rms_norm(x, w, 4, -1.0f, out); }, "rms_norm: eps must be finite and >= 0");

  expect_invalid([&] { rope(x, -1, 4, 4, 0, 1e4f); }, "rope: num_heads must be >= 0, got -1");
  expect_invalid([&] { rope(x, 3, 0, 4, 0, 1e4f); }, "rope: head_dim must be >= 1, got 0");
  expect_invalid([&] { rope(x, 2, 4, 4, 0, 1e4f); },
                 "rope: x.size() (12) != num_heads * head_dim (2 * 4)");
  expect_invalid([&] { rope(x, 3, 4, 3, 0, 1e4f); },
                 "rope: rotary_dim (3) must be even, >= 2 and <= head_dim (4)");
  expect_invalid([&] { rope(x, 3, 4, 6, 0, 1e4f); },
                 "rope: rotary_dim (6) must be even, >= 2 and <= head_dim (4)");
  expect_invalid([&] { rope(x, 3, 4, 0, 0, 1e4f); },
                 "rope: rotary_dim (0) must be even, >= 2 and <= head_dim (4)");
  expect_invalid([&] { rope(x, 3, 4, 4, -2, 1e4f); }, "rope: position must be >= 0, got -2");
  expect_invalid([&] { rope(x, 3, 4, 4, 0, 0.0f); }, "rope: theta must be finite and > 0");

  expect_invalid([&] { swiglu(x, std::span<const float>(w), out); },
                 "swiglu: gate.size() (12), up.size() (4) and out.size() (12) must be equal");
  expect_invalid([&] { swiglu(x, x, std::span<float>(out).first(1)); },
                 "swiglu: gate.size() (12), up.size() (12) and out.size() (1) must be equal");

  std::vector<uint16_t> bf(11);
  expect_invalid([&] { convert_to_bf16(x, bf); },
                 "convert_to_bf16: out.size() (11) != x.size() (12)");

  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (isa_supported(isa)) continue;
    expect_invalid([&] { convert_to_bf16(x, std::span<uint16_t>(bf).first(0), isa); },
                   "convert_to_bf16: out.size() (0) != x.size() (12)");
    expect_invalid([&] { swiglu(x, x, out, isa); },
                   "swiglu: isa " + name(isa) + " is not supported by this CPU");
    expect_invalid([&] { rms_norm(x, w, 4, 1e-5f, out, isa); },
                   "rms_norm: isa " + name(isa) + " is not supported by this CPU");
    expect_invalid([&] { rope(x, 3, 4, 4, 0, 1e4f, isa); },
                   "rope: isa " + name(isa) + " is not supported by this CPU");
  }
}

}  // namespace
}  // namespace llmcap::kernels
