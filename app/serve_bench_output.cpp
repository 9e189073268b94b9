// serve-bench's report as JSON, CSV, stored input and summary (app/serve_bench_output.h).
#include "app/serve_bench_output.h"

#include <cmath>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "app/run_store.h"
#include "base/text.h"
#include "sim/records_csv.h"

namespace llmcap::app {
namespace {

using base::fixed;

}  // namespace

std::string serve_bench_to_json(const ServeBenchReport& r) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  nlohmann::ordered_json probed = nlohmann::ordered_json::array();
  nlohmann::ordered_json corrected = nlohmann::ordered_json::array();
  nlohmann::ordered_json faster = nlohmann::ordered_json::array();
  nlohmann::ordered_json slower = nlohmann::ordered_json::array();
  for (const ServeBenchRow& row : r.rows) {
    nlohmann::ordered_json j;
    j["load"] = row.load;
    j["metric"] = row.metric;
    j["quantile"] = row.quantile;
    j["measured_s"] = row.measured_s;
    j["simulated_s"] = row.simulated_s;
    rows.push_back(j);
    j["simulated_s"] = row.probe_rescaled_s;
    probed.push_back(j);
    j["simulated_s"] = row.step_corrected_s;
    corrected.push_back(j);
    j["simulated_s"] = row.steps_faster_s;
    faster.push_back(j);
    j["simulated_s"] = row.steps_slower_s;
    slower.push_back(j);
  }
  nlohmann::ordered_json runs = nlohmann::ordered_json::array();
  for (const ServeBenchRun& run : r.runs) {
    nlohmann::ordered_json j;
    j["load"] = run.load;
    j["offered_requests_per_s"] = run.offered_requests_per_s;
    j["rate_multiplier"] = run.rate_multiplier;
    j["num_requests"] = run.num_requests;
    j["read_bandwidth_bytes_per_s"] = run.read_bytes_per_s;
    j["other_cpu_cores"] = run.other_cpu_cores;
    j["steal_cpu_cores"] = run.steal_cpu_cores;
    j["loop_overhead_s"] = run.loop_overhead_s;
    j["measured_steps"] = run.measured_steps;
    j["simulated_steps"] = run.simulated_steps;
    j["measured_preemptions"] = run.measured_preemptions;
    j["simulated_preemptions"] = run.simulated_preemptions;
    j["measured_end_s"] = run.measured_end_s;
    j["simulated_end_s"] = run.simulated_end_s;
    j["measured_mean_decode_batch"] = run.measured_mean_batch;
    j["num_prefill_steps"] = run.num_prefill_steps;
    j["num_decode_steps"] = run.num_decode_steps;
    j["probe_prefill_ratio"] = run.probe_prefill_ratio;
    j["probe_decode_ratio"] = run.probe_decode_ratio;
    j["prefill_step_ratio"] = run.prefill_step_ratio;
    j["decode_step_ratio"] = run.decode_step_ratio;
    j["prefill_step_error_median"] = run.prefill_step_error_median;
    j["decode_step_error_median"] = run.decode_step_error_median;
    j["prefill_measured_total_s"] = run.prefill_measured_total_s;
    j["prefill_predicted_total_s"] = run.prefill_predicted_total_s;
    j["decode_measured_total_s"] = run.decode_measured_total_s;
    j["decode_predicted_total_s"] = run.decode_predicted_total_s;
    j["prefix_caching"] = run.prefix_caching;
    if (run.prefix_caching) {
      j["measured_prefix_cache_hit_rate"] = run.measured_hit_rate;
      j["measured_saved_prefill_tokens"] = run.measured_saved_prefill_tokens;
      j["measured_evicted_blocks"] = run.measured_evicted_blocks;
      j["simulated_prefix_caching"] = run.simulated_prefix_caching;
      if (run.simulated_prefix_caching) {
        j["simulated_prefix_cache_hit_rate"] = run.simulated_hit_rate;
        j["simulated_saved_prefill_tokens"] = run.simulated_saved_prefill_tokens;
        j["simulated_evicted_blocks"] = run.simulated_evicted_blocks;
      }
    }
    runs.push_back(j);
  }
  nlohmann::ordered_json doc;
  doc["rows"] = rows;
  doc["rows_probe_rescaled"] = probed;
  doc["rows_step_corrected"] = corrected;
  doc["rows_steps_5pct_faster"] = faster;
  doc["rows_steps_5pct_slower"] = slower;
  doc["runs"] = runs;
  doc["saturation_requests_per_s"] = r.saturation_requests_per_s;
  doc["model"] = r.model;
  doc["format"] = r.format;
  doc["workload"] = r.workload;
  doc["profile"] = r.profile;
  doc["threads"] = r.threads;
  doc["config"] = {{"policy", "continuous"},
                   {"max_num_seqs", r.config.max_num_seqs},
                   {"max_num_batched_tokens", r.config.max_num_batched_tokens},
                   {"block_size_tokens", r.config.block_size_tokens},
                   {"num_kv_blocks", r.config.num_kv_blocks}};
  return doc.dump(2) + "\n";
}

