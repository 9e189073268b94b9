#include "cli/bench_sim.h"

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "app/output_files.h"
#include "app/plan_output.h"
#include "app/run_store.h"
#include "base/text.h"
#include "cli/cli.h"
#include "model/formats.h"
#include "model/hardware.h"
#include "model/model_spec.h"
#include "model/roofline.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "store/results_store.h"

namespace llmcap::cli {
namespace {

constexpr const char* kModelFile = "llama-3.1-8b.json";
constexpr const char* kInstanceType = "aws-p5.4xlarge";
constexpr const char* kLengthModel = "azure-2023-conversation.json";

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

int64_t peak_rss_bytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<int64_t>(usage.ru_maxrss) * 1024;  // Linux reports KiB
}

using base::fixed;

/// "expected a positive integer, got "x"" unless the whole value is an integer >= 1.
std::string check_positive_integer(std::string& value) {
  try {
    size_t used = 0;
    const long long v = std::stoll(value, &used);
    if (used == value.size() && v >= 1) return "";
  } catch (const std::exception&) {  // not a number, or out of range: the message below
  }
  return "expected a positive integer, got \"" + value + "\"";
}

}  // namespace

CLI::App* add_bench_sim_command(CLI::App& app, BenchSimArgs& args) {
  const CLI::Validator positive_integer(check_positive_integer, "INT>=1");
  CLI::App* cmd = app.add_subcommand(
      "bench-sim",
      "Time the simulator: N requests (Poisson arrivals, Azure conversation lengths) on an "
      "M-replica fleet (Llama-3.1-8B on one H100 SXM, roofline predictor)");
  cmd->add_option("--requests", args.num_requests, "Requests to simulate")
      ->check(positive_integer)
      ->capture_default_str();
  cmd->add_option("--instances", args.num_instances, "Replicas of the fleet")
      ->check(positive_integer)
      ->capture_default_str();
  cmd->add_option("--seed", args.seed, "Seed of the arrivals and length draws")
      ->capture_default_str();
  cmd->add_option("--json", args.json_out,
                  "Write {requests, wall_s, requests_per_s, peak_rss_bytes, ...} to FILE")
      ->option_text("FILE");
  cmd->add_option("--data-dir", args.data_dir,
                  "Folder with models/, hardware/, instances/ and traces/ (see plan --help)")
      ->option_text("DIR");
  cmd->add_option("--results-db", args.results_db,
                  "Results database the run is stored in (default: $LLMCAP_DB, else "
                  "$XDG_DATA_HOME/llmcap/runs.sqlite)")
      ->option_text("FILE");
  cmd->add_flag("--no-store", args.no_store, "Do not store the run in the results database");
  return cmd;
}

