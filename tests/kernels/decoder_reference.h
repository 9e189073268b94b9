// A straightforward implementation of the reference decoder's step (plain loops in double over
// its weights) that the decoder tests compare with: dense and mixture-of-experts MLPs.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <span>
#include <vector>

#include "kernels/decoder.h"

namespace llmcap::kernels::decoder_reference {

inline double bf16_value(uint16_t h) {
  const uint32_t u = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

/// Rounds to bf16 (nearest even), as the KV cache stores appended keys and values.
inline double round_bf16(double x) {
  const float f = static_cast<float>(x);
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  u += 0x7FFFu + ((u >> 16) & 1u);
  return bf16_value(static_cast<uint16_t>(u >> 16));
}

/// A dense double copy of a packed matrix (row-major rows x cols), from PackedWeights::at.
struct Dense {
  int64_t rows = 0, cols = 0;
  std::vector<double> w;
  explicit Dense(const PackedWeights& p) : rows(p.rows()), cols(p.cols()) {
    w.resize(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) w[static_cast<size_t>(r * cols + c)] = p.at(r, c);
    }
  }
  std::vector<double> apply(const std::vector<double>& x) const {
    std::vector<double> y(static_cast<size_t>(rows), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      double s = 0;
      for (int64_t c = 0; c < cols; ++c) s += w[static_cast<size_t>(r * cols + c)] * x[c];
      y[static_cast<size_t>(r)] = s;
    }
    return y;
  }
};

inline std::vector<double> rms_norm_ref(const std::vector<double>& x, std::span<const float> w,
                                        double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double k = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  std::vector<double> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * k * w[i];
  return y;
}

/// Llama "rotate half" RoPE on heads of `hd` elements starting at x[offset].
inline void rope_ref(std::vector<double>& x, size_t offset, int64_t heads, int64_t hd, int64_t pos,
                     double theta) {
  for (int64_t h = 0; h < heads; ++h) {
    for (int64_t i = 0; i < hd / 2; ++i) {
      const double angle =
          static_cast<double>(pos) * std::pow(theta, -2.0 * static_cast<double>(i) / hd);
      double& a = x[offset + static_cast<size_t>(h * hd + i)];
      double& b = x[offset + static_cast<size_t>(h * hd + i + hd / 2)];
      const double a0 = a, b0 = b;
      a = a0 * std::cos(angle) - b0 * std::sin(angle);
      b = b0 * std::cos(angle) + a0 * std::sin(angle);
    }
  }
}

/// An independent decoder for one sequence: plain loops in double over the decoder's weights,
/// with its own KV cache (initialised from the decoder's random prefix).
class ReferenceSequence {
 public:
  ReferenceSequence(const ReferenceDecoder& dec, int64_t slot) : dec_(dec), s_(dec.shape()) {
    for (int64_t l = 0; l < s_.num_layers; ++l) {
      const auto& w = dec.layer(l);
      layers_.push_back({Dense(w.qkv),
                         Dense(w.o),
                         Dense(w.gate_up),
                         Dense(w.down),
                         Dense(w.router),
                         Dense(w.shared_gate_up),
                         Dense(w.shared_down),
                         {},
                         {}});
      for (size_t e = 0; e < w.expert_gate_up.size(); ++e) {
        layers_.back().expert_gate_up.emplace_back(w.expert_gate_up[e]);
        layers_.back().expert_down.emplace_back(w.expert_down[e]);
      }
    }
    context_ = dec.contexts()[static_cast<size_t>(slot)];
    const int64_t hd = s_.head_dim;
    k_.resize(static_cast<size_t>(s_.num_layers));
    v_.resize(static_cast<size_t>(s_.num_layers));
    for (int64_t l = 0; l < s_.num_layers; ++l) {
      const KvCacheView view = dec.kv_cache(l, slot);
      k_[l].resize(static_cast<size_t>(s_.num_kv_heads));
      v_[l].resize(static_cast<size_t>(s_.num_kv_heads));
      for (int64_t g = 0; g < s_.num_kv_heads; ++g) {
        for (int64_t t = 0; t < context_; ++t) {
          std::vector<double> kt(static_cast<size_t>(hd)), vt(static_cast<size_t>(hd));
          for (int64_t d = 0; d < hd; ++d) {
            const int64_t i = (g * view.capacity_tokens + t) * hd + d;
            if (view.type == KvType::kF32) {
              kt[d] = static_cast<const float*>(view.k)[i];
              vt[d] = static_cast<const float*>(view.v)[i];
            } else {
              kt[d] = bf16_value(static_cast<const uint16_t*>(view.k)[i]);
              vt[d] = bf16_value(static_cast<const uint16_t*>(view.v)[i]);
            }
          }
          k_[l][g].push_back(kt);
          v_[l][g].push_back(vt);
        }
      }
    }
  }

