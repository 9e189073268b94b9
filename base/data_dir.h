// Where the shipped data (catalogs, models, workloads, scenarios) is found: the one rule the CLI
// and the GUI share (docs/scenarios.md, "Where data is found").
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace llmcap::base {

/// The environment variable that names the data folder when no --data-dir is given.
inline constexpr const char* kDataDirEnv = "LLMCAP_DATA_DIR";

/// The installed data folder relative to the folder of the executable: `<prefix>/bin/llmcap`
/// reads `<prefix>/share/llmcap/data`.
inline constexpr const char* kInstalledDataDir = "../share/llmcap/data";

/// The file CMake writes at the top of a build tree (configure time) holding one line, the
/// absolute path of the source tree's data/ folder. It is never installed, so an installed
/// binary cannot read data from the tree it was built in.
inline constexpr const char* kBuildTreeMarker = "llmcap-source-data-dir";

/// How many folders above the executable's own folder the build-tree marker is looked for
/// (build/cli/llmcap and build/tests/cli/cli_tests both reach build/).
inline constexpr int kBuildTreeMarkerDepth = 2;

/// The inputs of the data-folder rule, given separately so that tests can set each one.
struct DataDirInputs {
  std::string flag;                  ///< --data-dir as given ("" when not given)
  std::optional<std::string> env;    ///< $LLMCAP_DATA_DIR (nullopt or "" when unset)
  std::filesystem::path executable;  ///< the running executable (empty when unknown)
};

/// The data folder, the first of:
///   1. `flag`, when not empty (taken as given: a wrong folder fails where a file is read);
///   2. `env`, when set and not empty (likewise);
///   3. `<folder of executable>/../share/llmcap/data`, when that folder exists (installed);
///   4. the path in the build-tree marker (kBuildTreeMarker) found in the executable's folder or
///      up to kBuildTreeMarkerDepth folders above it, when the folder it names exists (a binary
///      run from its build tree).
/// Throws base::InputError, one line naming every place tried, when none applies, e.g.
/// `no data folder (--data-dir not given; $LLMCAP_DATA_DIR not set; /opt/x/bin/../share/llmcap/
/// data: no such folder; no llmcap-source-data-dir in /opt/x/bin or the 2 folders above it);
/// expected --data-dir DIR, $LLMCAP_DATA_DIR or an installed <prefix>/share/llmcap/data beside
/// <prefix>/bin`. A marker naming a folder that does not exist stops the search there (its
/// message says so).
std::filesystem::path find_data_dir(const DataDirInputs& inputs);

/// The running executable (read_symlink of /proc/self/exe), or an empty path when it cannot be
/// read (no /proc).
std::filesystem::path current_executable();

/// find_data_dir with $LLMCAP_DATA_DIR read from the environment and the running executable.
std::filesystem::path find_data_dir(const std::string& flag);

}  // namespace llmcap::base
