#include "kernels/machine.h"

#include <immintrin.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/stats.h"
#include "kernels/cpu_features.h"
#include "kernels/scratch.h"
#include "kernels/thread_pool.h"

namespace llmcap::kernels {
namespace {

/// Size in bytes from a /sys cache "size" file ("48K", "1024K", "32M"); 0 if unreadable.
int64_t sys_cache_size(int index, const char* want_type, int want_level) {
  const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
  std::ifstream level_f(dir + "level"), type_f(dir + "type"), size_f(dir + "size");
  int level = 0;
  std::string type, size;
  if (!(level_f >> level) || !(type_f >> type) || !(size_f >> size) || level != want_level) {
    return 0;
  }
  if (type != want_type && type != "Unified") return 0;
  int64_t value = std::atoll(size.c_str());
  if (size.back() == 'K') value <<= 10;
  if (size.back() == 'M') value <<= 20;
  return value;
}

int64_t cache_size(int sysconf_name, const char* type, int level) {
  const long v = sysconf(sysconf_name);
  if (v > 0) return v;
  for (int i = 0; i < 8; ++i) {
    if (const int64_t s = sys_cache_size(i, type, level); s > 0) return s;
  }
  return 0;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// The mean of the middle pair for an even count (base/stats.h).
double median(std::vector<double> v) { return base::midpoint_median(std::move(v)); }

using Buffer = std::unique_ptr<float, detail::FreeDeleter>;

Buffer allocate(int64_t bytes) {
  return Buffer(static_cast<float*>(detail::allocate_large(bytes)));
}

// Sums n floats (n a multiple of 128) as kStreams interleaved streams over equal parts of
// [p, p + n) (a tail shorter than kStreams x 64 floats is read as one stream), four independent
// accumulators so that the adds keep up with memory; the result is used by the caller (a real
// read, not optimised away). With kPrefetch every cache line is also prefetched kReadPrefetch
// bytes ahead. Which loop is fastest changes with the host's state: on the 2-vCPU EPYC VM an
// earlier session saw prefetching raise one stream from 25 to 32 GB/s, and on a quiet minute
// of 2026-11-30 4 streams per thread read 72 GB/s where one stream read 57 (no prefetch) or
// 51 (prefetch). So the read bandwidth is the fastest of several loops (fastest_parallel_read_s).
constexpr int kReadPrefetch = 2048;

template <int kStreams, bool kPrefetch>
__attribute__((target("avx512f"))) float sum_avx512(const float* p, int64_t n) {
  __m512 a0 = _mm512_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
  const int64_t per = n / (kStreams * 64) * 64;  // floats per stream, whole 256-byte steps
  for (int64_t i = 0; i < per; i += 64) {
    for (int s = 0; s < kStreams; ++s) {
      const float* q = p + s * per + i;
      if constexpr (kPrefetch) {
        for (int line = 0; line < 4; ++line) {
          _mm_prefetch(reinterpret_cast<const char*>(q + 16 * line) + kReadPrefetch, _MM_HINT_T0);
        }
      }
      a0 = _mm512_add_ps(a0, _mm512_load_ps(q));
      a1 = _mm512_add_ps(a1, _mm512_load_ps(q + 16));
      a2 = _mm512_add_ps(a2, _mm512_load_ps(q + 32));
      a3 = _mm512_add_ps(a3, _mm512_load_ps(q + 48));
    }
  }
  for (int64_t i = kStreams * per; i < n; i += 16) a0 = _mm512_add_ps(a0, _mm512_load_ps(p + i));
  const __m512 s = _mm512_add_ps(_mm512_add_ps(a0, a1), _mm512_add_ps(a2, a3));
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, s);
  float out = 0;
  for (const float f : lanes) out += f;
  return out;
}

// As sum_avx512 with 256-bit loads (AVX2 hosts). Until 2026-12-01 the AVX2 probe was the
// prefetching single stream alone; on an AVX2-only EPYC (Zen 3) VM f32 products with four
// weight rows per tile then streamed at 105-132% of it (kernels_bench, Llama-8B MLP shapes).
template <int kStreams, bool kPrefetch>
__attribute__((target("avx2"))) float sum_avx2(const float* p, int64_t n) {
  __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0, a7 = a0;
  const int64_t per = n / (kStreams * 64) * 64;  // floats per stream, whole 256-byte steps
  for (int64_t i = 0; i < per; i += 64) {
    for (int s = 0; s < kStreams; ++s) {
      const float* q = p + s * per + i;
      if constexpr (kPrefetch) {
        for (int line = 0; line < 4; ++line) {
          _mm_prefetch(reinterpret_cast<const char*>(q + 16 * line) + kReadPrefetch, _MM_HINT_T0);
        }
      }
      a0 = _mm256_add_ps(a0, _mm256_load_ps(q));
      a1 = _mm256_add_ps(a1, _mm256_load_ps(q + 8));
      a2 = _mm256_add_ps(a2, _mm256_load_ps(q + 16));
      a3 = _mm256_add_ps(a3, _mm256_load_ps(q + 24));
      a4 = _mm256_add_ps(a4, _mm256_load_ps(q + 32));
      a5 = _mm256_add_ps(a5, _mm256_load_ps(q + 40));
      a6 = _mm256_add_ps(a6, _mm256_load_ps(q + 48));
      a7 = _mm256_add_ps(a7, _mm256_load_ps(q + 56));
    }
  }
  for (int64_t i = kStreams * per; i < n; i += 8) a0 = _mm256_add_ps(a0, _mm256_load_ps(p + i));
  const __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                                 _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, s);
  float out = 0;
  for (const float f : lanes) out += f;
  return out;
}

float sum_scalar(const float* p, int64_t n) {
  float a[8] = {};
  for (int64_t i = 0; i < n; i += 8) {
    for (int j = 0; j < 8; ++j) a[j] += p[i + j];
  }
  float out = 0;
  for (const float f : a) out += f;
  return out;
}

using SumFn = float (*)(const float*, int64_t);

/// The read loops of the best ISA this CPU runs (n a multiple of 128 floats).
std::vector<SumFn> best_sums() {
  if (isa_supported(Isa::kAvx512)) {
    return {sum_avx512<1, true>, sum_avx512<4, false>, sum_avx512<4, true>};
  }
  if (isa_supported(Isa::kAvx2)) {
    return {sum_avx2<1, true>, sum_avx2<4, false>, sum_avx2<4, true>};
  }
  return {sum_scalar};
}

constexpr int64_t kBlock = 512;  // bytes: whole 128-float steps of the sum kernels

// Sums `blocks` blocks of buf split evenly over the pool's threads; returns the seconds taken
// and adds the sum to *total (so that the reads cannot be elided).
double timed_parallel_sum(ThreadPool& pool, SumFn sum, const float* buf, int64_t blocks,
                          double* total) {
  const int t = pool.num_threads();
  std::vector<float> partial(static_cast<std::size_t>(t), 0.0f);
  const auto start = std::chrono::steady_clock::now();
  pool.parallel_for(t, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t first = blocks * i / t, last = blocks * (i + 1) / t;
      partial[static_cast<std::size_t>(i)] =
          sum(buf + first * (kBlock / 4), (last - first) * (kBlock / 4));
    }
  });
  const double s = seconds_since(start);
  for (const float p : partial) *total += p;
  return s;
}