  /// Consumes `token` at position context, returns the logits; the context grows by one.
  std::vector<double> step(int64_t token) {
    const int64_t H = s_.hidden, hd = s_.head_dim, QD = s_.q_dim(), KD = s_.kv_dim();
    const int64_t I = s_.intermediate, pos = context_;
    std::vector<double> x(static_cast<size_t>(H));
    for (int64_t c = 0; c < H; ++c) x[c] = dec_.lm_head().at(token, c);
    for (int64_t l = 0; l < s_.num_layers; ++l) {
      const auto& w = dec_.layer(l);
      const auto& d = layers_[static_cast<size_t>(l)];
      std::vector<double> qkv = d.qkv.apply(rms_norm_ref(x, w.attn_norm, s_.rms_eps));
      for (size_t r = 0; r < w.qkv_bias.size(); ++r) qkv[r] += w.qkv_bias[r];
      rope_ref(qkv, 0, s_.num_heads, hd, pos, s_.rope_theta);
      rope_ref(qkv, static_cast<size_t>(QD), s_.num_kv_heads, hd, pos, s_.rope_theta);
      const bool bf16 = dec_.kv_type() == KvType::kBf16;
      for (int64_t g = 0; g < s_.num_kv_heads; ++g) {
        std::vector<double> kt(static_cast<size_t>(hd)), vt(static_cast<size_t>(hd));
        for (int64_t e = 0; e < hd; ++e) {
          const double kv_k = qkv[static_cast<size_t>(QD + g * hd + e)];
          const double kv_v = qkv[static_cast<size_t>(QD + KD + g * hd + e)];
          kt[e] = bf16 ? round_bf16(kv_k) : static_cast<float>(kv_k);
          vt[e] = bf16 ? round_bf16(kv_v) : static_cast<float>(kv_v);
        }
        k_[l][g].push_back(kt);
        v_[l][g].push_back(vt);
      }
      std::vector<double> attn(static_cast<size_t>(QD), 0.0);
      const int64_t group = s_.num_heads / s_.num_kv_heads;
      for (int64_t h = 0; h < s_.num_heads; ++h) {
        const auto& keys = k_[l][h / group];
        const auto& values = v_[l][h / group];
        std::vector<double> p(keys.size());
        double m = -INFINITY;
        for (size_t t = 0; t < keys.size(); ++t) {
          double dot = 0;
          for (int64_t e = 0; e < hd; ++e) dot += qkv[static_cast<size_t>(h * hd + e)] * keys[t][e];
          p[t] = dot / std::sqrt(static_cast<double>(hd));
          m = std::max(m, p[t]);
        }
        double z = 0;
        for (double& v : p) z += (v = std::exp(v - m));
        for (size_t t = 0; t < keys.size(); ++t) {
          for (int64_t e = 0; e < hd; ++e) attn[h * hd + e] += p[t] / z * values[t][e];
        }
      }
      const std::vector<double> o = d.o.apply(attn);
      for (int64_t c = 0; c < H; ++c) x[c] += o[c];
      const std::vector<double> hn = rms_norm_ref(x, w.mlp_norm, s_.rms_eps);
      if (!s_.is_moe()) {
        const std::vector<double> down = swiglu_mlp(d.gate_up, d.down, hn, I);
        for (int64_t c = 0; c < H; ++c) x[c] += down[c];
        continue;
      }
      // Mixture of experts: the top k router logits (ties to the lower index), their softmax,
      // each chosen expert's SwiGLU MLP scaled by its gate; then the shared expert.
      const std::vector<double> logits = d.router.apply(hn);
      std::vector<int64_t> order(logits.size());
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(),
                       [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
      const int64_t k = s_.experts_per_token;
      double z = 0;
      for (int64_t j = 0; j < k; ++j) z += std::exp(logits[order[j]] - logits[order[0]]);
      chosen_.emplace_back(order.begin(), order.begin() + k);
      for (int64_t j = 0; j < k; ++j) {
        const auto e = static_cast<size_t>(order[j]);
        const double gate = std::exp(logits[e] - logits[order[0]]) / z;
        const std::vector<double> y =
            swiglu_mlp(d.expert_gate_up[e], d.expert_down[e], hn, s_.expert_intermediate);
        for (int64_t c = 0; c < H; ++c) x[c] += gate * y[c];
      }
      if (s_.shared_intermediate > 0) {
        const std::vector<double> y =
            swiglu_mlp(d.shared_gate_up, d.shared_down, hn, s_.shared_intermediate);
        for (int64_t c = 0; c < H; ++c) x[c] += y[c];
      }
    }
    ++context_;
    return lm_head_.apply(rms_norm_ref(x, dec_.final_norm(), s_.rms_eps));
  }

  /// Mixture of experts: per layer of every step so far, the experts chosen (in gate order).
  const std::vector<std::vector<int64_t>>& chosen() const { return chosen_; }

 private:
  struct LayerDense {
    Dense qkv, o, gate_up, down;
    Dense router, shared_gate_up, shared_down;  // mixture of experts only (else empty)
    std::vector<Dense> expert_gate_up, expert_down;
  };
  /// down(SwiGLU(gate_up(h))) of an MLP of `width` features (gate_up_row layout).
  static std::vector<double> swiglu_mlp(const Dense& gate_up, const Dense& down,
                                        const std::vector<double>& h, int64_t width) {
    const std::vector<double> gu = gate_up.apply(h);
    std::vector<double> act(static_cast<size_t>(width));
    for (int64_t i = 0; i < width; ++i) {
      const double g = gu[static_cast<size_t>(gate_up_row(i, width, false))];
      act[i] = g / (1 + std::exp(-g)) * gu[static_cast<size_t>(gate_up_row(i, width, true))];
    }
    return down.apply(act);
  }
  std::vector<std::vector<int64_t>> chosen_;
  const ReferenceDecoder& dec_;
  DecoderShape s_;
  std::vector<LayerDense> layers_;
  Dense lm_head_{dec_.lm_head()};
  int64_t context_ = 0;
  // [layer][kv_head][token][element]
  std::vector<std::vector<std::vector<std::vector<double>>>> k_, v_;
};

/// Max |a - ref| / max |ref| over one sequence's logits.
inline double relative_error(std::span<const float> a, const std::vector<double>& ref) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    err = std::max(err, std::abs(a[i] - ref[i]));
    scale = std::max(scale, std::abs(ref[i]));
  }
  return err / scale;
}

