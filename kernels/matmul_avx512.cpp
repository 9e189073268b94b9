// AVX-512 paths of matmul(). Compiled with -mavx512f -mavx512bw -mavx512vl -mavx512bf16
// -mavx512vnni -mfma; only reached when cpu_features() reports AVX-512 F/BW/VL, and the BF16 /
// VNNI kernels only when it reports those too.
//
// Structure (f32 and bf16; int8 / int4 below): threads split the output rows; each thread walks
// tiles of kR rows (bf16 at batch 1: kRBf16Batch1).
// For a tile, the columns are taken in chunks of kc so that the tile's kR x kc weights stay in
// L1; within a chunk the batch is taken kBT activation rows at a time, so every weight byte is
// fetched from memory once per call and reused from registers / L1 for all activation rows.
// Partial sums of later column chunks are added into y.
//
// Only anonymous-namespace code and raw pointers here: an inline function or template shared
// with other translation units could be emitted with AVX-512 instructions and chosen by the
// linker for the whole program.
#include <immintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

#include "kernels/matmul.h"
#include "kernels/matmul_internal.h"
#include "kernels/scratch.h"

// GCC 12's AVX-512 reduction / conversion intrinsics start from _mm512_undefined_*(), which it
// reports as uninitialised at -O2 and above (a false positive inside the compiler's headers).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

