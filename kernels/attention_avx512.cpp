// AVX-512 decode attention (compiled with -mavx512f -mavx512bw -mavx512vl -mavx512bf16 ...;
// runs only when isa_supported(Isa::kAvx512)).
//
// Per piece, tokens go in blocks of 16. For each block: the q.k dot products of all query heads
// of the group against each K row (the row is loaded and widened once, then used by up to four
// heads from registers), 16 per-token partial vectors reduced at once by a transpose-add tree;
// the online-softmax update once per block per head; then p.V with the accumulators of up to 4
// heads x 64 dims in registers while the block's V rows stream through. K and V are read from
// memory once per KV head whatever the group size. Rows 16 tokens ahead (24 for bf16 KV) are
// prefetched from inside the loops (prefetch_row).
//
// bf16 KV (attend_bf16): a piece's tokens are read as two halves in lockstep, a block of each
// per step with their rows alternating, so that a thread has four streams in flight (K and V of
// each half) instead of two; the online softmax takes the two blocks as one. Back to back with
// the one-half order (AMD EPYC Zen 5 VM, 2 threads, Llama-3.1-8B layout, KV from memory, 9
// rounds, 2026-12-01): exact path 1.03x at 4,096 tokens and 1.04x at 32,768; with vdpbf16ps for
// q.k and p.V 1.07x and 1.03x. A synthetic read loop on that machine reached 33 GB/s on one
// thread over two streams interleaved line by line, 24-29 over one or two alternating 4 KiB
// blocks.
//
// bf16 KV with head_dim 64 or 128 runs attend_bf16<.., DV = 2 or 4>: its chunk loops and p.V
// passes unrolled at compile time and its tile helpers forced inline (GCC 12 had left the p.V
// row step and reduce16 as calls once the tiles were inlined: 0.65x). Against the previous
// kernel (AMD EPYC Zen 5 VM, one thread, Llama-3.1-8B layout, 4,096 tokens, 2026-12-01): from
// cache 1.25x exact, 1.19x with both dot-product options; from memory (256 MiB of KV) 1.16x
// exact and 1.00x with both options; head_dim 64: 1.11x and 1.12x from memory. Other head_dims
// run the same code with run-time loops (DV = 0): head_dim 80, 1.08x from cache and 1.01x from
// memory.
//
// bf16 rows are widened exactly with the even/odd split (attend_bf16). With
// AttentionPiece::bf16_dot, q is rounded to bf16 once per piece and q.k uses vdpbf16ps
// (AVX512_BF16). Measured on the development machine (AMD EPYC, Zen 4 class, 2 vCPUs): the
// exact even/odd path reaches 18 GB/s per thread on a cache-resident bf16 KV, vdpbf16ps 19 GB/s
// (+5%) and 26.2 vs 27.3 GB/s from DRAM with 2 threads: too little for its 2^-9 relative error
// on q, so it is off by default.
// GCC 12's AVX-512 headers trip -Wmaybe-uninitialized on their own _mm512_undefined_*() idiom.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "kernels/attention_internal.h"
#include "kernels/bf16.h"
#include "kernels/simd_avx512.h"

