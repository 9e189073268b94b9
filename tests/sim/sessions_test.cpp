// Multi-turn sessions: prompts grow by the previous output and a new message, turns of a
// session share a stream and extend each other's prefix keys, determinism, the open loop's
// session starts and num_requests cut, and the closed loop's conversations.
#include "sim/sessions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <vector>

#include "sim/input_error.h"
#include "sim/prefix_keys.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "sim_test_helpers.h"
#include "test_util.h"

namespace llmcap::sim {
namespace {

using ::testing::HasSubstr;

SessionOptions fixed_turns(int turns, double think_time_s) {
  SessionOptions s;
  s.turn_count = TurnCountKind::kFixed;
  s.mean_turns = turns;
  s.think_time_s = think_time_s;
  s.mean_new_tokens_per_turn = 1;  // geometric with mean 1: exactly one token
  return s;
}

ArrivalOptions session_arrivals(const SessionOptions& sessions, int64_t num_requests) {
  ArrivalOptions o;
  o.rate_per_s = 4;
  o.num_requests = num_requests;
  o.sessions = sessions;
  return o;
}

/// Requests grouped by stream, in arrival order.
std::map<uint64_t, std::vector<RequestSpec>> by_session(const std::vector<RequestSpec>& requests) {
  std::map<uint64_t, std::vector<RequestSpec>> sessions;
  for (const RequestSpec& r : requests) sessions[r.prefix.stream].push_back(r);
  return sessions;
}

TEST(SessionTurnsTest, EachTurnExtendsThePreviousPromptOutputAndNewMessage) {
  SessionOptions options = fixed_turns(3, 10);
  SessionTurns turns(options, 7);
  Session session;
  turns.start(session);
  EXPECT_EQ(session.turns_left, 3);
  const RequestSpec t1 = *turns.next_turn(session, {100, 10});
  const RequestSpec t2 = *turns.next_turn(session, {999, 20});  // only its output is used
  const RequestSpec t3 = *turns.next_turn(session, {999, 5});
  EXPECT_TRUE(session.done());
  EXPECT_EQ(t1.num_prompt_tokens, 100);
  EXPECT_EQ(t1.num_output_tokens, 10);
  EXPECT_EQ(t2.num_prompt_tokens, 100 + 10 + 1);
  EXPECT_EQ(t2.num_output_tokens, 20);
  EXPECT_EQ(t3.num_prompt_tokens, 111 + 20 + 1);
  EXPECT_EQ(t3.num_output_tokens, 5);
  for (const RequestSpec* t : {&t1, &t2, &t3}) {
    EXPECT_EQ(t->prefix.block_tokens, kDefaultSessionBlockTokens);
    EXPECT_EQ(t->prefix.stream, t1.prefix.stream);
    EXPECT_EQ(t->prefix.hashes, nullptr);
  }
  Session next;
  turns.start(next);
  EXPECT_NE(next.stream, session.stream);
}

TEST(SessionTurnsTest, ATurnThatWouldOutgrowTheContextEndsTheConversation) {
  SessionOptions options = fixed_turns(5, 10);
  options.max_context_tokens = 250;
  SessionTurns turns(options, 7);
  Session session;
  turns.start(session);
  EXPECT_EQ(turns.next_turn(session, {100, 10})->num_prompt_tokens, 100);
  // 100 + 10 + 1 prompt + 139 output = 250 tokens: fits exactly.
  EXPECT_EQ(turns.next_turn(session, {1, 139})->num_prompt_tokens, 111);
  EXPECT_EQ(session.turns_left, 3);
  // 250 + 1 prompt + 1 output: over the context, so the conversation ends here.
  EXPECT_FALSE(turns.next_turn(session, {1, 1}).has_value());
  EXPECT_TRUE(session.done());
  // A first turn is made whatever its length (the planner fits the samples to the context).
  turns.start(session);
  EXPECT_EQ(turns.next_turn(session, {300, 10})->num_prompt_tokens, 300);
}

TEST(SessionTurnsTest, NewMessagesAverageTheirMean) {
  SessionOptions options = fixed_turns(2, 0);
  options.mean_new_tokens_per_turn = 69.5;  // LMSYS-Chat-1M's mean user prompt
  SessionTurns turns(options, 3);
  constexpr int kSessions = 20000;
  constexpr double kTolerance = 2.0;  // about 4 standard errors of the mean (sd ~ 69)
  double sum = 0;
  for (int i = 0; i < kSessions; ++i) {
    Session s;
    turns.start(s);
    const RequestSpec first = *turns.next_turn(s, {50, 50});
    sum += static_cast<double>(turns.next_turn(s, {1, 1})->num_prompt_tokens -
                               first.num_prompt_tokens - first.num_output_tokens);
  }
  EXPECT_NEAR(sum / kSessions, 69.5, kTolerance);
}

TEST(SessionArrivalsTest, TurnsShareTheirSessionsStreamAndExtendItsKeys) {
  const auto requests = generate_arrivals(session_arrivals(fixed_turns(3, 30), 300), {{40, 8}}, 5);
  ASSERT_EQ(requests.size(), 300u);
  int num_complete = 0;
  for (const auto& [stream, turns] : by_session(requests)) {
    for (size_t t = 1; t < turns.size(); ++t) {
      const RequestSpec& prev = turns[t - 1];
      const RequestSpec& next = turns[t];
      EXPECT_EQ(next.num_prompt_tokens, prev.num_prompt_tokens + prev.num_output_tokens + 1);
      EXPECT_GE(next.arrival, prev.arrival);
      // The keys of the previous turn's whole context are a prefix of the next turn's.
      const int64_t blocks = (prev.num_prompt_tokens + prev.num_output_tokens) / 16;
      std::vector<uint64_t> prev_keys, next_keys;
      append_prefix_keys(prev.prefix, prev.num_prompt_tokens, blocks, prev_keys);
      append_prefix_keys(next.prefix, next.num_prompt_tokens, blocks + 2, next_keys);
      ASSERT_EQ(prev_keys.size(), static_cast<size_t>(blocks));
      EXPECT_TRUE(std::equal(prev_keys.begin(), prev_keys.end(), next_keys.begin()));
    }
    num_complete += turns.size() == 3;
  }
  EXPECT_GT(num_complete, 50);
  // Sessions do not share keys.
  std::vector<uint64_t> a, b;
  append_prefix_keys(requests.front().prefix, 40, 1, a);
  for (const RequestSpec& r : requests) {
    if (r.prefix.stream == requests.front().prefix.stream) continue;
    append_prefix_keys(r.prefix, r.num_prompt_tokens, 1, b);
    EXPECT_NE(a[0], b.back());
  }
}

TEST(SessionArrivalsTest, SameSeedSameTurnsOtherSeedOthers) {
  SessionOptions options;
  options.think_time_s = 20;
  const std::vector<LengthSample> lengths = {{10, 5}, {300, 40}, {70, 200}};
  const auto a = generate_arrivals(session_arrivals(options, 400), lengths, 11);
  const auto b = generate_arrivals(session_arrivals(options, 400), lengths, 11);
  const auto c = generate_arrivals(session_arrivals(options, 400), lengths, 12);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].arrival, b[i].arrival);
    EXPECT_EQ(a[i].num_prompt_tokens, b[i].num_prompt_tokens);
    EXPECT_EQ(a[i].prefix.stream, b[i].prefix.stream);
  }
  EXPECT_NE(a[1].arrival, c[1].arrival);
  EXPECT_NE(a[0].prefix.stream, c[0].prefix.stream);
}