namespace llmcap::kernels::detail {
namespace {

constexpr int kR = 4;  // output rows per tile
// bf16 at batch 1 takes tiles of 8 rows: each row of a tile is a stream of its own from memory,
// and a thread keeps more weights in flight with more of them. Back to back against 4-row tiles
// (AMD EPYC Zen 5 VM, AVX-512, 2 threads, 11 rounds, weight copies rotated over 256 MiB,
// 2026-12-01): 14336 x 4096 1.09x, 4096 x 4096 1.11x, 896 x 4864 1.16x, 4096 x 14336 1.00x
// (6 rows: 1.03-1.10x; f32 with 8 rows 0.97-1.04x, so f32 keeps 4).
constexpr int kRBf16Batch1 = 8;
constexpr int kBT = 4;  // activation rows per micro-kernel call

// The packed weight blocks of matmul.h (Int8Group, Int4SuperBlock) in bytes: the kernels walk
// them with char-typed pointers. (With struct-typed pointers GCC 12 compiled some int8 tile
// kernels differently: one loop testing `prefetch` per group instead of two loops.)
constexpr int64_t kI8Group = sizeof(Int8Group);                  // one group of 4 columns
constexpr int64_t kI4SuperBlock = sizeof(Int4SuperBlock);        // one super-block of 64 columns
constexpr int64_t kI4Nibbles = offsetof(Int4SuperBlock, q);      // its nibble groups
constexpr int64_t kI4Group = sizeof(Int4SuperBlock::q[0]);       // one nibble group
constexpr int64_t kI4Scales = sizeof(Int4SuperBlock::scale[0]);  // one block's 16 bf16 scales
constexpr int kI4Lines = kI4SuperBlock / 64;                     // cache lines of a super-block

int64_t round_up(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

thread_local ScratchBuffer t_act;   // prepared activations (calling thread; read by all)
thread_local ScratchBuffer t_tile;  // dequantised / unpacked weight tile (per worker)

struct Ctx {
  const PackedWeights* w = nullptr;
  int64_t rows = 0, cols = 0, batch = 0;
  float* y = nullptr;
  const void* act = nullptr;      // batch x lda elements (f32, bf16, u8 or s8)
  int64_t lda = 0;                // elements per activation row, multiple of 64, zero padded
  const float* sx = nullptr;      // int8 / int4 dot paths: activation row scales
  const int32_t* corr = nullptr;  // int4 dot path: -8 * (sum of each block of 32 activations)
  int64_t ldc = 0;                // int32 per activation row of corr (lda / 32)
  int64_t kc = 0;                 // column chunk
  // int8 / int4 dot paths, batch > 1: act in slices of 16 rows, groups of 4 columns
  // (transpose_groups), slice_bytes apart; int4: corr likewise, corr_slice int32 apart.
  const uint8_t* act_t = nullptr;
  int64_t slice_bytes = 0;
  const int32_t* corr_t = nullptr;
  int64_t corr_slice = 0;
  const int32_t* act_sums = nullptr;  // int8 dot path, batch > 1: sum of each row's s8 activations
};

inline void store(const Ctx& c, int64_t r0, int nr, int64_t b0, int bt, const float* out, int R,
                  bool first) {
  for (int b = 0; b < bt; ++b) {
    float* yr = c.y + (b0 + b) * c.rows + r0;
    for (int r = 0; r < nr; ++r) {
      yr[r] = first ? out[b * R + r] : yr[r] + out[b * R + r];
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Activation preparation (once per call).

void prep_f32(const float* x, int64_t batch, int64_t cols, int64_t lda, float* out) {
  for (int64_t b = 0; b < batch; ++b) {
    std::memcpy(out + b * lda, x + b * cols, static_cast<size_t>(cols) * 4);
    std::memset(out + b * lda + cols, 0, static_cast<size_t>(lda - cols) * 4);
  }
}

inline __mmask16 tail16(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xffff) : static_cast<__mmask16>((1u << n) - 1u);
}

void prep_bf16(const float* x, int64_t batch, int64_t cols, int64_t lda, uint16_t* out) {
  for (int64_t b = 0; b < batch; ++b) {
    const float* xb = x + b * cols;
    uint16_t* ob = out + b * lda;
    for (int64_t c = 0; c < lda; c += 32) {
      const int64_t left = cols - c;
      const __m512 lo = _mm512_maskz_loadu_ps(left > 0 ? tail16(left) : 0, xb + c);
      const __m512 hi = _mm512_maskz_loadu_ps(left > 16 ? tail16(left - 16) : 0, xb + c + 16);
      const __m512bh v = _mm512_cvtne2ps_pbh(hi, lo);
      _mm512_store_si512(reinterpret_cast<__m512i*>(ob + c), reinterpret_cast<const __m512i&>(v));
    }
  }
}

// Symmetric per-row int8 quantisation: xq = round(x * 127 / max|x|), sx = max|x| / 127. With
// `offset`, stores xq + 128 (u8, for vpdpbusd's unsigned operand). With corr, also stores
// -8 * (xq[32j] + ... + xq[32j+31]) as int32 j: the offset correction of the int4 path (whose
// weights enter vpdpbusd as q in [0, 15] for q - 8).
void prep_int8(const float* x, int64_t batch, int64_t cols, int64_t lda, bool offset, uint8_t* out,
               float* sx, int32_t* corr, int64_t ldc) {
  const __m512i lo_clamp = _mm512_set1_epi32(-127), hi_clamp = _mm512_set1_epi32(127);
  const __m128i flip = _mm_set1_epi8(static_cast<char>(0x80));
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t b = 0; b < batch; ++b) {
    const float* xb = x + b * cols;
    __m512 vmax = _mm512_setzero_ps();
    for (int64_t c = 0; c < cols; c += 16) {
      vmax = _mm512_max_ps(vmax, _mm512_abs_ps(_mm512_maskz_loadu_ps(tail16(cols - c), xb + c)));
    }
    const float max_abs = _mm512_reduce_max_ps(vmax);
    sx[b] = max_abs / 127.0f;
    const __m512 inv = _mm512_set1_ps(max_abs > 0.0f ? 127.0f / max_abs : 0.0f);
    uint8_t* ob = out + b * lda;
    for (int64_t c = 0; c < lda; c += 64) {
      for (int h = 0; h < 4; ++h) {
        const int64_t l = cols - c - 16 * h;
        const __m512 v = _mm512_maskz_loadu_ps(l > 0 ? tail16(l) : 0, xb + c + 16 * h);
        const __m512i qi = _mm512_cvtps_epi32(_mm512_mul_ps(v, inv));
        __m128i bytes =
            _mm512_cvtepi32_epi8(_mm512_min_epi32(_mm512_max_epi32(qi, lo_clamp), hi_clamp));
        if (offset) bytes = _mm_xor_si128(bytes, flip);
        _mm_store_si128(reinterpret_cast<__m128i*>(ob + c + 16 * h), bytes);
      }
      if (corr != nullptr) {
        // Lane i: sum of bytes 4i..4i+3 (u8 ones x s8 activations); lanes 0-7 are block 2c/64,
        // lanes 8-15 the next.
        const __m512i sums =
            _mm512_dpbusd_epi32(_mm512_setzero_si512(), ones, _mm512_load_si512(ob + c));
        corr[b * ldc + c / 32] = -8 * _mm512_mask_reduce_add_epi32(0x00ff, sums);
        corr[b * ldc + c / 32 + 1] = -8 * _mm512_mask_reduce_add_epi32(0xff00, sums);
      }
    }
  }
}

// out[b] = sum of the lda s8 bytes of row b of a (rows lda bytes apart, lda a multiple of 64).
void row_sums_s8(const uint8_t* a, int64_t batch, int64_t lda, int32_t* out) {
  const __m512i ones = _mm512_set1_epi8(1);
  for (int64_t b = 0; b < batch; ++b) {
    __m512i acc = _mm512_setzero_si512();
    for (int64_t c = 0; c < lda; c += 64) {
      acc = _mm512_dpbusd_epi32(acc, ones, _mm512_load_si512(a + b * lda + c));
    }
    out[b] = _mm512_reduce_add_epi32(acc);
  }
}

// Bytes of one group of 4 columns of a 16-row slice of activations (transpose_groups).
constexpr int64_t kGroupBytes = 64;

// r[i] = column i of the 16 x 16 matrix of 32-bit words whose row j was r[j].
inline void transpose16x16(__m512i* r) {
  __m512i t[16], u[16];
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
  }
  // u[4i + k], 128-bit lane L: words 4L + k of rows 4i .. 4i + 3.
  for (int i = 0; i < 4; ++i) {
    u[4 * i] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
    u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
    u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
  }
  for (int k = 0; k < 4; ++k) {
    const __m512i a = _mm512_shuffle_i32x4(u[k], u[4 + k], 0x44);
    const __m512i b = _mm512_shuffle_i32x4(u[k], u[4 + k], 0xEE);
    const __m512i c = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0x44);
    const __m512i d = _mm512_shuffle_i32x4(u[8 + k], u[12 + k], 0xEE);
    r[k] = _mm512_shuffle_i32x4(a, c, 0x88);
    r[4 + k] = _mm512_shuffle_i32x4(a, c, 0xDD);
    r[8 + k] = _mm512_shuffle_i32x4(b, d, 0x88);
    r[12 + k] = _mm512_shuffle_i32x4(b, d, 0xDD);
  }
}

// The 32-bit words [0, groups) of rows [0, batch) of a (row stride lda bytes) regrouped as
// slices of 16 rows: at[s * slice_bytes + g * kGroupBytes + 4 j] = word g of row 16 s + j
// (rows past batch: 0). The batched int8 / int4 tile kernels then find the activation words of
// all 16 rows of a group at constant offsets from one address, instead of one address register
// per row (GCC 12 spilled them, a load or two per vpdpbusd).
void transpose_groups(const uint8_t* a, int64_t batch, int64_t lda, int64_t groups,
                      int64_t slice_bytes, uint8_t* at) {
  for (int64_t b0 = 0; b0 < batch; b0 += 16) {
    const int64_t nb = std::min<int64_t>(16, batch - b0);
    uint8_t* o = at + b0 / 16 * slice_bytes;
    for (int64_t g0 = 0; g0 < groups; g0 += 16) {
      const int64_t ng = std::min<int64_t>(16, groups - g0);
      const __mmask16 m = tail16(ng);
      __m512i r[16];
      for (int64_t j = 0; j < 16; ++j) {
        r[j] = j < nb ? _mm512_maskz_loadu_epi32(m, a + (b0 + j) * lda + g0 * 4)
                      : _mm512_setzero_si512();
      }
      transpose16x16(r);
      for (int64_t i = 0; i < ng; ++i) _mm512_store_si512(o + (g0 + i) * kGroupBytes, r[i]);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Micro-kernels: R weight rows x BT activation rows, k columns; out[b * R + r].

template <int R, int BT>
struct MkF32 {
  static void run(const float* w, int64_t ldw, const float* a, int64_t lda, int64_t k, float* out) {
    __m512 acc[R][BT];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) acc[r][b] = _mm512_setzero_ps();
    int64_t c = 0;
    auto step = [&](__mmask16 m) {
      __m512 wv[R];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) wv[r] = _mm512_maskz_loadu_ps(m, w + r * ldw + c);
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) {
        const __m512 av = _mm512_load_ps(a + b * lda + c);
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) acc[r][b] = _mm512_fmadd_ps(wv[r], av, acc[r][b]);
      }
    };
    for (; c + 16 <= k; c += 16) step(static_cast<__mmask16>(0xffff));
    if (c < k) step(tail16(k - c));
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) out[b * R + r] = _mm512_reduce_add_ps(acc[r][b]);
  }
};

