#include "plan/scenario_files.h"

#include <system_error>
#include <utility>

namespace llmcap::plan {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

/// The id folders of `kind` (relative to the data folder) and whether an id there is
/// `<id>.json`.
std::vector<std::pair<fs::path, bool>> id_folders(ScenarioFileKind kind) {
  switch (kind) {
    case ScenarioFileKind::kModel:
      return {{"models", true}, {fs::path("models") / "families", true}};
    case ScenarioFileKind::kLengths:
      return {{"workloads", true}, {"traces", false}};
    case ScenarioFileKind::kTrace:
      return {{"traces", false}};
  }
  return {};
}

}  // namespace

ScenarioFileLookup find_scenario_file(const std::string& value, ScenarioFileKind kind,
                                      const fs::path& scenario_dir, const fs::path& data_dir) {
  ScenarioFileLookup out;
  const fs::path given(value);
  if (given.is_absolute()) {
    out.looked.push_back(given);
  } else {
    out.looked.push_back(scenario_dir / given);
    const bool bare = value.find('/') == std::string::npos && value != "." && value != "..";
    if (bare && !data_dir.empty()) {
      for (const auto& [folder, json] : id_folders(kind)) {
        const std::string name = json && !ends_with(value, ".json") ? value + ".json" : value;
        out.looked.push_back(data_dir / folder / name);
      }
    }
  }
  for (const fs::path& p : out.looked) {
    std::error_code ec;
    if (fs::exists(p, ec)) {
      out.path = p;
      out.found = true;
      return out;
    }
  }
  out.path = out.looked.front();
  return out;
}

std::string expected_scenario_file(ScenarioFileKind kind) {
  const std::string relative = " (relative: to the scenario's folder)";
  switch (kind) {
    case ScenarioFileKind::kModel:
      return "a model id (<id>.json in <data-dir>/models/ or models/families/) or the path of a "
             "model file" +
             relative;
    case ScenarioFileKind::kLengths:
      return "a length model id (<id>.json in <data-dir>/workloads/) or the path of a lengths "
             "file" +
             relative;
    case ScenarioFileKind::kTrace:
      return "a trace file name in <data-dir>/traces/ or the path of a trace file" + relative;
  }
  return "";
}

}  // namespace llmcap::plan
