// The one door between the performance model and the simulator: how long one engine step takes.
#pragma once

#include <cstdint>
#include <memory>

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

/// Prices a decode run's steps one by one, each exactly (bit for bit) as the predictor that
/// made it prices it alone: the simulator's decode run-ahead (sim/simulator.cpp) asks it for
/// each step it runs, in order, and for no other. Between two start() calls the batches are
/// decode-only and differ only in their decode context (and their drafts' attention pairs),
/// so an implementation may price the rest once per run (the roofline prices the operators
/// that read no KV, and the LM head, at start()). Not thread-safe: one per simulation.
class DecodeRunPricer {
 public:
  virtual ~DecodeRunPricer() = default;
  /// A new run, whose first step is `first` (not yet priced).
  virtual void start(const BatchShape& first) = 0;
  /// Seconds of `batch`, a step of the run started last.
  virtual double step_time_s(const BatchShape& batch) = 0;
};

/// Predicts the wall time of one engine step on one replica.
/// Implementations must be deterministic, thread-compatible (const calls from several
/// threads are safe) and cheap (called once per simulated step).
class StepTimePredictor {
 public:
  virtual ~StepTimePredictor() = default;
  /// Seconds for one step over `batch`; > 0 for a non-empty batch.
  virtual double step_time_s(const BatchShape& batch) const = 0;
  /// A pricer of decode runs' steps (DecodeRunPricer) with this predictor's times, which must
  /// outlive it. The default prices each step with step_time_s.
  virtual std::unique_ptr<DecodeRunPricer> decode_run_pricer() const;
  /// Which model this is; a wrapper (a scaled predictor) reports the kind it wraps.
  virtual PredictorKind kind() const { return PredictorKind::kOther; }
};

/// DecodeRunPricer of a predictor that shares no work between a run's steps: each priced
/// alone (StepTimePredictor's default).
class EachStepPricer final : public DecodeRunPricer {
 public:
  explicit EachStepPricer(const StepTimePredictor& predictor) : predictor_(predictor) {}
  void start(const BatchShape&) override {}
  double step_time_s(const BatchShape& batch) override { return predictor_.step_time_s(batch); }

 private:
  const StepTimePredictor& predictor_;
};

inline std::unique_ptr<DecodeRunPricer> StepTimePredictor::decode_run_pricer() const {
  return std::make_unique<EachStepPricer>(*this);
}

}  // namespace llmcap::model
