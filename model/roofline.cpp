#include "model/roofline.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <deque>
#include <string>

#include "base/text.h"
#include "model/input_error.h"
#include "model/op_graph.h"
#include "model/roofline_calls.h"
#include "model/roofline_ops.h"
#include "model/weight_encoding.h"

namespace llmcap::model {

namespace {

using roofline_detail::apply_rates;
using roofline_detail::ExpertCost;
using roofline_detail::inverse_or_zero;
using roofline_detail::merged_ratios;
using roofline_detail::OpCost;
using roofline_detail::peak_for;
using roofline_detail::price_attention;
using roofline_detail::price_linear;
using roofline_detail::ratio_at;
using roofline_detail::spread_experts;

/// The features of a batch that the costs depend on.
struct BatchTerms {
  double tokens;          ///< T
  double pairs;           ///< decode context + prefill attention pairs
  double kv_tokens;       ///< decode context + prefill cached + prefill tokens
  double decode_seqs;     ///< attention: one call each
  double prefill_tokens;  ///< attention (calibrated): one call each
  double decode_pairs;    ///< decode context + draft pairs (the decode part of pairs)
  /// Roofline compute times x this: 1, or decode_flop_scale for a step without prefill tokens.
  double flop_scale;
  double draft_tokens = 0;  ///< speculative draft tokens verified (part of tokens, kv_tokens)
  double draft_pairs = 0;   ///< their attention pairs (part of decode_pairs)
};

/// The layers of one kind (model/op_graph.h, layer_kinds): their graph, operator costs and
/// attention window.
struct LayerGroup {
  LayerGroup(const ModelSpec& m, int tp)
      : graph(m, tp), num_layers(static_cast<double>(m.num_layers)) {}
  LayerGroup(const ModelDescription& d, const LayerKind& k, int tp, int ep)
      : graph(d, k.layer, tp, {.expert_parallel_degree = ep}),
        num_layers(static_cast<double>(k.num_layers)) {
    const AttentionSpec& a = k.layer.attention;
    if (a.kind == AttentionKind::kSlidingWindow) {
      window_tokens = static_cast<double>(a.window_tokens);
    }
  }

  LayerOpGraph graph;
  std::array<OpCost, LayerOpGraph::kMaxOps> ops{};
  std::array<ExpertCost, LayerOpGraph::kMaxOps> experts{};  ///< of the "experts" node, if any
  double num_layers = 0;
  double window_tokens = 0;  ///< attention sees at most this many tokens; 0: the whole context
};

/// The layer groups of `m` on one of `tp` devices: one for a dense ModelSpec, one per
/// layer_kinds entry for a described one. A deque: groups are built in place, never copied.
std::deque<LayerGroup> layer_groups(const ModelSpec& m, int tp,
                                    std::vector<AttentionSpec>* attention, int ep = 1) {
  std::deque<LayerGroup> out;
  if (!m.description) {
    out.emplace_back(m, tp);
    attention->push_back({.num_heads = m.num_attention_heads,
                          .num_kv_heads = m.num_kv_heads,
                          .head_dim = m.head_dim});
    return out;
  }
  for (const LayerKind& k : layer_kinds(*m.description)) {
    out.emplace_back(*m.description, k, tp, ep);
    attention->push_back(k.layer.attention);
  }
  return out;
}

/// Kernels per step in the layers: per layer one per norm and attention node and one per fused
/// group of a linear node (plus the MLP's activation function between its products); the
/// embedding, the final norm and the LM head come on top; all-reduces carry their own latency.
/// A mixture-of-experts node counts as one call per fused group, as a fused MoE kernel runs
/// all its experts.
double kernels_in_layers(const std::deque<LayerGroup>& groups, const WeightPricing& wp, int tp) {
  double layer_kernels = 0;
  for (const LayerGroup& group : groups) {
    double kernels_per_layer = 0;
    for (std::size_t v = 0; v < group.graph.num_ops(); ++v) {
      const OpNode& node = group.graph.op(v);
      if (node.kind == OpKind::kAllReduce || node.kind == OpKind::kAllToAll) continue;
      if (node.kind != OpKind::kLinear) {
        kernels_per_layer += 1;
        continue;
      }
      kernels_per_layer += static_cast<double>(call_shapes(node, wp, tp).size());
      for (const LinearMatrix& mat : node.matrices) {
        if (mat.name == "down_proj") kernels_per_layer += 1;
      }
    }
    layer_kernels += group.num_layers * kernels_per_layer;
  }
  return layer_kernels;
}

}  // namespace

struct RooflinePredictor::Impl {
  /// Devices the routed experts are split over with data-parallel attention (1: none).
  int ep = 1;
  std::deque<LayerGroup> groups;
  /// The one group of a dense ModelSpec (step_time_s's fast path); nullptr for a described one.
  const LayerGroup* dense = nullptr;
  /// The dense group's operators whose cost reads the context (attention: pairs, KV tokens or
  /// one call per sequence); a decode run's pricer (RunPricer) prices the others once per run.
  std::vector<std::size_t> dense_context_ops;
  OpCost lm_head_fixed;              ///< LM-head part: applies when L > 0 (per-token terms in L)
  OpCost per_step_tokens;            ///< embedding + final norm, per new token
  double seconds_per_byte = 0;       ///< 1 / (bw x fraction)
  double seconds_per_link_byte = 0;  ///< 1 / (link bw x fraction), 0 when tp == 1
  double all_reduce_latency_s = 0;
  double step_overhead_s = 0;
  /// kernel_overhead_s x the kernels of one step (num_layers x per layer + embedding, final
  /// norm and LM head).
  double kernels_overhead_s = 0;
  /// Decode-only steps: compute times x this (compute_fraction / decode_compute_fraction; 1
  /// when the efficiency sets none).
  double decode_flop_scale = 1;
  /// Calibrated attention: calls spread over the threads one per row (prefill tokens, or
  /// decode sequences when there are at least this many) run this many at once, one thread
  /// each (CalibratedEfficiency::threads).
  double parallel_calls = 1;
  /// Calibrated element-wise traffic: seconds per byte at the measured read bandwidth (0: none).
  double stream_s_per_byte = 0;

