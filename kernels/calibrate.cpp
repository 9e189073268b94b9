#include "kernels/calibrate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <stdexcept>

#include "kernels/attention.h"
#include "kernels/elementwise.h"
#include "kernels/harness.h"
#include "kernels/matmul.h"
#include "kernels/scratch.h"
#include "kernels/thread_pool.h"

namespace llmcap::kernels {
namespace {

struct Shape {
  int64_t rows, cols;
  bool cache_resident;                     ///< no rotation: the same operands every call
  std::vector<WeightFormat> formats = {};  ///< empty: every format
  int64_t prefill_batch = 0;               ///< MatmulShape::prefill_batch
};

/// One attention layout: query heads, KV heads, head dimension.
struct AttentionShape {
  int64_t q_heads, kv_heads, head_dim;
  std::vector<int64_t> contexts = {};  ///< empty: the sweep's
};

/// What one sweep size covers.
struct Sweep {
  std::string name;
  std::vector<int> threads;
  int64_t bandwidth_buffer_bytes;
  int bandwidth_repetitions;
  std::vector<Shape> matmul_shapes;
  std::vector<int64_t> batches;        ///< at the largest thread count
  std::vector<int64_t> small_batches;  ///< at the smaller thread counts (report only)
  std::vector<AttentionShape> attention_shapes;
  std::vector<int64_t> contexts;     ///< attention context tokens (rotated, from memory)
  int64_t rotation_bytes;            ///< operands of one rotated shape total at least this
  int64_t attention_rotation_bytes;  ///< the same for the KV caches of one attention shape
  int repetitions;                   ///< interleaved rounds per shape
  int min_runs;
  double min_total_s;
};

constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int kMaxCopies = 16384;
/// Activations of a prefill-batch cell (MatmulShape::prefill_batch) rotate through at least
/// this much, in at most so many copies: twice the 32 MiB L3 of a Zen 5 core complex (AMD EPYC
/// 9005), the development VM's CPU.
constexpr int64_t kActivationRotationBytes = 64 * kMiB;
constexpr int kMaxActivationCopies = 16;

Sweep make_sweep(SweepSize size, int max_threads) {
  Sweep s;
  // 1 GiB of rotated operands: the weights of a served model (0.3-2.5 GB for 0.5-1B models in
  // int4..bf16, more for larger ones), not a set that a large L3 can hold. VMs report the
  // host's whole L3 (this development VM: 508 MiB) and may get part of it when neighbours are
  // idle: a 4096x2048 bf16 product read 55 GB/s over 128 MiB of copies, 50 over 512 MiB and
  // 45 over 1.5 GiB, so a smaller set overstates the rate a model's weights get
  // (docs/model.md, "Calibration").
  s.rotation_bytes = 1024 * kMiB;
  // KV caches: 256 MiB, the K and V of one layer of a batch (32 sequences of 4096 tokens of a
  // 1B model in bf16) and far beyond an L2; filling more costs seconds per shape.
  s.attention_rotation_bytes = 256 * kMiB;
  // Decode batches go to 64 (a CPU engine's usual max_num_seqs); the fit needs the whole range
  // because the kernels' cost per weight changes with the batch (register tiles of 4 rows).
  s.batches = {1, 2, 4, 8, 16, 32, 64};
  s.small_batches = {1, 16};
  switch (size) {
    case SweepSize::kFull:
      s.name = "full";
      for (int t = 1; t <= max_threads; ++t) s.threads.push_back(t);
      s.bandwidth_buffer_bytes = 512 * kMiB;
      s.bandwidth_repetitions = 7;
      // Families of transformer matrices (rows = outputs x cols = inputs) at widths 1024, 2048
      // and 4096: square (attention projections), tall (fused QKV, gate/up: ~3-4x hidden
      // outputs), wide (down projections: ~3-4x hidden inputs), and a tall-skinny LM head;
      // plus one shape kept in cache (report only).
      s.matmul_shapes = {{512, 512, true},     {1024, 1024, false}, {4096, 1024, false},
                         {1024, 4096, false},  {2048, 2048, false}, {8192, 2048, false},
                         {2048, 8192, false},  {4096, 4096, false}, {14336, 4096, false},
                         {4096, 14336, false}, {65536, 2048, false}};
      // GQA layouts: 4 query heads per KV head at head_dim 128 and 64, 6 and 8 per KV head.
      s.attention_shapes = {{32, 8, 128}, {32, 8, 64}, {12, 2, 128}, {16, 2, 64}};
      s.contexts = {128, 512, 2048, 8192};
      // Three, so that the median of a cell outlasts one repetition taken in a burst.
      s.repetitions = 3;
      s.min_runs = 5;
      s.min_total_s = 0.03;
      break;
    case SweepSize::kQuick:
      s.name = "quick";
      s.threads = {max_threads};
      s.bandwidth_buffer_bytes = 256 * kMiB;
      s.bandwidth_repetitions = 3;
      s.rotation_bytes = 256 * kMiB;  // a quarter of the set-up time
      // As the full sweep: over 64 MiB of KV copies, attention ran 4-10% faster than on the
      // reference decoder's own caches (docs/model.md, "From memory").
      s.attention_rotation_bytes = 256 * kMiB;
      // Generating the rotated copies is most of a quick run: one tall and one wide shape
      // and a square one, at width 2048.
      s.matmul_shapes = {
          {512, 512, true}, {2048, 2048, false}, {8192, 2048, false}, {2048, 8192, false}};
      s.batches = {1, 4, 16, 64};
      s.attention_shapes = {{32, 8, 128}, {16, 2, 64}};
      s.contexts = {128, 2048, 8192};
      // Three interleaved rounds, as the full sweep: four quick calibrations a few seconds
      // apart (Zen 3 VM, 2026-12-01) differed per cell by a median 1.31-1.35x (max/min of the
      // four medians; p95 1.68-1.87x) with one round, 1.20x (p95 1.61x) with three; three
      // rounds of one run each did no better (1.29x, p95 1.76x). 6 s -> 10 s, 19 s -> 35 s with
      // --model Qwen2.5-0.5B.
      s.repetitions = 3;
      s.min_runs = 3;
      s.min_total_s = 0.01;
      break;
    case SweepSize::kTest:
      s.name = "test";
      s.threads = {max_threads};
      s.bandwidth_buffer_bytes = 8 * kMiB;
      s.bandwidth_repetitions = 1;
      s.matmul_shapes = {{128, 256, true}, {256, 512, true}};
      s.batches = {1, 4};
      s.attention_shapes = {{32, 8, 128}, {8, 2, 64}};
      s.contexts = {64, 256};
      s.rotation_bytes = 0;  // no rotation: everything stays in the caches
      s.attention_rotation_bytes = 0;
      s.repetitions = 1;
      s.min_runs = 2;
      s.min_total_s = 0;
      break;
  }
  return s;
}

int copies_for(int64_t bytes, int64_t rotation_bytes, bool cache_resident) {
  if (cache_resident || rotation_bytes <= 0 || bytes <= 0) return 1;
  const int64_t n = (rotation_bytes + bytes - 1) / bytes;
  return static_cast<int>(std::clamp<int64_t>(n, 1, kMaxCopies));
}

KernelSample make_sample(std::string op, std::string format, int64_t rows, int64_t cols,
                         int64_t batch, int threads, double min_s, double median_s, double bytes,
                         double flops, bool cache_resident) {
  KernelSample s;
  s.op = std::move(op);
  s.format = std::move(format);
  s.backend = "llmcap";
  s.rows = rows;
  s.cols = cols;
  s.batch = batch;
  s.threads = threads;
  s.min_s = min_s;
  s.median_s = median_s;
  s.bytes = bytes;
  s.flops = flops;
  s.bytes_per_s = median_s > 0 ? bytes / median_s : 0;
  s.flops_per_s = median_s > 0 ? flops / median_s : 0;
  s.cache_resident = cache_resident;
  return s;
}

/// One (shape, batch, threads) cell: medians over repetitions.
using Cell = RepeatedTiming;

std::string shape_text(int64_t rows, int64_t cols) {
  return std::to_string(rows) + "x" + std::to_string(cols);
}

/// copies_for(its bytes, ...) copies of one random rows x cols matrix (a memcpy each, made over
/// the pool's threads; the values do not change the timing).
std::vector<PackedWeights> weight_copies(WeightFormat format, int64_t rows, int64_t cols,
                                         int64_t rotation_bytes, bool cache_resident,
                                         ThreadPool& pool) {
  std::vector<PackedWeights> copies;
  copies.push_back(PackedWeights::random(format, rows, cols, 1));
  const int n = copies_for(copies.front().bytes(), rotation_bytes, cache_resident);
  copies.resize(static_cast<std::size_t>(n));
  pool.parallel_for(n - 1, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i)
      copies[static_cast<std::size_t>(i + 1)] = copies.front().clone();
  });
  return copies;
}