std::string serve_bench_steps_csv(const ServeBenchReport& r) {
  std::ostringstream out;
  out << "load,kind,start_s,exec_start_s,end_s,num_seqs,num_new_tokens,num_context_tokens,"
         "num_attention_pairs,measured_s,predicted_s\n";
  out << std::setprecision(9);
  for (const ServeBenchStep& step : r.steps) {
    const model::BatchShape& b = step.log.shape;
    out << step.load << "," << (step.log.prefill ? "prefill" : "decode") << ","
        << step.log.start.seconds() << "," << step.log.exec_start.seconds() << ","
        << step.log.end.seconds() << "," << (b.num_prefill_seqs + b.num_decode_seqs) << ","
        << b.num_new_tokens() << "," << b.num_decode_context_tokens << ","
        << b.num_prefill_attention_pairs << "," << (step.log.end - step.log.exec_start).seconds()
        << "," << step.predicted_s << "\n";
  }
  return out.str();
}

std::string serve_bench_requests_csv(const ServeBenchReport& r) {
  std::ostringstream out;
  out << "load,id,arrival_s,prompt_tokens,output_tokens,measured_ttft_s,measured_tpot_s,"
         "measured_e2e_s,simulated_ttft_s,simulated_tpot_s,simulated_e2e_s,corrected_ttft_s,"
         "corrected_tpot_s,corrected_e2e_s\n";
  out << std::setprecision(9);  // the load, as in the steps CSV
  const auto times = [&out](const sim::RequestRecord& q) {
    out << ",";
    if (q.rejected) {
      out << ",,";
    } else {
      sim::write_latencies(out, q);
    }
  };
  for (const ServeBenchRequest& q : r.requests) {
    out << q.load << "," << q.measured.id << ",";
    sim::write_seconds(out, q.measured.arrival);
    out << "," << q.measured.num_prompt_tokens << "," << q.measured.num_output_tokens;
    times(q.measured);
    times(q.simulated);
    times(q.step_corrected);
    out << "\n";
  }
  return out.str();
}

std::string serve_bench_input_json(const ServeBenchOptions& a,
                                   const std::filesystem::path& data_dir) {
  nlohmann::ordered_json j;
  j["model"] = serve_bench_model_path(a, data_dir).string();
  j["format"] = a.format;
  j["arrivals"] = a.arrivals;
  j["trace"] = serve_bench_trace_path(a, data_dir).string();
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
  // Absent at their defaults, as before these options.
  if (a.prefix_caching) j["prefix_caching"] = true;
  if (a.conversation_sample > 1) j["conversation_sample"] = a.conversation_sample;
  j["profile"] = a.profile;
  j["threads"] = a.threads;
  return j.dump();
}

std::string summarize_serve_bench(const ServeBenchReport& report) {
  std::string text = "worst |simulated / measured - 1|:";
  const char* separator = " ";
  for (const char* quantile : {"p50", "p90", "p99"}) {
    double worst = NAN;
    for (const ServeBenchRow& row : report.rows) {
      if (row.quantile != quantile || !(row.measured_s > 0)) continue;
      const double error = std::fabs(row.simulated_s / row.measured_s - 1.0);
      if (std::isnan(worst) || error > worst) worst = error;
    }
    text += separator + std::string(quantile) + " " +
            (std::isnan(worst) ? std::string("-") : fixed(100 * worst, 1) + "%");
    separator = ", ";
  }
  const size_t loads = report.runs.size();
  return text + " (TTFT and TPOT, " + std::to_string(loads) + " load" + (loads == 1 ? "" : "s") +
         ")";
}

void store_serve_bench_run(const ServeBenchReport& report, const std::string& document_json,
                           const std::string& input_json, const std::string& db_flag, bool no_store,
                           const std::string& command_line, std::ostream& err) {
  store_document_run("serve-bench", report.model, summarize_serve_bench(report), document_json,
                     input_json, db_flag, no_store, command_line, err);
}

}  // namespace llmcap::app
