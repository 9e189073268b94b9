// bf16 <-> f32 for one value (bfloat16: the top 16 bits of an IEEE 754 binary32).
#pragma once

#include <bit>
#include <cstdint>

namespace llmcap::kernels::detail {

/// f32 -> bf16, round to nearest, ties to even; a NaN stays a NaN (quiet bit set), infinities
/// and signed zeros are kept. The vector paths of convert_to_bf16 (elementwise.h) match it bit
/// for bit.
inline uint16_t f32_to_bf16(float f) {
  const uint32_t u = std::bit_cast<uint32_t>(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // NaN
  const uint32_t rounded = u + 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(rounded >> 16);
}

/// bf16 -> f32, exact.
inline float bf16_to_f32(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}

}  // namespace llmcap::kernels::detail
