#include "serve/step_executor.h"

namespace llmcap::serve {

void PredictedStepExecutor::execute(const ServeStep& step) {
  if (inner_ != nullptr) inner_->execute(step);
  clock_.advance(sim::SimTime::Seconds(predictor_.step_time_s(step.shape)));
}

}  // namespace llmcap::serve
