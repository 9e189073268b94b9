// Placement of a model on an instance: every rule that says how many replicas an instance runs,
// over how many devices each (tensor-parallel degree), what share of a CPU socket's bandwidth and
// compute a slice gets, and how a replica's memory splits into weights, activation reserve and
// KV cache. plan/planner.h builds on these (deployment_for_tp: a chosen degree).
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "model/efficiency.h"
#include "model/formats.h"
#include "model/hardware.h"
#include "model/model_spec.h"

namespace llmcap::model {

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
  /// Routed experts split whole over the replica's tp_degree devices (ep = tp_degree), the
  /// rest replicated and data-parallel (each device its own sequences and their KV);
  /// model/expert_parallel.h, make_expert_parallel. false: tensor parallelism, every matrix
  /// sliced tp_degree ways.
  bool expert_parallel = false;
  std::string rule;  ///< one line stating how the resources were derived (for reports)
};

/// vCPUs of one socket of a CPU instance: the instance's vcpus_per_socket when given (families
/// with SMT off or cores held back by the host), else the CPU's cores x threads_per_core.
int socket_threads_of(const InstanceType& instance, const HardwareSpec& cpu);

/// Whole sockets of a CPU instance (vcpus / socket_threads_of); 0 for a slice of one socket.
int whole_sockets_of(const InstanceType& instance, const HardwareSpec& cpu);

/// The memory rule of one replica with `memory_bytes` of memory (all its devices) and
/// `reserve_bytes` of activation reserve, all in bytes.
struct ReplicaMemory {
  int64_t memory_bytes = 0;
  int64_t usable_bytes = 0;   ///< round(usable_memory_fraction x memory_bytes)
  int64_t weight_bytes = 0;   ///< the model's weights in the weight format
  int64_t reserve_bytes = 0;  ///< activation reserve
  /// min(max_position_embeddings, kMaxFitSequenceTokens): the sequence that must fit.
  int64_t fit_sequence_tokens = 0;
  int64_t fit_sequence_kv_bytes = 0;  ///< KV cache of that sequence in the KV format
  int64_t kv_cache_bytes = 0;         ///< usable - weights - reserve (negative when short)
  /// weights + reserve <= usable.
  bool weights_fit() const { return weight_bytes + reserve_bytes <= usable_bytes; }
  /// Weights fit and kv_cache_bytes holds the fit sequence.
  bool sequence_fits() const { return weights_fit() && kv_cache_bytes >= fit_sequence_kv_bytes; }
};

/// The memory rule (see make_deployment) for a replica of `memory_bytes` over `tp_degree`
/// devices keeping `reserve_bytes` for activations; `usable_memory_fraction` from Efficiency.
/// The fit sequence's KV bytes use ModelSpec::kv_cache_bytes_per_token_on_replica. Never throws.
ReplicaMemory replica_memory(int64_t memory_bytes, int64_t reserve_bytes, const ModelSpec& model,
                             WeightFormat weight_format, KvFormat kv_format,
                             double usable_memory_fraction, int tp_degree = 1);

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

/// The deployment at a chosen tensor-parallel degree `tp_degree` that plan::tp_refusal accepts
/// (GPUs: a divisor of num_gpus; CPUs: a divisor of the whole sockets, tp > 1 over the
/// inter-socket link). GPUs: num_gpus / tp replicas of tp GPUs with tp activation reserves,
/// linked by the GPU's interconnect; CPUs: whole sockets / tp replicas of tp whole sockets
/// (each socket's bandwidth and peak FLOP/s per device), linked by the CPU's socket link, one
/// activation reserve per replica, instance memory split evenly. The same memory rule as
/// make_deployment; throws InfeasibleError ("weights need N bytes + R bytes activation reserve
/// + ...") when a replica's memory does not hold the weights and one fit sequence.
Deployment make_deployment_at_tp(const InstanceType& instance, const Catalog& catalog,
                                 const ModelSpec& model, WeightFormat weight_format,
                                 KvFormat kv_format, const Efficiency& efficiency, int tp_degree);

}  // namespace llmcap::model
