// Small helpers shared by the test suites: a scratch folder and file writing.
#pragma once

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace llmcap::testing {

/// A fresh folder under the system temp dir, removed (with its contents) on destruction.
class TempDir {
 public:
  TempDir() {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("llmcap-test-" + std::to_string(rd()) + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  /// Writes `contents` to `name` inside the folder and returns its full path.
  std::filesystem::path write(const std::string& name, const std::string& contents) const {
    const auto p = path_ / name;
    std::ofstream(p, std::ios::binary) << contents;
    return p;
  }

 private:
  std::filesystem::path path_;
};

/// The repository's data/ folder (compiled in by tests/CMakeLists.txt).
inline std::filesystem::path data_dir() { return LLMCAP_DATA_DIR; }

}  // namespace llmcap::testing
