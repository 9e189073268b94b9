// Scenario workloads that carry prefix identity: JSON Lines (Mooncake) traces and multi-turn
// sessions of arrival processes and closed loops, with their fields' errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <set>
#include <string>

#include "plan/scenario.h"
#include "sim/input_error.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

using llmcap::testing::TempDir;
using ::testing::HasSubstr;

/// A valid scenario whose "workload" is the JSON object `workload`.
std::string scenario(const std::string& workload) {
  return R"({"name": "t", "model": "m.json", "workload": )" + workload +
         R"(, "slo": {"ttft_p99_s": 2.0, "tpot_p99_s": 0.05}, "candidates": ["a"], "seed": 7})";
}

const std::string kRows =
    R"({"timestamp": 0, "input_length": 1030, "output_length": 7, "hash_ids": [0, 1]})"
    "\n"
    R"({"timestamp": 250, "input_length": 900, "output_length": 3, "hash_ids": [0]})"
    "\n";

/// The message of the InputError load_scenario throws for `workload`.
std::string workload_error(const std::string& workload) {
  TempDir dir;
  dir.write("t.jsonl", kRows);
  dir.write("t.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n0,1,1\n");
  const auto path = dir.write("s.json", scenario(workload));
  return llmcap::testing::error_message<InputError>([&] { load_scenario(path); });
}

