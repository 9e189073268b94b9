// The output rules of every command (issue 29, item 3; docs/cli.md, "Output files"): all
// outputs or none, no output onto an input, no file named "-", stale temporary files cleaned,
// a foreign database refused untouched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

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
using llmcap::testing::TempDir;
using llmcap::testing::test_data;

/// The names of the entries of `dir`, sorted.
std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

/// A copy of the small scenario in `dir` whose trace is also a copy there: both may be named
/// as outputs without risking the fixtures.
fs::path scenario_in(const TempDir& dir) {
  fs::copy_file(test_data("conv_model300.csv"), dir.path() / "trace.csv");
  return dir.write("s.json", R"({"name": "outputs", "model": ")" +
                                 (data_dir() / "models" / "llama-3.1-8b.json").string() +
                                 R"(", "workload": {"kind": "trace", "path": "trace.csv"},
    "slo": {"ttft_p99_s": 2.0, "tpot_p99_s": 0.05}, "candidates": ["aws-g6e.xlarge"],
    "seed": 1})");
}

/// A plan that writes nothing but what the test names.
CliRun plan(const fs::path& scenario, const std::vector<std::string>& more) {
  std::vector<std::string> args = {"plan", scenario.string(), "--quiet", "--no-analysis",
                                   "--no-store"};
  args.insert(args.end(), more.begin(), more.end());
  return run_cli(args);
}

// Issue 29: `plan --json ok.json --csv /no/dir/x.csv` exited 2 but left ok.json.
TEST(CliOutputs, PlanWritesNoOutputWhenOneCannotBeWritten) {
  TempDir dir;
  const fs::path scenario = scenario_in(dir);
  const std::string json = (dir.path() / "ok.json").string();
  const CliRun r = plan(scenario, {"--json", json, "--csv", "/no/dir/x.csv"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err,
            "llmcap: error: --csv /no/dir/x.csv: cannot write file: No such file or directory; "
            "no output was written\n");
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"s.json", "trace.csv"}));
}

// Issue 29: an output path equal to an input path overwrote the input with exit 0.
TEST(CliOutputs, PlanRefusesAnOutputOntoAnInput) {
  TempDir dir;
  const fs::path scenario = scenario_in(dir);
  const std::string scenario_text = read_text(scenario);
  const std::string trace_text = read_text(dir.path() / "trace.csv");
  const std::string via_dots = (dir.path() / "." / "s.json").string();
  CliRun r = plan(scenario, {"--json", via_dots});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: --json " + via_dots + ": is the input file of scenario (" +
                       scenario.string() + "); expected an output path that is not an input\n");
  EXPECT_EQ(r.out, "");  // refused before running

  fs::create_symlink(dir.path() / "trace.csv", dir.path() / "link.csv");
  const std::string link = (dir.path() / "link.csv").string();
  r = plan(scenario, {"--csv", link});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: --csv " + link + ": is the input file of workload.path (" +
                       (dir.path() / "trace.csv").string() +
                       "); expected an output path that is not an input\n");
  EXPECT_EQ(read_text(scenario), scenario_text);
  EXPECT_EQ(read_text(dir.path() / "trace.csv"), trace_text);
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"link.csv", "s.json", "trace.csv"}));
}

TEST(CliOutputs, PlanRefusesTheDatabaseAsAnOutput) {
  TempDir dir;
  const fs::path scenario = scenario_in(dir);
  const std::string db = (dir.path() / "runs.sqlite").string();
  const CliRun r = run_cli({"plan", scenario.string(), "--quiet", "--db", db, "--json", db});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: --json " + db +
                       ": is also the output of --db; expected a different file for each output\n");
  EXPECT_FALSE(fs::exists(db));
}

TEST(CliOutputs, ModelRefusesItsConfigAsTheOutput) {
  TempDir dir;
  fs::copy_file(data_dir() / "models" / "llama-3.1-8b.json", dir.path() / "config.json");
  const std::string config = (dir.path() / "config.json").string();
  const std::string before = read_text(config);
  const CliRun r = run_cli({"model", config, "--json", config});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: --json " + config + ": is the input file of config (" + config +
                       "); expected an output path that is not an input\n");
  EXPECT_EQ(read_text(config), before);
}

