#include "kernels/attention.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmcap::kernels {
namespace {

using ::testing::HasSubstr;

/// Scalar reference (f32 dot products, f32 online softmax) vs a double-precision softmax.
constexpr double kScalarVsDoubleAbsTol = 2e-5;
/// A vector path vs the scalar reference (same math, other summation order, a polynomial exp
/// of ~2 ulp).
constexpr double kFastVsScalarAbsTol = 2e-5;
/// vdpbf16ps with q rounded to bf16 (score error ~ 2^-9 relative per product).
constexpr double kBf16DotAbsTol = 5e-3;

uint16_t to_bf16(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  bits += 0x7FFFu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

float from_bf16(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

/// A KV cache with `capacity` > context rows per head, stored one element past an aligned
/// start (so rows are not 64-byte aligned), values uniform in [-1, 1).
struct Cache {
  KvType type;
  int64_t heads, d, capacity, context;
  std::vector<float> kf, vf;     // f32 storage (+1 offset)
  std::vector<uint16_t> kb, vb;  // bf16 storage (+1 offset)

  Cache(KvType type_, int64_t heads_, int64_t d_, int64_t context_, uint32_t seed,
        float k_range = 1.0f)
      : type(type_), heads(heads_), d(d_), capacity(context_ + 5), context(context_) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    const int64_t n = heads * capacity * d;
    kf.assign(n + 1, 0);
    vf.assign(n + 1, 0);
    for (int64_t i = 0; i < n; ++i) {
      kf[i + 1] = k_range * u(rng);
      vf[i + 1] = u(rng);
    }
    if (type == KvType::kBf16) {
      kb.resize(n + 1);
      vb.resize(n + 1);
      for (int64_t i = 0; i <= n; ++i) {
        kb[i] = to_bf16(kf[i]);
        vb[i] = to_bf16(vf[i]);
        kf[i] = from_bf16(kb[i]);  // the values the kernel sees
        vf[i] = from_bf16(vb[i]);
      }
    }
  }
  float k(int64_t h, int64_t t, int64_t i) const { return kf[1 + (h * capacity + t) * d + i]; }
  float v(int64_t h, int64_t t, int64_t i) const { return vf[1 + (h * capacity + t) * d + i]; }
  KvCacheView view() const {
    KvCacheView kv;
    kv.type = type;
    kv.k = type == KvType::kF32 ? static_cast<const void*>(kf.data() + 1) : kb.data() + 1;
    kv.v = type == KvType::kF32 ? static_cast<const void*>(vf.data() + 1) : vb.data() + 1;
    kv.num_kv_heads = heads;
    kv.head_dim = d;
    kv.capacity_tokens = capacity;
    kv.context_tokens = context;
    return kv;
  }
};

/// Softmax attention in double, straight from the definition.
std::vector<double> reference(const std::vector<float>& q, int64_t q_heads, const Cache& c,
                              float scale) {
  const int64_t group = q_heads / c.heads;
  std::vector<double> out(q_heads * c.d, 0.0);
  for (int64_t h = 0; h < q_heads; ++h) {
    const int64_t g = h / group;
    std::vector<double> s(c.context);
    double m = -INFINITY;
    for (int64_t t = 0; t < c.context; ++t) {
      double dot = 0;
      for (int64_t i = 0; i < c.d; ++i) dot += double(q[h * c.d + i]) * c.k(g, t, i);
      s[t] = scale * dot;
      m = std::max(m, s[t]);
    }
    double l = 0;
    for (int64_t t = 0; t < c.context; ++t) l += std::exp(s[t] - m);
    for (int64_t t = 0; t < c.context; ++t) {
      const double p = std::exp(s[t] - m) / l;
      for (int64_t i = 0; i < c.d; ++i) out[h * c.d + i] += p * c.v(g, t, i);
    }
  }
  return out;
}

/// q in a buffer offset by one float; returns the span.
struct Query {
  std::vector<float> buf;
  std::span<const float> span() const { return {buf.data() + 1, buf.size() - 1}; }
  std::vector<float> values() const { return {buf.begin() + 1, buf.end()}; }
};
Query make_q(int64_t n, uint32_t seed, float range = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-range, range);
  Query q;
  q.buf.resize(n + 1);
  for (auto& x : q.buf) x = u(rng);
  return q;
}

std::vector<float> run(const Query& q, int64_t q_heads, const Cache& c, float scale,
                       ThreadPool& pool, Isa isa, AttentionOptions opt = {}) {
  std::vector<float> buf(q_heads * c.d + 1, NAN);
  decode_attention(q.span(), q_heads, c.view(), scale,
                   std::span<float>(buf.data() + 1, q_heads * c.d), pool, isa, opt);
  return {buf.begin() + 1, buf.end()};
}

double max_abs_diff(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - b[i]));
  return m;
}
double max_abs_diff(const std::vector<float>& a, const std::vector<double>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, std::abs(double(a[i]) - b[i]));
  return m;
}

