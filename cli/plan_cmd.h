// `llmcap plan SCENARIO`: options and printing; the run itself is app::make_plan_run
// (app/plan_run.h), stored by app::store_plan_run.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "plan/scenario.h"

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap plan`.
struct PlanArgs {
  std::string profile;
  std::string scenario;
  std::string json_out;
  std::string csv_out;
  std::string data_dir;
  int threads = 0;
  bool quiet = false;
  std::string db;            ///< --db: results database (default store::default_db_path)
  bool no_store = false;     ///< --no-store
  bool no_analysis = false;  ///< --no-analysis
  std::string warm_start;    ///< --warm-start: a plan JSON whose fleet sizes start the searches
  /// --max-requests: the most requests the workload may have (plan::Scenario::max_requests).
  int64_t max_requests = plan::kDefaultMaxRequests;
  /// --set key=value (repeatable): scenario fields overridden (app/scenario_overrides.h).
  std::vector<std::string> overrides;
  /// --load-multiplier: the scenario's load times this (plan::with_load_multiplier); 1: as is.
  double load_multiplier = 1.0;
  std::optional<int64_t> width;  ///< --width: columns to fit (cli/text_layout.h, output_width)
  bool verbose = false;          ///< --verbose: infeasible reasons in full
};

/// Registers the `plan` subcommand (options bound to `args`) on `app`.
CLI::App* add_plan_command(CLI::App& app, PlanArgs& args);

/// Runs it with the catalogs of `data_dir`: plans, writes --json / --csv (atomically, only
/// when everything succeeded), prints the table and the summary to `out` (progress lines to
/// `err` unless --quiet) and stores the run. Returns an exit code (cli.h); bad input throws
/// base::InputError.
int run_plan_command(const PlanArgs& args, const std::string& data_dir,
                     const std::string& command_line, std::ostream& out, std::ostream& err);

}  // namespace llmcap::cli
