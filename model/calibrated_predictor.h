// The calibrated step-time predictor: the operator graph of the roofline priced with the
// measured rates of a calibration profile (docs/model.md, "Calibration"), and the factory that
// picks the predictor an efficiency asks for.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/deployment.h"
#include "model/efficiency.h"
#include "model/formats.h"
#include "model/model_spec.h"
#include "model/roofline.h"
#include "model/step_time.h"

namespace llmcap::model {

/// Step time from calibrated rates (CalibratedEfficiency, from calibrated_efficiency() or
/// transfer_efficiency() in model/calibration.h): operators whose weight format (linear nodes,
/// LM head) or KV format (attention) the profile measured cost their measured time, with the
/// datasheet compute time at the full peak as a floor; the others keep the roofline (the
/// formulas are stated at RooflinePredictor, model/roofline.h). It composes the roofline's
/// precomputed operator costs, so its times are exactly those of the roofline with the same
/// efficiency. Deterministic, safe for concurrent const calls, allocation-free per step.
class CalibratedPredictor final : public StepTimePredictor {
 public:
  /// Throws InputError when `efficiency.calibrated` is unset, and as RooflinePredictor for a
  /// deployment without a positive memory bandwidth, a usable peak FLOP/s or (tp > 1) a link.
  CalibratedPredictor(const ModelSpec& model, WeightFormat weight_format, KvFormat kv_format,
                      const Deployment& deployment, const Efficiency& efficiency);
  double step_time_s(const BatchShape& batch) const override;
  std::unique_ptr<DecodeRunPricer> decode_run_pricer() const override {
    return priced_.decode_run_pricer();
  }
  PredictorKind kind() const override { return PredictorKind::kCalibrated; }
  /// Per-operator times of one layer, in graph order, plus a final "lm_head" entry.
  std::vector<OpTime> breakdown(const BatchShape& batch) const;
  /// One line: which profile, measured or transferred (CalibratedEfficiency::source).
  const std::string& source() const { return source_; }

 private:
  RooflinePredictor priced_;
  std::string source_;
};

/// The predictor `efficiency` asks for: a CalibratedPredictor when efficiency.calibrated is
/// set, else a RooflinePredictor (the datasheet roofline). Throws as their constructors do.
std::shared_ptr<const StepTimePredictor> make_step_time_predictor(const ModelSpec& model,
                                                                  WeightFormat weight_format,
                                                                  KvFormat kv_format,
                                                                  const Deployment& deployment,
                                                                  const Efficiency& efficiency);

}  // namespace llmcap::model