TEST(DecodeAttention, ScalarMatchesDoubleReference) {
  ThreadPool pool(1);
  for (KvType type : {KvType::kF32, KvType::kBf16}) {
    for (int64_t d : {64, 80, 13}) {
      for (auto [heads, group] : {std::pair<int64_t, int64_t>{1, 1}, {2, 4}, {8, 7}}) {
        for (int64_t context : {1, 3, 127, 1000}) {
          SCOPED_TRACE(std::string(to_string(type)) + " d " + std::to_string(d) + " kv " +
                       std::to_string(heads) + " group " + std::to_string(group) + " ctx " +
                       std::to_string(context));
          Cache c(type, heads, d, context, 7 + context);
          Query q = make_q(heads * group * d, 11 + d, 2.0f);
          const float scale = 1.0f / std::sqrt(float(d));
          std::vector<float> got = run(q, heads * group, c, scale, pool, Isa::kScalar);
          EXPECT_LE(max_abs_diff(got, reference(q.values(), heads * group, c, scale)),
                    kScalarVsDoubleAbsTol);
        }
      }
    }
  }
}

TEST(DecodeAttention, EveryIsaMatchesScalarOnOddShapes) {
  ThreadPool pool1(1), pool3(3);
  AttentionOptions split;  // force token splits and merges even for short contexts
  split.min_tokens_per_thread = 1;
  for (Isa isa : supported_isas()) {
    for (KvType type : {KvType::kF32, KvType::kBf16}) {
      for (int64_t d : {64, 80, 128, 72, 13}) {
        for (int64_t heads : {1, 2, 8}) {
          for (int64_t group : {1, 4, 7}) {
            // 20, 32 and 33 tokens: the bf16 AVX-512 path reads a piece as two halves in
            // lockstep from 33 tokens on (one block of 16 and a second half of 1).
            for (int64_t context : {1, 3, 20, 32, 33, 127, 1000, 4099}) {
              // Head dims with a vector tail (72, 13) on short contexts only, to keep it quick.
              if ((d == 72 || d == 13) && context > 127) continue;
              if (d == 64 && context == 4099) continue;
              SCOPED_TRACE(std::string(to_string(isa)) + " " + std::string(to_string(type)) +
                           " d " + std::to_string(d) + " kv " + std::to_string(heads) + " group " +
                           std::to_string(group) + " ctx " + std::to_string(context));
              Cache c(type, heads, d, context, 1000 * d + 10 * heads + group + context);
              Query q = make_q(heads * group * d, 3 + context);
              const float scale = 1.0f / std::sqrt(float(d));
              std::vector<float> want = run(q, heads * group, c, scale, pool1, Isa::kScalar);
              std::vector<float> got = run(q, heads * group, c, scale, pool3, isa);
              ASSERT_LE(max_abs_diff(got, want), kFastVsScalarAbsTol);
              std::vector<float> got_split = run(q, heads * group, c, scale, pool3, isa, split);
              ASSERT_LE(max_abs_diff(got_split, want), kFastVsScalarAbsTol);
            }
          }
        }
      }
    }
  }
}

TEST(DecodeAttention, Bf16PvDotOptionStaysCloseAloneAndWithQkDot) {
  // Odd contexts leave a token without a partner in the last pair (33 also in the second half
  // of the AVX-512 two-half order); d 13 and 80 exercise the masked tail chunk; 1000 and 2051
  // span several blocks of the online softmax.
  ThreadPool pool(2);
  for (bool qk_dot : {false, true}) {
    AttentionOptions opt;
    opt.bf16_pv_dot = true;
    opt.bf16_qk_dot = qk_dot;
    for (Isa isa : supported_isas()) {
      for (int64_t d : {64, 80, 128, 13}) {
        for (int64_t context : {1, 3, 33, 127, 1000, 2051}) {
          SCOPED_TRACE(std::string(to_string(isa)) + " qk_dot " + std::to_string(qk_dot) + " d " +
                       std::to_string(d) + " ctx " + std::to_string(context));
          Cache c(KvType::kBf16, 2, d, context, 7 + context);
          Query q = make_q(2 * 4 * d, 11);
          const float scale = 1.0f / std::sqrt(float(d));
          std::vector<float> want = run(q, 8, c, scale, pool, Isa::kScalar);
          std::vector<float> got = run(q, 8, c, scale, pool, isa, opt);
          EXPECT_LE(max_abs_diff(got, want), kBf16DotAbsTol);
        }
      }
    }
  }
}

