#include "cli/plan_cmd.h"

#include <CLI/CLI.hpp>
#include <sstream>

#include "app/output_files.h"
#include "app/plan_output.h"
#include "app/plan_run.h"
#include "app/run_store.h"
#include "app/scenario_overrides.h"
#include "base/error.h"
#include "base/json_reader.h"
#include "base/text.h"
#include "cli/cli.h"
#include "cli/plan_output.h"
#include "cli/text_layout.h"
#include "model/calibration.h"
#include "plan/analysis.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "plan/what_if.h"
#include "store/results_store.h"

namespace llmcap::cli {
namespace {

using base::plural;

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

/// Refuses --json / --csv paths that are inputs of the run (the scenario, the files it names,
/// --profile, --warm-start, the --data-dir catalogs), the results database or "-", before
/// anything runs.
void check_plan_outputs(const PlanArgs& a, const plan::Scenario& scenario,
                        const std::string& data_dir) {
  std::vector<app::NamedPath> inputs = {{"scenario", a.scenario},
                                        {"--profile", a.profile},
                                        {"--warm-start", a.warm_start},
                                        {"workload.path", scenario.workload.path.string()},
                                        {"model", scenario.model_config.string()}};
  for (const plan::ClientClassSpec& c : scenario.workload.classes) {
    inputs.push_back({"class \"" + c.name + "\" workload.path", c.workload.path.string()});
  }
  const std::vector<app::NamedPath> catalog_files = app::data_dir_inputs(data_dir);
  inputs.insert(inputs.end(), catalog_files.begin(), catalog_files.end());
  app::check_output_paths({{"--db", a.no_store ? "" : store::default_db_path(a.db).string()},
                           {"--json", a.json_out},
                           {"--csv", a.csv_out}},
                          inputs);
}

}  // namespace

CLI::App* add_plan_command(CLI::App& app, PlanArgs& plan_args) {
  CLI::App* plan_cmd = app.add_subcommand(
      "plan", "Cheapest fleet of each candidate instance type that meets the scenario's SLO");
  plan_cmd->add_option("scenario", plan_args.scenario, "Scenario JSON file (docs/scenarios.md)")
      ->required()
      ->option_text("FILE");
  plan_cmd
      ->add_option("--json", plan_args.json_out,
                   "Write the run document (docs/run-document.md) as JSON to FILE")
      ->option_text("FILE");
  plan_cmd->add_option("--csv", plan_args.csv_out, "Write the results as CSV to FILE")
      ->option_text("FILE");
  plan_cmd
      ->add_option("--data-dir", plan_args.data_dir,
                   "Folder with hardware/ and instances/ catalogs (default: $LLMCAP_DATA_DIR, "
                   "else <bin>/../share/llmcap/data when installed, else the source tree's data/ "
                   "when run from its build tree)")
      ->option_text("DIR");
  plan_cmd
      ->add_option("--threads", plan_args.threads, "Worker threads (0: one per hardware thread)")
      ->check(CLI::NonNegativeNumber);
  plan_cmd
      ->add_option("--profile", plan_args.profile,
                   "Calibration profile JSON (llmcap calibrate --out): CPU instance types use its "
                   "measured rates, transferred to their CPU (docs/model.md, Calibration)")
      ->option_text("FILE");
  plan_cmd->add_flag("--quiet", plan_args.quiet, "No progress lines on stderr");
  plan_cmd
      ->add_option("--db", plan_args.db,
                   "Results database the run is stored in (default: $LLMCAP_DB, else "
                   "$XDG_DATA_HOME/llmcap/runs.sqlite)")
      ->option_text("FILE");
  plan_cmd
      ->add_option("--set", plan_args.overrides,
                   "Override a scenario field, e.g. --set tco.price_model=reserved_1y --set "
                   "tco.currency=CNY --set weight_format.cpu=int4 (repeatable; docs/scenarios.md)")
      ->option_text("KEY=VALUE")
      ->take_all()
      ->allow_extra_args(false);
  plan_cmd
      ->add_option("--load-multiplier", plan_args.load_multiplier,
                   "Plan for this multiple of the scenario's load (2: traffic doubles)")
      ->option_text("X")
      ->check(CLI::PositiveNumber);
  plan_cmd->add_flag("--no-store", plan_args.no_store, "Do not store the run in the database");
  plan_cmd->add_flag("--no-analysis", plan_args.no_analysis,
                     "Skip the analyses (cost against load, sensitivity, uncertainty): faster");
  plan_cmd
      ->add_option("--warm-start", plan_args.warm_start,
                   "A plan JSON written earlier by plan --json: each type's fleet-size search "
                   "starts at its size there (same answer, fewer simulations when close)")
      ->option_text("FILE");
  plan_cmd
      ->add_option("--max-requests", plan_args.max_requests,
                   "The most requests the workload may have; a larger one is refused before "
                   "any simulation (default 2000000, about 4 GB to simulate)")
      ->option_text("N")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000'000}));
  add_width_option(plan_cmd, plan_args.width);
  plan_cmd->add_flag("--verbose", plan_args.verbose,
                     "Infeasible reasons in full (the table cuts them to their first clause)");
  return plan_cmd;
}

int run_plan_command(const PlanArgs& a, const std::string& data_dir,
                     const std::string& command_line, std::ostream& out, std::ostream& err) {
  // The scenario as planned: the file, with the --set overrides applied to its JSON.
  std::string scenario_text = base::read_text_file(a.scenario);
  if (!a.overrides.empty()) {
    scenario_text = app::apply_scenario_overrides(scenario_text, a.scenario, a.overrides);
  }
  const size_t width = output_width(a.width);  // a bad --width is refused before any work
  plan::Scenario scenario = [&] {
    try {
      return plan::load_scenario_text(scenario_text, a.scenario, data_dir);
    } catch (const base::InputError& e) {
      // A value refused where --set put it: the message says so ("FILE: --set KEY=VALUE: ...").
      const std::string blamed = app::override_of_field(a.overrides, e.field_path());
      if (blamed.empty()) throw;
      std::string reason = e.what();
      if (reason.starts_with(a.scenario + ": ")) reason.erase(0, a.scenario.size() + 2);
      throw base::InputError(a.scenario + ": --set " + base::printable(blamed) + ": " + reason);
    }
  }();
  if (a.load_multiplier != 1.0) scenario = plan::with_load_multiplier(scenario, a.load_multiplier);
  scenario.max_requests = a.max_requests;
  check_plan_outputs(a, scenario, data_dir);
  const model::Catalog catalog = model::Catalog::load(data_dir);
  ProgressPrinter progress(err);
  app::PlanRunOptions options;
  options.plan.num_threads = a.threads;
  options.plan.observer = a.quiet ? nullptr : &progress;
  options.analysis = !a.no_analysis;
  if (!a.warm_start.empty()) {
    options.plan.warm_start_sizes = plan::read_warm_start(a.warm_start).sizes;
  }
  model::CalibrationProfile profile;
  if (!a.profile.empty()) {
    profile = model::read_profile_json(a.profile);
    options.plan.calibration = &profile;
  }
  const app::PlanRun run = app::make_plan_run(scenario, catalog, options);
  const plan::PlanResult& result = run.result;

  // Render everything first, so that nothing is written unless all of it succeeded.
  // --json writes the run document (docs/run-document.md): plan_to_json's keys and more.
  const std::string json = a.json_out.empty() ? "" : run.document.dump(2) + "\n";
  const std::string csv = a.csv_out.empty() ? "" : app::plan_to_csv(result);
  app::OutputSet outputs;
  outputs.add("--json", a.json_out, json);
  outputs.add("--csv", a.csv_out, csv);
  outputs.commit();
  std::ostringstream text;  // fitted to the width as a whole: no line is wider
  print_answer(run.answer, text, width);
  print_plan_table(scenario, result, text, {width, a.verbose});
  print_run_summary(run, text);
  out << fit_to_width(text.str(), width);
  app::store_plan_run(run, scenario_text, scenario.name, a.db, a.no_store, command_line, err);
  return kExitOk;
}

}  // namespace llmcap::cli
