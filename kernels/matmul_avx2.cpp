// AVX2 paths of matmul(). Compiled with -mavx2 -mfma -mf16c; only reached when cpu_features()
// reports AVX2 + FMA + F16C.
//
// f32 and bf16 weights use f32 FMAs: f32 weights are read in place; bf16 weights are widened in
// the micro-kernel when the whole batch is one slice (kBT rows or fewer), else dequantised once
// per call into an f32 tile of kR rows x kc columns that stays in L1 while the batch is taken kBT
// activation rows at a time (partial sums of later column chunks are added into y).
//
// int8 and int4 weights use integer dot products (AVX2 has no VNNI; AVX-VNNI is not used): each
// activation row is quantised to int8 (symmetric, per row, as the AVX-512 VNNI paths do) and
// vpmaddubsw / vpmaddwd sum four u8 x s8 products into each int32 lane, over 8-row halves of
// the 16-row tiles of matmul.h's layouts. int8 takes vpmaddubsw's unsigned operand as |w| and
// moves w's sign onto the activation (vpsignb), so no pair sum can saturate (2 x 127 x 127 <
// 2^15); int4 nibbles q in [0, 15] are unsigned already and the -8 offset is taken off per block
// through -8 x the block's activation sum, as on AVX-512.
//
// Only anonymous-namespace code and raw pointers here (see matmul_avx512.cpp).
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "kernels/matmul.h"
#include "kernels/matmul_internal.h"
#include "kernels/scratch.h"

namespace llmcap::kernels::detail {
namespace {

constexpr int kR = 4;   // output rows per tile
constexpr int kBT = 2;  // activation rows per micro-kernel call (8 accumulators of 16 ymm)
// bf16 weights at batch 1: output rows per tile. Each row of a tile is its own stream from
// memory, and one thread keeps more of the weights in flight with more streams (4 KiB-strided
// rows alias in L1 sets, yet 8 rows of an 8-way L1 still gained). Measured against kR (Zen 3
// VM, 2026-12-01, weight copies rotated over 256 MiB, the tilings timed back to back in each of
// 11 rounds, median of the per-round speed-ups): one thread 1.10-1.13 at 14336 x 4096, 1.01-1.08
// at 4096 x 14336, 1.10-1.11 at 4096 x 4096, 1.13-1.17 at 8192 x 2048 and 896 x 4864; two
// threads 1.05-1.09, 0.96-1.07, 1.07-1.09, 1.18 and 1.10; rows of 2 tiles 0.75-0.96, of 6
// 0.95-1.19, of 12 0.73-1.03 and of 16 0.57-0.82 (spills, and L1 sets overflow).
constexpr int kRBf16Batch1 = 8;

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// The packed weight blocks of matmul.h (Int8Group, Int4SuperBlock) in bytes: the kernels walk
// them with char-typed pointers (as matmul_avx512.cpp does, where struct-typed pointers changed
// GCC 12's code for some int8 kernels).
constexpr int64_t kI8Group = sizeof(Int8Group);                  // one group of 4 columns
constexpr int64_t kI4SuperBlock = sizeof(Int4SuperBlock);        // one super-block of 64 columns
constexpr int64_t kI4Nibbles = offsetof(Int4SuperBlock, q);      // its nibble groups
constexpr int64_t kI4Group = sizeof(Int4SuperBlock::q[0]);       // one nibble group
constexpr int64_t kI4Scales = sizeof(Int4SuperBlock::scale[0]);  // one block's 16 bf16 scales

thread_local ScratchBuffer t_act;
thread_local ScratchBuffer t_tile;

struct Ctx {
  const PackedWeights* w = nullptr;
  int64_t rows = 0, cols = 0, batch = 0;
  float* y = nullptr;
  const void* act = nullptr;      // batch x lda f32 (f32, bf16) or s8 (int8, int4), zero padded
  int64_t lda = 0;                // multiple of 64
  int64_t kc = 0;                 // column chunk, multiple of 32
  const float* sx = nullptr;      // int8 / int4: activation row scales
  const int32_t* corr = nullptr;  // int4: -8 x (sum of each block of 32 quantised activations)
  int64_t ldc = 0;                // int32 per activation row of corr (lda / 32)
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

// Eight weights as f32: f32 in place, bf16 widened exactly (bits << 16).
inline __m256 load8(const float* w) { return _mm256_loadu_ps(w); }
inline __m256 load8(const uint16_t* w) {
  const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(w));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}
// The first n < 8 weights, the rest zero.
inline __m256 load_tail(const float* w, int64_t n) { return _mm256_maskload_ps(w, tail_mask(n)); }
inline __m256 load_tail(const uint16_t* w, int64_t n) {
  alignas(16) uint16_t buf[8] = {};
  std::memcpy(buf, w, static_cast<size_t>(n) * 2);
  return load8(buf);
}

template <class W, int R, int BT>
struct MkF32 {
  /// pf: the same columns of the next tile (rows of stride ldw), prefetched as this one is
  /// read; nullptr for none.
  static void run(const W* w, int64_t ldw, const float* a, int64_t lda, int64_t k, float* out,
                  const W* pf) {
    __m256 acc[R][BT];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) acc[r][b] = _mm256_setzero_ps();
    const auto step = [&](int64_t c) {
      __m256 wv[R];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) wv[r] = load8(w + r * ldw + c);
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) {
        const __m256 av = _mm256_load_ps(a + b * lda + c);
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) acc[r][b] = _mm256_fmadd_ps(wv[r], av, acc[r][b]);
      }
    };
    constexpr int64_t kLine = 64 / sizeof(W);  // weights per cache line
    int64_t c = 0;
    if (pf != nullptr) {
      for (; c + kLine <= k; c += kLine) {
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r)
          _mm_prefetch(reinterpret_cast<const char*>(pf + r * ldw + c), _MM_HINT_T0);
#pragma GCC unroll 8
        for (int64_t s = 0; s < kLine; s += 8) step(c + s);
      }
    }
    for (; c + 8 <= k; c += 8) step(c);
    if (c < k) {
      __m256 wv[R];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) wv[r] = load_tail(w + r * ldw + c, k - c);
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

