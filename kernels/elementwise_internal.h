// Private to the elementwise kernels: one implementation per instruction set
// (elementwise.cpp, elementwise_avx2.cpp, elementwise_avx512.cpp). Arguments are validated by
// the public functions in elementwise.cpp.
#pragma once

#include <cstdint>

#include "kernels/cpu_features.h"

namespace llmcap::kernels::detail {

struct ElementwiseKernels {
  /// rows x dim, out may equal x.
  void (*rms_norm)(const float* x, const float* weight, int64_t rows, int64_t dim, float eps,
                   float* out);
  /// x[h][i], x[h][i + half] rotated by (cos[i], sin[i]) for i < half, every head.
  void (*rope)(float* x, int64_t heads, int64_t head_dim, int64_t half, const float* cos,
               const float* sin);
  /// out[i] = gate[i] / (1 + exp(-gate[i])) * up[i]; out may equal gate or up.
  void (*swiglu)(const float* gate, const float* up, float* out, int64_t n);
  /// out[i] = f32_to_bf16(x[i]) (kernels/bf16.h), bit for bit.
  void (*to_bf16)(const float* x, uint16_t* out, int64_t n);
};

extern const ElementwiseKernels kElementwiseScalar;
extern const ElementwiseKernels kElementwiseAvx2;
extern const ElementwiseKernels kElementwiseAvx512;

/// The kernels of `isa`. Throws std::invalid_argument("<op>: isa x is not supported by this CPU
/// (flags)") when the CPU cannot run it.
const ElementwiseKernels& elementwise_kernels(Isa isa, const char* op);

}  // namespace llmcap::kernels::detail