namespace llmcap::kernels::detail {

namespace {

constexpr int kBlock = 16;  // tokens per online-softmax step
constexpr int kMaxHeads = 4;
constexpr int kMaxVecs = 4;
// dots[h * kDotsHead + row * 16 + lane]: rows 0-15 the first half's block, 16-31 the second's.
constexpr int kDotsHead = 2 * kBlock * 16;

template <bool kBf16>
inline __m512 load16(const void* base, int64_t i, __mmask16 m) {
  if constexpr (kBf16) {
    const __m256i h = _mm256_maskz_loadu_epi16(m, static_cast<const uint16_t*>(base) + i);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
  } else {
    return _mm512_maskz_loadu_ps(m, static_cast<const float*>(base) + i);
  }
}

/// Lane j of the result = sum of the 16 lanes of v[j].
[[gnu::always_inline]] inline __m512 reduce16(const __m512* v) {
  __m512 s8[8], s4[4], s2[2];
  for (int i = 0; i < 8; ++i) {
    s8[i] = _mm512_add_ps(_mm512_unpacklo_ps(v[2 * i], v[2 * i + 1]),
                          _mm512_unpackhi_ps(v[2 * i], v[2 * i + 1]));
  }
  for (int i = 0; i < 4; ++i) {
    s4[i] = _mm512_add_ps(_mm512_shuffle_ps(s8[2 * i], s8[2 * i + 1], _MM_SHUFFLE(1, 0, 1, 0)),
                          _mm512_shuffle_ps(s8[2 * i], s8[2 * i + 1], _MM_SHUFFLE(3, 2, 3, 2)));
  }
  for (int i = 0; i < 2; ++i) {
    s2[i] = _mm512_add_ps(_mm512_shuffle_f32x4(s4[2 * i], s4[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0)),
                          _mm512_shuffle_f32x4(s4[2 * i], s4[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1)));
  }
  return _mm512_add_ps(_mm512_shuffle_f32x4(s2[0], s2[1], _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_f32x4(s2[0], s2[1], _MM_SHUFFLE(3, 1, 3, 1)));
}

struct Shape {
  int64_t d;       // head_dim
  int64_t dv;      // vectors of 16 per row
  __mmask16 tail;  // mask of the last vector
  int64_t dv32;    // vectors of 32 bf16 per row (bf16_dot)
  __mmask32 tail32;
  int64_t row_bytes = 0;  // bytes of one K or V row
  int64_t tokens = 0;     // rows in the piece
  __mmask16 mask(int64_t i) const { return i == dv - 1 ? tail : static_cast<__mmask16>(0xFFFF); }
};

inline Shape make_shape(int64_t d) {
  Shape s;
  s.d = d;
  s.dv = (d + 15) / 16;
  s.tail = d % 16 ? static_cast<__mmask16>((1u << (d % 16)) - 1) : static_cast<__mmask16>(0xFFFF);
  s.dv32 = (d + 31) / 32;
  s.tail32 =
      d % 32 ? static_cast<__mmask32>((1u << (d % 32)) - 1) : static_cast<__mmask32>(0xFFFFFFFFu);
  return s;
}

/// The load mask of chunk c (32 bf16) of a row: all ones but in the last chunk of a head_dim not
/// a multiple of 32. DV > 0 (head_dim exactly 32 * DV): s.tail32, all ones but a run-time value,
/// so that the loads stay masked. With plain loads (head_dim 128, 2026-12-01, one thread, KV
/// from memory) the exact path ran 8% slower: Zen 5's hardware prefetchers, which did not act on
/// the masked loads, then fetched beside the software prefetches. From cache, no difference.
template <int DV>
[[gnu::always_inline]] inline __mmask32 load_mask(const Shape& s, int64_t c) {
  if constexpr (DV > 0) {
    return s.tail32;
  } else {
    return c == s.dv32 - 1 ? s.tail32 : static_cast<__mmask32>(0xFFFFFFFFu);
  }
}

template <int DV>
[[gnu::always_inline]] inline __m512i load_chunk(const Shape& s, const uint16_t* p, int64_t c) {
  return _mm512_maskz_loadu_epi16(load_mask<DV>(s, c), p);
}

/// Software prefetch of row `t` + kPrefetchRows of a K or V stream, issued from inside the
/// compute loops so that a few lines are in flight at any time. The hardware prefetchers lose
/// these streams at every 4 KiB page (a 16-token block of a 128-dim bf16 head is exactly one page
/// and K and V alternate): without this a thread read ~2.5 GB/s from DRAM. Issuing a whole
/// block's prefetches in one burst stalled the core behind them (~11 GB/s per thread, compute
/// and memory time adding up).
// always_inline: when a variant of a prefetch-only helper like this was not forced inline,
// GCC 12 -O3 left no prefetch at all in the object (apparently its ipa-modref analysis sees
// no side effect; docs/kernels.md).
//
// Rows ahead: 16 for f32 KV; 24 for bf16 KV, whose loops issue a row's prefetches spread over
// their chunks and passes (qk_tile_eo, qk_tile_dp, prefetch_pass). Measured with the bf16 loops
// of 2026-12-01 (AMD EPYC Zen 5 VM, one thread, Llama-3.1-8B layout, 256 MiB of KV, 11
// interleaved rounds against the previous kernel): exact path 1.16x at 24 rows, 1.16x at 16,
// 1.07x at 32; both dot-product options 1.00x, 0.94x and 0.87x.
constexpr int64_t kPrefetchRowsF32 = 16;
constexpr int64_t kPrefetchRowsBf16 = 24;

template <int64_t kAhead>
[[gnu::always_inline]] inline void prefetch_row(const Shape& s, const void* base, int64_t t) {
  if (t + kAhead >= s.tokens) return;
  const char* row = static_cast<const char*>(base) + (t + kAhead) * s.row_bytes;
  for (int64_t b = 0; b < s.row_bytes; b += 64) _mm_prefetch(row + b, _MM_HINT_T0);
}

/// The lines of prefetch_row<kPrefetchRowsBf16> that the p.V pass over chunks c and c + 1 reads
/// (bytes [64c, 64(c + 2)) of a bf16 row): each pass prefetches its own, instead of the first
/// pass all of them in a burst (exact path from memory 1.10x, one thread, 2026-12-01).
[[gnu::always_inline]] inline void prefetch_pass(const Shape& s, const void* base, int64_t t,
                                                 int64_t c) {
  if (t + kPrefetchRowsBf16 >= s.tokens) return;
  const char* row = static_cast<const char*>(base) + (t + kPrefetchRowsBf16) * s.row_bytes;
  _mm_prefetch(row + c * 64, _MM_HINT_T0);
  if ((c + 1) * 64 < s.row_bytes) _mm_prefetch(row + c * 64 + 64, _MM_HINT_T0);
}

/// dots[h * kDotsHead + tt * 16 + lane]: per-lane partial q_h . k_{t + tt} for NH heads, TT rows.
template <bool kBf16, int NH, int TT>
inline void qk_tile(const Shape& s, const void* k, int64_t t, const float* q, float* dots) {
#pragma GCC unroll 16
  for (int j = 0; j < TT; ++j) prefetch_row<kPrefetchRowsF32>(s, k, t + j);
  __m512 acc[NH][TT];
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) acc[h][j] = _mm512_setzero_ps();
  for (int64_t i = 0; i < s.dv; ++i) {
    const __mmask16 m = s.mask(i);
    __m512 kv[TT];
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) kv[j] = load16<kBf16>(k, (t + j) * s.d + i * 16, m);
#pragma GCC unroll 16
    for (int h = 0; h < NH; ++h) {
      const __m512 qv = _mm512_maskz_loadu_ps(m, q + h * s.d + i * 16);
#pragma GCC unroll 16
      for (int j = 0; j < TT; ++j) acc[h][j] = _mm512_fmadd_ps(qv, kv[j], acc[h][j]);
    }
  }
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) _mm512_storeu_ps(dots + h * kDotsHead + j * 16, acc[h][j]);
}

