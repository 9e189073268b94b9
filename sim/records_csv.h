// CSV forms of a simulation's per-request records and per-replica time series.
#pragma once

#include <ostream>

#include "sim/sim_time.h"
#include "sim/simulator.h"

namespace llmcap::sim {

/// Writes `t` in seconds with exactly nine decimals (the nanoseconds), so no precision is lost:
/// 1.5 ms is "0.001500000", -2 ns is "-0.000000002".
void write_seconds(std::ostream& out, SimTime t);

/// Writes `ttft_s,tpot_s,e2e_latency_s` of one request as write_request_records_csv does:
/// first_token - arrival; (completion - first_token) / (num_output_tokens - 1) rounded down to
/// the nanosecond, nothing when num_output_tokens < 2; completion - arrival (write_seconds).
void write_latencies(std::ostream& out, const RequestRecord& r);

/// One header line and one line per request (id order), LF line ends:
///   id,client_class,replica,rejected,arrival_s,first_scheduled_s,first_token_s,completion_s,
///   ttft_s,tpot_s,e2e_latency_s,queueing_delay_s,max_itl_s,num_prompt_tokens,
///   num_output_tokens,num_preemptions,decode_replica,kv_transfer_start_s,kv_transfer_end_s
/// Times are absolute simulated seconds (write_seconds); ttft_s = first_token - arrival,
/// tpot_s = (completion - first_token) / (num_output_tokens - 1) rounded down to the
/// nanosecond and empty when num_output_tokens < 2, e2e_latency_s = completion - arrival,
/// queueing_delay_s = first_scheduled - arrival (docs/metrics.md); rejected is 0 or 1 and a
/// rejected request's replica is -1 and its latencies 0. decode_replica is the decode replica a
/// disaggregated fleet moved the request's KV cache to (-1 otherwise, and then both transfer
/// times are empty); kv_transfer_start_s / kv_transfer_end_s are when that replica pulled
/// the KV cache and when it landed (RequestRecord). For the shape of a row see
/// tests/sim/records_csv_test.cpp.
void write_request_records_csv(const SimResult& result, std::ostream& out);

/// One header line and one line per (replica, window), replicas in index order, windows in
/// time order (empty body when the run kept no time series, SimOptions::time_series_interval
/// = 0):
///   replica,window_start_s,window_end_s,num_steps,mean_num_waiting,max_num_waiting,
///   mean_batch_size,mean_kv_utilization,busy_fraction
/// Window bounds as write_seconds; means and fractions with 6 significant digits.
void write_time_series_csv(const SimResult& result, std::ostream& out);

}  // namespace llmcap::sim