/// Runs `steps` steps of `dec` from `contexts`/`tokens` alongside the reference; returns the
/// largest relative logit error.
inline double max_error_against_reference(ReferenceDecoder& dec, std::vector<int64_t> contexts,
                                          std::vector<int64_t> tokens, int steps,
                                          ThreadPool& pool) {
  dec.set_contexts(contexts, tokens);
  std::vector<ReferenceSequence> refs;
  for (size_t b = 0; b < contexts.size(); ++b) refs.emplace_back(dec, static_cast<int64_t>(b));
  const int64_t vocab = dec.shape().vocab;
  double worst = 0;
  for (int step = 0; step < steps; ++step) {
    const std::vector<int64_t> consumed(dec.next_tokens().begin(), dec.next_tokens().end());
    dec.step(pool);
    EXPECT_EQ(dec.logits().size(), contexts.size() * static_cast<size_t>(vocab));
    for (size_t b = 0; b < contexts.size(); ++b) {
      EXPECT_EQ(dec.contexts()[b], contexts[b] + step + 1) << "sequence " << b;
      const auto row = dec.logits().subspan(b * static_cast<size_t>(vocab), vocab);
      worst = std::max(worst, relative_error(row, refs[b].step(consumed[b])));
      // The next token is the greedy argmax of these logits.
      EXPECT_EQ(dec.next_tokens()[b], std::max_element(row.begin(), row.end()) - row.begin());
    }
  }
  return worst;
}

}  // namespace llmcap::kernels::decoder_reference
