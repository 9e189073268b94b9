// `llmcap serve-bench`: the reference decoder run as a real continuous-batching server on this
// CPU, fed a scaled real trace in real time, beside the simulator replaying the same arrivals
// with the calibrated predictor (issue 4, item 5; docs/simulator.md, "Validation against a real
// serving loop (serve-bench)").
#pragma once

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "model/step_time.h"
#include "sim/sim_time.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace CLI {
class App;
}

namespace llmcap::kernels {
class ReferenceDecoder;
class ThreadPool;
}  // namespace llmcap::kernels

namespace llmcap::cli {

// ---- The serving loop ---------------------------------------------------------------------

/// Engine limits of the serving loop: those of sim::ServingConfig with policy kContinuous, so
/// that the loop and the simulator are configured by the same numbers (names are vLLM's).
struct ServeConfig {
  int64_t max_num_seqs = 16;              ///< sequences running at once (= decoder slots)
  int64_t max_num_batched_tokens = 1024;  ///< prompt tokens admitted per prefill step
  int64_t block_size_tokens = 16;         ///< tokens per KV-cache block
  int64_t num_kv_blocks = 0;              ///< KV-cache blocks (> 0)

  /// The simulator's configuration of the same engine (continuous batching).
  sim::ServingConfig serving() const;
};

/// One sequence of a step, as the executor needs it.
struct ServeStepItem {
  int64_t request = 0;            ///< request id (index in arrival order)
  int64_t slot = 0;               ///< decoder slot, 0..max_num_seqs-1
  int64_t num_prompt_tokens = 0;  ///< the request's prompt
  /// Output tokens emitted before the step. A prefill processes num_prompt_tokens +
  /// num_emitted tokens (more than the prompt only when recomputing after a preemption); a
  /// decode consumes the last emitted token at position num_prompt_tokens + num_emitted - 1.
  int64_t num_emitted = 0;
};

/// What one engine step runs: the admitted prefills (a prefill-only step) or one decode token
/// for every running sequence, in admission order, with the shape the simulator gives the
/// same step (model/step_time.h).
struct ServeStep {
  bool prefill = false;
  std::vector<ServeStepItem> items;
  model::BatchShape shape;
};

/// Carries out a step. The real one runs the reference decoder; tests use stand-ins.
class StepExecutor {
 public:
  virtual ~StepExecutor() = default;
  /// Runs `step` to completion (its output tokens exist when it returns).
  virtual void execute(const ServeStep& step) = 0;
};

/// The loop's time: offsets from the start of the run.
class ServeClock {
 public:
  virtual ~ServeClock() = default;
  virtual sim::SimTime now() = 0;
  /// Returns at time `t` or later (at once if t <= now()).
  virtual void wait_until(sim::SimTime t) = 0;
};

/// std::chrono::steady_clock from construction; wait_until sleeps to 1 ms before the target,
/// then spins (yielding) so that an arrival is seen within microseconds.
class SteadyServeClock final : public ServeClock {
 public:
  SteadyServeClock();
  sim::SimTime now() override;
  void wait_until(sim::SimTime t) override;

 private:
  int64_t start_ns_ = 0;
};

/// A clock that moves only when told: for replaying the loop in simulated time (tests, and
/// PredictedStepExecutor).
class VirtualServeClock final : public ServeClock {
 public:
  sim::SimTime now() override { return now_; }
  void wait_until(sim::SimTime t) override { now_ = std::max(now_, t); }
  void advance(sim::SimTime d) { now_ += d; }

 private:
  sim::SimTime now_;
};

/// Executes a step by advancing a virtual clock by SimTime::Seconds(predictor.step_time_s(
/// shape)) (what the simulator charges), after running `inner` (if given) for real: the loop
/// then makes exactly the simulator's decisions, which tests compare.
class PredictedStepExecutor final : public StepExecutor {
 public:
  PredictedStepExecutor(VirtualServeClock& clock, const model::StepTimePredictor& predictor,
                        StepExecutor* inner = nullptr)
      : clock_(clock), predictor_(predictor), inner_(inner) {}
  void execute(const ServeStep& step) override;

