// kernels_bench: decode matrix products y = x W^T (llmcap kernels/matmul.h) against oneDNN and
// Eigen, on shapes far beyond the last-level cache and one that fits in it.
//
// For each shape and batch every backend runs once per repetition, backends interleaved, and the
// median time is printed with the weight bytes streamed per second (GB/s = 1e9 bytes/s) and that
// rate as a fraction of the machine's measured read bandwidth: the median of kernels::ReadProbe
// reads interleaved with the runs (multi-threaded sums over 1 GiB, each the fastest of three
// read loops; kernels/machine.h).
//
// Threads: llmcap runs on a ThreadPool of --threads; Eigen runs single-threaded inside each
// chunk of the same ThreadPool (output rows split the same way; Eigen's own OpenMP GEMM threads
// are set to 1, and Eigen has no parallel GEMV); oneDNN (Debian build: OpenMP runtime) gets
// omp_set_num_threads(--threads) and OMP_WAIT_POLICY=PASSIVE (unless already set), so that its
// idle threads sleep instead of spinning on the cores the other backends use next.
//
// What each backend's time includes: llmcap converts / quantises the activations inside the
// call (bf16, int8, int4 paths); oneDNN is given activations already in bf16 / u8 and its
// weights reordered once (before timing) into the layout it prefers. Eigen has no bf16 or
// int8 GEMV fast path, so it runs f32 only.
//
// Usage: kernels_bench [--threads N] [--quick]
#include <immintrin.h>
#include <unistd.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "base/stats.h"
#include "kernels/bf16.h"
#include "kernels/cpu_features.h"
#include "kernels/machine.h"
#include "kernels/matmul.h"
#include "kernels/scratch.h"
#include "kernels/thread_pool.h"

#ifdef LLMCAP_HAVE_DNNL
#include <omp.h>

#include <oneapi/dnnl/dnnl.hpp>
#endif

using namespace llmcap::kernels;

namespace {

struct Options {
  int threads = 0;
  bool quick = false;
};

// vpdpbusd (AVX-512 VNNI: 64 u8 x s8 multiply-adds into 16 int32 lanes) per second on one
// thread: 16 independent accumulators in zmm0-15, written in assembly because GCC 12 copies
// (8 chains) or spills (24 chains) the accumulators of the intrinsic's loop, which measured
// 2.6-5.8 G/s where this loop measures 6.3-6.6 on the development VM's EPYC (2 per cycle).
// The fastest of 9 short runs: a peak (on a shared VM a run can lose its core for a while).
#define LLMCAP_DPBUSD(i) "vpdpbusd %%zmm30, %%zmm31, %%zmm" #i "\n\t"
__attribute__((target("avx512f,avx512vnni"))) double vpdpbusd_per_s() {
  constexpr long kIterations = 500000;  // x 16 instructions
  double best = 1e300;
  for (int run = 0; run < 9; ++run) {
    long n = kIterations;
    const auto t0 = std::chrono::steady_clock::now();
    asm volatile(
        "vpternlogd $0xff, %%zmm30, %%zmm30, %%zmm30\n\t"
        "vpternlogd $0xff, %%zmm31, %%zmm31, %%zmm31\n\t"
        "1:\n\t" LLMCAP_DPBUSD(0) LLMCAP_DPBUSD(1) LLMCAP_DPBUSD(2) LLMCAP_DPBUSD(3)
        LLMCAP_DPBUSD(4) LLMCAP_DPBUSD(5) LLMCAP_DPBUSD(6) LLMCAP_DPBUSD(7) LLMCAP_DPBUSD(8)
        LLMCAP_DPBUSD(9) LLMCAP_DPBUSD(10) LLMCAP_DPBUSD(11) LLMCAP_DPBUSD(12) LLMCAP_DPBUSD(13)
        LLMCAP_DPBUSD(14) LLMCAP_DPBUSD(15)
        "dec %0\n\t"
        "jnz 1b"
        : "+r"(n)
        :
        : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
          "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm30", "xmm31", "cc");
    best = std::min(best,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return 16.0 * kIterations / best;
}
#undef LLMCAP_DPBUSD

Options parse(int argc, char** argv) {
  Options o;
  o.threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      o.threads = std::atoi(argv[++i]);
      if (o.threads < 1) {
        std::fprintf(stderr, "kernels_bench: --threads must be >= 1\n");
        std::exit(2);
      }
    } else if (a == "--quick") {
      o.quick = true;
    } else {
      std::fprintf(stderr, "usage: kernels_bench [--threads N] [--quick]\n");
      std::exit(a == "--help" || a == "-h" ? 0 : 2);
    }
  }
  return o;
}

/// The mean of the middle pair for an even count (base/stats.h).
double median(std::vector<double> v) { return llmcap::base::midpoint_median(std::move(v)); }

struct Backend {
  std::string format;  // weight format it reads
  std::string name;    // llmcap, llmcap-scalar, onednn, eigen
  int64_t bytes = 0;   // weight bytes per call
  std::function<void()> run;
  std::vector<double> seconds;
};

struct Shape {
  int64_t rows, cols;  // W is rows (outputs) x cols (inputs)
  const char* note;
};

#ifdef LLMCAP_HAVE_DNNL
// A oneDNN matmul y[B, N] = x[B, K] * W^T with W given as N x K row-major (tag ba of K x N).
struct DnnlMatmul {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::memory src, wei, dst;
  dnnl::matmul prim;
  std::vector<uint8_t> src_buf;
  // oneDNN's copy of the weights, allocated as ours are (detail::allocate_large: 2 MiB pages
  // where the kernel grants them), so that both stream from the same kind of memory.
  std::unique_ptr<void, void (*)(void*)> wei_buf{nullptr, std::free};

