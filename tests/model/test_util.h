// Helpers shared by the model tests: fixture paths and temporary files.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace llmcap::model::test_util {

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
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) /
                                    "llmcap_model_tests" /
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

}  // namespace llmcap::model::test_util
