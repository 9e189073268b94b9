// Lookups shared by the claim reader (model/claims.cpp) and the audit (model/audit.cpp): ids of
// catalog records as text, a model by id. Private to model/.
#pragma once

#include <string>
#include <vector>

#include "model/hardware.h"
#include "model/model_spec.h"

namespace llmcap::model::audit_lookup {

/// "a, b, c" of the ids of `records`.
template <typename Records>
std::string id_list(const Records& records) {
  std::string out;
  for (const auto& r : records) out += (out.empty() ? "" : ", ") + r.id;
  return out.empty() ? "none" : out;
}

inline std::string known_hardware(const Catalog& catalog) {
  return "known CPUs: " + id_list(catalog.hardware_of_kind(DeviceKind::kCpu)) +
         "; GPUs: " + id_list(catalog.hardware_of_kind(DeviceKind::kGpu)) +
         "; instances: " + id_list(catalog.instances());
}

inline const ModelSpec* find_model(const std::vector<ModelSpec>& models, const std::string& id) {
  for (const ModelSpec& m : models) {
    if (m.id == id) return &m;
  }
  return nullptr;
}

}  // namespace llmcap::model::audit_lookup
