// attention_bench: how close decode attention gets to the machine's read bandwidth.
//
// 1. Decode attention with Llama-3.1-8B shapes (32 query heads, 8 KV heads, head_dim 128), bf16
//    and f32 KV, contexts 128 / 1024 / 4096 / 32768. Like a real decode step, each timed pass
//    goes through several layers' caches (up to 32, enough for >= 256 MiB) so that the cache
//    streams from DRAM, not the LLC; times are per layer. Variants:
//      grouped      decode_attention as shipped (K and V read once per KV head)
//      grouped-dp   bf16 only: AttentionOptions::bf16_qk_dot (vdpbf16ps for q.k)
//      grouped-pv   bf16 only: AttentionOptions::bf16_pv_dot (vdpbf16ps for p.V)
//      grouped-dp2  bf16 only: both
//      naive        KV replicated to 32 heads and called with num_kv_heads == 32: K and V read
//                   once per query head, as an engine without GQA-aware kernels does
//    For each: median (and min) time per layer, KV bytes the model needs / time (GB/s; for naive
//    the bytes it actually reads are 4x more), and that as a fraction of the read bandwidth
//    measured by probes interleaved with the runs (9 rounds: probe, then every variant once).
// 2. Overhead of an empty ThreadPool::parallel_for.
//
// Usage: attention_bench [--threads N] [--isa scalar|avx2|avx512] [--contexts 128,1024,...]
//                        [--hot]   (one layer repeated: shows the compute ceiling)
//                        [--pad]   (capacity = context + 7 and V 3 rows off: K, V and heads
//                                   not a power of two apart, i.e. no cache-set aliasing)
//                        [--huge]  (KV caches on transparent huge pages, madvise)
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "base/stats.h"
#include "kernels/attention.h"
#include "kernels/cpu_features.h"
#include "kernels/harness.h"
#include "kernels/machine.h"
#include "kernels/thread_pool.h"

using namespace llmcap::kernels;

