// Tests of kernels/matmul.h: packing round trips, the scalar reference against a double-precision
// product, every ISA path (and the AVX-512 fallback without BF16/VNNI) against the reference on
// odd shapes and unaligned pointers, and the error messages.
#include "kernels/matmul.h"

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

// ---- Tolerances --------------------------------------------------------------------------
// Each bound is a worst-case error for one output y[b][r], in units of
//   S = sum_c |w(r,c) x(b,c)|          (magnitude of the terms summed) and
//   A = sum_c |w(r,c)| * max_c |x(b,c)| (what per-row activation quantisation can move).

// f32 summation of n terms in any order: |error| <= (n - 1) u S with u = 2^-24 (Higham's
// gamma_{n-1} bound, to first order); +2 for the final rounding and the reference's rounding.
double f32_sum_bound(int64_t n) { return static_cast<double>(n + 2) * std::ldexp(1.0, -24); }

// bf16 paths (vdpbf16ps) round each activation to bf16 (8 significant bits, round to nearest
// even): relative error <= 2^-9 per term.
constexpr double kBf16ActivationRel = 0x1.0p-9;

// int8 / int4 dot paths quantise each activation row to int8 with scale max|x| / 127: each
// activation moves by at most half a step, max|x| / 254, so the output moves by <= A / 254.
// (The scale itself and the f32 rescaling add a few f32 roundings, covered by 8 u S.)
constexpr double kInt8ActivationStep = 1.0 / 254.0;

// Whether matmul on `isa` quantises the activations of `format` to int8: AVX2 always does for
// int8 and int4 (vpmaddubsw), AVX-512 where VNNI is there and allowed.
bool quantises_activations(Isa isa, bool extensions, WeightFormat format) {
  if (format != WeightFormat::kInt8 && format != WeightFormat::kInt4) return false;
  return isa == Isa::kAvx2 || (isa == Isa::kAvx512 && extensions && cpu_features().avx512_vnni);
}

struct Path {
  Isa isa;
  bool extensions;  // AVX512_BF16 / VNNI allowed (only meaningful for kAvx512)
  std::string name() const {
    return std::string(to_string(isa)) + (isa == Isa::kAvx512 && !extensions ? "_noext" : "");
  }
};

std::vector<Path> all_paths() {
  std::vector<Path> paths;
  for (Isa isa : supported_isas()) {
    paths.push_back({isa, true});
    if (isa == Isa::kAvx512) paths.push_back({isa, false});
  }
  return paths;
}

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

std::vector<float> random_values(int64_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (auto& x : v) x = dist(gen);
  return v;
}

// y[b][r] = sum_c at(r, c) x[b][c] in double, plus the S and A magnitudes above.
struct Exact {
  std::vector<double> y, s, a;
};
Exact exact_product(const PackedWeights& w, const float* x, int64_t batch) {
  const int64_t rows = w.rows(), cols = w.cols();
  Exact e;
  e.y.assign(static_cast<size_t>(batch * rows), 0.0);
  e.s = e.a = e.y;
  std::vector<double> wr(static_cast<size_t>(cols));
  for (int64_t r = 0; r < rows; ++r) {
    double wabs = 0.0;
    for (int64_t c = 0; c < cols; ++c) {
      wr[static_cast<size_t>(c)] = w.at(r, c);
      wabs += std::fabs(wr[static_cast<size_t>(c)]);
    }
    for (int64_t b = 0; b < batch; ++b) {
      double sum = 0.0, mag = 0.0, xmax = 0.0;
      for (int64_t c = 0; c < cols; ++c) {
        const double xv = x[b * cols + c];
        sum += wr[static_cast<size_t>(c)] * xv;
        mag += std::fabs(wr[static_cast<size_t>(c)] * xv);
        xmax = std::max(xmax, std::fabs(xv));
      }
      const auto i = static_cast<size_t>(b * rows + r);
      e.y[i] = sum;
      e.s[i] = mag;
      e.a[i] = wabs * xmax;
    }
  }
  return e;
}

// ---- Formats and packing -----------------------------------------------------------------