/// The KV caches of one attention cell: copies_for(K and V bytes, ...) caches of `context`
/// tokens, laid out as the reference decoder lays out a sequence's cache: each KV head's rows
/// far from the next head's. The copies share one K and one V buffer (on 2 MiB pages, as the
/// decoder's cache), interleaved by head: head h of copy c holds rows [h x n x context + c x
/// context, + context), so a view's capacity is n x context tokens and no page holds unread
/// padding. With compact copies (heads back to back, before 2026-11-30 night) the hardware
/// prefetchers ran on from one head into the next, which a decoder's cache does not allow:
/// Llama-3.2-1B's 8 KV heads x 64 at 129 tokens, 16 sequences spread over 2 threads, took 23 us
/// per call on compact copies, 31 us with each head 4,103 tokens from the next and 35 us on the
/// decoder's own caches (one process, interleaved). The views come in a scattered order
/// (detail::scattered_order): neighbouring copies are next to each other in every head, and
/// visited in address order a call found the next one's first rows already on their way, which a
/// decoder's calls, one layer apart, do not.
struct KvCopies {
  std::shared_ptr<uint8_t> k, v;
  std::vector<KvCacheView> views;
};

KvCopies kv_copies(KvType type, int64_t kv_heads, int64_t head_dim, int64_t context,
                   int64_t rotation_bytes, bool cached) {
  const int64_t elem = type == KvType::kF32 ? 4 : 2;
  // Each copy's rows of a head start on a 4 KiB boundary, as in the reference decoder's caches
  // (kv_capacity_tokens: attention reads misaligned heads 12-17% slower).
  const int64_t stride = kv_capacity_tokens(context, head_dim, type);
  const int64_t elements = kv_heads * stride * head_dim;
  const int n = copies_for(2 * elements * elem, rotation_bytes, cached);
  KvCopies c;
  // Storage as 32-bit words either way; bf16 uses half of it.
  const std::size_t words = static_cast<std::size_t>((n * elements * elem + 3) / 4);
  for (auto* buffer : {&c.k, &c.v}) {
    *buffer = detail::allocate_huge_shared(static_cast<int64_t>(words * sizeof(uint32_t)));
    // 0x3C233C23: two bf16 0.00995; as f32 ~0.00997. Finite, small values either way.
    std::fill_n(reinterpret_cast<uint32_t*>(buffer->get()), words, 0x3C233C23u);
  }
  std::vector<KvCacheView> views;
  for (int i = 0; i < n; ++i) {
    KvCacheView view;
    view.type = type;
    view.k = c.k.get() + i * stride * head_dim * elem;
    view.v = c.v.get() + i * stride * head_dim * elem;
    view.num_kv_heads = kv_heads;
    view.head_dim = head_dim;
    view.capacity_tokens = n * stride;
    view.context_tokens = context;
    views.push_back(view);
  }
  for (const std::size_t i : detail::scattered_order(views.size())) c.views.push_back(views[i]);
  return c;
}

