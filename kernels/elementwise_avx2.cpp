// AVX2 + FMA RMSNorm, RoPE, SwiGLU (compiled with -mavx2 -mfma -mf16c; runs only when
// isa_supported(Isa::kAvx2)). Elements past the last multiple of 8 are done in scalar code.
#include <immintrin.h>

#include <cmath>

#include "kernels/bf16.h"
#include "kernels/elementwise_internal.h"
#include "kernels/simd_avx2.h"

namespace llmcap::kernels::detail {

void rms_norm_avx2(const float* x, const float* weight, int64_t rows, int64_t dim, float eps,
                   float* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    float* o = out + r * dim;
    __m256 s0 = _mm256_setzero_ps(), s1 = _mm256_setzero_ps(), s2 = _mm256_setzero_ps(),
           s3 = _mm256_setzero_ps();
    int64_t i = 0;
    for (; i + 32 <= dim; i += 32) {
      const __m256 a = _mm256_loadu_ps(xr + i), b = _mm256_loadu_ps(xr + i + 8),
                   c = _mm256_loadu_ps(xr + i + 16), d = _mm256_loadu_ps(xr + i + 24);
      s0 = _mm256_fmadd_ps(a, a, s0);
      s1 = _mm256_fmadd_ps(b, b, s1);
      s2 = _mm256_fmadd_ps(c, c, s2);
      s3 = _mm256_fmadd_ps(d, d, s3);
    }
    for (; i + 8 <= dim; i += 8) {
      const __m256 a = _mm256_loadu_ps(xr + i);
      s0 = _mm256_fmadd_ps(a, a, s0);
    }
    float ss = hsum(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
    for (; i < dim; ++i) ss += xr[i] * xr[i];
    const float invs = static_cast<float>(1.0 / std::sqrt(double(ss) / dim + eps));
    const __m256 inv = _mm256_set1_ps(invs);
    for (i = 0; i + 8 <= dim; i += 8) {
      _mm256_storeu_ps(o + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(xr + i), inv),
                                            _mm256_loadu_ps(weight + i)));
    }
    for (; i < dim; ++i) o[i] = xr[i] * invs * weight[i];
  }
}

void rope_avx2(float* x, int64_t heads, int64_t head_dim, int64_t half, const float* cos,
               const float* sin) {
  for (int64_t h = 0; h < heads; ++h) {
    float* xh = x + h * head_dim;
    int64_t i = 0;
    for (; i + 8 <= half; i += 8) {
      const __m256 x0 = _mm256_loadu_ps(xh + i), x1 = _mm256_loadu_ps(xh + half + i);
      const __m256 c = _mm256_loadu_ps(cos + i), s = _mm256_loadu_ps(sin + i);
      _mm256_storeu_ps(xh + i, _mm256_sub_ps(_mm256_mul_ps(x0, c), _mm256_mul_ps(x1, s)));
      _mm256_storeu_ps(xh + half + i, _mm256_add_ps(_mm256_mul_ps(x0, s), _mm256_mul_ps(x1, c)));
    }
    for (; i < half; ++i) {
      const float x0 = xh[i], x1 = xh[i + half];
      xh[i] = x0 * cos[i] - x1 * sin[i];
      xh[i + half] = x0 * sin[i] + x1 * cos[i];
    }
  }
}

void swiglu_avx2(const float* gate, const float* up, float* out, int64_t n) {
  const __m256 one = _mm256_set1_ps(1.0f);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 g = _mm256_loadu_ps(gate + i), u = _mm256_loadu_ps(up + i);
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_setzero_ps(), g));
    _mm256_storeu_ps(out + i, _mm256_div_ps(_mm256_mul_ps(g, u), _mm256_add_ps(one, e)));
  }
  for (; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

// f32 -> bf16 with integer arithmetic, as the AVX-512 path (and f32_to_bf16) does.
void to_bf16_avx2(const float* x, uint16_t* out, int64_t n) {
  const __m256i abs_mask = _mm256_set1_epi32(0x7fffffff), inf = _mm256_set1_epi32(0x7f800000),
                one = _mm256_set1_epi32(1), bias = _mm256_set1_epi32(0x7fff),
                quiet = _mm256_set1_epi32(0x40);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256i u = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
    const __m256i hi = _mm256_srli_epi32(u, 16);
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(u, _mm256_add_epi32(bias, _mm256_and_si256(hi, one))), 16);
    const __m256i nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, abs_mask), inf);
    const __m256i r = _mm256_blendv_epi8(rounded, _mm256_or_si256(hi, quiet), nan);
    // Pack the 8 words (each < 2^16) into the low 128 bits: packus works per 128-bit lane.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(r, r), 0b1000);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_castsi256_si128(packed));
  }
  for (; i < n; ++i) out[i] = f32_to_bf16(x[i]);
}

}  // namespace llmcap::kernels::detail
