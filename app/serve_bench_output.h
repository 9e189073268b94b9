// serve-bench's report in the forms that leave the process (app/serve_bench.h): the JSON
// document (what --json writes and the results database stores), the steps and requests CSVs,
// the run's input as stored, its one-line summary, and its storage as a run of kind
// "serve-bench". The printed table is the command's (cli/serve_bench.cpp).
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "app/serve_bench.h"

namespace llmcap::app {

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
/// "rows_steps_5pct_faster", "rows_steps_5pct_slower": [the same keys, simulated_s =
/// steps_faster_s, steps_slower_s], "runs": [...], "saturation_requests_per_s", "model",
/// "format", "workload", "profile", "threads", "config": {...}}`, indented by 2, with a final
/// newline.
std::string serve_bench_to_json(const ServeBenchReport& report);

/// The run's parameters, as stored in the results database (RunRecord::input_json): every
/// option that shapes the run, with the model and trace files resolved against `data_dir`
/// (`{"model", "format", "arrivals", "trace", "trace_start_s", "loads" | "rate_multipliers",
/// "duration_s", "prompt_scale", "output_scale", "max_prompt_tokens", "max_output_tokens",
/// "max_num_seqs", "max_num_batched_tokens", "block_size_tokens", "num_kv_blocks", "seed",
/// "profile", "threads"}`; profile "" = a quick calibration). One line, no newline.
std::string serve_bench_input_json(const ServeBenchOptions& options,
                                   const std::filesystem::path& data_dir);

/// One line for listings: the worst relative error of the simulation (|simulated_s /
/// measured_s - 1| over the loads and TTFT and TPOT; rows with measured_s = 0 left out) at each
/// quantile, e.g. "worst |simulated / measured - 1|: p50 12.3%, p90 20.1%, p99 35.0% (TTFT and
/// TPOT, 2 loads)"; "-" for a quantile without a row.
std::string summarize_serve_bench(const ServeBenchReport& report);

/// Stores a `llmcap serve-bench` run (kind "serve-bench") like store_plan_run (app/run_store.h):
/// name the model id, the document `document_json` (serve_bench_to_json(report): what --json
/// writes), the input `input_json` (serve_bench_input_json), the summary
/// summarize_serve_bench(report). Writes "Stored as run N in FILE", or a storage failure as a
/// warning, to `err`; never throws for a database error.
void store_serve_bench_run(const ServeBenchReport& report, const std::string& document_json,
                           const std::string& input_json, const std::string& db_flag, bool no_store,
                           const std::string& command_line, std::ostream& err);

}  // namespace llmcap::app
