// The CPU hardware model an engine runs on (docs/model.md, "Engines and the CPU model"):
// memory bandwidth as a function of the cores used, and the peak of the instruction path an
// engine's matrix products use, per core and cycle by microarchitecture.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "model/deployment.h"
#include "model/engine_profile.h"
#include "model/hardware.h"

namespace llmcap::model {

/// Operations per cycle per core of one instruction path (multiply and add count as two),
/// by compute dtype: "f32", "bf16", "int8".
struct PathRates {
  double f32 = 0;
  double bf16 = 0;
  double int8 = 0;
};

/// The rates of `path` on the cores of `microarchitecture` (HardwareSpec::microarchitecture,
/// matched by family: "Sapphire Rapids", "Emerald Rapids", "Granite Rapids", "Ice Lake",
/// "Zen 3", "Zen 4", "Zen 5"), or nullopt when those cores lack the path (AMX before Sapphire
/// Rapids and on AMD; AVX-512 on Zen 3) or the family is unknown. Issue rates of the
/// vendors' optimization manuals (Intel 64 and IA-32 Architectures Optimization Reference
/// Manual, AMX and AVX-512 chapters; AMD Software Optimization Guides for family 19h and
/// 1Ah): Intel server cores with two 512-bit FMA units: AVX-512 f32 64, bf16 (VDPBF16PS) 128,
/// int8 (VPDPBUSD) 256; AMX-BF16 1024, AMX-INT8 2048 (f32 stays on AVX-512); AVX2 f32 32,
/// int8 128 with AVX-VNNI (Sapphire Rapids and later), 64 without (two VPMADDUBSW + VPMADDWD
/// per 32 products). Zen 4 runs AVX-512 on 256-bit pipes (f32 32, bf16 64, int8 128); Zen 5
/// on full 512-bit ones (64, 128, 256). A path without a bf16 instruction computes bf16
/// products in f32.
std::optional<PathRates> path_rates(const std::string& microarchitecture, InstructionPath path);

/// The best path `cpu` has, at most `wanted` (AMX > AVX-512 > AVX2): an engine built for AMX
/// runs its AVX-512 kernels on a core without AMX. Throws InputError naming the CPU when its
/// microarchitecture is unknown to path_rates().
InstructionPath available_path(const HardwareSpec& cpu, InstructionPath wanted);

/// Peak operations per second of `cores` cores of `cpu` on `path` at the CPU's all-core clock
/// (HardwareSpec::clock_hz), by compute dtype ("f32", "bf16", "int8"). Throws InputError when
/// the cores lack the path.
std::map<std::string, double> path_peak_flops(const HardwareSpec& cpu, int cores,
                                              InstructionPath path);

/// DRAM read bandwidth of `cores` busy cores of one socket of `cpu`, bytes per second:
/// min(cores x per_core_read_bytes_per_s, sustained_read_bytes_per_s) when the catalog has the
/// CPU's memory model; otherwise the datasheet peak x cores / num_cores (the share
/// make_deployment gives a slice). `cores` in [1, num_cores].
double cpu_read_bandwidth_bytes_per_s(const HardwareSpec& cpu, int cores);

/// One line stating how cpu_read_bandwidth_bytes_per_s and path_peak_flops were derived.
std::string cpu_model_rule(const HardwareSpec& cpu, int cores, InstructionPath path);

/// `d` (a deployment on `cpu`, each device `cores` cores of one socket) as an engine of
/// instruction path `wanted` and compute fraction `compute_fraction` (in (0, 1]) sees it:
///  - memory_bandwidth_bytes_per_s = min(cpu_read_bandwidth_bytes_per_s(cpu, cores),
///    socket_share x the socket's sustained read bandwidth): a slice of a rented socket
///    (socket_share = its vCPUs / the socket's) does not count on its neighbours' share of the
///    memory system; a benchmark on a machine of its own passes socket_share 1;
///  - peak_flops_per_s = path_peak_flops(cpu, cores, available_path(cpu, wanted)); when the
///    cores lack the engine's path, each peak is raised to min(the wanted path's peak at an
///    Intel server core's rate per cycle, the available peak / compute_fraction): the engine's
///    fraction was measured on its own path, and on a narrower one the engine keeps its
///    measured rate up to the narrower path's peak;
///  - the rule extended by cpu_model_rule.
/// Throws as available_path.
void apply_cpu_model(Deployment& d, const HardwareSpec& cpu, int cores, InstructionPath wanted,
                     double compute_fraction, double socket_share);

}  // namespace llmcap::model
