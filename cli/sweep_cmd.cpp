#include "cli/sweep_cmd.h"

#include <CLI/CLI.hpp>

#include "cli/cli.h"

namespace llmcap::cli {

CLI::App* add_sweep_command(CLI::App& app, SweepArgs& args) {
  CLI::App* cmd = app.add_subcommand("sweep", "(not built yet)");
  cmd->group("");  // hidden until built
  cmd->add_option("--data-dir", args.data_dir, "Data folder")->option_text("DIR");
  return cmd;
}

int run_sweep_command(const SweepArgs&, const std::string&, std::ostream&, std::ostream& err) {
  err << "llmcap: error: sweep is not built yet\n";
  return kExitInternalError;
}

}  // namespace llmcap::cli
