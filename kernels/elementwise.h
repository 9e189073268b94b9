// The small per-token operators of a Llama layer: RMSNorm, RoPE, SwiGLU, and the f32 -> bf16
// conversion of a KV-cache append.
#pragma once

#include <cstdint>
#include <span>

#include "kernels/cpu_features.h"

namespace llmcap::kernels {

/// RMSNorm (Zhang & Sennrich 2019) over rows of `dim`: out = x / sqrt(mean(x^2) + eps) * weight.
/// x.size() == out.size() == num_rows * dim, weight.size() == dim; out may alias x. The sum of
/// squares is taken in double (scalar) or in f32 with 16-64 partial sums (vector paths).
/// Throws std::invalid_argument for dim < 1, mismatched sizes, eps < 0 or not finite, or an
/// unsupported isa.
void rms_norm(std::span<const float> x, std::span<const float> weight, int64_t dim, float eps,
              std::span<float> out, Isa isa = best_isa());

/// Rotary position embedding (Su et al. 2021, "RoFormer"; the Llama/GPT-NeoX "rotate half"
/// layout: element i pairs with i + rotary_dim/2) applied in place to `num_heads` heads of
/// `head_dim` of one token at `position`, rotating the first rotary_dim elements of each head,
/// frequencies theta^(-2i/rotary_dim). x.size() == num_heads * head_dim; rotary_dim even and <=
/// head_dim. Angles position * frequency and their cos/sin are computed in double (exact to f32
/// rounding even at position 10^6) once per (position, rotary_dim, theta) and cached per thread.
/// Throws std::invalid_argument for num_heads < 0, head_dim < 1, a size mismatch, rotary_dim odd,
/// < 2 or > head_dim, position < 0, theta <= 0, or an unsupported isa.
void rope(std::span<float> x, int64_t num_heads, int64_t head_dim, int64_t rotary_dim,
          int64_t position, float theta, Isa isa = best_isa());

/// SwiGLU (Shazeer 2020): out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)).
/// gate, up and out of equal size; out may alias gate or up. The scalar path uses std::exp; the
/// vector paths a polynomial exp (Cody-Waite reduction, degree-7 Taylor; relative error < 4e-7
/// over the whole f32 range, tested), so out is within 1e-6 relative of the exact product.
/// Throws std::invalid_argument for mismatched sizes or an unsupported isa.
void swiglu(std::span<const float> gate, std::span<const float> up, std::span<float> out,
            Isa isa = best_isa());

/// out[i] = x[i] rounded to bf16 (the top 16 bits of an f32), to nearest with ties to even; a
/// NaN stays a NaN (quiet bit set), infinities, zeros and subnormals convert like any value (no
/// flush to zero). Every ISA path gives the same bits as the scalar one. Used to append K and V
/// to a bf16 KV cache. Throws std::invalid_argument for out.size() != x.size() or an unsupported
/// isa.
void convert_to_bf16(std::span<const float> x, std::span<uint16_t> out, Isa isa = best_isa());

}  // namespace llmcap::kernels