  Impl(const ModelSpec& m, WeightFormat wf, KvFormat kf, const Deployment& d, const Efficiency& e) {
    if (!(d.memory_bandwidth_bytes_per_s > 0) || !(e.memory_bandwidth_fraction > 0) ||
        !(e.compute_fraction > 0)) {
      throw InputError(
          "roofline: expected positive memory bandwidth, bandwidth fraction and "
          "compute fraction, got " +
          std::to_string(d.memory_bandwidth_bytes_per_s) + ", " +
          std::to_string(e.memory_bandwidth_fraction) + ", " + std::to_string(e.compute_fraction));
    }
    // Expert parallelism (Deployment::expert_parallel): attention and the rest data-parallel
    // over the replica's devices, each with its 1/ep of the batch and whole weights; the routed
    // experts split whole over them (op_graph.h, LayerGraphOptions::expert_parallel_degree).
    ep = d.expert_parallel && m.description ? d.tp_degree : 1;
    const int shard = ep > 1 ? 1 : d.tp_degree;
    if (d.tp_degree > 1) {
      if (!(d.link_bandwidth_bytes_per_s > 0) || !(e.link_bandwidth_fraction > 0)) {
        throw InputError("roofline: tp=" + std::to_string(d.tp_degree) +
                         " needs a positive link bandwidth and link fraction, got " +
                         std::to_string(d.link_bandwidth_bytes_per_s) + " and " +
                         std::to_string(e.link_bandwidth_fraction));
      }
      seconds_per_link_byte = 1.0 / (d.link_bandwidth_bytes_per_s * e.link_bandwidth_fraction);
    }
    seconds_per_byte = 1.0 / (d.memory_bandwidth_bytes_per_s * e.memory_bandwidth_fraction);
    const bool gpu = d.kind == DeviceKind::kGpu;
    const WeightPricing wp = WeightPricing::of(m, wf);
    const double bf16_peak_s_per_flop = 1.0 / peak_for(d.peak_flops_per_s, "bf16");
    const double bf16_s_per_flop = bf16_peak_s_per_flop / e.compute_fraction;
    all_reduce_latency_s = e.all_reduce_latency_s;
    step_overhead_s = e.step_overhead_s;
    if (e.decode_compute_fraction > 0)
      decode_flop_scale = e.compute_fraction / e.decode_compute_fraction;
    std::vector<AttentionSpec> attention;
    groups = layer_groups(m, shard, &attention, ep);
    if (!m.description) dense = &groups.front();

    // Linear terms of a kernel class: its peak (datasheet) and calibrated rates, if any.
    struct LinearTerms {
      double s_per_flop = 0;
      double peak_s_per_flop = 0;
      const CalibratedRates* rates = nullptr;
    };
    const auto linear_terms = [&](WeightFormat kernel) {
      LinearTerms t;
      t.peak_s_per_flop = 1.0 / peak_for(d.peak_flops_per_s, compute_dtype(kernel, gpu));
      t.s_per_flop = t.peak_s_per_flop / e.compute_fraction;
      if (e.calibrated) {
        const auto& linear = e.calibrated->linear;
        if (const auto it = linear.find(std::string(to_string(kernel))); it != linear.end()) {
          t.rates = &it->second;
        }
      }
      return t;
    };
    // Calibrated rates, when the efficiency carries them.
    const CalibratedRates* attention_rates = nullptr;
    if (e.calibrated) {
      const CalibratedEfficiency& cal = *e.calibrated;
      if (const auto it = cal.attention.find(std::string(to_string(kf)));
          it != cal.attention.end()) {
        attention_rates = &it->second;
      }
      stream_s_per_byte = inverse_or_zero(cal.stream_bytes_per_s);
      parallel_calls = std::max(1.0, cal.threads);
    }
    const auto stream = [&](OpCost& c) {
      if (stream_s_per_byte > 0)
        apply_rates(c, CalibratedRates{0, 1 / stream_s_per_byte, 0, {}}, 1);
    };

    const double h = static_cast<double>(m.hidden_size);
    // Bytes per activation element: bf16 on the datasheet roofline, the measured kernels'
    // size (f32) with calibrated rates (CalibratedEfficiency::activation_bytes).
    const double act = e.calibrated ? e.calibrated->activation_bytes : 2.0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      LayerGroup& group = groups[g];
      for (std::size_t v = 0; v < group.graph.num_ops(); ++v) {
        const OpNode& node = group.graph.op(v);
        OpCost& c = group.ops[v];
        switch (node.kind) {
          case OpKind::kNorm:
            c.flops_per_token = 4 * h;
            c.bytes_per_token = 2 * h * act;
            c.seconds_per_flop = bf16_s_per_flop;
            c.floor_s_per_flop = bf16_peak_s_per_flop;
            stream(c);
            break;
          case OpKind::kLinear: {
            const LinearTerms t = linear_terms(wp.kernel(node));
            price_linear(c, group.experts[v], node, wp, shard, act, t.s_per_flop, t.peak_s_per_flop,
                         t.rates, e);
            if (ep > 1 && node.num_experts > 0) spread_experts(c, group.experts[v], ep);
            break;
          }
          case OpKind::kAttention:
            price_attention(c, attention[g], kf, shard, act, attention_rates, e);
            c.seconds_per_flop = bf16_s_per_flop;
            c.floor_s_per_flop = bf16_peak_s_per_flop;
            break;
          case OpKind::kAllReduce:
          case OpKind::kAllToAll:  // link bytes per token (op_graph.h)
            c.all_reduce = true;
            c.bytes_per_token = node.link_hidden_per_token * h * act;
            break;
        }
      }
    }
    // LM head: weights read once when any token needs logits; per-logit-token terms.
    const double vocab = static_cast<double>(m.vocab_size);
    const TensorEncoding head_encoding =
        encoding_for(wf, m.tie_word_embeddings ? TensorRole::kTiedEmbedding : TensorRole::kLmHead,
                     0, m.hidden_size, wp.quant);
    const LinearTerms head = linear_terms(head_encoding.kernel);
    lm_head_fixed.fixed_bytes =
        static_cast<double>(tensor_bytes(head_encoding, m.vocab_size, m.hidden_size)) / shard;
    lm_head_fixed.flops_per_token = 2 * vocab * h / shard;
    lm_head_fixed.bytes_per_token = (h + vocab / shard) * act;
    lm_head_fixed.seconds_per_flop = head.s_per_flop;
    lm_head_fixed.floor_s_per_flop = head.peak_s_per_flop;
    if (head.rates != nullptr) {
      apply_rates(lm_head_fixed, *head.rates, 1);
      // Column-parallel: each device holds vocab / tp rows.
      if (m.vocab_size % shard == 0) {
        const MatmulShapeKey key{std::string(to_string(head_encoding.kernel)), m.vocab_size / shard,
                                 m.hidden_size};
        lm_head_fixed.shape_ratio =
            merged_ratios(e.calibrated->linear_shapes, {CallShape{key, lm_head_fixed.fixed_bytes}});
      }
    }
    if (dense != nullptr) {
      for (std::size_t v = 0; v < dense->graph.num_ops(); ++v) {
        const OpCost& c = dense->ops[v];
        if (c.flops_per_pair != 0 || c.bytes_per_kv_token != 0 || c.per_sequence) {
          dense_context_ops.push_back(v);
        }
      }
    }
    const double layer_kernels = kernels_in_layers(groups, wp, shard);
    kernels_overhead_s = e.kernel_overhead_s * (layer_kernels + 3);
    // Embedding lookup (read T rows) and final norm (read + write, 4 FLOPs per element).
    per_step_tokens.bytes_per_token = h * act + 2 * h * act;
    per_step_tokens.flops_per_token = 4 * h;
    per_step_tokens.seconds_per_flop = bf16_s_per_flop;
    per_step_tokens.floor_s_per_flop = bf16_peak_s_per_flop;
    stream(per_step_tokens);
  }