BenchSimReport run_bench_sim(const BenchSimArgs& args, const std::filesystem::path& data_dir) {
  BenchSimReport report;
  report.num_requests = args.num_requests;
  report.num_instances = args.num_instances;
  report.seed = args.seed;
  report.instance_type = kInstanceType;

  const auto setup_start = std::chrono::steady_clock::now();
  const model::Catalog catalog = model::Catalog::load(data_dir);
  const model::ModelSpec spec = model::load_model_spec(data_dir / "models" / kModelFile);
  report.model = spec.id;
  const model::InstanceType& instance = catalog.instance(kInstanceType, "bench-sim");
  const model::Efficiency efficiency = model::default_efficiency(instance.kind);
  const model::Deployment deployment = model::make_deployment(
      instance, catalog, spec, model::WeightFormat::kBf16, model::KvFormat::kBf16, efficiency);
  const model::RooflinePredictor predictor(spec, model::WeightFormat::kBf16, model::KvFormat::kBf16,
                                           deployment, efficiency);
  report.predictor = "roofline (datasheet, GPU default efficiencies) for " + spec.id + " bf16 on " +
                     kInstanceType + ": " + deployment.rule;

  sim::FleetConfig fleet;
  fleet.num_replicas = args.num_instances;
  fleet.router = sim::RouterKind::kLeastOutstanding;
  fleet.serving.policy = sim::BatchingPolicy::kContinuous;
  fleet.serving.num_kv_blocks =
      deployment.kv_cache_bytes /
      (spec.kv_cache_bytes_per_token(model::KvFormat::kBf16) * fleet.serving.block_size_tokens);
  report.num_kv_blocks = fleet.serving.num_kv_blocks;

  const std::vector<sim::LengthSample> lengths =
      sim::load_lengths(data_dir / "workloads" / kLengthModel);
  double sum_prompt = 0;
  double sum_output = 0;
  for (const sim::LengthSample& s : lengths) {
    sum_prompt += static_cast<double>(s.num_prompt_tokens);
    sum_output += static_cast<double>(s.num_output_tokens);
  }
  const double n = static_cast<double>(lengths.size());
  const auto mean_prompt = static_cast<int64_t>(std::llround(sum_prompt / n));
  const double mean_output = sum_output / n;
  // Saturation estimate of one replica (see the header).
  model::BatchShape prefill;
  prefill.num_prefill_seqs = prefill.num_prefill_seqs_completing = 1;
  prefill.num_prefill_tokens = mean_prompt;
  prefill.num_prefill_attention_pairs = mean_prompt * (mean_prompt + 1) / 2;
  const auto blocks_per_request =
      static_cast<int64_t>(std::ceil((static_cast<double>(mean_prompt) + mean_output) /
                                     static_cast<double>(fleet.serving.block_size_tokens)));
  const int64_t batch = std::clamp<int64_t>(fleet.serving.num_kv_blocks / blocks_per_request, 1,
                                            fleet.serving.max_num_seqs);
  model::BatchShape decode;
  decode.num_decode_seqs = batch;
  decode.num_decode_context_tokens = static_cast<int64_t>(
      static_cast<double>(batch) * (static_cast<double>(mean_prompt) + mean_output / 2));
  const double request_s = predictor.step_time_s(prefill) +
                           mean_output * predictor.step_time_s(decode) / static_cast<double>(batch);
  report.capacity_requests_per_s = 1.0 / request_s;
  report.offered_requests_per_s =
      kBenchLoadFraction * static_cast<double>(args.num_instances) * report.capacity_requests_per_s;

  sim::Workload workload;
  workload.open_loop =
      sim::poisson_arrivals(report.offered_requests_per_s, args.num_requests, lengths, args.seed);
  report.setup_s = seconds_since(setup_start);

  sim::SimOptions options;
  options.record_itl_ns = false;
  const auto start = std::chrono::steady_clock::now();
  const sim::SimResult result = sim::simulate(workload, fleet, predictor, args.seed, options);
  report.wall_s = seconds_since(start);
  report.requests_per_s = static_cast<double>(args.num_requests) / report.wall_s;
  report.peak_rss_bytes = peak_rss_bytes();

  report.simulated_s = result.end_time.seconds();
  report.num_steps = result.num_steps;
  report.num_preemptions = result.num_preemptions;
  report.num_rejected = result.num_rejected;
  const sim::Metrics m = sim::compute_metrics(result, sim::Slo{});
  report.completed_requests_per_s = m.throughput_requests_per_s;
  report.queueing_delay_p99_s = m.queueing_delay.p99_s;
  report.ttft_p50_s = m.ttft.p50_s;
  report.ttft_p99_s = m.ttft.p99_s;
  report.tpot_p50_s = m.tpot.p50_s;
  report.tpot_p99_s = m.tpot.p99_s;
  return report;
}

std::string bench_sim_to_json(const BenchSimReport& r) {
  nlohmann::ordered_json j;
  j["requests"] = r.num_requests;
  j["wall_s"] = r.wall_s;
  j["requests_per_s"] = r.requests_per_s;
  j["peak_rss_bytes"] = r.peak_rss_bytes;
  j["instances"] = r.num_instances;
  j["seed"] = r.seed;
  j["offered_requests_per_s"] = r.offered_requests_per_s;
  j["simulated_s"] = r.simulated_s;
  j["num_steps"] = r.num_steps;
  j["predictor"] = r.predictor;
  return j.dump(2) + "\n";
}