  DnnlMatmul(const PackedWeights& w, int64_t batch, const float* x, float* y) {
    using dt = dnnl::memory::data_type;
    using tag = dnnl::memory::format_tag;
    const int64_t n = w.rows(), k = w.cols();
    dt wdt = dt::f32, sdt = dt::f32;
    if (w.format() == WeightFormat::kBf16) wdt = sdt = dt::bf16;
    if (w.format() == WeightFormat::kInt8) {
      wdt = dt::s8;
      sdt = dt::u8;
    }
    const dnnl::memory::desc src_md({batch, k}, sdt, tag::ab);
    const dnnl::memory::desc wei_any({k, n}, wdt, tag::any);
    const dnnl::memory::desc dst_md({batch, n}, dt::f32, tag::ab);
    dnnl::primitive_attr attr;
    if (w.format() == WeightFormat::kInt8) {
      std::vector<float> scales(w.row_scales().begin(), w.row_scales().end());
      for (auto& s : scales) s *= 1.0f / 64.0f;  // an activation scale; values do not matter
      attr.set_output_scales(1 << 1, scales);
    }
    const dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(src_md, wei_any, dst_md), attr, eng);
    // Weights: ours, viewed as K x N with strides (1, K), reordered once into oneDNN's layout.
    dnnl::memory user({{k, n}, wdt, tag::ba}, eng, const_cast<void*>(w.data()));
    wei_buf.reset(llmcap::kernels::detail::allocate_large(
        static_cast<int64_t>(pd.weights_desc().get_size())));
    wei = dnnl::memory(pd.weights_desc(), eng, wei_buf.get());
    dnnl::reorder(user, wei).execute(strm, user, wei);
    strm.wait();
    // Activations in the source type (converted here, outside the timing).
    const size_t elem = sdt == dt::f32 ? 4 : sdt == dt::bf16 ? 2 : 1;
    src_buf.resize(static_cast<size_t>(batch * k) * elem);
    for (int64_t i = 0; i < batch * k; ++i) {
      if (sdt == dt::f32) {
        std::memcpy(src_buf.data() + i * 4, &x[i], 4);
      } else if (sdt == dt::bf16) {
        const uint16_t h = llmcap::kernels::detail::f32_to_bf16(x[i]);
        std::memcpy(src_buf.data() + i * 2, &h, 2);
      } else {
        src_buf[static_cast<size_t>(i)] =
            static_cast<uint8_t>(std::clamp(x[i] * 127.0f + 128.0f, 0.0f, 255.0f));
      }
    }
    src = dnnl::memory(src_md, eng, src_buf.data());
    dst = dnnl::memory(dst_md, eng, y);
    prim = dnnl::matmul(pd);
  }
  void run() {
    prim.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    strm.wait();
  }
};
#endif

}  // namespace

