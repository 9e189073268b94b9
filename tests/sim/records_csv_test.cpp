#include "sim/records_csv.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "sim/simulator.h"
#include "sim_test_helpers.h"

namespace llmcap::sim {
namespace {

using testing::ms;
using testing::one_replica;
using testing::open_loop;
using testing::RecordingPredictor;
using testing::request;

std::string seconds(SimTime t) {
  std::ostringstream out;
  write_seconds(out, t);
  return out.str();
}

TEST(RecordsCsvTest, SecondsKeepEveryNanosecond) {
  EXPECT_EQ(seconds(SimTime::Zero()), "0.000000000");
  EXPECT_EQ(seconds(ms(1.5)), "0.001500000");
  EXPECT_EQ(seconds(SimTime::Nanoseconds(12'345'678'901)), "12.345678901");
  EXPECT_EQ(seconds(SimTime::Nanoseconds(-2)), "-0.000000002");
  EXPECT_EQ(seconds(SimTime::Max()), "9223372036.854775807");
}

/// Two requests on one replica, one sequence at a time; a third can never fit.
///   A (prompt 10, output 3) and B (prompt 5, output 1) at 0; C (prompt 2000, output 1, class
///   2) at 0 is rejected (2001 tokens > 100 blocks of 16). step = 10 ms + 1 ms per new token.
///   0-20 prefill A; 20-31, 31-42 decode A (done at 42); B waits 0-42; 42-57 prefill B.
SimResult two_requests(SimTime interval) {
  RecordingPredictor predictor(0.010, 0.001);
  FleetConfig fleet = one_replica(BatchingPolicy::kContinuous, 16, 100);
  fleet.serving.max_num_seqs = 1;
  RequestSpec c = request(0, 2000, 1);
  c.client_class = 2;
  SimOptions options;
  options.time_series_interval = interval;
  return simulate(open_loop({request(0, 10, 3), request(0, 5, 1), c}), fleet, predictor, 1,
                  options);
}

TEST(RecordsCsvTest, RequestRecordsWithUnitsInTheHeader) {
  std::ostringstream out;
  write_request_records_csv(two_requests(SimTime::Zero()), out);
  EXPECT_EQ(out.str(),
            "id,client_class,replica,rejected,arrival_s,first_scheduled_s,first_token_s,"
            "completion_s,ttft_s,tpot_s,e2e_latency_s,queueing_delay_s,max_itl_s,"
            "num_prompt_tokens,num_output_tokens,num_preemptions,decode_replica,"
            "kv_transfer_start_s,kv_transfer_end_s\n"
            // A: TTFT 20 ms, TPOT (42 - 20) / 2 = 11 ms, max ITL 11 ms.
            "0,0,0,0,0.000000000,0.000000000,0.020000000,0.042000000,0.020000000,0.011000000,"
            "0.042000000,0.000000000,0.011000000,10,3,0,-1,,\n"
            // B: queued 42 ms; one output token, so no TPOT.
            "1,0,0,0,0.000000000,0.042000000,0.057000000,0.057000000,0.057000000,,0.057000000,"
            "0.042000000,0.000000000,5,1,0,-1,,\n"
            // C: rejected on arrival, never routed.
            "2,2,-1,1,0.000000000,0.000000000,0.000000000,0.000000000,0.000000000,,0.000000000,"
            "0.000000000,0.000000000,2000,1,0,-1,,\n");
}

TEST(RecordsCsvTest, DisaggregatedRowsCarryTheDecodeReplicaAndTheKvTransfer) {
  // One prefill replica (index 0), one decode replica (index 1); 1000 KV bytes per token over
  // a 1 GB/s link with 1 ms latency. A (prompt 100, output 3) arrives at 0: prefill 0-110 ms
  // (10 ms + 1 ms per token), then 100 x 1000 bytes move in 1 ms + 0.1 ms: 110-111.1 ms.
  RecordingPredictor predictor(0.010, 0.001);
  FleetConfig fleet;
  for (const ReplicaRole role : {ReplicaRole::kPrefill, ReplicaRole::kDecode}) {
    ReplicaGroup g;
    g.name = role == ReplicaRole::kPrefill ? "prefill" : "decode";
    g.num_replicas = 1;
    g.serving.policy = BatchingPolicy::kContinuous;
    g.serving.block_size_tokens = 16;
    g.serving.num_kv_blocks = 100;
    g.predictor = &predictor;
    g.role = role;
    g.network_bandwidth_bytes_per_s = 1e9;
    g.network_latency_s = 1e-3;
    fleet.groups.push_back(g);
  }
  fleet.kv_bytes_per_token = 1000;
  const SimResult r = simulate(open_loop({request(0, 100, 3)}), fleet, predictor, 1);
  std::ostringstream out;
  write_request_records_csv(r, out);
  const std::string csv = out.str();
  const std::string row = csv.substr(csv.find('\n') + 1);
  ASSERT_EQ(r.requests.size(), 1u);
  ASSERT_EQ(r.requests[0].decode_replica, 1);
  EXPECT_EQ(row.substr(row.rfind(",1,") + 1), "1," + seconds(r.requests[0].kv_transfer_start) +
                                                  "," + seconds(r.requests[0].kv_transfer_end) +
                                                  "\n");
  EXPECT_EQ(seconds(r.requests[0].kv_transfer_start), "0.110000000");
  EXPECT_EQ(seconds(r.requests[0].kv_transfer_end), "0.111100000");
}

TEST(RecordsCsvTest, TimeSeriesWindowsAreTimeAverages) {
  const SimResult r = two_requests(ms(25));
  ASSERT_EQ(r.time_series.size(), 1u);
  std::ostringstream out;
  write_time_series_csv(r, out);
  // Windows [0, 25), [25, 50), [50, 57) ms (the last ends with the run). The replica is busy
  // throughout with one sequence per step and one KV block held (A's 10-12 tokens, then B's
  // 5) of 100. B waits from 0 to 42 ms: 17 of the second window's 25 ms. Steps start at 0
  // and 20, then 31 and 42, then none.
  EXPECT_EQ(out.str(),
            "replica,window_start_s,window_end_s,num_steps,mean_num_waiting,max_num_waiting,"
            "mean_batch_size,mean_kv_utilization,busy_fraction\n"
            "0,0.000000000,0.025000000,2,1,1,1,0.01,1\n"
            "0,0.025000000,0.050000000,2,0.68,1,1,0.01,1\n"
            "0,0.050000000,0.057000000,0,0,0,1,0.01,1\n");
}

TEST(RecordsCsvTest, NoTimeSeriesGivesTheHeaderOnly) {
  std::ostringstream out;
  write_time_series_csv(two_requests(SimTime::Zero()), out);
  EXPECT_EQ(out.str(),
            "replica,window_start_s,window_end_s,num_steps,mean_num_waiting,max_num_waiting,"
            "mean_batch_size,mean_kv_utilization,busy_fraction\n");
}

TEST(RecordsCsvTest, IdleWindowsAreZeroAndTheSeriesCoversTheWholeRun) {
  // One request at 0 (5 tokens, output 1: a 15 ms prefill) and one at 100 ms; 40 ms windows:
  // [0, 40) busy 15 ms, [40, 80) idle, [80, 115) busy from 100 to 115 ms (15 of 35 ms).
  RecordingPredictor predictor(0.010, 0.001);
  SimOptions options;
  options.time_series_interval = ms(40);
  const SimResult r =
      simulate(open_loop({request(0, 5, 1), request(100, 5, 1)}),
               one_replica(BatchingPolicy::kStatic, 16, 100), predictor, 1, options);
  ASSERT_EQ(r.time_series.size(), 1u);
  const std::vector<InstanceWindow>& w = r.time_series[0];
  ASSERT_EQ(w.size(), 3u);
  constexpr double kTol = 1e-12;
  EXPECT_NEAR(w[0].busy_fraction, 15.0 / 40, kTol);
  EXPECT_EQ(w[1].num_steps, 0);
  EXPECT_EQ(w[1].busy_fraction, 0);
  EXPECT_EQ(w[1].mean_batch_size, 0);
  EXPECT_EQ(w[1].mean_kv_utilization, 0);
  EXPECT_EQ(w[2].start, ms(80));
  EXPECT_EQ(w[2].end, ms(115));
  EXPECT_NEAR(w[2].busy_fraction, 15.0 / 35, kTol);
  EXPECT_NEAR(w[2].mean_kv_utilization, 15.0 / 35 * 0.01, kTol);
}

}  // namespace
}  // namespace llmcap::sim