std::string bench_sim_input_json(const BenchSimArgs& args, const std::filesystem::path& data_dir) {
  nlohmann::ordered_json j;
  j["requests"] = args.num_requests;
  j["instances"] = args.num_instances;
  j["seed"] = args.seed;
  j["data_dir"] = data_dir.string();
  return j.dump();
}

void print_bench_sim(const BenchSimReport& r, std::ostream& out) {
  out << "bench-sim: " << r.num_requests << " requests on " << r.num_instances << " replicas (seed "
      << r.seed << ")\n"
      << "  predictor: " << r.predictor << "\n"
      << "  serving: continuous batching, max_num_seqs 256, max_num_batched_tokens 16384, "
      << r.num_kv_blocks << " KV blocks of 16 tokens per replica; least_outstanding router\n"
      << "  workload: Poisson arrivals at " << fixed(r.offered_requests_per_s, 1) << " req/s ("
      << fixed(kBenchLoadFraction, 2) << " x " << r.num_instances << " x "
      << fixed(r.capacity_requests_per_s, 2)
      << " req/s estimated saturation per replica), Azure conversation lengths\n"
      << "  simulated: " << fixed(r.simulated_s, 1) << " s, " << r.num_steps << " steps, "
      << r.num_preemptions << " preemptions, " << r.num_rejected << " rejected; completed "
      << fixed(r.completed_requests_per_s, 1) << " req/s; TTFT p50 " << fixed(r.ttft_p50_s, 4)
      << " s, p99 " << fixed(r.ttft_p99_s, 4) << " s; TPOT p50 " << fixed(r.tpot_p50_s, 4)
      << " s, p99 " << fixed(r.tpot_p99_s, 4) << " s; queueing delay p99 "
      << fixed(r.queueing_delay_p99_s, 4) << " s\n"
      << "  setup (lengths, arrivals; not timed): " << fixed(r.setup_s, 3) << " s\n"
      << "wall time: " << fixed(r.wall_s, 3) << " s\n"
      << "requests simulated per second: " << fixed(r.requests_per_s, 0) << "\n"
      << "peak RSS: " << fixed(static_cast<double>(r.peak_rss_bytes) / (1 << 20), 1) << " MiB\n";
}

int run_bench_sim_command(const BenchSimArgs& args, const std::filesystem::path& data_dir,
                          const std::string& command_line, std::ostream& out, std::ostream& err) {
  app::check_output_paths(
      {{"--json", args.json_out}},
      {{"--results-db", args.no_store ? "" : store::default_db_path(args.results_db).string()}});
  const BenchSimReport report = run_bench_sim(args, data_dir);
  // Built whether or not --json was given: the results database stores the same document.
  const std::string json = bench_sim_to_json(report);
  app::OutputSet outputs;
  outputs.add("--json", args.json_out, json);
  outputs.commit();
  print_bench_sim(report, out);
  store_bench_sim_run(report, json, bench_sim_input_json(args, data_dir), args.results_db,
                      args.no_store, command_line, err);
  return kExitOk;
}

std::string summarize_bench_sim(const BenchSimReport& report) {
  return fixed(report.requests_per_s, 0) + " requests/s, peak RSS " +
         fixed(static_cast<double>(report.peak_rss_bytes) / (1 << 20), 1) + " MiB (" +
         std::to_string(report.num_requests) + " requests on " +
         std::to_string(report.num_instances) + " replicas, wall " + fixed(report.wall_s, 3) +
         " s)";
}

void store_bench_sim_run(const BenchSimReport& report, const std::string& document_json,
                         const std::string& input_json, const std::string& db_flag, bool no_store,
                         const std::string& command_line, std::ostream& err) {
  app::store_document_run("bench-sim",
                          std::to_string(report.num_requests) + " requests, " +
                              std::to_string(report.num_instances) + " replicas",
                          summarize_bench_sim(report), document_json, input_json, db_flag, no_store,
                          command_line, err);
}

}  // namespace llmcap::cli