TEST(SessionArrivalsTest, NumRequestsCutsTheSameTurnsALongerRunHas) {
  SessionOptions options;
  options.think_time_s = 60;  // turns of early sessions interleave with later sessions
  const std::vector<LengthSample> lengths = {{10, 5}, {300, 40}};
  const auto short_run = generate_arrivals(session_arrivals(options, 500), lengths, 2);
  const auto long_run = generate_arrivals(session_arrivals(options, 1500), lengths, 2);
  ASSERT_EQ(short_run.size(), 500u);
  ASSERT_EQ(long_run.size(), 1500u);
  for (size_t i = 0; i < short_run.size(); ++i) {
    EXPECT_EQ(short_run[i].arrival, long_run[i].arrival) << i;
    EXPECT_EQ(short_run[i].prefix.stream, long_run[i].prefix.stream) << i;
  }
  EXPECT_TRUE(std::is_sorted(
      long_run.begin(), long_run.end(),
      [](const RequestSpec& x, const RequestSpec& y) { return x.arrival < y.arrival; }));
}

TEST(SessionArrivalsTest, GeometricTurnsAverageTheMeanAndKeepTheRequestRate) {
  SessionOptions options;  // LMSYS-Chat-1M: 2.0 turns on average
  options.think_time_s = 5;
  ArrivalOptions o;
  o.rate_per_s = 10;
  o.duration_s = 4000;
  o.sessions = options;
  const auto requests = generate_arrivals(o, {{10, 5}}, 9);
  const auto sessions = by_session(requests);
  // ~40,000 requests in ~20,000 sessions: both within about 3 standard errors.
  constexpr double kTurnsTolerance = 0.05;
  constexpr double kRateTolerance = 0.02;
  const double mean_turns = static_cast<double>(requests.size()) / sessions.size();
  EXPECT_NEAR(mean_turns, kLmsysMeanTurns, kTurnsTolerance);
  EXPECT_NEAR(static_cast<double>(requests.size()) / 4000 / 10, 1.0, kRateTolerance);
}

