#include "plan/candidates.h"

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
  for (const auto& id : scenario.candidates) {
    const model::InstanceType* i = catalog.find_instance(id);
    if (i == nullptr) {
      std::string known;
      for (const auto& k : catalog.instances()) known += (known.empty() ? "" : ", ") + k.id;
      throw base::InputError::refused_field(
          scenario.file.string(), "candidates",
          "unknown instance type \"" + id + "\"; known: " + known);
    }
    candidates.push_back(i);
  }
  return candidates;
}

}  // namespace llmcap::plan
