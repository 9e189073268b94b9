// AVX2 + FMA decode attention (compiled with -mavx2 -mfma -mf16c; runs only when
// isa_supported(Isa::kAvx2)). Same scheme as attention_avx512.cpp with 8-lane vectors: blocks of
// 16 tokens, q.k for up to 4 heads per K row load (bf16: two pairs of heads over three rows), two
// 8-way transpose-add reductions per head, online softmax once per block, p.V with 4 heads x 16
// dims of accumulators in registers; bf16 rows are widened with the even/odd split (below).
// head_dim elements past the last multiple of 8 (f32) or 16 (bf16) are done in scalar code.

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "kernels/attention_internal.h"
#include "kernels/simd_avx2.h"

namespace llmcap::kernels::detail {

namespace {

constexpr int kBlock = 16;
constexpr int kMaxHeads = 4;
constexpr int kMaxVecs = 2;

template <bool kBf16>
inline __m256 load8(const void* base, int64_t i) {
  if constexpr (kBf16) {
    const __m128i h =
        _mm_loadu_si128(reinterpret_cast<const __m128i*>(static_cast<const uint16_t*>(base) + i));
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
  } else {
    return _mm256_loadu_ps(static_cast<const float*>(base) + i);
  }
}

template <bool kBf16>
inline float load1(const void* base, int64_t i) {
  if constexpr (kBf16) {
    const uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t*>(base)[i]) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
  } else {
    return static_cast<const float*>(base)[i];
  }
}

/// Lane j of the result = sum of the 8 lanes of v[j].
inline __m256 reduce8(const __m256* v) {
  __m256 s4[4], s2[2];
  for (int i = 0; i < 4; ++i) {
    s4[i] = _mm256_add_ps(_mm256_unpacklo_ps(v[2 * i], v[2 * i + 1]),
                          _mm256_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  }
  for (int i = 0; i < 2; ++i) {
    s2[i] = _mm256_add_ps(_mm256_shuffle_ps(s4[2 * i], s4[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                          _mm256_shuffle_ps(s4[2 * i], s4[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  }
  return _mm256_add_ps(_mm256_permute2f128_ps(s2[0], s2[1], 0x20),
                       _mm256_permute2f128_ps(s2[0], s2[1], 0x31));
}

inline float hmax(__m256 v) {
  __m128 x = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_max_ps(x, _mm_movehl_ps(x, x));
  x = _mm_max_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

struct Shape {
  int64_t d;          // head_dim
  int64_t dv;         // full vectors of 8 per row; elements [dv * 8, d) are scalar
  int64_t row_bytes;  // bytes of one K or V row
  int64_t tokens;     // rows in the piece
};

/// Software prefetch of the row 4 KiB ahead of row t of a K or V stream (16 rows of a 128-dim
/// bf16 head, 8 of an f32 one), from inside the compute loops (see prefetch_row in
/// attention_avx512.cpp: the hardware prefetchers lose these streams at every 4 KiB page, and a
/// whole block's prefetches in one burst stall the core). Measured on the AMD EPYC (Zen 3, AVX2
/// only) VM of 2026-11-30, 2 threads, Llama-8B shapes, alternating runs of separate builds:
/// without any prefetch bf16 KV in natural order read 3.1-4.1 GB/s from DRAM, with 16 rows ahead
/// 7.4-10.0; f32 KV 5.0-8.9 without, 7.1-8.3 with 16 rows (8 KiB) ahead, 59-64% of the read
/// bandwidth with 4 KiB ahead against 48-55% with 8 KiB (two pairs); 2 KiB ahead was worse for
/// bf16 (52-66% against 71-82%), 8 KiB into L2 (T1) no better than 4 KiB into L1. (In a quieter
/// hour of the same day, no prefetch had looked better for f32; later alternating runs did not
/// confirm it.)
// always_inline: when a variant of a prefetch-only helper like this was not forced inline,
// GCC 12 -O3 left no prefetch at all in the object (apparently its ipa-modref analysis sees
// no side effect; docs/kernels.md).
[[gnu::always_inline]] inline void prefetch_row(const Shape& s, const void* base, int64_t t) {
  const int64_t ahead = std::max<int64_t>(1, 4096 / s.row_bytes);
  if (t + ahead >= s.tokens) return;
  const char* row = static_cast<const char*>(base) + (t + ahead) * s.row_bytes;
  for (int64_t b = 0; b < s.row_bytes; b += 64) _mm_prefetch(row + b, _MM_HINT_T0);
}

/// p.V runs one pass per group of dims over a block's kBlock V rows. Each pass prefetches (with
/// prefetch_row, 4 KiB ahead) its share of the rows, this many, so that the rows ahead are asked
/// for evenly over all the passes rather than all in the first one. (4 KiB ahead is the next
/// block for 128-dim bf16 rows; for rows of more than 256 bytes, such as 128-dim f32, it is
/// half a block, and the passes after the first then ask again for rows the first has read.)
/// Measured back to back against all in the first pass (Zen 3 VM, 2026-12-01, Llama-8B layout,
/// 4,096 tokens, KV from memory, 11-21 rounds, median per-round speed-up): one thread f32 1.09,
/// bf16 1.03, 64-dim bf16 1.04; two threads bf16 1.01 (4,096 tokens), 1.05 (32,768), 1.01 (1,024).
/// One attention piece alone on one thread (bf16, 4,096 tokens, from memory): 1.10-1.19.
inline int v_prefetch_rows_per_pass(int64_t passes) {
  return passes < 1 ? kBlock : static_cast<int>((kBlock + passes - 1) / passes);
}

/// Stores the per-lane partial dot products acc[h][j] of rows t + j to dots[h * 128 + j * 8 ..]
/// and adds the dims from `scalar_from` on (done in scalar code) to lane 0.
template <bool kBf16, int NH, int TT>
inline void store_dots(const Shape& s, int64_t scalar_from, const void* k, int64_t t,
                       const float* q, const __m256 (&acc)[NH][TT], float* dots) {
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h) {
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) {
      float* row = dots + h * 128 + j * 8;
      _mm256_storeu_ps(row, acc[h][j]);
      for (int64_t i = scalar_from; i < s.d; ++i)
        row[0] += q[h * s.d + i] * load1<kBf16>(k, (t + j) * s.d + i);
    }
  }
}

/// dots[h * 128 + tt * 8 + lane]: per-lane partial q_h . k_{t + tt} (scalar tail in lane 0).
template <bool kBf16, int NH, int TT>
inline void qk_tile(const Shape& s, const void* k, int64_t t, const float* q, float* dots) {
#pragma GCC unroll 16
  for (int j = 0; j < TT; ++j) prefetch_row(s, k, t + j);
  __m256 acc[NH][TT];
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) acc[h][j] = _mm256_setzero_ps();
  for (int64_t i = 0; i < s.dv; ++i) {
    __m256 kv[TT];
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) kv[j] = load8<kBf16>(k, (t + j) * s.d + i * 8);
#pragma GCC unroll 16
    for (int h = 0; h < NH; ++h) {
      const __m256 qv = _mm256_loadu_ps(q + h * s.d + i * 8);
#pragma GCC unroll 16
      for (int j = 0; j < TT; ++j) acc[h][j] = _mm256_fmadd_ps(qv, kv[j], acc[h][j]);
    }
  }
  store_dots<kBf16>(s, s.dv * 8, k, t, q, acc, dots);
}

/// acc[h][c*8 .. (c+NV)*8) += sum_{tt < nb} p[h * 16 + tt] * v_{t0 + tt}.
template <bool kBf16, int NH, int NV>
inline void pv_tile(const Shape& s, const void* v, int64_t t0, int nb, int64_t c, const float* p,
                    float* acc) {
  __m256 a[NH][NV];
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) a[h][j] = _mm256_loadu_ps(acc + h * s.d + (c + j) * 8);
  const int64_t pass = c / kMaxVecs;
  const int per = v_prefetch_rows_per_pass((s.dv + kMaxVecs - 1) / kMaxVecs);
  for (int tt = 0; tt < nb; ++tt) {
    if (tt < per && pass * per + tt < kBlock) prefetch_row(s, v, t0 + pass * per + tt);
    __m256 vv[NV];
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) vv[j] = load8<kBf16>(v, (t0 + tt) * s.d + (c + j) * 8);
#pragma GCC unroll 16
    for (int h = 0; h < NH; ++h) {
      const __m256 pb = _mm256_broadcast_ss(p + h * kBlock + tt);
#pragma GCC unroll 16
      for (int j = 0; j < NV; ++j) a[h][j] = _mm256_fmadd_ps(pb, vv[j], a[h][j]);
    }
  }
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) _mm256_storeu_ps(acc + h * s.d + (c + j) * 8, a[h][j]);
}

template <bool kBf16, int NH>
void pv_nv(int nv, const Shape& s, const void* v, int64_t t0, int nb, int64_t c, const float* p,
           float* acc) {
  if (nv == 1) return pv_tile<kBf16, NH, 1>(s, v, t0, nb, c, p, acc);
  return pv_tile<kBf16, NH, 2>(s, v, t0, nb, c, p, acc);
}

/// Calls f.template operator()<NH>() for a run-time nh in [1, kMaxHeads].
template <class F>
void with_heads(int nh, F&& f) {
  static_assert(kMaxHeads == 4);
  switch (nh) {
    case 1:
      return f.template operator()<1>();
    case 2:
      return f.template operator()<2>();
    case 3:
      return f.template operator()<3>();
    default:
      return f.template operator()<4>();
  }
}

template <bool kBf16>
void pv(int nh, int nv, const Shape& s, const void* v, int64_t t0, int nb, int64_t c,
        const float* p, float* acc) {
  with_heads(nh, [&]<int NH>() { pv_nv<kBf16, NH>(nv, s, v, t0, nb, c, p, acc); });
}

template <bool kBf16, int NH>
void qk_heads(const Shape& s, const void* k, int64_t t0, int nb, const float* q, float* dots) {
  int tt = 0;
  for (; tt + 2 <= nb; tt += 2) qk_tile<kBf16, NH, 2>(s, k, t0 + tt, q, dots + tt * 8);
  for (; tt < nb; ++tt) qk_tile<kBf16, NH, 1>(s, k, t0 + tt, q, dots + tt * 8);
}

template <bool kBf16>
void qk(int nh, const Shape& s, const void* k, int64_t t0, int nb, const float* q, float* dots) {
  with_heads(nh, [&]<int NH>() { qk_heads<kBf16, NH>(s, k, t0, nb, q, dots); });
}

// ---- bf16 KV: even/odd split widening (as attend_bf16 of attention_avx512.cpp) ---------------
// A 256-bit load holds 16 bf16. As 8 u32 lanes, (lane << 16) is the f32 of the even element and
// (lane & 0xFFFF0000) that of the odd one: two exact widenings of 8 for one load and two
// single-uop operations, against a load, vpmovzxwd and a shift per 8 in natural order. The
// price is an even/odd order inside each chunk of 16 dims: q is permuted once per piece to
// match, and the p.V accumulators are kept in that order and put back at the end of the piece.
// Dims past the last multiple of 16 are done in scalar code, in natural order. Measured (Zen 3
// VM, 2026-11-30, one thread, Llama-8B shapes, 8 KV heads from L3, four alternating pairs of
// builds): 55-63 ns per (KV head, token) at 256 tokens against 69-77 in natural order, 60-66
// against 78-86 at 1,024.

inline void split_bf16(__m256i raw, __m256& even, __m256& odd) {
  even = _mm256_castsi256_ps(_mm256_slli_epi32(raw, 16));
  odd =
      _mm256_castsi256_ps(_mm256_and_si256(raw, _mm256_set1_epi32(static_cast<int>(0xFFFF0000u))));
}

inline __m256i load16(const uint16_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

/// dots as in qk_tile; qp: rows of nc * 16 floats in even/odd order (nc = d / 16 chunks).
template <int NH, int TT, bool kPrefetch = true>
inline void qk_tile_eo(const Shape& s, int64_t nc, const uint16_t* k, int64_t t, const float* q,
                       const float* qp, float* dots) {
  __m256 acc[NH][TT];
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) acc[h][j] = _mm256_setzero_ps();
  if constexpr (kPrefetch) {
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) prefetch_row(s, k, t + j);
  }
  for (int64_t c = 0; c < nc; ++c) {
    __m256 ke[TT], ko[TT];
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) split_bf16(load16(k + (t + j) * s.d + c * 16), ke[j], ko[j]);
#pragma GCC unroll 16
    for (int h = 0; h < NH; ++h) {
      const __m256 qe = _mm256_loadu_ps(qp + h * nc * 16 + c * 16);
      const __m256 qo = _mm256_loadu_ps(qp + h * nc * 16 + c * 16 + 8);
#pragma GCC unroll 16
      for (int j = 0; j < TT; ++j) {
        acc[h][j] = _mm256_fmadd_ps(qe, ke[j], acc[h][j]);
        acc[h][j] = _mm256_fmadd_ps(qo, ko[j], acc[h][j]);
      }
    }
  }
  store_dots<true>(s, nc * 16, k, t, q, acc, dots);
}

