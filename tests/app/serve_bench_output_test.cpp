// serve-bench's report as JSON and CSV (app/serve_bench_output.h).
#include "app/serve_bench_output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace llmcap::app {
namespace {

using sim::SimTime;

// ---- JSON --------------------------------------------------------------------------------------

TEST(ServeBenchJson, RowsHaveExactlyTheIssuesKeys) {
  ServeBenchReport report;
  report.model = "m";
  report.format = "int8";
  report.config.num_kv_blocks = 36;
  report.saturation_requests_per_s = 4;
  ServeBenchRun run;
  run.load = 0.5;
  run.num_requests = 90;
  report.runs.push_back(run);
  report.rows.push_back({0.5, "ttft", "p50", 0.25, 0.2, 0.22, 0.24, 0.19, 0.23});
  report.rows.push_back({0.5, "tpot", "p99", 0.04, 0.05, 0.048, 0.045, 0.047, 0.053});
  const auto doc = nlohmann::json::parse(serve_bench_to_json(report));
  ASSERT_EQ(doc.at("rows").size(), 2u);
  const auto& row = doc.at("rows")[0];
  EXPECT_EQ(row.size(), 5u);
  EXPECT_EQ(row.at("load").get<double>(), 0.5);
  EXPECT_EQ(row.at("metric"), "ttft");
  EXPECT_EQ(row.at("quantile"), "p50");
  EXPECT_EQ(row.at("measured_s").get<double>(), 0.25);
  EXPECT_EQ(row.at("simulated_s").get<double>(), 0.2);
  EXPECT_EQ(doc.at("rows")[1].at("quantile"), "p99");
  // The diagnostic rows: the same keys, simulated_s from the step-corrected simulation.
  ASSERT_EQ(doc.at("rows_step_corrected").size(), 2u);
  EXPECT_EQ(doc.at("rows_step_corrected")[0].size(), 5u);
  EXPECT_EQ(doc.at("rows_step_corrected")[0].at("measured_s").get<double>(), 0.25);
  EXPECT_EQ(doc.at("rows_step_corrected")[0].at("simulated_s").get<double>(), 0.24);
  ASSERT_EQ(doc.at("rows_probe_rescaled").size(), 2u);
  EXPECT_EQ(doc.at("rows_probe_rescaled")[1].at("simulated_s").get<double>(), 0.048);
  // The sensitivity rows: every step 5% shorter / longer.
  ASSERT_EQ(doc.at("rows_steps_5pct_faster").size(), 2u);
  EXPECT_EQ(doc.at("rows_steps_5pct_faster")[0].size(), 5u);
  EXPECT_EQ(doc.at("rows_steps_5pct_faster")[0].at("simulated_s").get<double>(), 0.19);
  ASSERT_EQ(doc.at("rows_steps_5pct_slower").size(), 2u);
  EXPECT_EQ(doc.at("rows_steps_5pct_slower")[1].at("measured_s").get<double>(), 0.04);
  EXPECT_EQ(doc.at("rows_steps_5pct_slower")[1].at("simulated_s").get<double>(), 0.053);
  EXPECT_EQ(doc.at("runs")[0].at("num_requests"), 90);
  EXPECT_EQ(doc.at("config").at("policy"), "continuous");
  EXPECT_EQ(doc.at("config").at("num_kv_blocks"), 36);
  EXPECT_EQ(doc.at("saturation_requests_per_s").get<double>(), 4.0);
}

TEST(ServeBenchRequestsCsv, OneLinePerRequestWithTheMetricsDefinitions) {
  ServeBenchReport report;
  const auto record = [](int64_t id, double arrival_s, double first_s, double done_s,
                         int64_t output) {
    sim::RequestRecord q;
    q.id = id;
    q.arrival = SimTime::Seconds(arrival_s);
    q.first_token = SimTime::Seconds(first_s);
    q.completion = SimTime::Seconds(done_s);
    q.num_prompt_tokens = 100 + id;
    q.num_output_tokens = output;
    return q;
  };
  // Five output tokens: TPOT = (completion - first token) / 4.
  report.requests.push_back({0.5, record(0, 1.0, 1.5, 2.5, 5), record(0, 1.0, 1.25, 2.25, 5),
                             record(0, 1.0, 2.0, 4.0, 5)});
  // One output token: no TPOT.
  report.requests.push_back(
      {0.5, record(1, 2.0, 3.0, 3.0, 1), record(1, 2.0, 2.5, 2.5, 1), record(1, 2.0, 4.0, 4.0, 1)});
  // Rejected (in all three: the same KV limits): no times.
  sim::RequestRecord rejected = record(2, 3.0, 0, 0, 7);
  rejected.rejected = true;
  report.requests.push_back({0.9, rejected, rejected, rejected});
  EXPECT_EQ(serve_bench_requests_csv(report),
            "load,id,arrival_s,prompt_tokens,output_tokens,measured_ttft_s,measured_tpot_s,"
            "measured_e2e_s,simulated_ttft_s,simulated_tpot_s,simulated_e2e_s,corrected_ttft_s,"
            "corrected_tpot_s,corrected_e2e_s\n"
            "0.5,0,1.000000000,100,5,0.500000000,0.250000000,1.500000000,0.250000000,"
            "0.250000000,1.250000000,1.000000000,0.500000000,3.000000000\n"
            "0.5,1,2.000000000,101,1,1.000000000,,1.000000000,0.500000000,,0.500000000,"
            "2.000000000,,2.000000000\n"
            "0.9,2,3.000000000,102,7,,,,,,,,,\n");
}

TEST(ServeBenchInputJson, EveryOptionThatShapesTheRunWithTheFilesResolved) {
  ServeBenchOptions a;
  EXPECT_EQ(serve_bench_input_json(a, "/d"),
            "{\"model\":\"/d/models/qwen2.5-0.5b.json\",\"format\":\"int8\",\"arrivals\":"
            "\"trace\",\"trace\":\"/d/traces/AzureLLMInferenceTrace_conv.csv\",\"trace_start_s\":"
            "600.0,\"loads\":[0.5,0.9],\"duration_s\":45.0,\"prompt_scale\":0.125,"
            "\"output_scale\":0.25,\"max_prompt_tokens\":512,\"max_output_tokens\":64,"
            "\"max_num_seqs\":16,\"max_num_batched_tokens\":1024,\"block_size_tokens\":16,"
            "\"num_kv_blocks\":0,\"seed\":1,\"profile\":\"\",\"threads\":0}");
  a.rate_multipliers = {2, 4};
  const auto doc = nlohmann::json::parse(serve_bench_input_json(a, "/d"));
  EXPECT_FALSE(doc.contains("loads"));
  EXPECT_EQ(doc.at("rate_multipliers"), nlohmann::json::array({2.0, 4.0}));
}

TEST(ServeBenchSummary, WorstErrorAtEachQuantile) {
  ServeBenchReport report;
  report.runs.resize(1);
  report.rows.push_back({0.5, "ttft", "p50", 0.2, 0.25, 0, 0, 0, 0});  // +25%
  report.rows.push_back({0.5, "tpot", "p50", 0.1, 0.09, 0, 0, 0, 0});  // -10%
  report.rows.push_back({0.5, "ttft", "p99", 0, 0.3, 0, 0, 0, 0});     // measured 0: left out
  EXPECT_EQ(summarize_serve_bench(report),
            "worst |simulated / measured - 1|: p50 25.0%, p90 -, p99 - (TTFT and TPOT, 1 load)");
  report.runs.resize(2);
  EXPECT_THAT(summarize_serve_bench(report), ::testing::EndsWith("(TTFT and TPOT, 2 loads)"));
}

}  // namespace
}  // namespace llmcap::app
