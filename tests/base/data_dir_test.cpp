#include "base/data_dir.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "base/error.h"
#include "test_util.h"

namespace llmcap::base {
namespace {

namespace fs = std::filesystem;
using llmcap::testing::error_message;
using llmcap::testing::TempDir;

/// A fake installed tree under `root`: <root>/bin/llmcap (the path only; nothing runs it) and,
/// when `with_data`, <root>/share/llmcap/data/.
fs::path fake_install(const fs::path& root, bool with_data) {
  fs::create_directories(root / "bin");
  if (with_data) fs::create_directories(root / "share" / "llmcap" / "data");
  return root / "bin" / "llmcap";
}

TEST(FindDataDir, FlagComesFirst) {
  TempDir dir;
  DataDirInputs in{"/some/flag", std::string("/some/env"), fake_install(dir.path(), true)};
  EXPECT_EQ(find_data_dir(in), fs::path("/some/flag"));
}

TEST(FindDataDir, EnvironmentWhenNoFlag) {
  TempDir dir;
  DataDirInputs in{"", std::string("/some/env"), fake_install(dir.path(), true)};
  EXPECT_EQ(find_data_dir(in), fs::path("/some/env"));
}

TEST(FindDataDir, EmptyEnvironmentCountsAsUnset) {
  TempDir dir;
  DataDirInputs in{"", std::string(""), fake_install(dir.path(), true)};
  EXPECT_EQ(find_data_dir(in), dir.path() / "share" / "llmcap" / "data");
}

TEST(FindDataDir, InstalledLayoutBesideTheBinary) {
  TempDir dir;
  DataDirInputs in{"", std::nullopt, fake_install(dir.path() / "prefix", true)};
  EXPECT_EQ(find_data_dir(in), dir.path() / "prefix" / "share" / "llmcap" / "data");
}

TEST(FindDataDir, InstalledLayoutWinsOverABuildTreeMarker) {
  TempDir dir;
  const fs::path exe = fake_install(dir.path(), true);
  fs::create_directories(dir.path() / "src-data");
  std::ofstream(dir.path() / "bin" / kBuildTreeMarker) << (dir.path() / "src-data").string();
  EXPECT_EQ(find_data_dir({"", std::nullopt, exe}), dir.path() / "share" / "llmcap" / "data");
}

TEST(FindDataDir, BuildTreeMarkerTwoFoldersUp) {
  TempDir dir;
  // build/tests/cli/cli_tests reads build/llmcap-source-data-dir.
  const fs::path build = dir.path() / "build";
  fs::create_directories(build / "tests" / "cli");
  fs::create_directories(dir.path() / "src" / "data");
  std::ofstream(build / kBuildTreeMarker) << (dir.path() / "src" / "data").string() << "\n";
  EXPECT_EQ(find_data_dir({"", std::nullopt, build / "tests" / "cli" / "cli_tests"}),
            dir.path() / "src" / "data");
}

TEST(FindDataDir, MarkerThreeFoldersUpIsNotRead) {
  TempDir dir;
  const fs::path build = dir.path() / "build";
  fs::create_directories(build / "a" / "b" / "c");
  fs::create_directories(dir.path() / "data");
  std::ofstream(build / kBuildTreeMarker) << (dir.path() / "data").string();
  const std::string message = error_message<InputError>([&] {
    find_data_dir({"", std::nullopt, build / "a" / "b" / "c" / "llmcap"});
  });
  EXPECT_NE(message.find("no llmcap-source-data-dir in " + (build / "a" / "b" / "c").string() +
                         " or the 2 folders above it"),
            std::string::npos)
      << message;
}

TEST(FindDataDir, ErrorNamesEveryPlaceTried) {
  TempDir dir;
  const fs::path exe = fake_install(dir.path(), false);
  const std::string message = error_message<InputError>([&] {
    find_data_dir({"", std::nullopt, exe});
  });
  const fs::path bin = dir.path() / "bin";
  EXPECT_EQ(message, "no data folder (--data-dir not given; $LLMCAP_DATA_DIR not set; " +
                         (bin / "../share/llmcap/data").string() +
                         ": no such folder; no llmcap-source-data-dir in " + bin.string() +
                         " or the 2 folders above it); expected --data-dir DIR, "
                         "$LLMCAP_DATA_DIR or an installed <prefix>/share/llmcap/data beside "
                         "<prefix>/bin");
}

TEST(FindDataDir, MarkerNamingAMissingFolderIsAnError) {
  TempDir dir;
  const fs::path exe = fake_install(dir.path(), false);
  std::ofstream(dir.path() / "bin" / kBuildTreeMarker) << "/moved/source/data\n";
  const std::string message = error_message<InputError>([&] {
    find_data_dir({"", std::nullopt, exe});
  });
  EXPECT_NE(message.find((dir.path() / "bin" / kBuildTreeMarker).string() +
                         ": names \"/moved/source/data\", not a folder"),
            std::string::npos)
      << message;
}

TEST(FindDataDir, UnknownExecutableIsAnError) {
  const std::string message = error_message<InputError>([&] {
    find_data_dir({"", std::nullopt, fs::path()});
  });
  EXPECT_NE(message.find("the executable's path is unknown"), std::string::npos) << message;
}

TEST(CurrentExecutable, IsThisTestBinary) {
  const fs::path exe = current_executable();
  EXPECT_EQ(exe.filename(), "base_tests");
  EXPECT_TRUE(fs::exists(exe)) << exe;
}

TEST(FindDataDir, ThisBuildTreeFindsTheSourceData) {
  // The test binary runs from the build tree: its marker names the source tree's data/.
  EXPECT_EQ(fs::weakly_canonical(find_data_dir({"", std::nullopt, current_executable()})),
            fs::weakly_canonical(llmcap::testing::data_dir()));
}

}  // namespace
}  // namespace llmcap::base