  /// `t` for attention that sees at most `window` tokens (> 0): each decode sequence's context,
  /// each prefill chunk's cached prefix and each prefill token's pairs capped at the window,
  /// from the batch's sums (sum of min(context, w) <= min(sum, sequences x w): an upper bound
  /// when contexts differ, exact when all are below or all above the window).
  static BatchTerms windowed(const BatchTerms& t, const BatchShape& b, double window,
                             double share = 1) {
    BatchTerms w = t;
    const double prefill_pairs = t.pairs - t.decode_pairs;
    const double decode_kv = std::min(t.decode_pairs - t.draft_pairs, t.decode_seqs * window);
    w.draft_pairs = std::min(t.draft_pairs, t.draft_tokens * window);
    w.decode_pairs = decode_kv + w.draft_pairs;
    const double pairs = std::min(prefill_pairs, t.prefill_tokens * window);
    const double cached = std::min(static_cast<double>(b.num_prefill_cached_tokens) * share,
                                   static_cast<double>(b.num_prefill_seqs) * share * window);
    w.pairs = w.decode_pairs + pairs;
    w.kv_tokens = decode_kv + cached + t.prefill_tokens + t.draft_tokens;
    return w;
  }

  /// `t` on one of ep devices of an expert-parallel replica: its 1/ep of the sequences (the
  /// data-parallel ranks are assumed balanced).
  BatchTerms local(const BatchTerms& t) const {
    if (ep == 1) return t;
    const double s = 1.0 / ep;
    return {t.tokens * s,      t.pairs * s,          t.kv_tokens * s,
            t.decode_seqs * s, t.prefill_tokens * s, t.decode_pairs * s,
            t.flop_scale,      t.draft_tokens * s,   t.draft_pairs * s};
  }