TEST(WeightFormat, NamesRoundTrip) {
  for (WeightFormat f :
       {WeightFormat::kF32, WeightFormat::kBf16, WeightFormat::kInt8, WeightFormat::kInt4}) {
    EXPECT_EQ(parse_weight_format(to_string(f)), f);
  }
  EXPECT_EQ(to_string(WeightFormat::kInt4), "int4");
}

TEST(WeightFormat, UnknownNameIsRejected) {
  try {
    parse_weight_format("fp8");
    FAIL() << "expected std::invalid_argument";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(), "unknown weight format \"fp8\"; known: f32, bf16, int8, int4");
  }
}

TEST(PackedWeights, F32IsExact) {
  const auto w = random_values(7 * 37, 1);
  const auto p = PackedWeights::pack(WeightFormat::kF32, w, 7, 37);
  for (int64_t r = 0; r < 7; ++r)
    for (int64_t c = 0; c < 37; ++c) EXPECT_EQ(p.at(r, c), w[static_cast<size_t>(r * 37 + c)]);
  EXPECT_EQ(p.bytes(), 7 * 37 * 4);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p.data()) % 64, 0u);
}

TEST(PackedWeights, Bf16RoundsToNearestEven) {
  const std::vector<float> w = {
      1.0f,
      1.0f + 0x1.0p-8f,      // halfway between 1 and 1 + 2^-7: ties to even -> 1
      1.0f + 3 * 0x1.0p-8f,  // halfway between 1 + 2^-7 (odd) and 1 + 2^-6 (even) -> 1 + 2^-6
      1.0f + 0x1.8p-8f,      // above halfway -> 1 + 2^-7
      -2.5f,
      0.0f,
  };
  const auto p = PackedWeights::pack(WeightFormat::kBf16, w, 1, 6);
  EXPECT_EQ(p.at(0, 0), 1.0f);
  EXPECT_EQ(p.at(0, 1), 1.0f);
  EXPECT_EQ(p.at(0, 2), 1.0f + 0x1.0p-6f);
  EXPECT_EQ(p.at(0, 3), 1.0f + 0x1.0p-7f);
  EXPECT_EQ(p.at(0, 4), -2.5f);
  EXPECT_EQ(p.at(0, 5), 0.0f);
  const auto* raw = static_cast<const uint16_t*>(p.data());
  EXPECT_EQ(raw[0], 0x3f80);
  EXPECT_EQ(raw[2], 0x3f82);
  EXPECT_EQ(p.bytes(), 6 * 2);
}

TEST(PackedWeights, Int8PerRowScale) {
  const std::vector<float> w = {-2.0f, 0.9f, 0.0f, 0.3f,   // row 0: scale 2/127
                                0.0f,  0.0f, 0.0f, 0.0f};  // row 1: all zero -> scale 0
  const auto p = PackedWeights::pack(WeightFormat::kInt8, w, 2, 4);
  ASSERT_EQ(p.row_scales().size(), 2u);
  EXPECT_FLOAT_EQ(p.row_scales()[0], 2.0f / 127.0f);
  EXPECT_EQ(p.row_scales()[1], 0.0f);
  const auto* q = static_cast<const int8_t*>(p.data());
  EXPECT_EQ(q[0], -127);
  EXPECT_EQ(q[1], 57);  // 0.9 * 63.5 = 57.15
  EXPECT_EQ(q[2], 0);
  EXPECT_EQ(q[3], 19);  // 0.3 * 63.5 = 19.05
  for (int c = 4; c < 8; ++c) EXPECT_EQ(q[c], 0);
  EXPECT_FLOAT_EQ(p.at(0, 1), 57.0f * 2.0f / 127.0f);
  EXPECT_EQ(p.at(1, 3), 0.0f);
  ASSERT_EQ(p.row_sums().size(), 2u);
  EXPECT_EQ(p.row_sums()[0], -127 + 57 + 0 + 19);
  EXPECT_EQ(p.row_sums()[1], 0);
  // One 16-row tile of one 4-column group (rows padded with zeros), f32 scales, int32 sums.
  EXPECT_EQ(p.bytes(), 16 * 4 + 2 * 4 + 2 * 4);
}