template <int R, class W>
void call_bt(int bt, const W* w, int64_t ldw, const float* a, int64_t lda, int64_t k, float* out,
             const W* pf = nullptr) {
  static_assert(kBT == 2);
  if (bt == 1) {
    MkF32<W, R, 1>::run(w, ldw, a, lda, k, out, pf);
  } else {
    MkF32<W, R, 2>::run(w, ldw, a, lda, k, out, pf);
  }
}

// Columns [k0, k0 + kl) of bf16 row r as f32 into dst (kl rounded up to 8 written; the kl % 8
// tail read with a scalar loop).
void dequant_segment(const PackedWeights& w, int64_t r, int64_t k0, int64_t kl, float* dst) {
  const uint16_t* src = static_cast<const uint16_t*>(w.data()) + r * w.cols() + k0;
  int64_t c = 0;
  for (; c + 8 <= kl; c += 8) _mm256_store_ps(dst + c, load8(src + c));
  for (; c < kl; ++c) {
    const uint32_t u = static_cast<uint32_t>(src[c]) << 16;
    std::memcpy(dst + c, &u, 4);
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

// bf16 rows of at most this many bytes prefetch the next tile's rows as the micro-kernel reads
// a tile (MkF32's pf): the hardware prefetchers lose a tile's short row streams (one per row:
// four, or eight at batch 1, kRBf16Batch1) every row's bytes. Measured with 4-row tiles, before
// kRBf16Batch1 (Zen 3 VM, 2026-12-01, 2 threads, weight copies rotated over 256 MiB, the
// two variants timed back to back in each of 15 rounds, median of the per-round ratios): batch
// 1 (2) speed-up 1.27 (1.32) at 9728 x 896 (Qwen2.5-0.5B's gate/up), 1.24 (1.30) at 4864 x 896,
// 1.18 (1.11) at 8192 x 512, 1.15 (1.24) at 8192 x 1024, 1.12 (1.22) at 8192 x 1536, 1.03
// (1.05) at 8192 x 2048; slower at 4096 x 2048, 16384 x 2048 and 896 x 4864 (0.85-0.86), no
// change at 2048 x 8192. f32 rows (twice the bytes) gained nothing from it.
constexpr int64_t kBf16PrefetchRowBytes = 3072;

template <int R>
void tile(const Ctx& c, int64_t r0, bool next_tile = false) {  // next_tile: r0 + R.. is ours too
  const WeightFormat format = c.w->format();
  // A batch of one slice widens bf16 in the micro-kernel (kc is then all the columns).
  const bool direct =
      format == WeightFormat::kF32 || (format == WeightFormat::kBf16 && c.batch <= kBT);
  float* t = direct ? nullptr : static_cast<float*>(t_tile.get(R * c.kc * 4));
  const float* act = static_cast<const float*>(c.act);
  for (int64_t k0 = 0; k0 < c.cols; k0 += c.kc) {
    const int64_t kl = std::min(c.kc, c.cols - k0);
    for (int64_t b0 = 0; b0 < c.batch; b0 += kBT) {
      const int bt = static_cast<int>(std::min<int64_t>(kBT, c.batch - b0));
      float out[kBT * R];
      const float* a = act + b0 * c.lda + k0;
      if (format == WeightFormat::kF32) {
        call_bt<R>(bt, static_cast<const float*>(c.w->data()) + r0 * c.cols + k0, c.cols, a, c.lda,
                   kl, out);
      } else if (direct) {
        const uint16_t* w = static_cast<const uint16_t*>(c.w->data()) + r0 * c.cols + k0;
        const bool pf = next_tile && 2 * c.cols <= kBf16PrefetchRowBytes;
        call_bt<R>(bt, w, c.cols, a, c.lda, kl, out, pf ? w + R * c.cols : nullptr);
      } else {
        if (b0 == 0) {
#pragma GCC unroll 16
          for (int r = 0; r < R; ++r) dequant_segment(*c.w, r0 + r, k0, kl, t + r * c.kc);
        }
        call_bt<R>(bt, static_cast<const float*>(t), c.kc, a, c.lda, kl, out);
      }
      store(c, r0, b0, bt, out, R, k0 == 0);
    }
  }
}

// Rows [begin, end) in tiles of R rows, then (when R is wider) of kR, then one at a time; a
// tile prefetches the next one when the next is this thread's too.
template <int R>
void tile_rows(const Ctx& c, int64_t begin, int64_t end) {
  int64_t r0 = begin;
  for (; end - r0 >= R; r0 += R) tile<R>(c, r0, end - r0 >= 2 * R);
  if constexpr (R > kR) {
    for (; end - r0 >= kR; r0 += kR) tile<kR>(c, r0, end - r0 >= 2 * kR);
  }
  for (; r0 < end; ++r0) tile<1>(c, r0);
}

// ---- int8 / int4: integer dot products over quantised activations --------------------------

// Symmetric per-row int8 quantisation, as prep_int8 of matmul_avx512.cpp: xq = round(x * 127 /
// max|x|) (round to nearest even) in [-127, 127], sx = max|x| / 127, rows zero padded to lda.
// With corr, also -8 x (xq[32j] + ... + xq[32j + 31]) as int32 j (the int4 offset correction).
void prep_int8(const float* x, int64_t batch, int64_t cols, int64_t lda, int8_t* out, float* sx,
               int32_t* corr, int64_t ldc) {
  const __m256 sign_bit = _mm256_set1_ps(-0.0f);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  const __m256i lo_clamp = _mm256_set1_epi8(-127);
  const __m256i ones8 = _mm256_set1_epi8(1);
  const __m256i ones16 = _mm256_set1_epi16(1);
  alignas(32) float buf[32];
  for (int64_t b = 0; b < batch; ++b) {
    const float* xb = x + b * cols;
    __m256 vmax = _mm256_setzero_ps();
    int64_t c = 0;
    for (; c + 8 <= cols; c += 8)
      vmax = _mm256_max_ps(vmax, _mm256_andnot_ps(sign_bit, _mm256_loadu_ps(xb + c)));
    float max_abs = 0.0f;
    {
      alignas(32) float m[8];
      _mm256_store_ps(m, vmax);
      for (float v : m) max_abs = std::max(max_abs, v);
      for (; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(xb[c]));
    }
    sx[b] = max_abs / 127.0f;
    const __m256 inv = _mm256_set1_ps(max_abs > 0.0f ? 127.0f / max_abs : 0.0f);
    int8_t* ob = out + b * lda;
    for (c = 0; c < lda; c += 32) {
      const float* src = xb + c;
      if (c + 32 > cols) {  // the row's end: copy what is left, zeros after it
        std::fill(buf, buf + 32, 0.0f);
        if (c < cols) std::memcpy(buf, xb + c, static_cast<size_t>(cols - c) * 4);
        src = buf;
      }
      __m256i q[4];
      for (int i = 0; i < 4; ++i) {
        q[i] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(src + 8 * i), inv));
      }
      // packs work per 128-bit lane: bytes come out as 4-byte runs of q0, q1, q2, q3 per lane;
      // the dword permutation puts them back in order. Saturation clamps at 127; -128 -> -127.
      const __m256i w16a = _mm256_packs_epi32(q[0], q[1]), w16b = _mm256_packs_epi32(q[2], q[3]);
      __m256i v = _mm256_permutevar8x32_epi32(_mm256_packs_epi16(w16a, w16b), order);
      v = _mm256_max_epi8(v, lo_clamp);
      _mm256_store_si256(reinterpret_cast<__m256i*>(ob + c), v);
      if (corr != nullptr) {
        const __m256i s = _mm256_madd_epi16(_mm256_maddubs_epi16(ones8, v), ones16);
        __m128i h = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
        h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(1, 0, 3, 2)));
        h = _mm_add_epi32(h, _mm_shuffle_epi32(h, _MM_SHUFFLE(2, 3, 0, 1)));
        corr[b * ldc + c / 32] = -8 * _mm_cvtsi128_si32(h);
      }
    }
  }
}