  /// The draft tokens verified with the decodes are queries of their sequences' attention
  /// calls (KV read once per sequence, their own KV written) and new tokens everywhere else.
  BatchTerms terms(const BatchShape& b) const {
    const auto draft_pairs = static_cast<double>(b.num_decode_draft_attention_pairs);
    return {static_cast<double>(b.num_new_tokens()),
            static_cast<double>(b.num_decode_context_tokens + b.num_prefill_attention_pairs) +
                draft_pairs,
            static_cast<double>(b.num_decode_context_tokens + b.num_prefill_cached_tokens +
                                b.num_prefill_tokens + b.num_decode_draft_tokens),
            static_cast<double>(b.num_decode_seqs),
            static_cast<double>(b.num_prefill_tokens),
            static_cast<double>(b.num_decode_context_tokens) + draft_pairs,
            b.num_prefill_tokens > 0 ? 1.0 : decode_flop_scale,
            static_cast<double>(b.num_decode_draft_tokens),
            draft_pairs};
  }

  /// step_time_s of a described model (every layer kind x its layers); kept out of
  /// step_time_s so that the dense models' path stays as it was.
  [[gnu::noinline]] double described_step_s(const BatchShape& batch) const {
    const BatchTerms t = terms(batch);
    const BatchTerms t_local = local(t);
    std::array<double, LayerOpGraph::kMaxOps> times;
    OpTime scratch;
    double layers_s = 0;
    for (const LayerGroup& group : groups) {
      const BatchTerms tg = group.window_tokens > 0
                                ? windowed(t_local, batch, group.window_tokens, 1.0 / ep)
                                : t_local;
      const std::size_t n = group.graph.num_ops();
      for (std::size_t v = 0; v < n; ++v) {
        cost_any(group.ops[v], group.experts[v], group.ops[v].global_tokens ? t : tg, scratch);
        times[v] = scratch.time_s;
      }
      layers_s +=
          group.num_layers * group.graph.critical_path_s(std::span<const double>(times.data(), n));
    }
    lm_head(batch, t.flop_scale, scratch, 1.0 / ep);
    return step_overhead_s + kernels_overhead_s + layers_s + scratch.time_s;
  }