TEST(PackedWeights, Int8TilesOf16RowsAndGroupsOf4ColumnsWithZeroPadding) {
  // 17 x 6: two tiles of 16 rows (the second holds one real row), two groups of 4 columns
  // (the second holds 2 real columns). w[r][c] = (r * 6 + c + 1) for r < 17, all <= 102, each
  // row's max is its last column, so q = round(127 * w / max).
  constexpr int64_t kRows = 17, kCols = 6;
  std::vector<float> w(kRows * kCols);
  for (int64_t i = 0; i < kRows * kCols; ++i) w[static_cast<size_t>(i)] = static_cast<float>(i + 1);
  const auto p = PackedWeights::pack(WeightFormat::kInt8, w, kRows, kCols);
  EXPECT_EQ(p.bytes(), 32 * 8 + kRows * 4 + kRows * 4);
  const auto* raw = static_cast<const int8_t*>(p.data());
  EXPECT_EQ(int8_offset(0, 0, kCols), 0);
  EXPECT_EQ(int8_offset(1, 0, kCols), 4);     // next row: next 4 bytes of the group
  EXPECT_EQ(int8_offset(0, 4, kCols), 64);    // next group of 4 columns
  EXPECT_EQ(int8_offset(16, 5, kCols), 193);  // tile 1 (2 groups of 64 bytes on), group 1
  EXPECT_EQ(raw[int8_offset(0, 5, kCols)], 127);
  EXPECT_EQ(raw[int8_offset(16, 5, kCols)], 127);
  EXPECT_EQ(raw[int8_offset(16, 0, kCols)], 121);  // 97 / 102 * 127 = 120.8
  for (int64_t c = 0; c < kCols; ++c) {
    for (int64_t r = 0; r < kRows; ++r) {
      const float scale = static_cast<float>(r * kCols + kCols) / 127.0f;  // as the packer does
      const float expect = std::round(static_cast<float>(r * kCols + c + 1) / scale);
      EXPECT_EQ(raw[int8_offset(r, c, kCols)], static_cast<int8_t>(expect)) << r << "," << c;
    }
  }
  // Padding: columns 6, 7 of every row and rows 17..31 of tile 1 are zero.
  for (int64_t r = 0; r < 32; ++r) {
    for (int64_t c = 0; c < 8; ++c) {
      if (r < kRows && c < kCols) continue;
      EXPECT_EQ(raw[int8_offset(r, c, kCols)], 0) << r << "," << c;
    }
  }
}

TEST(PackedWeights, Int4BlockLayoutIsExact) {
  // Block 0: integers -7..7 (max 7 -> scale 1.0); block 1: halves (max 3.5 -> scale 0.5), with
  // 0.3 (rounds to 0.5 * 1) and -0.2 (rounds to 0).
  std::vector<float> w(64);
  for (int i = 0; i < 32; ++i) w[static_cast<size_t>(i)] = static_cast<float>(i % 15 - 7);
  for (int i = 0; i < 32; ++i)
    w[static_cast<size_t>(32 + i)] = 0.5f * static_cast<float>(i % 15 - 7);
  w[32 + 5] = 0.3f;
  w[32 + 6] = -0.2f;
  const auto p = PackedWeights::pack(WeightFormat::kInt4, w, 1, 64);
  ASSERT_EQ(p.bytes(), 576);  // one 16-row tile of one 64-column super-block
  const auto* raw = static_cast<const uint8_t*>(p.data());
  // Scales: block 0 of row 0 at byte 0, block 1 at byte 32; rows 1..15 (padding) zero.
  uint16_t s0, s1;
  std::memcpy(&s0, raw, 2);
  std::memcpy(&s1, raw + 32, 2);
  EXPECT_EQ(s0, 0x3f80);  // 1.0
  EXPECT_EQ(s1, 0x3f00);  // 0.5
  // Block 0, row 0: group g (bytes 64 + 64 g .. +4) holds columns 4g..4g+3 (low nibbles) and
  // 16 + 4g.. (high nibbles).
  for (int g = 0; g < 4; ++g) {
    for (int k = 0; k < 4; ++k) {
      const int c = 4 * g + k;
      const int lo = c % 15 - 7 + 8, hi = (c + 16) % 15 - 7 + 8;
      EXPECT_EQ(raw[64 + 64 * g + k], lo | (hi << 4)) << "group " << g << " byte " << k;
    }
  }
  // Block 1 (groups 4..7): column 32 + 5 is group 5, byte 1; 32 + 6 is group 5, byte 2.
  EXPECT_EQ(raw[64 + 64 * 5 + 1] & 0x0f, 8 + 1);
  EXPECT_EQ(raw[64 + 64 * 5 + 2] & 0x0f, 8 + 0);
  EXPECT_EQ(int4_location(0, 37, 64).byte, 64 + 64 * 5 + 1);
  EXPECT_EQ(int4_location(0, 37 + 16, 64).shift, 4);
  EXPECT_EQ(int4_location(17, 40, 128).byte, 2 * 576 + 64 + 64 * 6 + 4 + 0);
  EXPECT_EQ(int4_location(17, 40, 128).scale_byte, 2 * 576 + 32 + 2);
  for (int r = 1; r < 16; ++r) {
    for (int c = 0; c < 64; ++c) {
      const Int4Location at = int4_location(r, c, 64);
      EXPECT_EQ((raw[at.byte] >> at.shift) & 0x0f, 0) << "padding row " << r;
    }
  }
  for (int c = 0; c < 64; ++c) {
    float expected = w[static_cast<size_t>(c)];
    if (c == 37) expected = 0.5f;
    if (c == 38) expected = 0.0f;
    EXPECT_EQ(p.at(0, c), expected) << "column " << c;
  }
}

