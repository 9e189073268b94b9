// Efficiency factors of the step-time predictors: the datasheet roofline's fractions per
// hardware kind and the measured rates a calibration profile adds (model/calibration.h).
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/hardware.h"

namespace llmcap::model {

/// Measured absolute rates of one kind of operator on one replica (from a calibration profile,
/// model/calibration.h): time = overhead_s x calls + bytes / bytes_per_s + flops / flops_per_s,
/// a rate of 0 dropping its term.
/// Rates measured at one batch size (tokens per call) of a matrix product.
struct BatchRates {
  double batch = 0;        ///< activation rows (tokens) per call
  double overhead_s = 0;   ///< fixed cost per call at this batch
  double bytes_per_s = 0;  ///< effective rate over the call's bytes at this batch
};

struct CalibratedRates {
  double overhead_s = 0;   ///< fixed cost per kernel call (per weight matrix for linear nodes)
  double bytes_per_s = 0;  ///< effective streaming rate
  double flops_per_s = 0;  ///< effective arithmetic rate (0: no separate compute term)
  /// Linear nodes: rates fitted per measured batch size, ascending by batch (may be empty).
  /// Within [first, last] batch they replace the three terms above: the time at the node's
  /// token count T is interpolated linearly in T between the two measured batches around it
  /// (docs/model.md, "Calibration").
  std::vector<BatchRates> by_batch;
};

/// A matrix product measured at its exact shape: which one (weight format, rows = output
/// features x cols = input features of one kernel call, per device).
struct MatmulShapeKey {
  std::string format;  ///< "f32", "bf16", "int8", "int4"
  int64_t rows = 0, cols = 0;
  auto operator<=>(const MatmulShapeKey&) const = default;
};
/// A decode-attention layout measured at its exact shape, per device: KV type, KV heads x
/// head_dim, and query heads.
struct AttentionShapeKey {
  std::string format;  ///< KV type: "f32", "bf16"
  int64_t kv_dim = 0;  ///< KV heads x head_dim
  int64_t q_heads = 0;
  auto operator<=>(const AttentionShapeKey&) const = default;
};
/// The measured time of a shape over its fitted time at one point (matmul: the format's line at
/// that batch; attention: the KV type's three-term fit at that context): > 1 where the shape is
/// slower than the fit of all shapes says.
struct ShapeRatio {
  /// Activation rows per call (matmul); context tokens per call (attention).
  double tokens = 0;
  double ratio = 1;  ///< measured / fitted, > 0
  bool operator==(const ShapeRatio&) const = default;
};

/// Calibrated rates that replace the datasheet roofline for CPU operators (docs/model.md,
/// "Calibration"). Absolute rates of one replica: the deployment's bandwidth and peaks are not
/// used for the operators these cover, except as a compute floor (see RooflinePredictor).
struct CalibratedEfficiency {
  /// Linear nodes and the LM head, by weight format name ("f32", "bf16", "int8", "int4"); a
  /// format missing here keeps the datasheet roofline.
  std::map<std::string, CalibratedRates> linear;
  /// Measured shapes, ascending by batch: a linear node (or the LM head) whose kernel calls
  /// have these shapes has its fitted time multiplied by the ratio, interpolated linearly in
  /// the token count between measured batches and held at the end ratios outside them (a node
  /// of several calls: the calls' ratios weighted by their weight bytes; a call of another
  /// shape counts as 1). This is how a model's own shapes, measured by `llmcap calibrate
  /// --model`, replace the fit of all shapes (docs/model.md, "Calibration").
  std::map<MatmulShapeKey, std::vector<ShapeRatio>> linear_shapes;
  /// Measured attention layouts, ascending by context tokens: the attention node of a model
  /// with this layout (per device) has its fitted time multiplied by the ratio at its mean
  /// context per attention call (query-key pairs / (decode sequences + prefill tokens)),
  /// interpolated linearly between measured contexts and held at the end ratios outside them.
  /// Two layouts with the same KV heads x head_dim and query heads (8 x 64 and 4 x 128 KV
  /// heads under 32 query heads) share a key.
  std::map<AttentionShapeKey, std::vector<ShapeRatio>> attention_shapes;
  /// The same for attention calls spread over the threads, one single-threaded call per thread
  /// at once (profile samples "attention_spread"): the ratio of such a call to the fit's time
  /// of one call. When the layout has one, a decode of at least `threads` sequences and the
  /// attention of a prefill cost ceil(calls / threads) calls of the mean context at this ratio
  /// (docs/model.md, "Using a profile").
  std::map<AttentionShapeKey, std::vector<ShapeRatio>> attention_spread_shapes;
  /// Attention, by KV format name ("f32", "bf16"); overhead_s is per sequence (one call each).
  std::map<std::string, CalibratedRates> attention;
  /// Streaming rate of norms, embedding and other element-wise traffic (measured read
  /// bandwidth); 0: the datasheet bandwidth x memory_bandwidth_fraction.
  double stream_bytes_per_s = 0;
  /// Threads of the replica the rates describe (the profile's fitted thread count, or the
  /// transfer target's cores x share). Calibrated attention costs prefill as the reference
  /// decoder runs the measured kernel: one decode-attention call per new token reading its
  /// whole prefix, this many calls at once, one thread each; and so a decode of at least this
  /// many sequences, one call per sequence (docs/model.md, "Using a profile").
  double threads = 1;
  /// Bytes per activation element of the measured kernels: the reference kernels read and
  /// write f32 activations (4), and the calibration counts their bytes so (`llmcap
  /// calibrate`: weights + 4 x batch x (rows + cols) per product). The predictor counts
  /// activation traffic at this size when it applies these rates, so that a fitted rate
  /// meets the bytes it was fitted to; the datasheet roofline keeps bf16 (2).
  double activation_bytes = 4;
  /// The MLP's activation function (SwiGLU, or GELU) on one thread, seconds per element of
  /// the intermediate (the calibration's `swiglu` sample from memory, else its largest in
  /// cache: rows of 14,336). The calibrated MLP node adds max(tokens x intermediate x this /
  /// threads, its bytes (gate and up read, the product written, f32) at stream_bytes_per_s):
  /// the reference decoder runs it between the two products, rows split over the threads.
  /// 0: not priced.
  double activation_s_per_element = 0;
  std::string source;  ///< one line: which profile, measured or transferred (for reports)
};

/// Efficiency factors of the uncalibrated roofline, per hardware kind. The one place where
/// they are stated; docs/model.md gives their sources. A calibration profile adds measured
/// absolute rates (`calibrated`); without them the predictor is the datasheet roofline.
struct Efficiency {
  double memory_bandwidth_fraction = 0;  ///< achieved / peak memory bandwidth (streaming reads)
  double compute_fraction = 0;           ///< achieved / peak FLOP/s on large matrix products
  double link_bandwidth_fraction = 0;    ///< achieved / peak all-reduce link bandwidth
  double all_reduce_latency_s = 0;       ///< fixed cost per all-reduce
  double step_overhead_s = 0;            ///< fixed cost per engine step (scheduling, launch)
  /// Fixed cost of each kernel a step runs (launch, ramp-up and tail of a GPU kernel), added
  /// per kernel to the step (RooflinePredictor); 0 in default_efficiency, set by an engine
  /// profile (model/engine_profile.h).
  double kernel_overhead_s = 0;
  /// Achieved / peak FLOP/s of the products of a decode-only step (few rows per product:
  /// GEMV-like kernels an engine may run on another path than its prefill GEMMs); 0: the same
  /// as compute_fraction. 0 in default_efficiency, set by an engine profile.
  double decode_compute_fraction = 0;
  /// GPU memory (or CPU instance RAM) that the engine may use for weights + KV cache
  /// (vLLM's gpu_memory_utilization, default 0.9).
  double usable_memory_fraction = 0;
  /// Measured rates (CPUs only; GPUs keep the datasheet defaults). Unset: pure roofline.
  std::optional<CalibratedEfficiency> calibrated;
};

/// The defaults for a hardware kind (see docs/model.md for sources).
Efficiency default_efficiency(DeviceKind kind);

}  // namespace llmcap::model
