#include "sim/records_csv.h"

#include <cinttypes>
#include <cstdio>

namespace llmcap::sim {

void write_seconds(std::ostream& out, SimTime t) {
  const int64_t ns = t.ns();
  // Magnitude as unsigned so that INT64_MIN does not overflow.
  const uint64_t magnitude = ns < 0 ? 0 - static_cast<uint64_t>(ns) : static_cast<uint64_t>(ns);
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%s%" PRIu64 ".%09" PRIu64, ns < 0 ? "-" : "",
                magnitude / 1'000'000'000u, magnitude % 1'000'000'000u);
  out << buffer;
}

void write_latencies(std::ostream& out, const RequestRecord& r) {
  write_seconds(out, r.first_token - r.arrival);
  out << ',';
  if (r.num_output_tokens >= 2) {
    write_seconds(
        out, SimTime::Nanoseconds((r.completion - r.first_token).ns() / (r.num_output_tokens - 1)));
  }
  out << ',';
  write_seconds(out, r.completion - r.arrival);
}

void write_request_records_csv(const SimResult& result, std::ostream& out) {
  out << "id,client_class,replica,rejected,arrival_s,first_scheduled_s,first_token_s,"
         "completion_s,ttft_s,tpot_s,e2e_latency_s,queueing_delay_s,max_itl_s,"
         "num_prompt_tokens,num_output_tokens,num_preemptions,decode_replica,"
         "kv_transfer_start_s,kv_transfer_end_s\n";
  for (const RequestRecord& r : result.requests) {
    out << r.id << ',' << r.client_class << ',' << r.replica << ',' << (r.rejected ? 1 : 0) << ',';
    write_seconds(out, r.arrival);
    out << ',';
    write_seconds(out, r.first_scheduled);
    out << ',';
    write_seconds(out, r.first_token);
    out << ',';
    write_seconds(out, r.completion);
    out << ',';
    write_latencies(out, r);
    out << ',';
    write_seconds(out, r.first_scheduled - r.arrival);
    out << ',';
    write_seconds(out, r.max_itl);
    out << ',' << r.num_prompt_tokens << ',' << r.num_output_tokens << ',' << r.num_preemptions
        << ',' << r.decode_replica << ',';
    if (r.decode_replica >= 0) {  // disaggregated: the KV cache moved to a decode replica
      write_seconds(out, r.kv_transfer_start);
      out << ',';
      write_seconds(out, r.kv_transfer_end);
    } else {
      out << ',';
    }
    out << '\n';
  }
}

void write_time_series_csv(const SimResult& result, std::ostream& out) {
  out << "replica,window_start_s,window_end_s,num_steps,mean_num_waiting,max_num_waiting,"
         "mean_batch_size,mean_kv_utilization,busy_fraction\n";
  char buffer[160];
  for (size_t r = 0; r < result.time_series.size(); ++r) {
    for (const InstanceWindow& w : result.time_series[r]) {
      out << r << ',';
      write_seconds(out, w.start);
      out << ',';
      write_seconds(out, w.end);
      std::snprintf(buffer, sizeof buffer, ",%" PRId64 ",%.6g,%" PRId64 ",%.6g,%.6g,%.6g\n",
                    w.num_steps, w.mean_num_waiting, w.max_num_waiting, w.mean_batch_size,
                    w.mean_kv_utilization, w.busy_fraction);
      out << buffer;
    }
  }
}

}  // namespace llmcap::sim