TEST(PackedWeights, Int4ZeroBlockAndError) {
  std::vector<float> w = random_values(3 * 96, 5);
  for (int c = 32; c < 64; ++c) w[static_cast<size_t>(96 + c)] = 0.0f;  // row 1, block 1
  const auto p = PackedWeights::pack(WeightFormat::kInt4, w, 3, 96);
  for (int64_t r = 0; r < 3; ++r) {
    for (int64_t c = 0; c < 96; ++c) {
      const float v = w[static_cast<size_t>(r * 96 + c)];
      // Error <= half a step of the block's scale (max|w| / 7, rounded to bf16: +2^-8).
      float max_abs = 0.0f;
      for (int i = 0; i < 32; ++i)
        max_abs = std::max(max_abs, std::fabs(w[static_cast<size_t>(r * 96 + c / 32 * 32 + i)]));
      EXPECT_LE(std::fabs(p.at(r, c) - v), 0.5f * max_abs / 7.0f * (1.0f + 0x1.0p-8f) + 1e-7f);
    }
  }
  for (int c = 32; c < 64; ++c) EXPECT_EQ(p.at(1, c), 0.0f);
}

TEST(PackedWeights, RandomIsDeterministicAndInRange) {
  for (WeightFormat f :
       {WeightFormat::kF32, WeightFormat::kBf16, WeightFormat::kInt8, WeightFormat::kInt4}) {
    const auto a = PackedWeights::random(f, 5, 64, 42);
    const auto b = PackedWeights::random(f, 5, 64, 42);
    const auto c = PackedWeights::random(f, 5, 64, 43);
    int differ = 0;
    for (int64_t r = 0; r < 5; ++r) {
      for (int64_t k = 0; k < 64; ++k) {
        EXPECT_EQ(a.at(r, k), b.at(r, k));
        EXPECT_GE(a.at(r, k), -1.0f);
        EXPECT_LE(a.at(r, k), 1.0f);
        differ += a.at(r, k) != c.at(r, k);
      }
    }
    EXPECT_GT(differ, 200) << to_string(f);
  }
}

TEST(PackedWeights, Bytes) {
  EXPECT_EQ(PackedWeights::random(WeightFormat::kF32, 3, 64, 1).bytes(), 3 * 64 * 4);
  EXPECT_EQ(PackedWeights::random(WeightFormat::kBf16, 3, 64, 1).bytes(), 3 * 64 * 2);
  // int8: a 16-row tile (rows padded), f32 scales and int32 row sums.
  EXPECT_EQ(PackedWeights::random(WeightFormat::kInt8, 3, 64, 1).bytes(), 16 * 64 + 3 * 4 + 3 * 4);
  EXPECT_EQ(PackedWeights::random(WeightFormat::kInt4, 3, 64, 1).bytes(), 576);
  EXPECT_EQ(PackedWeights::random(WeightFormat::kInt4, 17, 96, 1).bytes(), 2 * 2 * 576);
  for (WeightFormat f :
       {WeightFormat::kF32, WeightFormat::kBf16, WeightFormat::kInt8, WeightFormat::kInt4}) {
    EXPECT_EQ(PackedWeights::bytes_for(f, 33, 160), PackedWeights::random(f, 33, 160, 1).bytes())
        << to_string(f);
  }
}

