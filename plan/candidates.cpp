#include "plan/candidates.h"

#include <algorithm>
#include <string>

#include "base/error.h"

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

}  // namespace llmcap::plan
