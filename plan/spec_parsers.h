// Readers of the scenario sections kept in their own modules (internal to plan/: JSON stays out
// of the public headers). load_scenario calls them.
#pragma once

#include <filesystem>
#include <nlohmann/json_fwd.hpp>
#include <vector>

#include "plan/scenario.h"
#include "plan/search_spec.h"
#include "plan/tco_spec.h"

namespace llmcap::plan {

/// Reads `root["tco"]` of a scenario file (the default TcoSpec when absent). Throws
/// plan::InputError naming `file`, the field, the value and what was expected. (plan/tco.cpp)
TcoSpec parse_tco_spec(const nlohmann::json& root, const std::filesystem::path& file);

/// Read `root["search"]` / `root["uncertainty"]` of a scenario file (defaults when absent).
/// Throw plan::InputError naming `file`, the field, the value and what was expected.
/// (plan/search.cpp)
SearchSpec parse_search_spec(const nlohmann::json& root, const std::filesystem::path& file);
UncertaintySpec parse_uncertainty_spec(const nlohmann::json& root,
                                       const std::filesystem::path& file);

/// Reads `root["serving"]["speculative"]` of a scenario file (off when absent): its draft
/// model is found as "model" is (a file not found is added to `missing`) and read. Throws
/// plan::InputError naming `file`, the field, the value and what was expected.
/// (plan/speculative_spec.cpp)
SpeculativeSpec parse_speculative_spec(const nlohmann::json& root,
                                       const std::filesystem::path& file,
                                       const std::filesystem::path& data_dir,
                                       std::vector<MissingFile>& missing);

}  // namespace llmcap::plan
