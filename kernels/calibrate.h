// The calibration sweep: memory bandwidth and the decode kernels timed over formats, shapes,
// batches and thread counts on this machine (docs/model.md, "Calibration"). The fit and the
// stored profile live in model/calibration.h; this library knows nothing of model/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "kernels/machine.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace llmcap::kernels {

/// Which shapes the sweep covers.
enum class SweepSize {
  kFull,   ///< threads 1..N; 11 matmul shapes x 4 formats x batches 1..64, 4 GQA layouts;
           ///< with every size, the expert-grouped products of detail::moe_sweep
  kQuick,  ///< threads N only; fewer shapes and repetitions (seconds)
  kTest,   ///< tiny shapes that stay in the caches: checks the plumbing with the real kernels
};

/// A matrix shape to time besides the sweep's own: rows = output features x cols = input
/// features of one kernel call, such as a model's fused QKV, output, gate/up, down and LM-head
/// matrices (`llmcap calibrate --model`). Timed like the sweep's shapes (operands rotated from
/// memory, every batch of the sweep at the largest thread count, its small batches at the
/// others).
struct MatmulShape {
  int64_t rows = 0, cols = 0;
  /// Formats to time it in; empty: all four. int4 is skipped (with a progress line) when cols
  /// is not a multiple of 32, its block size.
  std::vector<WeightFormat> formats;
  /// A prefill's batch (activation rows) to time it at besides the sweep's batches, at the
  /// largest thread count, with its activations rotated through 64 MiB of copies: a prefill's
  /// products read and write activations that no longer stay in the caches (Qwen2.5-0.5B int8
  /// at 512 rows, 2026-11-30: the QKV product took 1.30-1.39 ms per call on one activation
  /// buffer, 1.45-1.71 rotated, 1.42-1.47 inside the reference decoder's prefill). 0: none;
  /// a shape listed twice keeps the larger.
  int64_t prefill_batch = 0;
};

/// A decode-attention layout to time besides the sweep's own (a model's: query heads, KV
/// heads, head dimension), in both KV types, at detail::extra_layout_contexts of the sweep's
/// contexts.
struct AttentionLayout {
  int64_t q_heads = 0, kv_heads = 0, head_dim = 0;
};

struct CalibrationOptions {
  bool quick = false;                 ///< SweepSize::kQuick (ignored when `size` is kTest)
  int max_threads = 0;                ///< 0: every logical CPU this process may use
  SweepSize size = SweepSize::kFull;  ///< kFull is replaced by kQuick when `quick` is set
  /// Called with one line per stage ("bandwidth", "matmul bf16 4096x14336", ...); may be empty.
  std::function<void(const std::string&)> progress;
  /// Timed after the sweep's own shapes, in the given order; a shape the sweep already times
  /// from memory is not timed twice. Each needs rows, cols >= 1 (std::invalid_argument).
  std::vector<MatmulShape> extra_matmul_shapes;
  /// Timed after the sweep's own layouts; one the sweep already times is not timed twice. Each
  /// needs positive sizes with q_heads a multiple of kv_heads (std::invalid_argument).
  std::vector<AttentionLayout> extra_attention_layouts;
};

/// One timed kernel shape. matmul: rows x cols weights, `batch` activation rows; attention:
/// rows = kv_heads x head_dim, cols = context tokens, batch = query heads; rms_norm: rows x cols
/// = batch rows of `cols`; swiglu: cols elements per row, batch rows. bytes: what the kernel
/// must move (packed weights + f32 activations in and out; K and V read + q and out);
/// flops: 2 per multiply-add.
struct KernelSample {
  /// "matmul", "attention", "attention_spread" (time per call of decode attention spread over
  /// the threads, one single-threaded call per thread at once, as the reference decoder runs a
  /// decode batch), "rms_norm", "swiglu"
  std::string op;
  std::string format;   ///< weight format or KV type ("f32", "bf16", "int8", "int4"); "f32"
  std::string backend;  ///< "llmcap"
  int64_t rows = 0, cols = 0, batch = 0;
  int threads = 0;
  double min_s = 0, median_s = 0;
  double bytes = 0, flops = 0;
  double bytes_per_s = 0, flops_per_s = 0;  ///< bytes / median_s, flops / median_s
  /// True when the same data was read on every call and fits the caches. False: calls rotate
  /// over copies of the operands totalling >= rotation_bytes, so each call reads from memory.
  bool cache_resident = false;
};

/// A batch-1 product from memory reading at less than this fraction of the read bandwidth was
/// timed in a burst of contention, and its shape is timed again (run_calibration). Quiet quick
/// calibrations of the Llama-3.2-1B and Qwen2.5-0.5B shapes put them at 0.45-0.9 (AVX-512 host,
/// 2026-11-30).
inline constexpr double kBurstFraction = 0.3;

struct CalibrationRun {
  MachineInfo machine;  ///< with read/copy bandwidth for the thread counts measured
  std::vector<KernelSample> samples;
  int max_threads = 0;         ///< the largest thread count measured (the one to fit)
  int64_t rotation_bytes = 0;  ///< operands rotated over at least this many bytes
  double seconds = 0;          ///< wall time of the whole sweep
  /// Extra repetitions of matmul and attention cells timed during a burst of contention
  /// (median > kContendedRatio x fastest run; harness.h remeasure_contended), and of product
  /// shapes whose batch-1 cell read under kBurstFraction of the read bandwidth.
  int contended_repetitions = 0;
  std::string sweep;  ///< "full", "quick", "test"
};