TEST(ScenarioJsonlTrace, ReadsTheTraceRelativeToTheScenarioWithItsBlockSize) {
  TempDir dir;
  dir.write("t.jsonl", kRows);
  const Scenario s = load_scenario(dir.write(
      "s.json", scenario(R"({"kind": "trace", "path": "t.jsonl", "hash_block_tokens": 1024,
                             "rate_multiplier": 2})")));
  EXPECT_EQ(s.workload.path, dir.path() / "t.jsonl");
  EXPECT_EQ(s.workload.hash_block_tokens, 1024);
  const sim::Workload w = load_workload(s.workload, s.seed);
  ASSERT_EQ(w.open_loop.size(), 2u);
  EXPECT_EQ(w.open_loop[1].arrival.ns(), 125'000'000);  // 250 ms / 2
  EXPECT_EQ(w.open_loop[0].prefix.block_tokens, 1024);
  EXPECT_EQ(w.open_loop[0].prefix.count, 2);
  EXPECT_EQ(w.open_loop[1].prefix.count, 1);
}

TEST(ScenarioJsonlTrace, TheMooncakeTraceIsAWorkload) {
  LLMCAP_SKIP_WITHOUT_SHARED_TRACE("mooncake_conversation_trace.jsonl");
  TempDir dir;
  const std::string trace =
      (llmcap::testing::shared_traces_dir() / "mooncake_conversation_trace.jsonl").string();
  const Scenario s = load_scenario(
      dir.write("s.json", scenario(R"({"kind": "trace", "path": ")" + trace + "\"}")));
  EXPECT_EQ(s.workload.hash_block_tokens, 512);
  const sim::Workload w = load_workload(s.workload, s.seed);
  ASSERT_EQ(w.open_loop.size(), 12'031u);
  EXPECT_TRUE(w.open_loop.front().prefix.keyed());
  EXPECT_EQ(w.open_loop.front().prefix.block_tokens, 512);
}

TEST(ScenarioSessions, ReadsSessionsOfAnArrivalProcessWithLmsysDefaults) {
  TempDir dir;
  dir.write("l.csv", "num_prefill_tokens,num_decode_tokens\n40,8\n");
  const Scenario s = load_scenario(
      dir.write("s.json", scenario(R"({"kind": "poisson", "lengths_path": "l.csv", "rate_per_s": 2,
                             "num_requests": 200, "sessions": {"think_time_s": 30}})")));
  ASSERT_TRUE(s.workload.sessions.has_value());
  EXPECT_EQ(s.workload.sessions->turn_count, sim::TurnCountKind::kGeometric);
  EXPECT_DOUBLE_EQ(s.workload.sessions->mean_turns, 2.0);
  EXPECT_DOUBLE_EQ(s.workload.sessions->mean_new_tokens_per_turn, 69.5);
  EXPECT_EQ(s.workload.sessions->block_tokens, 16);
  EXPECT_DOUBLE_EQ(s.workload.sessions->think_time_s, 30.0);
  const sim::Workload w = load_workload(s.workload, s.seed);
  ASSERT_EQ(w.open_loop.size(), 200u);
  std::set<uint64_t> streams;
  for (const sim::RequestSpec& r : w.open_loop) {
    EXPECT_EQ(r.prefix.block_tokens, 16);
    streams.insert(r.prefix.stream);
  }
  EXPECT_LT(streams.size(), 200u);  // some sessions have several turns
}

TEST(ScenarioSessions, ReadsSessionsOfAClosedLoop) {
  TempDir dir;
  dir.write("l.csv", "num_prefill_tokens,num_decode_tokens\n40,8\n");
  const Scenario s = load_scenario(dir.write(
      "s.json", scenario(R"({"kind": "closed_loop", "lengths_path": "l.csv", "num_users": 3,
                             "think_time_s": 60, "duration_s": 100,
                             "sessions": {"turns": "fixed", "mean_turns": 4, "think_time_s": 8,
                                          "new_tokens_per_turn": 20, "block_tokens": 32}})")));
  ASSERT_TRUE(s.workload.sessions.has_value());
  const sim::Workload w = load_workload(s.workload, s.seed);
  ASSERT_TRUE(w.closed_loop.has_value());
  ASSERT_TRUE(w.closed_loop->sessions.has_value());
  EXPECT_EQ(w.closed_loop->sessions->turn_count, sim::TurnCountKind::kFixed);
  EXPECT_DOUBLE_EQ(w.closed_loop->sessions->mean_turns, 4.0);
  EXPECT_DOUBLE_EQ(w.closed_loop->sessions->think_time_s, 8.0);
  EXPECT_DOUBLE_EQ(w.closed_loop->sessions->mean_new_tokens_per_turn, 20.0);
  EXPECT_EQ(w.closed_loop->sessions->block_tokens, 32);
}

TEST(ScenarioSessions, ConversationsEndWhereATurnWouldOutgrowTheModelsContext) {
  TempDir dir;
  dir.write("l.csv", "num_prefill_tokens,num_decode_tokens\n3000,1000\n");
  const Scenario s = load_scenario(
      dir.write("s.json", scenario(R"({"kind": "poisson", "lengths_path": "l.csv", "rate_per_s": 2,
                             "num_requests": 100, "sessions": {"turns": "fixed", "mean_turns": 3,
                             "think_time_s": 5, "new_tokens_per_turn": 1}})")));
  // No context given: three turns of 4,000, 5,001 and 6,002 tokens per conversation.
  int64_t longest = 0;
  for (const sim::RequestSpec& r : load_workload(s.workload, s.seed).open_loop) {
    longest = std::max(longest, r.num_prompt_tokens + r.num_output_tokens);
  }
  EXPECT_EQ(longest, 6002);
  // A 5,500-token context: the third turn is not sent; every request fits.
  const sim::Workload w = load_workload(s.workload, s.seed, 5500);
  ASSERT_EQ(w.open_loop.size(), 100u);
  std::set<uint64_t> streams;
  for (const sim::RequestSpec& r : w.open_loop) {
    EXPECT_LE(r.num_prompt_tokens + r.num_output_tokens, 5500);
    streams.insert(r.prefix.stream);
  }
  EXPECT_GE(streams.size(), 50u);  // at most two turns a conversation
  // A closed loop's sessions carry the limit to the simulator.
  const Scenario closed = load_scenario(dir.write(
      "c.json", scenario(R"({"kind": "closed_loop", "lengths_path": "l.csv", "num_users": 3,
                             "think_time_s": 60, "duration_s": 100,
                             "sessions": {"think_time_s": 8}})")));
  EXPECT_EQ(
      load_workload(closed.workload, closed.seed, 5500).closed_loop->sessions->max_context_tokens,
      5500);
  EXPECT_EQ(load_workload(closed.workload, closed.seed).closed_loop->sessions->max_context_tokens,
            0);
}

TEST(ScenarioPrefixWorkloadErrors, EachBadFieldIsNamed) {
  const std::string poisson =
      R"({"kind": "poisson", "lengths_path": "l.csv", "rate_per_s": 2, "num_requests": 5, )";
  EXPECT_THAT(workload_error(R"({"kind": "trace", "path": "t.jsonl", "sessions": {}})"),
              HasSubstr("field \"workload.sessions\": not allowed with kind \"trace\" (only with "
                        "an arrival process or closed_loop)"));
  EXPECT_THAT(workload_error(poisson + R"("hash_block_tokens": 512})"),
              HasSubstr("field \"workload.hash_block_tokens\": not allowed with kind \"poisson\" "
                        "(only with \"trace\")"));
  EXPECT_THAT(workload_error(R"({"kind": "trace", "path": "t.csv", "hash_block_tokens": 512})"),
              HasSubstr("field \"workload.hash_block_tokens\": only for a JSON Lines trace (a "
                        ".jsonl path)"));
  EXPECT_THAT(
      workload_error(R"({"kind": "trace", "path": "t.jsonl", "hash_block_tokens": 0})"),
      HasSubstr("field \"workload.hash_block_tokens\": expected a positive integer, got 0"));
  EXPECT_THAT(workload_error(poisson + R"("sessions": {"mean_turns": 2}})"),
              HasSubstr("field \"workload.sessions.think_time_s\": missing; the mean seconds "
                        "between an answer and the next turn"));
  EXPECT_THAT(workload_error(poisson + R"("sessions": {"think_time_s": 1, "turns": "zipf"}})"),
              HasSubstr("field \"workload.sessions.turns\": expected \"geometric\" or \"fixed\", "
                        "got \"zipf\""));
  EXPECT_THAT(workload_error(poisson + R"("sessions": {"think_time_s": 1, "mean_turns": 0.5}})"),
              HasSubstr("field \"workload.sessions.mean_turns\": expected a number of turns in "
                        "[1, 1e4], got 0.5"));
  EXPECT_THAT(workload_error(poisson + R"("sessions": {"think_time_s": 1, "turns": "fixed",
                                          "mean_turns": 2.5}})"),
              HasSubstr("field \"workload.sessions.mean_turns\": expected a whole number of turns "
                        "(turns \"fixed\"), got 2.5"));
  EXPECT_THAT(workload_error(poisson + R"("sessions": {"think_time_s": -3}})"),
              HasSubstr("field \"workload.sessions.think_time_s\": expected a number of seconds "
                        "in [0, 1e8], got -3"));
  EXPECT_THAT(
      workload_error(poisson + R"("sessions": {"think_time_s": 1, "new_tokens_per_turn": 0}})"),
      HasSubstr("field \"workload.sessions.new_tokens_per_turn\": expected a mean number of "
                "tokens in [1, 1e7], got 0"));
  EXPECT_THAT(workload_error(poisson + R"("sessions": {"think_time_s": 1, "block_tokens": 0}})"),
              HasSubstr("field \"workload.sessions.block_tokens\": expected a positive integer, "
                        "got 0"));
  EXPECT_THAT(workload_error(poisson + R"("sessions": {"think_time_s": 1, "turn": 3}})"),
              HasSubstr("field \"workload.sessions.turn\": unknown"));
}

}  // namespace
}  // namespace llmcap::plan