  /// cost() of any node, experts or not.
  void cost_any(const OpCost& c, const ExpertCost& x, const BatchTerms& t, OpTime& out) const {
    return x.num_experts > 0 ? cost<true>(c, t, out, &x) : cost<false>(c, t, out);
  }

  /// Adds to out.bytes the weights of the distinct routed experts `tokens` tokens reach (uniform
  /// top-k routing); returns the rows of one expert's call, tokens x k / distinct experts.
  static double add_expert_bytes(const ExpertCost& x, double tokens, OpTime& out) {
    const double distinct = x.num_experts * -std::expm1(tokens * x.log_expert_miss);
    out.bytes += x.expert_bytes * distinct;
    return distinct > 0 ? tokens * x.experts_per_token / distinct : 0.0;
  }

  /// Fills flops, bytes, time and memory_bound of an operator costing `c`.
  /// kExperts: an "experts" node, whose routed-expert terms `x` are; a template so that the
  /// steps of dense models, which have none, do not test for it per operator.
  template <bool kExperts = false>
  void cost(const OpCost& c, const BatchTerms& t, OpTime& out,
            const ExpertCost* x = nullptr) const {
    out.flops = c.flops_per_token * t.tokens + c.flops_per_pair * t.pairs;
    out.bytes = c.fixed_bytes + c.bytes_per_token * t.tokens + c.bytes_per_kv_token * t.kv_tokens;
    // Rows of one kernel call: the tokens, or a routed expert's share of them.
    double rows = t.tokens;
    if constexpr (kExperts) rows = add_expert_bytes(*x, t.tokens, out);
    if (c.all_reduce) {
      out.time_s = all_reduce_latency_s + out.bytes * seconds_per_link_byte;
      out.memory_bound = false;
      return;
    }
    if (c.calibrated && c.per_sequence) {
      // Attention as the reference decoder runs the measured kernel. Prefill: one call per
      // new token reading its whole prefix, `parallel_calls` of them at once on one thread
      // each (CalibratedEfficiency::threads): tokens / threads calls of the mean prefix in a
      // row, each costing one call of that context (with the layout's ratio: below ~1,024
      // KV-head x token pairs the measured calls run on one thread too), and no less than all
      // the pairs at the fitted rates of the whole replica. Decode of at least one sequence
      // per thread: the same with the sequences dealt to the threads (ceil(sequences /
      // threads) calls in a row), both terms times the layout's ratio at the mean context. Decode
      // of fewer sequences than threads: one call per sequence, parallel over the replica's
      // threads, times the layout's ratio at the mean context per call. When the profile timed
      // the layout's calls spread over the threads (spread_ratio: one single-threaded call per
      // thread, all at once, as the decoder runs them), the calls in a row cost that instead:
      // a call alone on an idle replica has the memory system to itself, and from ~1,024 pairs
      // on runs over all the threads (Llama-3.2-1B's 8 KV heads at 128 tokens: 2x too fast).
      out.bytes = c.fixed_bytes + c.bytes_per_token * t.tokens + c.bytes_per_kv_token * t.pairs;
      const double prefill_pairs = t.pairs - t.decode_pairs;
      const auto part = [&](double seqs, double pairs, double calls, bool& memory_bound) {
        return calibrated_s(c, c.bytes_per_token * seqs + c.bytes_per_kv_token * pairs,
                            c.flops_per_pair * pairs, calls, memory_bound, seqs);
      };
      bool decode_bound = false, prefill_bound = false;
      double decode_s = 0, prefill_s = 0;
      if (t.decode_seqs > 0 && parallel_calls > 1 && t.decode_seqs >= parallel_calls) {
        // The layout's ratio scales both: at long contexts it was measured on calls over the
        // whole replica, so it carries the layout's rate on all threads (Qwen2.5-0.5B's 7
        // query heads per 64-dim KV head stream at about half the fit's rate).
        const double mean_context = t.decode_pairs / t.decode_seqs;
        const double ratio = ratio_at(c.shape_ratio, mean_context);
        bool call_bound = false;
        const double one_call_s =
            part(1, mean_context, 1, call_bound) *
            (c.spread_ratio.empty() ? ratio : ratio_at(c.spread_ratio, mean_context));
        const double in_a_row_s = std::ceil(t.decode_seqs / parallel_calls) * one_call_s;
        const double rates_s = part(t.decode_seqs, t.decode_pairs, 0, decode_bound) * ratio;
        decode_s = std::max(in_a_row_s, rates_s);
        if (in_a_row_s > rates_s) decode_bound = call_bound;
      } else if (t.decode_seqs > 0 || t.prefill_tokens <= 0) {
        decode_s = part(t.decode_seqs, t.decode_pairs, std::max(1.0, t.decode_seqs), decode_bound) *
                   ratio_at(c.shape_ratio, t.decode_pairs / std::max(1.0, t.decode_seqs));
      }
      if (t.prefill_tokens > 0) {
        const double mean_context = prefill_pairs / t.prefill_tokens;
        bool call_bound = false;
        const double one_call_s =
            part(1, mean_context, 1, call_bound) *
            ratio_at(c.spread_ratio.empty() ? c.shape_ratio : c.spread_ratio, mean_context);
        const double in_a_row_s = t.prefill_tokens / parallel_calls * one_call_s;
        const double rates_s = part(t.prefill_tokens, prefill_pairs, 0, prefill_bound);
        prefill_s = std::max(in_a_row_s, rates_s);
        if (in_a_row_s > rates_s) prefill_bound = call_bound;
      }
      out.time_s = decode_s + prefill_s;
      out.memory_bound = decode_s >= prefill_s ? decode_bound : prefill_bound;
      return;
    }
    if (c.calibrated) {
      out.time_s = calibrated_s(c, out.bytes, out.flops, 1.0, out.memory_bound, rows) *
                   ratio_at(c.shape_ratio, rows);
      out.time_s += std::max(c.act_s_per_token * t.tokens,
                             c.act_bytes_per_token * t.tokens * stream_s_per_byte);
      return;
    }
    const double memory_s = out.bytes * seconds_per_byte;
    const double compute_s = out.flops * c.seconds_per_flop * t.flop_scale;
    out.memory_bound = memory_s >= compute_s;
    out.time_s = std::max(memory_s, compute_s);
  }

