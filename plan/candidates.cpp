#include "plan/candidates.h"

#include <algorithm>
#include <string>

#include "base/error.h"
#include "base/text.h"
#include "model/input_error.h"

namespace llmcap::plan {

std::vector<const model::InstanceType*> resolve_candidates(const Scenario& scenario,
                                                           const model::Catalog& catalog) {
  std::vector<const model::InstanceType*> candidates;
  if (scenario.fleet) return candidates;  // evaluated as one row
  if (scenario.candidates.empty()) {
    for (const auto& i : catalog.instances()) {
      if (!scenario.candidate_kind || i.kind == *scenario.candidate_kind) candidates.push_back(&i);
    }
    return candidates;
  }
  auto add = [&](const model::InstanceType* i) {
    if (std::find(candidates.begin(), candidates.end(), i) == candidates.end()) {
      candidates.push_back(i);
    }
  };
  for (const auto& id : scenario.candidates) {
    if (id == "cpu" || id == "gpu") {  // every type of that device kind, in catalog order
      const model::DeviceKind kind =
          id == "cpu" ? model::DeviceKind::kCpu : model::DeviceKind::kGpu;
      for (const auto& i : catalog.instances()) {
        if (i.kind == kind) add(&i);
      }
      continue;
    }
    const model::InstanceType* i = catalog.find_instance(id);
    if (i == nullptr) {
      std::string known;
      for (const auto& k : catalog.instances()) known += (known.empty() ? "" : ", ") + k.id;
      throw base::InputError::refused_field(
          scenario.file.string(), "candidates",
          "unknown instance type \"" + id + "\"; known: " + known);
    }
    add(i);
  }
  return candidates;
}

namespace detail {

void check_kv_offload(const Scenario& sc, const model::Catalog& catalog) {
  if (sc.kv_offload_bytes <= 0) return;
  const std::string field = "serving.kv_offload_bytes";
  const auto too_large = [&](const model::InstanceType& instance, bool every_candidate) {
    return InputError::refused_field(
        sc.file.string(), field,
        base::describe(static_cast<double>(sc.kv_offload_bytes)) + " bytes (" +
            base::gb(static_cast<double>(sc.kv_offload_bytes)) +
            ") are more than the host memory of " +
            (every_candidate ? "every GPU candidate (the largest: instance \"" : "instance \"") +
            instance.id + "\" (" + base::gb(static_cast<double>(instance.memory_bytes)) +
            ", memory_bytes in " + (catalog.data_dir() / "instances" / "instances.json").string() +
            ")" + (every_candidate ? ")" : "") + "; expected at most that");
  };
  const auto check_host_link = [&](const model::InstanceType& instance) {
    const model::HardwareSpec& gpu = catalog.hardware(instance.gpu_id, instance.id);
    if (!(gpu.host_link_bandwidth_bytes_per_s > 0)) {
      throw InputError::refused_field(sc.file.string(), field,
                                      "GPU \"" + gpu.id + "\" of instance \"" + instance.id +
                                          "\" has no host_link in " +
                                          (catalog.data_dir() / "hardware" / "gpus.json").string() +
                                          "; expected its host link bandwidth to price the loads");
    }
  };
  // A fleet group's type is the scenario's choice: refused when its host is too small for a
  // tier it would use (on a GPU, with prefix caching: kv_offload_for).
  if (sc.fleet) {
    for (const FleetGroupSpec& g : sc.fleet->groups) {
      const model::InstanceType& instance =
          catalog.instance(g.instance, sc.file.string() + ": " + g.field);
      if (instance.kind != model::DeviceKind::kGpu || !g.serving.prefix_caching) continue;
      if (sc.kv_offload_bytes > instance.memory_bytes) throw too_large(instance, false);
      check_host_link(instance);
    }
    return;
  }
  // Candidates: a type whose host is too small is an infeasible row (make_candidate); refused
  // only when that is every GPU candidate that would use the tier (prefix caching on, as its
  // engine or the scenario sets it): the tier then applies nowhere.
  const model::InstanceType* largest = nullptr;
  int num_gpu = 0;
  bool any_fits = false;
  for (const model::InstanceType* instance : resolve_candidates(sc, catalog)) {
    if (instance->kind != model::DeviceKind::kGpu ||
        !serving_for(sc, *instance, catalog).prefix_caching) {
      continue;
    }
    ++num_gpu;
    check_host_link(*instance);
    any_fits = any_fits || sc.kv_offload_bytes <= instance->memory_bytes;
    if (largest == nullptr || instance->memory_bytes > largest->memory_bytes) largest = instance;
  }
  if (largest != nullptr && !any_fits) throw too_large(*largest, num_gpu > 1);
}

}  // namespace detail

}  // namespace llmcap::plan