template <int NH>
void qk_eo_heads(const Shape& s, int64_t nc, const uint16_t* k, int64_t t0, int nb, const float* q,
                 const float* qp, float* dots) {
  int tt = 0;
  if constexpr (NH == 4) {
    // Four heads as two pairs over three K rows (K rows loaded twice, from L1): fewer loads per
    // FMA than four heads over two rows (q is a memory operand of every FMA). One thread, 8 KV
    // heads of Llama-8B from L3 (Zen 3 VM, 2026-12-01, eight alternating runs of two builds):
    // 44-46 ns per (KV head, token) against 50-52; from L1 alone 33 TSC ticks per token against
    // 38. The same tiling of f32 rows was slower (11.7-12.0 GB/s against 13.6-14.0).
    for (; tt + 3 <= nb; tt += 3) {
      qk_tile_eo<2, 3>(s, nc, k, t0 + tt, q, qp, dots + tt * 8);
      qk_tile_eo<2, 3, false>(s, nc, k, t0 + tt, q + 2 * s.d, qp + 2 * nc * 16,
                              dots + 2 * 128 + tt * 8);
    }
  }
  for (; tt + 2 <= nb; tt += 2) qk_tile_eo<NH, 2>(s, nc, k, t0 + tt, q, qp, dots + tt * 8);
  for (; tt < nb; ++tt) qk_tile_eo<NH, 1>(s, nc, k, t0 + tt, q, qp, dots + tt * 8);
}

