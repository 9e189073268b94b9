#include "cli/serve_bench.h"

#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <span>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "app/decoder_support.h"
#include "app/plan_output.h"
#include "app/profile.h"
#include "app/run_store.h"
#include "base/stats.h"
#include "base/text.h"
#include "cli/cli.h"
#include "kernels/calibrate.h"
#include "kernels/decoder.h"
#include "kernels/machine.h"
#include "kernels/thread_pool.h"
#include "model/calibration.h"
#include "model/formats.h"
#include "model/input_error.h"
#include "model/model_spec.h"
#include "model/roofline.h"
#include "sim/input_error.h"
#include "sim/metrics.h"

namespace llmcap::cli {
namespace {

using sim::SimTime;

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

using base::describe;
using base::fixed;

}  // namespace

// ---- The benchmark ------------------------------------------------------------------------------

namespace {

constexpr const char* kDefaultModel = "qwen2.5-0.5b.json";
constexpr const char* kDefaultTrace = "AzureLLMInferenceTrace_conv.csv";
constexpr const char* kDefaultLengths = "sharegpt_8k_filtered_stats_llama2_tokenizer.csv";

/// CPU seconds of the whole machine (busy: user, nice, system, irq, softirq; steal) from the
/// first line of /proc/stat, and of this process (user + system, getrusage), for the
/// contention figures of a run. `ok` is false where /proc/stat cannot be read.
struct CpuSample {
  double busy_s = 0;
  double steal_s = 0;
  double self_s = 0;
  bool ok = false;
};

CpuSample sample_cpu() {
  CpuSample sample;
  std::ifstream stat("/proc/stat");
  std::string label;
  uint64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  if (!(stat >> label >> user >> nice >> system >> idle >> iowait >> irq >> softirq >> steal) ||
      label != "cpu") {
    return sample;
  }
  const double tick_s = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  sample.busy_s = static_cast<double>(user + nice + system + irq + softirq) * tick_s;
  sample.steal_s = static_cast<double>(steal) * tick_s;
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  sample.self_s = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-6;
  sample.ok = true;
  return sample;
}

[[noreturn]] void bad_option(const std::string& option, const std::string& expected,
                             const std::string& got) {
  throw sim::InputError("serve-bench: " + option + ": expected " + expected + ", got " + got);
}

/// `base` with prefill-step and decode-step times multiplied by fixed factors, plus a fixed
/// per-step overhead (the probe_rescaled_s and step_corrected_s columns and the sensitivity
/// runs, steps_faster_s / steps_slower_s).
class ScaledPredictor final : public model::StepTimePredictor {
 public:
  ScaledPredictor(const model::StepTimePredictor& base, double prefill_factor, double decode_factor,
                  double overhead_s)
      : base_(base),
        prefill_factor_(prefill_factor),
        decode_factor_(decode_factor),
        overhead_s_(overhead_s) {}
  double step_time_s(const model::BatchShape& b) const override {
    if (b.empty()) return 0.0;
    const double factor = b.num_prefill_seqs > 0 ? prefill_factor_ : decode_factor_;
    return base_.step_time_s(b) * factor + overhead_s_;
  }

