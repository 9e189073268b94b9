// Roofline step-time predictor (the deployment of a model on an instance is model/deployment.h,
// included here so that its users keep one include).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/deployment.h"
#include "model/efficiency.h"
#include "model/formats.h"
#include "model/hardware.h"
#include "model/model_spec.h"
#include "model/step_time.h"

namespace llmcap::model {

/// The matrix-product kernel calls of one decode step of `model` on one of `tp` devices, each
/// shape once, in layer order then the LM head: rows = output features x cols = input
/// features per call, a matrix that reads the same input as the previous one fused into its
/// call (q, k, v: one call of (n_q + 2 n_kv) x head_dim rows; gate and up: one of 2 x
/// intermediate rows), column-parallel matrices split by rows, row-parallel ones by columns.
/// Matrices whose split by tp is not whole are left out. These are the shapes a calibration
/// measures for the model (`llmcap calibrate --model`) and that CalibratedEfficiency::
/// linear_shapes is looked up by (`format` left empty). Throws InputError for tp < 1.
std::vector<MatmulShapeKey> linear_call_shapes(const ModelSpec& model, int tp = 1);

/// Load-imbalance factor of routed experts: a mixture-of-experts layer's expert FLOPs are
/// scaled by it (the busiest expert's tokens over the mean). 1.0 is the uniform-routing
/// assumption, the same one that gives the expected distinct experts of a step,
/// E x (1 - (1 - k/E)^T); the models are trained to route evenly (DeepSeek-V3's
/// auxiliary-loss-free balancing, DeepSeek-AI 2024, arXiv 2412.19437, sec. 2.1.2; the
/// Switch Transformer's auxiliary loss, Fedus et al. 2021, arXiv 2101.03961, sec. 2.2).
inline constexpr double kExpertLoadImbalance = 1.0;

/// Time of one operator node of the per-layer graph for one batch.
struct OpTime {
  std::string op;  ///< "input_norm", "qkv_proj", "attention", "out_proj", ...
  /// Layers whose step runs this operator at this cost (the model's layers for a dense model;
  /// one kind's layers for a described one, model/op_graph.h layer_kinds; 1 for "lm_head").
  double num_layers = 1;
  double flops = 0;   ///< per device, per layer
  double bytes = 0;   ///< memory bytes moved per device, per layer
  double time_s = 0;  ///< max(bytes / eff. bandwidth, flops / eff. compute) (+ link)
  bool memory_bound = false;
};

/// Roofline step time (Williams, Waterman, Patterson, "Roofline", CACM 2009): each operator costs
/// max(bytes / (peak_bw x bw_fraction), flops / (peak_flops x compute_fraction)); all-reduce nodes
/// cost latency + bytes / link; a layer's time is the longest path through the operator graph
/// (model/op_graph.h); the step is num_layers x layer + embedding/LM head + step_overhead_s +
/// kernel_overhead_s x the step's kernels (per layer: one per norm and attention node, one per
/// fused group of matrices of a linear node, one for the MLP's activation function; then the
/// embedding, the final norm and the LM head); an empty batch takes 0 s. A step without prefill
/// tokens prices its compute at decode_compute_fraction when the efficiency sets one.
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
/// A described model (ModelSpec::description: mixture-of-experts, MLA, sliding-window layers;
/// docs/model.md, "Mixture of experts, MLA and sliding windows") is priced per layer kind
/// (op_graph.h, layer_kinds), each kind's layer time x its layers:
///  - "experts" (a MoE layer's routed experts): weight bytes = one expert's / tp x the expected
///    distinct experts of T tokens under uniform top-k routing, E x (1 - (1 - k/E)^T); flops
///    and activations as a linear node x k per token (x kExpertLoadImbalance); "router"
///    (replicated) and "shared_experts" as linear nodes.
///  - MLA attention: bytes per cached token = (kv_lora_rank + qk_rope_head_dim) x kv element
///    bytes on every device; flops per pair = 2 x heads/tp x (2 kv_lora_rank + qk_rope_head_dim)
///    (absorbed form); per token 2 x heads/tp x (2 kv_lora_rank + qk_rope_head_dim) bytes.
///  - sliding-window (and chunked) attention of window w: decode context min(context sum,
///    sequences x w), prefill pairs min(pairs, tokens x w), prefill cache min(cached, chunks x w).
/// breakdown() lists every kind's operators, OpTime::num_layers saying how many layers each
/// stands for.
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
  /// A dense model's runs price the operators that read no KV, and the LM head, once per run
  /// (at start()); a described model's steps are priced each alone.
  std::unique_ptr<DecodeRunPricer> decode_run_pricer() const override;
  /// kRoofline; kCalibrated when built with `efficiency.calibrated` set (the calibrated
  /// predictor built the older way, as cli/ still does; model/calibrated_predictor.h is its
  /// own class).
  PredictorKind kind() const override;
  /// Per-operator times of one layer, in graph order, plus a final "lm_head" entry.
  std::vector<OpTime> breakdown(const BatchShape& batch) const;

 private:
  struct Impl;
  class RunPricer;
  std::shared_ptr<const Impl> impl_;
  PredictorKind kind_ = PredictorKind::kRoofline;
};

}  // namespace llmcap::model
