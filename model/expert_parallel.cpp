#include "model/expert_parallel.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "base/text.h"
#include "model/input_error.h"
#include "model/weight_encoding.h"

namespace llmcap::model {

int64_t routed_experts_per_layer(const ModelSpec& model) {
  if (!model.description) return 0;
  int64_t experts = 0;
  for (const LayerSpec& layer : model.description->layers) {
    if (layer.mlp.kind == MlpKind::kMoe) experts = std::gcd(experts, layer.mlp.num_experts);
  }
  return experts;
}

std::string expert_parallel_refusal(const ModelSpec& model, int ep_degree) {
  const std::string over = "expert parallelism over " + std::to_string(ep_degree) +
                           (ep_degree == 1 ? " device" : " devices");
  const int64_t experts = routed_experts_per_layer(model);
  if (experts == 0) {
    return over + ": model \"" + model.id +
           "\" has no routed experts (no mixture-of-experts layer)";
  }
  if (ep_degree < 1) return over + ": expected at least 1 device per replica";
  if (experts % ep_degree != 0) {
    return over + ": " + std::to_string(ep_degree) + " does not divide the " +
           std::to_string(experts) + " routed experts per layer of model \"" + model.id +
           "\" (each device holds the same whole number of experts)";
  }
  return "";
}

ExpertParallelShare expert_parallel_share(const ModelSpec& model, WeightFormat format,
                                          int ep_degree) {
  if (const std::string refusal = expert_parallel_refusal(model, ep_degree); !refusal.empty()) {
    throw InputError(refusal);
  }
  ExpertParallelShare s;
  s.ep_degree = ep_degree;
  s.experts_per_device = routed_experts_per_layer(model) / ep_degree;
  const QuantModel q = quant_model(model);
  const std::vector<LayerSpec>& layers = model.description->layers;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    const MlpSpec& m = layers[i].mlp;
    if (m.kind != MlpKind::kMoe) continue;
    // One expert as ModelDescription::weight_bytes counts it: (gate,) up, down in their
    // encodings for this layer (weight_encoding.h), biases as vectors.
    const int64_t h = model.description->hidden_size;
    const int64_t w = m.expert_intermediate_size;
    const int64_t in_mats = m.gated ? 2 : 1;
    const auto layer = static_cast<int64_t>(i);
    const TensorEncoding up = encoding_for(format, TensorRole::kExpertUp, layer, h, q);
    const TensorEncoding down = encoding_for(format, TensorRole::kExpertDown, layer, w, q);
    const TensorEncoding vec = encoding_for(format, TensorRole::kVector, layer, 1, q);
    int64_t one = in_mats * tensor_bytes(up, w, h) + tensor_bytes(down, h, w);
    if (m.bias) one += tensor_bytes(vec, 1, in_mats * w + h);
    s.routed_expert_bytes += m.num_experts * one;
    s.routed_bytes_per_device += m.num_experts / ep_degree * one;
  }
  s.other_bytes = model.weight_bytes(format) - s.routed_expert_bytes;
  s.other_bytes_per_device = s.other_bytes;
  return s;
}

void make_expert_parallel(Deployment& deployment, const ModelSpec& model, WeightFormat format,
                          KvFormat kv_format) {
  const int ep = deployment.tp_degree;
  if (const std::string refusal = expert_parallel_refusal(model, ep); !refusal.empty()) {
    throw InfeasibleError("model \"" + model.id + "\": " + refusal);
  }
  const ExpertParallelShare s = expert_parallel_share(model, format, ep);
  // The tensor-parallel rule left usable - reserves = kv_cache_bytes + weight_bytes.
  const int64_t room = deployment.kv_cache_bytes + deployment.weight_bytes;
  const int64_t kv = room - s.replica_weight_bytes();
  const int64_t fit_tokens = std::min(model.max_position_embeddings, kMaxFitSequenceTokens);
  const int64_t fit_kv = fit_tokens * model.kv_cache_bytes_per_token(kv_format);
  const std::string split = std::to_string(s.experts_per_device) + " of " +
                            std::to_string(routed_experts_per_layer(model)) +
                            " routed experts per MoE layer per device, " +
                            base::gb(s.weight_bytes_per_device()) + " of weights per device (" +
                            base::gb(s.routed_bytes_per_device) + " routed experts + " +
                            base::gb(s.other_bytes_per_device) + " replicated)";
  if (kv < fit_kv) {
    throw InfeasibleError("model \"" + model.id + "\": expert parallelism over " +
                          std::to_string(ep) + " devices: " + split + " leave " +
                          base::gb(static_cast<double>(std::max<int64_t>(kv, 0))) +
                          " for KV cache, less than one " + std::to_string(fit_tokens) +
                          "-token sequence (" + base::gb(static_cast<double>(fit_kv)) + ")");
  }
  deployment.expert_parallel = true;
  deployment.weight_bytes = s.replica_weight_bytes();
  deployment.kv_cache_bytes = kv;
  deployment.rule +=
      "; expert-parallel (ep=" + std::to_string(ep) + ", attention data-parallel): " + split;
}

}  // namespace llmcap::model
