// Expert parallelism (issue 28, item 5): how a mixture-of-experts model's routed experts split
// over the devices of one replica, as vLLM's --data-parallel-size N --enable-expert-parallel
// and SGLang's --enable-dp-attention --ep N deploy DeepSeek-V3 and the other large MoE models:
// the replica's N devices (ep = N = the deployment's tp_degree) hold the routed experts whole,
// num_experts / ep of them per device and MoE layer, while attention, dense MLPs, shared
// experts, routers, embeddings and the LM head are replicated and run data-parallel, each
// device on its own sequences, whose KV cache it alone keeps (an MLA latent once, not once per
// device as under tensor parallelism). docs/model.md, "Expert parallelism"; vLLM docs, "Expert
// Parallel Deployment"; SGLang docs, "DP attention".
#pragma once

#include <cstdint>
#include <string>

#include "model/deployment.h"
#include "model/formats.h"
#include "model/model_spec.h"

namespace llmcap::model {

/// The routed experts per mixture-of-experts layer of `model`: the largest count that every
/// MoE layer's num_experts is a multiple of (the shipped families give every MoE layer the
/// same count, e.g. DeepSeek-V3 256, Qwen3-30B-A3B and gpt-oss-120b 128); 0 for a model
/// without MoE layers (a dense ModelSpec or a described model of dense MLPs).
int64_t routed_experts_per_layer(const ModelSpec& model);

/// Why `model` cannot split its routed experts over `ep_degree` devices, or "" when it can:
/// a model without routed experts, a degree below 1, or one that does not divide
/// routed_experts_per_layer (every device must hold the same whole number of experts).
std::string expert_parallel_refusal(const ModelSpec& model, int ep_degree);

/// Weight bytes of one device of an expert-parallel replica of `ep_degree` devices, in bytes.
struct ExpertParallelShare {
  int ep_degree = 1;
  int64_t experts_per_device = 0;  ///< routed experts per MoE layer on each device
  /// Every routed expert of every MoE layer in the weight format (each tensor in its encoding,
  /// weight_encoding.h): the part expert parallelism splits.
  int64_t routed_expert_bytes = 0;
  int64_t other_bytes = 0;  ///< ModelSpec::weight_bytes - routed_expert_bytes
  /// routed_expert_bytes x experts_per_device / num_experts (whole experts).
  int64_t routed_bytes_per_device = 0;
  /// other_bytes: the data-parallel rest, whole on every device.
  int64_t other_bytes_per_device = 0;
  int64_t weight_bytes_per_device() const {
    return routed_bytes_per_device + other_bytes_per_device;
  }
  /// Weights of the replica: routed_expert_bytes + ep_degree x other_bytes.
  int64_t replica_weight_bytes() const {
    return routed_expert_bytes + static_cast<int64_t>(ep_degree) * other_bytes;
  }
};

/// The split of `model`'s weights in `format` over `ep_degree` devices. Throws InputError
/// with expert_parallel_refusal's reason when the model cannot be split so.
/// DeepSeek-V3 (58 MoE layers of 256 experts of 3 x [2048, 7168]) in fp8 over 8 devices:
/// 32 experts per device, routed_expert_bytes = 58 x 256 x 3 x 2048 x 7168 = 653,908,770,816.
ExpertParallelShare expert_parallel_share(const ModelSpec& model, WeightFormat format,
                                          int ep_degree);

/// Turns `deployment` (a replica of deployment.tp_degree devices, placed by the tensor-parallel
/// memory rule of model/deployment.h) expert-parallel for `model`: sets
/// Deployment::expert_parallel, weight_bytes = replica_weight_bytes() and kv_cache_bytes = the
/// same usable memory less those weights and the activation reserves, and appends to its rule
/// the experts and weight bytes per device. Throws InfeasibleError with
/// expert_parallel_refusal's reason (e.g. "expert parallelism over 3 devices: 3 does not
/// divide the 256 routed experts per layer of model \"deepseek-v3\""), or when the replicated
/// weights leave no room for one sequence of min(max_position_embeddings,
/// kMaxFitSequenceTokens) tokens of KV cache (ModelSpec::kv_cache_bytes_per_token).
void make_expert_parallel(Deployment& deployment, const ModelSpec& model, WeightFormat format,
                          KvFormat kv_format);

}  // namespace llmcap::model
