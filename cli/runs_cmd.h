// `llmcap runs list|show|compare` (issue 5, item 6; docs/results-store.md) and the helpers that
// store plan, sweep, calibration, simulation-benchmark (bench-sim, serve-bench) and validation
// runs in the results database (store/results_store.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "store/results_store.h"

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap runs` and its subcommands.
struct RunsArgs {
  std::string data_dir;             ///< --data-dir (unused by runs; kept for symmetry)
  std::string db;                   ///< --db: results database (default store::default_db_path)
  std::string kind;                 ///< list --kind: only runs of this kind ("" = all)
  int64_t limit = 50;               ///< list --limit: newest N (0 = all)
  std::string run;                  ///< show RUN: an id or "latest"
  bool json = false;                ///< show --json
  std::string run_a;                ///< compare RUN_A
  std::string run_b;                ///< compare RUN_B
  CLI::App* list_cmd = nullptr;     ///< set by add_runs_command
  CLI::App* show_cmd = nullptr;     ///< set by add_runs_command
  CLI::App* compare_cmd = nullptr;  ///< set by add_runs_command
};

/// Registers the `runs` subcommand (options bound to `args`) on `app`.
CLI::App* add_runs_command(CLI::App& app, RunsArgs& args);

/// Runs it; returns an exit code (cli.h). Bad input (an unknown run id, a database that cannot
/// be read, a run without plan results to compare) throws plan::InputError (exit 2).
int run_runs_command(const RunsArgs& args, const std::string& data_dir, std::ostream& out,
                     std::ostream& err);

/// A run id from the command line: a positive integer, or "latest" (0). Throws
/// plan::InputError naming the text.
int64_t parse_run_id(const std::string& text);

/// One line for listings from a run document (docs/run-document.md): the cheapest feasible
/// CPU and GPU fleets, e.g. "cheapest CPU: 4 x aws-m7i.8xlarge, 6.45 USD/h; cheapest GPU: 2 x
/// aws-g6e.xlarge, 3.72 USD/h", or "no feasible fleet among N instance types".
std::string summarize_plan_document(const nlohmann::json& document);

/// Stores `record` in the database `db_flag` resolves to (store::default_db_path) and prints
/// "Stored as run N in FILE" to `err`; nothing when `no_store`. A database error is printed
/// to `err` as a warning ("llmcap: warning: run not stored: ...") and yields nullopt: storing
/// never fails the command that produced the run.
std::optional<int64_t> store_run(const store::RunRecord& record, const std::string& db_flag,
                                 bool no_store, std::ostream& err);

/// Stores a finished plan run (kind "plan") in the results database `db_flag` resolves to
/// (store::default_db_path) and prints "Stored as run N in FILE" to `err`; does nothing when
/// `no_store`. The run document is cli::PlanRun::document, the input the scenario file's text.
/// A database error is reported on `err` as a warning and does not fail the plan.
struct PlanRun;
void store_plan_run(const PlanRun& run, const std::string& scenario_file,
                    const std::string& scenario_name, const std::string& db_flag, bool no_store,
                    const std::string& command_line, std::ostream& err);

/// Stores a calibration profile (kind "calibration"; the document is the profile's JSON,
/// model::profile_to_json, the name the CPU model) like store_plan_run.
void store_calibration_run(const std::string& profile_json, const std::string& cpu_model,
                           const std::string& db_flag, bool no_store,
                           const std::string& command_line, std::ostream& err);

struct BenchSimReport;
struct ServeBenchReport;
struct ValidationResult;

/// Stores a `llmcap bench-sim` run (kind "bench-sim") like store_plan_run: name "N requests, M
/// replicas", the document `document_json` (bench_sim_to_json(report): what --json writes), the
/// input `input_json` (the run's parameters, bench_sim_input_json), the summary
/// summarize_bench_sim(report).
void store_bench_sim_run(const BenchSimReport& report, const std::string& document_json,
                         const std::string& input_json, const std::string& db_flag, bool no_store,
                         const std::string& command_line, std::ostream& err);

/// Stores a `llmcap serve-bench` run (kind "serve-bench") like store_plan_run: name the model
/// id, the document `document_json` (serve_bench_to_json(report): what --json writes), the
/// input `input_json` (serve_bench_input_json), the summary summarize_serve_bench(report).
void store_serve_bench_run(const ServeBenchReport& report, const std::string& document_json,
                           const std::string& input_json, const std::string& db_flag, bool no_store,
                           const std::string& command_line, std::ostream& err);

/// Stores a `llmcap validate` run (kind "validate") like store_plan_run: name the model ids
/// (in grid order, ", "-separated), the document `document_json` (validation_to_json(result):
/// what --json writes), the input `input_json` (the grid and the profile), the summary
/// summarize_validation(result).
void store_validate_run(const ValidationResult& result, const std::string& document_json,
                        const std::string& input_json, const std::string& db_flag, bool no_store,
                        const std::string& command_line, std::ostream& err);

/// One line for listings: "749736 requests/s, peak RSS 20.4 MiB (2000 requests on 2 replicas,
/// wall 0.003 s)".
std::string summarize_bench_sim(const BenchSimReport& report);

/// One line for listings: the worst relative error of the simulation (|simulated_s /
/// measured_s - 1| over the loads and TTFT and TPOT; rows with measured_s = 0 left out) at each
/// quantile, e.g. "worst |simulated / measured - 1|: p50 12.3%, p90 20.1%, p99 35.0% (TTFT and
/// TPOT, 2 loads)"; "-" for a quantile without a row.
std::string summarize_serve_bench(const ServeBenchReport& report);

/// One line for listings: "|predicted / measured - 1| over 8 points: median 12.3%, p95 25.0%".
std::string summarize_validation(const ValidationResult& result);

}  // namespace llmcap::cli
