// The output files of a command (app/output_files.h): staged together, moved into place only
// when all were written, checked against the inputs, and stale temporary files cleaned.
#include "app/output_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "base/error.h"
#include "test_util.h"

namespace llmcap::app {
namespace {

namespace fs = std::filesystem;
using llmcap::testing::error_message;
using llmcap::testing::read_text;
using llmcap::testing::TempDir;

/// The names of the entries of `dir`, sorted.
std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// The id of a process that has exited and been reaped (no longer alive).
pid_t dead_pid() {
  const pid_t pid = fork();
  if (pid == 0) _exit(0);
  int status = 0;
  waitpid(pid, &status, 0);
  return pid;
}

TEST(OutputSet, WritesEveryFileWhenAllSucceed) {
  TempDir dir;
  OutputSet set;
  set.add("--json", dir.path() / "a.json", "{}\n");
  set.add("--csv", dir.path() / "b.csv", "x\n");
  set.add("--steps", "", "ignored: the option was not given");
  EXPECT_EQ(set.size(), 2u);
  set.commit();
  EXPECT_EQ(read_text(dir.path() / "a.json"), "{}\n");
  EXPECT_EQ(read_text(dir.path() / "b.csv"), "x\n");
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"a.json", "b.csv"}));
}

// Issue 29: `plan --json ok.json --csv /no/dir/x.csv` left ok.json behind.
TEST(OutputSet, OneFailedFileLeavesNoneOfThem) {
  TempDir dir;
  const fs::path old_json = dir.write("a.json", "old\n");
  OutputSet set;
  set.add("--json", old_json, "new\n");
  set.add("--csv", "/no/dir/x.csv", "x\n");
  EXPECT_EQ(error_message<base::InputError>([&] { set.commit(); }),
            "--csv /no/dir/x.csv: cannot write file: No such file or directory; no output was "
            "written");
  EXPECT_EQ(read_text(old_json), "old\n");  // not replaced
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"a.json"});
}

TEST(OutputSet, StagedFilesAreRemovedWhenNeverCommitted) {
  TempDir dir;
  {
    OutputSet set;
    set.add("--out", dir.path() / "p.json", "{}\n");
    set.stage();
    EXPECT_EQ(entries(dir.path()).size(), 1u);  // the temporary file
  }
  EXPECT_TRUE(entries(dir.path()).empty());
}

TEST(OutputSet, StageThenCommitMovesIntoPlace) {
  TempDir dir;
  OutputSet set;
  set.add("--out", dir.path() / "p.json", "{}\n");
  set.stage();
  EXPECT_THROW(set.add("--json", dir.path() / "q.json", ""), std::logic_error);
  set.commit();
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"p.json"});
}

TEST(WriteFileAtomically, NamesThePathWithoutAnOption) {
  EXPECT_EQ(error_message<base::InputError>([&] { write_file_atomically("/no/dir/x.json", "{}"); }),
            "/no/dir/x.json: cannot write file: No such file or directory; no output was written");
}

// Issue 29: a writer killed mid-write left TARGET.tmp.<pid> files that nobody cleaned.
TEST(StaleTemporaries, DeadWritersFilesAreRemovedLiveOnesKept) {
  TempDir dir;
  const fs::path target = dir.path() / "plan.json";
  const std::string dead = "plan.json.tmp." + std::to_string(dead_pid());
  const std::string live = "plan.json.tmp." + std::to_string(getppid());
  dir.write(dead, "half");
  dir.write(live, "being written");
  dir.write("plan.json.tmp.notapid", "kept");
  dir.write("other.json.tmp." + std::to_string(dead_pid()), "another target's");
  EXPECT_EQ(remove_stale_temporaries(target), 1u);
  EXPECT_FALSE(fs::exists(dir.path() / dead));
  EXPECT_TRUE(fs::exists(dir.path() / live));
  EXPECT_TRUE(fs::exists(dir.path() / "plan.json.tmp.notapid"));
  EXPECT_EQ(entries(dir.path()).size(), 3u);
}

TEST(StaleTemporaries, WritingATargetCleansItsStaleFiles) {
  TempDir dir;
  const std::string dead = "plan.json.tmp." + std::to_string(dead_pid());
  dir.write(dead, "half");
  write_file_atomically(dir.path() / "plan.json", "{}\n");
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"plan.json"});
}

TEST(CheckOutputPaths, RefusesStandardOutput) {
  EXPECT_EQ(error_message<base::InputError>([&] {
              check_output_paths({{"--json", "-"}}, {});
            }),
            "--json -: standard output is not supported for output files; expected a file path "
            "(write ./- for a file named \"-\")");
  EXPECT_NO_THROW(check_output_paths({{"--json", "./-"}}, {}));
}

// Issue 29: an output path equal to an input path overwrote the input with exit 0.
TEST(CheckOutputPaths, RefusesAnInputThroughDotsAndSymbolicLinks) {
  TempDir dir;
  const fs::path input = dir.write("s.json", "{}");
  fs::create_directories(dir.path() / "sub");
  fs::create_symlink(input, dir.path() / "link.json");
  const std::vector<NamedPath> inputs = {{"scenario", input.string()}, {"--profile", ""}};
  for (const fs::path& out :
       {input, dir.path() / "sub" / ".." / "." / "s.json", dir.path() / "link.json"}) {
    EXPECT_EQ(error_message<base::InputError>([&] {
                check_output_paths({{"--csv", ""}, {"--json", out.string()}}, inputs);
              }),
              "--json " + out.string() + ": is the input file of scenario (" + input.string() +
                  "); expected an output path that is not an input");
  }
  fs::create_hard_link(input, dir.path() / "hard.json");
  EXPECT_THROW(check_output_paths({{"--json", (dir.path() / "hard.json").string()}}, inputs),
               base::InputError);
  EXPECT_NO_THROW(check_output_paths({{"--json", (dir.path() / "new.json").string()}}, inputs));
}

TEST(CheckOutputPaths, RefusesTwoOutputsToOneFileAndAFolder) {
  TempDir dir;
  const std::string a = (dir.path() / "x").string();
  EXPECT_EQ(error_message<base::InputError>([&] {
              check_output_paths({{"--json", a}, {"--csv", a}}, {});
            }),
            "--csv " + a +
                ": is also the output of --json; expected a different file for each "
                "output");
  EXPECT_EQ(error_message<base::InputError>([&] {
              check_output_paths({{"--json", dir.path().string()}}, {});
            }),
            "--json " + dir.path().string() + ": is a folder; expected a file path");
}

}  // namespace
}  // namespace llmcap::app