inline __m256i bcast4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return _mm256_set1_epi32(v);
}

// Software prefetch distance of the int8 / int4 weight streams, in bytes ahead in each tile.
constexpr int kIntPrefetch = 1024;

// int8: NT 16-row tiles (matmul.h layout: group g of 4 columns is the Int8Group at
// w + kI8Group g, byte 4i + j = row i, column 4g + j) against BT activation rows, ngroups groups.
// acc[(2t + h) * BT + b] lane i += row 8h + i of tile t . activation row b (int32, exact:
// 4 x 127^2 per group).
template <int NT, int BT>
void mk_i8(const int8_t* const* w, int64_t ngroups, const int8_t* a, int64_t lda, bool prefetch,
           __m256i* acc_io) {
  constexpr int NV = 2 * NT;
  const __m256i ones = _mm256_set1_epi16(1);
  __m256i acc[NV][BT];
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v)
#pragma GCC unroll 8
    for (int b = 0; b < BT; ++b) acc[v][b] = acc_io[v * BT + b];
  for (int64_t g = 0; g < ngroups; ++g) {
    __m256i wv[NV], aw[NV];
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      const int8_t* p = w[t] + g * kI8Group;
      if (prefetch) _mm_prefetch(reinterpret_cast<const char*>(p) + kIntPrefetch, _MM_HINT_T0);
      wv[2 * t] = _mm256_load_si256(reinterpret_cast<const __m256i*>(p));           // rows 0-7
      wv[2 * t + 1] = _mm256_load_si256(reinterpret_cast<const __m256i*>(p + 32));  // 8-15
    }
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) aw[v] = _mm256_abs_epi8(wv[v]);
#pragma GCC unroll 8
    for (int b = 0; b < BT; ++b) {
      const __m256i a4 = bcast4(a + b * lda + g * 4);
#pragma GCC unroll 8
      for (int v = 0; v < NV; ++v) {
        const __m256i p = _mm256_maddubs_epi16(aw[v], _mm256_sign_epi8(a4, wv[v]));
        acc[v][b] = _mm256_add_epi32(acc[v][b], _mm256_madd_epi16(p, ones));
      }
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < NV; ++v)
#pragma GCC unroll 8
    for (int b = 0; b < BT; ++b) acc_io[v * BT + b] = acc[v][b];
}