// bf16 x bf16 pairs accumulated in f32 with vdpbf16ps.
template <int R, int BT>
struct MkBf16 {
  static void run(const uint16_t* w, int64_t ldw, const uint16_t* a, int64_t lda, int64_t k,
                  float* out) {
    __m512 acc[R][BT];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) acc[r][b] = _mm512_setzero_ps();
    int64_t c = 0;
    auto step = [&](__mmask32 m) {
      __m512bh wv[R];
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        const __m512i v = _mm512_maskz_loadu_epi16(m, w + r * ldw + c);
        wv[r] = reinterpret_cast<const __m512bh&>(v);
      }
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) {
        const __m512i v = _mm512_load_si512(a + b * lda + c);
        const __m512bh av = reinterpret_cast<const __m512bh&>(v);
#pragma GCC unroll 16
        for (int r = 0; r < R; ++r) acc[r][b] = _mm512_dpbf16_ps(acc[r][b], wv[r], av);
      }
    };
    for (; c + 32 <= k; c += 32) step(0xffffffffu);
    if (c < k) step(static_cast<__mmask32>((1ull << (k - c)) - 1ull));
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) out[b * R + r] = _mm512_reduce_add_ps(acc[r][b]);
  }
};

// Software prefetch distance of the int8 and int4 weight streams (bytes ahead in each row):
// with the hardware prefetcher alone, int4 batch 1 reached ~36% of read bandwidth, with this
// ~50-57%. kPrefetch serves the batch-1 kernels (several tiles at once, i8_row_tiles /
// i4_row_tiles); the one-tile kernels of batches 2-64 (MkI8Tile, MkI4Tile) prefetch further
// ahead. Measured on the development VM (2026-11-30, 2 threads, three interleaved rounds of
// medians, 4096 x 14336 and 14336 x 4096) against 1024 bytes for both: int4 batch 4 0.66-0.70
// ms against 0.92-0.98 (-27%), batch 16 1.71-1.81 against 1.96-2.06 (-12%); int8 batch 16
// 1.70-1.91 against 1.90-2.30 (-10..-18%), batch 4 1.19-1.23 against 1.23-1.29 (-5%). Further
// still (int8 3072, int4 8192) made int8 batch 4 30% slower.
constexpr int kPrefetch = 1024;
constexpr int kI8TilePrefetch = 2048;
constexpr int kI4TilePrefetch = 4096;

// acc += u8 x s8 dot products of u8 (16 lanes of 4 bytes) with the 4 s8 bytes at s8x4,
// broadcast to every lane as vpdpbusd's embedded {1to16} memory operand. GCC 12 does not fold
// _mm512_set1_epi32 of a loaded word into that operand; it emits a vpbroadcastd per product.
// int4 4096 x 14336 at batch 16: 2.01-2.10 ms against 2.07-2.24 ms with the intrinsics (four
// interleaved pairs, 2026-11-30).
using AliasedWord = int32_t __attribute__((may_alias, aligned(1)));
inline void dpbusd_bcast(__m512i& acc, __m512i u8, const int8_t* s8x4) {
  asm("vpdpbusd %2%{1to16%}, %1, %0"
      : "+v"(acc)
      : "v"(u8), "m"(*reinterpret_cast<const AliasedWord*>(s8x4)));
}

// int8 tile kernel over one 16-row tile (matmul.h layout: group g of 4 columns is the Int8Group
// at w + kI8Group g, lane i = row i): u8 weights (w + 128, one vpxord per 16 products) x s8
// activations broadcast from memory (vpdpbusd's signed operand is the one that can be a {1to16}
// memory operand; a separate vpbroadcastd per product ran at 65% of the rate in a loop of the two).
// acc[b] gets, for BT activation rows, lane i += sum over the groups of
// (a[b][4g..4g+3] . (w[i][4g..] + 128)); the caller takes off 128 x the row's activation sum.
// U interleaved accumulators per activation row hide the vpdpbusd latency when BT is small.
template <int BT>
struct MkI8Tile {
  static constexpr int U = BT >= 8 ? 1 : (BT >= 4 ? 2 : 4);
  // at: the slice's activations in groups of 4 columns (kGroupBytes per group, word b = row b;
  // transpose_groups). noinline: inlined into I8Tiles::tile, GCC 12 kept acc in that function's
  // stack array, a load and a store around every vpdpbusd.
  [[gnu::noinline]] static void run(const int8_t* w, int64_t ngroups, const uint8_t* at,
                                    bool prefetch, __m512i* acc_io) {
    __m512i acc[BT][U];
#pragma GCC unroll 16
    for (int b = 0; b < BT; ++b) {
      acc[b][0] = acc_io[b];
#pragma GCC unroll 4
      for (int u = 1; u < U; ++u) acc[b][u] = _mm512_setzero_si512();
    }
    const auto word = [at](int64_t g, int b) {
      return reinterpret_cast<const int8_t*>(at + g * kGroupBytes + b * 4);
    };
    const __m512i flip = _mm512_set1_epi8(static_cast<char>(0x80));  // s8 w -> u8 w + 128
    int64_t g = 0;
    for (; g + U <= ngroups; g += U) {
      if (prefetch) {
        _mm_prefetch(reinterpret_cast<const char*>(w + g * kI8Group) + kI8TilePrefetch,
                     _MM_HINT_T0);
      }
      __m512i wv[U];
#pragma GCC unroll 4
      for (int u = 0; u < U; ++u)
        wv[u] = _mm512_xor_si512(_mm512_load_si512(w + (g + u) * kI8Group), flip);
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) {
#pragma GCC unroll 4
        for (int u = 0; u < U; ++u) dpbusd_bcast(acc[b][u], wv[u], word(g + u, b));
      }
    }
    for (; g < ngroups; ++g) {
      const __m512i wv = _mm512_xor_si512(_mm512_load_si512(w + g * kI8Group), flip);
#pragma GCC unroll 16
      for (int b = 0; b < BT; ++b) dpbusd_bcast(acc[b][0], wv, word(g, b));
    }
#pragma GCC unroll 16
    for (int b = 0; b < BT; ++b) {
#pragma GCC unroll 4
      for (int u = 1; u < U; ++u) acc[b][0] = _mm512_add_epi32(acc[b][0], acc[b][u]);
      acc_io[b] = acc[b][0];
    }
  }
};