// The least time of timed_parallel_sum over the read loops `sums` (each adds to *total).
double fastest_parallel_read_s(ThreadPool& pool, const std::vector<SumFn>& sums, const float* buf,
                               int64_t blocks, double* total) {
  double best = 1e300;
  for (const SumFn sum : sums)
    best = std::min(best, timed_parallel_sum(pool, sum, buf, blocks, total));
  return best;
}

}  // namespace

MachineInfo describe_machine() {
  MachineInfo m;
  const CpuFeatures& f = cpu_features();
  m.cpu_model = f.model_name;
  m.isa = f.flags();
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    m.num_cores = CPU_COUNT(&set);
  }
  if (m.num_cores < 1) m.num_cores = std::max(1L, sysconf(_SC_NPROCESSORS_ONLN));
  m.l1d_bytes = cache_size(_SC_LEVEL1_DCACHE_SIZE, "Data", 1);
  m.l2_bytes = cache_size(_SC_LEVEL2_CACHE_SIZE, "Unified", 2);
  m.l3_bytes = cache_size(_SC_LEVEL3_CACHE_SIZE, "Unified", 3);
  return m;
}

void measure_bandwidth(MachineInfo& machine, int max_threads, int64_t buffer_bytes,
                       int repetitions) {
  if (max_threads < 1 || repetitions < 1 || buffer_bytes < (int64_t{1} << 20)) {
    throw std::invalid_argument(
        "measure_bandwidth: expected max_threads >= 1, repetitions >= 1 and a buffer of at "
        "least 1 MiB");
  }
  // Whole 512-byte blocks per thread, so every chunk is a multiple of the 128-float step.
  const int64_t blocks = buffer_bytes / kBlock;
  const int64_t read_bytes = blocks * kBlock;
  const int64_t copy_blocks = blocks / 2;  // copy: source and destination share the budget
  const int64_t copy_bytes = copy_blocks * kBlock;
  const Buffer read_buf = allocate(read_bytes);
  const Buffer src = allocate(copy_bytes);
  const Buffer dst = allocate(copy_bytes);
  {
    // Touch every page (first-touch by the pool's threads below would be nicer on multi-socket
    // machines; one socket is what we calibrate).
    float* r = read_buf.get();
    std::fill(r, r + read_bytes / 4, 1.0f);
    std::fill(src.get(), src.get() + copy_bytes / 4, 2.0f);
    std::memset(dst.get(), 0, static_cast<std::size_t>(copy_bytes));
  }
  const std::vector<SumFn> sums = best_sums();
  std::vector<std::unique_ptr<ThreadPool>> pools;
  for (int t = 1; t <= max_threads; ++t) pools.push_back(std::make_unique<ThreadPool>(t));

  std::vector<std::vector<double>> read_s(max_threads), copy_s(max_threads);
  std::atomic<double> sink{0};
  for (int rep = 0; rep < repetitions; ++rep) {
    // Interleaved: every thread count in every round, so drift hits all of them alike.
    for (int t = 1; t <= max_threads; ++t) {
      ThreadPool& pool = *pools[static_cast<std::size_t>(t - 1)];
      double total = 0;
      read_s[static_cast<std::size_t>(t - 1)].push_back(
          fastest_parallel_read_s(pool, sums, read_buf.get(), blocks, &total));
      sink.store(sink.load() + total);

      auto start = std::chrono::steady_clock::now();
      pool.parallel_for(t, [&](int64_t b, int64_t e, int) {
        for (int64_t i = b; i < e; ++i) {
          const int64_t first = copy_blocks * i / t, last = copy_blocks * (i + 1) / t;
          std::memcpy(dst.get() + first * (kBlock / 4), src.get() + first * (kBlock / 4),
                      static_cast<std::size_t>((last - first) * kBlock));
        }
      });
      copy_s[static_cast<std::size_t>(t - 1)].push_back(seconds_since(start));
    }
  }
  // The sum of 1.0f values is checked, so that the reads cannot be elided.
  if (!(sink.load() > 0) || dst.get()[copy_bytes / 4 - 1] != 2.0f) {
    throw std::logic_error("measure_bandwidth: read or copy check failed");
  }
  for (int t = 1; t <= max_threads; ++t) {
    const auto i = static_cast<std::size_t>(t - 1);
    machine.read_bandwidth_bytes_per_s[t] = static_cast<double>(read_bytes) / median(read_s[i]);
    machine.copy_bandwidth_bytes_per_s[t] =
        2.0 * static_cast<double>(copy_bytes) / median(copy_s[i]);
  }
}

ReadProbe::ReadProbe(int64_t buffer_bytes) {
  if (buffer_bytes < (int64_t{1} << 20)) {
    throw std::invalid_argument("ReadProbe: expected a buffer of at least 1 MiB, got " +
                                std::to_string(buffer_bytes) + " bytes");
  }
  blocks_ = buffer_bytes / kBlock;
  Buffer b = allocate(blocks_ * kBlock);
  std::fill(b.get(), b.get() + blocks_ * kBlock / 4, 1.0f);
  buffer_ = std::shared_ptr<float>(b.release(), detail::FreeDeleter{});
}

double ReadProbe::read_bytes_per_s(ThreadPool& pool) const {
  double total = 0;
  const double s = fastest_parallel_read_s(pool, best_sums(), buffer_.get(), blocks_, &total);
  if (!(total > 0)) throw std::logic_error("ReadProbe: read check failed");
  return static_cast<double>(blocks_ * kBlock) / s;
}

}  // namespace llmcap::kernels
