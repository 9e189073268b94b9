#include "kernels/cpu_features.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define LLMCAP_X86 1
#endif

namespace llmcap::kernels {

std::string_view to_string(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
      return "scalar";
    case Isa::kAvx2:
      return "avx2";
    case Isa::kAvx512:
      return "avx512";
  }
  return "unknown";
}

std::string CpuFeatures::flags() const {
  std::string out;
  auto add = [&](bool on, const char* name) {
    if (!on) return;
    if (!out.empty()) out += ' ';
    out += name;
  };
  add(avx2, "avx2");
  add(fma, "fma");
  add(f16c, "f16c");
  add(avx512f, "avx512f");
  add(avx512bw, "avx512bw");
  add(avx512vl, "avx512vl");
  add(avx512_bf16, "avx512_bf16");
  add(avx512_vnni, "avx512_vnni");
  add(avx_vnni, "avx_vnni");
  add(amx_bf16, "amx_bf16");
  add(amx_int8, "amx_int8");
  return out;
}

namespace {

std::string read_model_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto start = line.find_first_not_of(" \t", colon + 1);
    if (start == std::string::npos) continue;
    return line.substr(start);
  }
  return "unknown";
}

#ifdef LLMCAP_X86
/// XCR0 via XGETBV when the OS has enabled XSAVE (CPUID.1:ECX.OSXSAVE), else 0.
unsigned long long read_xcr0() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return 0;
  if (!(ecx & (1u << 27))) return 0;  // OSXSAVE
  unsigned lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<unsigned long long>(hi) << 32) | lo;
}
#endif

CpuFeatures detect() {
  CpuFeatures f;
  f.model_name = read_model_name();
#ifdef LLMCAP_X86
  __builtin_cpu_init();
  // g++ 12 and clang 14 know these names; libgcc also checks the OS-enabled state, and we check
  // XCR0 ourselves below so that a libgcc that does not cannot report unusable registers.
  f.avx2 = __builtin_cpu_supports("avx2");
  f.fma = __builtin_cpu_supports("fma");
  f.avx512f = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.avx512_bf16 = __builtin_cpu_supports("avx512bf16");
  f.avx512_vnni = __builtin_cpu_supports("avx512vnni");
  // F16C, AVX-VNNI and AMX straight from CPUID (Intel SDM vol. 2A, leaves 01H and 07H):
  // clang 14's __builtin_cpu_supports knows none of these names.
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx)) f.f16c = (ecx >> 29) & 1u;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx)) {
    f.amx_bf16 = (edx >> 22) & 1u;
    f.amx_int8 = (edx >> 25) & 1u;
    const unsigned max_subleaf = eax;
    if (max_subleaf >= 1 && __get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx)) {
      f.avx_vnni = (eax >> 4) & 1u;
    }
  }

  const unsigned long long xcr0 = read_xcr0();
  const bool ymm_state = (xcr0 & 0x6) == 0x6;          // SSE + AVX state
  const bool zmm_state = (xcr0 & 0xe6) == 0xe6;        // + opmask, ZMM_Hi256, Hi16_ZMM
  const bool amx_state = (xcr0 & 0x60000) == 0x60000;  // XTILECFG + XTILEDATA
  if (!ymm_state) f.avx2 = f.fma = f.f16c = f.avx_vnni = false;
  if (!zmm_state) f.avx512f = f.avx512bw = f.avx512vl = f.avx512_bf16 = f.avx512_vnni = false;
  if (!amx_state) f.amx_bf16 = f.amx_int8 = false;
#endif
  return f;
}

}  // namespace

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = detect();
  return features;
}

bool isa_supported(Isa isa) {
  const CpuFeatures& f = cpu_features();
  switch (isa) {
    case Isa::kScalar:
      return true;
    case Isa::kAvx2:
      return f.avx2 && f.fma && f.f16c;
    case Isa::kAvx512:
      return f.avx512f && f.avx512bw && f.avx512vl && f.fma;
  }
  return false;
}

std::vector<Isa> supported_isas() {
  std::vector<Isa> out;
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (isa_supported(isa)) out.push_back(isa);
  }
  return out;
}

std::optional<Isa> parse_isa(std::string_view name) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    if (name == to_string(isa)) return isa;
  }
  return std::nullopt;
}

Isa choose_isa(Isa fastest, const char* cap, std::string* warning) {
  if (warning) warning->clear();
  if (cap == nullptr) return fastest;
  std::optional<Isa> parsed = parse_isa(cap);
  if (!parsed) {
    if (warning) {
      *warning = "llmcap: ignoring LLMCAP_ISA=\"" + std::string(cap) +
                 "\" (expected scalar, avx2 or avx512); using " + std::string(to_string(fastest));
    }
    return fastest;
  }
  return static_cast<int>(*parsed) < static_cast<int>(fastest) ? *parsed : fastest;
}

Isa best_isa() {
  static const Isa chosen = [] {
    std::vector<Isa> isas = supported_isas();
    const char* cap = std::getenv("LLMCAP_ISA");
    std::string warning;
    Isa isa = choose_isa(isas.back(), cap, &warning);
    if (!warning.empty()) std::cerr << warning << '\n';
    if (cap != nullptr && parse_isa(cap) && !isa_supported(*parse_isa(cap))) {
      std::cerr << "llmcap: LLMCAP_ISA=" << cap << " is not supported by this CPU; using "
                << to_string(isa) << '\n';
    }
    return isa;
  }();
  return chosen;
}

}  // namespace llmcap::kernels
