// Tests of kernels/dispatch.h: every supported instruction set has a complete table, the best
// table follows best_isa() (and so LLMCAP_ISA), the AVX-512 matmul entries follow the CPU's
// extensions and the process-wide switch, and every entry of every table the CPU can run agrees
// with the scalar table's on a few shapes (the tight accuracy bounds are in matmul_test,
// attention_test and elementwise_test, through the public functions).
#include "kernels/dispatch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/attention_internal.h"
#include "kernels/bf16.h"
#include "kernels/matmul_internal.h"

namespace llmcap::kernels {
namespace {

constexpr WeightFormat kFormats[] = {WeightFormat::kF32, WeightFormat::kBf16, WeightFormat::kInt8,
                                     WeightFormat::kInt4};

std::vector<float> random_vector(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = u(rng);
  return v;
}

std::string name(Isa isa) { return std::string(to_string(isa)); }

// Restores the AVX-512 extension switch when a test ends.
class ExtensionsGuard {
 public:
  explicit ExtensionsGuard(bool enabled) : saved_(detail::avx512_extensions_enabled()) {
    detail::set_avx512_extensions_enabled(enabled);
  }
  ~ExtensionsGuard() { detail::set_avx512_extensions_enabled(saved_); }

 private:
  bool saved_;
};

TEST(KernelTable, EverySupportedIsaHasACompleteTable) {
  for (Isa isa : supported_isas()) {
    SCOPED_TRACE(name(isa));
    const KernelTable& t = kernel_table(isa);
    EXPECT_EQ(t.isa, isa);
    for (WeightFormat f : kFormats) EXPECT_NE(t.matmul_for(f), nullptr) << to_string(f);
    EXPECT_NE(t.attend_for(KvType::kF32), nullptr);
    EXPECT_NE(t.attend_for(KvType::kBf16), nullptr);
    EXPECT_NE(t.rms_norm, nullptr);
    EXPECT_NE(t.rope, nullptr);
    EXPECT_NE(t.swiglu, nullptr);
    EXPECT_NE(t.to_bf16, nullptr);
    EXPECT_EQ(t.attention_bf16_dots, isa == Isa::kAvx512 && cpu_features().avx512_bf16);
    EXPECT_EQ(&kernel_table(isa), &t);  // built once
  }
}

TEST(KernelTable, ScalarTableIsTheReference) {
  const KernelTable& t = kernel_table(Isa::kScalar);
  for (WeightFormat f : kFormats) EXPECT_EQ(t.matmul_for(f), &detail::matmul_scalar);
  EXPECT_EQ(t.attend_for(KvType::kF32), &detail::attend_scalar_f32);
  EXPECT_EQ(t.attend_for(KvType::kBf16), &detail::attend_scalar_bf16);
}

TEST(KernelTable, UnsupportedIsaIsRefusedNamingTheCaller) {
  const std::string flags = " is not supported by this CPU (" + cpu_features().flags() + ")";
  try {
    kernel_table(static_cast<Isa>(7));
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "kernel_table: isa unknown" + flags);
  }
  try {
    kernel_table(static_cast<Isa>(7), "swiglu");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "swiglu: isa unknown" + flags);
  }
  if (!isa_supported(Isa::kAvx512)) {
    try {
      kernel_table(Isa::kAvx512);
      FAIL() << "expected std::invalid_argument";
    } catch (const std::invalid_argument& e) {
      EXPECT_EQ(std::string(e.what()), "kernel_table: isa avx512" + flags);
    }
  }
}

// The kernels_tests_capped_at_avx2 run of this suite sets LLMCAP_ISA=avx2 (CMakeLists.txt).
TEST(KernelTable, BestTableIsThatOfBestIsaCappedByLlmcapIsa) {
  const KernelTable& best = best_kernel_table();
  EXPECT_EQ(best.isa, best_isa());
  EXPECT_EQ(&best, &kernel_table(best_isa()));
  EXPECT_TRUE(isa_supported(best.isa));
  const Isa fastest = supported_isas().back();
  const char* cap = std::getenv("LLMCAP_ISA");
  if (cap != nullptr && parse_isa(cap)) {
    EXPECT_EQ(best.isa, std::min(fastest, *parse_isa(cap))) << "LLMCAP_ISA=" << cap;
  } else {
    EXPECT_EQ(best.isa, fastest);
  }
}