/// As qk_tile_eo with bf16 q (qb rows of dv32 * 32, zero padded) and vdpbf16ps.
template <int NH, int TT, int DV>
[[gnu::always_inline]] inline void qk_tile_dp(const Shape& s, const void* k, int64_t t,
                                              const uint16_t* qb, float* dots) {
  const uint16_t* kb = static_cast<const uint16_t*>(k);
  __m512 acc[NH][TT];
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) acc[h][j] = _mm512_setzero_ps();
  const int64_t chunks = DV > 0 ? DV : s.dv32;
#pragma GCC unroll 8
  for (int64_t i = 0; i < chunks; ++i) {
    __m512i kv[TT];
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) kv[j] = load_chunk<DV>(s, kb + (t + j) * s.d + i * 32, i);
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) {
      if (j * chunks / TT == i) prefetch_row<kPrefetchRowsBf16>(s, k, t + j);  // spread
    }
#pragma GCC unroll 16
    for (int h = 0; h < NH; ++h) {
      const __m512i qv = _mm512_loadu_si512(qb + h * s.dv32 * 32 + i * 32);
#pragma GCC unroll 16
      for (int j = 0; j < TT; ++j) {
        acc[h][j] = _mm512_dpbf16_ps(acc[h][j], (__m512bh)kv[j], (__m512bh)qv);
      }
    }
  }
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) _mm512_storeu_ps(dots + h * kDotsHead + j * 16, acc[h][j]);
}

/// acc[h][c*16 .. (c+NV)*16) += sum_{tt < nb} p[h * 16 + tt] * v_{t0 + tt}.
template <bool kBf16, int NH, int NV>
inline void pv_tile(const Shape& s, const void* v, int64_t t0, int nb, int64_t c, const float* p,
                    float* acc) {
  __m512 a[NH][NV];
  __mmask16 mk[NV];
#pragma GCC unroll 16
  for (int j = 0; j < NV; ++j) mk[j] = s.mask(c + j);
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j)
      a[h][j] = _mm512_maskz_loadu_ps(mk[j], acc + h * s.d + (c + j) * 16);
  for (int tt = 0; tt < nb; ++tt) {
    if (c == 0) prefetch_row<kPrefetchRowsF32>(s, v, t0 + tt);
    __m512 vv[NV];
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j) vv[j] = load16<kBf16>(v, (t0 + tt) * s.d + (c + j) * 16, mk[j]);
#pragma GCC unroll 16
    for (int h = 0; h < NH; ++h) {
      const __m512 pb = _mm512_set1_ps(p[h * kBlock + tt]);
#pragma GCC unroll 16
      for (int j = 0; j < NV; ++j) a[h][j] = _mm512_fmadd_ps(pb, vv[j], a[h][j]);
    }
  }
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < NV; ++j)
      _mm512_mask_storeu_ps(acc + h * s.d + (c + j) * 16, mk[j], a[h][j]);
}

template <bool kBf16, int NH>
void pv_nv(int nv, const Shape& s, const void* v, int64_t t0, int nb, int64_t c, const float* p,
           float* acc) {
  switch (nv) {
    case 1:
      return pv_tile<kBf16, NH, 1>(s, v, t0, nb, c, p, acc);
    case 2:
      return pv_tile<kBf16, NH, 2>(s, v, t0, nb, c, p, acc);
    case 3:
      return pv_tile<kBf16, NH, 3>(s, v, t0, nb, c, p, acc);
    default:
      return pv_tile<kBf16, NH, 4>(s, v, t0, nb, c, p, acc);
  }
}

template <bool kBf16>
void pv(int nh, int nv, const Shape& s, const void* v, int64_t t0, int nb, int64_t c,
        const float* p, float* acc) {
  switch (nh) {
    case 1:
      return pv_nv<kBf16, 1>(nv, s, v, t0, nb, c, p, acc);
    case 2:
      return pv_nv<kBf16, 2>(nv, s, v, t0, nb, c, p, acc);
    case 3:
      return pv_nv<kBf16, 3>(nv, s, v, t0, nb, c, p, acc);
    default:
      return pv_nv<kBf16, 4>(nv, s, v, t0, nb, c, p, acc);
  }
}

