// Multi-turn sessions (conversations): each turn's prompt is the previous turn's prompt, its
// output and a new user message, so every turn of a session shares the session's prefix
// identity (sim/prefix_keys.h: a stream of its own, no hashes) and a prefix cache can find the
// previous turn's blocks. Used by generate_arrivals (open loop) and the closed loop.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "sim/random.h"

namespace llmcap::sim {

struct LengthSample;
struct RequestSpec;

/// How the number of turns of a session is drawn.
///  - kGeometric: geometric on {1, 2, ...} with mean mean_turns (the memoryless choice: after
///    each turn the user continues with probability 1 - 1/mean_turns).
///  - kFixed: exactly mean_turns turns (an integer).
enum class TurnCountKind { kGeometric, kFixed };

/// Defaults from LMSYS-Chat-1M (Zheng et al., "LMSYS-Chat-1M: A Large-Scale Real-World LLM
/// Conversation Dataset", ICLR 2024, Table 1: one million conversations of 210K users with 25
/// LLMs, April-August 2023): 2.0 turns per conversation on average, 69.5 tokens per user
/// prompt and 214.5 tokens per response. The response lengths come from the
/// workload's length file instead; the think time has no default (no published measurement of
/// the time between a chatbot's answer and the user's next message was found).
inline constexpr double kLmsysMeanTurns = 2.0;
inline constexpr double kLmsysMeanPromptTokens = 69.5;
/// vLLM's default KV block size (tokens): the keyed block of a session's prefix identity.
inline constexpr int32_t kDefaultSessionBlockTokens = 16;

/// Parameters of multi-turn sessions.
struct SessionOptions {
  TurnCountKind turn_count = TurnCountKind::kGeometric;
  /// Mean turns per session, >= 1 (kFixed: an integer). Default: LMSYS-Chat-1M's 2.0.
  double mean_turns = kLmsysMeanTurns;
  /// Mean think time between two turns, seconds, >= 0, exponentially distributed. Open loop:
  /// from the previous turn's arrival (the open loop does not wait for the answer). Closed
  /// loop: from the previous turn's last token.
  double think_time_s = 0;
  /// Mean tokens of the new user message each later turn adds to the prompt, >= 1, geometric
  /// on {1, 2, ...}. Default: LMSYS-Chat-1M's 69.5 tokens per user prompt.
  double mean_new_tokens_per_turn = kLmsysMeanPromptTokens;
  /// Tokens per keyed block of the turns' prefix identity, > 0 (mapped onto the engine's
  /// block size by the prefix cache). Default: vLLM's 16.
  int32_t block_tokens = kDefaultSessionBlockTokens;
  /// The model's context length, tokens, >= 0 (0: no limit): a later turn whose prompt plus
  /// output would exceed it ends its conversation instead (SessionTurns::next_turn), as a chat
  /// front end asks its user to start a new chat. Set by the planner from the model, not a
  /// scenario field.
  int64_t max_context_tokens = 0;
};

/// Checks the options; throws InputError("<context><field>: expected ..., got <value>").
void check_session_options(const SessionOptions& options, const std::string& context);

/// One session in progress (of an open-loop generator or of a closed-loop user).
struct Session {
  uint64_t stream = 0;         ///< its PrefixIdentity::stream
  int64_t turns_left = 0;      ///< turns still to send; 0: done (a new session starts)
  int64_t context_tokens = 0;  ///< prompt + output of its previous turn; 0 before the first
  bool done() const { return turns_left == 0; }
};

/// Draws sessions and their turns. Deterministic for a seed: turn counts from stream
/// kSessionTurns, new-message lengths from kSessionMessages; session n (0-based, in the
/// order start() is called) gets the stream id prefix_chain(splitmix64(seed ^ salt), n + 1),
/// so sessions of different seeds (e.g. client classes' substreams) never share a stream.
class SessionTurns {
 public:
  /// `options` must have passed check_session_options and outlive this object.
  SessionTurns(const SessionOptions& options, uint64_t seed);

  /// Starts a new session in `session`: a new stream and a number of turns.
  void start(Session& session);
  /// The next turn of `session` (not done; arrival left 0): the first turn has the sample's
  /// prompt and output; a later one the prompt context_tokens + a new message and the
  /// sample's output. Its prefix identity: {block_tokens, stream}, no hashes.
  /// A later turn whose prompt plus output would exceed options().max_context_tokens (> 0) is
  /// not made: the conversation ends there (the session is done) and nullopt is returned. A
  /// first turn is always made (the planner fits the length samples to the context).
  std::optional<RequestSpec> next_turn(Session& session, const LengthSample& sample);

  const SessionOptions& options() const { return options_; }

 private:
  const SessionOptions& options_;
  RandomStream turns_;
  RandomStream messages_;
  uint64_t stream_salt_;
  uint64_t num_started_ = 0;
};

}  // namespace llmcap::sim