TEST(KernelTable, Avx512MatmulFollowsTheCpuExtensionsAndTheSwitch) {
  if (!isa_supported(Isa::kAvx512)) GTEST_SKIP() << "no AVX-512 on this CPU";
  const CpuFeatures& f = cpu_features();
  {
    ExtensionsGuard on(true);
    const KernelTable& t = kernel_table(Isa::kAvx512);
    EXPECT_EQ(t.matmul_for(WeightFormat::kF32), &detail::matmul_avx512_f32);
    EXPECT_EQ(t.matmul_for(WeightFormat::kBf16),
              f.avx512_bf16 ? &detail::matmul_avx512_bf16_dot : &detail::matmul_avx512_dequant);
    EXPECT_EQ(t.matmul_for(WeightFormat::kInt8),
              f.avx512_vnni ? &detail::matmul_avx512_int8_vnni : &detail::matmul_avx512_dequant);
    EXPECT_EQ(t.matmul_for(WeightFormat::kInt4),
              f.avx512_vnni ? &detail::matmul_avx512_int4_vnni : &detail::matmul_avx512_dequant);
    EXPECT_EQ(t.attention_bf16_dots, f.avx512_bf16);
  }
  {
    ExtensionsGuard off(false);
    const KernelTable& t = kernel_table(Isa::kAvx512);
    EXPECT_EQ(t.matmul_for(WeightFormat::kF32), &detail::matmul_avx512_f32);
    EXPECT_EQ(t.matmul_for(WeightFormat::kBf16), &detail::matmul_avx512_dequant);
    EXPECT_EQ(t.matmul_for(WeightFormat::kInt8), &detail::matmul_avx512_dequant);
    EXPECT_EQ(t.matmul_for(WeightFormat::kInt4), &detail::matmul_avx512_dequant);
    EXPECT_EQ(t.attention_bf16_dots, f.avx512_bf16);  // a switch of matmul alone
  }
}

// ---- Every entry against the scalar table ---------------------------------------------------

// The tables of every path this CPU runs, the AVX-512 one with and without its extensions.
struct Path {
  Isa isa;
  bool extensions;
};
std::vector<Path> all_paths() {
  std::vector<Path> paths;
  for (Isa isa : supported_isas()) {
    paths.push_back({isa, true});
    if (isa == Isa::kAvx512) paths.push_back({isa, false});
  }
  return paths;
}

TEST(KernelTable, EveryMatmulEntryMatchesTheScalarTable) {
  ThreadPool pool(2);
  for (const Path& path : all_paths()) {
    ExtensionsGuard guard(path.extensions);
    const KernelTable& t = kernel_table(path.isa);
    for (WeightFormat f : kFormats) {
      for (int64_t cols : {64, 96, 160}) {
        for (int64_t batch : {1, 3, 17}) {
          SCOPED_TRACE(name(path.isa) + (path.extensions ? "" : "_noext") + " " +
                       std::string(to_string(f)) + " cols " + std::to_string(cols) + " batch " +
                       std::to_string(batch));
          const int64_t rows = 37;
          const auto w = PackedWeights::random(f, rows, cols, 11 + cols);
          const auto x = random_vector(batch * cols, static_cast<uint32_t>(batch + cols));
          std::vector<float> want(static_cast<size_t>(batch * rows));
          std::vector<float> got(want.size());
          kernel_table(Isa::kScalar).matmul_for(f)(w, x.data(), batch, want.data(), pool);
          t.matmul_for(f)(w, x.data(), batch, got.data(), pool);
          for (int64_t b = 0; b < batch; ++b) {
            double xmax = 0;
            for (int64_t c = 0; c < cols; ++c)
              xmax = std::max(xmax, double{std::fabs(x[b * cols + c])});
            for (int64_t r = 0; r < rows; ++r) {
              // S: the magnitude of the terms; A: what int8 activations (a step of max|x| / 127)
              // can move. Loose bounds: bf16 activations (2^-9), int8 activations (A / 254).
              double s = 0, a = 0;
              for (int64_t c = 0; c < cols; ++c) {
                s += std::fabs(w.at(r, c) * x[b * cols + c]);
                a += std::fabs(w.at(r, c)) * xmax;
              }
              const double tol = a / 254 + 0x1.0p-8 * s + 1e-6;
              ASSERT_NEAR(got[b * rows + r], want[b * rows + r], tol) << "b " << b << " r " << r;
            }
          }
        }
      }
    }
  }
}