/// Scores of heads [g0, g0 + NH) for tokens [t0, t0 + nb) into dots (block-relative rows).
template <bool kBf16, bool kDot, int NH>
void qk_heads(const Shape& s, const void* k, int64_t t0, int nb, const float* q, const uint16_t* qb,
              float* dots) {
  int tt = 0;
  for (; tt + 4 <= nb; tt += 4) {
    if constexpr (kDot) {
      qk_tile_dp<NH, 4>(s, k, t0 + tt, qb, dots + tt * 16);
    } else {
      qk_tile<kBf16, NH, 4>(s, k, t0 + tt, q, dots + tt * 16);
    }
  }
  for (; tt < nb; ++tt) {
    if constexpr (kDot) {
      qk_tile_dp<NH, 1>(s, k, t0 + tt, qb, dots + tt * 16);
    } else {
      qk_tile<kBf16, NH, 1>(s, k, t0 + tt, q, dots + tt * 16);
    }
  }
}

template <bool kBf16, bool kDot>
void qk(int nh, const Shape& s, const void* k, int64_t t0, int nb, const float* q,
        const uint16_t* qb, float* dots) {
  switch (nh) {
    case 1:
      return qk_heads<kBf16, kDot, 1>(s, k, t0, nb, q, qb, dots);
    case 2:
      return qk_heads<kBf16, kDot, 2>(s, k, t0, nb, q, qb, dots);
    case 3:
      return qk_heads<kBf16, kDot, 3>(s, k, t0, nb, q, qb, dots);
    default:
      return qk_heads<kBf16, kDot, 4>(s, k, t0, nb, q, qb, dots);
  }
}

template <bool kBf16, bool kDot>
void attend(const AttentionPiece& pc) {
  const int64_t d = pc.head_dim, group = pc.group;
  Shape s = make_shape(d);
  s.row_bytes = d * (kBf16 ? 2 : 4);
  s.tokens = pc.tokens;

  thread_local std::vector<float> dots_buf, p_buf;
  thread_local std::vector<uint16_t> qb_buf;
  if (static_cast<int64_t>(dots_buf.size()) < group * kDotsHead) dots_buf.resize(group * kDotsHead);
  if (static_cast<int64_t>(p_buf.size()) < group * kBlock) p_buf.resize(group * kBlock);
  float* dots = dots_buf.data();
  float* p = p_buf.data();
  const uint16_t* qb = nullptr;
  if constexpr (kDot) {
    const int64_t row = s.dv32 * 32;
    if (static_cast<int64_t>(qb_buf.size()) < group * row) qb_buf.resize(group * row);
    for (int64_t g = 0; g < group; ++g) {
      for (int64_t i = 0; i < row; ++i) {
        qb_buf[g * row + i] = i < d ? f32_to_bf16(pc.q[g * d + i]) : 0;
      }
    }
    qb = qb_buf.data();
  }

  for (int64_t g = 0; g < group; ++g) {
    pc.max[g] = -std::numeric_limits<float>::infinity();
    pc.sum[g] = 0;
  }
  std::memset(pc.acc, 0, sizeof(float) * group * d);
  const __m512 scale = _mm512_set1_ps(pc.scale);
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());

  for (int64_t t0 = 0; t0 < pc.tokens; t0 += kBlock) {
    const int nb = static_cast<int>(std::min<int64_t>(kBlock, pc.tokens - t0));
    const __mmask16 valid =
        nb == kBlock ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << nb) - 1);
    for (int64_t g0 = 0; g0 < group; g0 += kMaxHeads) {
      const int nh = static_cast<int>(std::min<int64_t>(kMaxHeads, group - g0));
      qk<kBf16, kDot>(nh, s, pc.k, t0, nb, pc.q + g0 * d, kDot ? qb + g0 * s.dv32 * 32 : nullptr,
                      dots + g0 * kDotsHead);
    }
    for (int64_t g = 0; g < group; ++g) {
      __m512 rows[16];
      for (int j = 0; j < 16; ++j) {
        rows[j] = j < nb ? _mm512_loadu_ps(dots + g * kDotsHead + j * 16) : _mm512_setzero_ps();
      }
      const __m512 sc = _mm512_mask_blend_ps(valid, neg_inf, _mm512_mul_ps(reduce16(rows), scale));
      const float block_max = _mm512_reduce_max_ps(sc);
      if (block_max > pc.max[g]) {
        const float alpha = std::exp(pc.max[g] - block_max);  // 0 on the first block
        pc.sum[g] *= alpha;
        float* acc = pc.acc + g * d;
        const __m512 va = _mm512_set1_ps(alpha);
        for (int64_t i = 0; i < s.dv; ++i) {
          const __mmask16 m = s.mask(i);
          _mm512_mask_storeu_ps(acc + i * 16, m,
                                _mm512_mul_ps(_mm512_maskz_loadu_ps(m, acc + i * 16), va));
        }
        pc.max[g] = block_max;
      }
      const __m512 pe =
          _mm512_maskz_mov_ps(valid, exp_ps(_mm512_sub_ps(sc, _mm512_set1_ps(pc.max[g]))));
      pc.sum[g] += _mm512_reduce_add_ps(pe);
      _mm512_storeu_ps(p + g * kBlock, pe);
    }
    for (int64_t g0 = 0; g0 < group; g0 += kMaxHeads) {
      const int nh = static_cast<int>(std::min<int64_t>(kMaxHeads, group - g0));
      for (int64_t c = 0; c < s.dv; c += kMaxVecs) {
        const int nv = static_cast<int>(std::min<int64_t>(kMaxVecs, s.dv - c));
        pv<kBf16>(nh, nv, s, pc.v, t0, nb, c, p + g0 * kBlock, pc.acc + g0 * d);
      }
    }
  }
}

