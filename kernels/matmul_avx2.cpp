// AVX2 paths of matmul(). Compiled with -mavx2 -mfma -mf16c; only reached when cpu_features()
// reports AVX2 + FMA + F16C.
//
// All formats use f32 FMAs: f32 weights are read in place; bf16, int8 and int4 weights are
// dequantised, once per call, into an f32 tile of kR rows x kc columns that stays in L1 while
// the batch is taken kBT activation rows at a time (weights reused from registers / L1 for all
// activation rows; partial sums of later column chunks are added into y). AVX-VNNI is not used.
//
// Only anonymous-namespace code and raw pointers here (see matmul_avx512.cpp).
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "kernels/matmul.h"
#include "kernels/scratch.h"

namespace llmcap::kernels::detail {
namespace {

constexpr int kR = 4;   // output rows per tile
constexpr int kBT = 2;  // activation rows per micro-kernel call (8 accumulators of 16 ymm)

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

thread_local ScratchBuffer t_act;
thread_local ScratchBuffer t_tile;

struct Ctx {
  const PackedWeights* w = nullptr;
  int64_t rows = 0, cols = 0, batch = 0;
  float* y = nullptr;
  const float* act = nullptr;  // batch x lda f32, zero padded
  int64_t lda = 0;             // multiple of 64
  int64_t kc = 0;              // column chunk, multiple of 32
};

inline __m256i tail_mask(int64_t n) {  // first min(n, 8) lanes set
  alignas(32) static const int32_t table[16] = {-1, -1, -1, -1, -1, -1, -1, -1,
                                                0,  0,  0,  0,  0,  0,  0,  0};
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(table + 8 - std::min<int64_t>(n, 8)));
}

inline float hsum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

template <int R, int BT>
struct MkF32 {
  static void run(const float* w, int64_t ldw, const float* a, int64_t lda, int64_t k, float* out) {
    __m256 acc[R][BT];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) acc[r][b] = _mm256_setzero_ps();
    int64_t c = 0;
    for (; c + 8 <= k; c += 8) {
      __m256 wv[R];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) wv[r] = _mm256_loadu_ps(w + r * ldw + c);
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) {
        const __m256 av = _mm256_load_ps(a + b * lda + c);
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) acc[r][b] = _mm256_fmadd_ps(wv[r], av, acc[r][b]);
      }
    }
    if (c < k) {
      const __m256i m = tail_mask(k - c);
      __m256 wv[R];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) wv[r] = _mm256_maskload_ps(w + r * ldw + c, m);
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) {
        const __m256 av = _mm256_load_ps(a + b * lda + c);  // zero padded
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) acc[r][b] = _mm256_fmadd_ps(wv[r], av, acc[r][b]);
      }
    }
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) out[b * R + r] = hsum(acc[r][b]);
  }
};

template <int R>
void call_bt(int bt, const float* w, int64_t ldw, const float* a, int64_t lda, int64_t k,
             float* out) {
  static_assert(kBT == 2);
  if (bt == 1) {
    MkF32<R, 1>::run(w, ldw, a, lda, k, out);
  } else {
    MkF32<R, 2>::run(w, ldw, a, lda, k, out);
  }
}

// Columns [k0, k0 + kl) of row r as f32 into dst (kl rounded up to 8 written; kl % 8 tail of
// bf16 / int8 read with a scalar loop).
void dequant_segment(const PackedWeights& w, int64_t r, int64_t k0, int64_t kl, float* dst) {
  const int64_t cols = w.cols();
  switch (w.format()) {
    case WeightFormat::kF32:
      break;  // not used: f32 weights are read in place
    case WeightFormat::kBf16: {
      const uint16_t* src = static_cast<const uint16_t*>(w.data()) + r * cols + k0;
      int64_t c = 0;
      for (; c + 8 <= kl; c += 8) {
        const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + c));
        _mm256_store_ps(dst + c,
                        _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16)));
      }
      for (; c < kl; ++c) {
        const uint32_t u = static_cast<uint32_t>(src[c]) << 16;
        std::memcpy(dst + c, &u, 4);
      }
      break;
    }
    case WeightFormat::kInt8: {
      // Tiles of 16 rows x 4-column groups of 64 bytes (matmul.h): the 4 weights of a group
      // are adjacent, groups 64 bytes apart. k0 is a multiple of 4 (kc is).
      const int64_t groups = (cols + 3) / 4;
      const int8_t* src = static_cast<const int8_t*>(w.data()) + (r / 16) * groups * 64 +
                          (r % 16) * 4 + (k0 / 4) * 64;
      const float s = w.row_scales()[static_cast<size_t>(r)];
      const __m256 scale = _mm256_set1_ps(s);
      int64_t c = 0;
      for (; c + 8 <= kl; c += 8) {
        int32_t g0, g1;
        std::memcpy(&g0, src + (c / 4) * 64, 4);
        std::memcpy(&g1, src + (c / 4 + 1) * 64, 4);
        const __m128i b = _mm_setr_epi32(g0, g1, 0, 0);
        _mm256_store_ps(dst + c, _mm256_mul_ps(scale, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(b))));
      }
      for (; c < kl; ++c) dst[c] = s * static_cast<float>(src[(c / 4) * 64 + c % 4]);
      break;
    }
    case WeightFormat::kInt4: {
      // 16-row tiles of 576-byte super-blocks (matmul.h int4_location): block j's scale at
      // 32 (j % 2) + 2 (r % 16), its 16 nibble bytes as 4 bytes of row r in each of 4 groups
      // 64 bytes apart, which concatenated are the Q4_0 byte order (low nibbles = columns
      // 0..15 of the block, high nibbles = 16..31). k0 is a multiple of 32 (kc is).
      const auto* base = static_cast<const uint8_t*>(w.data()) +
                         (r / 16) * ((cols + 63) / 64) * 576 + (r % 16) * 4;
      const auto* scales = static_cast<const uint8_t*>(w.data()) +
                           (r / 16) * ((cols + 63) / 64) * 576 + (r % 16) * 2;
      const __m128i low4 = _mm_set1_epi8(0x0f);
      const __m256 eight = _mm256_set1_ps(8.0f);
      for (int64_t j = 0; j < kl / 32; ++j) {
        const int64_t blk = k0 / 32 + j;
        const int64_t sb = (blk / 2) * 576, h = blk % 2;
        uint16_t scale_bf16;
        std::memcpy(&scale_bf16, scales + sb + 32 * h, 2);
        const __m256 scale =
            _mm256_castsi256_ps(_mm256_set1_epi32(static_cast<int32_t>(scale_bf16) << 16));
        int32_t g[4];
        for (int q = 0; q < 4; ++q) std::memcpy(&g[q], base + sb + 64 + (4 * h + q) * 64, 4);
        const __m128i n = _mm_setr_epi32(g[0], g[1], g[2], g[3]);
        const __m128i half[2] = {_mm_and_si128(n, low4), _mm_and_si128(_mm_srli_epi16(n, 4), low4)};
        for (int h = 0; h < 2; ++h) {
          const __m128i v = half[h];
          const __m256 f0 = _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(v)), eight);
          const __m256 f1 =
              _mm256_sub_ps(_mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(v, 8))), eight);
          _mm256_store_ps(dst + j * 32 + h * 16, _mm256_mul_ps(scale, f0));
          _mm256_store_ps(dst + j * 32 + h * 16 + 8, _mm256_mul_ps(scale, f1));
        }
      }
      break;
    }
  }
}

