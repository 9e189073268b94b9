#include "model/deployment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "base/text.h"
#include "model/input_error.h"

namespace llmcap::model {

int socket_threads_of(const InstanceType& instance, const HardwareSpec& cpu) {
  return instance.vcpus_per_socket > 0 ? instance.vcpus_per_socket
                                       : cpu.num_cores * cpu.threads_per_core;
}

int whole_sockets_of(const InstanceType& instance, const HardwareSpec& cpu) {
  const int threads = socket_threads_of(instance, cpu);
  return threads > 0 && instance.vcpus >= threads ? instance.vcpus / threads : 0;
}

ReplicaMemory replica_memory(int64_t memory_bytes, int64_t reserve_bytes, const ModelSpec& model,
                             WeightFormat weight_format, KvFormat kv_format,
                             double usable_memory_fraction, int tp_degree) {
  ReplicaMemory r;
  r.memory_bytes = memory_bytes;
  r.usable_bytes = std::llround(usable_memory_fraction * static_cast<double>(memory_bytes));
  r.weight_bytes = model.weight_bytes(weight_format);
  r.reserve_bytes = reserve_bytes;
  r.fit_sequence_tokens = std::min(model.max_position_embeddings, kMaxFitSequenceTokens);
  r.fit_sequence_kv_bytes =
      r.fit_sequence_tokens * model.kv_cache_bytes_per_token_on_replica(kv_format, tp_degree);
  r.kv_cache_bytes = r.usable_bytes - r.weight_bytes - reserve_bytes;
  return r;
}

namespace {

using base::gb;  // decimal gigabytes for text, e.g. 141107412992 -> "141.1 GB"
using base::gb_per_s;
using base::plural;

std::string fraction_text(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", f);
  return buf;
}

std::string percent(double f) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * f);
  return buf;
}

/// The weights-do-not-fit message of both deployments; `has` says what the replica has.
std::string weights_do_not_fit(const std::string& where, const std::string& has,
                               const ReplicaMemory& r, WeightFormat wf) {
  return where + ": weights need " + gb(r.weight_bytes) + " (" + std::string(to_string(wf)) +
         "), " + has + " and keeps " + gb(r.reserve_bytes) + " for activations";
}

/// Memory check of one replica of make_deployment; throws InfeasibleError with the numbers
/// (decimal GB, 4 significant digits). `where` names model and instance; `of` describes the
/// memory (e.g. "instance", "tp=2 replica").
int64_t kv_bytes_or_throw(const std::string& where, const std::string& of, int64_t memory_bytes,
                          int64_t reserve_bytes, const ModelSpec& model, WeightFormat wf,
                          KvFormat kf, const Efficiency& e, int tp_degree) {
  const ReplicaMemory r = replica_memory(memory_bytes, reserve_bytes, model, wf, kf,
                                         e.usable_memory_fraction, tp_degree);
  const std::string has = of + " has " + gb(r.usable_bytes) + " usable (" +
                          fraction_text(e.usable_memory_fraction) + " x " + gb(memory_bytes) + ")";
  if (!r.weights_fit()) throw InfeasibleError(weights_do_not_fit(where, has, r, wf));
  if (!r.sequence_fits()) {
    throw InfeasibleError(
        where + ": weights need " + gb(r.weight_bytes) + " (" + std::string(to_string(wf)) +
        ") + " + gb(reserve_bytes) + " activation reserve + " + gb(r.fit_sequence_kv_bytes) +
        " of " + std::string(to_string(kf)) + " KV cache for one " +
        std::to_string(r.fit_sequence_tokens) + "-token sequence = " +
        gb(r.weight_bytes + reserve_bytes + r.fit_sequence_kv_bytes) + ", " + has);
  }
  return r.kv_cache_bytes;
}

/// The same check for make_deployment_at_tp, in its shorter wording (kept as the planner
/// has always reported a chosen degree).
int64_t chosen_tp_kv_bytes_or_throw(const std::string& where, const std::string& of,
                                    int64_t memory_bytes, int64_t reserve_bytes,
                                    const ModelSpec& model, WeightFormat wf, KvFormat kf,
                                    const Efficiency& e, int tp_degree) {
  const ReplicaMemory r = replica_memory(memory_bytes, reserve_bytes, model, wf, kf,
                                         e.usable_memory_fraction, tp_degree);
  const std::string has = of + " has " + gb(r.usable_bytes) + " usable";
  if (!r.weights_fit()) throw InfeasibleError(weights_do_not_fit(where, has, r, wf));
  if (!r.sequence_fits()) {
    throw InfeasibleError(where + ": weights need " + gb(r.weight_bytes) + " + " +
                          gb(reserve_bytes) + " activation reserve + " +
                          gb(r.fit_sequence_kv_bytes) + " of KV cache for one " +
                          std::to_string(r.fit_sequence_tokens) + "-token sequence, " + has);
  }
  return r.kv_cache_bytes;
}

}  // namespace

