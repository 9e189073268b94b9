#include "plan/tco.h"

#include <nlohmann/json.hpp>

#include "plan/scenario.h"
#include "plan/spec_parsers.h"

namespace llmcap::plan {

TcoSpec parse_tco_spec(const nlohmann::json& root, const std::filesystem::path& file) {
  if (root.contains("tco")) {
    throw InputError(file.string() + ": field \"tco\": not supported yet");
  }
  return {};
}

}  // namespace llmcap::plan
