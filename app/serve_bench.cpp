// serve-bench's run (app/serve_bench.h): the profile and the calibrated predictor, the decoder's
// warm-up, and per load the probes, the real serving loop and the simulations beside it.
#include "app/serve_bench.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <functional>
#include <span>
#include <sstream>
#include <stdexcept>
#include <tuple>
#include <utility>

#include "app/decoder_support.h"
#include "base/stats.h"
#include "base/text.h"
#include "kernels/calibrate.h"
#include "kernels/decoder.h"
#include "kernels/machine.h"
#include "kernels/thread_pool.h"
#include "model/calibrated_predictor.h"
#include "model/calibration.h"
#include "model/formats.h"
#include "model/input_error.h"
#include "model/model_spec.h"
#include "serve/decoder_step_executor.h"
#include "sim/input_error.h"
#include "sim/metrics.h"

namespace llmcap::app {
namespace {

using base::describe;
using base::fixed;
using base::median;  // the nearest-rank median (docs/metrics.md)
using sim::SimTime;

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
void account_steps(const serve::ServeResult& measured, const model::StepTimePredictor& predictor,
                   bool keep_steps, ServeBenchRun& run, ServeBenchReport& report) {
  std::vector<double> prefill_errors, decode_errors;
  double decode_seqs = 0;
  for (const serve::ServeStepLog& step : measured.steps) {
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
  const ServeBenchOptions& a;
  const ServeBenchWorkload& workload;
  const model::ModelSpec& spec;
  model::WeightFormat format;
  const model::Efficiency& efficiency;
  const model::Deployment& machine;
  const model::StepTimePredictor& predictor;  ///< the calibrated predictor, no loop overhead
  kernels::ReferenceDecoder& decoder;
  kernels::ThreadPool& pool;
  kernels::ReadProbe& probe;
  std::ostream& err;  ///< progress lines, unless quiet
};

/// The arrivals of one load: the trace segment scaled to the load (scale_trace), or Poisson
/// arrivals at its rate. Throws sim::InputError as scale_trace does, and when none arrives.
std::vector<sim::RequestSpec> load_arrivals(const LoadBench& bench, const Load& load,
                                            double saturation_requests_per_s) {
  const ServeBenchOptions& a = bench.a;
  std::vector<sim::RequestSpec> arrivals;
  if (bench.workload.trace_arrivals) {
    arrivals =
        scale_trace(bench.workload.trace, a.trace_start_s,
                    load.fraction * saturation_requests_per_s, load.multiplier, a.duration_s);
  } else {
    sim::ArrivalOptions options;
    options.rate_per_s = load.fraction * saturation_requests_per_s;
    options.duration_s = a.duration_s;
    arrivals = sim::generate_arrivals(options, bench.workload.lengths, a.seed);
  }
  if (arrivals.empty()) {
    throw sim::InputError("serve-bench: no request arrives within --duration-s " +
                          describe(a.duration_s) + " s at this load");
  }
  return arrivals;
}

/// Serves one load in real time on the reference decoder and simulates the same arrivals with
/// the predictor (as is, probed, corrected, 5% faster and slower): the run's figures (the
/// caller adds them to report.runs); its rows (and, when asked, steps and requests) are added
/// to `report`. Throws sim::InputError when no
/// request arrives at this load.
ServeBenchRun bench_load(const LoadBench& bench, const Load& load, ServeBenchReport& report) {
  const ServeBenchOptions& a = bench.a;
  const std::vector<sim::RequestSpec>& trace = bench.workload.trace;
  const model::StepTimePredictor& predictor = bench.predictor;
  kernels::ThreadPool& pool = bench.pool;
  const serve::ServeConfig& config = report.config;
  const auto progress = [&](const std::string& line) {
    if (!a.quiet) bench.err << "  " << line << "\n" << std::flush;
  };
  const std::vector<sim::RequestSpec> arrivals =
      load_arrivals(bench, load, report.saturation_requests_per_s);
  ServeBenchRun run;
  run.num_requests = static_cast<int64_t>(arrivals.size());
  run.offered_requests_per_s = static_cast<double>(arrivals.size()) / a.duration_s;
  run.load = run.offered_requests_per_s / report.saturation_requests_per_s;
  if (bench.workload.trace_arrivals) {
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
  run.read_bytes_per_s = bench.probe.read_bytes_per_s(pool);
  std::tie(run.probe_prefill_ratio, run.probe_decode_ratio) =
      probe_step_ratios(bench.decoder, pool, predictor, a.max_prompt_tokens);
  progress("load " + fixed(run.load, 2) + ": serving " + std::to_string(run.num_requests) +
           " requests over " + describe(a.duration_s) + " s in real time...");

  serve::DecoderStepExecutor executor(bench.decoder, pool, a.seed);
  executor.set_prefixes(arrivals);  // shared hash blocks have the same token ids
  const CpuSample cpu_before = sample_cpu();
  serve::SteadyServeClock clock;
  const serve::ServeResult measured = serve::serve(arrivals, config, executor, clock);
  const double wall_s = clock.now().seconds();
  const CpuSample cpu_after = sample_cpu();
  if (cpu_before.ok && cpu_after.ok && wall_s > 0) {
    run.other_cpu_cores = std::max(0.0, (cpu_after.busy_s - cpu_before.busy_s) -
                                            (cpu_after.self_s - cpu_before.self_s)) /
                          wall_s;
    run.steal_cpu_cores = (cpu_after.steal_s - cpu_before.steal_s) / wall_s;
  }
  run.loop_overhead_s = measured.loop_overhead_s;

  // The simulation's predictor: the calibrated one with the loop's measured overhead per step.
  model::Efficiency run_efficiency = bench.efficiency;
  run_efficiency.step_overhead_s = measured.loop_overhead_s;
  const model::CalibratedPredictor run_predictor(bench.spec, bench.format, model::KvFormat::kBf16,
                                                 bench.machine, run_efficiency);
  sim::Workload workload;
  workload.open_loop = arrivals;
  sim::FleetConfig fleet;
  fleet.serving = config.serving();
  const sim::SimResult simulated = sim::simulate(workload, fleet, run_predictor, a.seed);

  run.prefix_caching = config.prefix_caching;
  if (config.prefix_caching) {
    const sim::PrefixCacheStats& real = measured.records.prefix_cache.at(0);
    run.measured_hit_rate = real.hit_rate();
    run.measured_saved_prefill_tokens = real.num_saved_prefill_tokens;
    run.measured_evicted_blocks = real.num_evicted_blocks;
    // A simulator without a prefix cache leaves prefix_cache empty (and serves without one).
    run.simulated_prefix_caching = !simulated.prefix_cache.empty();
    if (run.simulated_prefix_caching) {
      const sim::PrefixCacheStats& sim_stats = simulated.prefix_cache.at(0);
      run.simulated_hit_rate = sim_stats.hit_rate();
      run.simulated_saved_prefill_tokens = sim_stats.num_saved_prefill_tokens;
      run.simulated_evicted_blocks = sim_stats.num_evicted_blocks;
    }
  }
  run.measured_steps = measured.records.num_steps;
  run.simulated_steps = simulated.num_steps;
  run.measured_preemptions = measured.records.num_preemptions;
  run.simulated_preemptions = simulated.num_preemptions;
  run.measured_end_s = measured.records.end_time.seconds();
  run.simulated_end_s = simulated.end_time.seconds();
  account_steps(measured, predictor, a.keep_steps, run, report);
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
  if (a.keep_requests) {
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
  return run;
}

/// The one-line description of the workload (ServeBenchReport::workload).
std::string describe_workload(const ServeBenchOptions& a, const ServeBenchWorkload& workload) {
  std::ostringstream w;
  w << (workload.trace_arrivals
            ? "trace arrivals of "
            : "Poisson arrivals (seed " + std::to_string(a.seed) + "), lengths of ")
    << workload.trace_path.filename().string();
  if (workload.trace_arrivals) w << " from " << describe(a.trace_start_s) << " s";
  w << "; prompt x" << describe(a.prompt_scale) << " capped at " << a.max_prompt_tokens
    << ", output x" << describe(a.output_scale) << " capped at " << a.max_output_tokens
    << " tokens; " << describe(a.duration_s) << " s of arrivals per load";
  if (!workload.trace.empty() && workload.trace.front().prefix.keyed()) {
    w << "; hash blocks of " << workload.trace.front().prefix.block_tokens << " tokens";
  }
  if (a.conversation_sample > 1) {
    w << "; the conversations whose 2nd hash id is a multiple of " << a.conversation_sample;
  }
  w << "; prefix caching " << (a.prefix_caching ? "on" : "off");
  return w.str();
}

/// The profile of the run (app::benchmark_profile), checked to have fitted rates for `format`
/// weights and a bf16 KV cache; `source` says where it came from. Throws model::InputError.
model::CalibrationProfile serve_bench_profile(
    const ServeBenchOptions& a, const std::filesystem::path& model_path, model::WeightFormat format,
    const std::function<void(const std::string&)>& progress, std::string& source) {
  BenchmarkProfileOptions po;
  po.profile_file = a.profile;
  po.save_file = a.save_profile;
  po.outputs = a.outputs;
  po.models = {model_path};
  po.formats = {format};
  po.threads = a.threads;
  po.tool = "llmcap serve-bench (quick calibration)";
  po.progress = progress;
  model::CalibrationProfile profile = benchmark_profile(po, source);
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
  return profile;
}

}  // namespace

ServeBenchReport run_serve_bench(const ServeBenchOptions& a, const std::filesystem::path& data_dir,
                                 std::ostream& err) {
  validate_serve_bench_options(a);
  const auto progress = [&](const std::string& line) {
    if (!a.quiet) err << "  " << line << "\n" << std::flush;
  };
  const std::filesystem::path model_path = serve_bench_model_path(a, data_dir);
  const model::ModelSpec spec = model::load_model_spec(model_path);
  const kernels::DecoderShape shape = decoder_shape(spec, model_path.string());
  const model::WeightFormat format = model::parse_weight_format(a.format, "serve-bench: --format");
  const kernels::WeightFormat kernel_weights = kernel_format(format, "serve-bench: --format: ");

  // Workload: lengths (scaled) and, for trace arrivals, the trace itself.
  const ServeBenchWorkload workload = read_serve_bench_workload(a, data_dir);
  const serve::ServeConfig config = serve_bench_config(a);
  const int64_t max_context = a.max_prompt_tokens + a.max_output_tokens;

  // The profile: read and checked, or a quick calibration (as `llmcap validate`).
  std::string source;
  const model::CalibrationProfile profile =
      serve_bench_profile(a, model_path, format, progress, source);
  model::Efficiency efficiency = model::calibrated_efficiency(profile);
  efficiency.step_overhead_s = 0;  // the loop's own overhead is measured per run, below
  const model::Deployment machine = measured_machine(profile, efficiency);
  const model::CalibratedPredictor predictor(spec, format, model::KvFormat::kBf16, machine,
                                             efficiency);

  ServeBenchReport report;
  report.model = spec.id;
  report.format = std::string(model::to_string(format));
  report.profile = source;
  report.threads = std::max(1, profile.fit.threads);
  report.config = config;
  report.profile_read_bytes_per_s =
      machine.memory_bandwidth_bytes_per_s * efficiency.memory_bandwidth_fraction;
  report.saturation_requests_per_s =
      estimate_saturation_requests_per_s(workload.lengths, config, predictor);
  report.workload = describe_workload(a, workload);
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
  const LoadBench bench{a,         workload, spec, format, efficiency, machine,
                        predictor, decoder,  pool, probe,  err};
  for (const Load& load : loads) report.runs.push_back(bench_load(bench, load, report));
  return report;
}

}  // namespace llmcap::app
