// `llmcap serve-bench`: its options, the printed table and the command (cli/serve_bench.h).
#include "cli/serve_bench.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <string>

#include "app/output_files.h"
#include "app/plan_output.h"
#include "app/serve_bench_output.h"
#include "base/stats.h"
#include "base/text.h"
#include "cli/cli.h"
#include "store/results_store.h"

namespace llmcap::cli {
namespace {

using base::fixed;

}  // namespace

CLI::App* add_serve_bench_command(CLI::App& app, ServeBenchArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "serve-bench",
      "Serve a scaled real trace in real time with the reference decoder (continuous "
      "batching, random weights) on this CPU and compare TTFT and TPOT with the simulator "
      "replaying the same arrivals with the calibrated predictor");
  cmd->add_option("--model", a.bench.model,
                  "Hugging Face config.json of a Llama-architecture model (default: "
                  "Qwen2.5-0.5B from the data folder)")
      ->option_text("FILE");
  cmd->add_option("--format", a.bench.format, "Weight format (f32, bf16, int8, int4)")
      ->capture_default_str();
  cmd->add_option("--arrivals", a.bench.arrivals,
                  "trace: the arrival times of --trace; poisson: Poisson arrivals with the "
                  "lengths of --trace")
      ->capture_default_str();
  cmd->add_option("--trace", a.bench.trace,
                  "Arrival trace (Azure or Vidur CSV) or, with --arrivals poisson, a length file "
                  "(default: the Azure conversation trace / ShareGPT lengths)")
      ->option_text("FILE");
  cmd->add_option("--trace-start-s", a.bench.trace_start_s,
                  "Start of the trace segment used (seconds of the trace's own time)")
      ->capture_default_str();
  CLI::Option* loads = cmd->add_option("--loads", a.bench.loads,
                                       "Loads as fractions of the estimated saturation rate")
                           ->delimiter(',')
                           ->capture_default_str();
  CLI::Option* multipliers =
      cmd->add_option("--rate-multiplier", a.bench.rate_multipliers,
                      "Instead of --loads: trace speed-ups (arrival offsets divided by each)")
          ->delimiter(',');
  loads->excludes(multipliers);
  cmd->add_option("--duration-s", a.bench.duration_s, "Arrival window of each load, seconds")
      ->capture_default_str();
  cmd->add_option("--prompt-scale", a.bench.prompt_scale, "Prompt lengths are multiplied by this")
      ->capture_default_str();
  cmd->add_option("--output-scale", a.bench.output_scale, "Output lengths are multiplied by this")
      ->capture_default_str();
  cmd->add_option("--max-prompt-tokens", a.bench.max_prompt_tokens, "Cap on scaled prompt lengths")
      ->capture_default_str();
  cmd->add_option("--max-output-tokens", a.bench.max_output_tokens, "Cap on scaled output lengths")
      ->capture_default_str();
  cmd->add_option("--max-num-seqs", a.bench.max_num_seqs, "Sequences running at once")
      ->capture_default_str();
  cmd->add_option("--max-num-batched-tokens", a.bench.max_num_batched_tokens,
                  "Prompt tokens admitted per prefill step")
      ->capture_default_str();
  cmd->add_option("--block-size", a.bench.block_size_tokens, "Tokens per KV-cache block")
      ->capture_default_str();
  cmd->add_option("--kv-blocks", a.bench.num_kv_blocks,
                  "KV-cache blocks (default 0: max-num-seqs x the blocks of the longest request)")
      ->capture_default_str();
  cmd->add_option("--seed", a.bench.seed, "Seed of the weights, prompt tokens and Poisson arrivals")
      ->capture_default_str();
  CLI::Option* profile =
      cmd->add_option("--profile", a.bench.profile,
                      "Calibration profile JSON of this machine (default: run a quick "
                      "calibration first)")
          ->option_text("FILE");
  cmd->add_option("--save-profile", a.bench.save_profile,
                  "Also write the quick calibration's profile JSON to FILE (as calibrate --out)")
      ->option_text("FILE")
      ->excludes(profile);
  cmd->add_option("--threads", a.bench.threads,
                  "Threads of the quick calibration when no --profile is given (the decoder then "
                  "runs with the profile's thread count)");
  cmd->add_option("--json", a.json_out,
                  "Write {rows: [{load, metric, quantile, measured_s, simulated_s}], ...} to FILE")
      ->option_text("FILE");
  cmd->add_option("--steps-csv", a.steps_csv,
                  "Write every step of the real runs (shape, measured and predicted time) to FILE")
      ->option_text("FILE");
  cmd->add_option("--requests-csv", a.requests_csv,
                  "Write every request's measured, simulated and step-corrected TTFT, TPOT and "
                  "E2E latency to FILE")
      ->option_text("FILE");
  cmd->add_option("--data-dir", a.data_dir, "Folder with models/ and traces/ (see plan --help)")
      ->option_text("DIR");
  cmd->add_flag("--prefix-caching", a.bench.prefix_caching,
                "Cache the prefixes of keyed requests (a .jsonl trace's hash blocks, scaled by "
                "--prompt-scale) in the real loop and the simulator");
  cmd->add_option("--conversation-sample", a.bench.conversation_sample,
                  "Of a .jsonl trace, keep the conversations whose 2nd hash id is a multiple of "
                  "this (about 1/K of them, whole)")
      ->capture_default_str();
  cmd->add_flag("--quiet", a.bench.quiet, "No progress lines on stderr");
  cmd->add_option("--results-db", a.results_db,
                  "Results database the run is stored in (default: $LLMCAP_DB, else "
                  "$XDG_DATA_HOME/llmcap/runs.sqlite)")
      ->option_text("FILE");
  cmd->add_flag("--no-store", a.no_store, "Do not store the run in the results database");
  return cmd;
}

