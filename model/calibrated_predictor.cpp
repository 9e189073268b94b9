#include "model/calibrated_predictor.h"

#include "model/input_error.h"

namespace llmcap::model {
namespace {

/// `efficiency`, checked to carry calibrated rates.
const Efficiency& calibrated_or_throw(const Efficiency& efficiency) {
  if (!efficiency.calibrated) {
    throw InputError(
        "calibrated predictor: expected an efficiency with calibrated rates (from "
        "calibrated_efficiency or transfer_efficiency), got the datasheet defaults");
  }
  return efficiency;
}

}  // namespace

CalibratedPredictor::CalibratedPredictor(const ModelSpec& model, WeightFormat weight_format,
                                         KvFormat kv_format, const Deployment& deployment,
                                         const Efficiency& efficiency)
    : priced_(model, weight_format, kv_format, deployment, calibrated_or_throw(efficiency)),
      source_(efficiency.calibrated->source) {}

double CalibratedPredictor::step_time_s(const BatchShape& batch) const {
  return priced_.step_time_s(batch);
}

std::vector<OpTime> CalibratedPredictor::breakdown(const BatchShape& batch) const {
  return priced_.breakdown(batch);
}

std::shared_ptr<const StepTimePredictor> make_step_time_predictor(const ModelSpec& model,
                                                                  WeightFormat weight_format,
                                                                  KvFormat kv_format,
                                                                  const Deployment& deployment,
                                                                  const Efficiency& efficiency) {
  if (efficiency.calibrated) {
    return std::make_shared<CalibratedPredictor>(model, weight_format, kv_format, deployment,
                                                 efficiency);
  }
  return std::make_shared<RooflinePredictor>(model, weight_format, kv_format, deployment,
                                             efficiency);
}

}  // namespace llmcap::model