// Calls MkI8Tile<bt>::run for a run-time bt in [1, 16].
template <int BT = 16>
void call_i8_tile(int bt, const int8_t* w, int64_t ngroups, const uint8_t* at, bool prefetch,
                  __m512i* acc) {
  if constexpr (BT >= 1) {
    if (bt == BT) {
      MkI8Tile<BT>::run(w, ngroups, at, prefetch, acc);
    } else {
      call_i8_tile<BT - 1>(bt, w, ngroups, at, prefetch, acc);
    }
  }
}

// int4 tile kernel over one 16-row tile (matmul.h layout: an Int4SuperBlock per 64 columns,
// scales first). s8 activations x u8 nibbles q with vpdpbusd; per block of 32 columns the
// int32 sum starts from corr = -8 * sum(activations) (so it is sum (q - 8) a), is converted to
// f32 and multiplied by the 16 rows' scales into acc[b]. The weights are unpacked once per
// block for all BT activation rows (both nibbles shifted into place, so each row's block is
// one chain of 8 vpdpbusd), and the accumulators stay in registers for the tile: int4 4096 x
// 14336 and 14336 x 4096 at batch 16 and 32 took 5-10% less than with the high nibbles
// multiplied by 16 and shifted back per row and acc in memory (three interleaved rounds,
// 2026-11-30).
template <int BT>
struct MkI4Tile {
  // at, corr_t: the slice's activations and corrections by group (transpose_groups): word b of
  // group g at at + g * kGroupBytes + 4 b, block j's corrections at corr_t + 16 j.
  static void run(const uint8_t* w, int64_t nsb, const uint8_t* at, const int32_t* corr_t,
                  bool prefetch, __m512* acc_io) {
    const __m512i low4 = _mm512_set1_epi8(0x0f);
    // Accumulators in registers for the whole tile: stores through acc_io could alias the
    // char-typed activation loads, so the compiler kept them in memory.
    __m512 acc[BT];
#pragma GCC unroll 16
    for (int b = 0; b < BT; ++b) acc[b] = acc_io[b];
    for (int64_t sb = 0; sb < nsb; ++sb) {
      const uint8_t* p = w + sb * kI4SuperBlock;
      if (prefetch) {
#pragma GCC unroll 9
        for (int line = 0; line < kI4Lines; ++line) {
          _mm_prefetch(reinterpret_cast<const char*>(p) + kI4TilePrefetch + 64 * line, _MM_HINT_T0);
        }
      }
      const __m512i sc_raw = _mm512_load_si512(p);  // both blocks' scales
#pragma GCC unroll 2
      for (int h = 0; h < 2; ++h) {
        const __m256i sc16 =
            h == 0 ? _mm512_castsi512_si256(sc_raw) : _mm512_extracti64x4_epi64(sc_raw, 1);
        const __m512 scale =
            _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(sc16), 16));
        // Both nibbles unpacked once per block for all BT activation rows.
        __m512i lo[4], hi[4];
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
          const __m512i z = _mm512_load_si512(p + kI4Nibbles + (4 * h + q) * kI4Group);
          lo[q] = _mm512_and_si512(z, low4);
          hi[q] = _mm512_and_si512(_mm512_srli_epi16(z, 4), low4);
        }
        const int64_t blk = 2 * sb + h;
        const uint8_t* ablk = at + blk * 8 * kGroupBytes;
#pragma GCC unroll 16
        for (int b = 0; b < BT; ++b) {
          const auto word = [ablk, b](int g) {
            return reinterpret_cast<const int8_t*>(ablk + g * kGroupBytes + 4 * b);
          };
          __m512i d = _mm512_set1_epi32(corr_t[blk * 16 + b]), e = _mm512_setzero_si512();
#pragma GCC unroll 4
          for (int q = 0; q < 4; ++q) {
            dpbusd_bcast(d, lo[q], word(q));
            dpbusd_bcast(e, hi[q], word(4 + q));
          }
          d = _mm512_add_epi32(d, e);
          acc[b] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), scale, acc[b]);
        }
      }
    }
#pragma GCC unroll 16
    for (int b = 0; b < BT; ++b) acc_io[b] = acc[b];
  }
};

// One activation row against NT 16-row tiles at once (int8 and int4, batch 1): NT independent
// weight streams per thread, and each activation broadcast serves all of them. On the 2-vCPU
// development VM a read loop with 4 streams per thread reached 72 GB/s where one stream reached
// 57 (median of 7, side by side, 2026-11-30); one tile per pass is one stream. Measured on
// 4096 x 14336 (five interleaved runs each, medians): int8 47.5 GB/s with 1 tile at a time,
// 54.6 with 2, 65.5 with 4, 41.9 with 8; int4 40.0, 40.6, 44.8 and 34.1, and 48.7 with 4
// tiles and the software prefetch below (int8 gained nothing from it: 63.2).
constexpr int kStreams = 4;

