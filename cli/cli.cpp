#include "cli/cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <filesystem>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "base/error.h"
#include "base/text.h"
#include "cli/audit.h"
#include "cli/bench_sim.h"
#include "cli/decoder_support.h"
#include "cli/plan_output.h"
#include "cli/plan_run.h"
#include "cli/profile.h"
#include "cli/report_cmd.h"
#include "cli/runs_cmd.h"
#include "cli/serve_bench.h"
#include "cli/sweep_cmd.h"
#include "cli/validate.h"
#include "kernels/calibrate.h"
#include "kernels/harness.h"
#include "kernels/machine.h"
#include "model/calibration.h"
#include "model/input_error.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "plan/what_if.h"
#include "sim/input_error.h"

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

/// --data-dir if given, else $LLMCAP_DATA_DIR, else the data/ folder of the source tree the
/// binary was built from.
std::string resolve_data_dir(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("LLMCAP_DATA_DIR"); env != nullptr && *env != '\0') return env;
  return LLMCAP_DEFAULT_DATA_DIR;
}

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
};

int run_plan(const PlanArgs& a, const std::string& command_line, std::ostream& out,
             std::ostream& err) {
  const plan::Scenario scenario = plan::load_scenario(a.scenario);
  const model::Catalog catalog = model::Catalog::load(resolve_data_dir(a.data_dir));
  ProgressPrinter progress(err);
  PlanRunOptions options;
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
  const PlanRun run = make_plan_run(scenario, catalog, options);
  const plan::PlanResult& result = run.result;

  // Render everything first, so that nothing is written unless all of it succeeded.
  // --json writes the run document (docs/run-document.md): plan_to_json's keys and more.
  const std::string json = a.json_out.empty() ? "" : run.document.dump(2) + "\n";
  const std::string csv = a.csv_out.empty() ? "" : plan_to_csv(result);
  if (!a.json_out.empty()) write_file_atomically(a.json_out, json);
  if (!a.csv_out.empty()) write_file_atomically(a.csv_out, csv);
  print_plan_table(scenario, result, out);
  print_run_summary(run, out);
  store_plan_run(run, a.scenario, scenario.name, a.db, a.no_store, command_line, err);
  return kExitOk;
}

struct CalibrateArgs {
  bool quick = false;
  int threads = 0;
  std::string json_out;
  std::string db_out;
  bool quiet = false;
  bool test_sweep = false;               ///< hidden: tiny in-cache shapes, for the CLI tests
  std::string results_db;                ///< --results-db: results database the run is stored in
  bool no_store = false;                 ///< --no-store
  std::string fit_statistic = "median";  ///< --fit-statistic: "median" or "min"
  std::vector<std::string> models;       ///< --model: model configs whose shapes are timed too
};

using base::fixed;