// Calls mk_i8<1, bt> for a run-time bt in [1, kI8Slice].
constexpr int kI8Slice = 4;
template <int BT = kI8Slice>
void call_i8(int bt, const int8_t* w, int64_t ngroups, const int8_t* a, int64_t lda, bool prefetch,
             __m256i* acc) {
  if constexpr (BT >= 1) {
    if (bt == BT) {
      mk_i8<1, BT>(&w, ngroups, a, lda, prefetch, acc);
    } else {
      call_i8<BT - 1>(bt, w, ngroups, a, lda, prefetch, acc);
    }
  }
}

// int4 super-block at p: prefetch its lines kIntPrefetch bytes ahead.
// always_inline: when a variant of a prefetch-only helper like this was not forced inline,
// GCC 12 -O3 left no prefetch at all in the object (apparently its ipa-modref analysis sees
// no side effect; docs/kernels.md).
[[gnu::always_inline]] inline void prefetch_i4_superblock(const uint8_t* p) {
#pragma GCC unroll 9
  for (int line = 0; line < kI4SuperBlock / 64; ++line) {
    _mm_prefetch(reinterpret_cast<const char*>(p) + kIntPrefetch + 64 * line, _MM_HINT_T0);
  }
}

// int4 super-block at p: the f32 scales of rows 8k..8k+7 of block h (bf16, widened exactly).
inline __m256 i4_scales(const uint8_t* p, int h, int k) {
  const __m128i sc16 = _mm_load_si128(reinterpret_cast<const __m128i*>(p + kI4Scales * h + 16 * k));
  return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(sc16), 16));
}