template <int NT>
void i8_row_tiles(const int8_t* const* w, int64_t ngroups, const uint8_t* a, __m512i* acc_io) {
  __m512i acc[NT][2];
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) {
    acc[t][0] = acc_io[t];
    acc[t][1] = _mm512_setzero_si512();
  }
  int64_t g = 0;
  for (; g + 2 <= ngroups; g += 2) {
#pragma GCC unroll 2
    for (int u = 0; u < 2; ++u) {
      int32_t a4;
      std::memcpy(&a4, a + (g + u) * 4, 4);
      const __m512i av = _mm512_set1_epi32(a4);
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        acc[t][u] =
            _mm512_dpbusd_epi32(acc[t][u], av, _mm512_load_si512(w[t] + (g + u) * kI8Group));
      }
    }
  }
  for (; g < ngroups; ++g) {
    int32_t a4;
    std::memcpy(&a4, a + g * 4, 4);
    const __m512i av = _mm512_set1_epi32(a4);
#pragma GCC unroll 4
    for (int t = 0; t < NT; ++t) {
      acc[t][0] = _mm512_dpbusd_epi32(acc[t][0], av, _mm512_load_si512(w[t] + g * kI8Group));
    }
  }
#pragma GCC unroll 4
  for (int t = 0; t < NT; ++t) acc_io[t] = _mm512_add_epi32(acc[t][0], acc[t][1]);
}

template <int NT>
void i4_row_tiles(const uint8_t* const* w, int64_t nsb, const int8_t* a, const int32_t* corr,
                  __m512* acc) {
  const __m512i low4 = _mm512_set1_epi8(0x0f);
  for (int64_t sb = 0; sb < nsb; ++sb) {
#pragma GCC unroll 2
    for (int h = 0; h < 2; ++h) {
      const int64_t blk = 2 * sb + h;
      const int8_t* ab = a + blk * 32;
      __m512i alo[4], ahi[4];
#pragma GCC unroll 4
      for (int q = 0; q < 4; ++q) {
        int32_t v_lo, v_hi;
        std::memcpy(&v_lo, ab + 4 * q, 4);
        std::memcpy(&v_hi, ab + 16 + 4 * q, 4);
        alo[q] = _mm512_set1_epi32(v_lo);
        ahi[q] = _mm512_set1_epi32(v_hi);
      }
      const __m512i c = _mm512_set1_epi32(corr[blk]);
#pragma GCC unroll 4
      for (int t = 0; t < NT; ++t) {
        const uint8_t* p = w[t] + sb * kI4SuperBlock;
        if (h == 0) {
#pragma GCC unroll 9
          for (int line = 0; line < kI4Lines; ++line) {
            _mm_prefetch(reinterpret_cast<const char*>(p) + kPrefetch + 64 * line, _MM_HINT_T0);
          }
        }
        const __m256i sc16 = _mm256_load_si256(reinterpret_cast<const __m256i*>(p + kI4Scales * h));
        const __m512 scale =
            _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(sc16), 16));
        __m512i d0 = c, d1 = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int q = 0; q < 4; ++q) {
          const __m512i z = _mm512_load_si512(p + kI4Nibbles + (4 * h + q) * kI4Group);
          d0 = _mm512_dpbusd_epi32(d0, _mm512_and_si512(z, low4), alo[q]);
          d1 = _mm512_dpbusd_epi32(d1, _mm512_andnot_si512(low4, z), ahi[q]);
        }
        const __m512i d = _mm512_add_epi32(d0, _mm512_srai_epi32(d1, 4));
        acc[t] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(d), scale, acc[t]);
      }
    }
  }
}

// Calls MkI4Tile<bt>::run for a run-time bt in [1, 16].
template <int BT = 16>
void call_i4_tile(int bt, const uint8_t* w, int64_t nsb, const uint8_t* at, const int32_t* corr_t,
                  bool prefetch, __m512* acc) {
  if constexpr (BT >= 1) {
    if (bt == BT) {
      MkI4Tile<BT>::run(w, nsb, at, corr_t, prefetch, acc);
    } else {
      call_i4_tile<BT - 1>(bt, w, nsb, at, corr_t, prefetch, acc);
    }
  }
}

// Calls K<R, bt>::run for a run-time bt in [1, kBT].
template <template <int, int> class K, int R, class... Args>
void call_bt(int bt, Args... args) {
  static_assert(kBT == 4);
  switch (bt) {
    case 1:
      K<R, 1>::run(args...);
      break;
    case 2:
      K<R, 2>::run(args...);
      break;
    case 3:
      K<R, 3>::run(args...);
      break;
    default:
      K<R, 4>::run(args...);
      break;
  }
}

// ---------------------------------------------------------------------------------------------
// Weight dequantisation into an f32 tile (fallback when BF16 / VNNI are absent).

