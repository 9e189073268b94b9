// The runs of `llmcap bench-sim`, `serve-bench` and `validate` in the results database, seen
// through `llmcap runs` and `llmcap report` (cli/runs_cmd.h, docs/results-store.md). Storing each
// kind is tested beside its command (bench_sim_test.cpp, serve_bench_test.cpp,
// validate_test.cpp); a bench-sim run stands for the three here, being the fastest.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "cli/cli.h"
#include "run_cli.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using llmcap::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using llmcap::cli::testing::CliRun;
using llmcap::cli::testing::run_cli;

/// Stores one small bench-sim run (run 1) in a fresh database `db`.
void store_bench_sim_run(const std::filesystem::path& db) {
  const CliRun r =
      run_cli({"bench-sim", "--requests", "2000", "--instances", "2", "--results-db", db.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
}

TEST(StoredSimulationRuns, ListAndShowIncludeThem) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  ASSERT_NO_FATAL_FAILURE(store_bench_sim_run(db));
  const CliRun list = run_cli({"runs", "list", "--kind", "bench-sim", "--db", db.string()});
  ASSERT_EQ(list.code, kExitOk) << list.err;
  EXPECT_THAT(list.out, HasSubstr("bench-sim"));
  EXPECT_THAT(list.out, HasSubstr("2000 requests, 2 replicas"));
  EXPECT_THAT(list.out, HasSubstr(" requests/s, peak RSS "));
  const CliRun show = run_cli({"runs", "show", "1", "--db", db.string()});
  ASSERT_EQ(show.code, kExitOk) << show.err;
  EXPECT_THAT(show.out, StartsWith("Run 1 (bench-sim): 2000 requests, 2 replicas\n"));
  EXPECT_THAT(show.out, HasSubstr("command:  llmcap bench-sim --requests 2000"));
}

TEST(StoredSimulationRuns, CompareRefusesThemNamingTheRunAndItsKind) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  ASSERT_NO_FATAL_FAILURE(store_bench_sim_run(db));
  const CliRun r = run_cli({"runs", "compare", "1", "latest", "--db", db.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err,
            "llmcap: error: run 1 (bench-sim) has no plan results; compare takes runs of kind "
            "plan or sweep_point\n");
  EXPECT_EQ(r.out, "");
}

TEST(StoredSimulationRuns, ReportRefusesThemInOneLineNamingTheRun) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  ASSERT_NO_FATAL_FAILURE(store_bench_sim_run(db));
  const auto html = dir.path() / "report.html";
  const CliRun r = run_cli({"report", "1", "--out", html.string(), "--db", db.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, StartsWith("llmcap: error: run 1 "));
  EXPECT_THAT(r.err, HasSubstr(" is a bench-sim run; reports are made of plan runs"));
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;  // one line
  EXPECT_FALSE(std::filesystem::exists(html));
}

}  // namespace
}  // namespace llmcap::cli
