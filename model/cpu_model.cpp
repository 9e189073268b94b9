#include "model/cpu_model.h"

#include <algorithm>

#include "base/text.h"
#include "model/input_error.h"

namespace llmcap::model {
namespace {

enum class Family { kIntelAmx, kIceLake, kZen3, kZen4, kZen5, kUnknown };

Family family_of(const std::string& microarchitecture) {
  const auto has = [&](const char* s) { return microarchitecture.find(s) != std::string::npos; };
  if (has("Sapphire Rapids") || has("Emerald Rapids") || has("Granite Rapids")) {
    return Family::kIntelAmx;
  }
  if (has("Ice Lake")) return Family::kIceLake;
  if (has("Zen 3")) return Family::kZen3;
  if (has("Zen 4")) return Family::kZen4;
  if (has("Zen 5")) return Family::kZen5;
  return Family::kUnknown;
}

}  // namespace

std::optional<PathRates> path_rates(const std::string& microarchitecture, InstructionPath path) {
  switch (family_of(microarchitecture)) {
    case Family::kIntelAmx:
      if (path == InstructionPath::kAmx) return PathRates{64, 1024, 2048};
      if (path == InstructionPath::kAvx512) return PathRates{64, 128, 256};
      return PathRates{32, 32, 128};
    case Family::kIceLake:
      if (path == InstructionPath::kAmx) return std::nullopt;
      if (path == InstructionPath::kAvx512) return PathRates{64, 64, 256};
      return PathRates{32, 32, 64};
    case Family::kZen3:
      if (path != InstructionPath::kAvx2) return std::nullopt;
      return PathRates{32, 32, 64};
    case Family::kZen4:
      if (path == InstructionPath::kAmx) return std::nullopt;
      if (path == InstructionPath::kAvx512) return PathRates{32, 64, 128};
      return PathRates{32, 32, 64};
    case Family::kZen5:
      if (path == InstructionPath::kAmx) return std::nullopt;
      if (path == InstructionPath::kAvx512) return PathRates{64, 128, 256};
      return PathRates{32, 32, 128};
    case Family::kUnknown:
      return std::nullopt;
  }
  return std::nullopt;
}

InstructionPath available_path(const HardwareSpec& cpu, InstructionPath wanted) {
  if (family_of(cpu.microarchitecture) == Family::kUnknown) {
    throw InputError("cpu \"" + cpu.id + "\": microarchitecture \"" + cpu.microarchitecture +
                     "\" has no instruction-path rates (known families: Sapphire Rapids, "
                     "Emerald Rapids, Granite Rapids, Ice Lake, Zen 3, Zen 4, Zen 5)");
  }
  for (const InstructionPath p :
       {InstructionPath::kAmx, InstructionPath::kAvx512, InstructionPath::kAvx2}) {
    if (static_cast<int>(p) < static_cast<int>(wanted)) continue;
    if (path_rates(cpu.microarchitecture, p)) return p;
  }
  return InstructionPath::kAvx2;
}

std::map<std::string, double> path_peak_flops(const HardwareSpec& cpu, int cores,
                                              InstructionPath path) {
  const std::optional<PathRates> r = path_rates(cpu.microarchitecture, path);
  if (!r) {
    throw InputError("cpu \"" + cpu.id + "\" (" + cpu.microarchitecture + ") has no " +
                     instruction_path_name(path) + " path");
  }
  const double per_cycle = static_cast<double>(cores) * cpu.clock_hz;
  return {
      {"f32", r->f32 * per_cycle}, {"bf16", r->bf16 * per_cycle}, {"int8", r->int8 * per_cycle}};
}

double cpu_read_bandwidth_bytes_per_s(const HardwareSpec& cpu, int cores) {
  const int used = std::clamp(cores, 1, std::max(1, cpu.num_cores));
  if (cpu.per_core_read_bytes_per_s > 0 && cpu.sustained_read_bytes_per_s > 0) {
    return std::min(used * cpu.per_core_read_bytes_per_s, cpu.sustained_read_bytes_per_s);
  }
  return cpu.peak_memory_bandwidth_bytes_per_s * used / std::max(1, cpu.num_cores);
}

std::string cpu_model_rule(const HardwareSpec& cpu, int cores, InstructionPath path) {
  std::string bw;
  if (cpu.per_core_read_bytes_per_s > 0 && cpu.sustained_read_bytes_per_s > 0) {
    bw = "read bandwidth min(" + std::to_string(cores) + " cores x " +
         base::gb_per_s(cpu.per_core_read_bytes_per_s) + ", socket " +
         base::gb_per_s(cpu.sustained_read_bytes_per_s) + ") (" + cpu.memory_model_source + ")";
  } else {
    bw = "read bandwidth " + std::to_string(cores) + "/" + std::to_string(cpu.num_cores) +
         " of the datasheet " + base::gb_per_s(cpu.peak_memory_bandwidth_bytes_per_s);
  }
  return bw + "; " + instruction_path_name(path) + " peaks of " + std::to_string(cores) +
         " cores at " + base::fixed(cpu.clock_hz / 1e9, 2) + " GHz";
}

void apply_cpu_model(Deployment& d, const HardwareSpec& cpu, int cores, InstructionPath wanted,
                     double compute_fraction, double socket_share) {
  const InstructionPath path = available_path(cpu, wanted);
  const double socket_bytes_per_s = cpu.sustained_read_bytes_per_s > 0
                                        ? cpu.sustained_read_bytes_per_s
                                        : cpu.peak_memory_bandwidth_bytes_per_s;
  const double share = std::clamp(socket_share, 0.0, 1.0);
  d.memory_bandwidth_bytes_per_s =
      std::min(cpu_read_bandwidth_bytes_per_s(cpu, cores), share * socket_bytes_per_s);
  d.peak_flops_per_s = path_peak_flops(cpu, cores, path);
  std::string narrower;
  if (path != wanted && compute_fraction > 0) {
    // The wanted path's rate per core and cycle as the engine's fits measured it (on Intel
    // server cores), at this CPU's cores and clock.
    const PathRates r = *path_rates("Sapphire Rapids", wanted);
    const double per_cycle = static_cast<double>(cores) * cpu.clock_hz;
    const std::map<std::string, double> own = {
        {"f32", r.f32 * per_cycle}, {"bf16", r.bf16 * per_cycle}, {"int8", r.int8 * per_cycle}};
    for (auto& [dtype, peak] : d.peak_flops_per_s) {
      peak = std::min(own.at(dtype), peak / compute_fraction);
    }
    narrower = " (the engine's " + std::string(instruction_path_name(wanted)) +
               " rate carried over, up to the " + instruction_path_name(path) + " peak)";
  }
  d.rule += "; as the engine runs it: " + cpu_model_rule(cpu, cores, path) + narrower +
            (share < 1 ? ", the slice's " + base::fixed(100 * share, 1) + "% of the socket at most"
                       : std::string());
}

}  // namespace llmcap::model