TEST(DecodeAttention, Bf16DotProductOptionStaysClose) {
  ThreadPool pool(2);
  AttentionOptions opt;
  opt.bf16_qk_dot = true;
  for (Isa isa : supported_isas()) {
    for (int64_t d : {64, 80, 128, 13}) {
      for (int64_t context : {1, 3, 127, 1000}) {
        SCOPED_TRACE(std::string(to_string(isa)) + " d " + std::to_string(d) + " ctx " +
                     std::to_string(context));
        Cache c(KvType::kBf16, 2, d, context, 5 + context);
        Query q = make_q(2 * 4 * d, 9);
        const float scale = 1.0f / std::sqrt(float(d));
        std::vector<float> want = run(q, 8, c, scale, pool, Isa::kScalar);
        std::vector<float> got = run(q, 8, c, scale, pool, isa, opt);
        EXPECT_LE(max_abs_diff(got, want), kBf16DotAbsTol);
      }
    }
  }
}

TEST(DecodeAttention, RisingScoresRescaleEveryBlock) {
  // k_t = (t / context) * ones and q = ones: the running max grows with every token, so every
  // block rescales the accumulators; the weights concentrate on the last tokens.
  ThreadPool pool(2);
  const int64_t d = 32, context = 300;
  for (Isa isa : supported_isas()) {
    for (KvType type : {KvType::kF32, KvType::kBf16}) {
      Cache c(type, 1, d, context, 1);
      for (int64_t t = 0; t < c.capacity; ++t) {
        for (int64_t i = 0; i < d; ++i) {
          const float kv = float(t) / context;
          c.kf[1 + t * d + i] = kv;
          if (type == KvType::kBf16) {
            c.kb[1 + t * d + i] = to_bf16(kv);
            c.kf[1 + t * d + i] = from_bf16(c.kb[1 + t * d + i]);
          }
        }
      }
      Query q;
      q.buf.assign(d + 1, 1.0f);
      const float scale = 0.5f;
      std::vector<float> got = run(q, 1, c, scale, pool, isa);
      EXPECT_LE(max_abs_diff(got, reference(q.values(), 1, c, scale)), kScalarVsDoubleAbsTol)
          << to_string(isa) << " " << to_string(type);
    }
  }
}

TEST(DecodeAttention, DominantTokenSelectsItsValue) {
  // Scores 0 everywhere but token 37 of KV head 1, where q.k * scale = 40: the output of the
  // query heads of KV head 1 is v_37 (to e^-40 relative), of KV head 0 the mean of v.
  ThreadPool pool(2);
  const int64_t d = 16, context = 100;
  for (Isa isa : supported_isas()) {
    Cache c(KvType::kF32, 2, d, context, 3);
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t t = 0; t < c.capacity; ++t)
        for (int64_t i = 0; i < d; ++i) c.kf[1 + (h * c.capacity + t) * d + i] = 0;
    for (int64_t i = 0; i < d; ++i) c.kf[1 + (1 * c.capacity + 37) * d + i] = 10.0f / d;
    Query q;
    q.buf.assign(2 * 2 * d + 1, 1.0f);
    std::vector<float> got = run(q, 4, c, 4.0f, pool, isa);
    for (int64_t h = 0; h < 4; ++h) {
      for (int64_t i = 0; i < d; ++i) {
        double mean = 0;
        for (int64_t t = 0; t < context; ++t) mean += c.v(0, t, i) / context;
        const double want = h < 2 ? mean : c.v(1, 37, i);
        EXPECT_NEAR(got[h * d + i], want, 1e-5) << to_string(isa) << " head " << h;
      }
    }
  }
}

TEST(DecodeAttention, ThreadCountDoesNotChangeResultMuch) {
  const int64_t d = 128, heads = 2, group = 4, context = 5000;
  Cache c(KvType::kBf16, heads, d, context, 42);
  Query q = make_q(heads * group * d, 43);
  ThreadPool pool1(1), pool4(4);
  AttentionOptions opt;
  opt.min_tokens_per_thread = 64;
  std::vector<float> a = run(q, heads * group, c, 0.1f, pool1, best_isa(), opt);
  std::vector<float> b = run(q, heads * group, c, 0.1f, pool4, best_isa(), opt);
  EXPECT_LE(max_abs_diff(a, b), kFastVsScalarAbsTol);
}

TEST(DecodeAttention, BytesReadAndNames) {
  KvCacheView kv;
  kv.type = KvType::kBf16;
  kv.num_kv_heads = 8;
  kv.head_dim = 128;
  kv.capacity_tokens = 4096;
  kv.context_tokens = 1000;
  EXPECT_EQ(kv.bytes_read(), 2 * 8 * 1000 * 128 * 2);
  kv.type = KvType::kF32;
  EXPECT_EQ(kv.bytes_read(), 2 * 8 * 1000 * 128 * 4);
  EXPECT_EQ(to_string(KvType::kF32), "f32");
  EXPECT_EQ(to_string(KvType::kBf16), "bf16");
}