// int4: one 16-row tile (matmul.h layout: an Int4SuperBlock per 64 columns; block h's 16 bf16
// scales at kI4Scales h; its nibbles in groups 4h + q, kI4Group bytes apart from kI4Nibbles,
// bytes 4i..4i+3 of row i whose low nibbles are columns 4q.., high nibbles 16 + 4q..) against bt
// activation rows. acc[b * 16 + i] += row i's dot product (scaled per block) with activation row b.
// The nibbles are unpacked once per 8-row half and block for all bt rows; the eight u8 x s8
// products of a block are summed in int16 (8 x 2 x 15 x 127 < 2^15) before one vpmaddwd.
void mk_i4(int bt, const uint8_t* w, int64_t nsb, const int8_t* a, int64_t lda, const int32_t* corr,
           int64_t ldc, bool prefetch, float* acc) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t sb = 0; sb < nsb; ++sb) {
    const uint8_t* p = w + sb * kI4SuperBlock;
    if (prefetch) prefetch_i4_superblock(p);
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const int64_t blk = 2 * sb + h;
#pragma GCC unroll 2
      for (int k = 0; k < 2; ++k) {
        const __m256 scale = i4_scales(p, h, k);
        __m256i lo[4], hi[4];
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
          const __m256i z = _mm256_load_si256(
              reinterpret_cast<const __m256i*>(p + kI4Nibbles + (4 * h + q) * kI4Group + 32 * k));
          lo[q] = _mm256_and_si256(z, low4);
          hi[q] = _mm256_and_si256(_mm256_srli_epi16(z, 4), low4);
        }
        // A run-time loop over the activation rows: unrolled over them (one copy of this body
        // per row and per batch size) the kernel ran slower.
#pragma GCC unroll 1
        for (int b = 0; b < bt; ++b) {
          const int8_t* ab = a + b * lda + blk * 32;
          __m256i s = _mm256_maddubs_epi16(lo[0], bcast4(ab));
#pragma GCC unroll 4
          for (int q = 1; q < 4; ++q) {
            s = _mm256_add_epi16(s, _mm256_maddubs_epi16(lo[q], bcast4(ab + 4 * q)));
          }
#pragma GCC unroll 4
          for (int q = 0; q < 4; ++q) {
            s = _mm256_add_epi16(s, _mm256_maddubs_epi16(hi[q], bcast4(ab + 16 + 4 * q)));
          }
          const __m256i d =
              _mm256_add_epi32(_mm256_madd_epi16(s, ones), _mm256_set1_epi32(corr[b * ldc + blk]));
          float* ac = acc + b * 16 + 8 * k;
          _mm256_storeu_ps(ac, _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), scale, _mm256_loadu_ps(ac)));
        }
      }
    }
  }
}

