// Carrying out a step of the serving loop: the interface, and the executor that charges a
// predictor's step time to a virtual clock (the reference decoder's executor is in
// serve/decoder_step_executor.h).
#pragma once

#include "model/step_time.h"
#include "serve/clock.h"
#include "serve/step.h"

namespace llmcap::serve {

/// Carries out a step. The real one runs the reference decoder; tests use stand-ins.
class StepExecutor {
 public:
  virtual ~StepExecutor() = default;
  /// Runs `step` to completion (its output tokens exist when it returns).
  virtual void execute(const ServeStep& step) = 0;
};

/// Executes a step by advancing a virtual clock by SimTime::Seconds(predictor.step_time_s(
/// shape)) (what the simulator charges), after running `inner` (if given) for real: the loop
/// then makes exactly the simulator's decisions, which tests compare. The clock, predictor and
/// inner executor are not owned and must outlive this object.
class PredictedStepExecutor final : public StepExecutor {
 public:
  PredictedStepExecutor(VirtualServeClock& clock, const model::StepTimePredictor& predictor,
                        StepExecutor* inner = nullptr)
      : clock_(clock), predictor_(predictor), inner_(inner) {}
  void execute(const ServeStep& step) override;

 private:
  VirtualServeClock& clock_;
  const model::StepTimePredictor& predictor_;
  StepExecutor* inner_;
};

}  // namespace llmcap::serve