TEST(KvCapacityTokens, RoundsEachHeadUpToWholeFourKibBlocks) {
  EXPECT_EQ(kv_capacity_tokens(1000, 128, KvType::kBf16), 1008);  // 16 rows of 256 bytes
  EXPECT_EQ(kv_capacity_tokens(1024, 128, KvType::kBf16), 1024);
  EXPECT_EQ(kv_capacity_tokens(1025, 128, KvType::kF32), 1032);  // 8 rows of 512 bytes
  EXPECT_EQ(kv_capacity_tokens(5, 64, KvType::kBf16), 32);
  EXPECT_EQ(kv_capacity_tokens(1, 4096, KvType::kF32), 1);     // a row is 4 blocks already
  EXPECT_EQ(kv_capacity_tokens(300, 72, KvType::kBf16), 512);  // 144-byte rows: 256 tokens
  for (const int64_t d : {64, 72, 80, 96, 128, 256}) {
    for (const KvType type : {KvType::kBf16, KvType::kF32}) {
      const int64_t c = kv_capacity_tokens(777, d, type);
      EXPECT_GE(c, 777);
      EXPECT_EQ(c * d * (type == KvType::kF32 ? 4 : 2) % kKvHeadAlignBytes, 0) << d;
    }
  }
  // Rounding to more than kMaxKvAlignTokens is not worth the memory: left unaligned.
  EXPECT_EQ(kv_capacity_tokens(5, 13, KvType::kBf16), 5);
  EXPECT_EQ(kv_capacity_tokens(5, 100, KvType::kBf16), 5);
}

TEST(KvCapacityTokens, RejectsNonPositiveSizesWithTheValues) {
  try {
    (void)kv_capacity_tokens(0, 128, KvType::kBf16);
    ADD_FAILURE() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "kv_capacity_tokens: context_tokens 0, head_dim 128, expected both >= 1");
  }
  try {
    (void)kv_capacity_tokens(8, 0, KvType::kF32);
    ADD_FAILURE() << "expected invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "kv_capacity_tokens: context_tokens 8, head_dim 0, expected both >= 1");
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

TEST(DecodeAttention, InvalidArguments) {
  ThreadPool pool(1);
  Cache c(KvType::kF32, 2, 8, 4, 1);
  std::vector<float> q(4 * 8, 0.5f), out(4 * 8);
  auto call = [&](KvCacheView kv, int64_t q_heads, std::span<const float> qs, std::span<float> os,
                  float scale = 1.0f, Isa isa = Isa::kScalar, AttentionOptions opt = {}) {
    decode_attention(qs, q_heads, kv, scale, os, pool, isa, opt);
  };
  KvCacheView kv = c.view();
  expect_invalid([&] { call(kv, 3, q, out); },
                 "num_q_heads (3) must be a positive multiple of num_kv_heads (2)");
  expect_invalid([&] { call(kv, 0, q, out); },
                 "num_q_heads (0) must be a positive multiple of num_kv_heads (2)");
  expect_invalid([&] { call(kv, 4, std::span<const float>(q).first(31), out); },
                 "q.size() (31) != num_q_heads * head_dim (4 * 8)");
  expect_invalid([&] { call(kv, 4, q, std::span<float>(out).first(30)); },
                 "out.size() (30) != num_q_heads * head_dim (4 * 8)");
  KvCacheView bad = kv;
  bad.num_kv_heads = 0;
  expect_invalid([&] { call(bad, 4, q, out); }, "num_kv_heads must be >= 1, got 0");
  bad = kv;
  bad.head_dim = 0;
  expect_invalid([&] { call(bad, 4, q, out); }, "head_dim must be >= 1, got 0");
  bad = kv;
  bad.context_tokens = 0;
  expect_invalid([&] { call(bad, 4, q, out); },
                 "context_tokens (0) must be in [1, capacity_tokens (9)]");
  bad.context_tokens = 10;
  expect_invalid([&] { call(bad, 4, q, out); },
                 "context_tokens (10) must be in [1, capacity_tokens (9)]");
  bad = kv;
  bad.v = nullptr;
  expect_invalid([&] { call(bad, 4, q, out); }, "kv.k and kv.v must not be null");
  expect_invalid([&] { call(kv, 4, q, out, NAN); }, "scale must be finite, got nan");
  AttentionOptions opt;
  opt.min_tokens_per_thread = 0;
  expect_invalid([&] { call(kv, 4, q, out, 1.0f, Isa::kScalar, opt); },
                 "options.min_tokens_per_thread must be >= 1, got 0");
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (!isa_supported(isa)) {
      expect_invalid([&] { call(kv, 4, q, out, 1.0f, isa); },
                     "isa " + std::string(to_string(isa)) + " is not supported by this CPU");
    }
  }
}

}  // namespace
}  // namespace llmcap::kernels
