// Private to the matrix-product kernels: the per-ISA, per-weight-format implementations of
// matmul() that kernels/dispatch.cpp puts in the kernel tables. Each has the MatmulKernel
// signature (dispatch.h): called by matmul() after its argument checks, with 1 <= batch <= 64.
#pragma once

#include "kernels/dispatch.h"

namespace llmcap::kernels::detail {

/// The reference, every format (matmul.cpp): each weight row is dequantised once and dotted
/// with every activation row in double precision, then rounded to f32.
MatmulKernel matmul_scalar;

// matmul_avx2.cpp (-mavx2 -mfma -mf16c). f32 and bf16 by f32 FMAs; int8 and int4 quantise the
// activations to int8 per row for vpmaddubsw / vpmaddwd dot products.
MatmulKernel matmul_avx2_f32;
MatmulKernel matmul_avx2_bf16;
MatmulKernel matmul_avx2_int8;
MatmulKernel matmul_avx2_int4;

// matmul_avx512.cpp (-mavx512f -mavx512bw -mavx512vl -mavx512bf16 -mavx512vnni -mfma).
MatmulKernel matmul_avx512_f32;        ///< f32 FMAs on the weights as stored
MatmulKernel matmul_avx512_bf16_dot;   ///< bf16 weights, vdpbf16ps: needs AVX512_BF16
MatmulKernel matmul_avx512_int8_vnni;  ///< int8 weights, vpdpbusd: needs AVX512_VNNI
MatmulKernel matmul_avx512_int4_vnni;  ///< int4 weights, vpdpbusd: needs AVX512_VNNI
/// bf16, int8 or int4 weights dequantised to f32 tiles, f32 FMAs (the fallback of the three
/// above on CPUs without the extensions, or with detail::set_avx512_extensions_enabled(false)).
MatmulKernel matmul_avx512_dequant;

}  // namespace llmcap::kernels::detail