void qk_eo(int nh, const Shape& s, int64_t nc, const uint16_t* k, int64_t t0, int nb,
           const float* q, const float* qp, float* dots) {
  with_heads(nh, [&]<int NH>() { qk_eo_heads<NH>(s, nc, k, t0, nb, q, qp, dots); });
}

/// accp[h][c*16 .. c*16 + 16) (even/odd order, rows of nc * 16) += sum_{tt < nb} p[h * 16 + tt]
/// v_{t0 + tt}.
template <int NH>
inline void pv_tile_eo(const Shape& s, int64_t nc, const uint16_t* v, int64_t t0, int nb, int64_t c,
                       const float* p, float* accp) {
  __m256 a[NH][2];
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 2
    for (int j = 0; j < 2; ++j) a[h][j] = _mm256_loadu_ps(accp + h * nc * 16 + c * 16 + j * 8);
  const int per = v_prefetch_rows_per_pass(nc);
  for (int tt = 0; tt < nb; ++tt) {
    if (tt < per && c * per + tt < kBlock) prefetch_row(s, v, t0 + c * per + tt);
    __m256 ve, vo;
    split_bf16(load16(v + (t0 + tt) * s.d + c * 16), ve, vo);
#pragma GCC unroll 16
    for (int h = 0; h < NH; ++h) {
      const __m256 pb = _mm256_broadcast_ss(p + h * kBlock + tt);
      a[h][0] = _mm256_fmadd_ps(pb, ve, a[h][0]);
      a[h][1] = _mm256_fmadd_ps(pb, vo, a[h][1]);
    }
  }
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 2
    for (int j = 0; j < 2; ++j) _mm256_storeu_ps(accp + h * nc * 16 + c * 16 + j * 8, a[h][j]);
}

