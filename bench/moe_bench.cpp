// moe_bench: the expert-grouped product of a mixture-of-experts projection (kernels/moe.h)
// against a per-token engine that multiplies each token by each of its experts on its own (and
// so reads an expert's weights once per token routed to it).
//
// Shapes of Qwen3-30B-A3B's routed experts (128 experts, top-8, expert width 768, hidden 2048):
// the gate/up projection of one layer, rows 2 x 768 = 1536, cols 2048, in int8 or int4. For
// batches of 1, 4, 16 and 64 tokens routed uniformly at random (seeded): median time per call
// over interleaved repetitions (grouped, per-token, grouped, ...), the expert bytes each reads,
// GB/s, and the ratio per-token / grouped. Weights are rotated over enough layer copies
// (>= 256 MiB) that they stream from memory, as in a real decode step.
//
// Usage: moe_bench [--threads N] [--format int8|int4] [--reps R]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/stats.h"
#include "kernels/matmul.h"
#include "kernels/moe.h"
#include "kernels/thread_pool.h"

using namespace llmcap::kernels;

namespace {

constexpr int64_t kExperts = 128, kTopK = 8, kRows = 2 * 768, kCols = 2048;

MoeRouting routing(int64_t tokens, uint32_t seed) {
  std::mt19937 gen(seed);
  MoeRouting r;
  r.tokens = tokens;
  r.k = kTopK;
  std::vector<int32_t> ids(kExperts);
  for (int32_t e = 0; e < kExperts; ++e) ids[static_cast<size_t>(e)] = e;
  for (int64_t t = 0; t < tokens; ++t) {
    std::shuffle(ids.begin(), ids.end(), gen);
    for (int64_t j = 0; j < kTopK; ++j) {
      r.expert.push_back(ids[static_cast<size_t>(j)]);
      r.gate.push_back(1.0f / kTopK);
    }
  }
  return r;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::thread::hardware_concurrency());
  WeightFormat format = WeightFormat::kInt8;
  int reps = 9;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--format" && i + 1 < argc) {
      format = parse_weight_format(argv[++i]);
    } else if (a == "--reps" && i + 1 < argc) {
      reps = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: moe_bench [--threads N] [--format int8|int4] [--reps R]\n");
      return 2;
    }
  }
  ThreadPool pool(threads);
  const int64_t layer_bytes = PackedWeights::bytes_for(format, kRows, kCols) * kExperts;
  const int64_t copies = std::max<int64_t>(1, (int64_t{256} << 20) / layer_bytes + 1);
  std::vector<std::vector<PackedWeights>> layers(static_cast<size_t>(copies));
  for (int64_t c = 0; c < copies; ++c) {
    for (int64_t e = 0; e < kExperts; ++e) {
      layers[static_cast<size_t>(c)].push_back(
          PackedWeights::random(format, kRows, kCols, static_cast<uint64_t>(c * kExperts + e)));
    }
  }
  std::printf(
      "moe_bench: %lld experts top-%lld, %lld x %lld %s per expert, %lld layer copies "
      "(%.0f MiB), %d threads\n",
      static_cast<long long>(kExperts), static_cast<long long>(kTopK),
      static_cast<long long>(kRows), static_cast<long long>(kCols),
      std::string(to_string(format)).c_str(), static_cast<long long>(copies),
      static_cast<double>(layer_bytes * copies) / (1 << 20), threads);
  std::printf("%7s %9s %12s %12s %9s %9s %8s\n", "tokens", "experts", "grouped ms", "per-tok ms",
              "grp GB/s", "tok GB/s", "ratio");
  for (const int64_t tokens : {1, 4, 16, 64}) {
    const MoeRouting r = routing(tokens, 7);
    std::vector<float> x(static_cast<size_t>(tokens * kCols), 0.5f);
    std::vector<float> y(static_cast<size_t>(tokens * kRows)), one(static_cast<size_t>(kRows));
    std::vector<double> grouped, per_token;
    int64_t layer = 0;
    for (int rep = 0; rep < reps; ++rep) {
      const auto& experts = layers[static_cast<size_t>(layer++ % copies)];
      auto t0 = std::chrono::steady_clock::now();
      moe_matmul(experts, r, x, y, pool);
      grouped.push_back(seconds_since(t0));
      const auto& experts2 = layers[static_cast<size_t>(layer++ % copies)];
      t0 = std::chrono::steady_clock::now();
      for (int64_t t = 0; t < tokens; ++t) {
        for (int64_t j = 0; j < kTopK; ++j) {
          matmul(experts2[static_cast<size_t>(r.expert[static_cast<size_t>(t * kTopK + j)])],
                 std::span<const float>(x).subspan(static_cast<size_t>(t * kCols), kCols), 1, one,
                 pool);
        }
      }
      per_token.push_back(seconds_since(t0));
    }
    const double g = llmcap::base::upper_median(grouped), p = llmcap::base::upper_median(per_token);
    const int64_t hit_bytes = moe_weight_bytes_read(layers.front(), r);
    const int64_t token_bytes = tokens * kTopK * PackedWeights::bytes_for(format, kRows, kCols);
    std::printf("%7lld %9zu %12.3f %12.3f %9.1f %9.1f %8.2f\n", static_cast<long long>(tokens),
                group_by_expert(r, kExperts).experts.size(), g * 1e3, p * 1e3,
                static_cast<double>(hit_bytes) / g / 1e9,
                static_cast<double>(token_bytes) / p / 1e9, p / g);
  }
  return 0;
}