 private:
  const model::StepTimePredictor& base_;
  double prefill_factor_, decode_factor_, overhead_s_;
};

/// Median wall time of `runs` calls of fn after one warm-up call.
template <class Fn>
double median_time_s(int runs, const Fn& fn) {
  fn();
  std::vector<double> times;
  for (int i = 0; i < runs; ++i) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  return base::upper_median(std::move(times));
}

/// The step-time probe (ServeBenchRun::probe_prefill_ratio, probe_decode_ratio): real
/// decoder steps of fixed shapes against `predictor` (without loop overhead). Leaves the
/// decoder's slots in any state (the loop's prefills start from cached_tokens 0).
std::pair<double, double> probe_step_ratios(kernels::ReferenceDecoder& decoder,
                                            kernels::ThreadPool& pool,
                                            const model::StepTimePredictor& predictor,
                                            int64_t max_prompt_tokens) {
  constexpr int kRuns = 3;
  double prefill_sum = 0, decode_sum = 0;
  for (const int64_t wanted : {int64_t{128}, int64_t{512}}) {
    const int64_t n = std::min(wanted, std::min(max_prompt_tokens, decoder.max_context()));
    const std::vector<int64_t> prompt(static_cast<size_t>(n), 1);
    const kernels::PrefillSequence seq{0, 0, prompt};
    const double measured_s =
        median_time_s(kRuns, [&] { decoder.prefill(std::span(&seq, 1), pool); });
    model::BatchShape shape;
    shape.num_prefill_seqs = shape.num_prefill_seqs_completing = 1;
    shape.num_prefill_tokens = n;
    shape.num_prefill_attention_pairs = n * (n + 1) / 2;
    prefill_sum += measured_s / predictor.step_time_s(shape);
  }
  const int64_t context = std::min<int64_t>(128, decoder.max_context() - 1);
  for (const int64_t wanted : {int64_t{2}, int64_t{8}}) {
    const int64_t batch = std::min(wanted, decoder.max_batch());
    const std::vector<int64_t> contexts(static_cast<size_t>(batch), context);
    const double measured_s = median_time_s(kRuns, [&] {
      decoder.set_contexts(contexts);
      decoder.step(pool);
    });
    model::BatchShape shape;
    shape.num_decode_seqs = batch;
    shape.num_decode_context_tokens = batch * (context + 1);
    decode_sum += measured_s / predictor.step_time_s(shape);
  }
  return {prefill_sum / 2, decode_sum / 2};
}

using base::median;  // the nearest-rank median (docs/metrics.md)

}  // namespace

CLI::App* add_serve_bench_command(CLI::App& app, ServeBenchArgs& a) {
  CLI::App* cmd = app.add_subcommand(
      "serve-bench",
      "Serve a scaled real trace in real time with the reference decoder (continuous "
      "batching, random weights) on this CPU and compare TTFT and TPOT with the simulator "
      "replaying the same arrivals with the calibrated predictor");
  cmd->add_option("--model", a.model,
                  "Hugging Face config.json of a Llama-architecture model (default: "
                  "Qwen2.5-0.5B from the data folder)")
      ->option_text("FILE");
  cmd->add_option("--format", a.format, "Weight format (f32, bf16, int8, int4)")
      ->capture_default_str();
  cmd->add_option("--arrivals", a.arrivals,
                  "trace: the arrival times of --trace; poisson: Poisson arrivals with the "
                  "lengths of --trace")
      ->capture_default_str();
  cmd->add_option("--trace", a.trace,
                  "Arrival trace (Azure or Vidur CSV) or, with --arrivals poisson, a length file "
                  "(default: the Azure conversation trace / ShareGPT lengths)")
      ->option_text("FILE");
  cmd->add_option("--trace-start-s", a.trace_start_s,
                  "Start of the trace segment used (seconds of the trace's own time)")
      ->capture_default_str();
  CLI::Option* loads =
      cmd->add_option("--loads", a.loads, "Loads as fractions of the estimated saturation rate")
          ->delimiter(',')
          ->capture_default_str();
  CLI::Option* multipliers =
      cmd->add_option("--rate-multiplier", a.rate_multipliers,
                      "Instead of --loads: trace speed-ups (arrival offsets divided by each)")
          ->delimiter(',');
  loads->excludes(multipliers);
  cmd->add_option("--duration-s", a.duration_s, "Arrival window of each load, seconds")
      ->capture_default_str();
  cmd->add_option("--prompt-scale", a.prompt_scale, "Prompt lengths are multiplied by this")
      ->capture_default_str();
  cmd->add_option("--output-scale", a.output_scale, "Output lengths are multiplied by this")
      ->capture_default_str();
  cmd->add_option("--max-prompt-tokens", a.max_prompt_tokens, "Cap on scaled prompt lengths")
      ->capture_default_str();
  cmd->add_option("--max-output-tokens", a.max_output_tokens, "Cap on scaled output lengths")
      ->capture_default_str();
  cmd->add_option("--max-num-seqs", a.max_num_seqs, "Sequences running at once")
      ->capture_default_str();
  cmd->add_option("--max-num-batched-tokens", a.max_num_batched_tokens,
                  "Prompt tokens admitted per prefill step")
      ->capture_default_str();
  cmd->add_option("--block-size", a.block_size_tokens, "Tokens per KV-cache block")
      ->capture_default_str();
  cmd->add_option("--kv-blocks", a.num_kv_blocks,
                  "KV-cache blocks (default 0: max-num-seqs x the blocks of the longest request)")
      ->capture_default_str();
  cmd->add_option("--seed", a.seed, "Seed of the weights, prompt tokens and Poisson arrivals")
      ->capture_default_str();
  CLI::Option* profile =
      cmd->add_option("--profile", a.profile,
                      "Calibration profile JSON of this machine (default: run a quick "
                      "calibration first)")
          ->option_text("FILE");
  cmd->add_option("--save-profile", a.save_profile,
                  "Also write the quick calibration's profile JSON to FILE (as calibrate --out)")
      ->option_text("FILE")
      ->excludes(profile);
  cmd->add_option("--threads", a.threads,
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
  cmd->add_flag("--quiet", a.quiet, "No progress lines on stderr");
  cmd->add_option("--results-db", a.results_db,
                  "Results database the run is stored in (default: $LLMCAP_DB, else "
                  "$XDG_DATA_HOME/llmcap/runs.sqlite)")
      ->option_text("FILE");
  cmd->add_flag("--no-store", a.no_store, "Do not store the run in the results database");
  return cmd;
}

void validate_serve_bench_args(const ServeBenchArgs& a) {
  if (a.arrivals != "trace" && a.arrivals != "poisson") {
    throw sim::InputError("serve-bench: --arrivals: unknown arrival process \"" + a.arrivals +
                          "\"; known: trace, poisson");
  }
  if (a.rate_multipliers.empty() && a.loads.empty()) {
    bad_option("--loads", "at least one load", "none");
  }
  for (const double f : a.loads) {
    if (!(f > 0) || !std::isfinite(f)) bad_option("--loads", "fractions > 0", describe(f));
  }
  for (const double m : a.rate_multipliers) {
    if (!(m > 0) || !std::isfinite(m)) bad_option("--rate-multiplier", "values > 0", describe(m));
  }
  if (!a.rate_multipliers.empty() && a.arrivals != "trace") {
    throw sim::InputError(
        "serve-bench: --rate-multiplier: needs --arrivals trace (Poisson "
        "arrivals are set by --loads)");
  }
  if (!(a.duration_s > 0) || !(a.duration_s <= 3600)) {
    bad_option("--duration-s", "seconds in (0, 3600]", describe(a.duration_s));
  }
  if (!(a.trace_start_s >= 0) || !std::isfinite(a.trace_start_s)) {
    bad_option("--trace-start-s", "seconds >= 0", describe(a.trace_start_s));
  }
  if (!(a.prompt_scale > 0) || !std::isfinite(a.prompt_scale)) {
    bad_option("--prompt-scale", "a factor > 0", describe(a.prompt_scale));
  }
  if (!(a.output_scale > 0) || !std::isfinite(a.output_scale)) {
    bad_option("--output-scale", "a factor > 0", describe(a.output_scale));
  }
  const std::pair<const char*, int64_t> counts[] = {
      {"--max-prompt-tokens", a.max_prompt_tokens},
      {"--max-output-tokens", a.max_output_tokens},
      {"--max-num-seqs", a.max_num_seqs},
      {"--max-num-batched-tokens", a.max_num_batched_tokens},
      {"--block-size", a.block_size_tokens}};
  for (const auto& [name, value] : counts) {
    if (value < 1) bad_option(name, "an integer >= 1", std::to_string(value));
  }
  if (a.max_num_seqs > 256)
    bad_option("--max-num-seqs", "at most 256", std::to_string(a.max_num_seqs));
  if (a.max_prompt_tokens + a.max_output_tokens > 32768) {
    bad_option("--max-prompt-tokens + --max-output-tokens", "at most 32768 tokens",
               std::to_string(a.max_prompt_tokens + a.max_output_tokens));
  }
  if (a.num_kv_blocks < 0) {
    bad_option("--kv-blocks", "an integer >= 0 (0: the default)", std::to_string(a.num_kv_blocks));
  }
  const int64_t longest = ceil_div(a.max_prompt_tokens + a.max_output_tokens, a.block_size_tokens);
  if (a.num_kv_blocks > 0 && a.num_kv_blocks < longest) {
    bad_option("--kv-blocks",
               "at least " + std::to_string(longest) +
                   " (the blocks of the longest request, --max-prompt-tokens + "
                   "--max-output-tokens)",
               std::to_string(a.num_kv_blocks));
  }
  if (a.threads < 0) bad_option("--threads", "an integer >= 1", std::to_string(a.threads));
}

sim::LengthSample scale_lengths(const sim::LengthSample& raw, const ServeBenchArgs& a) {
  const auto scale = [](int64_t n, double factor, int64_t cap) {
    const auto scaled = static_cast<int64_t>(std::llround(static_cast<double>(n) * factor));
    return std::clamp<int64_t>(scaled, 1, cap);
  };
  return {scale(raw.num_prompt_tokens, a.prompt_scale, a.max_prompt_tokens),
          scale(raw.num_output_tokens, a.output_scale, a.max_output_tokens)};
}

std::vector<sim::RequestSpec> scale_trace(const std::vector<sim::RequestSpec>& trace,
                                          double start_s, double rate_per_s, double rate_multiplier,
                                          double duration_s) {
  const SimTime start = SimTime::Seconds(start_s);
  const auto first =
      std::lower_bound(trace.begin(), trace.end(), start,
                       [](const sim::RequestSpec& r, SimTime t) { return r.arrival < t; });
  const auto available = static_cast<int64_t>(trace.end() - first);
  std::vector<sim::RequestSpec> out;
  if (available == 0) {
    throw sim::InputError(
        "serve-bench: --trace-start-s: no request of the trace arrives at or "
        "after " +
        describe(start_s) + " s");
  }
  const double base_s = first->arrival.seconds();
  if (rate_multiplier > 0) {
    for (auto it = first; it != trace.end(); ++it) {
      const double t = (it->arrival.seconds() - base_s) / rate_multiplier;
      if (t >= duration_s) break;
      sim::RequestSpec r = *it;
      r.arrival = SimTime::Seconds(t);
      out.push_back(r);
    }
    return out;
  }
  const int64_t n = std::max<int64_t>(1, std::llround(rate_per_s * duration_s));
  if (available < n + 1) {
    throw sim::InputError("serve-bench: the trace has " + std::to_string(available) +
                          " requests after --trace-start-s " + describe(start_s) + " s; " +
                          std::to_string(n + 1) + " are needed for " + describe(rate_per_s) +
                          " requests/s over --duration-s " + describe(duration_s) +
                          " (lower --trace-start-s, --duration-s or the load)");
  }
  const double span_s = first[n].arrival.seconds() - base_s;
  if (!(span_s > 0)) {
    throw sim::InputError("serve-bench: requests 1 and " + std::to_string(n + 1) +
                          " of the trace segment arrive at the same time; cannot scale it");
  }
  const double k = duration_s / span_s;
  for (int64_t i = 0; i < n; ++i) {
    sim::RequestSpec r = first[i];
    r.arrival = SimTime::Seconds((r.arrival.seconds() - base_s) * k);
    out.push_back(r);
  }
  return out;
}

double estimate_saturation_requests_per_s(const std::vector<sim::LengthSample>& lengths,
                                          const ServeConfig& config,
                                          const model::StepTimePredictor& predictor) {
  sim::Workload workload;
  workload.open_loop.reserve(lengths.size());
  for (const sim::LengthSample& s : lengths) {
    sim::RequestSpec r;
    r.num_prompt_tokens = s.num_prompt_tokens;
    r.num_output_tokens = s.num_output_tokens;
    workload.open_loop.push_back(r);
  }
  sim::FleetConfig fleet;
  fleet.serving = config.serving();
  sim::SimOptions options;
  options.record_itl_ns = false;
  const sim::SimResult result = sim::simulate(workload, fleet, predictor, 1, options);
  const auto completed = static_cast<double>(result.requests.size() - result.num_rejected);
  return result.end_time > SimTime::Zero() ? completed / result.end_time.seconds() : 0.0;
}

std::string serve_bench_input_json(const ServeBenchArgs& a, const std::filesystem::path& data_dir) {
  const bool trace_arrivals = a.arrivals == "trace";
  nlohmann::ordered_json j;
  j["model"] =
      (a.model.empty() ? data_dir / "models" / kDefaultModel : std::filesystem::path(a.model))
          .string();
  j["format"] = a.format;
  j["arrivals"] = a.arrivals;
  j["trace"] =
      (!a.trace.empty() ? std::filesystem::path(a.trace)
                        : data_dir / "traces" / (trace_arrivals ? kDefaultTrace : kDefaultLengths))
          .string();
  j["trace_start_s"] = a.trace_start_s;
  if (a.rate_multipliers.empty()) {
    j["loads"] = a.loads;
  } else {
    j["rate_multipliers"] = a.rate_multipliers;
  }
  j["duration_s"] = a.duration_s;
  j["prompt_scale"] = a.prompt_scale;
  j["output_scale"] = a.output_scale;
  j["max_prompt_tokens"] = a.max_prompt_tokens;
  j["max_output_tokens"] = a.max_output_tokens;
  j["max_num_seqs"] = a.max_num_seqs;
  j["max_num_batched_tokens"] = a.max_num_batched_tokens;
  j["block_size_tokens"] = a.block_size_tokens;
  j["num_kv_blocks"] = a.num_kv_blocks;
  j["seed"] = a.seed;
  j["profile"] = a.profile;
  j["threads"] = a.threads;
  return j.dump();
}

namespace {

/// What serve-bench serves: for trace arrivals the trace (lengths scaled), else the lengths to
/// draw Poisson arrivals from (scaled).
struct BenchWorkload {
  bool trace_arrivals = false;
  std::filesystem::path trace_path;
  std::vector<sim::RequestSpec> trace;
  std::vector<sim::LengthSample> lengths;
};

/// Reads --trace (or the default trace or lengths of `data_dir`) and scales the lengths.
/// Throws sim::InputError for a bad trace or a --trace-start-s past its last arrival.
BenchWorkload read_bench_workload(const ServeBenchArgs& a, const std::filesystem::path& data_dir) {
  BenchWorkload w;
  w.trace_arrivals = a.arrivals == "trace";
  const bool trace_arrivals = w.trace_arrivals;
  w.trace_path = !a.trace.empty()
                     ? std::filesystem::path(a.trace)
                     : data_dir / "traces" / (trace_arrivals ? kDefaultTrace : kDefaultLengths);
  std::vector<sim::RequestSpec>& trace = w.trace;
  std::vector<sim::LengthSample>& lengths = w.lengths;
  if (trace_arrivals) {
    trace = sim::load_trace(w.trace_path);
    for (sim::RequestSpec& r : trace) {
      const sim::LengthSample s = scale_lengths({r.num_prompt_tokens, r.num_output_tokens}, a);
      r.num_prompt_tokens = s.num_prompt_tokens;
      r.num_output_tokens = s.num_output_tokens;
      lengths.push_back(s);
    }
    if (!(SimTime::Seconds(a.trace_start_s) <= trace.back().arrival)) {
      bad_option("--trace-start-s",
                 "an offset within the trace (its last request arrives at " +
                     describe(trace.back().arrival.seconds()) + " s)",
                 describe(a.trace_start_s));
    }
  } else {
    for (const sim::LengthSample& s : sim::load_lengths(w.trace_path)) {
      lengths.push_back(scale_lengths(s, a));
    }
  }
  return w;
}

/// One load of serve-bench: a fraction of the estimated saturation (--loads) or a multiplier
/// of the trace's own rate (--rate-multipliers).
struct Load {
  double fraction;
  double multiplier;
};

/// The TTFT and TPOT rows (p50, p90, p99) of one load: the measured run against each
/// simulation (default, probed, corrected, 5% faster, 5% slower).
void add_metric_rows(double load, const sim::SimResult& measured_records,
                     const sim::SimResult& simulated, const sim::SimResult& probed,
                     const sim::SimResult& corrected, const sim::SimResult& faster,
                     const sim::SimResult& slower, ServeBenchReport& report) {
  const sim::Metrics m = sim::compute_metrics(measured_records, sim::Slo{});
  const sim::Metrics s = sim::compute_metrics(simulated, sim::Slo{});
  const sim::Metrics p = sim::compute_metrics(probed, sim::Slo{});
  const sim::Metrics c = sim::compute_metrics(corrected, sim::Slo{});
  const sim::Metrics f = sim::compute_metrics(faster, sim::Slo{});
  const sim::Metrics w = sim::compute_metrics(slower, sim::Slo{});
  const auto add = [&](const char* metric, const sim::Distribution sim::Metrics::*field) {
    const sim::Distribution &md = m.*field, &sd = s.*field, &pd = p.*field, &cd = c.*field,
                            &fd = f.*field, &wd = w.*field;
    report.rows.push_back(
        {load, metric, "p50", md.p50_s, sd.p50_s, pd.p50_s, cd.p50_s, fd.p50_s, wd.p50_s});
    report.rows.push_back(
        {load, metric, "p90", md.p90_s, sd.p90_s, pd.p90_s, cd.p90_s, fd.p90_s, wd.p90_s});
    report.rows.push_back(
        {load, metric, "p99", md.p99_s, sd.p99_s, pd.p99_s, cd.p99_s, fd.p99_s, wd.p99_s});
  };
  add("ttft", &sim::Metrics::ttft);
  add("tpot", &sim::Metrics::tpot);
}

/// Each measured step of a run against the predictor: the step-time errors and totals of
/// `run` (prefill and decode apart), its measured mean decode batch and step ratios, and (with
/// `keep_steps`) each step in report.steps.
void account_steps(const ServeResult& measured, const model::StepTimePredictor& predictor,
                   bool keep_steps, ServeBenchRun& run, ServeBenchReport& report) {
  std::vector<double> prefill_errors, decode_errors;
  double decode_seqs = 0;
  for (const ServeStepLog& step : measured.steps) {
    const double measured_s = (step.end - step.exec_start).seconds();
    const double predicted_s = predictor.step_time_s(step.shape);
    if (keep_steps) report.steps.push_back({run.load, step, predicted_s});
    if (step.prefill) {
      prefill_errors.push_back(base::relative_error(predicted_s, measured_s));
      run.prefill_measured_total_s += measured_s;
      run.prefill_predicted_total_s += predicted_s;
    } else {
      decode_errors.push_back(base::relative_error(predicted_s, measured_s));
      run.decode_measured_total_s += measured_s;
      run.decode_predicted_total_s += predicted_s;
      decode_seqs += static_cast<double>(step.shape.num_decode_seqs);
    }
  }
  run.prefill_step_ratio = run.prefill_predicted_total_s > 0
                               ? run.prefill_measured_total_s / run.prefill_predicted_total_s
                               : 1.0;
  run.decode_step_ratio = run.decode_predicted_total_s > 0
                              ? run.decode_measured_total_s / run.decode_predicted_total_s
                              : 1.0;
  run.num_prefill_steps = static_cast<int64_t>(prefill_errors.size());
  run.num_decode_steps = static_cast<int64_t>(decode_errors.size());
  run.prefill_step_error_median = median(prefill_errors);
  run.decode_step_error_median = median(decode_errors);
  run.measured_mean_batch =
      decode_errors.empty() ? 0.0 : decode_seqs / static_cast<double>(decode_errors.size());
}

/// Everything serve-bench runs one load with.
struct LoadBench {
  const ServeBenchArgs& a;
  const BenchWorkload& workload;
  const model::ModelSpec& spec;
  model::WeightFormat format;
  const model::Efficiency& efficiency;
  const model::Deployment& machine;
  const model::RooflinePredictor& predictor;
  kernels::ReferenceDecoder& decoder;
  kernels::ThreadPool& pool;
  kernels::ReadProbe& probe;
  std::ostream& err;  ///< progress lines, unless --quiet
};

/// Serves one load in real time on the reference decoder and simulates the same arrivals with
/// the predictor (as is, probed, corrected, 5% faster and slower): the run's figures; its rows
/// (and, when asked, steps and requests) are added to `report`. Throws sim::InputError when no
/// request arrives at this load.
ServeBenchRun bench_load(const LoadBench& bench, const Load& load, ServeBenchReport& report) {
  const ServeBenchArgs& a = bench.a;
  const bool trace_arrivals = bench.workload.trace_arrivals;
  const std::vector<sim::RequestSpec>& trace = bench.workload.trace;
  const std::vector<sim::LengthSample>& lengths = bench.workload.lengths;
  const model::ModelSpec& spec = bench.spec;
  const model::WeightFormat format = bench.format;
  const model::Efficiency& efficiency = bench.efficiency;
  const model::Deployment& machine = bench.machine;
  const model::RooflinePredictor& predictor = bench.predictor;
  kernels::ReferenceDecoder& decoder = bench.decoder;
  kernels::ThreadPool& pool = bench.pool;
  kernels::ReadProbe& probe = bench.probe;
  const ServeConfig& config = report.config;
  const auto progress = [&](const std::string& line) {
    if (!a.quiet) bench.err << "  " << line << "\n" << std::flush;
  };
  std::vector<sim::RequestSpec> arrivals;
  if (trace_arrivals) {
    arrivals = scale_trace(trace, a.trace_start_s, load.fraction * report.saturation_requests_per_s,
                           load.multiplier, a.duration_s);
  } else {
    sim::ArrivalOptions options;
    options.rate_per_s = load.fraction * report.saturation_requests_per_s;
    options.duration_s = a.duration_s;
    arrivals = sim::generate_arrivals(options, lengths, a.seed);
  }
  if (arrivals.empty()) {
    throw sim::InputError("serve-bench: no request arrives within --duration-s " +
                          describe(a.duration_s) + " s at this load");
  }
  ServeBenchRun run;
  run.num_requests = static_cast<int64_t>(arrivals.size());
  run.offered_requests_per_s = static_cast<double>(arrivals.size()) / a.duration_s;
  run.load = run.offered_requests_per_s / report.saturation_requests_per_s;
  if (trace_arrivals) {
    const SimTime start = SimTime::Seconds(a.trace_start_s);
    const auto first =
        std::lower_bound(trace.begin(), trace.end(), start,
                         [](const sim::RequestSpec& r, SimTime t) { return r.arrival < t; });
    const auto last = first + static_cast<int64_t>(arrivals.size()) - 1;
    run.rate_multiplier =
        load.multiplier > 0 ? load.multiplier
        : arrivals.back().arrival > SimTime::Zero()
            ? (last->arrival - first->arrival).seconds() / arrivals.back().arrival.seconds()
            : 0.0;
  }
  if (load.fraction > 0) run.load = load.fraction;
  run.read_bytes_per_s = probe.read_bytes_per_s(pool);
  std::tie(run.probe_prefill_ratio, run.probe_decode_ratio) =
      probe_step_ratios(decoder, pool, predictor, a.max_prompt_tokens);
  progress("load " + fixed(run.load, 2) + ": serving " + std::to_string(run.num_requests) +
           " requests over " + describe(a.duration_s) + " s in real time...");

  DecoderStepExecutor executor(decoder, pool, a.seed);
  const CpuSample cpu_before = sample_cpu();
  SteadyServeClock clock;
  const ServeResult measured = serve(arrivals, config, executor, clock);
  const double wall_s = clock.now().seconds();
  const CpuSample cpu_after = sample_cpu();
  if (cpu_before.ok && cpu_after.ok && wall_s > 0) {
    run.other_cpu_cores = std::max(0.0, (cpu_after.busy_s - cpu_before.busy_s) -
                                            (cpu_after.self_s - cpu_before.self_s)) /
                          wall_s;
    run.steal_cpu_cores = (cpu_after.steal_s - cpu_before.steal_s) / wall_s;
  }
  run.loop_overhead_s = measured.loop_overhead_s;

  model::Efficiency run_efficiency = efficiency;
  run_efficiency.step_overhead_s = measured.loop_overhead_s;
  const model::RooflinePredictor run_predictor(spec, format, model::KvFormat::kBf16, machine,
                                               run_efficiency);
  sim::Workload workload;
  workload.open_loop = arrivals;
  sim::FleetConfig fleet;
  fleet.serving = config.serving();
  const sim::SimResult simulated = sim::simulate(workload, fleet, run_predictor, a.seed);

  run.measured_steps = measured.records.num_steps;
  run.simulated_steps = simulated.num_steps;
  run.measured_preemptions = measured.records.num_preemptions;
  run.simulated_preemptions = simulated.num_preemptions;
  run.measured_end_s = measured.records.end_time.seconds();
  run.simulated_end_s = simulated.end_time.seconds();
  account_steps(measured, predictor, !a.steps_csv.empty(), run, report);
  const ScaledPredictor corrected_predictor(predictor, run.prefill_step_ratio,
                                            run.decode_step_ratio, measured.loop_overhead_s);
  const sim::SimResult corrected = sim::simulate(workload, fleet, corrected_predictor, a.seed);
  const ScaledPredictor probe_predictor(predictor, run.probe_prefill_ratio, run.probe_decode_ratio,
                                        measured.loop_overhead_s);
  const sim::SimResult probed = sim::simulate(workload, fleet, probe_predictor, a.seed);
  // Every step of the simulation's own predictor (loop overhead included) 5% off.
  const ScaledPredictor faster_predictor(run_predictor, 1 - kSensitivity, 1 - kSensitivity, 0);
  const ScaledPredictor slower_predictor(run_predictor, 1 + kSensitivity, 1 + kSensitivity, 0);
  const sim::SimResult faster = sim::simulate(workload, fleet, faster_predictor, a.seed);
  const sim::SimResult slower = sim::simulate(workload, fleet, slower_predictor, a.seed);
  if (!a.requests_csv.empty()) {
    for (size_t i = 0; i < measured.records.requests.size(); ++i) {
      if (i >= simulated.requests.size() || i >= corrected.requests.size() ||
          simulated.requests[i].id != measured.records.requests[i].id ||
          corrected.requests[i].id != measured.records.requests[i].id) {
        throw std::logic_error("serve-bench: the simulations' records are not the run's requests");
      }
      report.requests.push_back(
          {run.load, measured.records.requests[i], simulated.requests[i], corrected.requests[i]});
    }
  }

  add_metric_rows(run.load, measured.records, simulated, probed, corrected, faster, slower, report);
  progress("load " + fixed(run.load, 2) + ": done, last completion at " +
           fixed(run.measured_end_s, 1) + " s (simulated " + fixed(run.simulated_end_s, 1) + " s)");
  report.runs.push_back(run);
  return run;
}

}  // namespace

int run_serve_bench_command(const ServeBenchArgs& a, const std::filesystem::path& data_dir,
                            const std::string& command_line, std::ostream& out, std::ostream& err) {
  validate_serve_bench_args(a);
  const auto progress = [&](const std::string& line) {
    if (!a.quiet) err << "  " << line << "\n" << std::flush;
  };
  const std::filesystem::path model_path =
      a.model.empty() ? data_dir / "models" / kDefaultModel : std::filesystem::path(a.model);
  const model::ModelSpec spec = model::load_model_spec(model_path);
  const kernels::DecoderShape shape = app::decoder_shape(spec, model_path.string());
  const model::WeightFormat format = model::parse_weight_format(a.format, "serve-bench: --format");
  const kernels::WeightFormat kernel_weights =
      app::kernel_format(format, "serve-bench: --format: ");

  // Workload: lengths (scaled) and, for trace arrivals, the trace itself.
  const BenchWorkload workload_in = read_bench_workload(a, data_dir);
  const bool trace_arrivals = workload_in.trace_arrivals;
  const std::filesystem::path& trace_path = workload_in.trace_path;
  const std::vector<sim::LengthSample>& lengths = workload_in.lengths;

  ServeConfig config;
  config.max_num_seqs = a.max_num_seqs;
  config.max_num_batched_tokens = a.max_num_batched_tokens;
  config.block_size_tokens = a.block_size_tokens;
  const int64_t max_context = a.max_prompt_tokens + a.max_output_tokens;
  config.num_kv_blocks = a.num_kv_blocks > 0
                             ? a.num_kv_blocks
                             : a.max_num_seqs * ceil_div(max_context, a.block_size_tokens);

  // The profile: read and checked, or a quick calibration (as `llmcap validate`).
  app::BenchmarkProfileOptions po;
  po.profile_file = a.profile;
  po.save_file = a.save_profile;
  po.models = {model_path};
  po.formats = {format};
  po.threads = a.threads;
  po.tool = "llmcap serve-bench (quick calibration)";
  po.progress = progress;
  std::string source;
  const model::CalibrationProfile profile = app::benchmark_profile(po, source);
  const std::string format_name(model::to_string(format));
  if (profile.fit.matmul.count(format_name) == 0) {
    throw model::InputError(source + ": field \"fit.matmul\": no fitted rates for \"" +
                            format_name + "\" weights");
  }
  if (profile.fit.attention.count("bf16") == 0) {
    throw model::InputError(source +
                            ": field \"fit.attention\": no fitted rates for \"bf16\" "
                            "KV cache");
  }
  model::Efficiency efficiency = model::calibrated_efficiency(profile);
  efficiency.step_overhead_s = 0;  // the loop's own overhead is measured per run, below
  const model::Deployment machine = app::measured_machine(profile, efficiency);
  const model::RooflinePredictor predictor(spec, format, model::KvFormat::kBf16, machine,
                                           efficiency);

  ServeBenchReport report;
  report.model = spec.id;
  report.format = format_name;
  report.profile = source;
  report.threads = std::max(1, profile.fit.threads);
  report.config = config;
  report.profile_read_bytes_per_s =
      machine.memory_bandwidth_bytes_per_s * efficiency.memory_bandwidth_fraction;
  report.saturation_requests_per_s = estimate_saturation_requests_per_s(lengths, config, predictor);
  {
    std::ostringstream w;
    w << (trace_arrivals ? "trace arrivals of "
                         : "Poisson arrivals (seed " + std::to_string(a.seed) + "), lengths of ")
      << trace_path.filename().string();
    if (trace_arrivals) w << " from " << describe(a.trace_start_s) << " s";
    w << "; prompt x" << describe(a.prompt_scale) << " capped at " << a.max_prompt_tokens
      << ", output x" << describe(a.output_scale) << " capped at " << a.max_output_tokens
      << " tokens; " << describe(a.duration_s) << " s of arrivals per load";
    report.workload = w.str();
  }
  progress("estimated saturation: " + fixed(report.saturation_requests_per_s, 3) +
           " requests/s (the predictor, every request offered at once)");

  // The server: decoder, pool, warm-up (weights, every KV page, one long prefill).
  kernels::ThreadPool pool(report.threads);
  kernels::ReferenceDecoder decoder(shape, kernel_weights, kernels::KvType::kBf16,
                                    config.max_num_seqs, max_context, a.seed);
  progress("warm-up: " + fixed(static_cast<double>(decoder.weight_bytes()) / 1e6, 0) +
           " MB of weights, KV cache of " + std::to_string(config.max_num_seqs) + " x " +
           std::to_string(max_context) + " tokens");
  decoder.set_contexts(
      std::vector<int64_t>(static_cast<size_t>(config.max_num_seqs), max_context - 1));
  decoder.step(pool);
  {
    std::vector<int64_t> prompt(static_cast<size_t>(a.max_prompt_tokens), 1);
    const kernels::PrefillSequence warm{0, 0, prompt};
    decoder.prefill(std::span(&warm, 1), pool);
  }
  kernels::ReadProbe probe(int64_t{256} << 20);

  // The loads.
  std::vector<Load> loads;
  if (!a.rate_multipliers.empty()) {
    for (const double m : a.rate_multipliers) loads.push_back({0, m});
  } else {
    for (const double f : a.loads) loads.push_back({f, 0});
  }
  const LoadBench bench{a,         workload_in, spec, format, efficiency, machine,
                        predictor, decoder,     pool, probe,  err};
  for (const Load& load : loads) report.runs.push_back(bench_load(bench, load, report));

  // The JSON is built whether or not --json was given: the results database stores it.
  const std::string json = serve_bench_to_json(report);
  const std::string steps = a.steps_csv.empty() ? "" : serve_bench_steps_csv(report);
  if (!a.json_out.empty()) app::write_file_atomically(a.json_out, json);
  if (!a.steps_csv.empty()) app::write_file_atomically(a.steps_csv, steps);
  if (!a.requests_csv.empty()) {
    app::write_file_atomically(a.requests_csv, serve_bench_requests_csv(report));
  }
  print_serve_bench(report, out);
  store_serve_bench_run(report, json, serve_bench_input_json(a, data_dir), a.results_db, a.no_store,
                        command_line, err);
  return kExitOk;
}

}  // namespace llmcap::cli
