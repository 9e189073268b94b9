#include "cli/calibrate_cmd.h"

#include <CLI/CLI.hpp>
#include <filesystem>
#include <iomanip>

#include "app/decoder_support.h"
#include "app/output_files.h"
#include "app/plan_output.h"
#include "app/profile.h"
#include "app/run_store.h"
#include "base/text.h"
#include "cli/cli.h"
#include "kernels/calibrate.h"
#include "kernels/harness.h"
#include "model/calibration.h"
#include "store/profile_store.h"
#include "store/results_store.h"

namespace llmcap::cli {
namespace {

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

}  // namespace

CLI::App* add_calibrate_command(CLI::App& app, CalibrateArgs& cal_args) {
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

  // --from-benchmark: fit an engine profile to the user's own benchmark results.
  const std::string group = "From benchmark results (docs/calibrate-from-benchmark.md)";
  cal_cmd
      ->add_option("--from-benchmark", cal_args.benchmark_files,
                   "Fit the --engine profile to these result files instead of measuring this "
                   "machine: vllm bench serve --save-result, SGLang bench_serving --output-file, "
                   "llama-bench -o json, genai-perf / AIPerf profile exports, trtllm-bench "
                   "--report_json; --out writes the fitted profile")
      ->option_text("FILE...")
      ->group(group);
  cal_cmd->add_option("--engine", cal_args.engine, "Engine the files measured (data/engines/ id)")
      ->option_text("ID")
      ->group(group);
  cal_cmd
      ->add_option("--hardware", cal_args.hardware,
                   "Catalog id of the GPU or CPU the files were measured on (data/hardware/)")
      ->option_text("ID")
      ->group(group);
  cal_cmd->add_option("--devices", cal_args.devices, "GPUs the benchmark used")
      ->check(CLI::PositiveNumber)
      ->capture_default_str()
      ->group(group);
  cal_cmd->add_option("--tp", cal_args.tensor_parallel, "GPUs per replica (default: --devices)")
      ->check(CLI::PositiveNumber)
      ->group(group);
  cal_cmd
      ->add_option("--cores", cal_args.cores,
                   "CPU cores the benchmark used (default: the thread count the file gives, else "
                   "one socket)")
      ->check(CLI::PositiveNumber)
      ->group(group);
  cal_cmd->add_option("--weight-format", cal_args.weight_format, "Weight format the model ran in")
      ->capture_default_str()
      ->group(group);
  cal_cmd->add_option("--kv-format", cal_args.kv_format, "KV cache format")
      ->capture_default_str()
      ->group(group);
  cal_cmd->add_option("--json", cal_args.fit_json_out, "Also write the fit, every point, to FILE")
      ->option_text("FILE")
      ->group(group);
  cal_cmd
      ->add_option("--data-dir", cal_args.data_dir, "Catalog folder (default: as plan --data-dir)")
      ->option_text("DIR")
      ->group(group);
  cal_cmd->add_option("--seed", cal_args.seed, "Seed of the replayed arrivals")
      ->capture_default_str()
      ->group(group);
  return cal_cmd;
}

int run_calibrate_command(const CalibrateArgs& a, const std::string& command_line,
                          std::ostream& out, std::ostream& err) {
  std::vector<app::NamedPath> inputs = {
      {"--results-db", a.no_store ? "" : store::default_db_path(a.results_db).string()}};
  for (const std::string& m : a.models) inputs.push_back({"--model", m});
  app::check_output_paths({{"--out", a.json_out}, {"--db", a.db_out}}, inputs);
  kernels::CalibrationOptions options;
  options.quick = a.quick;
  options.max_threads = a.threads;
  options.size = a.test_sweep ? kernels::SweepSize::kTest : kernels::SweepSize::kFull;
  const std::vector<std::filesystem::path> models(a.models.begin(), a.models.end());
  options.extra_matmul_shapes = app::model_matmul_shapes(models);
  options.extra_attention_layouts = app::model_attention_layouts(models);
  if (!a.quiet) options.progress = [&err](const std::string& line) { err << "  " << line << "\n"; };
  const kernels::CalibrationRun run = kernels::run_calibration(options);
  const model::CalibrationProfile profile = app::to_profile(
      run, command_line,
      a.fit_statistic == "min" ? model::FitStatistic::kMin : model::FitStatistic::kMedian);
  // Render first, so that nothing is written unless all of it succeeded.
  const std::string json = a.json_out.empty() ? "" : model::profile_to_json(profile);
  // The file is staged first: a failing --db write then leaves no --out either.
  app::OutputSet outputs;
  outputs.add("--out", a.json_out, json);
  outputs.stage();
  if (!a.db_out.empty()) store::write_profile(a.db_out, profile);
  outputs.commit();
  print_calibration(profile, run, out);
  app::store_calibration_run(model::profile_to_json(profile), profile.machine.cpu_model,
                             a.results_db, a.no_store, command_line, err);
  return kExitOk;
}

}  // namespace llmcap::cli