TEST(SessionArrivalsTest, NoTurnOutgrowsTheContextSessionsEndInstead) {
  SessionOptions options = fixed_turns(20, 30);
  options.mean_new_tokens_per_turn = 50;
  const std::vector<LengthSample> lengths = {{200, 100}, {1000, 300}};
  ArrivalOptions o = session_arrivals(options, 2000);
  const auto unlimited = generate_arrivals(o, lengths, 3);
  constexpr int64_t kContext = 4096;
  int64_t longest = 0;
  for (const RequestSpec& r : unlimited) {
    longest = std::max(longest, r.num_prompt_tokens + r.num_output_tokens);
  }
  ASSERT_GT(longest, kContext);  // without the limit, 20 turns outgrow 4,096 tokens
  o.sessions->max_context_tokens = kContext;
  const auto limited = generate_arrivals(o, lengths, 3);
  ASSERT_EQ(limited.size(), 2000u);
  int64_t ended_early = 0;
  for (const auto& [stream, turns] : by_session(limited)) {
    for (const RequestSpec& r : turns) {
      EXPECT_LE(r.num_prompt_tokens + r.num_output_tokens, kContext);
    }
    ended_early += turns.size() < 20 && turns.back().arrival < limited.back().arrival;
  }
  EXPECT_GT(ended_early, 10);
}

TEST(SessionArrivalsTest, BadSessionOptionsAreNamed) {
  auto message = [](SessionOptions s) {
    return llmcap::testing::error_message<InputError>([&] {
      generate_arrivals(session_arrivals(s, 10), {{1, 1}}, 1);
    });
  };
  SessionOptions s;
  s.mean_turns = 0.5;
  EXPECT_EQ(message(s), "arrivals: sessions.mean_turns: expected a number in [1, 1e4], got 0.5");
  s = fixed_turns(2, 1);
  s.mean_turns = 2.5;
  EXPECT_EQ(message(s),
            "arrivals: sessions.mean_turns: expected an integer (turns \"fixed\"), got 2.5");
  s = {};
  s.think_time_s = -1;
  EXPECT_EQ(message(s),
            "arrivals: sessions.think_time_s: expected a number of seconds in [0, 1e8], got -1");
  s = {};
  s.mean_new_tokens_per_turn = 0;
  EXPECT_EQ(message(s),
            "arrivals: sessions.new_tokens_per_turn: expected a number in [1, 1e7], got 0");
  s = {};
  s.block_tokens = 0;
  EXPECT_EQ(message(s), "arrivals: sessions.block_tokens: expected a positive integer, got 0");
  s = {};
  s.max_context_tokens = -1;
  EXPECT_EQ(message(s),
            "arrivals: sessions.max_context_tokens: expected a non-negative integer, got -1");
}