 private:
  VirtualServeClock& clock_;
  const model::StepTimePredictor& predictor_;
  StepExecutor* inner_;
};

/// Runs steps on a ReferenceDecoder (slots = ServeStepItem::slot; needs max_batch >=
/// max_num_seqs and max_context >= the longest prompt + output). A prefill calls
/// ReferenceDecoder::prefill with cached_tokens 0 over the request's prompt token ids (drawn
/// from `seed`, the request id and the position, uniform over the vocabulary) followed by the
/// tokens it has emitted (a recompute); a decode calls step_slots over the items' slots. After
/// each step the token each item emitted (the greedy argmax) is kept for a later recompute.
/// Throws std::logic_error when the loop and the decoder disagree (a bug): before a decode, a
/// slot's KV does not hold num_prompt_tokens + num_emitted - 1 tokens; before a prefill, the
/// tokens kept for a request are not num_emitted.
class DecoderStepExecutor final : public StepExecutor {
 public:
  DecoderStepExecutor(kernels::ReferenceDecoder& decoder, kernels::ThreadPool& pool, uint64_t seed);
  void execute(const ServeStep& step) override;
  /// The tokens request `id` has emitted so far (empty for an unknown id).
  std::vector<int64_t> emitted(int64_t id) const;

 private:
  kernels::ReferenceDecoder& decoder_;
  kernels::ThreadPool& pool_;
  uint64_t seed_;
  std::vector<std::vector<int64_t>> emitted_;  ///< by request id: tokens emitted so far
};

/// One step of a run, as the loop took it.
struct ServeStepLog {
  sim::SimTime start;       ///< the decision (admission) time
  sim::SimTime exec_start;  ///< when execute() was called
  sim::SimTime end;         ///< when execute() returned: the step's tokens are emitted then
  bool prefill = false;
  std::vector<int64_t> requests;  ///< the items' request ids, in step order
  model::BatchShape shape;
};

struct ServeResult {
  /// Records in the simulator's form (sim/simulator.h: requests by id in arrival order,
  /// end_time, num_steps, num_preemptions, num_rejected; itl_ns is left empty), so that
  /// sim::compute_metrics gives the real run's metrics by the same definitions.
  sim::SimResult records;
  std::vector<ServeStepLog> steps;
  /// Mean over steps that started as soon as the previous one ended (no idle wait between) of
  /// (next start - this start - this step's execute() time): the loop's own per-step
  /// scheduling and bookkeeping, the simulator's step_overhead_s. 0 with a virtual clock.
  double loop_overhead_s = 0;
};

/// Serves `arrivals` (sorted by arrival; ids follow that order) on one replica with continuous
/// batching exactly as sim::simulate() with BatchingPolicy::kContinuous (vLLM v0's
/// prefill-first scheduler, Kwon et al., SOSP 2023; the semantics at sim/simulator.h): a
/// request whose prompt + output needs more blocks than num_kv_blocks is rejected on arrival;
/// at each decision (when idle and a request arrives, or when a step ends), every request that
/// has arrived by now() joins the FCFS waiting queue, then waiting requests are admitted
/// (running < max_num_seqs, admitted prompt tokens <= max_num_batched_tokens unless the first,
/// ceil(prefill / block) blocks free; stop at the first that does not fit) and, if any were,
/// the step is a prefill of exactly those; otherwise every running sequence decodes one token,
/// a sequence needing a new block preempting (recompute) the most recently admitted ones until
/// the blocks suffice. Tokens are emitted at the step's end (clock.now() after execute()).
/// An admitted sequence takes the lowest free decoder slot. With a VirtualServeClock and a
/// PredictedStepExecutor the records equal simulate()'s for the same predictor
/// (tests/cli/serve_bench_test.cpp). Throws sim::InputError for a non-positive limit or a
/// request with arrival < 0, fewer than 1 prompt or output token, or out of order.
ServeResult serve(const std::vector<sim::RequestSpec>& arrivals, const ServeConfig& config,
                  StepExecutor& executor, ServeClock& clock);

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
/// cli/runs_cmd.h; unless --no-store; a storage failure is a warning on `err`). Progress goes
/// to `err` unless args.quiet. Returns an exit code (cli.h); errors propagate as exceptions to
/// cli::run (model::InputError, sim::InputError, std::invalid_argument), and nothing is stored
/// then.
int run_serve_bench_command(const ServeBenchArgs& args, const std::filesystem::path& data_dir,
                            const std::string& command_line, std::ostream& out, std::ostream& err);

}  // namespace llmcap::cli
