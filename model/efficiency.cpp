#include "model/efficiency.h"

namespace llmcap::model {

Efficiency default_efficiency(DeviceKind kind) {
  Efficiency e;
  if (kind == DeviceKind::kGpu) {
    // Decode is a stream of GEMVs over the weights; on A100/H100 these reach ~75-85% of the
    // HBM datasheet bandwidth (the "model bandwidth utilisation" of Databricks, "LLM Inference
    // Performance Engineering: Best Practices", 2023; NVIDIA's own STREAM-like bandwidthTest
    // tops out near 90%). We take the middle of that range.
    e.memory_bandwidth_fraction = 0.80;
    // Large bf16 GEMMs in serving (prefill) reach ~60-75% of the dense tensor-core peak
    // (cuBLAS on H100 SXM: ~600-700 of 989 TFLOP/s); attention and smaller shapes pull the
    // average to the low end.
    e.compute_fraction = 0.60;
    // nccl-tests all_reduce_perf "busbw" on NVLink reaches ~70-80% of the link datasheet rate
    // for the MB-sized messages of decode/prefill.
    e.link_bandwidth_fraction = 0.75;
    // Small-message NCCL all-reduce latency within one NVLink node: ~5-15 us.
    e.all_reduce_latency_s = 10e-6;
    // vLLM per-step CPU work (scheduling, input preparation, sampling) and kernel launches:
    // ~1-3 ms per step for 7-70B models with CUDA graphs.
    e.step_overhead_s = 2e-3;
    // vLLM's default gpu_memory_utilization.
    e.usable_memory_fraction = 0.90;
  } else {
    // STREAM triad on Sapphire Rapids / Genoa sockets reaches ~70-80% of the DDR5 peak
    // (channels x MT/s x 8 bytes).
    e.memory_bandwidth_fraction = 0.70;
    // bf16 GEMMs through oneDNN (AMX on Sapphire Rapids, AVX-512 elsewhere) in serving
    // stacks (vLLM CPU backend, IPEX) reach ~30-50% of the datasheet peak.
    e.compute_fraction = 0.40;
    // Used when a replica spans both sockets of a host (tp 2 over the inter-socket link, see
    // plan/planner.cpp, which sets the latency from the catalog's link latency).
    e.link_bandwidth_fraction = 0.75;
    e.all_reduce_latency_s = 10e-6;
    // Python-side scheduling and sampling of the vLLM CPU backend, without kernel launches.
    e.step_overhead_s = 1e-3;
    // Same headroom as vLLM's default on GPUs (OS, runtime and activations get the rest).
    e.usable_memory_fraction = 0.90;
  }
  return e;
}

}  // namespace llmcap::model
