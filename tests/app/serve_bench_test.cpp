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
#include "sim/prefix_keys.h"
#include "test_util.h"

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

// ---- Mooncake JSON Lines traces and their hash blocks ---------------------------------------

TEST(ServeBenchWorkload, JsonlTraceIsKeyedAndItsHashBlocksScaleWithThePrompt) {
  llmcap::testing::TempDir dir;
  const auto path = dir.write(
      "m.jsonl",
      "{\"timestamp\": 0, \"input_length\": 1030, \"output_length\": 40, \"hash_ids\": [0, 1, 2]}\n"
      "\n"
      "{\"timestamp\": 1500, \"input_length\": 600, \"output_length\": 0, \"hash_ids\": [0, "
      "7]}\n");
  const std::vector<sim::RequestSpec> rows = sim::load_trace(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[1].arrival, SimTime::MilliSeconds(1500));
  EXPECT_EQ(rows[1].num_output_tokens, 1);  // 0 reads as 1
  EXPECT_EQ(rows[1].prefix.begin, 3);
  EXPECT_EQ(rows[1].prefix.count, 2);
  EXPECT_EQ(rows[0].prefix.block_tokens, 512);
  EXPECT_NE(rows[0].prefix.stream, rows[1].prefix.stream);
  // Both start with hash 0: their first keys agree, their second do not.
  std::vector<uint64_t> k0, k1;
  sim::append_prefix_keys(rows[0].prefix, rows[0].num_prompt_tokens, 2, k0);
  sim::append_prefix_keys(rows[1].prefix, rows[1].num_prompt_tokens, 2, k1);
  EXPECT_EQ(k0[0], k1[0]);
  EXPECT_NE(k0[1], k1[1]);

  ServeBenchOptions a;
  a.prompt_scale = 1.0 / 32;  // 512-token blocks become 16 tokens
  a.trace = path.string();
  a.trace_start_s = 0;
  const ServeBenchWorkload w = read_serve_bench_workload(a, "/nowhere");
  EXPECT_EQ(w.trace[0].num_prompt_tokens, 32);  // 1030 / 32 = 32.2
  EXPECT_EQ(w.trace[0].prefix.block_tokens, 16);
}

TEST(ServeBenchWorkload, HashBlockScalingErrorsNameTheOption) {
  // The .jsonl reader's own errors are tested with it (tests/sim/trace_jsonl_test.cpp).
  sim::RequestSpec r = request(0, 100, 10);
  r.prefix.block_tokens = 512;
  ServeBenchOptions a;
  a.prompt_scale = 0.1;
  try {
    scale_prefix_blocks(r, a);
    ADD_FAILURE() << "expected InputError";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "serve-bench: --prompt-scale: expected a factor that maps the trace's hash blocks "
              "of 512 tokens to a whole number of tokens, got 0.1 (51.2 tokens)");
  }
  a.prompt_scale = 3.0 / 512;  // blocks of 3 tokens on 16-token engine blocks
  a.prefix_caching = true;
  try {
    scale_prefix_blocks(r, a);
    ADD_FAILURE() << "expected InputError";
  } catch (const sim::InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "serve-bench: --block-size: expected a divisor or multiple of the scaled hash "
              "blocks of 3 tokens (--prefix-caching), got 16");
  }
}

TEST(ServeBenchWorkload, ConversationSampleKeepsWholeConversationsByTheirSecondBlock) {
  llmcap::testing::TempDir dir;
  std::string rows;
  for (int i = 0; i < 6; ++i) {  // conversations 10, 11, 12, each with two turns
    const int conversation = 10 + i % 3;
    rows += "{\"timestamp\": " + std::to_string(100 * i) +
            ", \"input_length\": 1500, \"output_length\": 5, \"hash_ids\": [0, " +
            std::to_string(conversation) + ", " + std::to_string(50 + i) + "]}\n";
  }
  ServeBenchOptions a;
  a.trace = dir.write("m.jsonl", rows).string();
  a.trace_start_s = 0;
  a.prompt_scale = 1.0 / 32;
  a.conversation_sample = 5;  // keeps conversation 10: rows 0 and 3
  const ServeBenchWorkload w = read_serve_bench_workload(a, "/nowhere");
  ASSERT_EQ(w.trace.size(), 2u);
  EXPECT_EQ(w.trace[0].arrival, SimTime::Zero());
  EXPECT_EQ(w.trace[1].arrival, SimTime::MilliSeconds(300));
  EXPECT_EQ(w.lengths.size(), 2u);
  const auto message = [&](ServeBenchOptions options) {
    try {
      validate_serve_bench_options(options);
      read_serve_bench_workload(options, "/nowhere");
    } catch (const sim::InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  a.conversation_sample = 7;
  EXPECT_EQ(message(a),
            "serve-bench: --conversation-sample: expected a sample that keeps some row of the "
            "trace, got 7");
  a.conversation_sample = 0;
  EXPECT_EQ(message(a), "serve-bench: --conversation-sample: expected an integer >= 1, got 0");
  a.conversation_sample = 2;
  a.trace =
      dir.write("t.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n0,10,2\n").string();
  EXPECT_EQ(message(a),
            "serve-bench: --conversation-sample: expected 1 for a trace without hash blocks (a "
            ".jsonl one), got 2");
}

}  // namespace
}  // namespace llmcap::app