template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no std::invalid_argument)";
}

TEST(PackedWeights, ErrorPaths) {
  const std::vector<float> w(100);
  EXPECT_EQ(error_of([&] { PackedWeights::pack(WeightFormat::kF32, w, 2, 64); }),
            "PackedWeights::pack: w has 100 elements, expected rows 2 x cols 64 = 128");
  EXPECT_EQ(error_of([&] { PackedWeights::pack(WeightFormat::kF32, w, 0, 100); }),
            "PackedWeights: rows and cols must be >= 1, got rows 0 x cols 100");
  EXPECT_EQ(error_of([&] { PackedWeights::random(WeightFormat::kBf16, 4, -1, 1); }),
            "PackedWeights: rows and cols must be >= 1, got rows 4 x cols -1");
  EXPECT_EQ(error_of([&] { PackedWeights::pack(WeightFormat::kInt4, w, 2, 50); }),
            "PackedWeights: int4 needs cols a multiple of 32, got cols 50");
  EXPECT_EQ(error_of([&] { PackedWeights::random(WeightFormat::kInt4, 2, 48, 1); }),
            "PackedWeights: int4 needs cols a multiple of 32, got cols 48");
  const auto p = PackedWeights::random(WeightFormat::kF32, 2, 3, 1);
  EXPECT_THROW(p.at(2, 0), std::out_of_range);
  EXPECT_THROW(p.at(0, -1), std::out_of_range);
}

TEST(Matmul, ErrorPaths) {
  ThreadPool pool(2);
  const auto w = PackedWeights::random(WeightFormat::kF32, 3, 64, 1);
  std::vector<float> x(128), y(6);
  EXPECT_EQ(error_of([&] { matmul(w, std::span(x).first(100), 2, y, pool, Isa::kScalar); }),
            "matmul: x has 100 elements, expected batch 2 x cols 64 = 128");
  EXPECT_EQ(error_of([&] { matmul(w, x, 2, std::span(y).first(5), pool, Isa::kScalar); }),
            "matmul: y has 5 elements, expected batch 2 x rows 3 = 6");
  EXPECT_EQ(error_of([&] { matmul(w, std::span(x).first(0), 0, std::span(y).first(0), pool); }),
            "matmul: batch must be >= 1, got 0");
  EXPECT_EQ(error_of([&] { matmul(w, x, 2, y, pool, static_cast<Isa>(7)); }),
            "matmul: unknown isa #7");
  for (Isa isa : {Isa::kAvx2, Isa::kAvx512}) {
    if (isa_supported(isa)) continue;
    EXPECT_EQ(error_of([&] { matmul(w, x, 2, y, pool, isa); }),
              "matmul: isa " + std::string(to_string(isa)) + " is not supported by this CPU");
  }
}

// ---- The reference ------------------------------------------------------------------------

TEST(Matmul, ScalarReferenceMatchesDoubleProduct) {
  ThreadPool pool(3);
  for (WeightFormat f :
       {WeightFormat::kF32, WeightFormat::kBf16, WeightFormat::kInt8, WeightFormat::kInt4}) {
    const int64_t rows = 33, cols = f == WeightFormat::kInt4 ? 160 : 129, batch = 5;
    const auto w = PackedWeights::random(f, rows, cols, 7);
    const auto x = random_values(batch * cols, 9, -3.0f, 3.0f);
    std::vector<float> y(static_cast<size_t>(batch * rows));
    matmul(w, x, batch, y, pool, Isa::kScalar);
    const Exact e = exact_product(w, x.data(), batch);
    for (size_t i = 0; i < y.size(); ++i) {
      // The reference sums in double and rounds once: within one f32 rounding of the exact value.
      EXPECT_NEAR(y[i], e.y[i], std::ldexp(std::fabs(e.y[i]), -24) + 1e-30)
          << to_string(f) << " output " << i;
    }
  }
}

