// Internal to the readers of model/ (not a public header): one JSON file read with errors that
// name it.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>

namespace llmcap::model {

/// Parses the JSON file at `path`. Throws InputError "<path>: cannot open file" or
/// "<path>: malformed JSON: <parser message>".
nlohmann::json read_json_file(const std::filesystem::path& path);

}  // namespace llmcap::model
