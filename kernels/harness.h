// Timing of kernels: warm-up, repeat, min and median (for calibration and benchmarks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

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

/// One benchmark cell timed over several repetitions (time_kernel calls interleaved with the
/// other cells): each repetition's median, and the fastest run of all.
struct RepeatedTiming {
  std::vector<double> medians;  ///< one per repetition, seconds
  double min_s = 0;             ///< fastest run of any repetition (0 before the first)
  void add(const Timing& t);
  /// Median of the repetitions' medians, seconds (the mean of the middle two for an even
  /// count); 0 without repetitions.
  double median_s() const;
};

/// A cell whose median is more than this many times its fastest run was timed during a burst
/// of contention (on a shared host: other tenants' memory traffic or CPU time), not at the
/// machine's usual speed. On the 2-vCPU development VM, quiet cells of the calibration sweep sit
/// at 1.0-1.3x, and cells hit by bursts at 5-30x (int4 2048x8192 at batch 1: median 3.8 ms,
/// fastest 0.13 ms, 2026-11-30), which then dominated the fit's error.
constexpr double kContendedRatio = 2.0;

/// Times cells[i] again with measure(i) while its median_s() > ratio x its min_s, one more
/// repetition per pass over the contended cells, at most max_extra passes (so at most
/// max_extra extra repetitions per cell). Returns the number of extra repetitions taken. The
/// median of the repetitions then rests on those taken outside the burst, if any were.
int remeasure_contended(const std::vector<RepeatedTiming*>& cells,
                        const std::function<Timing(std::size_t)>& measure,
                        double ratio = kContendedRatio, int max_extra = 2);

}  // namespace llmcap::kernels