Deployment make_deployment(const InstanceType& instance, const Catalog& catalog,
                           const ModelSpec& model, WeightFormat weight_format, KvFormat kv_format,
                           const Efficiency& efficiency) {
  const std::string context = "instance \"" + instance.id + "\"";
  const std::string where = "model \"" + model.id + "\" on instance \"" + instance.id + "\"";
  Deployment d;
  d.kind = instance.kind;
  d.weight_bytes = model.weight_bytes(weight_format);

  if (instance.kind == DeviceKind::kGpu) {
    const HardwareSpec& gpu = catalog.hardware(instance.gpu_id, context);
    if (gpu.kind != DeviceKind::kGpu) {
      throw InputError(context + ": field \"gpu\": expected the id of a GPU, got \"" +
                       instance.gpu_id + "\" (a CPU)");
    }
    if (instance.num_gpus < 1) {
      throw InputError(context + ": field \"num_gpus\": expected a positive integer, got " +
                       std::to_string(instance.num_gpus));
    }
    // Powers of two dividing num_gpus, smallest first.
    std::vector<int> candidates;
    for (int tp = 1; instance.num_gpus % tp == 0; tp *= 2) candidates.push_back(tp);
    for (std::size_t k = 0; k < candidates.size(); ++k) {
      const int tp = candidates[k];
      const int64_t memory = tp * gpu.memory_bytes;
      const std::string of = tp == instance.num_gpus
                                 ? "instance"
                                 : "a tp=" + std::to_string(tp) + " replica (of " +
                                       std::to_string(instance.num_gpus) + " GPUs)";
      try {
        d.kv_cache_bytes = kv_bytes_or_throw(where, of, memory, tp * kActivationReserveBytes, model,
                                             weight_format, kv_format, efficiency, tp);
      } catch (const InfeasibleError&) {
        if (k + 1 == candidates.size()) throw;
        continue;
      }
      d.tp_degree = tp;
      d.num_replicas = instance.num_gpus / tp;
      d.memory_bytes = memory;
      d.memory_bandwidth_bytes_per_s = gpu.peak_memory_bandwidth_bytes_per_s;
      d.peak_flops_per_s = gpu.peak_flops_per_s;
      d.link_bandwidth_bytes_per_s = tp > 1 ? gpu.interconnect_bandwidth_bytes_per_s : 0.0;
      d.rule = std::to_string(tp) + " of " + std::to_string(instance.num_gpus) + " " + gpu.name +
               " GPUs per replica (tp=" + std::to_string(tp) + "), " +
               std::to_string(d.num_replicas) + (d.num_replicas == 1 ? " replica" : " replicas") +
               ": " + gb_per_s(gpu.peak_memory_bandwidth_bytes_per_s) + " and " +
               gb(gpu.memory_bytes) + " per GPU";
      return d;
    }
  }

  // CPU instance.
  const HardwareSpec& cpu = catalog.hardware(instance.cpu_id, context);
  if (cpu.kind != DeviceKind::kCpu) {
    throw InputError(context + ": field \"cpu\": expected the id of a CPU, got \"" +
                     instance.cpu_id + "\" (a GPU)");
  }
  const int socket_threads = socket_threads_of(instance, cpu);
  if (socket_threads < 1 || instance.vcpus < 1) {
    throw InputError(context + ": expected positive vcpus and CPU threads, got vcpus " +
                     std::to_string(instance.vcpus) + " and " + std::to_string(socket_threads) +
                     " threads per socket of \"" + cpu.id + "\"");
  }
  double share = 1.0;
  if (instance.vcpus >= socket_threads) {
    d.num_replicas = instance.vcpus / socket_threads;
  } else {
    d.num_replicas = 1;
    share = static_cast<double>(instance.vcpus) / socket_threads;
  }
  d.tp_degree = 1;
  d.memory_bytes = instance.memory_bytes / d.num_replicas;
  d.memory_bandwidth_bytes_per_s = share * cpu.peak_memory_bandwidth_bytes_per_s;
  for (const auto& [dtype, flops] : cpu.peak_flops_per_s) d.peak_flops_per_s[dtype] = share * flops;
  d.link_bandwidth_bytes_per_s = 0;
  const std::string of = d.num_replicas == 1
                             ? "instance"
                             : "a replica (1/" + std::to_string(d.num_replicas) + " of instance)";
  d.kv_cache_bytes = kv_bytes_or_throw(where, of, d.memory_bytes, kActivationReserveBytes, model,
                                       weight_format, kv_format, efficiency, 1);
  if (share < 1.0) {
    d.rule = "slice of " + std::to_string(instance.vcpus) + "/" + std::to_string(socket_threads) +
             " vCPUs of one " + cpu.name + " socket: " + percent(share) + " of " +
             gb_per_s(cpu.peak_memory_bandwidth_bytes_per_s) + " and of peak FLOP/s, 1 replica, " +
             gb(d.memory_bytes) + " memory";
  } else {
    d.rule = std::to_string(d.num_replicas) +
             (d.num_replicas == 1 ? " replica on one whole " : " replicas, one per whole ") +
             cpu.name + " socket (" + std::to_string(socket_threads) + " of " +
             std::to_string(instance.vcpus) +
             " vCPUs each): " + gb_per_s(cpu.peak_memory_bandwidth_bytes_per_s) + " and " +
             gb(d.memory_bytes) + " memory each";
  }
  return d;
}