TEST(Matmul, ScalarReferenceHandCase) {
  // [1 2; 3 4] x [1 1] and [2 -1]: y = [3 7; 0 2]
  ThreadPool pool(1);
  const std::vector<float> wv = {1, 2, 3, 4};
  const auto w = PackedWeights::pack(WeightFormat::kF32, wv, 2, 2);
  const std::vector<float> x = {1, 1, 2, -1};
  std::vector<float> y(4);
  matmul(w, x, 2, y, pool, Isa::kScalar);
  EXPECT_EQ(y, (std::vector<float>{3, 7, 0, 2}));
}

// ---- Every path against the reference -----------------------------------------------------

struct Case {
  WeightFormat format;
  Path path;
};

class MatmulPathTest : public ::testing::TestWithParam<Case> {};

TEST_P(MatmulPathTest, MatchesReferenceOnOddShapes) {
  const Case& k = GetParam();
  ExtensionsGuard guard(k.path.extensions);
  ThreadPool pool(3);
  const bool int4 = k.format == WeightFormat::kInt4;
  const std::vector<int64_t> rows_list = {1, 7, 33, 257};
  const std::vector<int64_t> cols_list =
      int4 ? std::vector<int64_t>{32, 96, 1056} : std::vector<int64_t>{37, 129, 1000};
  const std::vector<int64_t> batch_list = {1, 3, 16, 64, 65};
  uint32_t seed = 100;
  for (int64_t rows : rows_list) {
    for (int64_t cols : cols_list) {
      for (int64_t batch : batch_list) {
        if (rows == 257 && cols > 200 && batch > 16) continue;  // keep the scalar checks quick
        const auto w = PackedWeights::random(k.format, rows, cols, ++seed);
        // Offset by one float: activations and outputs not 16/32/64-byte aligned.
        const auto xbuf = random_values(batch * cols + 1, ++seed, -2.0f, 2.0f);
        const std::span<const float> x(xbuf.data() + 1, static_cast<size_t>(batch * cols));
        std::vector<float> ybuf(static_cast<size_t>(batch * rows + 1), -7.0f);
        const std::span<float> y(ybuf.data() + 1, static_cast<size_t>(batch * rows));
        matmul(w, x, batch, y, pool, k.path.isa);
        EXPECT_EQ(ybuf[0], -7.0f) << "wrote before y";
        std::vector<float> ref(static_cast<size_t>(batch * rows));
        matmul(w, x, batch, ref, pool, Isa::kScalar);
        const Exact e = exact_product(w, x.data(), batch);
        const bool quantised_acts = quantises_activations(k.path.isa, k.path.extensions, k.format);
        const bool bf16_acts = k.path.isa == Isa::kAvx512 && k.path.extensions &&
                               k.format == WeightFormat::kBf16 && cpu_features().avx512_bf16;
        int failures = 0;
        for (size_t i = 0; i < y.size(); ++i) {
          double tol = (f32_sum_bound(cols) + 8 * std::ldexp(1.0, -24)) * e.s[i];
          if (bf16_acts) tol += kBf16ActivationRel * e.s[i];
          if (quantised_acts) tol += kInt8ActivationStep * e.a[i];
          tol += 1e-30;
          if (std::fabs(y[i] - ref[i]) > tol && ++failures <= 3) {
            ADD_FAILURE() << to_string(k.format) << " " << k.path.name() << " rows " << rows
                          << " cols " << cols << " batch " << batch << " output " << i << ": "
                          << y[i] << " vs reference " << ref[i] << " (tolerance " << tol << ")";
          }
        }
      }
    }
  }
}