namespace {

double median(std::vector<double> v) { return llmcap::base::upper_median(std::move(v)); }

/// std::allocator that asks for transparent huge pages (--huge): 2 MiB-aligned blocks with
/// madvise(MADV_HUGEPAGE), as an engine that allocates its KV cache pool up front would.
bool g_huge = false;
template <class T>
struct KvAllocator {
  using value_type = T;
  KvAllocator() = default;
  template <class U>
  KvAllocator(const KvAllocator<U>&) {}
  T* allocate(size_t n) {
    const size_t bytes = (n * sizeof(T) + (size_t{2} << 20) - 1) & ~((size_t{2} << 20) - 1);
    void* p = std::aligned_alloc(size_t{2} << 20, bytes);
    if (p == nullptr) throw std::bad_alloc();
    if (g_huge) madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t) { std::free(p); }
  template <class U>
  bool operator==(const KvAllocator<U>&) const {
    return true;
  }
};

/// Extra tokens reserved per head (capacity = context + pad) and the rows V starts after K's
/// allocation pattern; --pad sets them so that K, V and heads are not a power of two apart.
int64_t g_pad_tokens = 0, g_v_offset_rows = 0;

struct Layers {
  KvType type;
  int64_t heads, d, context, count;
  std::vector<uint16_t, KvAllocator<uint16_t>> kb, vb;
  std::vector<float, KvAllocator<float>> kf, vf;
  int64_t capacity() const { return context + g_pad_tokens; }
  int64_t per_layer_elems() const { return heads * capacity() * d; }
  KvCacheView view(int64_t layer) const {
    KvCacheView kv;
    kv.type = type;
    const int64_t off = layer * per_layer_elems();
    const int64_t voff = off + g_v_offset_rows * d;
    kv.k = type == KvType::kF32 ? static_cast<const void*>(kf.data() + off) : kb.data() + off;
    kv.v = type == KvType::kF32 ? static_cast<const void*>(vf.data() + voff) : vb.data() + voff;
    kv.num_kv_heads = heads;
    kv.head_dim = d;
    kv.capacity_tokens = capacity();
    kv.context_tokens = context;
    return kv;
  }
};

/// `count` layers of random KV; with `replicate` > 1 each KV head is stored `replicate` times
/// (the naive engine's layout: one copy per query head).
Layers make_layers(KvType type, int64_t kv_heads, int64_t replicate, int64_t d, int64_t context,
                   int64_t count, ThreadPool& pool) {
  Layers l{type, kv_heads * replicate, d, context, count, {}, {}, {}, {}};
  const int64_t n = l.per_layer_elems() * count;
  const int64_t nv = n + g_v_offset_rows * d;
  if (type == KvType::kF32) {
    l.kf.resize(nv);
    l.vf.resize(nv);
  } else {
    l.kb.resize(nv);
    l.vb.resize(nv);
  }
  const int64_t head_elems = l.capacity() * d;
  pool.parallel_for(n / head_elems, [&](int64_t b, int64_t e, int) {
    for (int64_t hh = b; hh < e; ++hh) {
      // Copies of one KV head hold the same values: (layer, kv head) = hh / replicate.
      std::mt19937 rng(static_cast<uint32_t>(hh / replicate));
      std::uniform_real_distribution<float> u(-1.0f, 1.0f);
      for (int64_t i = 0; i < head_elems; ++i) {
        const float kx = u(rng), vx = u(rng);
        const int64_t at = hh * head_elems + i;
        if (type == KvType::kF32) {
          l.kf[at] = kx;
          l.vf[at] = vx;
        } else {
          uint32_t kbits, vbits;
          std::memcpy(&kbits, &kx, 4);
          std::memcpy(&vbits, &vx, 4);
          l.kb[at] = static_cast<uint16_t>(kbits >> 16);
          l.vb[at] = static_cast<uint16_t>(vbits >> 16);
        }
      }
    }
  });
  return l;
}

std::vector<int64_t> parse_list(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stoll(item));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  Isa isa = best_isa();
  std::vector<int64_t> contexts = {128, 1024, 4096, 32768};
  bool hot = false;  // one layer, repeated: the cache stays in the LLC when it fits
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--isa" && i + 1 < argc) {
      auto parsed = parse_isa(argv[++i]);
      if (!parsed || !isa_supported(*parsed)) {
        std::fprintf(stderr, "attention_bench: unknown or unsupported isa %s\n", argv[i]);
        return 2;
      }
      isa = *parsed;
    } else if (a == "--pad") {
      g_pad_tokens = 7;
      g_v_offset_rows = 3;
    } else if (a == "--huge") {
      g_huge = true;
    } else if (a == "--hot") {
      hot = true;
    } else if (a == "--contexts" && i + 1 < argc) {
      contexts = parse_list(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: attention_bench [--threads N] [--isa scalar|avx2|avx512] "
                   "[--contexts 128,1024,...] [--hot] [--pad] [--huge]\n");
      return 2;
    }
  }
  if (threads < 1) {
    std::fprintf(stderr, "attention_bench: --threads must be >= 1\n");
    return 2;
  }
  ThreadPool pool(threads);
  const CpuFeatures& f = cpu_features();
  std::printf("cpu: %s\nflags: %s\nisa: %s, threads: %d\n", f.model_name.c_str(), f.flags().c_str(),
              std::string(to_string(isa)).c_str(), threads);

  // Empty parallel_for: the fixed cost every kernel call pays.
  {
    auto noop = [](int64_t, int64_t, int) {};
    Timing t = time_kernel([&] { pool.parallel_for(threads, noop); }, 100, 20000, 0.2, 200000);
    std::printf("empty parallel_for (%d threads): median %.2f us, min %.2f us\n\n", threads,
                t.median_s * 1e6, t.min_s * 1e6);
  }

  const int64_t q_heads = 32, kv_heads = 8, d = 128;
  const float scale = 1.0f / std::sqrt(float(d));
  std::vector<float> q(q_heads * d), out(q_heads * d);
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (auto& x : q) x = u(rng);

  // Interleaved rounds: per (KV type, context), every variant runs once per round after a
  // read-bandwidth probe (kernels::ReadProbe, the calibration's read kernel), so that the
  // machine's drift hits all of them alike; medians over the rounds, "of read" against the
  // median probe of the same rounds.
  const ReadProbe probe(int64_t{256} << 20);
  constexpr int kRounds = 9;
  std::printf("%-5s %7s %-12s %6s %11s %9s %8s %11s %9s %9s\n", "kv", "context", "variant",
              "layers", "us/layer", "KV GB/s", "of read", "min us/l", "min GB/s", "read GB/s");
  for (KvType type : {KvType::kBf16, KvType::kF32}) {
    for (int64_t context : contexts) {
      const int64_t elem = type == KvType::kF32 ? 4 : 2;
      const int64_t layer_bytes = 2 * kv_heads * context * d * elem;  // what the model needs
      const int64_t layers =
          hot ? 1
              : std::clamp<int64_t>(((int64_t{256} << 20) + layer_bytes - 1) / layer_bytes, 1, 32);
      struct Variant {
        const char* name;
        const Layers* cache;
        AttentionOptions opt;
        std::vector<double> seconds;
      };
      const Layers grouped = make_layers(type, kv_heads, 1, d, context, layers, pool);
      const Layers naive =
          make_layers(type, kv_heads, q_heads / kv_heads, d, context, layers, pool);
      std::vector<Variant> variants = {{"grouped", &grouped, {}, {}}};
      if (type == KvType::kBf16 && isa == Isa::kAvx512 && f.avx512_bf16) {
        AttentionOptions qk, pv, both;
        qk.bf16_qk_dot = true;
        pv.bf16_pv_dot = true;
        both.bf16_qk_dot = both.bf16_pv_dot = true;
        variants.push_back({"grouped-dp", &grouped, qk, {}});
        variants.push_back({"grouped-pv", &grouped, pv, {}});
        variants.push_back({"grouped-dp2", &grouped, both, {}});
      }
      variants.push_back({"naive", &naive, {}, {}});
      const auto pass = [&](const Variant& v) {
        for (int64_t l = 0; l < layers; ++l) {
          decode_attention(q, q_heads, v.cache->view(l), scale, out, pool, isa, v.opt);
        }
      };
      for (const Variant& v : variants) pass(v);  // warm-up
      std::vector<double> probes;
      for (int round = 0; round < kRounds; ++round) {
        probes.push_back(probe.read_bytes_per_s(pool));
        for (Variant& v : variants) {
          const auto t0 = std::chrono::steady_clock::now();
          pass(v);
          v.seconds.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
      }
      const double bw = median(probes);
      for (const Variant& v : variants) {
        const double per_layer = median(v.seconds) / layers;
        const double best = *std::min_element(v.seconds.begin(), v.seconds.end()) / layers;
        const double gbs = layer_bytes / per_layer;
        std::printf("%-5s %7lld %-12s %6lld %11.2f %9.2f %7.1f%% %11.2f %9.2f %9.2f\n",
                    std::string(to_string(type)).c_str(), static_cast<long long>(context), v.name,
                    static_cast<long long>(layers), per_layer * 1e6, gbs / 1e9, 100 * gbs / bw,
                    best * 1e6, layer_bytes / best / 1e9, bw / 1e9);
        std::fflush(stdout);
      }
    }
  }
  std::printf(
      "\nKV GB/s = bytes of K and V the model needs per layer (2 x 8 heads x context x 128 x "
      "element size) / time; naive reads 4x that.\n");
  return 0;
}
