// Private to the elementwise kernels: one implementation per instruction set (elementwise.cpp,
// elementwise_avx2.cpp, elementwise_avx512.cpp), put in the kernel tables by
// kernels/dispatch.cpp. Signatures and contracts: RmsNormKernel, RopeKernel, SwigluKernel and
// ToBf16Kernel in dispatch.h. Arguments are validated by the public functions in
// elementwise.cpp.
#pragma once

#include "kernels/dispatch.h"

namespace llmcap::kernels::detail {

RmsNormKernel rms_norm_scalar, rms_norm_avx2, rms_norm_avx512;
RopeKernel rope_scalar, rope_avx2, rope_avx512;
SwigluKernel swiglu_scalar, swiglu_avx2, swiglu_avx512;
ToBf16Kernel to_bf16_scalar, to_bf16_avx2, to_bf16_avx512;

}  // namespace llmcap::kernels::detail