void print_calibration(const model::CalibrationProfile& p, const kernels::CalibrationRun& run,
                       std::ostream& out) {
  const model::CalibrationMachine& m = p.machine;
  out << "Machine: " << m.cpu_model << ", " << m.num_cores << " logical CPUs\n"
      << "  ISA: " << m.isa << "\n"
      << "  caches: L1d " << m.l1d_bytes / 1024 << " KiB, L2 " << m.l2_bytes / 1024 << " KiB, L3 "
      << m.l3_bytes / (1024 * 1024) << " MiB (as reported)\n"
      << "  memory bandwidth (median of interleaved rounds):\n";
  for (const auto& [threads, read] : m.read_bandwidth_bytes_per_s) {
    const auto copy = m.copy_bandwidth_bytes_per_s.find(threads);
    out << "    " << std::setw(3) << threads << (threads == 1 ? " thread:  " : " threads: ")
        << "read " << fixed(read / 1e9, 1) << " GB/s, copy "
        << (copy != m.copy_bandwidth_bytes_per_s.end() ? fixed(copy->second / 1e9, 1) : "-")
        << " GB/s\n";
  }
  out << "\nKernels (" << run.sweep << " sweep; operands rotated over "
      << run.rotation_bytes / (1024 * 1024)
      << " MiB unless marked \"cache\"; fraction = GB/s / read bandwidth at that thread "
         "count; attention_spread: one call per thread at once, time and GB/s per call):\n";
  out << "  " << std::left << std::setw(17) << "op" << std::setw(6) << "fmt" << std::right
      << std::setw(13) << "shape" << std::setw(7) << "batch" << std::setw(5) << "thr"
      << std::setw(11) << "median ms" << std::setw(9) << "GB/s" << std::setw(7) << "frac"
      << std::setw(10) << "GFLOP/s"
      << "\n";
  for (const model::KernelSample& s : p.kernels) {
    const auto bw = m.read_bandwidth_bytes_per_s.find(s.threads);
    const std::string frac = bw != m.read_bandwidth_bytes_per_s.end() && bw->second > 0
                                 ? fixed(s.bytes_per_s / bw->second, 2)
                                 : "-";
    out << "  " << std::left << std::setw(17) << s.op << std::setw(6) << s.format << std::right
        << std::setw(13) << (std::to_string(s.rows) + "x" + std::to_string(s.cols)) << std::setw(7)
        << s.batch << std::setw(5) << s.threads << std::setw(11) << fixed(s.median_s * 1e3, 4)
        << std::setw(9) << fixed(s.bytes_per_s / 1e9, 1) << std::setw(7) << frac << std::setw(10)
        << fixed(s.flops_per_s / 1e9, 1) << (s.cache_resident ? "  cache" : "") << "\n";
  }
  const model::CalibrationFit& f = p.fit;
  out << "\nFit at " << f.threads << " threads (" << model::to_string(f.statistic)
      << "_s = overhead + bytes / bandwidth + flops / compute; "
         "a rate of 0 means the term was dropped):\n";
  const auto row = [&](const std::string& what, const model::RateFit& r) {
    out << "  " << std::left << std::setw(16) << what << std::right << "overhead "
        << fixed(r.overhead_s * 1e6, 1) << " us, " << fixed(r.bytes_per_s / 1e9, 1) << " GB/s, "
        << fixed(r.flops_per_s / 1e9, 1) << " GFLOP/s; " << r.num_samples
        << " samples, error median " << fixed(100 * r.median_rel_error, 1) << "%, p95 "
        << fixed(100 * r.p95_rel_error, 1) << "%\n";
    if (!r.by_batch.empty()) {
      out << "  " << std::setw(16) << ""
          << "per batch (used within batches " << r.by_batch.front().batch << "-"
          << r.by_batch.back().batch << "): error median "
          << fixed(100 * r.by_batch_median_rel_error, 1) << "%, p95 "
          << fixed(100 * r.by_batch_p95_rel_error, 1) << "%\n";
    }
  };
  for (const auto& [format, r] : f.matmul) row("matmul " + format, r);
  for (const auto& [format, r] : f.attention) row("attention " + format, r);
  out << "  fit error over all fitted samples (per-batch fits where kept): median "
      << fixed(100 * f.median_rel_error, 1) << "%, p95 " << fixed(100 * f.p95_rel_error, 1)
      << "%\n";
  if (run.contended_repetitions > 0) {
    out << "Timed again: " << run.contended_repetitions
        << " repetitions of cells whose median was over " << fixed(kernels::kContendedRatio, 0)
        << "x their fastest run, or of shapes whose one-row product read under "
        << fixed(kernels::kBurstFraction, 1)
        << " of the read bandwidth (a burst of contention on the host).\n";
  }
  out << "Calibration took " << fixed(run.seconds, 1) << " s.\n";
}

