#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <exception>

#include "cli/plan_output.h"
#include "model/input_error.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "sim/input_error.h"

namespace llmcap::cli {
namespace {

std::string plural(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

/// Prints one progress line per finished instance type to the error stream.
class ProgressPrinter final : public plan::PlanObserver {
 public:
  explicit ProgressPrinter(std::ostream& err) : err_(err) {}
  void on_row_done(const plan::PlanRow& row, size_t num_done, size_t num_total) override {
    err_ << "  [" << num_done << "/" << num_total << "] " << row.instance_type << ": "
         << (row.feasible ? plural(row.num_instances, "instance") : std::string("infeasible"))
         << " (" << plural(row.num_simulations, "simulation") << ")\n";
  }

 private:
  std::ostream& err_;
};

/// --data-dir if given, else $LLMCAP_DATA_DIR, else the data/ folder of the source tree the
/// binary was built from.
std::string resolve_data_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("LLMCAP_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return LLMCAP_DEFAULT_DATA_DIR;
}

struct PlanArgs {
  std::string scenario;
  std::string json_out;
  std::string csv_out;
  std::string data_dir;
  int threads = 0;
  bool quiet = false;
};

int run_plan(const PlanArgs& a, std::ostream& out, std::ostream& err) {
  const plan::Scenario scenario = plan::load_scenario(a.scenario);
  const model::Catalog catalog = model::Catalog::load(resolve_data_dir(a.data_dir));
  ProgressPrinter progress(err);
  plan::PlanOptions options;
  options.num_threads = a.threads;
  options.observer = a.quiet ? nullptr : &progress;
  const plan::PlanResult result = plan::plan(scenario, catalog, options);

  // Render everything first, so that nothing is written unless all of it succeeded.
  const std::string json = a.json_out.empty() ? "" : plan_to_json(scenario, result);
  const std::string csv = a.csv_out.empty() ? "" : plan_to_csv(result);
  if (!a.json_out.empty()) write_file_atomically(a.json_out, json);
  if (!a.csv_out.empty()) write_file_atomically(a.csv_out, csv);
  print_plan_table(scenario, result, out);
  return kExitOk;
}

}  // namespace

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App app{"llmcap: capacity planning and cost simulation for LLM inference", "llmcap"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Help for every command");

  PlanArgs plan_args;
  CLI::App* plan_cmd = app.add_subcommand(
      "plan", "Cheapest fleet of each candidate instance type that meets the scenario's SLO");
  plan_cmd->add_option("scenario", plan_args.scenario, "Scenario JSON file (docs/scenarios.md)")
      ->required()
      ->option_text("FILE");
  plan_cmd->add_option("--json", plan_args.json_out, "Write the results as JSON to FILE")
      ->option_text("FILE");
  plan_cmd->add_option("--csv", plan_args.csv_out, "Write the results as CSV to FILE")
      ->option_text("FILE");
  plan_cmd
      ->add_option("--data-dir", plan_args.data_dir,
                   std::string("Folder with hardware/ and instances/ catalogs (default: "
                               "$LLMCAP_DATA_DIR, else ") +
                       LLMCAP_DEFAULT_DATA_DIR + ")")
      ->option_text("DIR");
  plan_cmd
      ->add_option("--threads", plan_args.threads, "Worker threads (0: one per hardware thread)")
      ->check(CLI::NonNegativeNumber);
  plan_cmd->add_flag("--quiet", plan_args.quiet, "No progress lines on stderr");

  std::vector<std::string> reversed(args.rbegin(), args.rend());
  try {
    app.parse(reversed);
  } catch (const CLI::CallForHelp&) {
    out << (app.get_subcommands().empty() ? app.help()
                                          : app.get_subcommands().front()->help("llmcap"));
    return kExitOk;
  } catch (const CLI::CallForAllHelp&) {
    out << app.help("", CLI::AppFormatMode::All);
    return kExitOk;
  } catch (const CLI::ParseError& e) {
    err << "llmcap: error: " << e.what() << " (see llmcap --help)\n";
    return kExitBadInput;
  }

  try {
    if (plan_cmd->parsed()) return run_plan(plan_args, out, err);
  } catch (const plan::InputError& e) {
    err << "llmcap: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const model::InputError& e) {
    err << "llmcap: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const sim::InputError& e) {
    err << "llmcap: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "llmcap: internal error: " << e.what() << "\n";
    return kExitInternalError;
  }
  return kExitInternalError;
}

}  // namespace llmcap::cli
