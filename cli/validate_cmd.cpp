#include "cli/validate_cmd.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <iomanip>
#include <nlohmann/json.hpp>

#include "app/decoder_support.h"
#include "app/output_files.h"
#include "app/plan_output.h"
#include "app/run_store.h"
#include "base/stats.h"
#include "cli/cli.h"
#include "model/calibration.h"
#include "model/formats.h"
#include "store/results_store.h"

namespace llmcap::cli {
namespace {

/// The parameters of a validate run, as stored in the results database (RunRecord::
/// input_json): `{"models", "formats", "batches", "contexts", "runs", "profile", "threads",
/// "retime", "steady_steps"}`
/// with the model files resolved (profile "" = a quick calibration with `threads`).
std::string validate_input_json(const ValidateArgs& a, const app::ValidationOptions& options) {
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
  j["moe"] = a.moe;
  return j.dump();
}

/// With mixture-of-experts rows: the median |error| of those rows and of the dense rows, and
/// per MoE row the distinct experts its steps hit against the predictor's expectation.
void print_moe_lines(const app::ValidationResult& result, std::ostream& out) {
  std::vector<double> moe, dense;
  for (const auto& p : result.points) (p.experts_expected > 0 ? moe : dense).push_back(p.error());
  if (moe.empty()) return;
  char line[300];
  std::snprintf(line, sizeof line,
                "mixture-of-experts rows: |error| median %.1f%%, p95 %.1f%% over %zu points; "
                "dense rows: median %.1f%%, p95 %.1f%% over %zu points (median)\n",
                100 * base::abs_nearest_rank_quantile(moe, 0.5),
                100 * base::abs_nearest_rank_quantile(moe, 0.95), moe.size(),
                dense.empty() ? 0.0 : 100 * base::abs_nearest_rank_quantile(dense, 0.5),
                dense.empty() ? 0.0 : 100 * base::abs_nearest_rank_quantile(dense, 0.95),
                dense.size());
  out << line;
  for (const auto& p : result.points) {
    if (!(p.experts_expected > 0)) continue;
    std::snprintf(line, sizeof line,
                  "  %s %s batch %lld context %lld: %.1f distinct experts per layer, %.1f "
                  "expected under uniform top-k routing\n",
                  p.model.c_str(), p.format.c_str(), static_cast<long long>(p.batch),
                  static_cast<long long>(p.context_tokens), p.experts_hit, p.experts_expected);
    out << line;
  }
}

}  // namespace

CLI::App* add_validate_command(CLI::App& app, ValidateArgs& val_args) {
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
  val_cmd->add_flag("--moe", val_args.moe,
                    "Also time the mixture-of-experts model OLMoE-1B-7B (models/families/"
                    "olmoe-1b-7b.json: 64 experts, top-8; random weights) beside the others; "
                    "its weights need 3.9 GB in int4, 6.9 GB in int8, 14 GB in bf16");
  val_cmd->add_flag("--quiet", val_args.quiet, "No progress lines on stderr");
  val_cmd
      ->add_option("--results-db", val_args.results_db,
                   "Results database the run is stored in (default: $LLMCAP_DB, else "
                   "$XDG_DATA_HOME/llmcap/runs.sqlite)")
      ->option_text("FILE");
  val_cmd->add_flag("--no-store", val_args.no_store,
                    "Do not store the run in the results database");
  CLI::Option* published =
      val_cmd->add_flag("--published", val_args.published,
                        "Instead: predict published benchmark measurements (engine, hardware, "
                        "model, load, lengths) and report the errors (docs/validation.md)");
  published->excludes(val_profile);
  val_cmd
      ->add_option("--published-file", val_args.published_file,
                   "Published measurements for --published (default: "
                   "<data dir>/validation/published.json)")
      ->option_text("FILE")
      ->needs(published);
  val_cmd
      ->add_flag("--datasheet", val_args.datasheet,
                 "With --published: the datasheet roofline and default engine limits for every "
                 "row instead of the rows' engine profiles (for comparison)")
      ->needs(published);
  val_cmd->add_option("--seed", val_args.seed, "Seed of --published's simulated arrivals")
      ->capture_default_str()
      ->needs(published);
  return val_cmd;
}

int run_validate_command(const ValidateArgs& a, const std::string& data_dir,
                         const std::string& command_line, std::ostream& out, std::ostream& err) {
  std::vector<app::NamedPath> inputs = {
      {"--profile", a.profile},
      {"--published-file", a.published_file},
      {"--results-db", a.no_store ? "" : store::default_db_path(a.results_db).string()}};
  for (const std::string& m : a.models) inputs.push_back({"--model", m});
  const std::vector<app::NamedPath> catalog_files = app::data_dir_inputs(data_dir);
  inputs.insert(inputs.end(), catalog_files.begin(), catalog_files.end());
  app::check_output_paths({{"--json", a.json_out}, {"--save-profile", a.save_profile}}, inputs);
  if (a.published) return run_validate_published(a, data_dir, out);
  app::ValidationOptions options;
  const std::filesystem::path data = data_dir;
  if (a.models.empty()) {
    options.models = {data / "models" / "llama-3.2-1b.json", data / "models" / "qwen2.5-0.5b.json"};
  } else {
    options.models.assign(a.models.begin(), a.models.end());
  }
  if (a.moe) options.models.push_back(data / "models" / "families" / "olmoe-1b-7b.json");
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

  app::BenchmarkProfileOptions po;
  po.profile_file = a.profile;
  po.save_file = a.save_profile;
  app::OutputSet outputs;  // --save-profile joins it after the quick calibration
  po.outputs = &outputs;
  po.models = options.models;
  po.formats = options.formats;
  po.threads = a.threads;
  po.tool = "llmcap validate (quick calibration)";
  if (!a.quiet) po.progress = [&err](const std::string& line) { err << "  " << line << "\n"; };
  std::string source;
  const model::CalibrationProfile profile = app::benchmark_profile(po, source);
  const app::ValidationResult result = app::run_validation(options, profile, source);
  // Built whether or not --json was given: the results database stores the same document.
  const std::string json = app::validation_to_json(result);
  outputs.add("--json", a.json_out, json);
  outputs.commit();
  print_validation(result, out);
  app::store_validate_run(result, json, validate_input_json(a, options), a.results_db, a.no_store,
                          command_line, err);
  return kExitOk;
}

void print_validation(const app::ValidationResult& result, std::ostream& out) {
  out << "Reference decoder steps on this machine (" << result.threads
      << " threads) against the calibrated predictor (" << result.profile << ").\n"
      << "median: median step over the runs, rates fitted to the kernels' median times;\n"
      << "min: fastest step, rates fitted to the kernels' fastest times (uncontended).\n\n";
  out << std::left << std::setw(16) << "model" << std::setw(7) << "format" << std::right
      << std::setw(6) << "batch" << std::setw(9) << "context" << std::setw(12) << "median ms"
      << std::setw(13) << "predicted" << std::setw(9) << "error" << std::setw(10) << "min ms"
      << std::setw(13) << "predicted" << std::setw(9) << "error";
  if (result.retimed) {
    out << std::setw(11) << "re-timed" << std::setw(9) << "error" << std::setw(9) << "paired";
  }
  out << "\n";
  for (const auto& p : result.points) {
    char line[200];
    int n = std::snprintf(line, sizeof line, "%12.2f%13.2f%+8.1f%%%10.2f%13.2f%+8.1f%%",
                          p.measured_s * 1e3, p.predicted_s * 1e3, 100 * p.error(),
                          p.measured_min_s * 1e3, p.predicted_min_s * 1e3, 100 * p.min_error());
    if (result.retimed && n > 0 && n < static_cast<int>(sizeof line)) {
      std::snprintf(line + n, sizeof line - static_cast<size_t>(n), "%11.2f%+8.1f%%%+8.1f%%",
                    p.predicted_retimed_s * 1e3, 100 * p.retimed_error(),
                    100 * p.retimed_paired_error);
    }
    out << std::left << std::setw(16) << p.model << std::setw(7) << p.format << std::right
        << std::setw(6) << p.batch << std::setw(9) << p.context_tokens << line << "\n";
  }
  char summary[400];
  std::snprintf(summary, sizeof summary,
                "\n|error| over %zu points: median %.1f%%, p95 %.1f%% (median); median %.1f%%, "
                "p95 %.1f%% (min)\n"
                "read bandwidth: %.1f GB/s in the profile, %.1f GB/s during these runs (median of "
                "probes)\n",
                result.points.size(), 100 * result.median_abs_error, 100 * result.p95_abs_error,
                100 * result.min_median_abs_error, 100 * result.min_p95_abs_error,
                result.profile_read_bytes_per_s / 1e9, result.validation_read_bytes_per_s / 1e9);
  out << summary;
  std::snprintf(summary, sizeof summary,
                "without the measured model shapes (the fit over all shapes alone): median "
                "%.1f%%, p95 %.1f%% (median)\n",
                100 * result.fit_only_median_abs_error, 100 * result.fit_only_p95_abs_error);
  out << summary;
  if (result.retimed) {
    std::snprintf(summary, sizeof summary,
                  "with the model's kernels re-timed between the steps (re-timed): median %.1f%%, "
                  "p95 %.1f%%; paired by round (each round's steps against the kernels re-timed "
                  "right before them): median %.1f%%, p95 %.1f%%\n",
                  100 * result.retimed_median_abs_error, 100 * result.retimed_p95_abs_error,
                  100 * result.retimed_paired_median_abs_error,
                  100 * result.retimed_paired_p95_abs_error);
    out << summary;
  }
  print_moe_lines(result, out);
  std::snprintf(summary, sizeof summary,
                "the steps' own spread over the runs (|step / median - 1|, median per point): "
                "median %.1f%%, p95 %.1f%%: the machine's noise, below which an error cannot "
                "be told from it\n",
                100 * result.spread_median, 100 * result.spread_p95);
  out << summary;
  if (result.points.empty() || result.points.front().section_names.empty()) return;
  out << "\nBy operator (median over the points): share of the measured step, error of the "
         "predicted time\n";
  const auto& names = result.points.front().section_names;
  for (size_t i = 0; i < names.size(); ++i) {
    std::vector<double> share, error, retimed_error;
    bool predicted = false;  // rope_kv_append has no operator in the predictor's graph
    for (const auto& p : result.points) {
      predicted = predicted || p.section_predicted_s[i] > 0;
      share.push_back(p.section_measured_s[i] / p.measured_s);
      if (p.section_measured_s[i] > 0) {
        error.push_back(p.section_predicted_s[i] / p.section_measured_s[i] - 1.0);
        if (result.retimed) {
          retimed_error.push_back(p.section_retimed_s[i] / p.section_measured_s[i] - 1.0);
        }
      }
    }
    std::sort(share.begin(), share.end());
    std::sort(error.begin(), error.end());
    std::sort(retimed_error.begin(), retimed_error.end());
    char line[200];
    if (predicted) {
      const int n = std::snprintf(line, sizeof line, "  %-20s %5.1f%% of the step   error %+6.1f%%",
                                  names[i].c_str(), 100 * share[share.size() / 2],
                                  error.empty() ? 0.0 : 100 * error[error.size() / 2]);
      if (!retimed_error.empty() && n > 0 && n < static_cast<int>(sizeof line)) {
        std::snprintf(line + n, sizeof line - static_cast<size_t>(n), ", re-timed %+6.1f%%",
                      100 * retimed_error[retimed_error.size() / 2]);
      }
    } else {
      std::snprintf(line, sizeof line, "  %-20s %5.1f%% of the step   (not in the predictor)",
                    names[i].c_str(), 100 * share[share.size() / 2]);
    }
    out << line << "\n";
  }
}

}  // namespace llmcap::cli
