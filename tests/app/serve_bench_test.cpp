// serve-bench's engine (app/serve_bench.h): the workload scaling and the saturation estimate
// (in virtual time, so nothing here depends on the machine's speed). The whole run, its option
// errors and its outputs through the command: tests/cli/serve_bench_test.cpp.
#include "app/serve_bench.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "serve/serve_test_helpers.h"
#include "sim/input_error.h"

namespace llmcap::app {
namespace {

using sim::SimTime;
using ::testing::HasSubstr;

using serve::testing::LinearPredictor;
using serve::testing::request;

// ---- workload scaling and saturation ----------------------------------------------------------

TEST(ServeBenchWorkload, LengthsAreScaledRoundedAndCapped) {
  ServeBenchOptions a;  // prompt x0.125 capped at 512, output x0.25 capped at 64
  EXPECT_EQ(scale_lengths({1000, 100}, a).num_prompt_tokens, 125);
  EXPECT_EQ(scale_lengths({1000, 100}, a).num_output_tokens, 25);
  EXPECT_EQ(scale_lengths({5000, 1000}, a).num_prompt_tokens, 512);
  EXPECT_EQ(scale_lengths({5000, 1000}, a).num_output_tokens, 64);
  EXPECT_EQ(scale_lengths({3, 1}, a).num_prompt_tokens, 1);  // 0.375 rounds to 0: at least 1
  EXPECT_EQ(scale_lengths({3, 1}, a).num_output_tokens, 1);
  EXPECT_EQ(scale_lengths({12, 6}, a).num_prompt_tokens, 2);  // 1.5 rounds away from zero
}

TEST(ServeBenchWorkload, TraceIsScaledToTheRateOrByTheMultiplier) {
  // Arrivals at 0, 1, 2, 4, 8 s; the segment from 1 s is 0, 1, 3, 7 s after rebasing.
  std::vector<sim::RequestSpec> trace;
  for (const double t : {0.0, 1.0, 2.0, 4.0, 8.0})
    trace.push_back(request(t, static_cast<int64_t>(10 + t), 2));
  // 1 request/s over 2 s: N = 2 requests, the third (3 s) ends the span: times x 2/3.
  const auto by_rate = scale_trace(trace, 1.0, 1.0, 0, 2.0);
  ASSERT_EQ(by_rate.size(), 2u);
  EXPECT_EQ(by_rate[0].arrival, SimTime::Zero());
  EXPECT_EQ(by_rate[1].arrival, SimTime::Seconds(2.0 / 3.0));
  EXPECT_EQ(by_rate[1].num_prompt_tokens, 12);  // the lengths travel with their rows
  // Multiplier 2: 0, 0.5, 1.5, 3.5 s; those before 2 s kept.
  const auto by_multiplier = scale_trace(trace, 1.0, 0, 2.0, 2.0);
  ASSERT_EQ(by_multiplier.size(), 3u);
  EXPECT_EQ(by_multiplier[2].arrival, SimTime::Seconds(1.5));
  try {
    scale_trace(trace, 1.0, 2.0, 0, 2.0);  // N = 4 needs 5 requests, 4 are left
    ADD_FAILURE() << "expected InputError";
  } catch (const sim::InputError& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("the trace has 4 requests after --trace-start-s 1 s; 5 are needed for "
                          "2 requests/s over --duration-s 2"));
  }
  try {
    scale_trace(trace, 9.0, 1.0, 0, 2.0);
    ADD_FAILURE() << "expected InputError";
  } catch (const sim::InputError& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("--trace-start-s: no request of the trace arrives at or after 9 s"));
  }
}

TEST(ServeBenchWorkload, SaturationIsThroughputWithEveryRequestOfferedAtOnce) {
  // Ten one-token requests of 4 prompt tokens, two per prefill step (budget 8): five steps of
  // 10 + 8 ms = 90 ms, so 10 / 0.09 s.
  const std::vector<sim::LengthSample> lengths(10, sim::LengthSample{4, 1});
  serve::ServeConfig config;
  config.max_num_seqs = 2;
  config.max_num_batched_tokens = 8;
  config.block_size_tokens = 4;
  config.num_kv_blocks = 100;
  constexpr double kTol = 1e-9;
  EXPECT_NEAR(estimate_saturation_requests_per_s(lengths, config, LinearPredictor()), 10 / 0.09,
              kTol);
}

TEST(ServeBenchWorkload, ConfigGivesEverySlotItsLongestRequestUnlessKvBlocksAreSet) {
  ServeBenchOptions a;  // 16 sequences, 512 + 64 tokens, blocks of 16
  const serve::ServeConfig config = serve_bench_config(a);
  EXPECT_EQ(config.policy, sim::BatchingPolicy::kContinuous);
  EXPECT_EQ(config.max_num_seqs, 16);
  EXPECT_EQ(config.max_num_batched_tokens, 1024);
  EXPECT_EQ(config.block_size_tokens, 16);
  EXPECT_EQ(config.num_kv_blocks, 16 * (512 + 64) / 16);
  a.block_size_tokens = 100;  // 576 tokens: 6 blocks, rounded up
  EXPECT_EQ(serve_bench_config(a).num_kv_blocks, 16 * 6);
  a.num_kv_blocks = 7;
  EXPECT_EQ(serve_bench_config(a).num_kv_blocks, 7);
}

TEST(ServeBenchWorkload, DefaultFilesComeFromTheDataFolder) {
  ServeBenchOptions a;
  EXPECT_EQ(serve_bench_model_path(a, "/d"), "/d/models/qwen2.5-0.5b.json");
  EXPECT_EQ(serve_bench_trace_path(a, "/d"), "/d/traces/AzureLLMInferenceTrace_conv.csv");
  a.arrivals = "poisson";
  EXPECT_EQ(serve_bench_trace_path(a, "/d"), "/d/workloads/sharegpt-8k.json");
  a.model = "m.json";
  a.trace = "t.csv";
  EXPECT_EQ(serve_bench_model_path(a, "/d"), "m.json");
  EXPECT_EQ(serve_bench_trace_path(a, "/d"), "t.csv");
}

TEST(ServeBenchWorkload, OptionsAreCheckedBeforeAnythingRuns) {
  EXPECT_NO_THROW(validate_serve_bench_options(ServeBenchOptions{}));
  ServeBenchOptions a;
  a.loads.clear();
  try {
    validate_serve_bench_options(a);
    ADD_FAILURE() << "expected InputError";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(std::string(e.what()), "serve-bench: --loads: expected at least one load, got none");
  }
}

}  // namespace
}  // namespace llmcap::app
