// Synthetic GPUs and GPU instance types for the planner's tests: round figures, not a real
// product (each record says "synthetic"), so that expected fleets can be worked by hand.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

#include "model/hardware.h"
#include "plan/scenario.h"
#include "test_util.h"

namespace llmcap::plan::testing {

/// A GPU of `memory_bytes`, `bandwidth_bytes_per_s` and `bf16_flops_per_s` (int8 twice that,
/// f32 5e13), 100 SMs at 1.5 GHz, 300 GB/s interconnect, 500 W.
inline model::HardwareSpec synthetic_gpu(const std::string& id, int64_t memory_bytes,
                                         double bandwidth_bytes_per_s, double bf16_flops_per_s) {
  model::HardwareSpec g;
  g.id = id;
  g.name = "Test GPU " + id;
  g.kind = model::DeviceKind::kGpu;
  g.num_cores = 100;
  g.clock_hz = 1.5e9;
  g.memory_bytes = memory_bytes;
  g.peak_memory_bandwidth_bytes_per_s = bandwidth_bytes_per_s;
  g.peak_flops_per_s = {{"f32", 5e13}, {"bf16", bf16_flops_per_s}, {"int8", 2 * bf16_flops_per_s}};
  g.interconnect_bandwidth_bytes_per_s = 3e11;
  g.tdp_watts = 500;
  g.source = "synthetic test record";
  g.as_of = "2026-11-29";
  return g;
}

/// An instance type of `num_gpus` GPUs `gpu_id` at `usd_per_hour` (16 vCPUs, 128 GiB).
inline model::InstanceType synthetic_gpu_instance(const std::string& id, const std::string& gpu_id,
                                                  int num_gpus, double usd_per_hour) {
  model::InstanceType i;
  i.id = id;
  i.provider = "Test";
  i.name = id;
  i.region = "test-1";
  i.kind = model::DeviceKind::kGpu;
  i.gpu_id = gpu_id;
  i.num_gpus = num_gpus;
  i.vcpus = 16;
  i.memory_bytes = int64_t{128} << 30;
  i.usd_per_hour = usd_per_hour;
  i.source = "synthetic";
  i.as_of = "2026-11-29";
  return i;
}

/// Llama-3.1-8B on Poisson arrivals at `rate_per_s` of `num_requests` requests with the
/// lengths of tests/plan/data/lengths.csv; SLO p99 TTFT 2 s and TPOT 0.05 s; seed 3; at most
/// 64 instances.
inline Scenario poisson_llama_scenario(double rate_per_s, int64_t num_requests) {
  Scenario s;
  s.file = "test-scenario.json";
  s.name = "test";
  s.model_config = llmcap::testing::data_dir() / "models" / "llama-3.1-8b.json";
  s.workload.kind = WorkloadSpec::Kind::kPoisson;
  s.workload.path = std::filesystem::path(LLMCAP_TEST_DATA_DIR) / "lengths.csv";
  s.workload.rate_per_s = rate_per_s;
  s.workload.num_requests = num_requests;
  s.slo.ttft_s = 2.0;
  s.slo.tpot_s = 0.05;
  s.seed = 3;
  s.max_instances = 64;
  return s;
}

}  // namespace llmcap::plan::testing
