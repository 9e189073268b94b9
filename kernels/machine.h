// The machine the kernels run on: CPU, caches and measured memory bandwidth.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "kernels/thread_pool.h"

namespace llmcap::kernels {

struct MachineInfo {
  std::string cpu_model;  ///< "model name" of /proc/cpuinfo
  std::string isa;        ///< CpuFeatures::flags()
  int num_cores = 0;      ///< logical CPUs this process may use (sched_getaffinity)
  int64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;  ///< per core (L1, L2) / total L3; 0 unknown
  /// Measured STREAM-like bandwidth by thread count: "read" sums a buffer far beyond the last-
  /// level cache (bytes read / s; in each repetition the fastest of the read loops: one stream
  /// per thread with software prefetch, four interleaved streams with and without it, with
  /// AVX-512 or else AVX2 loads); "copy" copies one (bytes read + written / s). Median of
  /// interleaved repetitions.
  std::map<int, double> read_bandwidth_bytes_per_s;
  std::map<int, double> copy_bandwidth_bytes_per_s;
};

/// Reads the CPU model, flags, core count and cache sizes (sysconf / /sys / CPUID).
MachineInfo describe_machine();

/// Measures read and copy bandwidth for 1..max_threads threads on buffers of `buffer_bytes`
/// (default 512 MiB, far beyond any L3 here), `repetitions` interleaved rounds, medians kept.
void measure_bandwidth(MachineInfo& machine, int max_threads,
                       int64_t buffer_bytes = int64_t{512} << 20, int repetitions = 5);

/// A buffer far beyond the caches whose read time can be taken again and again (the same sum
/// kernel as measure_bandwidth's "read"), so that benchmarks can interleave bandwidth probes
/// with the kernels they compare against it: the bandwidth of a shared machine drifts minute
/// to minute. Throws std::invalid_argument for a buffer under 1 MiB.
class ReadProbe {
 public:
  explicit ReadProbe(int64_t buffer_bytes);
  /// Reads the whole buffer on all of pool's threads once per read loop of measure_bandwidth;
  /// bytes read per second of the fastest.
  double read_bytes_per_s(ThreadPool& pool) const;
  int64_t bytes() const { return blocks_ * 512; }

 private:
  int64_t blocks_ = 0;
  std::shared_ptr<float> buffer_;
};

}  // namespace llmcap::kernels