// Batch 1 of int8 and int4 takes 16-row tiles four at a time (four weight streams per thread)
// and the tiles left over one at a time: tile counts of 4 (the last one partial), 9 (two groups
// and one left) and an int8 row longer than one int32-exact column chunk (32,768 columns), on
// one thread so that the groups are as counted. bf16 at batch 1 takes rows 8 at a time on the
// AVX2 path, then 4, then one: 61 rows are 7 x 8 + 4 + 1, 139 rows 17 x 8 + 3 x 1; on the
// AVX-512 path 8 at a time, then one: 7 x 8 + 5 x 1 and 17 x 8 + 3 x 1.
TEST(Matmul, BatchOneTileGroupsMatchTheReference) {
  ThreadPool pool(1);
  struct Shape {
    WeightFormat format;
    int64_t rows, cols;
  };
  for (const Shape& sh :
       {Shape{WeightFormat::kInt8, 61, 1000}, Shape{WeightFormat::kInt8, 139, 129},
        Shape{WeightFormat::kInt8, 70, 32805}, Shape{WeightFormat::kInt4, 61, 1056},
        Shape{WeightFormat::kInt4, 139, 96}, Shape{WeightFormat::kBf16, 61, 1000},
        Shape{WeightFormat::kBf16, 139, 129}}) {
    const auto w = PackedWeights::random(sh.format, sh.rows, sh.cols, 11);
    const auto x = random_values(sh.cols, 12, -2.0f, 2.0f);
    std::vector<float> ref(static_cast<size_t>(sh.rows));
    matmul(w, x, 1, ref, pool, Isa::kScalar);
    const Exact e = exact_product(w, x.data(), 1);
    // The best path, and the AVX2 one too where the best is AVX-512.
    std::vector<Isa> isas = {best_isa()};
    if (best_isa() != Isa::kAvx2 && isa_supported(Isa::kAvx2)) isas.push_back(Isa::kAvx2);
    for (const Isa isa : isas) {
      std::vector<float> y(ref.size());
      matmul(w, x, 1, y, pool, isa);
      const bool quantised_acts = quantises_activations(isa, true, sh.format);
      const bool bf16_acts =
          isa == Isa::kAvx512 && sh.format == WeightFormat::kBf16 && cpu_features().avx512_bf16;
      for (size_t i = 0; i < y.size(); ++i) {
        double tol = (f32_sum_bound(sh.cols) + 8 * std::ldexp(1.0, -24)) * e.s[i] + 1e-30;
        if (quantised_acts) tol += kInt8ActivationStep * e.a[i];
        if (bf16_acts) tol += kBf16ActivationRel * e.s[i];
        ASSERT_NEAR(y[i], ref[i], tol) << to_string(sh.format) << " " << sh.rows << "x" << sh.cols
                                       << " isa " << to_string(isa) << " output " << i;
      }
    }
  }
}

// int8 at batch >= 2 on the best path (AVX-512 VNNI: s8 activations regrouped by 4 columns per
// slice of 16 rows against u8 weights w + 128, 128 x each activation row's sum taken off at the
// end; AVX2: |w| x activations with w's sign, slices of 4 rows over column chunks of 1,024 once
// the batch is over one slice): odd batches, slices with a partial one, rows over two such
// chunks with a partial third (2,100 columns at batch 6), and rows longer than one int32-exact
// column chunk (32,768 columns), also with a second slice of 16 (batch 18).
TEST(Matmul, Int8BatchesMatchTheReference) {
  ThreadPool pool(2);
  struct Shape {
    int64_t rows, cols, batch;
  };
  for (const Shape& sh : {Shape{61, 1000, 2}, Shape{139, 129, 5}, Shape{33, 515, 17},
                          Shape{35, 2100, 6}, Shape{70, 32805, 3}, Shape{20, 32805, 18}}) {
    const auto w = PackedWeights::random(WeightFormat::kInt8, sh.rows, sh.cols, 21);
    // Activations with a non-zero mean, so that the 128 x sum correction matters.
    const auto x = random_values(sh.batch * sh.cols, 22, -1.0f, 3.0f);
    std::vector<float> y(static_cast<size_t>(sh.batch * sh.rows)), ref(y.size());
    matmul(w, x, sh.batch, y, pool);
    matmul(w, x, sh.batch, ref, pool, Isa::kScalar);
    const Exact e = exact_product(w, x.data(), sh.batch);
    const bool quantised_acts = quantises_activations(best_isa(), true, WeightFormat::kInt8);
    for (size_t i = 0; i < y.size(); ++i) {
      double tol = (f32_sum_bound(sh.cols) + 8 * std::ldexp(1.0, -24)) * e.s[i] + 1e-30;
      if (quantised_acts) tol += kInt8ActivationStep * e.a[i];
      ASSERT_NEAR(y[i], ref[i], tol)
          << sh.rows << "x" << sh.cols << " batch " << sh.batch << " output " << i;
    }
  }
}