/// Bytes a matmul sample counts: the packed weights and f32 activations in and out.
double matmul_bytes(double weight_bytes, int64_t rows, int64_t cols, int64_t batch) {
  return weight_bytes + 4.0 * static_cast<double>(batch * (cols + rows));
}

/// Bytes and flops an attention sample counts: K and V read, q and out (f32); 2 flops per
/// multiply-add of q.k and p.V.
double attention_bytes(const KvCacheView& view, int64_t q_heads) {
  return static_cast<double>(view.bytes_read()) +
         2.0 * 4.0 * static_cast<double>(q_heads * view.head_dim);
}
double attention_flops(int64_t context, int64_t q_heads, int64_t head_dim) {
  return 4.0 * static_cast<double>(context * q_heads * head_dim);
}

/// Calls per thread of a spread attention cell (time_spread_attention).
constexpr int kSpreadCallsInARow = 4;

/// Decode attention as the reference decoder runs a decode batch of at least one sequence per
/// thread: every thread of `pool` runs kSpreadCallsInARow single-threaded calls in a row (each
/// on the next of `views`, from `next`), all threads at once. Returns the time per call of one
/// thread while the others run theirs: a run's time / kSpreadCallsInARow. The threads share
/// the memory system, so a call takes longer than alone on an idle pool (Qwen2.5-0.5B's
/// 14/2x64 layout at 129 tokens, 2 threads, 2026-11-30: 10.0 us alone, 10.9 us each in the
/// spread); and a call of 1,024 or more (KV head, token) pairs, which alone runs over the whole
/// pool, runs here on one thread.
Timing time_spread_attention(std::span<const float> q, int64_t q_heads,
                             const std::vector<KvCacheView>& views, std::size_t& next, float scale,
                             ThreadPool& pool, Isa isa, int min_runs, double min_total_s) {
  const int threads = pool.num_threads();
  std::vector<std::vector<float>> outs(static_cast<std::size_t>(threads),
                                       std::vector<float>(q.size()));
  Timing t = time_kernel(
      [&] {
        const std::size_t base = next;
        next += static_cast<std::size_t>(threads * kSpreadCallsInARow);
        pool.parallel_for(
            threads,
            [&](int64_t begin, int64_t end, int) {
              for (int64_t th = begin; th < end; ++th) {
                for (int i = 0; i < kSpreadCallsInARow; ++i) {
                  const std::size_t v =
                      (base + static_cast<std::size_t>(th * kSpreadCallsInARow + i)) % views.size();
                  // Issued from inside the pool: the call runs on this thread alone.
                  decode_attention(q, q_heads, views[v], scale, outs[static_cast<std::size_t>(th)],
                                   pool, isa);
                }
              }
            },
            1);
      },
      1, min_runs, min_total_s);
  t.min_s /= kSpreadCallsInARow;
  t.median_s /= kSpreadCallsInARow;
  return t;
}

}  // namespace

namespace detail {
std::vector<std::size_t> scattered_order(std::size_t n) {
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  // Fisher-Yates with a fixed xorshift64 stream: the same order on every machine and run.
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (std::size_t i = n; i > 1; --i) {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    std::swap(order[i - 1], order[static_cast<std::size_t>(state % i)]);
  }
  return order;
}

std::vector<int64_t> extra_layout_contexts(const std::vector<int64_t>& sweep_contexts) {
  std::vector<int64_t> contexts = sweep_contexts;
  if (contexts.empty()) return contexts;
  const int64_t largest = *std::max_element(contexts.begin(), contexts.end());
  for (const int64_t c : {16, 32, 64, 256, 512, 1024, 4096}) {
    if (c <= largest && std::find(contexts.begin(), contexts.end(), c) == contexts.end()) {
      contexts.push_back(c);
    }
  }
  std::sort(contexts.begin(), contexts.end());
  return contexts;
}
}  // namespace detail