void dequant_segment(const PackedWeights& w, int64_t r, int64_t k0, int64_t kl, float* dst) {
  const int64_t cols = w.cols();
  switch (w.format()) {
    case WeightFormat::kF32:
      break;  // not used: f32 weights are read in place
    case WeightFormat::kBf16: {
      const uint16_t* src = static_cast<const uint16_t*>(w.data()) + r * cols + k0;
      for (int64_t c = 0; c < kl; c += 16) {
        const __m256i h = _mm256_maskz_loadu_epi16(tail16(kl - c), src + c);
        const __m512i u = _mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16);
        _mm512_store_ps(dst + c, _mm512_castsi512_ps(u));
      }
      break;
    }
    case WeightFormat::kInt8: {
      // 16-row tiles of 4-column groups (Int8Group, matmul.h); k0 is a multiple of 4. A gather
      // of 4 groups gives 16 consecutive weights of the row.
      const int64_t groups = (cols + 3) / 4;
      const int8_t* src = static_cast<const int8_t*>(w.data()) + (r / 16) * groups * kI8Group +
                          (r % 16) * 4 + (k0 / 4) * kI8Group;
      const __m512 scale = _mm512_set1_ps(w.row_scales()[static_cast<size_t>(r)]);
      static_assert(kI8Group == 64);  // the gather's stride
      const __m128i idx = _mm_setr_epi32(0, 64, 128, 192);
      for (int64_t c = 0; c < kl; c += 16) {
        const int64_t left_groups = (kl - c + 3) / 4;
        const __mmask8 m = left_groups >= 4 ? 0xf : static_cast<__mmask8>((1u << left_groups) - 1);
        const __m128i b =
            _mm_mmask_i32gather_epi32(_mm_setzero_si128(), m, idx, src + (c / 4) * kI8Group, 1);
        _mm512_store_ps(dst + c, _mm512_mul_ps(scale, _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(b))));
      }
      break;
    }
    case WeightFormat::kInt4: {
      // Int4SuperBlocks of 16-row tiles (matmul.h); a gather of row r's 4 bytes from the 4
      // groups of block j gives its 16 nibble bytes in Q4_0 order. k0 is a multiple of 32.
      const int64_t tile = (r / 16) * ((cols + 63) / 64) * kI4SuperBlock;
      const auto* bytes = static_cast<const uint8_t*>(w.data()) + tile;
      static_assert(kI4Group == 64);  // the gather's stride
      const __m128i idx = _mm_setr_epi32(0, 64, 128, 192);
      const __m128i low4 = _mm_set1_epi8(0x0f);
      const __m512 eight = _mm512_set1_ps(8.0f);
      for (int64_t j = 0; j < kl / 32; ++j) {
        const int64_t blk = k0 / 32 + j, sb = (blk / 2) * kI4SuperBlock, h = blk % 2;
        uint16_t scale_bf16;
        std::memcpy(&scale_bf16, bytes + sb + kI4Scales * h + (r % 16) * 2, 2);
        const __m512 scale =
            _mm512_castsi512_ps(_mm512_set1_epi32(static_cast<int32_t>(scale_bf16) << 16));
        const __m128i n = _mm_i32gather_epi32(
            reinterpret_cast<const int*>(bytes + sb + kI4Nibbles + 4 * h * kI4Group + (r % 16) * 4),
            idx, 1);
        const __m128i lo = _mm_and_si128(n, low4);
        const __m128i hi = _mm_and_si128(_mm_srli_epi16(n, 4), low4);
        const __m512 flo = _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(lo)), eight);
        const __m512 fhi = _mm512_sub_ps(_mm512_cvtepi32_ps(_mm512_cvtepu8_epi32(hi)), eight);
        _mm512_store_ps(dst + j * 32, _mm512_mul_ps(scale, flo));
        _mm512_store_ps(dst + j * 32 + 16, _mm512_mul_ps(scale, fhi));
      }
      break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Per-format tile drivers: tile<R>(ctx, r0) computes rows [r0, r0 + R) for the whole batch.

/// Weights used as stored (f32 with MkF32, bf16 with MkBf16 and bf16 activations).
template <typename T, template <int, int> class Mk>
struct DirectTile {
  template <int R>
  static void tile(const Ctx& c, int64_t r0) {
    const T* w = static_cast<const T*>(c.w->data()) + r0 * c.cols;
    const T* act = static_cast<const T*>(c.act);
    for (int64_t k0 = 0; k0 < c.cols; k0 += c.kc) {
      const int64_t kl = std::min(c.kc, c.cols - k0);
      for (int64_t b0 = 0; b0 < c.batch; b0 += kBT) {
        const int bt = static_cast<int>(std::min<int64_t>(kBT, c.batch - b0));
        float out[kBT * R];
        call_bt<Mk, R>(bt, w + k0, c.cols, act + b0 * c.lda + k0, c.lda, kl, out);
        store(c, r0, R, b0, bt, out, R, k0 == 0);
      }
    }
  }
};
using F32Direct = DirectTile<float, MkF32>;
using Bf16Dot = DirectTile<uint16_t, MkBf16>;

struct DequantF32 {
  template <int R>
  static void tile(const Ctx& c, int64_t r0) {
    float* t = static_cast<float*>(t_tile.get(R * c.kc * 4));
    const float* act = static_cast<const float*>(c.act);
    for (int64_t k0 = 0; k0 < c.cols; k0 += c.kc) {
      const int64_t kl = std::min(c.kc, c.cols - k0);
      for (int r = 0; r < R; ++r) dequant_segment(*c.w, r0 + r, k0, kl, t + r * c.kc);
      for (int64_t b0 = 0; b0 < c.batch; b0 += kBT) {
        const int bt = static_cast<int>(std::min<int64_t>(kBT, c.batch - b0));
        float out[kBT * R];
        call_bt<MkF32, R>(bt, static_cast<const float*>(t), c.kc, act + b0 * c.lda + k0, c.lda, kl,
                          out);
        store(c, r0, R, b0, bt, out, R, k0 == 0);
      }
    }
  }
};

// The int8 weight rows [r0, r0 + 16)'s scales and 128 x their sums (masked to the matrix).
inline __m512 i8_row_scales(const Ctx& c, int64_t r0, __mmask16 rmask) {
  return _mm512_maskz_loadu_ps(rmask, c.w->row_scales().data() + r0);
}
inline __m512i i8_row_sums128(const Ctx& c, int64_t r0, __mmask16 rmask) {
  return _mm512_slli_epi32(_mm512_maskz_loadu_epi32(rmask, c.w->row_sums().data() + r0), 7);
}

// y[b][r0 .. r0 + 16) = scale_w * scale_x * (sums - offset), from the f32 sums: offset is
// 128 sum w per row at batch 1 (sums of (xq + 128) w) and 128 sum xq of row b above (sums of
// xq (w + 128)).
inline void store_i8_row(const Ctx& c, int64_t r0, __mmask16 rmask, __m512 ws, __m512 offset,
                         int64_t b, __m512 sums) {
  const __m512 d = _mm512_sub_ps(sums, offset);
  _mm512_mask_storeu_ps(c.y + b * c.rows + r0, rmask,
                        _mm512_mul_ps(_mm512_mul_ps(d, ws), _mm512_set1_ps(c.sx[b])));
}

