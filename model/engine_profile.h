// Inference engine profiles (data/engines/*.json, docs/engines.md): what an engine costs on top
// of the hardware (per-step host work, per-kernel launch cost, the fractions of the hardware's
// bandwidth and of its instruction path's peak its kernels reach) and how it schedules (its
// default batching policy, token budget and running-sequence limit). Every figure carries its
// source and date.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/efficiency.h"
#include "model/hardware.h"

namespace llmcap::model {

/// The instruction family a CPU engine's matrix products run on (its kernels' inner loop).
///  - kAmx: Intel AMX tiles (TMUL: BF16 and INT8 dot products), Sapphire Rapids and later.
///  - kAvx512: AVX-512 FMA, with AVX512_BF16 (VDPBF16PS) and AVX512_VNNI (VPDPBUSD) where the
///    core has them.
///  - kAvx2: 256-bit AVX2 FMA (and AVX-VNNI where the core has it).
enum class InstructionPath { kAmx, kAvx512, kAvx2 };
/// "amx" | "avx512" | "avx2".
const char* instruction_path_name(InstructionPath path);

/// One figure of a profile with its provenance.
struct SourcedFigure {
  double value = 0;
  std::string source;
  std::string as_of;
};

/// The scheduler defaults of an engine (the names are vLLM's): batching policy
/// ("static" | "continuous" | "chunked_prefill", as sim::parse_batching_policy reads them),
/// sequences running at once, new tokens per step.
struct EngineScheduler {
  std::string policy;
  int64_t max_num_seqs = 0;
  int64_t max_num_batched_tokens = 0;
  /// Automatic prefix caching on by default ("prefix_caching", default false).
  bool prefix_caching = false;
  /// Tokens per KV-cache block (vLLM block_size, SGLang page_size, TensorRT-LLM
  /// tokens_per_block); 0 when the file does not say (the scenario's is used).
  int64_t block_size_tokens = 0;
  /// "schedule_order": "fcfs" (default) or "longest_prefix" (SGLang's lpm: waiting requests
  /// with the longest cached prefix first).
  bool longest_prefix_first = false;
  /// "allocate_per_chunk" (default false): a chunked prefill takes the KV blocks of each chunk
  /// as it is scheduled (vLLM v1), not of its whole prefill at admission.
  bool allocate_per_chunk = false;
  std::string source;
  std::string as_of;
};

/// One engine on one kind of device.
struct EngineProfile {
  std::string id;       ///< file stem, e.g. "vllm", "llama.cpp-cpu"
  std::string name;     ///< e.g. "vLLM (V1 engine)"
  std::string version;  ///< the versions the figures describe
  DeviceKind kind = DeviceKind::kGpu;
  EngineScheduler scheduler;
  SourcedFigure step_overhead_s;  ///< host work per engine step (scheduling, sampling), s
  /// Fixed cost of each kernel the step launches (GPU: launch and ramp-up, per kernel per
  /// layer; CPU: a parallel region's fork/join), s.
  SourcedFigure kernel_overhead_s;
  /// Achieved / available memory bandwidth of the engine's decode kernels: of the datasheet
  /// peak on GPUs, of the CPU bandwidth model's figure (model/cpu_model.h) on CPUs.
  SourcedFigure memory_bandwidth_fraction;
  /// Achieved / peak of the instruction path on large (prefill-sized) matrix products.
  SourcedFigure compute_fraction;
  /// Optional ("decode_compute_fraction"; value 0 when absent: compute_fraction): achieved /
  /// peak on the few-row products of decode-only steps.
  SourcedFigure decode_compute_fraction;
  /// Optional ("frontend_latency_s"; value 0 when absent): time each request spends in the
  /// engine's serving front end (API server, tokenization) before its scheduler sees it, s;
  /// the simulator's sim::FleetConfig::frontend_latency.
  SourcedFigure frontend_latency_s;
  /// Memory the engine may use for weights + KV cache, as a fraction of the device's.
  SourcedFigure usable_memory_fraction;
  /// CPU engines: the instruction path of their matrix products, with its source.
  InstructionPath cpu_path = InstructionPath::kAvx512;
  std::string cpu_path_source;
  /// Fitted profiles only (`llmcap calibrate --from-benchmark`, app/benchmark_fit.h): the
  /// catalog hardware id (data/hardware/*.json) the figures were fitted on, and the fit in one
  /// line (points, files, fit and left-out error). Empty for the profiles of data/engines/.
  std::string hardware;
  std::string fit_summary;
  std::filesystem::path file;
};

/// Reads one profile. Throws InputError naming the file, the field, the value and what was
/// expected for: a missing or mistyped field, a figure without "value", "source" or "as_of",
/// a fraction outside (0, 1], a negative time, an unknown device kind, batching policy
/// (static, continuous, chunked_prefill) or instruction path (amx, avx512, avx2), a CPU
/// engine without "cpu_path" (or a GPU engine with one), a chunked_prefill token budget below
/// max_num_seqs, an id other than the file's name (except in a fitted profile, one with
/// "hardware": its id names the engine it was fitted for), a "fit" without a "summary" string,
/// and an unknown field.
EngineProfile load_engine_profile(const std::filesystem::path& file);

/// The profile as load_engine_profile reads it (two-space indented JSON, every figure with its
/// value, source and as_of; "hardware" and `fit` (an object holding at least "summary") when
/// the profile is a fitted one). load_engine_profile(file with this text) == `engine`.
std::string engine_profile_to_json(const EngineProfile& engine,
                                   const nlohmann::ordered_json& fit = nlohmann::ordered_json());

/// Every profile of `<data_dir>/engines/*.json`, by id, in file-name order. An absent folder
/// gives none. Throws as load_engine_profile.
std::map<std::string, EngineProfile> load_engine_profiles(const std::filesystem::path& data_dir);

/// The profile `id` of the catalog (Catalog::find_engine); throws InputError("<context>:
/// unknown engine "x"; known: a, b, ...").
const EngineProfile& find_engine(const Catalog& catalog, const std::string& id,
                                 const std::string& context);

/// The profile that prices a device of catalog hardware `hardware_id`: the fitted profile of
/// `fitted` (calibrate --from-benchmark) for that hardware when there is one, else `chosen`
/// (nullptr: none).
const EngineProfile* engine_for(const EngineProfile* chosen,
                                const std::vector<EngineProfile>& fitted,
                                const std::string& hardware_id);

/// Reads fitted profiles (load_engine_profile). Throws InputError naming `context` and the
/// file for: a profile without "hardware" (not a fitted one), two profiles for one hardware,
/// and an engine id that differs from the engine `chosen_gpu` / `chosen_cpu` named for that
/// device kind ("" when none was named).
std::vector<EngineProfile> load_fitted_engines(const std::vector<std::filesystem::path>& files,
                                               const std::string& chosen_gpu,
                                               const std::string& chosen_cpu,
                                               const std::string& context);
/// Throws InputError naming `context` and the file when a fitted profile's hardware is not in
/// `catalog` or is of the other device kind.
void check_fitted_hardware(const std::vector<EngineProfile>& fitted, const Catalog& catalog,
                           const std::string& context);

/// `base` (default_efficiency of the engine's device kind) with the engine's figures:
/// step_overhead_s, kernel_overhead_s, memory_bandwidth_fraction, compute_fraction,
/// decode_compute_fraction and usable_memory_fraction replaced; the link figures kept.
Efficiency engine_efficiency(const EngineProfile& engine, const Efficiency& base);

}  // namespace llmcap::model
