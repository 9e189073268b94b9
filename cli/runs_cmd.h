// `llmcap runs` (issue 5). Owned by the helper building it; cli.cpp only registers and dispatches.
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap runs` (filled in by its owner).
struct RunsArgs {
  std::string data_dir;  ///< --data-dir (empty: the CLI's default resolution)
};

/// Registers the `runs` subcommand (options bound to `args`) on `app`.
CLI::App* add_runs_command(CLI::App& app, RunsArgs& args);

/// Runs it; returns an exit code (cli.h). Bad input throws the InputErrors cli::run maps to 2.
int run_runs_command(const RunsArgs& args, const std::string& data_dir, std::ostream& out,
                     std::ostream& err);

/// Stores a finished plan run (kind "plan") in the results database `db_flag` resolves to
/// (store::default_db_path) and prints "Stored as run N in FILE" to `err`; does nothing when
/// `no_store`. The run document is cli::PlanRun::document, the input the scenario file's text.
/// A database error is reported on `err` as a warning and does not fail the plan.
struct PlanRun;
void store_plan_run(const PlanRun& run, const std::string& scenario_file,
                    const std::string& scenario_name, const std::string& db_flag, bool no_store,
                    const std::string& command_line, std::ostream& err);

}  // namespace llmcap::cli
