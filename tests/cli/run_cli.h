// Runs the `llmcap` command line in-process (cli::run) and keeps its exit code and output: the
// tests of the CLI's commands (tests/cli, tests/report) share it.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "store/results_store.h"

namespace llmcap::cli::testing {

/// What one `llmcap ...` call returned and printed.
struct CliRun {
  int code;
  std::string out;
  std::string err;
};

/// `args` without the program name, e.g. {"plan", "scenario.json", "--quiet"}.
inline CliRun run_cli(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = run(args, out, err);
  return {code, out.str(), err.str()};
}

/// The one run in the results database `db_path`, read back whole; the test fails (and an
/// empty record comes back) unless there is exactly one.
inline store::RunRecord only_stored_run(const std::filesystem::path& db_path) {
  const store::ResultsStore db = store::ResultsStore::open(db_path);
  const std::vector<store::RunRecord> runs = db.list_runs();
  EXPECT_EQ(runs.size(), 1u) << db_path;
  return runs.size() == 1 ? db.get_run(runs[0].id) : store::RunRecord{};
}

}  // namespace llmcap::cli::testing
