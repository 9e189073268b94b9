#include "base/data_dir.h"

#include <cstdlib>
#include <fstream>
#include <string>
#include <system_error>
#include <vector>

#include "base/error.h"

namespace llmcap::base {
namespace {

namespace fs = std::filesystem;

bool is_folder(const fs::path& p) {
  std::error_code ec;
  return fs::is_directory(p, ec);
}

/// The first line of `file` less trailing white space and carriage return ("" when unreadable).
std::string first_line(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ' || line.back() == '\t')) {
    line.pop_back();
  }
  return line;
}

/// The one-line error when no rule applies: every place tried, then what would do.
[[noreturn]] void fail(const std::vector<std::string>& tried) {
  std::string text;
  for (const std::string& t : tried) text += (text.empty() ? "" : "; ") + t;
  throw InputError("no data folder (" + text + "); expected --data-dir DIR, $" + kDataDirEnv +
                   " or an installed <prefix>/share/llmcap/data beside <prefix>/bin");
}

}  // namespace

fs::path find_data_dir(const DataDirInputs& inputs) {
  if (!inputs.flag.empty()) return inputs.flag;
  if (inputs.env && !inputs.env->empty()) return *inputs.env;
  std::vector<std::string> tried = {"--data-dir not given",
                                    std::string("$") + kDataDirEnv + " not set"};
  if (inputs.executable.empty()) {
    tried.push_back("the executable's path is unknown (no /proc/self/exe)");
    fail(tried);
  }
  const fs::path exe_dir = inputs.executable.parent_path();
  const fs::path installed = exe_dir / kInstalledDataDir;
  if (is_folder(installed)) return installed.lexically_normal();
  tried.push_back(installed.string() + ": no such folder");
  fs::path dir = exe_dir;
  for (int up = 0; up <= kBuildTreeMarkerDepth; ++up) {
    const fs::path marker = dir / kBuildTreeMarker;
    std::error_code ec;
    if (fs::is_regular_file(marker, ec)) {
      const std::string named = first_line(marker);
      if (!named.empty() && is_folder(named)) return named;
      tried.push_back(marker.string() + ": names \"" + named + "\", not a folder");
      fail(tried);
    }
    if (!dir.has_relative_path()) break;  // the root: nothing above
    dir = dir.parent_path();
  }
  tried.push_back(std::string("no ") + kBuildTreeMarker + " in " + exe_dir.string() + " or the " +
                  std::to_string(kBuildTreeMarkerDepth) + " folders above it");
  fail(tried);
}

fs::path current_executable() {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : exe;
}

fs::path find_data_dir(const std::string& flag) {
  DataDirInputs inputs;
  inputs.flag = flag;
  if (const char* env = std::getenv(kDataDirEnv); env != nullptr) inputs.env = env;
  inputs.executable = current_executable();
  return find_data_dir(inputs);
}

}  // namespace llmcap::base