Deployment make_deployment_at_tp(const InstanceType& instance, const Catalog& catalog,
                                 const ModelSpec& model, WeightFormat weight_format,
                                 KvFormat kv_format, const Efficiency& efficiency, int tp_degree) {
  const std::string where = "model \"" + model.id + "\" on instance \"" + instance.id + "\"";
  Deployment d;
  d.kind = instance.kind;
  d.tp_degree = tp_degree;
  d.weight_bytes = model.weight_bytes(weight_format);
  if (instance.kind == DeviceKind::kGpu) {
    const HardwareSpec& gpu = catalog.hardware(instance.gpu_id, instance.id);
    d.num_replicas = instance.num_gpus / tp_degree;
    d.memory_bytes = tp_degree * gpu.memory_bytes;
    d.kv_cache_bytes =
        chosen_tp_kv_bytes_or_throw(where, "a tp=" + std::to_string(tp_degree) + " replica",
                                    d.memory_bytes, tp_degree * kActivationReserveBytes, model,
                                    weight_format, kv_format, efficiency, tp_degree);
    d.memory_bandwidth_bytes_per_s = gpu.peak_memory_bandwidth_bytes_per_s;
    d.peak_flops_per_s = gpu.peak_flops_per_s;
    d.link_bandwidth_bytes_per_s = tp_degree > 1 ? gpu.interconnect_bandwidth_bytes_per_s : 0.0;
    d.rule =
        std::to_string(tp_degree) + " of " + std::to_string(instance.num_gpus) + " " + gpu.name +
        " GPUs per replica (tp=" + std::to_string(tp_degree) + ", chosen), " +
        plural(d.num_replicas, "replica") + ": " + gb_per_s(gpu.peak_memory_bandwidth_bytes_per_s) +
        " and " + gb(gpu.memory_bytes) + " per GPU" +
        (tp_degree > 1
             ? ", all-reduce over " + gb_per_s(gpu.interconnect_bandwidth_bytes_per_s) + " links"
             : "");
    return d;
  }
  const HardwareSpec& cpu = catalog.hardware(instance.cpu_id, instance.id);
  const int sockets = whole_sockets_of(instance, cpu);
  d.num_replicas = sockets / tp_degree;
  d.memory_bytes = instance.memory_bytes / d.num_replicas;
  d.kv_cache_bytes = chosen_tp_kv_bytes_or_throw(
      where, d.num_replicas == 1 ? "instance" : "a tp=" + std::to_string(tp_degree) + " replica",
      d.memory_bytes, kActivationReserveBytes, model, weight_format, kv_format, efficiency,
      tp_degree);
  d.memory_bandwidth_bytes_per_s = cpu.peak_memory_bandwidth_bytes_per_s;
  d.peak_flops_per_s = cpu.peak_flops_per_s;
  d.link_bandwidth_bytes_per_s = cpu.socket_link_bandwidth_bytes_per_s;
  char latency[64];
  std::snprintf(latency, sizeof latency, "%.3g us", cpu.socket_link_latency_s * 1e6);
  d.rule = (d.num_replicas == 1 ? std::string("1 replica over ")
                                : std::to_string(d.num_replicas) + " replicas, each over ") +
           std::to_string(tp_degree) + " whole " + cpu.name +
           " sockets (tp=" + std::to_string(tp_degree) + ", " +
           std::to_string(socket_threads_of(instance, cpu)) + " of " +
           std::to_string(instance.vcpus) +
           " vCPUs per socket): " + gb_per_s(cpu.peak_memory_bandwidth_bytes_per_s) +
           " and peak FLOP/s per socket, all-reduce over the inter-socket link at " +
           gb_per_s(cpu.socket_link_bandwidth_bytes_per_s) + ", " + latency + " per crossing; " +
           gb(d.memory_bytes) + " memory" + (d.num_replicas == 1 ? "" : " each");
  return d;
}

}  // namespace llmcap::model
