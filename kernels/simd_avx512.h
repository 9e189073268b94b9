// Vector helpers shared by the AVX-512 translation units (attention_avx512.cpp,
// elementwise_avx512.cpp). Include only from files compiled with -mavx512f: everything here has
// internal linkage, so no AVX-512 code can leak into a translation unit built for another
// instruction set.
#pragma once

#include <immintrin.h>

namespace llmcap::kernels::detail {
namespace {

/// e^x for x <= 88 (x below -87 gives a value under 2^-125, i.e. 0 for softmax purposes):
/// Cody-Waite reduction x = n ln2 + r, |r| <= ln2/2, degree-7 Taylor of e^r (truncation
/// < 5e-9 relative), 2^n by scalef. Relative error ~ 2 ulp.
inline __m512 exp_ps(__m512 x) {
  x = _mm512_max_ps(_mm512_min_ps(x, _mm512_set1_ps(88.0f)), _mm512_set1_ps(-87.0f));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.0f / 5040);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 720));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 120));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 24));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f / 6));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(0.5f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.0f));
  return _mm512_scalef_ps(p, n);
}

}  // namespace
}  // namespace llmcap::kernels::detail
