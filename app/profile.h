// Calibration profiles from kernel sweeps (shared by the calibrate and validate commands).
#pragma once

#include <string>

#include "kernels/calibrate.h"
#include "model/calibration.h"

namespace llmcap::app {

/// Current UTC time as ISO 8601 ("2026-11-29T22:16:00Z"), for profile metadata only.
std::string utc_now();

/// One kernel sample as the profile stores it.
model::KernelSample to_model_sample(const kernels::KernelSample& k);

/// The profile of a calibration run: machine, samples and their fit (of `statistic`). `tool` is
/// the command line that produced it.
model::CalibrationProfile to_profile(const kernels::CalibrationRun& run, const std::string& tool,
                                     model::FitStatistic statistic = model::FitStatistic::kMedian);

}  // namespace llmcap::app
