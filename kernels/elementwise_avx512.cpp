// AVX-512 RMSNorm, RoPE, SwiGLU (compiled with the AVX-512 flags; runs only when
// isa_supported(Isa::kAvx512)). Tails use masked loads and stores.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"  // GCC 12 AVX-512 header idiom
#include <immintrin.h>

#include <cmath>

#include "kernels/elementwise_internal.h"
#include "kernels/simd_avx512.h"

namespace llmcap::kernels::detail {

namespace {

inline __mmask16 tail_mask(int64_t n) {
  return n >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << n) - 1);
}

}  // namespace

void rms_norm_avx512(const float* x, const float* weight, int64_t rows, int64_t dim, float eps,
                     float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* o = out + r * dim;
    __m512 s0 = _mm512_setzero_ps(), s1 = _mm512_setzero_ps(), s2 = _mm512_setzero_ps(),
           s3 = _mm512_setzero_ps();
    int64_t i = 0;
    for (; i + 64 <= dim; i += 64) {
      const __m512 a = _mm512_loadu_ps(xr + i), b = _mm512_loadu_ps(xr + i + 16),
                   c = _mm512_loadu_ps(xr + i + 32), d = _mm512_loadu_ps(xr + i + 48);
      s0 = _mm512_fmadd_ps(a, a, s0);
      s1 = _mm512_fmadd_ps(b, b, s1);
      s2 = _mm512_fmadd_ps(c, c, s2);
      s3 = _mm512_fmadd_ps(d, d, s3);
    }
    for (; i < dim; i += 16) {
      const __m512 a = _mm512_maskz_loadu_ps(tail_mask(dim - i), xr + i);
      s0 = _mm512_fmadd_ps(a, a, s0);
    }
    const float ss =
        _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(s0, s1), _mm512_add_ps(s2, s3)));
    const __m512 inv = _mm512_set1_ps(static_cast<float>(1.0 / std::sqrt(double(ss) / dim + eps)));
    for (i = 0; i < dim; i += 16) {
      const __mmask16 m = tail_mask(dim - i);
      const __m512 a = _mm512_maskz_loadu_ps(m, xr + i);
      const __m512 w = _mm512_maskz_loadu_ps(m, weight + i);
      _mm512_mask_storeu_ps(o + i, m, _mm512_mul_ps(_mm512_mul_ps(a, inv), w));
    }
  }
}

void rope_avx512(float* x, int64_t heads, int64_t head_dim, int64_t half, const float* cos,
                 const float* sin) {
  for (int64_t h = 0; h < heads; ++h) {
    float* xh = x + h * head_dim;
    for (int64_t i = 0; i < half; i += 16) {
      const __mmask16 m = tail_mask(half - i);
      const __m512 x0 = _mm512_maskz_loadu_ps(m, xh + i);
      const __m512 x1 = _mm512_maskz_loadu_ps(m, xh + half + i);
      const __m512 c = _mm512_maskz_loadu_ps(m, cos + i);
      const __m512 s = _mm512_maskz_loadu_ps(m, sin + i);
      _mm512_mask_storeu_ps(xh + i, m, _mm512_sub_ps(_mm512_mul_ps(x0, c), _mm512_mul_ps(x1, s)));
      _mm512_mask_storeu_ps(xh + half + i, m,
                            _mm512_add_ps(_mm512_mul_ps(x0, s), _mm512_mul_ps(x1, c)));
    }
  }
}

void swiglu_avx512(const float* gate, const float* up, float* out, int64_t n) {
  const __m512 one = _mm512_set1_ps(1.0f);
  for (int64_t i = 0; i < n; i += 16) {
    const __mmask16 m = tail_mask(n - i);
    const __m512 g = _mm512_maskz_loadu_ps(m, gate + i);
    const __m512 u = _mm512_maskz_loadu_ps(m, up + i);
    const __m512 e = exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), g));
    _mm512_mask_storeu_ps(out + i, m, _mm512_div_ps(_mm512_mul_ps(g, u), _mm512_add_ps(one, e)));
  }
}

namespace {

// f32 -> bf16 with integer arithmetic (vcvtneps2bf16 would flush subnormal inputs to zero): add
// 0x7fff plus the lowest kept bit and keep the top half; a NaN keeps its top half with the quiet
// bit set. 32 values per iteration: one vpermt2w gathers the top halves of two vectors, and one
// 64-byte store writes them. (A vpmovdw to memory, what _mm512_cvtepi32_epi16 becomes when its
// result is stored, is microcoded on AMD Zen: it made a KV-cache append 10x slower.)
__m512i bf16_bits(__m512i u) {
  const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000),
                one = _mm512_set1_epi32(1), bias = _mm512_set1_epi32(0x7fff),
                quiet = _mm512_set1_epi32(0x00400000);
  const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(u, 16), one);
  const __m512i rounded = _mm512_add_epi32(u, _mm512_add_epi32(bias, lsb));
  const __mmask16 nan = _mm512_cmpgt_epi32_mask(_mm512_and_si512(u, abs_mask), inf);
  return _mm512_mask_mov_epi32(rounded, nan, _mm512_or_si512(u, quiet));
}

}  // namespace

void to_bf16_avx512(const float* x, uint16_t* out, int64_t n) {
  // Word 2i+1 of the pair (a, b) is the top half of 32-bit lane i: lanes 0-15 from a, 16-31 b.
  alignas(64) static constexpr uint16_t kHigh[32] = {1,  3,  5,  7,  9,  11, 13, 15, 17, 19, 21,
                                                     23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 43,
                                                     45, 47, 49, 51, 53, 55, 57, 59, 61, 63};
  const __m512i high = _mm512_load_si512(kHigh);
  for (int64_t i = 0; i < n; i += 32) {
    const __mmask16 m0 = tail_mask(n - i), m1 = n - i > 16 ? tail_mask(n - i - 16) : 0;
    const __m512i a = bf16_bits(_mm512_maskz_loadu_epi32(m0, x + i));
    const __m512i b = bf16_bits(_mm512_maskz_loadu_epi32(m1, x + i + 16));
    const __m512i words = _mm512_permutex2var_epi16(a, high, b);
    if (n - i >= 32) {
      _mm512_storeu_si512(out + i, words);
    } else {
      _mm512_mask_storeu_epi16(out + i, (__mmask32{1} << (n - i)) - 1, words);
    }
  }
}

}  // namespace llmcap::kernels::detail