int run_calibrate(const CalibrateArgs& a, const std::string& command_line, std::ostream& out,
                  std::ostream& err) {
  kernels::CalibrationOptions options;
  options.quick = a.quick;
  options.max_threads = a.threads;
  options.size = a.test_sweep ? kernels::SweepSize::kTest : kernels::SweepSize::kFull;
  const std::vector<std::filesystem::path> models(a.models.begin(), a.models.end());
  options.extra_matmul_shapes = model_matmul_shapes(models);
  options.extra_attention_layouts = model_attention_layouts(models);
  if (!a.quiet) options.progress = [&err](const std::string& line) { err << "  " << line << "\n"; };
  const kernels::CalibrationRun run = kernels::run_calibration(options);
  const model::CalibrationProfile profile = to_profile(
      run, command_line,
      a.fit_statistic == "min" ? model::FitStatistic::kMin : model::FitStatistic::kMedian);
  // Render first, so that nothing is written unless all of it succeeded.
  const std::string json = a.json_out.empty() ? "" : model::profile_to_json(profile);
  if (!a.json_out.empty()) write_file_atomically(a.json_out, json);
  if (!a.db_out.empty()) model::write_profile_sqlite(a.db_out, profile);
  print_calibration(profile, run, out);
  store_calibration_run(model::profile_to_json(profile), profile.machine.cpu_model, a.results_db,
                        a.no_store, command_line, err);
  return kExitOk;
}

struct ValidateArgs {
  std::vector<std::string> models;
  std::string profile;
  std::string save_profile;  ///< --save-profile: the quick calibration's profile, written
  std::vector<std::string> formats = {"bf16", "int8", "int4"};
  std::vector<int64_t> batches = {1, 4, 16, 32};
  std::vector<int64_t> contexts = {128, 1024, 4096};
  int runs = 5;
  int threads = 0;
  bool no_retime = false;  ///< --no-retime
  int steady_steps = 1;    ///< --steady-steps
  std::string json_out;
  std::string data_dir;
  bool quiet = false;
  std::string results_db;  ///< --results-db: results database the run is stored in
  bool no_store = false;   ///< --no-store
};

/// The parameters of a validate run, as stored in the results database (RunRecord::
/// input_json): `{"models", "formats", "batches", "contexts", "runs", "profile", "threads",
/// "retime", "steady_steps"}`
/// with the model files resolved (profile "" = a quick calibration with `threads`).
std::string validate_input_json(const ValidateArgs& a, const ValidationOptions& options) {
  nlohmann::ordered_json j;
  j["models"] = nlohmann::ordered_json::array();
  for (const std::filesystem::path& m : options.models) j["models"].push_back(m.string());
  j["formats"] = a.formats;
  j["batches"] = a.batches;
  j["contexts"] = a.contexts;
  j["runs"] = a.runs;
  j["profile"] = a.profile;
  j["threads"] = a.threads;
  j["retime"] = !a.no_retime;
  j["steady_steps"] = a.steady_steps;
  return j.dump();
}