// int4, batch 1: one tile, the activation broadcasts of a block serving both 8-row halves,
// acc[k] (rows 8k..) in registers for the whole row (mk_i4 re-broadcasts the block's 8
// activation words for every half and keeps acc in memory). Measured (Zen 3 VM, 2026-12-01,
// kernels_bench, two alternating rounds of two builds, Llama-8B MLP shapes): 78-90% of the read
// bandwidth, against 65-88% with two tiles at once (two weight streams per thread; four tiles
// spilled); mk_i4 at batch 1 had read 79-82% in one round.
void mk_i4_row(const uint8_t* w, int64_t nsb, const int8_t* a, const int32_t* corr, __m256* acc) {
  const __m256i low4 = _mm256_set1_epi8(0x0f);
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t sb = 0; sb < nsb; ++sb) {
    const uint8_t* p = w + sb * kI4SuperBlock;
    prefetch_i4_superblock(p);
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const int64_t blk = 2 * sb + h;
      const int8_t* ab = a + blk * 32;
      __m256i s[2];
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) {
        const __m256i alo = bcast4(ab + 4 * q), ahi = bcast4(ab + 16 + 4 * q);
#pragma GCC unroll 2
        for (int k = 0; k < 2; ++k) {
          const __m256i z = _mm256_load_si256(
              reinterpret_cast<const __m256i*>(p + kI4Nibbles + (4 * h + q) * kI4Group + 32 * k));
          const __m256i lo = _mm256_maddubs_epi16(_mm256_and_si256(z, low4), alo);
          const __m256i hi =
              _mm256_maddubs_epi16(_mm256_and_si256(_mm256_srli_epi16(z, 4), low4), ahi);
          s[k] =
              q == 0 ? _mm256_add_epi16(lo, hi) : _mm256_add_epi16(s[k], _mm256_add_epi16(lo, hi));
        }
      }
      const __m256i c = _mm256_set1_epi32(corr[blk]);
#pragma GCC unroll 2
      for (int k = 0; k < 2; ++k) {
        const __m256 scale = i4_scales(p, h, k);
        const __m256i d = _mm256_add_epi32(_mm256_madd_epi16(s[k], ones), c);
        acc[k] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(d), scale, acc[k]);
      }
    }
  }
}

// Activation rows per pass over an int4 tile (the pass streams the tile from memory once;
// acc is kI4Slice x 16 floats). int4 4096 x 14336 at batch 16: 11.7 ms with the run-time row
// loop, 13.7-15.8 ms with the rows unrolled in slices of 2, 4 or 8 (2026-12-01, Zen 3).
constexpr int kI4Slice = 16;

// y[b][r0 .. r0 + nr) = row scale x sx[b] x the int32 sums (int8) from their f32 totals.
void store_i8(const Ctx& c, int64_t r0, int b, const float* sums) {
  const int nr = static_cast<int>(std::min<int64_t>(16, c.rows - r0));
  const float* ws = c.w->row_scales().data() + r0;
  float* y = c.y + b * c.rows + r0;
  for (int i = 0; i < nr; ++i) y[i] = sums[i] * ws[i] * c.sx[b];
}

// Adds the int32 lanes of acc (rows 0-7, then 8-15) to the f32 sums[16].
inline void add_i8(const __m256i* halves, int stride, float* sums) {
  for (int h = 0; h < 2; ++h) {
    _mm256_storeu_ps(sums + 8 * h, _mm256_add_ps(_mm256_loadu_ps(sums + 8 * h),
                                                 _mm256_cvtepi32_ps(halves[h * stride])));
  }
}