// ---- bf16 KV: even/odd split widening ----------------------------------------------------
// A 512-bit load holds 32 bf16. As 16 u32 lanes, (lane << 16) is the f32 of the even element
// and (lane & 0xFFFF0000) that of the odd one: two exact widenings for two cheap in-lane ops,
// instead of two cross-lane vpmovzxwd + two shifts. The price is an even/odd order inside each
// chunk of 32 dims: q is permuted once per piece to match, and the V accumulators are kept in
// that order and put back in natural order at the end of the piece.

[[gnu::always_inline]] inline void split_bf16(__m512i raw, __m512& even, __m512& odd) {
  even = _mm512_castsi512_ps(_mm512_slli_epi32(raw, 16));
  odd =
      _mm512_castsi512_ps(_mm512_and_si512(raw, _mm512_set1_epi32(static_cast<int>(0xFFFF0000u))));
}

/// dots as in qk_tile; qp rows of dv32 * 32 floats in even/odd order. DV > 0: head_dim is 32 * DV
/// and the chunk loop is unrolled; DV == 0: any head_dim. Row j + kPrefetchRowsBf16 is
/// prefetched in chunk iteration j * chunks / TT, spread over the tile instead of all at its
/// start (exact path from memory 1.03x against all at the start, one thread, 2026-12-01).
template <int NH, int TT, int DV>
[[gnu::always_inline]] inline void qk_tile_eo(const Shape& s, const uint16_t* k, int64_t t,
                                              const float* qp, float* dots) {
  __m512 acc[NH][TT];
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) acc[h][j] = _mm512_setzero_ps();
  const int64_t row = s.dv32 * 32;
  const int64_t chunks = DV > 0 ? DV : s.dv32;
#pragma GCC unroll 8
  for (int64_t c = 0; c < chunks; ++c) {
    __m512 ke[TT], ko[TT];
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j)
      split_bf16(load_chunk<DV>(s, k + (t + j) * s.d + c * 32, c), ke[j], ko[j]);
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) {
      if (j * chunks / TT == c) prefetch_row<kPrefetchRowsBf16>(s, k, t + j);  // spread
    }
#pragma GCC unroll 16
    for (int h = 0; h < NH; ++h) {
      const __m512 qe = _mm512_loadu_ps(qp + h * row + c * 32);
      const __m512 qo = _mm512_loadu_ps(qp + h * row + c * 32 + 16);
#pragma GCC unroll 16
      for (int j = 0; j < TT; ++j) {
        acc[h][j] = _mm512_fmadd_ps(qe, ke[j], acc[h][j]);
        acc[h][j] = _mm512_fmadd_ps(qo, ko[j], acc[h][j]);
      }
    }
  }
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < TT; ++j) _mm512_storeu_ps(dots + h * kDotsHead + j * 16, acc[h][j]);
}

/// accp[h][c*32 .. (c+NC)*32) (even/odd order) += sum_{tt < na} p[h * 32 + tt] * v_{ta + tt}
/// + sum_{tt < nb} p[h * 32 + 16 + tt] * v_{tb + tt} (nb <= na; the rows of the two halves
/// alternate).
template <int NH, int NC, int DV>
[[gnu::always_inline]] inline void pv_tile_eo(const Shape& s, const uint16_t* v, int64_t ta, int na,
                                              int64_t tb, int nb, int64_t c, const float* p,
                                              float* accp) {
  const int64_t row = s.dv32 * 32;
  __m512 a[NH][2 * NC];
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < 2 * NC; ++j) a[h][j] = _mm512_loadu_ps(accp + h * row + c * 32 + j * 16);
  const auto add_row = [&](int64_t t, const float* pt) __attribute__((always_inline)) {
    prefetch_pass(s, v, t, c);
    __m512 vv[2 * NC];
#pragma GCC unroll 16
    for (int j = 0; j < NC; ++j) {
      split_bf16(load_chunk<DV>(s, v + t * s.d + (c + j) * 32, c + j), vv[2 * j], vv[2 * j + 1]);
    }
#pragma GCC unroll 16
    for (int h = 0; h < NH; ++h) {
      const __m512 pb = _mm512_set1_ps(pt[h * 2 * kBlock]);
#pragma GCC unroll 16
      for (int j = 0; j < 2 * NC; ++j) a[h][j] = _mm512_fmadd_ps(pb, vv[j], a[h][j]);
    }
  };
  for (int tt = 0; tt < na; ++tt) {
    add_row(ta + tt, p + tt);
    if (tt < nb) add_row(tb + tt, p + kBlock + tt);
  }
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < 2 * NC; ++j) _mm512_storeu_ps(accp + h * row + c * 32 + j * 16, a[h][j]);
}

