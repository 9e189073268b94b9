// Speculative decoding in the performance model: the step time of a target model that verifies
// draft tokens, plus the draft's own passes; and the draft heads (MTP, EAGLE) as models.
#pragma once

#include <cstdint>
#include <memory>

#include "model/model_spec.h"
#include "model/step_time.h"

namespace llmcap::model {

/// A step of speculative decoding with k draft tokens per sequence (Leviathan et al., "Fast
/// Inference from Transformers via Speculative Decoding", ICML 2023; vLLM's and SGLang's
/// spec-decode workers): the draft proposes k tokens per decoding sequence in k passes, one
/// token each, and the target verifies them all in its one step (BatchShape::
/// num_decode_draft_tokens). Time of a step over `batch`:
///   target(batch) + draft(batch without drafts) + (k - 1) x draft(its decodes alone),
/// the first draft pass also taking the step's prefill chunks (a draft model, or an MTP or
/// EAGLE head, keeps its own KV of every prompt), each later one the decodes with their
/// contexts grown by the drafts so far. A step with neither decodes nor drafts runs the draft
/// once over its prefill. Without a draft predictor (n-gram / prompt-lookup drafting, which
/// runs on the host between steps) the draft costs nothing.
class SpeculativePredictor final : public StepTimePredictor {
 public:
  /// `target` prices the verification, `draft` (may be null) one draft pass; k >= 1.
  /// Throws std::invalid_argument for a null target or k < 1.
  SpeculativePredictor(std::shared_ptr<const StepTimePredictor> target,
                       std::shared_ptr<const StepTimePredictor> draft, int64_t num_draft_tokens);
  double step_time_s(const BatchShape& batch) const override;
  /// The target's pricer, plus each step's draft passes.
  std::unique_ptr<DecodeRunPricer> decode_run_pricer() const override;
  /// The target's kind: the draft adds passes priced by the same kind of model.
  PredictorKind kind() const override { return target_->kind(); }
  /// Seconds of the draft's passes in a step over `batch` (0 without a draft predictor).
  double draft_time_s(const BatchShape& batch) const;

 private:
  std::shared_ptr<const StepTimePredictor> target_;
  std::shared_ptr<const StepTimePredictor> draft_;
  int64_t num_draft_tokens_;
};

/// A draft head of `num_layers` decoder layers on `target`'s embedding and LM head, as a model
/// the roofline prices: DeepSeek-V3's multi-token-prediction module (one transformer block
/// after a projection of the embedding and hidden state, sharing embedding and output head;
/// DeepSeek-AI 2024, arXiv 2412.19437, sec. 2.2) and EAGLE's draft head (one decoder layer on
/// the target's features and LM head; Li et al., ICML 2024, arXiv 2401.15077). Its layers are
/// copies of the target's last layer; the MTP projection (2 hidden x hidden) is left out.
/// Throws std::invalid_argument for num_layers < 1.
ModelSpec draft_head_spec(const ModelSpec& target, int64_t num_layers);

/// Bytes the head's `num_layers` layers add to the target's weights in `format` (embedding and
/// LM head are shared): num_layers x the bytes of one of its layers.
int64_t draft_head_weight_bytes(const ModelSpec& target, int64_t num_layers, WeightFormat format);

}  // namespace llmcap::model
