#include "cli/runs_cmd.h"

#include <CLI/CLI.hpp>

#include "cli/cli.h"
#include "cli/plan_run.h"

namespace llmcap::cli {

CLI::App* add_runs_command(CLI::App& app, RunsArgs& args) {
  CLI::App* cmd = app.add_subcommand("runs", "(not built yet)");
  cmd->group("");  // hidden until built
  cmd->add_option("--data-dir", args.data_dir, "Data folder")->option_text("DIR");
  return cmd;
}

int run_runs_command(const RunsArgs&, const std::string&, std::ostream&, std::ostream& err) {
  err << "llmcap: error: runs is not built yet\n";
  return kExitInternalError;
}

void store_plan_run(const PlanRun&, const std::string&, const std::string&, const std::string&,
                    bool, const std::string&, std::ostream&) {}

}  // namespace llmcap::cli
