#include "model/json_file.h"

#include <fstream>

#include "model/input_error.h"

namespace llmcap::model {

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot open file");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path.string() + ": malformed JSON: " + e.what());
  }
}

}  // namespace llmcap::model
