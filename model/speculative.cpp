#include "model/speculative.h"

#include <stdexcept>
#include <utility>

namespace llmcap::model {

SpeculativePredictor::SpeculativePredictor(std::shared_ptr<const StepTimePredictor> target,
                                           std::shared_ptr<const StepTimePredictor> draft,
                                           int64_t num_draft_tokens)
    : target_(std::move(target)), draft_(std::move(draft)), num_draft_tokens_(num_draft_tokens) {
  if (target_ == nullptr) throw std::invalid_argument("SpeculativePredictor: null target");
  if (num_draft_tokens_ < 1) {
    throw std::invalid_argument("SpeculativePredictor: num_draft_tokens must be >= 1");
  }
}

double SpeculativePredictor::draft_time_s(const BatchShape& batch) const {
  if (draft_ == nullptr || batch.empty()) return 0.0;
  BatchShape first = batch;
  first.num_decode_draft_tokens = 0;
  first.num_decode_draft_attention_pairs = 0;
  double s = draft_->step_time_s(first);
  if (batch.num_decode_seqs == 0) return s;
  BatchShape later;
  later.num_decode_seqs = batch.num_decode_seqs;
  for (int64_t i = 1; i < num_draft_tokens_; ++i) {
    later.num_decode_context_tokens = batch.num_decode_context_tokens + i * batch.num_decode_seqs;
    s += draft_->step_time_s(later);
  }
  return s;
}

double SpeculativePredictor::step_time_s(const BatchShape& batch) const {
  return target_->step_time_s(batch) + draft_time_s(batch);
}

namespace {

class SpeculativeRunPricer final : public DecodeRunPricer {
 public:
  explicit SpeculativeRunPricer(const SpeculativePredictor& owner,
                                std::unique_ptr<DecodeRunPricer> target)
      : owner_(owner), target_(std::move(target)) {}
  void start(const BatchShape& first) override { target_->start(first); }
  double step_time_s(const BatchShape& batch) override {
    return target_->step_time_s(batch) + owner_.draft_time_s(batch);
  }

 private:
  const SpeculativePredictor& owner_;
  std::unique_ptr<DecodeRunPricer> target_;
};

}  // namespace

std::unique_ptr<DecodeRunPricer> SpeculativePredictor::decode_run_pricer() const {
  return std::make_unique<SpeculativeRunPricer>(*this, target_->decode_run_pricer());
}

ModelSpec draft_head_spec(const ModelSpec& target, int64_t num_layers) {
  if (num_layers < 1) throw std::invalid_argument("draft_head_spec: num_layers must be >= 1");
  ModelSpec head = target;
  head.id = target.id + " draft head";
  head.num_layers = num_layers;
  if (target.description != nullptr && !target.description->layers.empty()) {
    auto d = std::make_shared<ModelDescription>(*target.description);
    d->layers.assign(static_cast<size_t>(num_layers), target.description->layers.back());
    d->id = head.id;
    head.description = std::move(d);
  }
  return head;
}

int64_t draft_head_weight_bytes(const ModelSpec& target, int64_t num_layers, WeightFormat format) {
  const int64_t one = draft_head_spec(target, 1).weight_bytes(format);
  const int64_t two = draft_head_spec(target, 2).weight_bytes(format);
  return num_layers * (two - one);
}

}  // namespace llmcap::model