// int8, tiles [t0, t1) of 16 rows. Batch 1: two tiles at a time (two weight streams per
// thread). Larger batches: one tile at a time in column chunks of c.kc, activation rows in
// slices of kI8Slice; the first slice streams the chunk from memory, the others find it in L1.
void i8_tiles(const Ctx& c, int64_t t0, int64_t t1) {
  const int64_t groups = (c.cols + 3) / 4;
  const int64_t kg = c.kc / 4;
  const auto* base = static_cast<const int8_t*>(c.w->data());
  const auto* act = static_cast<const int8_t*>(c.act);
  alignas(32) float sums[64 * 16];
  int64_t t = t0;
  if (c.batch == 1) {
    for (; t + 2 <= t1; t += 2) {
      std::fill(sums, sums + 32, 0.0f);
      for (int64_t g0 = 0; g0 < groups; g0 += kg) {
        const int64_t ng = std::min(kg, groups - g0);
        const int8_t* w[2] = {base + t * groups * kI8Group + g0 * kI8Group,
                              base + (t + 1) * groups * kI8Group + g0 * kI8Group};
        __m256i acc[4] = {};
        mk_i8<2, 1>(w, ng, act + g0 * 4, c.lda, true, acc);
        add_i8(acc, 1, sums);
        add_i8(acc + 2, 1, sums + 16);
      }
      store_i8(c, t * 16, 0, sums);
      store_i8(c, (t + 1) * 16, 0, sums + 16);
    }
  }
  for (; t < t1; ++t) {
    const int8_t* w = base + t * groups * kI8Group;
    std::fill(sums, sums + c.batch * 16, 0.0f);
    for (int64_t g0 = 0; g0 < groups; g0 += kg) {
      const int64_t ng = std::min(kg, groups - g0);
      for (int64_t b0 = 0; b0 < c.batch; b0 += kI8Slice) {
        const int bt = static_cast<int>(std::min<int64_t>(kI8Slice, c.batch - b0));
        __m256i acc[2 * kI8Slice] = {};
        call_i8(bt, w + g0 * kI8Group, ng, act + b0 * c.lda + g0 * 4, c.lda, b0 == 0, acc);
        for (int b = 0; b < bt; ++b) add_i8(acc + b, bt, sums + (b0 + b) * 16);
      }
    }
    for (int b = 0; b < c.batch; ++b) store_i8(c, t * 16, b, sums + b * 16);
  }
}