// One 16-row tile of an int8 matrix for the whole batch: activation rows in slices of up to
// 16, each slice over column chunks of c.kc (all columns unless they could overflow int32),
// the weight tile streamed from memory by the first slice and re-read from L2 by the others.
struct I8Tiles {
  static constexpr int kSlice = 16;
  static void tile(const Ctx& c, int64_t t) {
    const int64_t groups = (c.cols + 3) / 4;
    const int8_t* w = static_cast<const int8_t*>(c.w->data()) + t * groups * kI8Group;
    const int64_t r0 = t * 16;
    const int nr = static_cast<int>(std::min<int64_t>(16, c.rows - r0));
    const __mmask16 rmask = tail16(nr);
    const __m512 ws = i8_row_scales(c, r0, rmask);
    const int64_t kg = c.kc / 4;  // groups per chunk
    for (int64_t b0 = 0; b0 < c.batch; b0 += kSlice) {
      const int bt = static_cast<int>(std::min<int64_t>(kSlice, c.batch - b0));
      __m512 yf[kSlice];
      for (int b = 0; b < bt; ++b) yf[b] = _mm512_setzero_ps();
      for (int64_t g0 = 0; g0 < groups; g0 += kg) {
        const int64_t ng = std::min(kg, groups - g0);
        __m512i acc[kSlice];
        for (int b = 0; b < bt; ++b) acc[b] = _mm512_setzero_si512();
        call_i8_tile(bt, w + g0 * kI8Group, ng,
                     c.act_t + b0 / 16 * c.slice_bytes + g0 * kGroupBytes, b0 == 0, acc);
        for (int b = 0; b < bt; ++b) yf[b] = _mm512_add_ps(yf[b], _mm512_cvtepi32_ps(acc[b]));
      }
      for (int b = 0; b < bt; ++b) {
        const float asum128 = 128.0f * static_cast<float>(c.act_sums[b0 + b]);
        store_i8_row(c, r0, rmask, ws, _mm512_set1_ps(asum128), b0 + b, yf[b]);
      }
    }
  }
};

// One 16-row tile of an int4 matrix for the whole batch, activation rows in slices of up to
// 16 (the tile is streamed from memory by the first slice, re-read from L2 by the others).
struct I4Tiles {
  static constexpr int kSlice = 16;
  static void tile(const Ctx& c, int64_t t) {
    const int64_t nsb = (c.cols + 63) / 64;
    const uint8_t* w = static_cast<const uint8_t*>(c.w->data()) + t * nsb * kI4SuperBlock;
    const int64_t r0 = t * 16;
    const __mmask16 rmask = tail16(c.rows - r0);
    for (int64_t b0 = 0; b0 < c.batch; b0 += kSlice) {
      const int bt = static_cast<int>(std::min<int64_t>(kSlice, c.batch - b0));
      __m512 acc[kSlice];
      for (int b = 0; b < bt; ++b) acc[b] = _mm512_setzero_ps();
      call_i4_tile(bt, w, nsb, c.act_t + b0 / 16 * c.slice_bytes, c.corr_t + b0 / 16 * c.corr_slice,
                   b0 == 0, acc);
      for (int b = 0; b < bt; ++b) {
        _mm512_mask_storeu_ps(c.y + (b0 + b) * c.rows + r0, rmask,
                              _mm512_mul_ps(acc[b], _mm512_set1_ps(c.sx[b0 + b])));
      }
    }
  }
};

// Batch 1: kStreams tiles of an int8 / int4 matrix at once (i8_row_tiles / i4_row_tiles),
// the tiles left over one at a time.
struct RowTiles {
  static void i8(const Ctx& c, int64_t t0, int64_t nt) {
    const int64_t groups = (c.cols + 3) / 4;
    const int64_t kg = c.kc / 4;  // groups per chunk (int32 exactness, as in I8Tiles)
    const uint8_t* act = static_cast<const uint8_t*>(c.act);
    __m512 yf[kStreams];
    for (int i = 0; i < nt; ++i) yf[i] = _mm512_setzero_ps();
    for (int64_t g0 = 0; g0 < groups; g0 += kg) {
      const int64_t ng = std::min(kg, groups - g0);
      const int8_t* w[kStreams];
      __m512i acc[kStreams];
      for (int i = 0; i < nt; ++i) {
        w[i] =
            static_cast<const int8_t*>(c.w->data()) + (t0 + i) * groups * kI8Group + g0 * kI8Group;
        acc[i] = _mm512_setzero_si512();
      }
      if (nt == kStreams) {
        i8_row_tiles<kStreams>(w, ng, act + g0 * 4, acc);
      } else {
        for (int i = 0; i < nt; ++i) i8_row_tiles<1>(w + i, ng, act + g0 * 4, acc + i);
      }
      for (int i = 0; i < nt; ++i) yf[i] = _mm512_add_ps(yf[i], _mm512_cvtepi32_ps(acc[i]));
    }
    for (int i = 0; i < nt; ++i) {
      const int64_t r0 = (t0 + i) * 16;
      const __mmask16 rmask = tail16(c.rows - r0);
      store_i8_row(c, r0, rmask, i8_row_scales(c, r0, rmask),
                   _mm512_cvtepi32_ps(i8_row_sums128(c, r0, rmask)), 0, yf[i]);
    }
  }
  static void i4(const Ctx& c, int64_t t0, int64_t nt) {
    const int64_t nsb = (c.cols + 63) / 64;
    const uint8_t* w[kStreams];
    __m512 acc[kStreams];
    for (int i = 0; i < nt; ++i) {
      w[i] = static_cast<const uint8_t*>(c.w->data()) + (t0 + i) * nsb * kI4SuperBlock;
      acc[i] = _mm512_setzero_ps();
    }
    const int8_t* act = static_cast<const int8_t*>(c.act);
    if (nt == kStreams) {
      i4_row_tiles<kStreams>(w, nsb, act, c.corr, acc);
    } else {
      for (int i = 0; i < nt; ++i) i4_row_tiles<1>(w + i, nsb, act, c.corr, acc + i);
    }
    for (int i = 0; i < nt; ++i) {
      const int64_t r0 = (t0 + i) * 16;
      _mm512_mask_storeu_ps(c.y + r0, tail16(c.rows - r0),
                            _mm512_mul_ps(acc[i], _mm512_set1_ps(c.sx[0])));
    }
  }
};

// Tiles [0, tiles) over the pool: with `row_tiles` (batch 1) kStreams at a time, else one.
template <class TileFn, class GroupFn>
void run_tiles(const Ctx& c, ThreadPool& pool, bool row_tiles, TileFn tile, GroupFn group) {
  const int64_t tiles = (c.rows + 15) / 16;
  pool.parallel_for(tiles, [&](int64_t begin, int64_t end, int) {
    if (!row_tiles) {
      for (int64_t t = begin; t < end; ++t) tile(c, t);
      return;
    }
    int64_t t = begin;
    for (; t + kStreams <= end; t += kStreams) group(c, t, kStreams);
    if (t < end) group(c, t, end - t);
  });
}