/// Calls f.template operator()<NH, NC>(c) for a run-time nh in [1, 4] and each pass over the
/// row's chunks: c = 0, 2, ..., NC = 2 (1 for the last of an odd count). DV > 0 (head_dim 32 *
/// DV): the passes are unrolled at compile time, c a constant in each.
template <int DV, class F>
[[gnu::always_inline]] inline void pv_passes(int nh, const Shape& s, F&& f) {
  const auto passes = [&]<int NH>() {
    if constexpr (DV > 0) {
      [&]<int... P>(std::integer_sequence<int, P...>) {
        (f.template operator()<NH, (DV - 2 * P >= 2 ? 2 : 1)>(int64_t{2 * P}), ...);
      }
      (std::make_integer_sequence<int, (DV + 1) / 2>{});
    } else {
      for (int64_t c = 0; c < s.dv32; c += 2) {
        if (s.dv32 - c >= 2) {
          f.template operator()<NH, 2>(c);
        } else {
          f.template operator()<NH, 1>(c);
        }
      }
    }
  };
  switch (nh) {
    case 1:
      return passes.template operator()<1>();
    case 2:
      return passes.template operator()<2>();
    case 3:
      return passes.template operator()<3>();
    default:
      return passes.template operator()<4>();
  }
}

// ---- bf16 KV, p.V with vdpbf16ps over token pairs ------------------------------------------
// V rows t and t+1 of a 32-dim chunk are interleaved with vpunpck{l,h}wd: per 128-bit lane L,
// "lo" holds the pairs (v_t[d], v_t+1[d]) of dims 8L..8L+3 and "hi" those of dims 8L+4..8L+7,
// as 16 bf16 pairs each; vdpbf16ps with the broadcast pair (p_t, p_t+1) in bf16 adds
// p_t v_t[d] + p_t+1 v_t+1[d] to f32 lane 4L + i. Accumulators are kept in this "pair order"
// (pair_index) and put back in natural order at the end of the piece.

/// Position in the pair order of natural index i within rows of 32-dim chunks.
inline int64_t pair_index(int64_t i) {
  const int64_t c = i / 32, r = i % 32, lane = r / 8, k = r % 8;
  return c * 32 + (k / 4) * 16 + lane * 4 + k % 4;
}

/// accq[h][c*32 .. (c+NC)*32) (pair order) += sum_{tt < na} p[h][tt] v_{ta+tt} + sum_{tt < nb}
/// p[h][16 + tt] v_{tb+tt} (nb <= na; pairs of the two halves alternate), with pw[h * 16 + j]
/// the bf16 pair (p[h][2j], p[h][2j+1]) as one 32-bit word (0 past na, nb).
template <int NH, int NC, int DV>
inline void pv_tile_dp(const Shape& s, const uint16_t* v, int64_t ta, int na, int64_t tb, int nb,
                       int64_t c, const uint32_t* pw, float* accq) {
  const int64_t row = s.dv32 * 32;
  __m512 a[NH][2 * NC];
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < 2 * NC; ++j) a[h][j] = _mm512_loadu_ps(accq + h * row + c * 32 + j * 16);
  // Rows t and t + 1 (if second) with the pair words pw[h * 16 + j].
  const auto add_pair = [&](int64_t t, bool second, const uint32_t* pt)
      __attribute__((always_inline)) {
    prefetch_pass(s, v, t, c);
    prefetch_pass(s, v, t + 1, c);
    __m512i lo[NC], hi[NC];
#pragma GCC unroll 16
    for (int j = 0; j < NC; ++j) {
      const __mmask32 m = load_mask<DV>(s, c + j);
      const __m512i r0 = _mm512_maskz_loadu_epi16(m, v + t * s.d + (c + j) * 32);
      const __m512i r1 = second ? _mm512_maskz_loadu_epi16(m, v + (t + 1) * s.d + (c + j) * 32)
                                : _mm512_setzero_si512();
      lo[j] = _mm512_unpacklo_epi16(r0, r1);
      hi[j] = _mm512_unpackhi_epi16(r0, r1);
    }
#pragma GCC unroll 16
    for (int h = 0; h < NH; ++h) {
      const __m512i pb = _mm512_set1_epi32(static_cast<int>(pt[h * kBlock]));
#pragma GCC unroll 16
      for (int j = 0; j < NC; ++j) {
        a[h][2 * j] = _mm512_dpbf16_ps(a[h][2 * j], (__m512bh)lo[j], (__m512bh)pb);
        a[h][2 * j + 1] = _mm512_dpbf16_ps(a[h][2 * j + 1], (__m512bh)hi[j], (__m512bh)pb);
      }
    }
  };
  for (int tt = 0; tt < na; tt += 2) {
    add_pair(ta + tt, tt + 1 < na, pw + tt / 2);
    if (tt < nb) add_pair(tb + tt, tt + 1 < nb, pw + kBlock / 2 + tt / 2);
  }
#pragma GCC unroll 16
  for (int h = 0; h < NH; ++h)
#pragma GCC unroll 16
    for (int j = 0; j < 2 * NC; ++j) _mm512_storeu_ps(accq + h * row + c * 32 + j * 16, a[h][j]);
}

/// dots of rows [t, t + min(n, 4)) (n < 1: none) for heads [g0, g0 + NH).
template <bool kDot, int NH, int DV>
[[gnu::always_inline]] inline void qk_eo_rows(const Shape& s, const uint16_t* k, int64_t t, int n,
                                              const float* qp, const uint16_t* qb, float* dots) {
  if (n >= 4) {
    if constexpr (kDot) {
      qk_tile_dp<NH, 4, DV>(s, k, t, qb, dots);
    } else {
      qk_tile_eo<NH, 4, DV>(s, k, t, qp, dots);
    }
    return;
  }
  for (int j = 0; j < n; ++j) {
    if constexpr (kDot) {
      qk_tile_dp<NH, 1, DV>(s, k, t + j, qb, dots + j * 16);
    } else {
      qk_tile_eo<NH, 1, DV>(s, k, t + j, qp, dots + j * 16);
    }
  }
}

