// How a scenario's file fields ("model", "workload.lengths_path", "workload.path") name files:
// by id (a file the data folder ships) or by path, relative to the scenario's folder
// (docs/scenarios.md, "Files: ids and paths").
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace llmcap::plan {

/// What a file field names, which decides the data-folder subfolders an id is looked up in.
enum class ScenarioFileKind {
  kModel,    ///< "model": <data-dir>/models/<id>.json, then <data-dir>/models/families/<id>.json
  kLengths,  ///< "lengths_path": <data-dir>/workloads/<id>.json, then <data-dir>/traces/<id>
  kTrace,    ///< a trace's "path": <data-dir>/traces/<id> (traces are not shipped)
};

/// Where a file field's value led.
struct ScenarioFileLookup {
  /// The first place looked that exists (a file or anything else: a folder is refused later by
  /// the reader, with its own message); when none exists, the first place looked.
  std::filesystem::path path;
  bool found = false;
  std::vector<std::filesystem::path> looked;  ///< every place looked, in order
};

/// The places `value` is looked for, in order, the first that exists being taken:
///   1. an absolute `value`: itself, and nothing else;
///   2. `scenario_dir / value` (a path relative to the scenario's folder; the rule of every
///      scenario written before ids existed, hence first);
///   3. when `value` is a bare name (no '/') and `data_dir` is not empty: the id folders of
///      `kind` under `data_dir`, with ".json" appended to the name in models/, workloads/ and
///      families/ unless it already ends in ".json" (trace ids are whole file names).
/// Touches the file system only to test existence. `value` must not be empty.
ScenarioFileLookup find_scenario_file(const std::string& value, ScenarioFileKind kind,
                                      const std::filesystem::path& scenario_dir,
                                      const std::filesystem::path& data_dir);

/// What a kind of file field expects, for messages, e.g. `a model id (<id>.json in
/// <data-dir>/models/ or models/families/) or the path of a model file (relative: to the
/// scenario's folder)`.
std::string expected_scenario_file(ScenarioFileKind kind);

}  // namespace llmcap::plan
