// Fixtures of the calibration tests (tests/model/calibration_test.cpp and the profile database's,
// tests/store/profile_store_test.cpp): kernel samples and a profile of a known machine.
#pragma once

#include <cstdint>
#include <string>
#include <tuple>

#include "model/calibration.h"

namespace llmcap::model::testing {

/// One kernel sample: `seconds` median (min 5 % below), rows x cols 4096 x 4096, batch 1.
inline KernelSample sample(const std::string& op, const std::string& format, double bytes,
                           double flops, double seconds, int threads = 2, bool cache = false) {
  KernelSample s;
  s.op = op;
  s.format = format;
  s.backend = "llmcap";
  s.rows = 4096;
  s.cols = 4096;
  s.batch = 1;
  s.threads = threads;
  s.min_s = seconds * 0.95;
  s.median_s = seconds;
  s.bytes = bytes;
  s.flops = flops;
  s.bytes_per_s = bytes / seconds;
  s.flops_per_s = flops / seconds;
  s.cache_resident = cache;
  return s;
}

/// Matmul samples of a known machine: 20 us overhead, 30 GB/s, 200 GFLOP/s (bf16) and
/// attention at 5 us + bytes / 20 GB/s + flops / 80 GFLOP/s over two GQA layouts (4 and 8
/// query heads per KV head, so bytes and flops are not proportional), with +-2 % deterministic
/// noise.
inline CalibrationProfile synthetic_profile() {
  CalibrationProfile p;
  p.created_at = "2026-11-29T00:00:00Z";
  p.tool = "test";
  p.machine.cpu_model = "AMD EPYC";
  p.machine.isa = "avx2 fma f16c avx512f avx512bw avx512vl";
  p.machine.num_cores = 2;
  p.machine.l1d_bytes = 49152;
  p.machine.l2_bytes = 1 << 20;
  p.machine.l3_bytes = 32 << 20;
  p.machine.read_bandwidth_bytes_per_s = {{1, 25e9}, {2, 40e9}};
  p.machine.copy_bandwidth_bytes_per_s = {{1, 26e9}, {2, 45e9}};
  int k = 0;
  for (const double rows : {1024.0, 4096.0, 14336.0}) {
    for (const double batch : {1.0, 4.0, 16.0}) {
      const double bytes = rows * 4096 * 2 + 4 * batch * (rows + 4096);
      const double flops = 2 * rows * 4096 * batch;
      const double noise = 1 + 0.02 * ((k++ % 3) - 1);
      p.kernels.push_back(
          sample("matmul", "bf16", bytes, flops, (20e-6 + bytes / 30e9 + flops / 200e9) * noise));
      p.kernels.back().batch = static_cast<int64_t>(batch);
      p.kernels.back().rows = static_cast<int64_t>(rows);
    }
  }
  for (const auto& [q_heads, kv_heads, head_dim] :
       {std::tuple{32.0, 8.0, 128.0}, std::tuple{16.0, 2.0, 64.0}}) {
    for (const double context : {128.0, 1024.0, 4096.0, 16384.0}) {
      const double bytes = 2 * kv_heads * context * head_dim * 2;
      const double flops = 4 * context * q_heads * head_dim;
      const double noise = 1 + 0.01 * ((k++ % 3) - 1);
      p.kernels.push_back(
          sample("attention", "bf16", bytes, flops, (5e-6 + bytes / 20e9 + flops / 80e9) * noise));
      p.kernels.back().rows = static_cast<int64_t>(kv_heads * head_dim);
      p.kernels.back().cols = static_cast<int64_t>(context);
      p.kernels.back().batch = static_cast<int64_t>(q_heads);
    }
  }
  // Ignored by the fit: other thread count, cache-resident.
  p.kernels.push_back(sample("matmul", "bf16", 1e6, 1e6, 1.0, 1));
  p.kernels.push_back(sample("matmul", "bf16", 1e6, 1e6, 1.0, 2, /*cache=*/true));
  p.fit = fit_calibration(p.kernels);
  return p;
}

}  // namespace llmcap::model::testing
