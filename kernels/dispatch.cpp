// The three kernel tables and their choice. This file is compiled without ISA flags: it only
// takes the addresses of the per-ISA kernels; they run when an entry point calls them, after
// isa_supported() said yes.
#include "kernels/dispatch.h"

#include <stdexcept>
#include <string>

#include "kernels/attention_internal.h"
#include "kernels/elementwise_internal.h"
#include "kernels/matmul_internal.h"

namespace llmcap::kernels {

namespace {

// ---- Scalar: the reference (matmul.cpp, attention.cpp, elementwise.cpp) --------------------
constinit const KernelTable kScalarTable = {
    .isa = Isa::kScalar,
    .matmul = {detail::matmul_scalar, detail::matmul_scalar, detail::matmul_scalar,
               detail::matmul_scalar},
    .attend = {detail::attend_scalar_f32, detail::attend_scalar_bf16},
    .rms_norm = detail::rms_norm_scalar,
    .rope = detail::rope_scalar,
    .swiglu = detail::swiglu_scalar,
    .to_bf16 = detail::to_bf16_scalar,
    .attention_bf16_dots = false,
};

// ---- AVX2 + FMA + F16C (matmul_avx2.cpp, attention_avx2.cpp, elementwise_avx2.cpp) ---------
constinit const KernelTable kAvx2Table = {
    .isa = Isa::kAvx2,
    .matmul = {detail::matmul_avx2_f32, detail::matmul_avx2_bf16, detail::matmul_avx2_int8,
               detail::matmul_avx2_int4},
    .attend = {detail::attend_avx2_f32, detail::attend_avx2_bf16},
    .rms_norm = detail::rms_norm_avx2,
    .rope = detail::rope_avx2,
    .swiglu = detail::swiglu_avx2,
    .to_bf16 = detail::to_bf16_avx2,
    .attention_bf16_dots = false,
};

// ---- AVX-512 F/BW/VL (matmul_avx512.cpp, attention_avx512.cpp, elementwise_avx512.cpp) -----
// bf16 weights take vdpbf16ps where the CPU has AVX512_BF16, int8 / int4 weights vpdpbusd where
// it has AVX512_VNNI; without them (or with `extensions` false: matmul.h,
// detail::set_avx512_extensions_enabled) they are dequantised to f32 tiles for f32 FMAs.
KernelTable avx512_table(const CpuFeatures& f, bool extensions) {
  const bool bf16 = extensions && f.avx512_bf16;
  const bool vnni = extensions && f.avx512_vnni;
  return {
      .isa = Isa::kAvx512,
      .matmul = {detail::matmul_avx512_f32,
                 bf16 ? detail::matmul_avx512_bf16_dot : detail::matmul_avx512_dequant,
                 vnni ? detail::matmul_avx512_int8_vnni : detail::matmul_avx512_dequant,
                 vnni ? detail::matmul_avx512_int4_vnni : detail::matmul_avx512_dequant},
      .attend = {detail::attend_avx512_f32, detail::attend_avx512_bf16},
      .rms_norm = detail::rms_norm_avx512,
      .rope = detail::rope_avx512,
      .swiglu = detail::swiglu_avx512,
      .to_bf16 = detail::to_bf16_avx512,
      // Not tied to `extensions`, which is a switch of matmul alone.
      .attention_bf16_dots = f.avx512_bf16,
  };
}

}  // namespace

const KernelTable& kernel_table(Isa isa, std::string_view caller) {
  if (!isa_supported(isa)) {
    throw std::invalid_argument(std::string(caller) + ": isa " + std::string(to_string(isa)) +
                                " is not supported by this CPU (" + cpu_features().flags() + ")");
  }
  switch (isa) {
    case Isa::kScalar:
      return kScalarTable;
    case Isa::kAvx2:
      return kAvx2Table;
    case Isa::kAvx512:
      break;
  }
  static const KernelTable with_extensions = avx512_table(cpu_features(), true);
  static const KernelTable without_extensions = avx512_table(cpu_features(), false);
  return detail::avx512_extensions_enabled() ? with_extensions : without_extensions;
}

const KernelTable& best_kernel_table() { return kernel_table(best_isa()); }

}  // namespace llmcap::kernels