  /// Calibrated time of `calls` uses of `c` moving `bytes` and doing `flops`; the datasheet
  /// compute time at the full peak (floor_s_per_flop) is a floor. memory_bound: the bytes term is
  /// at least the flops terms. `tokens`: the call's activation rows, for rates measured per batch
  /// (cal_by_batch), used when tokens lies within the measured batches (interpolated linearly in
  /// tokens between the two batches' times, each line at its own batch's bytes) and beyond the
  /// largest one B (a prefill): there time(B) x tokens / B, with time(B) the largest batch's line
  /// at its own bytes (bytes less bytes_per_token x (tokens - B)). Past a few dozen rows the
  /// products are bound by their dot-product instructions, activation rows taken in slices of 16
  /// against a weight tile re-read from the L2, so their cost per row stays that of the largest
  /// measured batch. Measured on the development VM (2026-11-30, 2 threads) against the 64-row time
  /// x T / 64: int8 4096x14336 at 256 and 512 rows 32.4 and 64.5 ms (+2% predicted), int4
  /// 14336x4096 37.5 and 73.4 ms (-2% / +1%), int8 2048x2048 2.84 and 5.38 ms (-11% / -6%); the
  /// three-term line (below) gave -11% / -12%, -5% / -3% and -25% / -22%.
  static double calibrated_s(const OpCost& c, double bytes, double flops, double calls,
                             bool& memory_bound, double tokens = 0) {
    const double floor_s = flops * c.floor_s_per_flop;
    const auto& by = c.cal_by_batch;
    if (!by.empty() && tokens > by.back().batch) {
      const OpCost::BatchCost& last = by.back();
      const double bytes_last = bytes - c.bytes_per_token * (tokens - last.batch);
      const double time_s =
          (last.overhead_s + std::max(0.0, bytes_last) * last.s_per_byte) * tokens / last.batch;
      memory_bound = false;
      return std::max(time_s, floor_s);
    }
    if (!by.empty() && tokens >= by.front().batch && tokens <= by.back().batch) {
      std::size_t hi = 0;
      while (by[hi].batch < tokens) ++hi;
      const std::size_t lo = hi > 0 && by[hi].batch > tokens ? hi - 1 : hi;
      // Each batch's line at that batch's own bytes (the activation bytes of its rows), so
      // that the time is interpolated between the two measured batches: linear in the rows
      // where the product is compute-bound, nearly flat where it streams its weights.
      const auto at = [&](const OpCost::BatchCost& b) {
        return b.overhead_s +
               std::max(0.0, bytes + c.bytes_per_token * (b.batch - tokens)) * b.s_per_byte;
      };
      const double w = by[hi].batch > by[lo].batch
                           ? (tokens - by[lo].batch) / (by[hi].batch - by[lo].batch)
                           : 0.0;
      const double time_s = (1 - w) * at(by[lo]) + w * at(by[hi]);
      memory_bound = time_s >= floor_s;
      return std::max(time_s, floor_s);
    }
    const double bytes_s = bytes * c.cal_s_per_byte;
    const double flops_s = flops * c.cal_s_per_flop;
    memory_bound = bytes_s >= std::max(flops_s, floor_s);
    return std::max(c.cal_overhead_s * calls + bytes_s + flops_s, floor_s);
  }

