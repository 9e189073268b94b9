// `llmcap serve-bench`: the reference decoder run as a real continuous-batching server on this
// CPU, fed a scaled real trace in real time, beside the simulator replaying the same arrivals
// with the calibrated predictor (issue 4, item 5; docs/simulator.md, "Validation against a real
// serving loop (serve-bench)"). The serving loop itself is the serve/ library; this is the
// command: options, workload scaling, probes and reports (printed, JSON, CSV:
// cli/serve_bench_report.cpp).
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "model/step_time.h"
#include "serve/config.h"
#include "serve/decoder_step_executor.h"
#include "serve/serving_loop.h"
#include "sim/sim_time.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace CLI {
class App;
}

namespace llmcap::cli {

// ---- The serving loop (serve/) ------------------------------------------------------------

// The serving loop moved to serve/ (namespace llmcap::serve); the names the command's API and
// its callers use stay available here.
using serve::DecoderStepExecutor;
using serve::PredictedStepExecutor;
using serve::serve;
using serve::ServeClock;
using serve::ServeConfig;
using serve::ServeResult;
using serve::ServeStep;
using serve::ServeStepItem;
using serve::ServeStepLog;
using serve::SteadyServeClock;
using serve::StepExecutor;
using serve::VirtualServeClock;

// ---- The benchmark ------------------------------------------------------------------------

/// Options of `llmcap serve-bench` (defaults documented at add_serve_bench_command and in
/// docs/simulator.md).
struct ServeBenchArgs {
  std::string model;               ///< --model (empty: <data>/models/qwen2.5-0.5b.json)
  std::string format = "int8";     ///< --format: weight format of the decoder and the predictor
  std::string arrivals = "trace";  ///< --arrivals: "trace" or "poisson"
  std::string trace;               ///< --trace (empty: Azure conversation trace / ShareGPT lengths)
  double trace_start_s = 600;      ///< --trace-start-s: offset into the trace (its own time)
  std::vector<double> loads = {0.5, 0.9};  ///< --loads: fractions of the estimated saturation
  std::vector<double> rate_multipliers;    ///< --rate-multiplier: explicit trace speed-ups
  double duration_s = 45;                  ///< --duration-s: arrival window of each load
  double prompt_scale = 0.125;             ///< --prompt-scale
  double output_scale = 0.25;              ///< --output-scale
  int64_t max_prompt_tokens = 512;         ///< --max-prompt-tokens
  int64_t max_output_tokens = 64;          ///< --max-output-tokens
  int64_t max_num_seqs = 16;               ///< --max-num-seqs
  int64_t max_num_batched_tokens = 1024;   ///< --max-num-batched-tokens
  int64_t block_size_tokens = 16;          ///< --block-size
  int64_t num_kv_blocks = 0;  ///< --kv-blocks (0: every slot can hold its longest request)
  uint64_t seed = 1;          ///< --seed: weights, prompt token ids, Poisson arrivals
  std::string profile;        ///< --profile (empty: a quick calibration first)
  std::string save_profile;   ///< --save-profile: the quick calibration's profile, written
  int threads = 0;            ///< --threads of the quick calibration
  std::string json_out;       ///< --json
  std::string steps_csv;      ///< --steps-csv: every step of the real runs (diagnostic)
  std::string requests_csv;   ///< --requests-csv: every request, measured beside simulated
  std::string data_dir;       ///< --data-dir
  bool quiet = false;         ///< --quiet
  std::string results_db;     ///< --results-db: results database the run is stored in
  bool no_store = false;      ///< --no-store
};

/// Registers the `serve-bench` subcommand (options bound to `args`) on `app`.
CLI::App* add_serve_bench_command(CLI::App& app, ServeBenchArgs& args);

/// Checks the options that need no file, before anything runs. Throws sim::InputError
/// ("serve-bench: --<option>: expected ..., got ...") for a bad value or combination.
void validate_serve_bench_args(const ServeBenchArgs& args);

/// Request lengths as served: prompt = clamp(round(prompt x prompt_scale), 1,
/// max_prompt_tokens), output likewise with output_scale and max_output_tokens.
sim::LengthSample scale_lengths(const sim::LengthSample& raw, const ServeBenchArgs& args);

/// The arrivals of one load from a trace (sorted, offsets from its first row, lengths already
/// scaled): the requests at or after `start_s` (trace time), rebased to 0. With
/// rate_multiplier > 0: arrival offsets divided by it, those before duration_s kept. Otherwise
/// for a rate of rate_per_s: the first N = max(1, round(rate_per_s x duration_s)) requests,
/// times scaled by duration_s / (offset of request N+1), so that exactly N arrive in
/// [0, duration_s) (the mean offered rate is then rate_per_s). Throws sim::InputError when the
/// trace has fewer than N + 1 requests after start_s (or none before duration_s with a
/// multiplier), or when requests N+1 and 1 arrive at the same time.
std::vector<sim::RequestSpec> scale_trace(const std::vector<sim::RequestSpec>& trace,
                                          double start_s, double rate_per_s, double rate_multiplier,
                                          double duration_s);

/// The saturation rate the predictor gives the engine: every request of `lengths` offered at
/// time 0 to simulate() (continuous batching, `config`); completed requests / end time.
double estimate_saturation_requests_per_s(const std::vector<sim::LengthSample>& lengths,
                                          const ServeConfig& config,
                                          const model::StepTimePredictor& predictor);

/// One row of the side-by-side table (and of the JSON "rows").
struct ServeBenchRow {
  double load = 0;         ///< offered rate / estimated saturation
  std::string metric;      ///< "ttft" | "tpot"
  std::string quantile;    ///< "p50" | "p90" | "p99"
  double measured_s = 0;   ///< the real serving loop
  double simulated_s = 0;  ///< simulate() with the calibrated predictor
  /// simulate() with the calibrated predictor's prefill and decode step times multiplied by
  /// the ratios a step-time probe measured just before the run (ServeBenchRun::
  /// probe_prefill_ratio, probe_decode_ratio): the profile recalibrated to the machine's speed
  /// of the moment (a shared VM drifts by tens of percent from minute to minute).
  double probe_rescaled_s = 0;
  /// Diagnostic, not a prediction: simulate() with the calibrated predictor's prefill and
  /// decode step times multiplied by this run's own ratio of measured to predicted time of
  /// each kind, summed over its steps (ServeBenchRun::prefill_step_ratio, decode_step_ratio).
  /// What is left between it and measured_s is not the predictor's mean step error but the
  /// run's variance around it (machine noise, step-to-step differences the predictor does not
  /// capture) and scheduling.
  double step_corrected_s = 0;
  /// Sensitivity, not a prediction: simulate() with every step of the simulated_s predictor
  /// (loop overhead included) kSensitivity shorter / longer: how far a step-time error of that
  /// size moves this quantile at this load (near saturation, queueing multiplies it). JSON:
  /// rows_steps_5pct_faster, rows_steps_5pct_slower.
  double steps_faster_s = 0;
  double steps_slower_s = 0;
};

/// The relative step-time change of ServeBenchRow::steps_faster_s / steps_slower_s (the JSON
/// keys and the printed table say 5%).
inline constexpr double kSensitivity = 0.05;

/// What one load measured (besides its rows).
struct ServeBenchRun {
  double load = 0;  ///< offered rate / estimated saturation
  double offered_requests_per_s = 0;
  double rate_multiplier = 0;  ///< trace speed-up (trace arrivals); 0 for Poisson
  int64_t num_requests = 0;
  double read_bytes_per_s = 0;  ///< read-bandwidth probe just before the run
  /// Contention during the real run (Linux /proc/stat; 0 elsewhere): CPU time the whole
  /// machine spent busy minus this process's own (getrusage), and the hypervisor's steal
  /// time, each divided by the run's wall time (cores' worth, on average).
  double other_cpu_cores = 0;
  double steal_cpu_cores = 0;
  double loop_overhead_s = 0;  ///< ServeResult::loop_overhead_s, given to the simulator
  // Real run vs simulation.
  int64_t measured_steps = 0, simulated_steps = 0;
  int64_t measured_preemptions = 0, simulated_preemptions = 0;
  double measured_end_s = 0, simulated_end_s = 0;  ///< last completion
  double measured_mean_batch = 0;                  ///< mean sequences per decode step (real run)
  /// Step times of the real run against the predictor for the same shapes (predicted /
  /// measured - 1): medians, and the sums of each kind of step.
  int64_t num_prefill_steps = 0, num_decode_steps = 0;
  double prefill_step_error_median = 0, decode_step_error_median = 0;
  /// Step-time probe just before the run: measured / predicted of real decoder steps
  /// (prefill of 128 and 512 tokens, decode of 2 and 8 sequences at context 128; median of 3
  /// runs each, the two shapes of a kind averaged). The factors of probe_rescaled_s.
  double probe_prefill_ratio = 1, probe_decode_ratio = 1;
  /// Measured / predicted time summed over the run's steps of each kind (the factors of
  /// step_corrected_s).
  double prefill_step_ratio = 1, decode_step_ratio = 1;
  double prefill_measured_total_s = 0, prefill_predicted_total_s = 0;
  double decode_measured_total_s = 0, decode_predicted_total_s = 0;
};

/// One step of a real run beside the predictor's time for its shape (--steps-csv).
struct ServeBenchStep {
  double load = 0;
  ServeStepLog log;
  double predicted_s = 0;  ///< calibrated predictor, without the loop overhead
};

/// One request of a load (--requests-csv): the real run's record beside the simulator's with
/// the calibrated predictor and with the step-corrected diagnostic (ServeBenchRow::
/// step_corrected_s); the three are the same request (records in id order).
struct ServeBenchRequest {
  double load = 0;
  sim::RequestRecord measured;
  sim::RequestRecord simulated;
  sim::RequestRecord step_corrected;
};

struct ServeBenchReport {
  std::string model;
  std::string format;
  std::string workload;  ///< one line: trace or Poisson, file, scaling
  std::string profile;   ///< where the calibrated rates came from
  int threads = 0;       ///< decoder threads (the profile's fitted count)
  ServeConfig config;
  double saturation_requests_per_s = 0;
  double profile_read_bytes_per_s = 0;
  std::vector<ServeBenchRun> runs;
  std::vector<ServeBenchRow> rows;
  std::vector<ServeBenchStep> steps;        ///< every step of every real run, in order
  std::vector<ServeBenchRequest> requests;  ///< with --requests-csv: every request of every load
};

/// `load,kind,start_s,exec_start_s,end_s,num_seqs,num_new_tokens,num_context_tokens,
/// num_attention_pairs,measured_s,predicted_s` with one line per step: kind "prefill" or
/// "decode"; num_context_tokens = num_decode_context_tokens (decode) or 0; num_attention_pairs
/// = num_prefill_attention_pairs (prefill) or 0; measured_s = end - exec_start.
std::string serve_bench_steps_csv(const ServeBenchReport& report);

/// `load,id,arrival_s,prompt_tokens,output_tokens,measured_ttft_s,measured_tpot_s,
/// measured_e2e_s,simulated_ttft_s,simulated_tpot_s,simulated_e2e_s,corrected_ttft_s,
/// corrected_tpot_s,corrected_e2e_s` with one line per request (ServeBenchReport::requests):
/// arrival_s from the load's start; each TTFT, TPOT and E2E as sim::write_latencies writes them
/// (the definitions of docs/metrics.md, nine decimals; TPOT empty for one output token); a
/// rejected request's nine times are empty. "simulated" is the calibrated
/// predictor, "corrected" the step-corrected diagnostic. For finding which requests a tail
/// quantile's difference comes from.
std::string serve_bench_requests_csv(const ServeBenchReport& report);

/// `{"rows": [{"load", "metric", "quantile", "measured_s", "simulated_s"}],
/// "rows_probe_rescaled": [the same keys, simulated_s = ServeBenchRow::probe_rescaled_s],
/// "rows_step_corrected": [the same keys, simulated_s = ServeBenchRow::step_corrected_s],
/// "runs": [...], "saturation_requests_per_s", "model", "format", "workload", "profile",
/// "threads", "config": {...}}`.
std::string serve_bench_to_json(const ServeBenchReport& report);

/// The run's parameters, as stored in the results database (RunRecord::input_json): every
/// option that shapes the run, with the model and trace files resolved against `data_dir`
/// (`{"model", "format", "arrivals", "trace", "trace_start_s", "loads" | "rate_multipliers",
/// "duration_s", "prompt_scale", "output_scale", "max_prompt_tokens", "max_output_tokens",
/// "max_num_seqs", "max_num_batched_tokens", "block_size_tokens", "num_kv_blocks", "seed",
/// "profile", "threads"}`; profile "" = a quick calibration).
std::string serve_bench_input_json(const ServeBenchArgs& args,
                                   const std::filesystem::path& data_dir);

/// The side-by-side table and, per load, the run's details.
void print_serve_bench(const ServeBenchReport& report, std::ostream& out);

/// The whole command: validate, calibrate or read the profile, estimate saturation, run every
/// load for real and in simulation, print, (with --json) write the JSON atomically, and store
/// the run in the results database (kind "serve-bench", store_serve_bench_run in
/// this header; unless --no-store; a storage failure is a warning on `err`). Progress goes
/// to `err` unless args.quiet. Returns an exit code (cli.h); errors propagate as exceptions to
/// cli::run (model::InputError, sim::InputError, std::invalid_argument), and nothing is stored
/// then.
int run_serve_bench_command(const ServeBenchArgs& args, const std::filesystem::path& data_dir,
                            const std::string& command_line, std::ostream& out, std::ostream& err);

/// Stores a `llmcap serve-bench` run (kind "serve-bench") like app::store_plan_run: name the model
/// id, the document `document_json` (serve_bench_to_json(report): what --json writes), the
/// input `input_json` (serve_bench_input_json), the summary summarize_serve_bench(report).
void store_serve_bench_run(const ServeBenchReport& report, const std::string& document_json,
                           const std::string& input_json, const std::string& db_flag, bool no_store,
                           const std::string& command_line, std::ostream& err);

/// One line for listings: the worst relative error of the simulation (|simulated_s /
/// measured_s - 1| over the loads and TTFT and TPOT; rows with measured_s = 0 left out) at each
/// quantile, e.g. "worst |simulated / measured - 1|: p50 12.3%, p90 20.1%, p99 35.0% (TTFT and
/// TPOT, 2 loads)"; "-" for a quantile without a row.
std::string summarize_serve_bench(const ServeBenchReport& report);

}  // namespace llmcap::cli
