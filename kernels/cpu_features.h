// CPU features and the instruction-set paths the kernels can take on this machine.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmcap::kernels {

/// A kernel implementation path. Every kernel has all three; kScalar is the reference.
enum class Isa {
  kScalar,  ///< plain C++, the reference and the fallback
  kAvx2,    ///< AVX2 + FMA + F16C (and AVX-VNNI for int8 dot products where present)
  kAvx512,  ///< AVX-512 F/BW/VL (+ AVX512_BF16 and AVX512_VNNI where present)
};
std::string_view to_string(Isa isa);  ///< "scalar" | "avx2" | "avx512"

/// What this CPU supports, read once with CPUID (via the compiler's __builtin_cpu_supports).
struct CpuFeatures {
  std::string model_name;  ///< from /proc/cpuinfo "model name", else "unknown"
  bool avx2 = false, fma = false, f16c = false;
  bool avx512f = false, avx512bw = false, avx512vl = false;
  bool avx512_bf16 = false, avx512_vnni = false, avx_vnni = false;
  bool amx_bf16 = false, amx_int8 = false;
  /// Space-separated names of the flags above that are set, e.g. "avx2 fma f16c avx512f ...".
  std::string flags() const;
};

/// Detected once per process; thread-safe.
const CpuFeatures& cpu_features();

/// Whether this CPU can run `isa` (kScalar always; kAvx2 needs avx2+fma+f16c; kAvx512 needs
/// avx512f+bw+vl).
bool isa_supported(Isa isa);

/// The paths this CPU can run, scalar first.
std::vector<Isa> supported_isas();

/// The fastest supported path, chosen once. The environment variable LLMCAP_ISA ("scalar",
/// "avx2", "avx512") caps it (for tests and comparisons); an unknown or unsupported value is
/// ignored with a warning on stderr.
Isa best_isa();

/// Parses an isa name as written by to_string ("scalar", "avx2", "avx512"); nullopt otherwise.
std::optional<Isa> parse_isa(std::string_view name);

/// The choice best_isa() makes, exposed for tests: `fastest` is the fastest supported path and
/// `cap` the value of LLMCAP_ISA (nullptr when unset). A known cap lowers the result to
/// min(fastest, cap); an unknown cap is ignored and, when `warning` is not null, a message naming
/// the value is written there (else `warning` is cleared).
Isa choose_isa(Isa fastest, const char* cap, std::string* warning = nullptr);

}  // namespace llmcap::kernels