void pv_eo(int nh, const Shape& s, int64_t nc, const uint16_t* v, int64_t t0, int nb, int64_t c,
           const float* p, float* accp) {
  with_heads(nh, [&]<int NH>() { pv_tile_eo<NH>(s, nc, v, t0, nb, c, p, accp); });
}

template <bool kBf16>
void attend(const AttentionPiece& pc) {
  const int64_t d = pc.head_dim, group = pc.group;
  const Shape s{d, d / 8, d * (kBf16 ? 2 : 4), pc.tokens};
  const int64_t nc = d / 16;  // bf16: chunks of 16 dims in even/odd order
  thread_local std::vector<float> dots_buf, p_buf, qp_buf, accp_buf;
  if (static_cast<int64_t>(dots_buf.size()) < group * 128) dots_buf.resize(group * 128);
  if (static_cast<int64_t>(p_buf.size()) < group * kBlock) p_buf.resize(group * kBlock);
  float* dots = dots_buf.data();
  float* p = p_buf.data();
  float* qp = nullptr;
  float* accp = nullptr;
  if constexpr (kBf16) {
    if (static_cast<int64_t>(qp_buf.size()) < group * nc * 16) {
      qp_buf.resize(group * nc * 16);
      accp_buf.resize(group * nc * 16);
    }
    qp = qp_buf.data();
    accp = accp_buf.data();
    for (int64_t g = 0; g < group; ++g) {
      for (int64_t c = 0; c < nc; ++c) {
        const float* src = pc.q + g * d + c * 16;
        float* dst = qp + (g * nc + c) * 16;
        for (int i = 0; i < 8; ++i) {
          dst[i] = src[2 * i];
          dst[8 + i] = src[2 * i + 1];
        }
      }
    }
    std::fill(accp, accp + group * nc * 16, 0.0f);
  }

  for (int64_t g = 0; g < group; ++g) {
    pc.max[g] = -std::numeric_limits<float>::infinity();
    pc.sum[g] = 0;
  }
  std::memset(pc.acc, 0, sizeof(float) * group * d);
  const __m256 scale = _mm256_set1_ps(pc.scale);
  const __m256 neg_inf = _mm256_set1_ps(-std::numeric_limits<float>::infinity());
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  // Dims done in scalar code, in natural order in pc.acc: past the vectors of 8 (f32) or of the
  // 16-dim chunks (bf16).
  const int64_t scalar_from = kBf16 ? nc * 16 : s.dv * 8;

  for (int64_t t0 = 0; t0 < pc.tokens; t0 += kBlock) {
    const int nb = static_cast<int>(std::min<int64_t>(kBlock, pc.tokens - t0));
    for (int64_t g0 = 0; g0 < group; g0 += kMaxHeads) {
      const int nh = static_cast<int>(std::min<int64_t>(kMaxHeads, group - g0));
      if constexpr (kBf16) {
        qk_eo(nh, s, nc, static_cast<const uint16_t*>(pc.k), t0, nb, pc.q + g0 * d,
              qp + g0 * nc * 16, dots + g0 * 128);
      } else {
        qk<kBf16>(nh, s, pc.k, t0, nb, pc.q + g0 * d, dots + g0 * 128);
      }
    }
    // Lanes of half 0 are tokens 0-7 of the block, of half 1 tokens 8-15.
    const __m256 valid0 = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(nb), lane));
    const __m256 valid1 = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(nb - 8), lane));
    for (int64_t g = 0; g < group; ++g) {
      __m256 rows[16];
      for (int j = 0; j < 16; ++j) {
        rows[j] = j < nb ? _mm256_loadu_ps(dots + g * 128 + j * 8) : _mm256_setzero_ps();
      }
      const __m256 s0 = _mm256_blendv_ps(neg_inf, _mm256_mul_ps(reduce8(rows), scale), valid0);
      const __m256 s1 = _mm256_blendv_ps(neg_inf, _mm256_mul_ps(reduce8(rows + 8), scale), valid1);
      const float block_max = hmax(_mm256_max_ps(s0, s1));
      if (block_max > pc.max[g]) {
        const float alpha = std::exp(pc.max[g] - block_max);  // 0 on the first block
        pc.sum[g] *= alpha;
        float* acc = pc.acc + g * d;
        // bf16: pc.acc holds only the scalar dims until the end of the piece, the rest is accp.
        for (int64_t i = kBf16 ? scalar_from : 0; i < d; ++i) acc[i] *= alpha;
        if constexpr (kBf16) {
          for (int64_t i = 0; i < nc * 16; ++i) accp[g * nc * 16 + i] *= alpha;
        }
        pc.max[g] = block_max;
      }
      const __m256 m = _mm256_set1_ps(pc.max[g]);
      const __m256 p0 = _mm256_and_ps(valid0, exp_ps(_mm256_sub_ps(s0, m)));
      const __m256 p1 = _mm256_and_ps(valid1, exp_ps(_mm256_sub_ps(s1, m)));
      pc.sum[g] += hsum(_mm256_add_ps(p0, p1));
      _mm256_storeu_ps(p + g * kBlock, p0);
      _mm256_storeu_ps(p + g * kBlock + 8, p1);
    }
    for (int64_t g0 = 0; g0 < group; g0 += kMaxHeads) {
      const int nh = static_cast<int>(std::min<int64_t>(kMaxHeads, group - g0));
      if constexpr (kBf16) {
        for (int64_t c = 0; c < nc; ++c) {
          pv_eo(nh, s, nc, static_cast<const uint16_t*>(pc.v), t0, nb, c, p + g0 * kBlock,
                accp + g0 * nc * 16);
        }
      } else {
        for (int64_t c = 0; c < s.dv; c += kMaxVecs) {
          const int nv = static_cast<int>(std::min<int64_t>(kMaxVecs, s.dv - c));
          pv<kBf16>(nh, nv, s, pc.v, t0, nb, c, p + g0 * kBlock, pc.acc + g0 * d);
        }
      }
      for (int64_t i = scalar_from; i < d; ++i) {  // scalar tail of head_dim
        for (int h = 0; h < nh; ++h) {
          float a = pc.acc[(g0 + h) * d + i];
          for (int tt = 0; tt < nb; ++tt)
            a += p[(g0 + h) * kBlock + tt] * load1<kBf16>(pc.v, (t0 + tt) * d + i);
          pc.acc[(g0 + h) * d + i] = a;
        }
      }
    }
  }
  if constexpr (kBf16) {
    for (int64_t g = 0; g < group; ++g) {
      for (int64_t c = 0; c < nc; ++c) {
        const float* src = accp + (g * nc + c) * 16;
        float* dst = pc.acc + g * d + c * 16;
        for (int i = 0; i < 8; ++i) {
          dst[2 * i] = src[i];
          dst[2 * i + 1] = src[8 + i];
        }
      }
    }
  }
}

}  // namespace

void attend_avx2_f32(const AttentionPiece& piece) { attend<false>(piece); }
void attend_avx2_bf16(const AttentionPiece& piece) { attend<true>(piece); }

}  // namespace llmcap::kernels::detail