TEST(ClosedLoopSessionsTest, EachUserExtendsItsConversationAfterTheAnswer) {
  // One user, two-turn sessions: request 2k + 1 extends request 2k and is sent after its last
  // token; request 2k + 2 starts a new session from a fresh length draw.
  const testing::RecordingPredictor predictor(0.01, 0.0001);
  Workload w;
  w.closed_loop = ClosedLoopWorkload{.num_users = 1,
                                     .think_time_s = 3.0,
                                     .duration_s = 200.0,
                                     .lengths = {{64, 8}, {100, 20}},
                                     .sessions = fixed_turns(2, 1.0)};
  FleetConfig fleet = testing::one_replica(BatchingPolicy::kContinuous, 16, 1000);
  const SimResult result = simulate(w, fleet, predictor, 4);
  ASSERT_GT(result.requests.size(), 20u);
  for (size_t i = 0; i + 1 < result.requests.size(); i += 2) {
    const RequestRecord& first = result.requests[i];
    const RequestRecord& second = result.requests[i + 1];
    EXPECT_TRUE(first.num_prompt_tokens == 64 || first.num_prompt_tokens == 100) << i;
    EXPECT_EQ(second.num_prompt_tokens, first.num_prompt_tokens + first.num_output_tokens + 1) << i;
    EXPECT_GE(second.arrival, first.completion) << i;
  }
  // Same seed, same conversations.
  const SimResult again = simulate(w, fleet, predictor, 4);
  ASSERT_EQ(again.requests.size(), result.requests.size());
  for (size_t i = 0; i < result.requests.size(); ++i) {
    EXPECT_EQ(again.requests[i].arrival, result.requests[i].arrival);
    EXPECT_EQ(again.requests[i].num_prompt_tokens, result.requests[i].num_prompt_tokens);
  }
}

TEST(ClosedLoopSessionsTest, ATurnThatWouldOutgrowTheContextStartsANewConversation) {
  // Fixed 50-turn sessions growing 401 tokens a turn (a 1-token message, 400 output) outgrow a
  // 4,096-token context at their ninth turn: the user's request starts a new conversation.
  const testing::RecordingPredictor predictor(0.01, 0.0001);
  SessionOptions sessions = fixed_turns(50, 1.0);
  sessions.max_context_tokens = 4096;
  Workload w;
  w.closed_loop = ClosedLoopWorkload{.num_users = 3,
                                     .think_time_s = 3.0,
                                     .duration_s = 100.0,
                                     .lengths = {{600, 400}},
                                     .sessions = sessions};
  const FleetConfig fleet = testing::one_replica(BatchingPolicy::kContinuous, 16, 10000);
  const SimResult result = simulate(w, fleet, predictor, 4);
  ASSERT_GT(result.requests.size(), 30u);
  int64_t first_turns = 0;
  for (const RequestRecord& r : result.requests) {
    EXPECT_LE(r.num_prompt_tokens + r.num_output_tokens, 4096);
    first_turns += r.num_prompt_tokens == 600;
  }
  // Eight turns per conversation (1,000, 1,401, ..., 3,807 tokens), fewer in the last one a
  // user has when the run ends: at least one request in eight is a first turn.
  EXPECT_GE(first_turns, static_cast<int64_t>(result.requests.size()) / 8);
  int64_t longest_prompt = 0;
  for (const RequestRecord& r : result.requests) {
    longest_prompt = std::max(longest_prompt, r.num_prompt_tokens);
  }
  EXPECT_EQ(longest_prompt, 3407);  // the eighth turn's
}

TEST(ClosedLoopSessionsTest, BadSessionOptionsAreRefused) {
  const testing::RecordingPredictor predictor(0.01, 0.0001);
  Workload w;
  SessionOptions s;
  s.block_tokens = -4;
  w.closed_loop = ClosedLoopWorkload{
      .num_users = 1, .think_time_s = 3.0, .duration_s = 10.0, .lengths = {{64, 8}}, .sessions = s};
  EXPECT_THAT(llmcap::testing::error_message<InputError>([&] {
                simulate(w, testing::one_replica(BatchingPolicy::kContinuous, 16, 1000), predictor,
                         1);
              }),
              HasSubstr("closed_loop.sessions.block_tokens: expected a positive integer, got -4"));
}

}  // namespace
}  // namespace llmcap::sim