/// dots rows 0-15 from tokens [ta, ta + na), rows 16-31 from [tb, tb + nb), four rows of each
/// half in turn.
template <bool kDot, int NH, int DV>
void qk_eo_heads(const Shape& s, const uint16_t* k, int64_t ta, int na, int64_t tb, int nb,
                 const float* qp, const uint16_t* qb, float* dots) {
  for (int tt = 0; tt < na; tt += 4) {
    qk_eo_rows<kDot, NH, DV>(s, k, ta + tt, na - tt, qp, qb, dots + tt * 16);
    qk_eo_rows<kDot, NH, DV>(s, k, tb + tt, nb - tt, qp, qb, dots + (kBlock + tt) * 16);
  }
}

template <bool kDot, int DV>
void qk_eo(int nh, const Shape& s, const uint16_t* k, int64_t ta, int na, int64_t tb, int nb,
           const float* qp, const uint16_t* qb, float* dots) {
  switch (nh) {
    case 1:
      return qk_eo_heads<kDot, 1, DV>(s, k, ta, na, tb, nb, qp, qb, dots);
    case 2:
      return qk_eo_heads<kDot, 2, DV>(s, k, ta, na, tb, nb, qp, qb, dots);
    case 3:
      return qk_eo_heads<kDot, 3, DV>(s, k, ta, na, tb, nb, qp, qb, dots);
    default:
      return qk_eo_heads<kDot, 4, DV>(s, k, ta, na, tb, nb, qp, qb, dots);
  }
}

/// Position in the even/odd order of natural index i within rows of 32-dim chunks.
inline int64_t eo_index(int64_t i) {
  const int64_t c = i / 32, r = i % 32;
  return c * 32 + (r % 2) * 16 + r / 2;
}