inline void store(const Ctx& c, int64_t r0, int64_t b0, int bt, const float* out, int R,
                  bool first) {
  for (int b = 0; b < bt; ++b) {
    float* yr = c.y + (b0 + b) * c.rows + r0;
    #pragma GCC unroll 16
    for (int r = 0; r < R; ++r) yr[r] = first ? out[b * R + r] : yr[r] + out[b * R + r];
  }
}

template <int R>
void tile(const Ctx& c, int64_t r0) {
  const bool direct = c.w->format() == WeightFormat::kF32;
  float* t = direct ? nullptr : static_cast<float*>(t_tile.get(R * c.kc * 4));
  for (int64_t k0 = 0; k0 < c.cols; k0 += c.kc) {
    const int64_t kl = std::min(c.kc, c.cols - k0);
    const float* w;
    int64_t ldw;
    if (direct) {
      w = static_cast<const float*>(c.w->data()) + r0 * c.cols + k0;
      ldw = c.cols;
    } else {
      #pragma GCC unroll 16
      for (int r = 0; r < R; ++r) dequant_segment(*c.w, r0 + r, k0, kl, t + r * c.kc);
      w = t;
      ldw = c.kc;
    }
    for (int64_t b0 = 0; b0 < c.batch; b0 += kBT) {
      const int bt = static_cast<int>(std::min<int64_t>(kBT, c.batch - b0));
      float out[kBT * R];
      call_bt<R>(bt, w, ldw, c.act + b0 * c.lda + k0, c.lda, kl, out);
      store(c, r0, b0, bt, out, R, k0 == 0);
    }
  }
}

}  // namespace

void matmul_avx2(const PackedWeights& w, const float* x, int64_t batch, float* y,
                 ThreadPool& pool) {
  Ctx c;
  c.w = &w;
  c.rows = w.rows();
  c.cols = w.cols();
  c.batch = batch;
  c.y = y;
  // One extra 64-element block per activation row: with rows a multiple of 4 KiB apart (4096
  // int8 columns, 2048 bf16, 1024 f32), the rows of a batch all map to the same L1 sets and
  // evict each other (int8, 14336 x 4096 at batch 16: 4.1 ms without, vs 2.6 ms for the
  // 4096 x 14336 shape of equal size).
  c.lda = round_up(c.cols, 64) + 64;
  auto* a = static_cast<float*>(t_act.get(batch * c.lda * 4));
  for (int64_t b = 0; b < batch; ++b) {
    std::memcpy(a + b * c.lda, x + b * c.cols, static_cast<size_t>(c.cols) * 4);
    std::memset(a + b * c.lda + c.cols, 0, static_cast<size_t>(c.lda - c.cols) * 4);
  }
  c.act = a;
  c.kc = (w.format() == WeightFormat::kF32 && batch <= kBT) ? c.cols : 1024;
  pool.parallel_for(
      c.rows,
      [&c](int64_t begin, int64_t end, int) {
        for (int64_t r0 = begin; r0 < end; r0 += kR) {
          if (end - r0 >= kR) {
            tile<kR>(c, r0);
          } else {
            for (int64_t r = r0; r < end; ++r) tile<1>(c, r);
          }
        }
      },
      kR);
}

}  // namespace llmcap::kernels::detail
