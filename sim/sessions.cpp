#include "sim/sessions.h"

#include <cmath>
#include <sstream>

#include "sim/input_error.h"
#include "sim/prefix_keys.h"
#include "sim/workload.h"

namespace llmcap::sim {
namespace {

/// Salt of the session stream ids (the first 64 bits of the fractional part of sqrt(5)).
constexpr uint64_t kSessionStreamSalt = 0x3c6ef372fe94f82bULL;
/// Bounds that keep a session's prompt far from int64 overflow.
constexpr double kMaxMeanTurns = 1e4;
constexpr double kMaxMeanNewTokens = 1e7;
/// A think time is drawn up to 37 times its mean: this keeps every turn within simulated time.
constexpr double kMaxThinkTimeS = 1e8;

std::string number(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

}  // namespace

void check_session_options(const SessionOptions& options, const std::string& context) {
  const double turns = options.mean_turns;
  if (!(turns >= 1.0 && turns <= kMaxMeanTurns)) {
    throw InputError(context + "mean_turns: expected a number in [1, 1e4], got " + number(turns));
  }
  if (options.turn_count == TurnCountKind::kFixed && turns != std::floor(turns)) {
    throw InputError(context + "mean_turns: expected an integer (turns \"fixed\"), got " +
                     number(turns));
  }
  if (!(options.think_time_s >= 0.0 && options.think_time_s <= kMaxThinkTimeS)) {
    throw InputError(context + "think_time_s: expected a number of seconds in [0, 1e8], got " +
                     number(options.think_time_s));
  }
  const double tokens = options.mean_new_tokens_per_turn;
  if (!(tokens >= 1.0 && tokens <= kMaxMeanNewTokens)) {
    throw InputError(context + "new_tokens_per_turn: expected a number in [1, 1e7], got " +
                     number(tokens));
  }
  if (options.max_context_tokens < 0) {
    throw InputError(context + "max_context_tokens: expected a non-negative integer, got " +
                     std::to_string(options.max_context_tokens));
  }
  if (options.block_tokens < 1) {
    throw InputError(context + "block_tokens: expected a positive integer, got " +
                     std::to_string(options.block_tokens));
  }
}

SessionTurns::SessionTurns(const SessionOptions& options, uint64_t seed)
    : options_(options),
      turns_(seed, Stream::kSessionTurns),
      messages_(seed, Stream::kSessionMessages),
      stream_salt_(splitmix64(seed ^ kSessionStreamSalt)) {}

void SessionTurns::start(Session& session) {
  ++num_started_;
  session.stream = prefix_chain(stream_salt_, num_started_);
  session.turns_left = options_.turn_count == TurnCountKind::kFixed
                           ? static_cast<int64_t>(options_.mean_turns)
                           : turns_.geometric(options_.mean_turns);
  session.context_tokens = 0;
}

std::optional<RequestSpec> SessionTurns::next_turn(Session& session, const LengthSample& sample) {
  RequestSpec spec;
  spec.num_prompt_tokens =
      session.context_tokens == 0
          ? sample.num_prompt_tokens
          : session.context_tokens + messages_.geometric(options_.mean_new_tokens_per_turn);
  spec.num_output_tokens = sample.num_output_tokens;
  if (session.context_tokens > 0 && options_.max_context_tokens > 0 &&
      spec.num_prompt_tokens + spec.num_output_tokens > options_.max_context_tokens) {
    session.turns_left = 0;  // the conversation outgrew the model's context
    return std::nullopt;
  }
  spec.prefix.block_tokens = options_.block_tokens;
  spec.prefix.stream = session.stream;
  session.context_tokens = spec.num_prompt_tokens + spec.num_output_tokens;
  --session.turns_left;
  return spec;
}

}  // namespace llmcap::sim
