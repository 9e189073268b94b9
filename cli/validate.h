// `llmcap validate`: time real decode steps of the reference decoder and compare each with the
// calibrated predictor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "model/calibration.h"
#include "model/formats.h"

namespace llmcap::cli {

struct ValidationOptions {
  /// Hugging Face config.json files of Llama-architecture models (llama, mistral, qwen2).
  std::vector<std::filesystem::path> models;
  std::vector<model::WeightFormat> formats = {model::WeightFormat::kBf16,
                                              model::WeightFormat::kInt8,
                                              model::WeightFormat::kInt4};
  std::vector<int64_t> batches = {1, 4, 16, 32};
  std::vector<int64_t> contexts = {128, 1024, 4096};  ///< KV tokens before the step
  int runs = 3;            ///< timed steps per point (the median is kept), after one warm-up
  uint64_t seed = 1;       ///< weights and KV values (timing does not depend on them)
  std::function<void(const std::string&)> progress;  ///< one line per point; may be empty
};

/// One grid point: a decode step of `batch` sequences, each with `context_tokens` tokens of KV.
struct ValidationPoint {
  std::string model;
  std::string format;
  int64_t batch = 0;
  int64_t context_tokens = 0;
  double measured_s = 0;   ///< median wall time of one ReferenceDecoder::step
  double predicted_s = 0;  ///< RooflinePredictor with the profile's calibrated rates
  /// The same predictor with the profile's memory-bound work rescaled to the read bandwidth
  /// measured during this (model, format)'s runs (model::drift_corrected_efficiency).
  double predicted_drift_corrected_s = 0;
  /// Per operator (kernels::StepSections names): median measured seconds over the runs and
  /// the predictor's seconds (layer graph operators x layers; "lm_head" once per step).
  std::vector<std::string> section_names;
  std::vector<double> section_measured_s;
  std::vector<double> section_predicted_s;
  double error() const { return predicted_s / measured_s - 1.0; }  ///< signed fraction
  double drift_corrected_error() const { return predicted_drift_corrected_s / measured_s - 1.0; }
};

struct ValidationResult {
  std::vector<ValidationPoint> points;
  double median_abs_error = 0;  ///< nearest-rank median of |error|
  double p95_abs_error = 0;     ///< nearest-rank p95 of |error|
  double drift_corrected_median_abs_error = 0;
  double drift_corrected_p95_abs_error = 0;
  int threads = 0;              ///< threads of the decoder (the profile's fitted count)
  std::string profile;          ///< where the rates came from
  double profile_read_bytes_per_s = 0;  ///< the profile's read bandwidth at `threads`
  /// Median of the read-bandwidth probes taken between the runs (one per round per model and
  /// format), bytes/s.
  double validation_read_bytes_per_s = 0;
};

/// Runs the grid on this machine with profile.fit.threads threads and predicts each point with
/// the profile's calibrated rates (step overhead 0: the reference decoder has no engine
/// scheduling). Per model and format, every point is warmed up once, then the rounds run all
/// points in turn (so that drift hits them alike), each round after a read-bandwidth probe
/// (kernels::ReadProbe, 256 MiB). Throws model::InputError for a model that is not Llama-architecture, a weight
/// format without a kernel (fp8), or a profile without a matmul fit for a requested format.
ValidationResult run_validation(const ValidationOptions& options,
                                const model::CalibrationProfile& profile,
                                const std::string& profile_source);

/// `{"points": [{"model", "format", "batch", "context_tokens", "measured_s", "predicted_s",
/// "error", "predicted_drift_corrected_s", "sections": {"<name>": {"measured_s",
/// "predicted_s"}}}], "median_abs_error", "p95_abs_error", "drift_corrected_median_abs_error",
/// "drift_corrected_p95_abs_error", "read_bandwidth_bytes_per_s": {"profile",
/// "during_validation"}, "threads", "profile"}`.
std::string validation_to_json(const ValidationResult& result);

/// The error table, its summary, and the error by operator (median over the points of
/// predicted / measured - 1, and each operator's median share of the measured step).
void print_validation(const ValidationResult& result, std::ostream& out);

}  // namespace llmcap::cli