/// Runs the sweep. Interleaved: every repetition times every thread count and batch of a shape
/// in turn (bandwidth drifts minute to minute on shared machines), and medians of the
/// repetitions are kept. Throws std::invalid_argument for max_threads < 0, an extra shape
/// with rows or cols below 1, or an extra attention layout as above.
CalibrationRun run_calibration(const CalibrationOptions& options);

/// What a ShapeTimer times: matrix shapes at decode batches and attention layouts at context
/// lengths, at the pool's thread count, with operands rotated from memory as `size`'s sweep
/// rotates them (and its runs per cell).
struct ShapeTimingOptions {
  /// Each in its `formats` (empty: all four); prefill_batch is ignored. int4 needs cols a
  /// multiple of 32.
  std::vector<MatmulShape> matmul_shapes;
  std::vector<int64_t> batches;  ///< activation rows per call, each >= 1
  std::vector<AttentionLayout> attention_layouts;
  std::vector<KvType> kv_types = {KvType::kBf16};
  std::vector<int64_t> contexts;       ///< KV tokens per attention call, each >= 1
  SweepSize size = SweepSize::kQuick;  ///< kFull or kQuick rotate from memory; kTest does not
};

/// The cells of a calibration sweep (matrix products, decode attention) for a fixed set of
/// shapes, timed in rounds so that they can be interleaved with other measurements: `llmcap
/// validate` re-times a model's kernels between its decoder steps, so that the predictor and
/// the steps see the same machine (a shared host's bandwidth drifts by a third within minutes).
/// The operands are made once; each round() times every cell once (time_kernel), and
/// samples() gives per cell the median over the rounds, as run_calibration's samples.
class ShapeTimer {
 public:
  /// Makes the operands (a quick sweep's rotation: 256 MiB of weight copies per shape and
  /// format, 256 MiB of KV per layout, type and context). Throws std::invalid_argument for a
  /// shape, batch, layout or context out of range, or int4 with cols not a multiple of 32.
  ShapeTimer(const ShapeTimingOptions& options, ThreadPool& pool);
  ~ShapeTimer();
  ShapeTimer(const ShapeTimer&) = delete;
  ShapeTimer& operator=(const ShapeTimer&) = delete;
  void round();  ///< times every cell once, matrix products first
  int rounds() const;
  /// One per cell (op "matmul" or "attention", rows / cols / batch as KernelSample; with a
  /// pool of several threads also an "attention_spread" sample per attention cell), threads
  /// = the pool's; median_s over the rounds. Empty before the first round.
  std::vector<KernelSample> samples() const;
  /// As samples(), with median_s the median of round `round` alone (0-based, in the order the
  /// rounds were taken; min_s stays the fastest run of any round): the kernels as they ran
  /// right before the measurements that followed that round. Throws std::out_of_range for a
  /// round not taken yet.
  std::vector<KernelSample> round_samples(int round) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  std::vector<KernelSample> collect(int round) const;  ///< round < 0: over all rounds
};

namespace detail {
/// 0..n-1 in a fixed pseudo-random order (the same for every run): the order in which
/// decode-attention cells visit their rotated KV copies. Copies under 2 MiB lie next to each
/// other in memory; visited in address order, a call found the next copy's first lines already
/// fetched. Measured on 2026-11-30 (quick calibrations with Qwen2.5-0.5B's layout, 14 query
/// heads over 2 x 64, three alternating pairs of runs on a steady host): 7.7-8.1 us per call
/// at 128 tokens in address order, 8.4-8.8 scattered; 3.4-3.7 and 3.7-3.9 us at 16 tokens; the
/// same at 512 and 1,024 tokens. Inside the reference decoder a call of Llama-3.2-1B at 129
/// tokens took 28-40 us against 16-21 us over the same caches called layer after layer outside
/// the step: the rest of that gap is not in the calibration.
std::vector<std::size_t> scattered_order(std::size_t n);

/// The contexts an extra attention layout is timed at: `sweep_contexts`, 16, 32 and 64, and
/// 256, 512, 1024, 4096 up to their largest, ascending. A model's layout gets more contexts
/// than the sweep's own so that its measured ratios follow the kernel's steps
/// (decode_attention runs on one thread below 2 x 512 (KV head, token) pairs per call and on
/// more above) and cover the short prefixes of a prefill's first tokens (one call per token).
std::vector<int64_t> extra_layout_contexts(const std::vector<int64_t>& sweep_contexts);

/// The expert-grouped products a sweep times (calibrate_moe.cpp): `experts` experts of rows x
/// cols each, every token routed to k of them uniformly at random, at each token count, in
/// `repetitions` interleaved rounds.
struct MoeSweep {
  int64_t experts, k, rows, cols;
  std::vector<int64_t> tokens;
  int repetitions;
};
/// Full and quick sweeps: OLMoE-1B-7B's routed gate/up projection (64 experts of 2048 x 2048,
/// top-8) at 1, 4, 16 and 64 tokens; the test sweep: 8 experts of 64 x 128, top-2, at 1 and 4.
MoeSweep moe_sweep(SweepSize size);

/// Times moe_matmul (kernels/moe.h) over moe_sweep(size) on `pool`, in int8 and int4: one
/// KernelSample per format and token count, op "moe_matmul", rows x cols one expert's matrix,
/// batch the tokens; bytes the experts the routings hit (their mean over the eight routings
/// the calls take in turn) + f32 activations in and out; flops 2 x tokens x k x rows x cols.
/// Reported by the sweep, not fitted (the predictor prices routed experts with the matmul
/// rates at one expert's rows per call). `say`: one progress line per format (may be empty).
std::vector<KernelSample> time_moe_matmul(SweepSize size, ThreadPool& pool, int min_runs,
                                          double min_total_s,
                                          const std::function<void(const std::string&)>& say);
}  // namespace detail

}  // namespace llmcap::kernels