CalibrationRun run_calibration(const CalibrationOptions& options) {
  if (options.max_threads < 0) {
    throw std::invalid_argument("run_calibration: max_threads must be >= 0");
  }
  for (const MatmulShape& m : options.extra_matmul_shapes) {
    if (m.rows < 1 || m.cols < 1) {
      throw std::invalid_argument("run_calibration: extra matmul shape " +
                                  shape_text(m.rows, m.cols) + ": expected rows and cols >= 1");
    }
    if (m.prefill_batch < 0) {
      throw std::invalid_argument("run_calibration: extra matmul shape " +
                                  shape_text(m.rows, m.cols) + ": prefill_batch " +
                                  std::to_string(m.prefill_batch) + ", expected >= 0");
    }
  }
  const auto start = std::chrono::steady_clock::now();
  const auto say = [&](const std::string& line) {
    if (options.progress) options.progress(line);
  };
  CalibrationRun run;
  run.machine = describe_machine();
  const int max_threads = options.max_threads > 0 ? options.max_threads : run.machine.num_cores;
  SweepSize size = options.size;
  if (size == SweepSize::kFull && options.quick) size = SweepSize::kQuick;
  for (const AttentionLayout& l : options.extra_attention_layouts) {
    if (l.q_heads < 1 || l.kv_heads < 1 || l.head_dim < 1 || l.q_heads % l.kv_heads != 0) {
      throw std::invalid_argument(
          "run_calibration: extra attention layout " + std::to_string(l.q_heads) + "/" +
          std::to_string(l.kv_heads) + "x" + std::to_string(l.head_dim) +
          ": expected positive sizes and query heads a multiple of KV heads");
    }
  }
  Sweep sweep = make_sweep(size, max_threads);
  for (const AttentionLayout& l : options.extra_attention_layouts) {
    const bool timed = std::any_of(
        sweep.attention_shapes.begin(), sweep.attention_shapes.end(), [&](const AttentionShape& a) {
          return a.q_heads == l.q_heads && a.kv_heads == l.kv_heads && a.head_dim == l.head_dim;
        });
    if (timed) continue;
    sweep.attention_shapes.push_back(
        {l.q_heads, l.kv_heads, l.head_dim, detail::extra_layout_contexts(sweep.contexts)});
  }
  for (const MatmulShape& m : options.extra_matmul_shapes) {
    // A shape already listed (by the sweep or an earlier extra) gets the union of formats.
    const auto same =
        std::find_if(sweep.matmul_shapes.begin(), sweep.matmul_shapes.end(), [&](const Shape& s) {
          return s.rows == m.rows && s.cols == m.cols &&
                 s.cache_resident == (sweep.rotation_bytes <= 0);
        });
    if (same == sweep.matmul_shapes.end()) {
      // A sweep without rotation (the test sweep) keeps everything in the caches.
      sweep.matmul_shapes.push_back(
          {m.rows, m.cols, sweep.rotation_bytes <= 0, m.formats, m.prefill_batch});
      continue;
    }
    same->prefill_batch = std::max(same->prefill_batch, m.prefill_batch);
    if (m.formats.empty()) {
      same->formats.clear();
    } else if (!same->formats.empty()) {
      for (const WeightFormat f : m.formats) {
        if (std::find(same->formats.begin(), same->formats.end(), f) == same->formats.end()) {
          same->formats.push_back(f);
        }
      }
    }
  }
  run.sweep = sweep.name;
  run.max_threads = max_threads;
  run.rotation_bytes = sweep.rotation_bytes;

  // Bandwidth: read and copy for each thread count of the sweep (measure_bandwidth covers
  // 1..N; the quick and test sweeps keep only N).
  say("bandwidth: " + std::to_string(sweep.bandwidth_buffer_bytes / kMiB) + " MiB, " +
      std::to_string(sweep.bandwidth_repetitions) + " interleaved rounds, threads 1.." +
      std::to_string(max_threads));
  measure_bandwidth(run.machine, max_threads, sweep.bandwidth_buffer_bytes,
                    sweep.bandwidth_repetitions);
  if (sweep.threads.size() == 1) {
    for (auto* map :
         {&run.machine.read_bandwidth_bytes_per_s, &run.machine.copy_bandwidth_bytes_per_s}) {
      const double keep = map->at(max_threads);
      map->clear();
      (*map)[max_threads] = keep;
    }
  }

  std::vector<std::unique_ptr<ThreadPool>> pools;
  for (const int t : sweep.threads) pools.push_back(std::make_unique<ThreadPool>(t));
  const Isa isa = best_isa();

  // Matrix products.
  const int64_t max_batch = *std::max_element(sweep.batches.begin(), sweep.batches.end());
  for (const WeightFormat format :
       {WeightFormat::kF32, WeightFormat::kBf16, WeightFormat::kInt8, WeightFormat::kInt4}) {
    const std::string fname(to_string(format));
    for (const Shape& shape : sweep.matmul_shapes) {
      if (!shape.formats.empty() &&
          std::find(shape.formats.begin(), shape.formats.end(), format) == shape.formats.end()) {
        continue;
      }
      if (format == WeightFormat::kInt4 && shape.cols % 32 != 0) {
        // Blocks of 32 weights along a row: no int4 kernel for this shape.
        say("matmul int4 " + shape_text(shape.rows, shape.cols) +
            " skipped: int4 needs cols a multiple of 32");
        continue;
      }
      const std::vector<PackedWeights> copies =
          weight_copies(format, shape.rows, shape.cols, sweep.rotation_bytes, shape.cache_resident,
                        *pools.back());
      const auto n = static_cast<int>(copies.size());
      say("matmul " + fname + " " + shape_text(shape.rows, shape.cols) +
          (shape.cache_resident ? " (in cache)" : " x " + std::to_string(n) + " copies"));
      std::vector<float> x(static_cast<std::size_t>(max_batch * shape.cols));
      for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.001f * static_cast<float>(i % 1000);
      std::vector<float> y(static_cast<std::size_t>(max_batch * shape.rows));
      std::vector<std::vector<Cell>> cells(sweep.batches.size(),
                                           std::vector<Cell>(sweep.threads.size()));
      std::size_t next = 0;
      // Smaller thread counts are measured at a few batches only (reported, not fitted).
      const auto measured = [&](std::size_t b, std::size_t t) {
        return t + 1 == sweep.threads.size() ||
               std::find(sweep.small_batches.begin(), sweep.small_batches.end(),
                         sweep.batches[b]) != sweep.small_batches.end();
      };
      const auto time_cell = [&](std::size_t b, std::size_t t) {
        const int64_t batch = sweep.batches[b];
        ThreadPool& pool = *pools[t];
        const std::span<const float> xs(x.data(), static_cast<std::size_t>(batch * shape.cols));
        const std::span<float> ys(y.data(), static_cast<std::size_t>(batch * shape.rows));
        return time_kernel(
            [&] { matmul(copies[next++ % copies.size()], xs, batch, ys, pool, isa); }, 1,
            sweep.min_runs, sweep.min_total_s);
      };
      for (int rep = 0; rep < sweep.repetitions; ++rep) {
        for (std::size_t b = 0; b < sweep.batches.size(); ++b) {
          for (std::size_t t = 0; t < sweep.threads.size(); ++t) {
            if (measured(b, t)) cells[b][t].add(time_cell(b, t));
          }
        }
      }
      // Cells timed during a burst of contention are timed again (harness.h).
      std::vector<Cell*> list;
      std::vector<std::pair<std::size_t, std::size_t>> where;
      for (std::size_t b = 0; b < sweep.batches.size(); ++b) {
        for (std::size_t t = 0; t < sweep.threads.size(); ++t) {
          if (!measured(b, t)) continue;
          list.push_back(&cells[b][t]);
          where.emplace_back(b, t);
        }
      }
      run.contended_repetitions += remeasure_contended(
          list, [&](std::size_t i) { return time_cell(where[i].first, where[i].second); });
      const double weight_bytes = static_cast<double>(copies.front().bytes());
      // A burst that lasts a whole cell leaves its fastest run as slow as its median, which the
      // check above cannot see. A product of one activation row from memory streams its weights
      // at 0.45-0.9 of the read bandwidth; one that read at less than kBurstFraction of it was
      // timed in a burst, and likely so were the shape's other batches, timed just after: all
      // of the shape's cells at that thread count are timed twice more and keep the median of
      // their repetitions. (Validate, 2026-11-30: a quick
      // calibration put Qwen2.5-0.5B's MLP shapes at 2-3x their time in the steps.)
      if (!shape.cache_resident && sweep.batches.front() == 1) {
        for (std::size_t t = 0; t < sweep.threads.size(); ++t) {
          const auto bw = run.machine.read_bandwidth_bytes_per_s.find(sweep.threads[t]);
          if (bw == run.machine.read_bandwidth_bytes_per_s.end() || !(bw->second > 0)) continue;
          if (!measured(0, t) || !(cells[0][t].median_s() > 0)) continue;
          const double b1_bytes_per_s =
              matmul_bytes(weight_bytes, shape.rows, shape.cols, 1) / cells[0][t].median_s();
          if (!(b1_bytes_per_s < kBurstFraction * bw->second)) continue;
          for (int rep = 0; rep < 2; ++rep) {
            for (std::size_t b = 0; b < sweep.batches.size(); ++b) {
              if (!measured(b, t)) continue;
              cells[b][t].add(time_cell(b, t));
              ++run.contended_repetitions;
            }
          }
        }
      }
      for (std::size_t b = 0; b < sweep.batches.size(); ++b) {
        const int64_t batch = sweep.batches[b];
        for (std::size_t t = 0; t < sweep.threads.size(); ++t) {
          if (!measured(b, t)) continue;
          const double bytes = matmul_bytes(weight_bytes, shape.rows, shape.cols, batch);
          const double flops = 2.0 * static_cast<double>(shape.rows * shape.cols * batch);
          run.samples.push_back(make_sample(
              "matmul", fname, shape.rows, shape.cols, batch, sweep.threads[t], cells[b][t].min_s,
              cells[b][t].median_s(), bytes, flops, shape.cache_resident));
        }
      }
      if (shape.prefill_batch > 0) {
        // A prefill's batch: activations rotated through copies, so that each call reads its
        // input from and writes its output to memory as a prefill pass does.
        const int64_t pb = shape.prefill_batch;
        const int64_t act_bytes = 4 * pb * (shape.rows + shape.cols);
        const int na =
            std::min(copies_for(act_bytes, sweep.rotation_bytes > 0 ? kActivationRotationBytes : 0,
                                shape.cache_resident),
                     kMaxActivationCopies);
        std::vector<float> x0(static_cast<std::size_t>(pb * shape.cols));
        for (std::size_t i = 0; i < x0.size(); ++i) x0[i] = 0.001f * static_cast<float>(i % 1000);
        const auto copies_of = static_cast<std::size_t>(na);
        const std::vector<std::vector<float>> px(copies_of, x0);
        std::vector<std::vector<float>> py(
            copies_of, std::vector<float>(static_cast<std::size_t>(pb * shape.rows)));
        say("matmul " + fname + " " + shape_text(shape.rows, shape.cols) + " at " +
            std::to_string(pb) + " rows (a prefill), activations x " + std::to_string(na) +
            " copies");
        std::size_t next_act = 0;
        ThreadPool& pool = *pools.back();
        const auto time_prefill = [&](std::size_t) {
          return time_kernel(
              [&] {
                const std::size_t a = next_act++ % px.size();
                matmul(copies[next++ % copies.size()], px[a], pb, py[a], pool, isa);
              },
              1, sweep.min_runs, sweep.min_total_s);
        };
        Cell cell;
        for (int rep = 0; rep < sweep.repetitions; ++rep) cell.add(time_prefill(0));
        run.contended_repetitions += remeasure_contended({&cell}, time_prefill);
        // A call of pb rows does at most pb / max_batch times the work of one of max_batch rows
        // (the same slices of rows over weights read once); a cell slower per row than the
        // shape's largest batch by more than kContendedRatio was timed in a burst that lasted
        // all its runs (one repetition in a quick sweep: its fastest run is as slow as its
        // median). Qwen2.5-0.5B int8 gate/up (9728 x 896), 2026-11-30: 16.7 ms at 256 rows
        // against 1.09 ms at 64, 4.5-5.9 ms in five other quick profiles. Timed twice more,
        // the median of the repetitions kept.
        const double ref_per_row_s =
            cells[sweep.batches.size() - 1][sweep.threads.size() - 1].median_s() /
            static_cast<double>(max_batch);
        if (ref_per_row_s > 0 &&
            cell.median_s() > kContendedRatio * ref_per_row_s * static_cast<double>(pb)) {
          for (int extra = 0; extra < 2; ++extra) {
            cell.add(time_prefill(0));
            ++run.contended_repetitions;
          }
        }
        run.samples.push_back(make_sample(
            "matmul", fname, shape.rows, shape.cols, pb, sweep.threads.back(), cell.min_s,
            cell.median_s(), weight_bytes + static_cast<double>(act_bytes),
            2.0 * static_cast<double>(shape.rows * shape.cols * pb), shape.cache_resident));
      }
    }
  }

  // Expert-grouped products of a mixture-of-experts layer (reported, not fitted).
  const std::vector<KernelSample> moe = detail::time_moe_matmul(
      size, *pools.back(), sweep.min_runs, sweep.min_total_s, options.progress);
  run.samples.insert(run.samples.end(), moe.begin(), moe.end());

  // Decode attention over several GQA layouts and contexts, caches rotated from memory.
  for (const AttentionShape& as : sweep.attention_shapes) {
    const int64_t q_heads = as.q_heads, kv_heads = as.kv_heads, head_dim = as.head_dim;
    std::vector<float> q(static_cast<std::size_t>(q_heads * head_dim), 0.01f);
    std::vector<float> out(q.size());
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
    for (const KvType type : {KvType::kBf16, KvType::kF32}) {
      const std::string tname(to_string(type));
      for (const int64_t context : as.contexts.empty() ? sweep.contexts : as.contexts) {
        const bool cached = sweep.attention_rotation_bytes <= 0;
        const KvCopies kv =
            kv_copies(type, kv_heads, head_dim, context, sweep.attention_rotation_bytes, cached);
        const std::vector<KvCacheView>& views = kv.views;
        say("attention " + tname + " KV " + std::to_string(q_heads) + "/" +
            std::to_string(kv_heads) + "x" + std::to_string(head_dim) + ", " +
            std::to_string(context) + " tokens" +
            (cached ? " (in cache)" : " x " + std::to_string(views.size()) + " copies"));
        std::vector<Cell> cells(sweep.threads.size());
        std::size_t next = 0;
        const auto time_cell = [&](std::size_t t) {
          ThreadPool& pool = *pools[t];
          return time_kernel(
              [&] {
                decode_attention(q, q_heads, views[next++ % views.size()], scale, out, pool, isa);
              },
              1, sweep.min_runs, sweep.min_total_s);
        };
        // With several threads, also the decoder's spread of a decode batch over them.
        const bool spread = sweep.threads.back() > 1;
        Cell spread_cell;
        for (int rep = 0; rep < sweep.repetitions; ++rep) {
          for (std::size_t t = 0; t < sweep.threads.size(); ++t) cells[t].add(time_cell(t));
          if (spread) {
            spread_cell.add(time_spread_attention(q, q_heads, views, next, scale, *pools.back(),
                                                  isa, sweep.min_runs, sweep.min_total_s));
          }
        }
        std::vector<Cell*> list;
        for (Cell& c : cells) list.push_back(&c);
        run.contended_repetitions += remeasure_contended(list, time_cell);
        const double bytes = attention_bytes(views.front(), q_heads);
        const double flops = attention_flops(context, q_heads, head_dim);
        for (std::size_t t = 0; t < sweep.threads.size(); ++t) {
          run.samples.push_back(make_sample("attention", tname, kv_heads * head_dim, context,
                                            q_heads, sweep.threads[t], cells[t].min_s,
                                            cells[t].median_s(), bytes, flops, cached));
        }
        if (spread) {
          run.samples.push_back(make_sample("attention_spread", tname, kv_heads * head_dim, context,
                                            q_heads, sweep.threads.back(), spread_cell.min_s,
                                            spread_cell.median_s(), bytes, flops, cached));
        }
      }
    }
  }

  // Element-wise operators (single-threaded, in cache): their cost is small next to the
  // products; recorded for the report, not fitted.
  say("rms_norm, swiglu");
  for (const int64_t rows : {int64_t{1}, int64_t{16}}) {
    constexpr int64_t kDim = 4096;
    std::vector<float> xs(static_cast<std::size_t>(rows * kDim), 0.5f), w(kDim, 1.0f), o(xs.size());
    const Timing t = time_kernel([&] { rms_norm(xs, w, kDim, 1e-5f, o, isa); }, 2,
                                 sweep.min_runs * 4, sweep.min_total_s / 4);
    run.samples.push_back(make_sample("rms_norm", "f32", rows, kDim, rows, 1, t.min_s, t.median_s,
                                      4.0 * (2.0 * static_cast<double>(rows * kDim) + kDim),
                                      4.0 * static_cast<double>(rows * kDim), true));
    constexpr int64_t kFf = 14336;
    std::vector<float> g(static_cast<std::size_t>(rows * kFf), 0.5f), u(g.size(), 0.25f),
        so(g.size());
    const Timing ts =
        time_kernel([&] { swiglu(g, u, so, isa); }, 2, sweep.min_runs * 4, sweep.min_total_s / 4);
    run.samples.push_back(make_sample("swiglu", "f32", 1, kFf, rows, 1, ts.min_s, ts.median_s,
                                      4.0 * 3.0 * static_cast<double>(rows * kFf),
                                      6.0 * static_cast<double>(rows * kFf), true));
  }
  if (sweep.rotation_bytes > 0) {
    // SwiGLU from memory: 16 rows of 14,336 over copies of gate, up and output totalling 64
    // MiB. Inside the reference decoder it runs at this rate, not the in-cache one: Qwen2.5-0.5B
    // int8 at batch 32 took 1.5-1.8 ms per step (0.86 ns per element per thread) where the
    // in-cache sample said 0.34 ns; one thread over 60 MiB of copies took 0.8-1.0 ns
    // (2026-11-30).
    constexpr int64_t kRows = 16, kFf = 14336;
    const int64_t bytes = 3 * 4 * kRows * kFf;
    const int n = copies_for(bytes, kActivationRotationBytes, false);
    std::vector<std::vector<float>> g(
        static_cast<std::size_t>(n),
        std::vector<float>(static_cast<std::size_t>(kRows * kFf), 0.5f));
    std::vector<std::vector<float>> u = g, so = g;
    std::size_t next_copy = 0;
    const Timing ts = time_kernel(
        [&] {
          const std::size_t c = next_copy++ % g.size();
          swiglu(g[c], u[c], so[c], isa);
        },
        2, sweep.min_runs * 4, sweep.min_total_s / 4);
    run.samples.push_back(make_sample("swiglu", "f32", 1, kFf, kRows, 1, ts.min_s, ts.median_s,
                                      static_cast<double>(bytes),
                                      6.0 * static_cast<double>(kRows * kFf), false));
  }
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

struct ShapeTimer::Impl {
  struct MatmulCell {
    std::string format;
    int64_t rows, cols, batch;
    const std::vector<PackedWeights>* copies;
    RepeatedTiming timing;
  };
  struct AttentionCell {
    std::string type;
    int64_t q_heads, kv_heads, head_dim, context;
    KvCopies kv;
    RepeatedTiming timing;
    RepeatedTiming spread;  // time_spread_attention, with a pool of several threads
  };
  ThreadPool* pool = nullptr;
  Sweep sweep;
  std::vector<std::vector<PackedWeights>> weights;  // per (shape, format)
  std::vector<MatmulCell> matmul;
  std::vector<AttentionCell> attention;
  std::vector<float> x, y;
  std::size_t next = 0;
  int rounds = 0;
};

ShapeTimer::ShapeTimer(const ShapeTimingOptions& options, ThreadPool& pool)
    : impl_(std::make_unique<Impl>()) {
  Impl& im = *impl_;
  im.pool = &pool;
  im.sweep = make_sweep(options.size, pool.num_threads());
  const auto fail = [](const std::string& what) {
    throw std::invalid_argument("ShapeTimer: " + what);
  };
  for (const int64_t b : options.batches) {
    if (b < 1) fail("batch " + std::to_string(b) + ", expected >= 1");
  }
  for (const int64_t c : options.contexts) {
    if (c < 1) fail("context " + std::to_string(c) + ", expected >= 1");
  }
  const bool rotate = im.sweep.rotation_bytes > 0;
  const int64_t max_batch = options.batches.empty()
                                ? 1
                                : *std::max_element(options.batches.begin(), options.batches.end());
  int64_t max_rows = 1, max_cols = 1;
  // Operands first (so that the cells can point at them), then the cells.
  std::vector<std::pair<const MatmulShape*, WeightFormat>> made;
  for (const MatmulShape& m : options.matmul_shapes) {
    if (m.rows < 1 || m.cols < 1)
      fail("matmul shape " + shape_text(m.rows, m.cols) + ", expected rows and cols >= 1");
    const std::vector<WeightFormat> formats =
        m.formats.empty() ? std::vector<WeightFormat>{WeightFormat::kF32, WeightFormat::kBf16,
                                                      WeightFormat::kInt8, WeightFormat::kInt4}
                          : m.formats;
    for (const WeightFormat f : formats) {
      if (f == WeightFormat::kInt4 && m.cols % 32 != 0) {
        fail("matmul int4 " + shape_text(m.rows, m.cols) + ": int4 needs cols a multiple of 32");
      }
      im.weights.push_back(
          weight_copies(f, m.rows, m.cols, im.sweep.rotation_bytes, !rotate, pool));
      made.emplace_back(&m, f);
    }
    max_rows = std::max(max_rows, m.rows);
    max_cols = std::max(max_cols, m.cols);
  }
  for (std::size_t i = 0; i < made.size(); ++i) {
    for (const int64_t b : options.batches) {
      im.matmul.push_back({std::string(to_string(made[i].second)),
                           made[i].first->rows,
                           made[i].first->cols,
                           b,
                           &im.weights[i],
                           {}});
    }
  }
  im.x.resize(static_cast<std::size_t>(max_batch * max_cols));
  for (std::size_t i = 0; i < im.x.size(); ++i) im.x[i] = 0.001f * static_cast<float>(i % 1000);
  im.y.resize(static_cast<std::size_t>(std::max(max_batch * max_rows, int64_t{1})));
  for (const AttentionLayout& l : options.attention_layouts) {
    if (l.q_heads < 1 || l.kv_heads < 1 || l.head_dim < 1 || l.q_heads % l.kv_heads != 0) {
      fail("attention layout " + std::to_string(l.q_heads) + "/" + std::to_string(l.kv_heads) +
           "x" + std::to_string(l.head_dim) +
           ": expected positive sizes and query heads a multiple of KV heads");
    }
    for (const KvType t : options.kv_types) {
      for (const int64_t c : options.contexts) {
        im.attention.push_back(
            {std::string(to_string(t)),
             l.q_heads,
             l.kv_heads,
             l.head_dim,
             c,
             kv_copies(t, l.kv_heads, l.head_dim, c, im.sweep.attention_rotation_bytes, !rotate),
             {},
             {}});
      }
    }
  }
}

ShapeTimer::~ShapeTimer() = default;

void ShapeTimer::round() {
  Impl& im = *impl_;
  const Isa isa = best_isa();
  const int runs = im.sweep.min_runs;
  const double total_s = im.sweep.min_total_s;
  for (Impl::MatmulCell& c : im.matmul) {
    const std::span<const float> xs(im.x.data(), static_cast<std::size_t>(c.batch * c.cols));
    const std::span<float> ys(im.y.data(), static_cast<std::size_t>(c.batch * c.rows));
    c.timing.add(time_kernel(
        [&] { matmul((*c.copies)[im.next++ % c.copies->size()], xs, c.batch, ys, *im.pool, isa); },
        1, runs, total_s));
  }
  for (Impl::AttentionCell& c : im.attention) {
    std::vector<float> q(static_cast<std::size_t>(c.q_heads * c.head_dim), 0.01f), out(q.size());
    const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
    c.timing.add(time_kernel(
        [&] {
          decode_attention(q, c.q_heads, c.kv.views[im.next++ % c.kv.views.size()], scale, out,
                           *im.pool, isa);
        },
        1, runs, total_s));
    if (im.pool->num_threads() > 1) {
      c.spread.add(time_spread_attention(q, c.q_heads, c.kv.views, im.next, scale, *im.pool, isa,
                                         runs, total_s));
    }
  }
  ++im.rounds;
}

int ShapeTimer::rounds() const { return impl_->rounds; }

std::vector<KernelSample> ShapeTimer::samples() const { return collect(-1); }

std::vector<KernelSample> ShapeTimer::round_samples(int round) const {
  if (round < 0 || round >= impl_->rounds) {
    throw std::out_of_range("ShapeTimer::round_samples: round " + std::to_string(round) +
                            ", expected 0.." + std::to_string(impl_->rounds - 1) + " (" +
                            std::to_string(impl_->rounds) + " rounds taken)");
  }
  return collect(round);
}

std::vector<KernelSample> ShapeTimer::collect(int round) const {
  const Impl& im = *impl_;
  std::vector<KernelSample> out;
  if (im.rounds == 0) return out;
  const auto median = [round](const RepeatedTiming& t) {
    return round < 0 ? t.median_s() : t.medians[static_cast<std::size_t>(round)];
  };
  const int threads = im.pool->num_threads();
  const bool cached = im.sweep.rotation_bytes <= 0;
  for (const Impl::MatmulCell& c : im.matmul) {
    out.push_back(make_sample(
        "matmul", c.format, c.rows, c.cols, c.batch, threads, c.timing.min_s, median(c.timing),
        matmul_bytes(static_cast<double>(c.copies->front().bytes()), c.rows, c.cols, c.batch),
        2.0 * static_cast<double>(c.rows * c.cols * c.batch), cached));
  }
  for (const Impl::AttentionCell& c : im.attention) {
    out.push_back(make_sample("attention", c.type, c.kv_heads * c.head_dim, c.context, c.q_heads,
                              threads, c.timing.min_s, median(c.timing),
                              attention_bytes(c.kv.views.front(), c.q_heads),
                              attention_flops(c.context, c.q_heads, c.head_dim), cached));
    if (threads > 1) {
      out.push_back(make_sample("attention_spread", c.type, c.kv_heads * c.head_dim, c.context,
                                c.q_heads, threads, c.spread.min_s, median(c.spread),
                                attention_bytes(c.kv.views.front(), c.q_heads),
                                attention_flops(c.context, c.q_heads, c.head_dim), cached));
    }
  }
  return out;
}

}  // namespace llmcap::kernels