// int4, tiles [t0, t1) of 16 rows. Batch 1: mk_i4_row per tile. Larger batches: one tile at a
// time, activation rows in slices of kI4Slice.
void i4_tiles(const Ctx& c, int64_t t0, int64_t t1) {
  const int64_t nsb = (c.cols + 63) / 64;
  const auto* act = static_cast<const int8_t*>(c.act);
  const auto* base = static_cast<const uint8_t*>(c.w->data());
  if (c.batch == 1) {
    const __m256 sx = _mm256_set1_ps(c.sx[0]);
    for (int64_t t = t0; t < t1; ++t) {
      __m256 acc[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
      mk_i4_row(base + t * nsb * kI4SuperBlock, nsb, act, c.corr, acc);
      alignas(32) float out[16];
      _mm256_store_ps(out, _mm256_mul_ps(acc[0], sx));
      _mm256_store_ps(out + 8, _mm256_mul_ps(acc[1], sx));
      const int64_t r0 = t * 16;
      std::copy(out, out + std::min<int64_t>(16, c.rows - r0), c.y + r0);
    }
    return;
  }
  alignas(32) float acc[kI4Slice * 16];
  for (int64_t t = t0; t < t1; ++t) {
    const uint8_t* w = base + t * nsb * kI4SuperBlock;
    const int64_t r0 = t * 16;
    const int nr = static_cast<int>(std::min<int64_t>(16, c.rows - r0));
    for (int64_t b0 = 0; b0 < c.batch; b0 += kI4Slice) {
      const int bt = static_cast<int>(std::min<int64_t>(kI4Slice, c.batch - b0));
      std::fill(acc, acc + bt * 16, 0.0f);
      mk_i4(bt, w, nsb, act + b0 * c.lda, c.lda, c.corr + b0 * c.ldc, c.ldc, b0 == 0, acc);
      for (int b = 0; b < bt; ++b) {
        float* y = c.y + (b0 + b) * c.rows + r0;
        for (int i = 0; i < nr; ++i) y[i] = acc[b * 16 + i] * c.sx[b0 + b];
      }
    }
  }
}

// The common part of a call's context: one extra 64-element block per activation row: with rows
// a multiple of 4 KiB apart (4096 int8 columns, 2048 bf16, 1024 f32), the rows of a batch all map
// to the same L1 sets and evict each other (int8, 14336 x 4096 at batch 16: 4.1 ms without, vs
// 2.6 ms for the 4096 x 14336 shape of equal size).
Ctx make_ctx(const PackedWeights& w, int64_t batch, float* y) {
  Ctx c;
  c.w = &w;
  c.rows = w.rows();
  c.cols = w.cols();
  c.batch = batch;
  c.y = y;
  c.lda = round_up(c.cols, 64) + 64;
  return c;
}

// int8 / int4 weights: quantised activations, integer dot products over 16-row tiles.
void int_weights(const PackedWeights& w, const float* x, int64_t batch, float* y, ThreadPool& pool,
                 bool int4) {
  Ctx c = make_ctx(w, batch, y);
  const int64_t act_bytes = round_up(batch * c.lda, 64);
  c.ldc = c.lda / 32;
  auto* base =
      static_cast<uint8_t*>(t_act.get(act_bytes + (int4 ? batch * c.ldc * 4 : 0) + batch * 4));
  auto* corr = reinterpret_cast<int32_t*>(base + act_bytes);  // int4: batch x lda / 32
  auto* sx = reinterpret_cast<float*>(base + act_bytes + (int4 ? batch * c.ldc * 4 : 0));
  prep_int8(x, batch, c.cols, c.lda, reinterpret_cast<int8_t*>(base), sx, int4 ? corr : nullptr,
            c.ldc);
  c.act = base;
  c.sx = sx;
  c.corr = int4 ? corr : nullptr;
  // One slice: a chunk as long as int32 stays exact (4 x 127^2 per group, < 2^31 up to
  // 32,768 columns); several: chunks of 1,024 columns (16 KiB of a tile) stay in L1.
  c.kc = batch <= kI8Slice ? 32768 : 1024;
  const int64_t tiles = (c.rows + 15) / 16;
  pool.parallel_for(tiles, [&c, int4](int64_t begin, int64_t end, int) {
    if (int4) {
      i4_tiles(c, begin, end);
    } else {
      i8_tiles(c, begin, end);
    }
  });
}

// f32 / bf16 weights: f32 FMAs (tile()).
void float_weights(const PackedWeights& w, const float* x, int64_t batch, float* y,
                   ThreadPool& pool) {
  Ctx c = make_ctx(w, batch, y);
  auto* a = static_cast<float*>(t_act.get(batch * c.lda * 4));
  for (int64_t b = 0; b < batch; ++b) {
    std::memcpy(a + b * c.lda, x + b * c.cols, static_cast<size_t>(c.cols) * 4);
    std::memset(a + b * c.lda + c.cols, 0, static_cast<size_t>(c.lda - c.cols) * 4);
  }
  c.act = a;
  c.kc = batch <= kBT ? c.cols : 1024;
  // bf16 at batch 1 in tiles of kRBf16Batch1 rows, everything else in tiles of kR.
  const bool wide = w.format() == WeightFormat::kBf16 && batch == 1;
  pool.parallel_for(
      c.rows,
      [&c, wide](int64_t begin, int64_t end, int) {
        if (wide) {
          tile_rows<kRBf16Batch1>(c, begin, end);
        } else {
          tile_rows<kR>(c, begin, end);
        }
      },
      wide ? kRBf16Batch1 : kR);
}

}  // namespace

// The entries of the AVX2 kernel table (dispatch.cpp), one per weight format.
void matmul_avx2_f32(const PackedWeights& w, const float* x, int64_t batch, float* y,
                     ThreadPool& pool) {
  float_weights(w, x, batch, y, pool);
}
void matmul_avx2_bf16(const PackedWeights& w, const float* x, int64_t batch, float* y,
                      ThreadPool& pool) {
  float_weights(w, x, batch, y, pool);
}
void matmul_avx2_int8(const PackedWeights& w, const float* x, int64_t batch, float* y,
                      ThreadPool& pool) {
  int_weights(w, x, batch, y, pool, false);
}
void matmul_avx2_int4(const PackedWeights& w, const float* x, int64_t batch, float* y,
                      ThreadPool& pool) {
  int_weights(w, x, batch, y, pool, true);
}

}  // namespace llmcap::kernels::detail
