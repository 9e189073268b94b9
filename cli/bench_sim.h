// `llmcap bench-sim`: how fast the simulator runs a large fleet (issue 4, "Speed").
#pragma once

#include <cstdint>
#include <filesystem>
#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap bench-sim`.
struct BenchSimArgs {
  int64_t num_requests = 1'000'000;  ///< --requests, >= 1
  int64_t num_instances = 64;        ///< --instances (replicas of the fleet), >= 1
  uint64_t seed = 1;                 ///< --seed: arrival gaps and length draws
  std::string json_out;              ///< --json FILE (empty: none)
  std::string data_dir;              ///< --data-dir (empty: the CLI's default resolution)
  std::string results_db;            ///< --results-db: results database the run is stored in
  bool no_store = false;             ///< --no-store
};

/// Registers the `bench-sim` subcommand (options bound to `args`) on `app`.
CLI::App* add_bench_sim_command(CLI::App& app, BenchSimArgs& args);

/// The fixed benchmark scenario and what one run measured.
struct BenchSimReport {
  int64_t num_requests = 0;
  int64_t num_instances = 0;
  uint64_t seed = 0;
  std::string model;                   ///< model id of the predictor
  std::string instance_type;           ///< catalog instance the predictor describes
  std::string predictor;               ///< one line: which predictor and efficiency defaults
  int64_t num_kv_blocks = 0;           ///< per replica
  double capacity_requests_per_s = 0;  ///< estimated saturation rate of one replica
  double offered_requests_per_s = 0;   ///< Poisson rate of the whole fleet
  double setup_s = 0;  ///< wall time to load the lengths and draw the arrivals (not timed)
  // Measured: the simulate() call alone.
  double wall_s = 0;
  double requests_per_s = 0;   ///< num_requests / wall_s
  int64_t peak_rss_bytes = 0;  ///< getrusage(RUSAGE_SELF).ru_maxrss of the whole process
  // What was simulated (to show the load was below saturation).
  double simulated_s = 0;  ///< end time of the simulation
  int64_t num_steps = 0;
  int64_t num_preemptions = 0;
  int64_t num_rejected = 0;
  double completed_requests_per_s = 0;  ///< completed / (first arrival to last completion)
  double queueing_delay_p99_s = 0;
  double ttft_p50_s = 0;
  double ttft_p99_s = 0;
  double tpot_p50_s = 0;
  double tpot_p99_s = 0;
};

/// The fraction of the estimated saturation rate offered to the fleet.
inline constexpr double kBenchLoadFraction = 0.6;

/// Simulates args.num_requests requests with Poisson arrivals and the prompt/output lengths of
/// the Azure LLM inference 2023 conversation service (its length model,
/// `<data_dir>/workloads/azure-2023-conversation.json`, drawn with replacement) on a fleet of
/// args.num_instances replicas of Llama-3.1-8B (bf16 weights and KV cache) on the catalog's
/// aws-p5.4xlarge (one H100 SXM), timed by the datasheet roofline predictor (model/roofline.h,
/// GPU default efficiencies); continuous batching (vLLM defaults: max_num_seqs 256,
/// max_num_batched_tokens 16384, 16-token blocks), least-outstanding routing; inter-token gaps are
/// not kept (SimOptions::record_itl_ns = false), no time series. Offered rate = kBenchLoadFraction
/// x num_instances x the estimated saturation rate of one replica: 1 / (prefill time of the mean
/// prompt + mean output x decode step time / b) with b = the running sequences the KV cache holds
/// at mean length (at most max_num_seqs) and the decode step at mean context. Only the simulate()
/// call is timed (wall_s); latency percentiles are computed afterwards to show the load was below
/// saturation. Throws model::InputError / sim::InputError for missing or bad data files.
BenchSimReport run_bench_sim(const BenchSimArgs& args, const std::filesystem::path& data_dir);

/// `{"requests", "wall_s", "requests_per_s", "peak_rss_bytes", "instances", "seed",
/// "offered_requests_per_s", "simulated_s", "num_steps", "predictor"}`.
std::string bench_sim_to_json(const BenchSimReport& report);

/// The run's parameters, as stored in the results database (RunRecord::input_json):
/// `{"requests", "instances", "seed", "data_dir"}`.
std::string bench_sim_input_json(const BenchSimArgs& args, const std::filesystem::path& data_dir);

/// The human-readable report.
void print_bench_sim(const BenchSimReport& report, std::ostream& out);

/// The whole command: run, print, (with --json) write the JSON atomically, and store the run
/// in the results database (kind "bench-sim", store_bench_sim_run below; unless
/// --no-store; a storage failure is a warning on `err`). Returns an exit code (cli.h); errors
/// propagate as exceptions to cli::run, and nothing is stored then.
int run_bench_sim_command(const BenchSimArgs& args, const std::filesystem::path& data_dir,
                          const std::string& command_line, std::ostream& out, std::ostream& err);

/// Stores a `llmcap bench-sim` run (kind "bench-sim") like app::store_plan_run: name "N requests, M
/// replicas", the document `document_json` (bench_sim_to_json(report): what --json writes), the
/// input `input_json` (the run's parameters, bench_sim_input_json), the summary
/// summarize_bench_sim(report).
void store_bench_sim_run(const BenchSimReport& report, const std::string& document_json,
                         const std::string& input_json, const std::string& db_flag, bool no_store,
                         const std::string& command_line, std::ostream& err);

/// One line for listings: "749736 requests/s, peak RSS 20.4 MiB (2000 requests on 2 replicas,
/// wall 0.003 s)".
std::string summarize_bench_sim(const BenchSimReport& report);

}  // namespace llmcap::cli
