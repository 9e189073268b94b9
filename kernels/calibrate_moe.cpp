// The calibration sweep's expert-grouped products (kernels/moe.h): a mixture-of-experts layer's
// projection timed at a few token counts, in int8 and int4 (kernels/calibrate.h).
#include <algorithm>
#include <numeric>
#include <string>

#include "base/random.h"
#include "kernels/calibrate.h"
#include "kernels/harness.h"
#include "kernels/moe.h"

namespace llmcap::kernels::detail {
namespace {

/// Routings of `tokens` tokens to k of `experts` experts each, uniformly at random (seeded):
/// every token a random k-subset, gates 1/k.
std::vector<MoeRouting> random_routings(int64_t experts, int64_t k, int64_t tokens, int count) {
  std::vector<MoeRouting> out;
  uint64_t state = 0x5EED0000u + static_cast<uint64_t>(tokens);
  std::vector<int32_t> order(static_cast<size_t>(experts));
  for (int i = 0; i < count; ++i) {
    MoeRouting r;
    r.tokens = tokens;
    r.k = k;
    for (int64_t t = 0; t < tokens; ++t) {
      std::iota(order.begin(), order.end(), 0);
      for (int64_t j = 0; j < k; ++j) {  // a partial Fisher-Yates shuffle
        const auto pick =
            static_cast<int64_t>(base::splitmix64_next(state) % static_cast<uint64_t>(experts - j));
        std::swap(order[static_cast<size_t>(j)], order[static_cast<size_t>(j + pick)]);
        r.expert.push_back(order[static_cast<size_t>(j)]);
        r.gate.push_back(1.0f / static_cast<float>(k));
      }
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace

MoeSweep moe_sweep(SweepSize size) {
  if (size == SweepSize::kTest) return {8, 2, 64, 128, {1, 4}, 2};
  // OLMoE-1B-7B's routed gate/up projection (64 experts, top-8, 2 x 1024 rows x 2048): 151 MiB
  // of experts in int4 and 268 MiB in int8, more than the caches hold, so every call reads its
  // experts from memory without copies.
  return {64, 8, 2048, 2048, {1, 4, 16, 64}, 3};
}

std::vector<KernelSample> time_moe_matmul(SweepSize size, ThreadPool& pool, int min_runs,
                                          double min_total_s,
                                          const std::function<void(const std::string&)>& say) {
  const MoeSweep s = moe_sweep(size);
  const Isa isa = best_isa();
  std::vector<KernelSample> out;
  for (const WeightFormat format : {WeightFormat::kInt8, WeightFormat::kInt4}) {
    const std::string fname(to_string(format));
    if (say) {
      say("moe_matmul " + fname + " " + std::to_string(s.experts) + " experts of " +
          std::to_string(s.rows) + "x" + std::to_string(s.cols) + ", top-" + std::to_string(s.k));
    }
    std::vector<PackedWeights> experts;
    for (int64_t e = 0; e < s.experts; ++e) {
      experts.push_back(PackedWeights::random(format, s.rows, s.cols, 100 + e));
    }
    for (const int64_t tokens : s.tokens) {
      // Eight routings in turn, so that successive calls hit different experts.
      const std::vector<MoeRouting> routings = random_routings(s.experts, s.k, tokens, 8);
      std::vector<float> x(static_cast<size_t>(tokens * s.cols), 0.01f);
      std::vector<float> y(static_cast<size_t>(tokens * s.rows));
      size_t next = 0;
      RepeatedTiming cell;
      for (int rep = 0; rep < s.repetitions; ++rep) {
        cell.add(time_kernel(
            [&] { moe_matmul(experts, routings[next++ % routings.size()], x, y, pool, isa); }, 1,
            min_runs, min_total_s));
      }
      double weight_bytes = 0;
      for (const MoeRouting& r : routings) {
        weight_bytes += static_cast<double>(moe_weight_bytes_read(experts, r));
      }
      weight_bytes /= static_cast<double>(routings.size());
      KernelSample k;
      k.op = "moe_matmul";
      k.format = fname;
      k.backend = "llmcap";
      k.rows = s.rows;
      k.cols = s.cols;
      k.batch = tokens;
      k.threads = pool.num_threads();
      k.min_s = cell.min_s;
      k.median_s = cell.median_s();
      k.bytes = weight_bytes + 4.0 * static_cast<double>(tokens * (s.rows + s.cols));
      k.flops = 2.0 * static_cast<double>(tokens * s.k * s.rows * s.cols);
      k.bytes_per_s = k.median_s > 0 ? k.bytes / k.median_s : 0;
      k.flops_per_s = k.median_s > 0 ? k.flops / k.median_s : 0;
      k.cache_resident = size == SweepSize::kTest;
      out.push_back(k);
    }
  }
  return out;
}

}  // namespace llmcap::kernels::detail
