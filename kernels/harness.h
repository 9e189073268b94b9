// Timing of kernels: warm-up, repeat, min and median (for calibration and benchmarks).
#pragma once

#include <cstdint>
#include <functional>

namespace llmcap::kernels {

struct Timing {
  double min_s = 0;
  double median_s = 0;
  int64_t num_runs = 0;
};

/// Runs fn `warmup` times, then times it (steady_clock) until at least `min_runs` runs and
/// `min_total_s` seconds have passed (at most max_runs); returns min and median per run.
Timing time_kernel(const std::function<void()>& fn, int warmup = 2, int min_runs = 5,
                   double min_total_s = 0.05, int max_runs = 1000);

}  // namespace llmcap::kernels
