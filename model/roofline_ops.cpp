#include "model/roofline_ops.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "model/input_error.h"
#include "model/roofline.h"

namespace llmcap::model::roofline_detail {

double ratio_at(const std::vector<ShapeRatio>& table, double tokens) {
  if (table.empty()) return 1.0;
  if (tokens <= table.front().tokens) return table.front().ratio;
  if (tokens >= table.back().tokens) return table.back().ratio;
  std::size_t hi = 1;
  while (table[hi].tokens < tokens) ++hi;
  const ShapeRatio& a = table[hi - 1];
  const ShapeRatio& b = table[hi];
  const double w = (tokens - a.tokens) / (b.tokens - a.tokens);
  return (1 - w) * a.ratio + w * b.ratio;
}

std::vector<ShapeRatio> merged_ratios(
    const std::map<MatmulShapeKey, std::vector<ShapeRatio>>& shapes,
    const std::vector<CallShape>& calls) {
  std::vector<double> batches;
  std::vector<const std::vector<ShapeRatio>*> tables;
  double total = 0;
  for (const CallShape& call : calls) {
    const auto it = shapes.find(call.key);
    tables.push_back(it == shapes.end() ? nullptr : &it->second);
    if (it != shapes.end()) {
      for (const ShapeRatio& r : it->second) batches.push_back(r.tokens);
    }
    total += call.weight_bytes;
  }
  std::vector<ShapeRatio> out;
  if (batches.empty() || !(total > 0)) return out;
  std::sort(batches.begin(), batches.end());
  batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  for (const double b : batches) {
    double sum = 0;
    for (std::size_t i = 0; i < calls.size(); ++i) {
      sum += calls[i].weight_bytes * (tables[i] != nullptr ? ratio_at(*tables[i], b) : 1.0);
    }
    out.push_back({b, sum / total});
  }
  return out;
}

/// Sets the calibrated terms of `c` from `r`, `calls` kernel calls per use.
void apply_rates(OpCost& c, const CalibratedRates& r, double calls) {
  c.calibrated = true;
  c.cal_overhead_s = r.overhead_s * calls;
  c.cal_s_per_byte = inverse_or_zero(r.bytes_per_s);
  c.cal_s_per_flop = inverse_or_zero(r.flops_per_s);
  c.cal_by_batch.clear();
  for (const BatchRates& b : r.by_batch) {
    c.cal_by_batch.push_back({b.batch, b.overhead_s * calls, inverse_or_zero(b.bytes_per_s)});
  }
}

void price_linear(OpCost& c, ExpertCost& x, const OpNode& node, const WeightPricing& wp,
                  int tp_degree, double act, double linear_s_per_flop,
                  double linear_peak_s_per_flop, const CalibratedRates* linear_rates,
                  const Efficiency& e) {
  for (const LinearMatrix& mat : node.matrices) {
    const double tp = mat.replicated ? 1.0 : tp_degree;
    const double out = static_cast<double>(mat.out_features);
    const double in = static_cast<double>(mat.in_features);
    c.flops_per_token += 2 * out * in / tp;
    double weights = wp.bytes(node, mat);
    if (mat.has_bias) weights += out * act;
    c.fixed_bytes += weights / tp;
    const double in_read = mat.shares_input_with_previous ? 0.0 : (mat.row_parallel ? in / tp : in);
    c.bytes_per_token += (in_read + (mat.row_parallel ? out : out / tp)) * act;
  }
  const double k = static_cast<double>(node.num_experts_per_token);
  if (node.num_experts > 0) {
    // One routed expert's weights per distinct expert the step's tokens reach (cost());
    // FLOPs and activations for k experts per token, the busiest expert's share scaled by
    // kExpertLoadImbalance.
    const double e_count = static_cast<double>(node.num_experts);
    x.expert_bytes = c.fixed_bytes;
    c.fixed_bytes = 0;
    x.num_experts = e_count;
    x.log_expert_miss = std::log1p(-k / e_count);
    x.experts_per_token = k;
    c.flops_per_token *= k * kExpertLoadImbalance;
    c.bytes_per_token *= k;
  }
  c.seconds_per_flop = linear_s_per_flop;
  c.floor_s_per_flop = linear_peak_s_per_flop;
  if (linear_rates != nullptr) {
    // One kernel call per fused group: a matrix sharing the previous one's input
    // (k and v after q, up after gate) runs in the same call.
    const std::vector<CallShape> calls = call_shapes(node, wp, tp_degree);
    apply_rates(c, *linear_rates, std::max<double>(1.0, static_cast<double>(calls.size())));
    c.shape_ratio = merged_ratios(e.calibrated->linear_shapes, calls);
    // The MLP's activation function runs between its products (with the down
    // projection's node when the MLP is split).
    const bool has_down =
        std::any_of(node.matrices.begin(), node.matrices.end(),
                    [](const LinearMatrix& mat) { return mat.name == "down_proj"; });
    if (has_down && e.calibrated->activation_s_per_element > 0) {
      // The down projection's input width is the MLP's (one expert's) inner width.
      double inter = 0;
      bool gated = false;
      for (const LinearMatrix& mat : node.matrices) {
        if (mat.name == "down_proj") inter = static_cast<double>(mat.in_features) / tp_degree;
        gated = gated || mat.name == "gate_proj";
      }
      const double per_token = node.num_experts > 0 ? k : 1.0;
      c.act_s_per_token = per_token * inter * e.calibrated->activation_s_per_element /
                          std::max(1.0, e.calibrated->threads);
      c.act_bytes_per_token = per_token * (gated ? 3.0 : 2.0) * inter * act;
    }
  }
}

double peak_for(const std::map<std::string, double>& peaks, std::string_view dtype) {
  for (const std::string_view d : {dtype, std::string_view("bf16"), std::string_view("f32")}) {
    if (const auto it = peaks.find(std::string(d)); it != peaks.end() && it->second > 0) {
      return it->second;
    }
  }
  std::string known;
  for (const auto& [k, v] : peaks) known += (known.empty() ? "" : ", ") + k;
  throw InputError("roofline: deployment has no peak_flops_per_s for \"" + std::string(dtype) +
                   "\", \"bf16\" or \"f32\" (has: " + (known.empty() ? "none" : known) + ")");
}

void price_attention(OpCost& c, const AttentionSpec& a, KvFormat kf, int tp_degree, double act,
                     const CalibratedRates* attention_rates, const Efficiency& e) {
  const double tp = tp_degree;
  c.per_sequence = true;
  if (a.kind == AttentionKind::kMla) {
    const double heads = static_cast<double>(a.num_heads) / tp;
    const double latent = static_cast<double>(a.kv_lora_rank + a.qk_rope_head_dim);
    const double values = static_cast<double>(a.kv_lora_rank);
    c.flops_per_pair = 2 * heads * (latent + values);
    c.bytes_per_kv_token = latent * bytes_per_element(kf);
    c.bytes_per_token = heads * (latent + values) * act;  // read the query, write the output
    if (attention_rates != nullptr) apply_rates(c, *attention_rates, 1);
    return;
  }
  const double heads_x_dim = static_cast<double>(a.num_heads * a.head_dim);
  const double kv_heads_per_device =
      static_cast<double>((a.num_kv_heads + tp_degree - 1) / tp_degree);
  c.flops_per_pair = 4 * heads_x_dim / tp;
  c.bytes_per_kv_token =
      2 * kv_heads_per_device * static_cast<double>(a.head_dim) * bytes_per_element(kf);
  c.bytes_per_token = 2 * (heads_x_dim / tp) * act;
  if (attention_rates != nullptr) {
    apply_rates(c, *attention_rates, 1);
    const AttentionShapeKey key{std::string(to_string(kf)),
                                static_cast<int64_t>(kv_heads_per_device) * a.head_dim,
                                a.num_heads / tp_degree};
    if (a.num_heads % tp_degree == 0) {
      const auto& layouts = e.calibrated->attention_shapes;
      if (const auto it = layouts.find(key); it != layouts.end()) c.shape_ratio = it->second;
      const auto& spread = e.calibrated->attention_spread_shapes;
      if (const auto it = spread.find(key); it != spread.end()) c.spread_ratio = it->second;
    }
  }
}

void spread_experts(OpCost& c, ExpertCost& x, int ep) {
  const double n = ep;
  x.num_experts /= n;
  x.experts_per_token /= n;
  c.flops_per_token /= n;
  c.bytes_per_token /= n;
  c.act_s_per_token /= n;
  c.act_bytes_per_token /= n;
  c.global_tokens = true;
}

}  // namespace llmcap::model::roofline_detail