void print_serve_bench(const app::ServeBenchReport& r, std::ostream& out) {
  out << "serve-bench: " << r.model << ", " << r.format << " weights, bf16 KV cache, " << r.threads
      << " threads; continuous batching (max_num_seqs " << r.config.max_num_seqs
      << ", max_num_batched_tokens " << r.config.max_num_batched_tokens << ", "
      << r.config.num_kv_blocks << " KV blocks of " << r.config.block_size_tokens << " tokens"
      << (r.config.prefix_caching ? "; prefix caching" : "") << ")\n"
      << "  workload: " << r.workload << "\n"
      << "  predictor: calibrated roofline (" << r.profile << "); estimated saturation "
      << fixed(r.saturation_requests_per_s, 3) << " requests/s\n";
  for (const app::ServeBenchRun& run : r.runs) {
    out << "\nload " << fixed(run.load, 2) << ": " << run.num_requests << " requests, "
        << fixed(run.offered_requests_per_s, 3) << " requests/s offered";
    if (run.rate_multiplier > 0) out << " (trace x" << fixed(run.rate_multiplier, 3) << ")";
    out << "; read bandwidth " << fixed(run.read_bytes_per_s / 1e9, 1) << " GB/s (profile "
        << fixed(r.profile_read_bytes_per_s / 1e9, 1) << "); other processes "
        << fixed(run.other_cpu_cores, 2) << " cores busy on average, steal "
        << fixed(run.steal_cpu_cores, 2) << "\n"
        << "  steps: measured " << run.measured_steps << ", simulated " << run.simulated_steps
        << "; preemptions " << run.measured_preemptions << " / " << run.simulated_preemptions
        << "; last completion " << fixed(run.measured_end_s, 2) << " s / "
        << fixed(run.simulated_end_s, 2) << " s; mean decode batch "
        << fixed(run.measured_mean_batch, 2) << "; loop overhead "
        << fixed(run.loop_overhead_s * 1e6, 1) << " us/step\n";
    if (run.prefix_caching) {
      out << "  prefix cache hit rate: measured " << fixed(100 * run.measured_hit_rate, 1) << "% ("
          << run.measured_saved_prefill_tokens << " prefill tokens saved, "
          << run.measured_evicted_blocks << " blocks evicted), simulated ";
      if (run.simulated_prefix_caching) {
        out << fixed(100 * run.simulated_hit_rate, 1) << "% (" << run.simulated_saved_prefill_tokens
            << " saved, " << run.simulated_evicted_blocks << " evicted)\n";
      } else {
        out << "n/a: this simulator has no prefix cache, so its figures below are for the same "
               "arrivals WITHOUT prefix caching\n";
      }
    }
    out << "  step-time probe before the run, measured / predicted: prefill "
        << fixed(run.probe_prefill_ratio, 2) << ", decode " << fixed(run.probe_decode_ratio, 2)
        << "\n"
        << "  step time, predicted / measured - 1: prefill median "
        << fixed(100 * run.prefill_step_error_median, 1) << "% over " << run.num_prefill_steps
        << " steps (total " << fixed(run.prefill_predicted_total_s, 2) << " s predicted, "
        << fixed(run.prefill_measured_total_s, 2) << " s measured), decode median "
        << fixed(100 * run.decode_step_error_median, 1) << "% over " << run.num_decode_steps
        << " steps (total " << fixed(run.decode_predicted_total_s, 2) << " s / "
        << fixed(run.decode_measured_total_s, 2) << " s)\n";
  }
  out << "\n"
      << std::left << std::setw(5) << "load" << std::setw(7) << "metric" << std::setw(4) << "q"
      << std::right << std::setw(11) << "measured s" << std::setw(12) << "simulated s"
      << std::setw(9) << "error"
      << "  target    " << std::setw(11) << "probe-resc." << std::setw(9) << "error"
      << std::setw(11) << "run-corr." << std::setw(9) << "error"
      << "\n";
  const auto pct = [](double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%+.1f%%", 100 * v);
    return std::string(buffer);
  };
  for (const app::ServeBenchRow& row : r.rows) {
    const double err = base::relative_error(row.simulated_s, row.measured_s);
    const double target = row.quantile == "p99" ? 0.15 : 0.10;
    out << std::left << std::setw(5) << fixed(row.load, 2) << std::setw(7) << row.metric
        << std::setw(4) << row.quantile << std::right << std::setw(11) << fixed(row.measured_s, 4)
        << std::setw(12) << fixed(row.simulated_s, 4) << std::setw(9) << pct(err) << "  "
        << (std::fabs(err) <= target ? "within " : "MISSES ") << std::setw(2)
        << fixed(100 * target, 0) << "%" << std::setw(11) << fixed(row.probe_rescaled_s, 4)
        << std::setw(9) << pct(base::relative_error(row.probe_rescaled_s, row.measured_s))
        << std::setw(11) << fixed(row.step_corrected_s, 4) << std::setw(9)
        << pct(base::relative_error(row.step_corrected_s, row.measured_s)) << "\n";
  }
  out << "simulated: the calibrated predictor (profile). probe-resc.: its prefill and decode step "
         "times scaled by a step-time probe of the\nmachine just before the load. run-corr.: a "
         "diagnostic, not a prediction: scaled by the run's own measured / predicted time of "
         "each\n(summed over its steps; what is left is step-time variance and scheduling).\n";
  const bool sim_without_cache = std::any_of(r.runs.begin(), r.runs.end(), [](const auto& run) {
    return run.prefix_caching && !run.simulated_prefix_caching;
  });
  if (sim_without_cache) {
    out << "NOTE: measured with prefix caching, simulated WITHOUT it (this simulator has no prefix "
           "cache): the errors above\ncompare unlike engines.\n";
  }
  out << "\nsensitivity: simulated again with every predicted step "
      << fixed(100 * app::kSensitivity, 0) << "% shorter / longer (the change of each quantile)\n"
      << std::left << std::setw(5) << "load" << std::setw(7) << "metric" << std::setw(4) << "q"
      << std::right << std::setw(12) << "simulated s" << std::setw(12) << "steps -5%"
      << std::setw(9) << "change" << std::setw(12) << "steps +5%" << std::setw(9) << "change"
      << "\n";
  for (const app::ServeBenchRow& row : r.rows) {
    out << std::left << std::setw(5) << fixed(row.load, 2) << std::setw(7) << row.metric
        << std::setw(4) << row.quantile << std::right << std::setw(12) << fixed(row.simulated_s, 4)
        << std::setw(12) << fixed(row.steps_faster_s, 4) << std::setw(9)
        << pct(base::relative_error(row.steps_faster_s, row.simulated_s)) << std::setw(12)
        << fixed(row.steps_slower_s, 4) << std::setw(9)
        << pct(base::relative_error(row.steps_slower_s, row.simulated_s)) << "\n";
  }
}