int run_validate(const ValidateArgs& a, const std::string& command_line, std::ostream& out,
                 std::ostream& err) {
  ValidationOptions options;
  const std::filesystem::path data = resolve_data_dir(a.data_dir);
  if (a.models.empty()) {
    options.models = {data / "models" / "llama-3.2-1b.json", data / "models" / "qwen2.5-0.5b.json"};
  } else {
    options.models.assign(a.models.begin(), a.models.end());
  }
  options.formats.clear();
  for (const std::string& f : a.formats) {
    options.formats.push_back(model::parse_weight_format(f, "--formats"));
  }
  options.batches = a.batches;
  options.contexts = a.contexts;
  options.runs = a.runs;
  options.retime = !a.no_retime;
  options.steady_steps = a.steady_steps;
  if (!a.quiet) options.progress = [&err](const std::string& line) { err << "  " << line << "\n"; };

  BenchmarkProfileOptions po;
  po.profile_file = a.profile;
  po.save_file = a.save_profile;
  po.models = options.models;
  po.formats = options.formats;
  po.threads = a.threads;
  po.tool = "llmcap validate (quick calibration)";
  if (!a.quiet) po.progress = [&err](const std::string& line) { err << "  " << line << "\n"; };
  std::string source;
  const model::CalibrationProfile profile = benchmark_profile(po, source);
  const ValidationResult result = run_validation(options, profile, source);
  // Built whether or not --json was given: the results database stores the same document.
  const std::string json = validation_to_json(result);
  if (!a.json_out.empty()) write_file_atomically(a.json_out, json);
  print_validation(result, out);
  store_validate_run(result, json, validate_input_json(a, options), a.results_db, a.no_store,
                     command_line, err);
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
  plan_cmd
      ->add_option("--json", plan_args.json_out,
                   "Write the run document (docs/run-document.md) as JSON to FILE")
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
  plan_cmd->add_flag("--no-store", plan_args.no_store, "Do not store the run in the database");
  plan_cmd->add_flag("--no-analysis", plan_args.no_analysis,
                     "Skip the analyses (cost against load, sensitivity, uncertainty): faster");
  plan_cmd
      ->add_option("--warm-start", plan_args.warm_start,
                   "A plan JSON written earlier by plan --json: each type's fleet-size search "
                   "starts at its size there (same answer, fewer simulations when close)")
      ->option_text("FILE");

  CalibrateArgs cal_args;
  CLI::App* cal_cmd = app.add_subcommand(
      "calibrate",
      "Measure memory bandwidth and the decode kernels on this machine and fit the predictor's "
      "rates (docs/model.md, Calibration)");
  cal_cmd->add_flag("--quick", cal_args.quick,
                    "Fewer shapes, only the largest thread count (about 20 s instead of 3 min)");
  cal_cmd
      ->add_option("--threads", cal_args.threads,
                   "Largest thread count to measure (default: every CPU this process may use)")
      ->check(CLI::PositiveNumber);
  cal_cmd->add_option("--out", cal_args.json_out, "Write the profile as JSON to FILE")
      ->option_text("FILE");
  cal_cmd
      ->add_option("--db", cal_args.db_out,
                   "Append the profile to the SQLite database FILE (created if missing)")
      ->option_text("FILE");
  cal_cmd
      ->add_option("--fit-statistic", cal_args.fit_statistic,
                   "Sample time the rates are fitted to: median (what the machine gave with its "
                   "neighbours) or min (the fastest repetition: the uncontended machine, for a "
                   "shared host)")
      ->check(CLI::IsMember({"median", "min"}))
      ->capture_default_str();
  cal_cmd
      ->add_option("--model", cal_args.models,
                   "Model config (JSON) whose own matrix shapes (fused QKV, output, gate/up, "
                   "down, LM head; every format) and attention layout are timed too; the "
                   "predictor then uses their measured times for that model (repeatable)")
      ->option_text("FILE");
  cal_cmd->add_flag("--quiet", cal_args.quiet, "No progress lines on stderr");
  cal_cmd
      ->add_option("--results-db", cal_args.results_db,
                   "Results database the run is stored in (default: $LLMCAP_DB, else "
                   "$XDG_DATA_HOME/llmcap/runs.sqlite)")
      ->option_text("FILE");
  cal_cmd->add_flag("--no-store", cal_args.no_store,
                    "Do not store the run in the results database");
  cal_cmd->add_flag("--test-sweep", cal_args.test_sweep, "Tiny in-cache shapes (for tests)")
      ->group("");

  ValidateArgs val_args;
  CLI::App* val_cmd = app.add_subcommand(
      "validate",
      "Time real decode steps of the reference decoder (random weights) and compare them with "
      "the calibrated predictor");
  val_cmd
      ->add_option("--model", val_args.models,
                   "Hugging Face config.json of a Llama-architecture model (repeatable; "
                   "default: Llama-3.2-1B and Qwen2.5-0.5B from the data folder)")
      ->option_text("FILE");
  CLI::Option* val_profile =
      val_cmd
          ->add_option("--profile", val_args.profile,
                       "Calibration profile JSON of this machine (default: run a quick "
                       "calibration first)")
          ->option_text("FILE");
  val_cmd
      ->add_option("--save-profile", val_args.save_profile,
                   "Also write the quick calibration's profile JSON to FILE (as calibrate --out)")
      ->option_text("FILE")
      ->excludes(val_profile);
  val_cmd->add_option("--formats", val_args.formats, "Weight formats")
      ->delimiter(',')
      ->capture_default_str();
  val_cmd->add_option("--batches", val_args.batches, "Batch sizes (sequences per step)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  val_cmd->add_option("--contexts", val_args.contexts, "Context lengths (KV tokens per sequence)")
      ->delimiter(',')
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  val_cmd->add_option("--runs", val_args.runs, "Timed steps per point (median and fastest kept)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  val_cmd
      ->add_option("--steady-steps", val_args.steady_steps,
                   "Untimed steps of the same point right before each timed one (the caches "
                   "as a serving engine's next step finds them)")
      ->check(CLI::Range(0, 100))
      ->capture_default_str();
  val_cmd->add_flag("--no-retime", val_args.no_retime,
                    "Do not re-time the model's kernels between the rounds of steps (no "
                    "re-timed column)");
  val_cmd
      ->add_option("--threads", val_args.threads,
                   "Threads of the quick calibration when no --profile is given (the decoder "
                   "then runs with the profile's thread count)")
      ->check(CLI::PositiveNumber);
  val_cmd->add_option("--json", val_args.json_out, "Write the points and errors as JSON to FILE")
      ->option_text("FILE");
  val_cmd->add_option("--data-dir", val_args.data_dir, "Folder with models/ (see plan --help)")
      ->option_text("DIR");
  val_cmd->add_flag("--quiet", val_args.quiet, "No progress lines on stderr");
  val_cmd
      ->add_option("--results-db", val_args.results_db,
                   "Results database the run is stored in (default: $LLMCAP_DB, else "
                   "$XDG_DATA_HOME/llmcap/runs.sqlite)")
      ->option_text("FILE");
  val_cmd->add_flag("--no-store", val_args.no_store,
                    "Do not store the run in the results database");

  BenchSimArgs bench_sim_args;
  CLI::App* bench_sim_cmd = add_bench_sim_command(app, bench_sim_args);

  ServeBenchArgs serve_bench_args;  // `serve-bench` (cli/serve_bench.h)
  CLI::App* serve_bench_cmd = add_serve_bench_command(app, serve_bench_args);

  AuditArgs audit_args;  // `audit` (cli/audit.h)
  CLI::App* audit_cmd = add_audit_command(app, audit_args);

  RunsArgs runs_args;  // `runs` (cli/runs_cmd.h)
  CLI::App* runs_cmd = add_runs_command(app, runs_args);
  SweepArgs sweep_args;  // `sweep` (cli/sweep_cmd.h)
  CLI::App* sweep_cmd = add_sweep_command(app, sweep_args);
  ReportArgs report_args;  // `report` (cli/report_cmd.h)
  CLI::App* report_cmd = add_report_command(app, report_args);

  std::string command_line = "llmcap";
  for (const std::string& arg : args) command_line += " " + arg;

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
    if (plan_cmd->parsed()) return run_plan(plan_args, command_line, out, err);
    if (runs_cmd->parsed()) {
      return run_runs_command(runs_args, resolve_data_dir(runs_args.data_dir), out, err);
    }
    if (sweep_cmd->parsed()) {
      return run_sweep_command(sweep_args, resolve_data_dir(sweep_args.data_dir), out, err);
    }
    if (report_cmd->parsed()) {
      return run_report_command(report_args, resolve_data_dir(report_args.data_dir), out, err);
    }
    if (audit_cmd->parsed()) {
      return run_audit_command(audit_args, resolve_data_dir(audit_args.data_dir), out);
    }
    if (val_cmd->parsed()) return run_validate(val_args, command_line, out, err);
    if (bench_sim_cmd->parsed()) {
      return run_bench_sim_command(bench_sim_args, resolve_data_dir(bench_sim_args.data_dir),
                                   command_line, out, err);
    }
    if (serve_bench_cmd->parsed()) {
      return run_serve_bench_command(serve_bench_args, resolve_data_dir(serve_bench_args.data_dir),
                                     command_line, out, err);
    }
    if (cal_cmd->parsed()) {
      return run_calibrate(cal_args, command_line, out, err);
    }
  } catch (const base::InputError& e) {  // model::, sim:: and plan::InputError are this type
    err << "llmcap: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::invalid_argument& e) {  // a kernel or decoder refusing its arguments
    err << "llmcap: error: " << e.what() << "\n";
    return kExitBadInput;
  } catch (const std::exception& e) {
    err << "llmcap: internal error: " << e.what() << "\n";
    return kExitInternalError;
  }
  return kExitInternalError;
}

}  // namespace llmcap::cli
