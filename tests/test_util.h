// Helpers shared by the test suites: fixture paths, scratch folders and file editing.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
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

#ifdef LLMCAP_SHARED_DATA_DIR
/// The public traces beside the repository (../shared/data/traces/: the Azure 2023, Vidur,
/// ShareGPT and arXiv files named in its SOURCES.md), which llmcap does not ship.
inline std::filesystem::path shared_traces_dir() {
  return std::filesystem::path(LLMCAP_SHARED_DATA_DIR) / "traces";
}

/// In a test body: skips the test, with a note naming the file and where it comes from, when
/// the public trace `name` is not in shared_traces_dir().
#define LLMCAP_SKIP_WITHOUT_SHARED_TRACE(name)                                            \
  if (!std::filesystem::exists(::llmcap::testing::shared_traces_dir() / (name)))          \
  GTEST_SKIP() << (::llmcap::testing::shared_traces_dir() / (name)).string()              \
               << " is absent: the public traces are not part of llmcap (docs/traces.md " \
                  "says where to download them); with ../shared/data/traces/ beside the " \
                  "repository this test runs"
#endif

/// A file of this suite's fixtures (tests/<suite>/data/<relative>).
inline std::filesystem::path test_data(const std::string& relative) {
  return std::filesystem::path(LLMCAP_TEST_DATA_DIR) / relative;
}

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

/// A fresh, empty directory under gtest's temp dir, named after the running test.
inline std::filesystem::path fresh_temp_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "llmcap_tests" /
                                    (std::string(info->test_suite_name()) + "." + info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

inline void write_text(const std::filesystem::path& path, const std::string& text) {
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path) << text;
}

/// `text` with the single occurrence of `from` replaced by `to`; fails the test if `from` does
/// not occur exactly once.
inline std::string replace_once(const std::string& text, const std::string& from,
                                const std::string& to) {
  const auto pos = text.find(from);
  EXPECT_NE(pos, std::string::npos) << "fixture text lacks: " << from;
  if (pos == std::string::npos) return text;
  EXPECT_EQ(text.find(from, pos + 1), std::string::npos) << "fixture text repeats: " << from;
  std::string out = text;
  out.replace(pos, from.size(), to);
  return out;
}

/// The message of the `E` thrown by `f`; fails the test (and returns "") if none is thrown.
template <typename E, typename F>
std::string error_message(F&& f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return "";
}

}  // namespace llmcap::testing
