// The one door between the performance model and the simulator: how long one engine step takes.
#pragma once

#include <cstdint>

namespace llmcap::model {

/// What one engine step (one forward pass of the model over a batch) processes.
/// All counts are for one model replica. A decode sequence contributes one new token that
/// attends to its whole context; a prefill chunk contributes `chunk` new tokens that attend to
/// the prior context plus (causally) to each other. With speculative decoding a decode sequence
/// also verifies k draft tokens after its new one (k + 1 queries, one logit row each).
struct BatchShape {
  int64_t num_prefill_seqs = 0;    ///< sequences with a prefill chunk in this step
  int64_t num_prefill_tokens = 0;  ///< new prompt tokens over all prefill chunks
  /// Sum over prefill chunks of query-key pairs: for a chunk of c tokens after p cached
  /// tokens, c*p + c*(c+1)/2.
  int64_t num_prefill_attention_pairs = 0;
  /// Sum over prefill chunks of the tokens already in the KV cache before the chunk (p).
  int64_t num_prefill_cached_tokens = 0;
  /// Sequences whose prefill finishes in this step (each emits its first output token and so
  /// needs the LM head once).
  int64_t num_prefill_seqs_completing = 0;
  int64_t num_decode_seqs = 0;  ///< sequences generating one token in this step
  /// Sum over decode sequences of their context length including the new token (KV entries
  /// read by attention).
  int64_t num_decode_context_tokens = 0;
  /// Speculative decoding: draft tokens verified after the decode sequences' new tokens, over
  /// all of them (k per sequence). Each is a new token: weights, KV written, a logit row.
  int64_t num_decode_draft_tokens = 0;
  /// Query-key pairs of those draft tokens: for a sequence of context c (its new token
  /// included) verifying k drafts, k c + k (k + 1) / 2.
  int64_t num_decode_draft_attention_pairs = 0;

  int64_t num_new_tokens() const {
    return num_prefill_tokens + num_decode_seqs + num_decode_draft_tokens;
  }
  bool empty() const { return num_new_tokens() == 0; }
};

/// Which model prices the steps: what a reader of a plan (its uncertainty analysis, say) needs
/// to know of a predictor without parsing its display text.
enum class PredictorKind {
  kRoofline,    ///< the datasheet roofline (model/roofline.h)
  kCalibrated,  ///< measured rates of a calibration profile (model/calibrated_predictor.h)
  kOther,       ///< anything else (test doubles, fixed-time predictors)
};

/// Predicts the wall time of one engine step on one replica.
/// Implementations must be deterministic, thread-compatible (const calls from several
/// threads are safe) and cheap (called once per simulated step).
class StepTimePredictor {
 public:
  virtual ~StepTimePredictor() = default;
  /// Seconds for one step over `batch`; > 0 for a non-empty batch.
  virtual double step_time_s(const BatchShape& batch) const = 0;
  /// Which model this is; a wrapper (a scaled predictor) reports the kind it wraps.
  virtual PredictorKind kind() const { return PredictorKind::kOther; }
};

}  // namespace llmcap::model
