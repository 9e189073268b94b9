// `llmcap report` (issue 5). Owned by the helper building it; cli.cpp only registers and dispatches.
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap report` (filled in by its owner).
struct ReportArgs {
  std::string data_dir;  ///< --data-dir (empty: the CLI's default resolution)
};

/// Registers the `report` subcommand (options bound to `args`) on `app`.
CLI::App* add_report_command(CLI::App& app, ReportArgs& args);

/// Runs it; returns an exit code (cli.h). Bad input throws the InputErrors cli::run maps to 2.
int run_report_command(const ReportArgs& args, const std::string& data_dir, std::ostream& out,
                     std::ostream& err);

}  // namespace llmcap::cli
