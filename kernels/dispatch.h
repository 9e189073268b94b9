// The kernel dispatch tables: one table of function pointers per instruction set (scalar, AVX2,
// AVX-512), defined in kernels/dispatch.cpp from the per-ISA kernels (matmul_avx2.cpp,
// attention_avx512.cpp, ...). The public entry points (matmul, decode_attention, rms_norm, rope,
// swiglu, convert_to_bf16) check their arguments, look up the table of their `isa` once per call
// and make one indirect call into it; nothing below them switches on the instruction set.
//
// For the kernels' own entry points and for tests; other folders call the public functions of
// matmul.h, attention.h and elementwise.h.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "kernels/attention.h"
#include "kernels/cpu_features.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace llmcap::kernels {

namespace detail {
struct AttentionPiece;  // kernels/attention_internal.h
}  // namespace detail

// ---- Kernel signatures (function types) ----------------------------------------------------
// Every kernel runs after its public entry point has validated the arguments; none throws.

/// y[b * rows + r] = sum_c x[b * cols + c] * w(r, c) for one slice of 1 <= batch <= 64 rows
/// (matmul() cuts larger batches into slices). x: batch x cols f32, any alignment; y: batch x
/// rows f32. Threads of `pool` split the output rows.
using MatmulKernel = void(const PackedWeights& w, const float* x, int64_t batch, float* y,
                          ThreadPool& pool);
/// One (KV head, token range) piece of decode attention, unnormalised (attention_internal.h).
using AttendKernel = void(const detail::AttentionPiece& piece);
/// RMSNorm of `rows` rows of `dim` floats; out may equal x (elementwise.h: rms_norm).
using RmsNormKernel = void(const float* x, const float* weight, int64_t rows, int64_t dim,
                           float eps, float* out);
/// x[h][i], x[h][i + half] of every head rotated by (cos[i], sin[i]) for i < half, in place.
using RopeKernel = void(float* x, int64_t heads, int64_t head_dim, int64_t half, const float* cos,
                        const float* sin);
/// out[i] = gate[i] / (1 + exp(-gate[i])) * up[i] for i < n; out may equal gate or up.
using SwigluKernel = void(const float* gate, const float* up, float* out, int64_t n);
/// out[i] = f32_to_bf16(x[i]) (kernels/bf16.h), bit for bit, for i < n.
using ToBf16Kernel = void(const float* x, uint16_t* out, int64_t n);

inline constexpr std::size_t kNumWeightFormats = 4;  ///< WeightFormat::kF32 .. kInt4
inline constexpr std::size_t kNumKvTypes = 2;        ///< KvType::kF32, kBf16

/// The kernels of one instruction set. Every entry is set. An entry of a table whose isa the
/// CPU does not support must not be called (its code may use instructions the CPU lacks).
struct KernelTable {
  Isa isa = Isa::kScalar;
  /// Matrix product per weight format, indexed by WeightFormat (matmul_for).
  std::array<MatmulKernel*, kNumWeightFormats> matmul{};
  /// Decode attention per KV-cache element type, indexed by KvType (attend_for).
  std::array<AttendKernel*, kNumKvTypes> attend{};
  RmsNormKernel* rms_norm = nullptr;
  RopeKernel* rope = nullptr;
  SwigluKernel* swiglu = nullptr;
  ToBf16Kernel* to_bf16 = nullptr;
  /// Whether attend[kBf16] may honour AttentionOptions::bf16_qk_dot / bf16_pv_dot (AVX-512 on a
  /// CPU with AVX512_BF16); where false, decode_attention clears those options.
  bool attention_bf16_dots = false;

  MatmulKernel* matmul_for(WeightFormat format) const {
    return matmul[static_cast<std::size_t>(format)];
  }
  AttendKernel* attend_for(KvType type) const { return attend[static_cast<std::size_t>(type)]; }
};

/// The table of `isa` on this CPU. The AVX-512 table's matmul entries for bf16, int8 and int4
/// use AVX512_BF16 / AVX512_VNNI where cpu_features() reports them and
/// detail::avx512_extensions_enabled() is true at the time of the call (matmul.h), else the
/// f32-FMA fallback; both variants are built once, on first use. Throws
/// std::invalid_argument("<caller>: isa <name> is not supported by this CPU (<flags>)") when
/// !isa_supported(isa) (<flags>: cpu_features().flags()); entry points pass their own name.
const KernelTable& kernel_table(Isa isa, std::string_view caller = "kernel_table");

/// kernel_table(best_isa()): the fastest table this CPU runs, chosen once from cpu_features()
/// and capped by the environment variable LLMCAP_ISA (cpu_features.h: best_isa).
const KernelTable& best_kernel_table();

}  // namespace llmcap::kernels
