// `llmcap report` (issue 5, item 5; docs/reports.md): renders a stored run (or a run document
// file) as PDF, HTML, Markdown, CSV, JSON or XLSX. cli.cpp only registers and dispatches.
#pragma once

#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap report`.
struct ReportArgs {
  std::string run;       ///< RUN: a run id of the results database, or "latest"
  std::string document;  ///< --document: a run document JSON file instead of RUN
  std::string format;    ///< --format: pdf|html|md|csv|json|xlsx (default: from --out's extension)
  std::string out;       ///< --out: the report file (required)
  std::string db;        ///< --db: results database (default store::default_db_path)
  std::string data_dir;  ///< --data-dir (unused by the report; accepted like the other commands)
};

/// Registers the `report` subcommand (options bound to `args`) on `app`.
CLI::App* add_report_command(CLI::App& app, ReportArgs& args);

/// Runs it; returns an exit code (cli.h). Every bad input (unknown format, unknown run, a
/// document of another schema version or not JSON, an unwritable --out) prints one line
/// `llmcap: error: ...` naming the thing and returns kExitBadInput with no file left behind;
/// the report is written through app::write_file_atomically.
int run_report_command(const ReportArgs& args, const std::string& data_dir, std::ostream& out,
                       std::ostream& err);

}  // namespace llmcap::cli
