// The mixture-of-experts MLP of the reference decoder (kernels/decoder.h, DecoderShape::is_moe):
// router, top-k routing, the routed experts through kernels::moe_matmul and the shared expert.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "kernels/decoder.h"
#include "kernels/decoder_internal.h"
#include "kernels/moe.h"

namespace llmcap::kernels {
namespace {

/// `v` grown to at least n elements, as a span of n.
std::span<float> grown(std::vector<float>& v, int64_t n) {
  if (static_cast<int64_t>(v.size()) < n) v.resize(static_cast<size_t>(n));
  return {v.data(), static_cast<size_t>(n)};
}

}  // namespace

void ReferenceDecoder::init_moe_weights(DecoderLayerWeights& w, uint64_t& matrix) {
  const DecoderShape& s = shape_;
  const auto next_seed = [&] { return detail::derive_seed(seed_, 1, matrix++); };
  // Uniform [-1, 1) like every matrix: with RMSNorm weights of ~1/sqrt(hidden), the router's
  // logits have a standard deviation of ~0.6, so its softmax neither saturates nor is flat.
  w.router = PackedWeights::random(format_, s.num_experts, s.hidden, next_seed());
  w.expert_gate_up.reserve(static_cast<size_t>(s.num_experts));
  w.expert_down.reserve(static_cast<size_t>(s.num_experts));
  for (int64_t e = 0; e < s.num_experts; ++e) {
    w.expert_gate_up.push_back(
        PackedWeights::random(format_, 2 * s.expert_intermediate, s.hidden, next_seed()));
    w.expert_down.push_back(
        PackedWeights::random(format_, s.hidden, s.expert_intermediate, next_seed()));
  }
  if (s.shared_intermediate > 0) {
    w.shared_gate_up =
        PackedWeights::random(format_, 2 * s.shared_intermediate, s.hidden, next_seed());
    w.shared_down = PackedWeights::random(format_, s.hidden, s.shared_intermediate, next_seed());
  }
}

void ReferenceDecoder::moe_mlp(int64_t layer, std::span<const float> h, std::span<float> x,
                               int64_t batch, ThreadPool& pool, Isa isa) {
  const DecoderShape& s = shape_;
  const DecoderLayerWeights& w = layers_[static_cast<size_t>(layer)];
  const int64_t H = s.hidden, E = s.num_experts, K = s.experts_per_token,
                EI = s.expert_intermediate, P = batch * K;
  const std::span<float> logits = grown(router_logits_, batch * E);
  const std::span<float> pair_x = grown(pair_x_, P * H), pair_gu = grown(pair_gu_, P * 2 * EI),
                         pair_act = grown(pair_act_, P * EI), pair_out = grown(pair_out_, P * H);
  matmul(w.router, h.subspan(0, static_cast<size_t>(batch * H)), batch, logits, pool, isa);

  // Each (token, chosen expert) pair is a row of its own: the gate/up product and SwiGLU of
  // one expert must not be summed over the token's experts before the down product.
  MoeRouting pairs;
  pairs.tokens = P;
  pairs.k = 1;
  pairs.expert.assign(static_cast<size_t>(P), 0);
  pairs.gate.assign(static_cast<size_t>(P), 1.0f);
  std::vector<float> gates(static_cast<size_t>(P));
  detail::for_rows(pool, batch, [&](int64_t b) {
    const float* row = logits.data() + b * E;
    std::vector<int32_t> order(static_cast<size_t>(E));
    std::iota(order.begin(), order.end(), 0);
    // The k largest logits, ties to the lower expert index.
    std::partial_sort(order.begin(), order.begin() + K, order.end(), [row](int32_t a, int32_t c) {
      return row[a] > row[c] || (row[a] == row[c] && a < c);
    });
    // Softmax over all experts, the top k renormalised: the softmax of the top k logits.
    const float top = row[order[0]];
    float sum = 0;
    for (int64_t j = 0; j < K; ++j) sum += std::exp(row[order[static_cast<size_t>(j)]] - top);
    for (int64_t j = 0; j < K; ++j) {
      const int32_t e = order[static_cast<size_t>(j)];
      pairs.expert[static_cast<size_t>(b * K + j)] = e;
      gates[static_cast<size_t>(b * K + j)] = std::exp(row[e] - top) / sum;
      std::copy_n(h.data() + b * H, H, pair_x.data() + (b * K + j) * H);
    }
  });
  std::vector<bool> hit(static_cast<size_t>(E), false);
  for (const int32_t e : pairs.expert) hit[static_cast<size_t>(e)] = true;
  experts_hit_.resize(static_cast<size_t>(s.num_layers));
  experts_hit_[static_cast<size_t>(layer)] = std::count(hit.begin(), hit.end(), true);

  moe_matmul(w.expert_gate_up, pairs, pair_x, pair_gu, pool, isa);
  detail::swiglu_blocks(pair_gu.data(), pair_act.data(), P, EI, pool, isa);
  pairs.gate = std::move(gates);  // the down product scales each pair's output by its gate
  moe_matmul(w.expert_down, pairs, pair_act, pair_out, pool, isa);
  detail::for_rows(pool, batch, [&](int64_t b) {
    for (int64_t j = 0; j < K; ++j) {
      detail::add_in_place(x.subspan(b * H, H), pair_out.subspan((b * K + j) * H, H));
    }
  });

  if (s.shared_intermediate > 0) {
    const int64_t SI = s.shared_intermediate;
    const std::span<float> gu(gu_.data(), static_cast<size_t>(batch * 2 * SI));
    const std::span<float> act(act_.data(), static_cast<size_t>(batch * SI));
    const std::span<float> out(proj_.data(), static_cast<size_t>(batch * H));
    matmul(w.shared_gate_up, h.subspan(0, static_cast<size_t>(batch * H)), batch, gu, pool, isa);
    detail::swiglu_blocks(gu.data(), act.data(), batch, SI, pool, isa);
    matmul(w.shared_down, act, batch, out, pool, isa);
    detail::for_rows(pool, batch, [&](int64_t b) {
      detail::add_in_place(x.subspan(b * H, H), out.subspan(b * H, H));
    });
  }
}

std::vector<OpAccount> ReferenceDecoder::moe_account() const {
  const DecoderShape& s = shape_;
  const int64_t B = batch_, L = s.num_layers, H = s.hidden, E = s.num_experts,
                K = s.experts_per_token, EI = s.expert_intermediate, SI = s.shared_intermediate;
  const int64_t P = B * K;  // (token, expert) pairs per layer
  int64_t router_w = 0, expert_gu_w = 0, expert_down_w = 0, shared_gu_w = 0, shared_down_w = 0;
  for (int64_t l = 0; l < L; ++l) {
    const DecoderLayerWeights& w = layers_[static_cast<size_t>(l)];
    const int64_t hit =
        experts_hit_.empty() ? std::min(E, P) : experts_hit_[static_cast<size_t>(l)];
    router_w += w.router.bytes();
    // Experts of equal shape and format: each one's bytes are the first's.
    expert_gu_w += hit * w.expert_gate_up.front().bytes();
    expert_down_w += hit * w.expert_down.front().bytes();
    shared_gu_w += w.shared_gate_up.bytes();
    shared_down_w += w.shared_down.bytes();
  }
  const auto proj = [L](const char* name, int64_t weight_bytes, int64_t rows_in, int64_t rows,
                        int64_t cols) {
    return OpAccount{name, weight_bytes + L * rows_in * (rows + cols) * 4,
                     L * 2 * rows_in * rows * cols};
  };
  std::vector<OpAccount> ops = {
      proj("router", router_w, B, E, H),
      proj("expert_gate_up_proj", expert_gu_w, P, 2 * EI, H),
      {"expert_swiglu", L * 3 * P * EI * 4, L * 4 * P * EI},
      proj("expert_down_proj", expert_down_w, P, H, EI),
  };
  if (SI > 0) {
    ops.push_back(proj("shared_gate_up_proj", shared_gu_w, B, 2 * SI, H));
    ops.push_back({"shared_swiglu", L * 3 * B * SI * 4, L * 4 * B * SI});
    ops.push_back(proj("shared_down_proj", shared_down_w, B, H, SI));
  }
  return ops;
}

}  // namespace llmcap::kernels