TEST(CliOutputs, SweepRefusesADatabaseOntoAFileItsPointsRead) {
  TempDir dir;
  const fs::path scenario = scenario_in(dir);
  const fs::path trace = dir.path() / "trace.csv";
  const std::string before = read_text(trace);
  const fs::path sweep = dir.write("sweep.json", R"({"name": "outputs", "scenario": "s.json",
    "grid": {"slo.tpot_p99_s": [0.05]}})");
  const CliRun r = run_cli({"sweep", sweep.string(), "--quiet", "--db", trace.string()});
  EXPECT_EQ(r.code, kExitBadInput) << r.err;
  EXPECT_EQ(r.err, "llmcap: error: --db " + trace.string() +
                       ": is the input file of scenario workload.path (" + trace.string() +
                       "); expected an output path that is not an input\n");
  EXPECT_EQ(read_text(trace), before);
  // The scenario the sweep file names is an input too.
  const CliRun s = run_cli({"sweep", sweep.string(), "--quiet", "--db", scenario.string()});
  EXPECT_EQ(s.code, kExitBadInput) << s.err;
  EXPECT_THAT(s.err, ::testing::HasSubstr(": is the input file of field \"scenario\" of " +
                                          sweep.string()));
}

TEST(CliOutputs, NoCommandWritesOverTheCatalogItReads) {
  TempDir dir;
  const fs::path data = dir.path() / "data";
  fs::copy(data_dir(), data, fs::copy_options::recursive);
  const fs::path scenario = scenario_in(dir);
  const fs::path instances = data / "instances" / "instances.json";
  const std::string before = read_text(instances);
  const CliRun plan_run =
      plan(scenario, {"--data-dir", data.string(), "--json", instances.string()});
  EXPECT_EQ(plan_run.code, kExitBadInput) << plan_run.err;
  EXPECT_EQ(plan_run.err, "llmcap: error: --json " + instances.string() +
                              ": is the input file of --data-dir (" + instances.string() +
                              "); expected an output path that is not an input\n");
  // audit reads the claims' models from the catalog's models/ folder.
  const fs::path model = data / "models" / "llama-3.1-70b.json";
  const std::string model_before = read_text(model);
  const CliRun audit = run_cli({"audit", (data / "claims" / "seed-article.json").string(),
                                "--data-dir", data.string(), "--json", model.string()});
  EXPECT_EQ(audit.code, kExitBadInput) << audit.err;
  EXPECT_THAT(audit.err,
              ::testing::HasSubstr(": is the input file of --data-dir (" + model.string() + ")"));
  EXPECT_EQ(read_text(instances), before);
  EXPECT_EQ(read_text(model), model_before);
}

// Issue 29: `--json -` wrote a file named "-". Standard output is refused for every output
// file, with the way to name a file "-".
TEST(CliOutputs, DashIsRefusedNotWrittenAsAFile) {
  const std::string config = (data_dir() / "models" / "llama-3.1-8b.json").string();
  const std::string expected =
      "llmcap: error: --json -: standard output is not supported for output files; expected a "
      "file path (write ./- for a file named \"-\")\n";
  CliRun r = run_cli({"model", config, "--json", "-"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, expected);
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(fs::exists("-"));
  TempDir dir;
  r = plan(scenario_in(dir), {"--csv", "-"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, ::testing::HasSubstr("--csv -: standard output is not supported"));
  EXPECT_FALSE(fs::exists("-"));
}

// Issue 29: a writer killed mid-write left TARGET.tmp.<pid> files that nobody cleaned.
TEST(CliOutputs, StaleTemporaryFilesOfDeadWritersAreCleaned) {
  TempDir dir;
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  const std::string dead = "m.json.tmp." + std::to_string(child);
  const std::string live = "m.json.tmp." + std::to_string(getppid());
  dir.write(dead, "{\"half");
  dir.write(live, "{\"being written");
  const std::string config = (data_dir() / "models" / "llama-3.1-8b.json").string();
  const CliRun r = run_cli({"model", config, "--json", (dir.path() / "m.json").string()});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(entries(dir.path()), (std::vector<std::string>{"m.json", live}));
}

// Issue 29: a foreign or newer database was switched to WAL before it was refused.
TEST(CliOutputs, ForeignDatabaseIsRefusedUntouched) {
  TempDir dir;
  const fs::path db = dir.path() / "other.sqlite";
  sqlite3* handle = nullptr;
  ASSERT_EQ(sqlite3_open(db.string().c_str(), &handle), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(handle, "CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(handle);
  const std::string before = read_text(db);
  const CliRun r = run_cli({"runs", "list", "--db", db.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: " + db.string() +
                       ": not an llmcap results database (it has tables but no schema_version "
                       "table); give another file with --db or $LLMCAP_DB\n");
  EXPECT_EQ(read_text(db), before);
  EXPECT_EQ(entries(dir.path()), std::vector<std::string>{"other.sqlite"});
}

}  // namespace
}  // namespace llmcap::cli