  /// Embedding, final norm and LM head.
  /// `flop_scale`: BatchTerms::flop_scale of the step.
  void lm_head(const BatchShape& b, double flop_scale, OpTime& out, double share = 1) const {
    const double t = static_cast<double>(b.num_new_tokens()) * share;
    const double logits = static_cast<double>(b.num_decode_seqs + b.num_decode_draft_tokens +
                                              b.num_prefill_seqs_completing) *
                          share;
    out.flops = per_step_tokens.flops_per_token * t + lm_head_fixed.flops_per_token * logits;
    out.bytes = per_step_tokens.bytes_per_token * t + lm_head_fixed.bytes_per_token * logits +
                (logits > 0 ? lm_head_fixed.fixed_bytes : 0.0);
    if (lm_head_fixed.calibrated || per_step_tokens.calibrated) {
      // Each part at its own rates (calibrated or roofline), summed: they are separate kernels.
      const auto part = [&](const OpCost& c, double bytes, double flops, bool& memory_bound,
                            double tokens) {
        if (c.calibrated) {
          return calibrated_s(c, bytes, flops, 1.0, memory_bound, tokens) *
                 ratio_at(c.shape_ratio, tokens);
        }
        memory_bound = bytes * seconds_per_byte >= flops * c.seconds_per_flop;
        return std::max(bytes * seconds_per_byte, flops * c.seconds_per_flop);
      };
      bool rest_memory_bound = true;
      const double rest_s = part(per_step_tokens, per_step_tokens.bytes_per_token * t,
                                 per_step_tokens.flops_per_token * t, rest_memory_bound, t);
      out.memory_bound = rest_memory_bound;
      double head_s = 0;
      if (logits > 0) {
        head_s =
            part(lm_head_fixed, lm_head_fixed.bytes_per_token * logits + lm_head_fixed.fixed_bytes,
                 lm_head_fixed.flops_per_token * logits, out.memory_bound, logits);
      }
      out.time_s = head_s + rest_s;
      return;
    }
    const double memory_s = out.bytes * seconds_per_byte;
    const double compute_s = out.flops * lm_head_fixed.seconds_per_flop * flop_scale;
    out.memory_bound = memory_s >= compute_s;
    out.time_s = std::max(memory_s, compute_s);
  }
};

RooflinePredictor::RooflinePredictor(const ModelSpec& model, WeightFormat weight_format,
                                     KvFormat kv_format, const Deployment& deployment,
                                     const Efficiency& efficiency)
    : impl_(std::make_shared<const Impl>(model, weight_format, kv_format, deployment, efficiency)),
      kind_(efficiency.calibrated ? PredictorKind::kCalibrated : PredictorKind::kRoofline) {}

PredictorKind RooflinePredictor::kind() const { return kind_; }

double RooflinePredictor::step_time_s(const BatchShape& batch) const {
  if (batch.empty()) return 0.0;
  const Impl& impl = *impl_;
  if (impl.dense == nullptr) return impl.described_step_s(batch);
  // A dense ModelSpec: one group, the whole context, no experts.
  const LayerGroup& group = *impl.dense;
  const BatchTerms t = impl.terms(batch);
  std::array<double, LayerOpGraph::kMaxOps> times;  // entries [0, n) are written below (no
                                                    // zero-fill: it was a rep stos per step)
  const std::size_t n = group.graph.num_ops();
  OpTime scratch;
  for (std::size_t v = 0; v < n; ++v) {
    impl.cost(group.ops[v], t, scratch);
    times[v] = scratch.time_s;
  }
  const double layer_s = group.graph.critical_path_s(std::span<const double>(times.data(), n));
  impl.lm_head(batch, t.flop_scale, scratch);
  return impl.step_overhead_s + impl.kernels_overhead_s + group.num_layers * layer_s +
         scratch.time_s;
}

