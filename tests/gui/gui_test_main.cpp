// GoogleTest main for the GUI tests: an offscreen QApplication, and a scratch folder for the
// results database ($LLMCAP_DB) and settings ($XDG_CONFIG_HOME), so that no test touches the
// user's home.
#include <gtest/gtest.h>

#include <QApplication>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>

int main(int argc, char** argv) {
  if (std::getenv("QT_QPA_PLATFORM") == nullptr) setenv("QT_QPA_PLATFORM", "offscreen", 1);
  std::random_device rd;
  const std::filesystem::path scratch =
      std::filesystem::temp_directory_path() / ("llmcap-gui-test-" + std::to_string(rd()));
  std::filesystem::create_directories(scratch / "config");
  setenv("LLMCAP_DB", (scratch / "runs.sqlite").c_str(), 1);
  setenv("XDG_CONFIG_HOME", (scratch / "config").c_str(), 1);
  setenv("XDG_DATA_HOME", (scratch / "data").c_str(), 1);
  ::testing::InitGoogleTest(&argc, argv);
  QApplication app(argc, argv);
  QCoreApplication::setOrganizationName("llmcap-test");
  QCoreApplication::setApplicationName("llmcap-gui-test");
  const int rc = RUN_ALL_TESTS();
  std::error_code ignored;
  std::filesystem::remove_all(scratch, ignored);
  return rc;
}
