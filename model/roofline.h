// Roofline step-time predictor and the deployment of a model on an instance.
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/formats.h"
#include "model/hardware.h"
#include "model/model_spec.h"
#include "model/step_time.h"

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

/// The matrix-product kernel calls of one decode step of `model` on one of `tp` devices, each
/// shape once, in layer order then the LM head: rows = output features x cols = input
/// features per call, a matrix that reads the same input as the previous one fused into its
/// call (q, k, v: one call of (n_q + 2 n_kv) x head_dim rows; gate and up: one of 2 x
/// intermediate rows), column-parallel matrices split by rows, row-parallel ones by columns.
/// Matrices whose split by tp is not whole are left out. These are the shapes a calibration
/// measures for the model (`llmcap calibrate --model`) and that CalibratedEfficiency::
/// linear_shapes is looked up by (`format` left empty). Throws InputError for tp < 1.
std::vector<MatmulShapeKey> linear_call_shapes(const ModelSpec& model, int tp = 1);

/// Efficiency factors of the uncalibrated roofline, per hardware kind. The one place where
/// they are stated; docs/model.md gives their sources. A calibration profile adds measured
/// absolute rates (`calibrated`); without them the predictor is the datasheet roofline.
struct Efficiency {
  double memory_bandwidth_fraction = 0;  ///< achieved / peak memory bandwidth (streaming reads)
  double compute_fraction = 0;           ///< achieved / peak FLOP/s on large matrix products
  double link_bandwidth_fraction = 0;    ///< achieved / peak all-reduce link bandwidth
  double all_reduce_latency_s = 0;       ///< fixed cost per all-reduce
  double step_overhead_s = 0;            ///< fixed cost per engine step (scheduling, launch)
  /// GPU memory (or CPU instance RAM) that the engine may use for weights + KV cache
  /// (vLLM's gpu_memory_utilization, default 0.9).
  double usable_memory_fraction = 0;
  /// Measured rates (CPUs only; GPUs keep the datasheet defaults). Unset: pure roofline.
  std::optional<CalibratedEfficiency> calibrated;
};

/// The defaults for a hardware kind (see docs/model.md for sources).
Efficiency default_efficiency(DeviceKind kind);

/// Memory kept free for activations, CUDA graphs / workspace and fragmentation: per GPU of a
/// replica, and per CPU replica (vLLM profiles the activation peak at start-up; ~1 GiB covers
/// the 7-70B models at the default max_num_batched_tokens).
inline constexpr int64_t kActivationReserveBytes = int64_t{1} << 30;
/// make_deployment requires KV room for one sequence of min(max_position_embeddings, this)
/// tokens.
inline constexpr int64_t kMaxFitSequenceTokens = 32768;

/// How one model replica sits on an instance, with the resources each replica gets.
struct Deployment {
  DeviceKind kind = DeviceKind::kCpu;
  int tp_degree = 1;     ///< devices (GPUs or CPU sockets) per replica
  int num_replicas = 1;  ///< replicas per instance
  /// Per device of the replica: peak memory bandwidth (a CPU slice gets its share, see
  /// make_deployment) and peak FLOP/s by compute dtype (a CPU slice gets its share of cores).
  double memory_bandwidth_bytes_per_s = 0;
  std::map<std::string, double> peak_flops_per_s;
  double link_bandwidth_bytes_per_s = 0;  ///< per device, per direction (0 when tp == 1)
  int64_t memory_bytes = 0;               ///< memory of one replica (all its devices)
  int64_t weight_bytes = 0;               ///< weights of one replica
  int64_t kv_cache_bytes = 0;             ///< usable KV cache of one replica
  std::string rule;  ///< one line stating how the resources were derived (for reports)
};

/// Places `model` on `instance`.
/// Memory of a replica: usable = round(usable_memory_fraction x memory); kv_cache_bytes =
/// usable - weight_bytes - activation reserve (kActivationReserveBytes per GPU, or per CPU
/// replica); feasible when kv_cache_bytes holds one sequence of
/// min(max_position_embeddings, kMaxFitSequenceTokens) tokens.
/// GPUs: tp_degree = the smallest power of two dividing num_gpus whose memory holds the
/// weights plus room for at least one max-length sequence of KV cache; num_replicas =
/// num_gpus / tp_degree.
/// CPUs: an instance with at least one socket's worth of vCPUs runs one replica per whole
/// socket (tp 1, each with the socket's bandwidth and compute); a smaller slice runs one
/// replica with the fraction vcpus / (cores x threads_per_core) of the socket's bandwidth and
/// compute. A socket's vCPUs are the instance's vcpus_per_socket when given (families with SMT
/// off or cores held back by the host), else cores x threads_per_core. Instance memory is
/// split evenly between replicas.
/// Throws InfeasibleError("weights need N bytes, instance has M bytes usable ...") when the
/// weights do not fit, and InputError when the instance names hardware not in `catalog`.
Deployment make_deployment(const InstanceType& instance, const Catalog& catalog,
                           const ModelSpec& model, WeightFormat weight_format, KvFormat kv_format,
                           const Efficiency& efficiency);

