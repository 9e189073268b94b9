// Internal to the roofline (model/roofline.cpp): what one operator costs as affine functions of
// the batch, and the functions that price a linear, attention or routed-experts node. Not a
// public interface; roofline.h documents the formulas.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "model/efficiency.h"
#include "model/model_description.h"
#include "model/op_graph.h"
#include "model/roofline_calls.h"

namespace llmcap::model::roofline_detail {

/// Cost of one operator as affine functions of the batch (see roofline.h for the formulas):
///   flops = flops_per_token x T + flops_per_pair x (decode context + prefill pairs)
///   bytes = fixed_bytes + bytes_per_token x T
///           + bytes_per_kv_token x (decode context + prefill cached + prefill tokens)
/// For all-reduce nodes, bytes are link bytes.
struct OpCost {
  double flops_per_token = 0;
  double flops_per_pair = 0;
  double fixed_bytes = 0;
  double bytes_per_token = 0;
  double bytes_per_kv_token = 0;
  double seconds_per_flop = 0;  ///< 1 / (peak x compute_fraction)
  /// 1 / peak: the floor of a calibrated time (no kernel runs faster than the peak; the
  /// roofline's compute_fraction is an efficiency, and a calibration measures it instead).
  double floor_s_per_flop = 0;
  bool all_reduce = false;
  bool per_sequence = false;  ///< one kernel call per sequence (attention)
  /// Expert parallelism: the node costs the whole step's tokens (the routed experts of a
  /// device serve every device's tokens); every other node a device's 1/ep share of them.
  bool global_tokens = false;
  // Calibrated rates (Efficiency::calibrated); used when `calibrated` is set, with
  // floor_s_per_flop above as a floor.
  bool calibrated = false;
  double cal_overhead_s = 0;  ///< per call x calls
  double cal_s_per_byte = 0;  ///< 0: no bytes term
  double cal_s_per_flop = 0;  ///< 0: no flops term
  /// Per measured batch (CalibratedRates::by_batch): batch, overhead x calls, seconds per byte.
  struct BatchCost {
    double batch, overhead_s, s_per_byte;
  };
  std::vector<BatchCost> cal_by_batch;
  /// Calibrated MLP activation (CalibratedEfficiency::activation_s_per_element): per token,
  /// seconds on the replica's threads and bytes streamed; the larger is added.
  double act_s_per_token = 0;
  double act_bytes_per_token = 0;
  /// Measured shapes relative to the fit: a linear node's kernel calls (CalibratedEfficiency::
  /// linear_shapes, merged over the calls, by tokens) or the attention layout
  /// (attention_shapes, by mean context per call); empty: the fit alone.
  std::vector<ShapeRatio> shape_ratio;
  /// Attention: the layout's calls spread over the threads, one per thread at once
  /// (CalibratedEfficiency::attention_spread_shapes); empty: none measured.
  std::vector<ShapeRatio> spread_ratio;
};

/// The routed-expert terms of a mixture-of-experts "experts" node (apart from OpCost, which the
/// dense models' steps read): bytes += expert_bytes x the expected distinct experts
/// num_experts x (1 - exp(T x log_expert_miss)), log_expert_miss = log(1 - k / num_experts).
struct ExpertCost {
  double expert_bytes = 0;
  double num_experts = 0;  ///< 0: not an experts node
  double log_expert_miss = 0;
  double experts_per_token = 0;
};

/// `table` at `tokens`: linear between measured batches, the end ratios outside them; 1 for
/// an empty table.
double ratio_at(const std::vector<ShapeRatio>& table, double tokens);

/// The ratio table of a node made of `calls`: at every batch measured for any of them, the
/// calls' ratios weighted by weight bytes (a call without a measured shape counts as 1).
/// Empty when none of the calls was measured.
std::vector<ShapeRatio> merged_ratios(
    const std::map<MatmulShapeKey, std::vector<ShapeRatio>>& shapes,
    const std::vector<CallShape>& calls);

/// 1 / rate, or 0 for a rate of 0 (term dropped).
inline double inverse_or_zero(double rate) { return rate > 0 ? 1.0 / rate : 0.0; }

/// Sets the calibrated terms of `c` from `r`, `calls` kernel calls per use.
void apply_rates(OpCost& c, const CalibratedRates& r, double calls);

/// Cost of a linear node on one of `tp_degree` devices (see roofline.h): 2 FLOPs per weight per
/// token, its weights (and bf16 biases) once per step, its activations at `act` bytes per
/// element; with calibrated `rates` (nullptr: none), one kernel call per fused group, the
/// measured shapes' ratios and the MLP's activation function.
void price_linear(OpCost& c, ExpertCost& x, const OpNode& node, const WeightPricing& wp,
                  int tp_degree, double act, double linear_s_per_flop,
                  double linear_peak_s_per_flop, const CalibratedRates* linear_rates,
                  const Efficiency& e);

double peak_for(const std::map<std::string, double>& peaks, std::string_view dtype);

/// Cost of an attention node of `a` on one of `tp` devices (see roofline.h): K and V of
/// ceil(kv_heads / tp) heads per cached token, or MLA's latent (kv_lora_rank +
/// qk_rope_head_dim, on every device: it has no heads to split), scored in the absorbed form
/// (DeepSeek-V2 paper, Liu et al. 2024, sec. 2.1.2): per head and pair, a dot product over the
/// latent and rope dims and a weighted sum of kv_lora_rank latent values; for prefill too,
/// which overstates its compute (vLLM prefills MLA unabsorbed).
void price_attention(OpCost& c, const AttentionSpec& a, KvFormat kf, int tp_degree, double act,
                     const CalibratedRates* attention_rates, const Efficiency& e);

/// An expert-parallel device's share of a routed-experts node priced whole (tp 1): it holds
/// E / ep experts and runs k / ep of each token's expert products over all the replica's tokens
/// (`c` then costs BatchTerms of the whole step; OpCost::global_tokens).
void spread_experts(OpCost& c, ExpertCost& x, int ep);

}  // namespace llmcap::model::roofline_detail
