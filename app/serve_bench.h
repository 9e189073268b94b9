// The serve-bench engine (`llmcap serve-bench`): the reference decoder run as a real
// continuous-batching server on this CPU (serve/), fed a scaled real trace in real time, beside
// the simulator replaying the same arrivals with the calibrated predictor (issue 4, item 5;
// docs/simulator.md, "Validation against a real serving loop (serve-bench)"). This header: the
// options, the workload scaling (app/serve_bench_workload.cpp), the report and the run
// (app/serve_bench.cpp); the report's JSON, CSV and stored forms are app/serve_bench_output.h.
// Times are seconds, rates requests per second, lengths tokens. Errors: sim::InputError and
// model::InputError (both base::InputError) for bad options and files, with the messages the
// command prints ("serve-bench: --<option>: expected ..., got ...").
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "app/output_files.h"
#include "model/step_time.h"
#include "serve/config.h"
#include "serve/serving_loop.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace llmcap::app {

/// What shapes a serve-bench run (the command's options of the same names; defaults
/// documented at cli::add_serve_bench_command and in docs/simulator.md).
struct ServeBenchOptions {
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
  /// --prefix-caching: the engine caches the prefixes of keyed requests (a `.jsonl` trace's
  /// hash blocks), the real loop and the simulator alike (serve/scheduler.h).
  bool prefix_caching = false;
  /// --conversation-sample K: of a keyed (`.jsonl`) trace keep only the rows whose second hash
  /// id is a multiple of K: whole conversations (a conversation's turns share their first
  /// blocks), about 1/K of them, with their prefix reuse (1: every row).
  int64_t conversation_sample = 1;
  std::string profile;       ///< --profile (empty: a quick calibration first)
  std::string save_profile;  ///< --save-profile: the quick calibration's profile, written
  /// When set, --save-profile is added to it instead of written at once (the caller commits
  /// it with the run's other outputs; app/output_files.h).
  OutputSet* outputs = nullptr;
  int threads = 0;             ///< --threads of the quick calibration
  bool quiet = false;          ///< --quiet: no progress lines
  bool keep_steps = false;     ///< fill ServeBenchReport::steps (--steps-csv)
  bool keep_requests = false;  ///< fill ServeBenchReport::requests (--requests-csv)
};

// ---- Options and workload (app/serve_bench_workload.cpp) -----------------------------------

/// Checks the options that need no file, before anything runs. Throws sim::InputError
/// ("serve-bench: --<option>: expected ..., got ...") for a bad value or combination.
void validate_serve_bench_options(const ServeBenchOptions& options);

/// The model file: options.model, or <data_dir>/models/qwen2.5-0.5b.json.
std::filesystem::path serve_bench_model_path(const ServeBenchOptions& options,
                                             const std::filesystem::path& data_dir);

/// The trace (trace arrivals) or length file (Poisson arrivals): options.trace, or the Azure
/// conversation trace / the ShareGPT lengths in <data_dir>/traces.
std::filesystem::path serve_bench_trace_path(const ServeBenchOptions& options,
                                             const std::filesystem::path& data_dir);

/// The serving configuration: continuous batching with the options' max_num_seqs,
/// max_num_batched_tokens, block size and prefix caching, and num_kv_blocks or (0)
/// max_num_seqs x the blocks of the longest request (max_prompt_tokens + max_output_tokens).
serve::ServeConfig serve_bench_config(const ServeBenchOptions& options);

/// Request lengths as served: prompt = clamp(round(prompt x prompt_scale), 1,
/// max_prompt_tokens), output likewise with output_scale and max_output_tokens.
sim::LengthSample scale_lengths(const sim::LengthSample& raw, const ServeBenchOptions& options);

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

/// What serve-bench serves: for trace arrivals the trace (lengths scaled), else the lengths to
/// draw Poisson arrivals from (scaled).
struct ServeBenchWorkload {
  bool trace_arrivals = false;
  std::filesystem::path trace_path;        ///< serve_bench_trace_path
  std::vector<sim::RequestSpec> trace;     ///< trace arrivals only: every row, lengths scaled
  std::vector<sim::LengthSample> lengths;  ///< every row's lengths, scaled
};

/// Scales a keyed request's hash blocks with its prompt: block_tokens x prompt_scale tokens,
/// which must be a whole number (else sim::InputError naming --prompt-scale); with prefix
/// caching it must also divide --block-size or be a multiple of it (else sim::InputError).
void scale_prefix_blocks(sim::RequestSpec& r, const ServeBenchOptions& options);

/// Reads the trace or length file (serve_bench_trace_path), keeps a `.jsonl` trace's sample
/// of conversations (options.conversation_sample) and scales the lengths (and the hash
/// blocks, scale_prefix_blocks). Throws sim::InputError for a bad file, a
/// --conversation-sample > 1 on a trace without hash blocks or that keeps no row, or a
/// --trace-start-s past the trace's last arrival.
ServeBenchWorkload read_serve_bench_workload(const ServeBenchOptions& options,
                                             const std::filesystem::path& data_dir);

/// The saturation rate the predictor gives the engine: every request of `lengths` offered at
/// time 0 to simulate() (continuous batching, `config`); completed requests / end time.
double estimate_saturation_requests_per_s(const std::vector<sim::LengthSample>& lengths,
                                          const serve::ServeConfig& config,
                                          const model::StepTimePredictor& predictor);

// ---- The report ----------------------------------------------------------------------------

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
  /// Prefix caching (--prefix-caching): the real loop's hit rate (cached / prompt tokens at
  /// first admissions) and saved prefill tokens; the simulator's, when it has a prefix cache
  /// (simulated_prefix_caching: its SimResult::prefix_cache is filled; otherwise it served
  /// the arrivals without one and its times are those of no prefix caching).
  bool prefix_caching = false;
  bool simulated_prefix_caching = false;
  double measured_hit_rate = 0, simulated_hit_rate = 0;
  int64_t measured_saved_prefill_tokens = 0, simulated_saved_prefill_tokens = 0;
  int64_t measured_evicted_blocks = 0, simulated_evicted_blocks = 0;
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
  serve::ServeStepLog log;
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
  serve::ServeConfig config;
  double saturation_requests_per_s = 0;
  double profile_read_bytes_per_s = 0;
  std::vector<ServeBenchRun> runs;
  std::vector<ServeBenchRow> rows;
  std::vector<ServeBenchStep> steps;        ///< with keep_steps: every step of every real run
  std::vector<ServeBenchRequest> requests;  ///< with keep_requests: every request of every load
};

// ---- The run (app/serve_bench.cpp) ---------------------------------------------------------

/// The whole benchmark: validate the options, read the model, calibrate (a quick calibration,
/// optionally saved to options.save_profile) or read the profile, estimate saturation with the
/// calibrated predictor (model::CalibratedPredictor), warm the decoder up, and per load
/// (options.loads, or options.rate_multipliers) serve the arrivals in real time and simulate
/// them (with the predictor as is, probe-rescaled, step-corrected, 5% faster and slower).
/// Writes progress lines to `err` unless options.quiet; writes no file but the saved profile.
/// Throws model::InputError (model, format, profile: unreadable, of another machine, or
/// without rates for the format or for bf16 KV), sim::InputError (options, trace; no request
/// at a load) and std::invalid_argument as the readers do.
ServeBenchReport run_serve_bench(const ServeBenchOptions& options,
                                 const std::filesystem::path& data_dir, std::ostream& err);

}  // namespace llmcap::app