namespace {

bool decode_only(const BatchShape& b) {
  return b.num_prefill_seqs == 0 && b.num_prefill_tokens == 0 &&
         b.num_prefill_attention_pairs == 0 && b.num_prefill_cached_tokens == 0 &&
         b.num_prefill_seqs_completing == 0;
}

/// Whether `b` is a decode-only batch that differs from `first` (also one) at most in its
/// decode context and its drafts' attention pairs: every term but the context-reading
/// operators' is then the same (BatchTerms' tokens, decode sequences, flop scale, logits).
bool same_but_context(const BatchShape& first, const BatchShape& b) {
  return decode_only(b) && b.num_decode_seqs == first.num_decode_seqs &&
         b.num_decode_draft_tokens == first.num_decode_draft_tokens;
}

}  // namespace

/// A dense model's decode runs: at start(), every operator's time and the LM head's for the
/// run's first batch; each step then prices only the operators that read the context and
/// sums as step_time_s does (the others' inputs, hence times, are the same for every batch
/// of the run). Anything else is priced alone.
class RooflinePredictor::RunPricer final : public DecodeRunPricer {
 public:
  explicit RunPricer(const RooflinePredictor& owner) : owner_(owner) {}

  void start(const BatchShape& first) override {
    const Impl& impl = *owner_.impl_;
    first_ = first;
    run_ = impl.dense != nullptr && !first.empty() && decode_only(first);
    if (!run_) return;
    const LayerGroup& group = *impl.dense;
    OpTime scratch;
    const BatchTerms t = impl.terms(first);
    for (std::size_t v = 0; v < group.graph.num_ops(); ++v) {
      impl.cost(group.ops[v], t, scratch);
      times_[v] = scratch.time_s;
    }
    impl.lm_head(first, t.flop_scale, scratch);
    head_s_ = scratch.time_s;
  }

  double step_time_s(const BatchShape& batch) override {
    if (!run_ || !same_but_context(first_, batch)) return owner_.step_time_s(batch);
    const Impl& impl = *owner_.impl_;
    const LayerGroup& group = *impl.dense;
    const BatchTerms t = impl.terms(batch);
    OpTime scratch;
    for (const std::size_t v : impl.dense_context_ops) {
      impl.cost(group.ops[v], t, scratch);
      times_[v] = scratch.time_s;
    }
    const double layer_s =
        group.graph.critical_path_s(std::span<const double>(times_.data(), group.graph.num_ops()));
    return impl.step_overhead_s + impl.kernels_overhead_s + group.num_layers * layer_s + head_s_;
  }

 private:
  const RooflinePredictor& owner_;
  BatchShape first_;
  bool run_ = false;
  std::array<double, LayerOpGraph::kMaxOps> times_{};
  double head_s_ = 0;
};

std::unique_ptr<DecodeRunPricer> RooflinePredictor::decode_run_pricer() const {
  return std::make_unique<RunPricer>(*this);
}

std::vector<OpTime> RooflinePredictor::breakdown(const BatchShape& batch) const {
  const Impl& impl = *impl_;
  const BatchTerms t = impl.terms(batch);
  const BatchTerms t_local = impl.local(t);
  std::vector<OpTime> out;
  for (const LayerGroup& group : impl.groups) {
    const BatchTerms tg = group.window_tokens > 0
                              ? Impl::windowed(t_local, batch, group.window_tokens, 1.0 / impl.ep)
                              : t_local;
    for (std::size_t v = 0; v < group.graph.num_ops(); ++v) {
      out.emplace_back();
      out.back().op = group.graph.op(v).name;
      out.back().num_layers = group.num_layers;
      impl.cost_any(group.ops[v], group.experts[v], group.ops[v].global_tokens ? t : tg,
                    out.back());
    }
  }
  out.emplace_back();
  out.back().op = "lm_head";
  out.back().num_layers = 1;
  impl.lm_head(batch, t.flop_scale, out.back(), 1.0 / impl.ep);
  return out;
}

}  // namespace llmcap::model