// Rows [0, c.rows) over the pool in tiles of R rows (Driver::tile<R>), the rest one by one.
template <class Driver, int R = kR>
void run(const Ctx& c, ThreadPool& pool) {
  pool.parallel_for(
      c.rows,
      [&c](int64_t begin, int64_t end, int) {
        for (int64_t r0 = begin; r0 < end; r0 += R) {
          if (end - r0 >= R) {
            Driver::template tile<R>(c, r0);
          } else {
            for (int64_t r = r0; r < end; ++r) Driver::template tile<1>(c, r);
          }
        }
      },
      R);
}

// The common part of a call's context. One extra 64-element block per activation row: with rows
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

}  // namespace

// The entries of the AVX-512 kernel tables (dispatch.cpp): one per weight format and path.

void matmul_avx512_f32(const PackedWeights& w, const float* x, int64_t batch, float* y,
                       ThreadPool& pool) {
  Ctx c = make_ctx(w, batch, y);
  auto* a = static_cast<float*>(t_act.get(batch * c.lda * 4));
  prep_f32(x, batch, c.cols, c.lda, a);
  c.act = a;
  c.kc = batch <= kBT ? c.cols : 1024;
  run<F32Direct>(c, pool);
}

void matmul_avx512_bf16_dot(const PackedWeights& w, const float* x, int64_t batch, float* y,
                            ThreadPool& pool) {
  Ctx c = make_ctx(w, batch, y);
  auto* a = static_cast<uint16_t*>(t_act.get(batch * c.lda * 2));
  prep_bf16(x, batch, c.cols, c.lda, a);
  c.act = a;
  c.kc = batch <= kBT ? c.cols : 2048;
  if (batch == 1) {
    run<Bf16Dot, kRBf16Batch1>(c, pool);
  } else {
    run<Bf16Dot>(c, pool);
  }
}

void matmul_avx512_int8_vnni(const PackedWeights& w, const float* x, int64_t batch, float* y,
                             ThreadPool& pool) {
  Ctx c = make_ctx(w, batch, y);
  const int64_t act_bytes = round_up(batch * c.lda, 64);
  const int64_t groups = (c.cols + 3) / 4;
  c.slice_bytes = groups * kGroupBytes;
  const int64_t at_bytes = batch > 1 ? (batch + 15) / 16 * c.slice_bytes : 0;
  auto* base = static_cast<uint8_t*>(t_act.get(act_bytes + at_bytes + batch * 8));
  auto* sx = reinterpret_cast<float*>(base + act_bytes + at_bytes);
  // Batch 1: u8 activations (xq + 128) against s8 weights (i8_row_tiles); larger batches:
  // s8 activations against u8 weights (MkI8Tile), by group.
  prep_int8(x, batch, c.cols, c.lda, batch == 1, base, sx, static_cast<int32_t*>(nullptr), 0);
  if (batch > 1) {
    auto* sums = reinterpret_cast<int32_t*>(sx + batch);
    row_sums_s8(base, batch, c.lda, sums);
    transpose_groups(base, batch, c.lda, groups, c.slice_bytes, base + act_bytes);
    c.act_t = base + act_bytes;
    c.act_sums = sums;
  }
  c.act = base;
  c.sx = sx;
  // int32 sums stay exact for chunks of <= 32768 columns (255 * 127 * 32768 < 2^31);
  // chunks are summed in f32.
  c.kc = 32768;
  run_tiles(c, pool, batch == 1, I8Tiles::tile, RowTiles::i8);
}

void matmul_avx512_int4_vnni(const PackedWeights& w, const float* x, int64_t batch, float* y,
                             ThreadPool& pool) {
  Ctx c = make_ctx(w, batch, y);
  const int64_t act_bytes = round_up(batch * c.lda, 64);
  c.ldc = c.lda / 32;
  const int64_t corr_bytes = round_up(batch * c.ldc * 4, 64);
  // Batches > 1: activations and corrections also by group (transpose_groups).
  const int64_t groups = c.lda / 4, blocks = c.ldc, slices = (batch + 15) / 16;
  c.slice_bytes = groups * kGroupBytes;
  c.corr_slice = blocks * 16;
  const int64_t t_bytes = batch > 1 ? slices * (c.slice_bytes + c.corr_slice * 4) : 0;
  auto* base = static_cast<uint8_t*>(t_act.get(act_bytes + corr_bytes + t_bytes + batch * 4));
  auto* corr = reinterpret_cast<int32_t*>(base + act_bytes);  // batch x lda/32 int32
  auto* sx = reinterpret_cast<float*>(base + act_bytes + corr_bytes + t_bytes);
  prep_int8(x, batch, c.cols, c.lda, false, base, sx, corr, c.ldc);
  if (batch > 1) {
    uint8_t* at = base + act_bytes + corr_bytes;
    uint8_t* ct = at + slices * c.slice_bytes;
    transpose_groups(base, batch, c.lda, groups, c.slice_bytes, at);
    transpose_groups(reinterpret_cast<const uint8_t*>(corr), batch, c.ldc * 4, blocks,
                     c.corr_slice * 4, ct);
    c.act_t = at;
    c.corr_t = reinterpret_cast<const int32_t*>(ct);
  }
  c.act = base;
  c.sx = sx;
  c.corr = corr;
  run_tiles(c, pool, batch == 1, I4Tiles::tile, RowTiles::i4);
}

void matmul_avx512_dequant(const PackedWeights& w, const float* x, int64_t batch, float* y,
                           ThreadPool& pool) {
  // Dequantise tiles to f32, f32 FMA.
  Ctx c = make_ctx(w, batch, y);
  auto* a = static_cast<float*>(t_act.get(batch * c.lda * 4));
  prep_f32(x, batch, c.cols, c.lda, a);
  c.act = a;
  c.kc = 1024;
  run<DequantF32>(c, pool);
}

}  // namespace llmcap::kernels::detail
