// A shipped scenario copied elsewhere plans from any folder (issue 30, item 5): its model and
// workload are named by id and found in the data folder; the data folder is found without
// --data-dir from the build tree (base/data_dir.h); a file found nowhere is one error line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "cli/cli.h"
#include "run_cli.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

namespace fs = std::filesystem;
using llmcap::cli::testing::CliRun;
using llmcap::cli::testing::run_cli;
using llmcap::testing::data_dir;
using llmcap::testing::read_text;
using llmcap::testing::replace_once;
using llmcap::testing::TempDir;
using llmcap::testing::write_text;
using ::testing::HasSubstr;
using ::testing::StartsWith;

/// The default scenario (data/scenarios/chat-llama3.1-8b.json) as shipped, made small enough to
/// plan in a test: one GPU candidate and a minute of arrivals. Its "model" and "lengths_path"
/// stay the ids it ships with.
std::string small_default_scenario() {
  std::string text = read_text(data_dir() / "scenarios" / "chat-llama3.1-8b.json");
  text = replace_once(text, "\"duration_s\": 3600", "\"duration_s\": 60");
  return replace_once(text, "\"candidates\": \"all\"", "\"candidates\": [\"aws-g6e.xlarge\"]");
}

/// Sets the working directory for the life of the object and restores it after.
class WorkingDirectory {
 public:
  explicit WorkingDirectory(const fs::path& dir) : previous_(fs::current_path()) {
    fs::current_path(dir);
  }
  ~WorkingDirectory() { fs::current_path(previous_); }
  WorkingDirectory(const WorkingDirectory&) = delete;
  WorkingDirectory& operator=(const WorkingDirectory&) = delete;

 private:
  fs::path previous_;
};

TEST(CliRelocatable, ACopiedScenarioPlansFromAnotherFolderWithoutDataDir) {
  TempDir copies;
  TempDir elsewhere;
  const fs::path copy = copies.path() / "my-chat.json";
  write_text(copy, small_default_scenario());
  const WorkingDirectory cwd(elsewhere.path());
  // No --data-dir: the test binary runs from the build tree, whose marker names data/.
  const CliRun r = run_cli({"plan", copy.string(), "--no-analysis", "--quiet", "--no-store"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Answer: "));
  EXPECT_THAT(r.out, HasSubstr(" x aws-g6e.xlarge ("));
}

TEST(CliRelocatable, AModelIdFoundNowhereIsOneErrorLineNamingEveryPlace) {
  TempDir dir;
  const fs::path file = dir.path() / "s.json";
  write_text(file, replace_once(small_default_scenario(), "\"model\": \"llama-3.1-8b\"",
                                "\"model\": \"llama-9b\""));
  const CliRun r = run_cli({"plan", file.string(), "--no-analysis", "--quiet", "--no-store",
                            "--data-dir", data_dir().string()});
  EXPECT_EQ(r.code, kExitBadInput);
  const fs::path models = data_dir() / "models";
  EXPECT_EQ(r.err, "llmcap: error: " + file.string() + ": field \"model\": no file \"llama-9b\" " +
                       "(looked for " + (dir.path() / "llama-9b").string() + ", " +
                       (models / "llama-9b.json").string() + ", " +
                       (models / "families" / "llama-9b.json").string() +
                       "); expected a model id (<id>.json in <data-dir>/models/ or "
                       "models/families/) or the path of a model file (relative: to the "
                       "scenario's folder)\n");
  EXPECT_TRUE(r.out.empty()) << r.out;
}

TEST(CliRelocatable, ALengthsIdIsLookedUpInTheGivenDataFolder) {
  // A copy of the data folder without workloads/: the id is not found there, though the
  // source tree has it.
  TempDir data;
  for (const fs::directory_entry& entry : fs::directory_iterator(data_dir())) {
    if (entry.path().filename() == "workloads") continue;
    fs::copy(entry.path(), data.path() / entry.path().filename(), fs::copy_options::recursive);
  }
  TempDir dir;
  const fs::path file = dir.path() / "s.json";
  write_text(file, small_default_scenario());
  const CliRun r = run_cli({"plan", file.string(), "--no-analysis", "--quiet", "--no-store",
                            "--data-dir", data.path().string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, StartsWith("llmcap: error: " + file.string() +
                                ": field \"workload.lengths_path\": no file "
                                "\"azure-2023-conversation\" (looked for "));
  EXPECT_THAT(r.err,
              HasSubstr((data.path() / "workloads" / "azure-2023-conversation.json").string()));
}

}  // namespace
}  // namespace llmcap::cli
