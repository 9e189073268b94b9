// Fuzzes model::load_engine_profile (data/engines/*.json): load or model::InputError. The file
// is named after the input's "id" when that is a plain name, since the reader wants the two
// to agree.
#include <cctype>
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_util.h"
#include "model/engine_profile.h"
#include "model/input_error.h"

namespace {

std::string file_name(const uint8_t* data, size_t size) {
  const nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, false);
  if (!doc.is_object() || !doc.contains("id") || !doc["id"].is_string()) return "engine.json";
  const std::string id = doc["id"].get<std::string>();
  if (id.empty() || id.size() > 64 || id[0] == '.') return "engine.json";
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return "engine.json";
    }
  }
  return id + ".json";
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = llmcap::fuzz::write_input(data, size, file_name(data, size));
  try {
    llmcap::model::load_engine_profile(path);
  } catch (const llmcap::model::InputError&) {
  }
  std::filesystem::remove(path);
  return 0;
}