// The activation-quantising paths must still be close in relative terms on typical data (the
// bounds above are worst cases): 1% of the typical output magnitude.
TEST_P(MatmulPathTest, TypicalErrorIsSmall) {
  const Case& k = GetParam();
  ExtensionsGuard guard(k.path.extensions);
  ThreadPool pool(2);
  const int64_t rows = 64, cols = 1024, batch = 8;
  const auto w = PackedWeights::random(k.format, rows, cols, 3);
  const auto x = random_values(batch * cols, 4);
  std::vector<float> y(static_cast<size_t>(batch * rows)), ref(y.size());
  matmul(w, x, batch, y, pool, k.path.isa);
  matmul(w, x, batch, ref, pool, Isa::kScalar);
  double err2 = 0.0, ref2 = 0.0;
  for (size_t i = 0; i < y.size(); ++i) {
    err2 += (y[i] - ref[i]) * static_cast<double>(y[i] - ref[i]);
    ref2 += static_cast<double>(ref[i]) * ref[i];
  }
  EXPECT_LT(std::sqrt(err2 / ref2), 0.01);
  EXPECT_GT(ref2, 1.0);  // the product is not trivially zero
}

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (WeightFormat f :
       {WeightFormat::kF32, WeightFormat::kBf16, WeightFormat::kInt8, WeightFormat::kInt4}) {
    for (const Path& p : all_paths()) cases.push_back({f, p});
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(AllFormatsAndPaths, MatmulPathTest, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(to_string(info.param.format)) + "_" +
                                  info.param.path.name();
                         });

// A batch over 64 is processed in slices: the result must not depend on the slicing.
TEST(Matmul, LargeBatchEqualsRowByRow) {
  ThreadPool pool(2);
  for (Isa isa : supported_isas()) {
    const auto w = PackedWeights::random(WeightFormat::kInt8, 9, 256, 11);
    const int64_t batch = 130;
    const auto x = random_values(batch * 256, 12);
    std::vector<float> y(static_cast<size_t>(batch * 9)), one(9);
    matmul(w, x, batch, y, pool, isa);
    for (int64_t b = 0; b < batch; ++b) {
      matmul(w, std::span(x).subspan(static_cast<size_t>(b * 256), 256), 1, one, pool, isa);
      for (int r = 0; r < 9; ++r) {
        // Same activation row, same per-row quantisation, the same exact integer sum (AVX-512
        // forms it as (xq + 128) . w - 128 sum w at batch 1 and xq . (w + 128) - 128 sum xq
        // above, equal in f32 while the int32 sums stay below 2^24, as at 256 columns).
        EXPECT_FLOAT_EQ(y[static_cast<size_t>(b * 9 + r)], one[static_cast<size_t>(r)])
            << to_string(isa) << " b " << b << " r " << r;
      }
    }
  }
}

TEST(PackedWeights, DequantiseRowMatchesElementAccessAndChecksItsArguments) {
  for (WeightFormat f :
       {WeightFormat::kF32, WeightFormat::kBf16, WeightFormat::kInt8, WeightFormat::kInt4}) {
    const auto p = PackedWeights::random(f, 19, 96, 7);
    std::vector<float> row(96);
    for (int64_t r : {0, 15, 16, 18}) {
      p.dequantise_row(r, row);
      for (int64_t c = 0; c < 96; ++c) {
        ASSERT_EQ(row[static_cast<size_t>(c)], p.at(r, c)) << to_string(f) << " " << r << "," << c;
      }
    }
    std::vector<float> short_row(95);
    EXPECT_THROW(p.dequantise_row(0, short_row), std::invalid_argument);
    EXPECT_THROW(p.dequantise_row(19, row), std::invalid_argument);
  }
}

}  // namespace
}  // namespace llmcap::kernels
