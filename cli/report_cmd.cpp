#include "cli/report_cmd.h"

#include <CLI/CLI.hpp>

#include "cli/cli.h"

namespace llmcap::cli {

CLI::App* add_report_command(CLI::App& app, ReportArgs& args) {
  CLI::App* cmd = app.add_subcommand("report", "(not built yet)");
  cmd->group("");  // hidden until built
  cmd->add_option("--data-dir", args.data_dir, "Data folder")->option_text("DIR");
  return cmd;
}

int run_report_command(const ReportArgs&, const std::string&, std::ostream&, std::ostream& err) {
  err << "llmcap: error: report is not built yet\n";
  return kExitInternalError;
}

}  // namespace llmcap::cli