template <bool kDot, bool kPvDot, int DV>
void attend_bf16(const AttentionPiece& pc) {
  const int64_t d = pc.head_dim, group = pc.group;
  Shape s = make_shape(d);
  s.row_bytes = d * 2;
  s.tokens = pc.tokens;
  const int64_t row = s.dv32 * 32;
  const uint16_t* k = static_cast<const uint16_t*>(pc.k);
  const uint16_t* v = static_cast<const uint16_t*>(pc.v);

  thread_local std::vector<float> dots_buf, p_buf, qp_buf, accp_buf;
  thread_local std::vector<uint16_t> qb_buf;
  thread_local std::vector<uint32_t> pw_buf;  // kPvDot: bf16 pairs of p, 16 words per head
  if (static_cast<int64_t>(pw_buf.size()) < group * kBlock) pw_buf.resize(group * kBlock);
  if (static_cast<int64_t>(dots_buf.size()) < group * kDotsHead) dots_buf.resize(group * kDotsHead);
  if (static_cast<int64_t>(p_buf.size()) < group * 2 * kBlock) p_buf.resize(group * 2 * kBlock);
  if (static_cast<int64_t>(qp_buf.size()) < group * row) qp_buf.resize(group * row);
  if (static_cast<int64_t>(accp_buf.size()) < group * row) accp_buf.resize(group * row);
  float* dots = dots_buf.data();
  float* p = p_buf.data();
  float* qp = qp_buf.data();
  float* accp = accp_buf.data();
  std::fill(qp, qp + group * row, 0.0f);
  std::fill(accp, accp + group * row, 0.0f);
  for (int64_t g = 0; g < group; ++g)
    for (int64_t i = 0; i < d; ++i) qp[g * row + eo_index(i)] = pc.q[g * d + i];
  const uint16_t* qb = nullptr;
  if constexpr (kDot) {
    if (static_cast<int64_t>(qb_buf.size()) < group * row) qb_buf.resize(group * row);
    for (int64_t g = 0; g < group; ++g)
      for (int64_t i = 0; i < row; ++i)
        qb_buf[g * row + i] = i < d ? f32_to_bf16(pc.q[g * d + i]) : 0;
    qb = qb_buf.data();
  }

  for (int64_t g = 0; g < group; ++g) {
    pc.max[g] = -std::numeric_limits<float>::infinity();
    pc.sum[g] = 0;
  }
  const __m512 scale = _mm512_set1_ps(pc.scale);
  const __m512 neg_inf = _mm512_set1_ps(-std::numeric_limits<float>::infinity());
  // The piece's tokens in two halves, [0, half) and [half, tokens), read in lockstep: a block
  // of each per step, their rows alternating, so that four streams (K and V of each half) are
  // in flight instead of two. The online softmax does not depend on the order of the tokens.
  const int64_t half =
      pc.tokens > 2 * kBlock
          ? std::min(pc.tokens, ((pc.tokens + 1) / 2 + kBlock - 1) / kBlock * kBlock)
          : pc.tokens;
  const auto valid_mask = [](int n) {
    return n >= kBlock ? static_cast<__mmask16>(0xFFFF)
                       : static_cast<__mmask16>((1u << std::max(n, 0)) - 1);
  };
  for (int64_t ta = 0; ta < half; ta += kBlock) {
    const int64_t tb = half + ta;
    const int na = static_cast<int>(std::min<int64_t>(kBlock, half - ta));
    const int nb = static_cast<int>(std::clamp<int64_t>(pc.tokens - tb, 0, kBlock));
    const __mmask16 valid_a = valid_mask(na), valid_b = valid_mask(nb);
    for (int64_t g0 = 0; g0 < group; g0 += kMaxHeads) {
      const int nh = static_cast<int>(std::min<int64_t>(kMaxHeads, group - g0));
      qk_eo<kDot, DV>(nh, s, k, ta, na, tb, nb, qp + g0 * row, kDot ? qb + g0 * row : nullptr,
                      dots + g0 * kDotsHead);
    }
    for (int64_t g = 0; g < group; ++g) {
      const auto scores = [&](int n, int first, __mmask16 valid) {
        __m512 rows[16];
        for (int j = 0; j < 16; ++j) {
          rows[j] = j < n ? _mm512_loadu_ps(dots + g * kDotsHead + (first + j) * 16)
                          : _mm512_setzero_ps();
        }
        return _mm512_mask_blend_ps(valid, neg_inf, _mm512_mul_ps(reduce16(rows), scale));
      };
      const __m512 sa = scores(na, 0, valid_a);
      const __m512 sb = nb > 0 ? scores(nb, kBlock, valid_b) : neg_inf;
      const float block_max = _mm512_reduce_max_ps(_mm512_max_ps(sa, sb));
      if (block_max > pc.max[g]) {
        const float alpha = std::exp(pc.max[g] - block_max);  // 0 on the first block
        pc.sum[g] *= alpha;
        const __m512 va = _mm512_set1_ps(alpha);
        for (int64_t i = 0; i < row; i += 16) {
          _mm512_storeu_ps(accp + g * row + i,
                           _mm512_mul_ps(_mm512_loadu_ps(accp + g * row + i), va));
        }
        pc.max[g] = block_max;
      }
      const __m512 mx = _mm512_set1_ps(pc.max[g]);
      const __m512 pa = _mm512_maskz_mov_ps(valid_a, exp_ps(_mm512_sub_ps(sa, mx)));
      const __m512 pb = _mm512_maskz_mov_ps(valid_b, exp_ps(_mm512_sub_ps(sb, mx)));
      pc.sum[g] += _mm512_reduce_add_ps(_mm512_add_ps(pa, pb));
      if constexpr (kPvDot) {
        // 16 bf16 = 8 pair words per half (0 past na, nb).
        const __m256bh ha = _mm512_cvtneps_pbh(pa), hb = _mm512_cvtneps_pbh(pb);
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(pw_buf.data() + g * kBlock),
                            reinterpret_cast<const __m256i&>(ha));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(pw_buf.data() + g * kBlock + kBlock / 2),
                            reinterpret_cast<const __m256i&>(hb));
      } else {
        _mm512_storeu_ps(p + g * 2 * kBlock, pa);
        _mm512_storeu_ps(p + g * 2 * kBlock + kBlock, pb);
      }
    }
    for (int64_t g0 = 0; g0 < group; g0 += kMaxHeads) {
      const int nh = static_cast<int>(std::min<int64_t>(kMaxHeads, group - g0));
      pv_passes<DV>(nh, s, [&]<int NH, int NC>(int64_t c) {
        if constexpr (kPvDot) {
          pv_tile_dp<NH, NC, DV>(s, v, ta, na, tb, nb, c, pw_buf.data() + g0 * kBlock,
                                 accp + g0 * row);
        } else {
          pv_tile_eo<NH, NC, DV>(s, v, ta, na, tb, nb, c, p + g0 * 2 * kBlock, accp + g0 * row);
        }
      });
    }
  }
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t i = 0; i < d; ++i) {
      pc.acc[g * d + i] = accp[g * row + (kPvDot ? pair_index(i) : eo_index(i))];
    }
  }
}

template <bool kDot, bool kPvDot>
void attend_bf16_dv(const AttentionPiece& piece) {
  switch (piece.head_dim) {
    case 64:
      return attend_bf16<kDot, kPvDot, 2>(piece);
    case 128:
      return attend_bf16<kDot, kPvDot, 4>(piece);
    default:
      return attend_bf16<kDot, kPvDot, 0>(piece);
  }
}
}  // namespace

void attend_avx512_bf16(const AttentionPiece& piece) {
  if (piece.bf16_dot) {
    if (piece.bf16_pv_dot) {
      attend_bf16_dv<true, true>(piece);
    } else {
      attend_bf16_dv<true, false>(piece);
    }
  } else if (piece.bf16_pv_dot) {
    attend_bf16_dv<false, true>(piece);
  } else {
    attend_bf16_dv<false, false>(piece);
  }
}

// Defined after attend_avx512_bf16: in this order GCC 12 emits attend<false, false> and the bf16
// kernels instruction for instruction as it did before the kernel tables (its interprocedural
// register allocation follows the order in which functions are compiled).
void attend_avx512_f32(const AttentionPiece& piece) { attend<false, false>(piece); }

}  // namespace llmcap::kernels::detail