/// Time of one operator node of the per-layer graph for one batch.
struct OpTime {
  std::string op;     ///< "input_norm", "qkv_proj", "attention", "out_proj", ...
  double flops = 0;   ///< per device, per layer
  double bytes = 0;   ///< memory bytes moved per device, per layer
  double time_s = 0;  ///< max(bytes / eff. bandwidth, flops / eff. compute) (+ link)
  bool memory_bound = false;
};

/// Roofline step time (Williams, Waterman, Patterson, "Roofline", CACM 2009): each operator costs
/// max(bytes / (peak_bw x bw_fraction), flops / (peak_flops x compute_fraction)); all-reduce nodes
/// cost latency + bytes / link; a layer's time is the longest path through the operator graph
/// (model/op_graph.h); the step is num_layers x layer + embedding/LM head + step_overhead_s; an
/// empty batch takes 0 s.
///
/// Per-operator cost on one device of a tp-degree replica, T = num_new_tokens (bf16 activations,
/// 2 bytes per element):
///  - linear (qkv_proj, out_proj, mlp; W of shape [out, in]): flops = 2 T out in / tp (2 FLOPs
///    per weight per token, Kaplan et al. 2020 "Scaling Laws for Neural Language Models");
///    bytes = weight bytes (matrix_weight_bytes + bf16 biases) / tp + activations: each matrix
///    writes T x out/tp (column-parallel) or T x out (row-parallel, partial sums) elements and
///    reads T x in (column-parallel) or T x in/tp (row-parallel) elements, an input shared
///    with the previous matrix of the node (fused QKV, fused gate/up) being read once; x 2 bytes.
///    Compute dtype: compute_dtype(weight_format, on a GPU), falling back to "bf16" then "f32" if
///    the device lacks it.
///  - attention: flops = 4 x (num_decode_context_tokens + num_prefill_attention_pairs) x
///    num_heads x head_dim / tp (QK^T and PV, 2 FLOPs per multiply-add each);
///    bytes = (num_decode_context_tokens + num_prefill_cached_tokens + num_prefill_tokens) x
///    2 x ceil(kv_heads / tp) x head_dim x kv element bytes (read the cached K/V, write the new)
///    + T x 2 x (num_heads x head_dim / tp) x 2 (read Q, write the output). bf16 peak.
///  - norm: bytes = 2 x T x hidden x 2 (read and write), flops = 4 x T x hidden.
///  - all-reduce (ring, Patarasuk & Yuan 2009): link bytes = 2 (tp-1)/tp x T x hidden x 2;
///    time = all_reduce_latency_s + bytes / (link bandwidth x link_bandwidth_fraction).
///  - per step ("lm_head" entry): LM head over L = num_decode_seqs + num_prefill_seqs_completing
///    tokens, flops = 2 L vocab hidden / tp, bytes = LM-head weight bytes / tp (when L > 0) +
///    L x (hidden + vocab/tp) x 2; plus embedding lookup T x hidden x 2 bytes and the final norm
///    (as a norm node).
///
/// With efficiency.calibrated set (docs/model.md, "Calibration"), an operator whose weight
/// format (linear nodes, LM head) or KV format (attention) has calibrated rates r costs
///   max(r.overhead_s x calls + bytes / r.bytes_per_s + flops / r.flops_per_s,
///       flops / (peak x compute_fraction))
/// with calls = the node's fused groups of weight matrices (linear: a matrix sharing the previous
/// one's input, k and v after q or up after gate, runs in the same call), the sequences of the
/// batch (attention runs once per sequence over its own KV cache), 1 (LM head) and a rate of 0
/// dropping its term; the datasheet compute term stays as a floor for large prefills, beyond
/// the measured batches. Norms, embedding and the final norm stream at stream_bytes_per_s when
/// it is positive. Operators without calibrated rates keep the roofline above.
class RooflinePredictor final : public StepTimePredictor {
 public:
  /// Precomputes every per-operator coefficient, so step_time_s() allocates nothing (~0.1 us).
  /// Throws InputError when the deployment lacks a positive memory bandwidth, a usable peak
  /// FLOP/s (the linear dtype, "bf16" or "f32"), or a link bandwidth for tp > 1.
  RooflinePredictor(const ModelSpec& model, WeightFormat weight_format, KvFormat kv_format,
                    const Deployment& deployment, const Efficiency& efficiency);
  double step_time_s(const BatchShape& batch) const override;
  /// Per-operator times of one layer, in graph order, plus a final "lm_head" entry.
  std::vector<OpTime> breakdown(const BatchShape& batch) const;

 private:
  struct Impl;
  std::shared_ptr<const Impl> impl_;
};

}  // namespace llmcap::model