// One piece of attention through `kernel`; returns acc / sum per head, then max, then sum.
std::vector<float> attend(AttendKernel* kernel, KvType type, const std::vector<float>& k,
                          const std::vector<float>& v, const std::vector<float>& q, int64_t tokens,
                          int64_t d, int64_t group) {
  std::vector<uint16_t> kb(k.size()), vb(v.size());
  for (size_t i = 0; i < k.size(); ++i) kb[i] = detail::f32_to_bf16(k[i]);
  for (size_t i = 0; i < v.size(); ++i) vb[i] = detail::f32_to_bf16(v[i]);
  std::vector<float> acc(static_cast<size_t>(group * d)), max(group), sum(group);
  detail::AttentionPiece p;
  p.type = type;
  p.k = type == KvType::kF32 ? static_cast<const void*>(k.data()) : kb.data();
  p.v = type == KvType::kF32 ? static_cast<const void*>(v.data()) : vb.data();
  p.tokens = tokens;
  p.head_dim = d;
  p.q = q.data();
  p.group = group;
  p.scale = 1.0f / std::sqrt(static_cast<float>(d));
  p.acc = acc.data();
  p.max = max.data();
  p.sum = sum.data();
  kernel(p);
  std::vector<float> out;
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t i = 0; i < d; ++i) out.push_back(acc[g * d + i] / sum[g]);
  }
  out.insert(out.end(), max.begin(), max.end());
  out.insert(out.end(), sum.begin(), sum.end());
  return out;
}

TEST(KernelTable, EveryAttendEntryMatchesTheScalarTable) {
  for (Isa isa : supported_isas()) {
    const KernelTable& t = kernel_table(isa);
    for (KvType type : {KvType::kF32, KvType::kBf16}) {
      for (int64_t d : {13, 64, 72, 128}) {
        for (int64_t tokens : {1, 20, 33, 300}) {
          for (int64_t group : {1, 3}) {
            SCOPED_TRACE(name(isa) + " " + std::string(to_string(type)) + " d " +
                         std::to_string(d) + " tokens " + std::to_string(tokens) + " group " +
                         std::to_string(group));
            const auto k = random_vector(tokens * d, static_cast<uint32_t>(d + tokens), -2, 2);
            const auto v = random_vector(tokens * d, static_cast<uint32_t>(3 * d + tokens));
            const auto q = random_vector(group * d, static_cast<uint32_t>(group + d), -2, 2);
            const auto want = attend(kernel_table(Isa::kScalar).attend_for(type), type, k, v, q,
                                     tokens, d, group);
            const auto got = attend(t.attend_for(type), type, k, v, q, tokens, d, group);
            ASSERT_EQ(got.size(), want.size());
            // Outputs (|o| < 1) as attention_test's fast-vs-scalar bound; maxima and sums
            // (<= tokens) relative to their size.
            for (size_t i = 0; i < got.size(); ++i) {
              ASSERT_NEAR(got[i], want[i], 2e-5 * std::max(1.0f, std::fabs(want[i]))) << i;
            }
          }
        }
      }
    }
  }
}

TEST(KernelTable, EveryElementwiseEntryMatchesTheScalarTable) {
  const KernelTable& ref = kernel_table(Isa::kScalar);
  for (Isa isa : supported_isas()) {
    const KernelTable& t = kernel_table(isa);
    for (int64_t n : {1, 7, 16, 33, 100, 4096}) {
      SCOPED_TRACE(name(isa) + " n " + std::to_string(n));
      const auto x = random_vector(3 * n, static_cast<uint32_t>(n), -4, 4);
      const auto w = random_vector(n, static_cast<uint32_t>(n + 1), 0.5f, 1.5f);
      std::vector<float> want(x.size()), got(x.size());
      ref.rms_norm(x.data(), w.data(), 3, n, 1e-5f, want.data());
      t.rms_norm(x.data(), w.data(), 3, n, 1e-5f, got.data());
      for (size_t i = 0; i < x.size(); ++i) ASSERT_NEAR(got[i], want[i], 2e-6 * std::fabs(want[i]));

      ref.swiglu(x.data(), x.data() + n, want.data(), 2 * n);
      t.swiglu(x.data(), x.data() + n, got.data(), 2 * n);
      for (int64_t i = 0; i < 2 * n; ++i) ASSERT_NEAR(got[i], want[i], 1e-6 * std::fabs(want[i]));

      std::vector<uint16_t> want16(x.size()), got16(x.size());
      ref.to_bf16(x.data(), want16.data(), 3 * n);
      t.to_bf16(x.data(), got16.data(), 3 * n);
      ASSERT_EQ(got16, want16);

      if (n % 2 == 0) {  // 3 heads of n, the first n - 2 rotated
        const int64_t half = (n - 2) / 2;
        const auto cos = random_vector(half, 5), sin = random_vector(half, 6);
        std::vector<float> a = x, b = x;
        ref.rope(a.data(), 3, n, half, cos.data(), sin.data());
        t.rope(b.data(), 3, n, half, cos.data(), sin.data());
        for (size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(b[i], a[i], 1e-6 * 8);
      }
    }
  }
}

}  // namespace
}  // namespace llmcap::kernels
