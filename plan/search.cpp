#include "plan/search.h"

#include <nlohmann/json.hpp>

#include "plan/scenario.h"
#include "plan/spec_parsers.h"

namespace llmcap::plan {

SearchSpec parse_search_spec(const nlohmann::json& root, const std::filesystem::path& file) {
  if (root.contains("search")) {
    throw InputError(file.string() + ": field \"search\": not supported yet");
  }
  return {};
}

UncertaintySpec parse_uncertainty_spec(const nlohmann::json& root,
                                       const std::filesystem::path& file) {
  if (root.contains("uncertainty")) {
    throw InputError(file.string() + ": field \"uncertainty\": not supported yet");
  }
  return {};
}

}  // namespace llmcap::plan