int run_serve_bench_command(const ServeBenchArgs& a, const std::filesystem::path& data_dir,
                            const std::string& command_line, std::ostream& out, std::ostream& err) {
  app::check_output_paths(
      {{"--json", a.json_out},
       {"--steps-csv", a.steps_csv},
       {"--requests-csv", a.requests_csv},
       {"--save-profile", a.bench.save_profile}},
      {{"--model", a.bench.model},
       {"--trace", a.bench.trace},
       {"--profile", a.bench.profile},
       {"--results-db", a.no_store ? "" : store::default_db_path(a.results_db).string()}});
  app::OutputSet outputs;  // --save-profile joins it during the run
  app::ServeBenchOptions options = a.bench;
  options.keep_steps = !a.steps_csv.empty();
  options.keep_requests = !a.requests_csv.empty();
  options.outputs = &outputs;
  const app::ServeBenchReport report = app::run_serve_bench(options, data_dir, err);

  // The JSON is built whether or not --json was given: the results database stores it.
  const std::string json = app::serve_bench_to_json(report);
  const std::string steps = a.steps_csv.empty() ? "" : app::serve_bench_steps_csv(report);
  outputs.add("--json", a.json_out, json);
  outputs.add("--steps-csv", a.steps_csv, steps);
  outputs.add("--requests-csv", a.requests_csv,
              a.requests_csv.empty() ? "" : app::serve_bench_requests_csv(report));
  outputs.commit();
  print_serve_bench(report, out);
  app::store_serve_bench_run(report, json, app::serve_bench_input_json(a.bench, data_dir),
                             a.results_db, a.no_store, command_line, err);
  return kExitOk;
}

}  // namespace llmcap::cli