int main(int argc, char** argv) {
#ifdef LLMCAP_HAVE_DNNL
  // OpenMP threads spin-wait after each oneDNN call (libgomp's default ACTIVE policy) and would
  // take the cores from the backend measured next. libgomp reads OMP_WAIT_POLICY when it is
  // loaded, before main, so set it and re-execute once.
  if (std::getenv("OMP_WAIT_POLICY") == nullptr) {
    setenv("OMP_WAIT_POLICY", "PASSIVE", 1);
    execv("/proc/self/exe", argv);  // on failure, carry on with the default policy
  }
#endif
  const Options opt = parse(argc, argv);
  const CpuFeatures& cpu = cpu_features();
  std::printf("kernels_bench: %s\n  flags: %s\n  llmcap path: %s, threads: %d%s\n",
              cpu.model_name.c_str(), cpu.flags().c_str(),
              std::string(to_string(best_isa())).c_str(), opt.threads, opt.quick ? " (quick)" : "");

  // 1. The machine's read bandwidth at this thread count.
  MachineInfo machine;
  const int64_t bw_bytes = opt.quick ? (int64_t{256} << 20) : (int64_t{1} << 30);
  measure_bandwidth(machine, opt.threads, bw_bytes, opt.quick ? 3 : 5);
  const double start_read_bw = machine.read_bandwidth_bytes_per_s.at(opt.threads);
  std::printf("  measured read bandwidth (%d threads, %lld MiB buffer): %.1f GB/s\n\n", opt.threads,
              static_cast<long long>(bw_bytes >> 20), start_read_bw / 1e9);
  const ReadProbe probe(bw_bytes);
  // The least time a batch-16 int8 / int4 product can take on this CPU: 16 x rows x cols
  // multiply-adds at 64 per vpdpbusd (the densest integer dot product it has), at the rate
  // measured on every thread at once (before oneDNN's OpenMP threads exist), whatever the
  // memory does.
  double vnni_per_s = 0;
  if (cpu_features().avx512_vnni) {
    std::vector<double> per_thread(static_cast<size_t>(opt.threads));
    std::vector<std::thread> threads;
    for (int t = 0; t < opt.threads; ++t) {
      threads.emplace_back(
          [&per_thread, t] { per_thread[static_cast<size_t>(t)] = vpdpbusd_per_s(); });
    }
    for (auto& t : threads) t.join();
    for (const double r : per_thread) vnni_per_s += r;
  }

  ThreadPool pool(opt.threads);
  Eigen::setNbThreads(1);
#ifdef LLMCAP_HAVE_DNNL
  omp_set_num_threads(opt.threads);
  std::printf("  oneDNN %d.%d.%d (OpenMP, %d threads, OMP_WAIT_POLICY=%s)\n", dnnl_version()->major,
              dnnl_version()->minor, dnnl_version()->patch, opt.threads,
              std::getenv("OMP_WAIT_POLICY"));
#else
  std::printf("  oneDNN: not built (package not found)\n");
#endif

  std::vector<Shape> shapes = {{4096, 14336, "Llama-8B MLP down, 4096 x 14336"},
                               {14336, 4096, "Llama-8B MLP up/gate, 14336 x 4096"},
                               {1024, 1024, "in cache, 1024 x 1024"}};
  std::vector<int64_t> batches = {1, 4, 16, 64};
  int reps = 7;
  if (opt.quick) {
    shapes.resize(1);
    batches = {1, 16};
    reps = 5;
  }
  const WeightFormat formats[] = {WeightFormat::kF32, WeightFormat::kBf16, WeightFormat::kInt8,
                                  WeightFormat::kInt4};

  // llmcap best-path medians for the batched-decode ratio: [shape][format][batch]
  std::map<std::string, std::map<std::string, std::map<int64_t, double>>> llmcap_s;

  for (size_t si = 0; si < shapes.size(); ++si) {
    const Shape& sh = shapes[si];
    std::printf("\n== %s (rows x cols; f32 weights %.0f MiB) ==\n", sh.note,
                static_cast<double>(sh.rows * sh.cols * 4) / (1 << 20));
    std::vector<PackedWeights> weights;
    for (WeightFormat f : formats)
      weights.push_back(PackedWeights::random(f, sh.rows, sh.cols, 1 + si));
    // Every backend of every batch size runs once per repetition, interleaved with read-
    // bandwidth probes (one before each format), so that drift hits all of them alike and the
    // batch-16 / batch-1 ratios compare runs minutes apart at most.
    std::deque<std::vector<float>> xs, outputs;
    std::vector<std::pair<int64_t, std::vector<Backend>>> groups;
    std::vector<double> probe_s;
#ifdef LLMCAP_HAVE_DNNL
    std::vector<std::unique_ptr<DnnlMatmul>> dnnl_ops;
#endif
    for (int64_t batch : batches) {
      std::mt19937 gen(static_cast<uint32_t>(batch));
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      std::vector<float>& x = xs.emplace_back(static_cast<size_t>(batch * sh.cols));
      for (auto& v : x) v = dist(gen);
      std::vector<Backend> backends;
      auto out = [&]() -> float* {
        outputs.emplace_back(static_cast<size_t>(batch * sh.rows));
        return outputs.back().data();
      };
      for (const PackedWeights& w : weights) {
        const std::string fname(to_string(w.format()));
        backends.push_back({"-",
                            "read-probe",
                            probe.bytes(),
                            [&probe, &pool, &probe_s] {
                              // Seconds of one read of the probe at its (fastest loop's) rate.
                              probe_s.push_back(static_cast<double>(probe.bytes()) /
                                                probe.read_bytes_per_s(pool));
                            },
                            {}});
        float* y = out();
        backends.push_back({fname,
                            "llmcap",
                            w.bytes(),
                            [&w, &x, &pool, batch, y, &sh] {
                              matmul(w, x, batch, std::span<float>(y, batch * sh.rows), pool);
                            },
                            {}});
        if (si == 0 && batch == 1) {
          float* ys = out();
          backends.push_back({fname,
                              "llmcap-scalar",
                              w.bytes(),
                              [&w, &x, &pool, batch, ys, &sh] {
                                matmul(w, x, batch, std::span<float>(ys, batch * sh.rows), pool,
                                       Isa::kScalar);
                              },
                              {}});
        }
#ifdef LLMCAP_HAVE_DNNL
        if (w.format() != WeightFormat::kInt4) {
          try {
            dnnl_ops.push_back(std::make_unique<DnnlMatmul>(w, batch, x.data(), out()));
            DnnlMatmul* op = dnnl_ops.back().get();
            backends.push_back({fname, "onednn", w.bytes(), [op] { op->run(); }, {}});
          } catch (const std::exception& e) {
            std::printf("  onednn %s: n/a (%s)\n", fname.c_str(), e.what());
          }
        }
#endif
        if (w.format() == WeightFormat::kF32) {
          float* ye = out();
          backends.push_back(
              {fname,
               "eigen",
               w.bytes(),
               [&w, &x, &pool, batch, ye, &sh] {
                 using RowMajor =
                     Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
                 const Eigen::Map<const RowMajor> W(static_cast<const float*>(w.data()), sh.rows,
                                                    sh.cols);
                 const Eigen::Map<const Eigen::MatrixXf> X(x.data(), sh.cols, batch);
                 Eigen::Map<Eigen::MatrixXf> Y(ye, sh.rows, batch);
                 pool.parallel_for(
                     sh.rows,
                     [&](int64_t b, int64_t e, int) {
                       Y.middleRows(b, e - b).noalias() = W.middleRows(b, e - b) * X;
                     },
                     64);
               },
               {}});
        }
      }
      groups.emplace_back(batch, std::move(backends));
    }
    for (auto& [batch, backends] : groups) {
      for (Backend& b : backends) b.run();  // warm-up (thread start, first-touch, JIT)
    }
    probe_s.clear();
    for (int rep = 0; rep < reps; ++rep) {
      for (auto& [batch, backends] : groups) {
        for (Backend& b : backends) {
          const auto t0 = std::chrono::steady_clock::now();
          b.run();
          b.seconds.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
      }
    }
    const double read_bw = static_cast<double>(probe.bytes()) / median(probe_s);
    std::printf(
        "  read bandwidth, median of %zu probes interleaved with the runs below: %.1f GB/s"
        " (%% read BW is against this)\n",
        probe_s.size(), read_bw / 1e9);
    for (auto& [batch, backends] : groups) {
      std::printf("\n  batch %lld\n  %-6s %-14s %10s %10s %9s\n", static_cast<long long>(batch),
                  "format", "backend", "median ms", "GB/s", "% read BW");
      for (const Backend& b : backends) {
        if (b.name == "read-probe") continue;
        const double s = median(b.seconds);
        const double gbs = static_cast<double>(b.bytes) / s / 1e9;
        std::printf("  %-6s %-14s %10.3f %10.1f %8.0f%%\n", b.format.c_str(), b.name.c_str(),
                    s * 1e3, gbs, 100.0 * gbs * 1e9 / read_bw);
        if (b.name == "llmcap") llmcap_s[sh.note][b.format][batch] = s;
      }
    }
  }

  std::printf("\n== batched decode: llmcap time(batch 16) / time(batch 1) (target <= 2) ==\n");
  if (vnni_per_s > 0) {
    std::printf(
        "  bound: 16 x rows x cols / 64 vpdpbusd at %.2f G/s (%d threads, measured now) "
        "/ the batch-1 time\n",
        vnni_per_s / 1e9, opt.threads);
  }
  for (const auto& [shape, per_format] : llmcap_s) {
    for (const auto& [format, per_batch] : per_format) {
      if (!per_batch.count(1) || !per_batch.count(16)) continue;
      std::printf("  %-36s %-5s %.2f", shape.c_str(), format.c_str(),
                  per_batch.at(16) / per_batch.at(1));
      if (vnni_per_s > 0 && (format == "int8" || format == "int4")) {
        const Shape* sh = nullptr;
        for (const Shape& s : shapes) {
          if (shape == s.note) sh = &s;
        }
        const double min_s = 16.0 * static_cast<double>(sh->rows * sh->cols) / 64.0 / vnni_per_s;
        std::printf("   (>= %.2f: batch 16 needs >= %.3f ms of vpdpbusd)", min_s / per_batch.at(1),
                    min_s * 1e3);
      }
      std::printf("\n");
    }
  }
  return 0;
}
