// The validation engine (`llmcap validate`): time real decode steps of the reference decoder
// and compare each with the calibrated predictor.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "model/calibration.h"
#include "model/formats.h"

namespace llmcap::app {

struct ValidationOptions {
  /// Hugging Face config.json files of Llama-architecture models (llama, mistral, qwen2) or of
  /// mixture-of-experts models whose layers are all alike (app::decoder_shape; olmoe-1b-7b).
  std::vector<std::filesystem::path> models;
  std::vector<model::WeightFormat> formats = {
      model::WeightFormat::kBf16, model::WeightFormat::kInt8, model::WeightFormat::kInt4};
  std::vector<int64_t> batches = {1, 4, 16, 32};
  std::vector<int64_t> contexts = {128, 1024, 4096};  ///< KV tokens before the step
  int runs = 5;  ///< timed steps per point (median and fastest kept), after one warm-up
  /// Re-time the model's kernels in every round, between the decoder steps (kernels::
  /// ShapeTimer), and predict each point a third time from the profile with those samples
  /// (ValidationPoint::predicted_retimed_s).
  bool retime = true;
  /// Untimed steps of the same point right before each timed one, so that a timed step finds
  /// the caches and TLBs as a serving engine's next step of the same batch does, not as the
  /// previous point (another batch and context) and the re-timed kernels left them.
  int steady_steps = 1;
  uint64_t seed = 1;  ///< weights and KV values (timing does not depend on them)
  std::function<void(const std::string&)> progress;  ///< one line per point; may be empty
};

/// One grid point: a decode step of `batch` sequences, each with `context_tokens` tokens of KV.
struct ValidationPoint {
  std::string model;
  std::string format;
  int64_t batch = 0;
  int64_t context_tokens = 0;
  double measured_s = 0;   ///< median wall time of one ReferenceDecoder::step over the runs
  double predicted_s = 0;  ///< CalibratedPredictor with the rates fitted to the samples' medians
  /// The uncontended comparison (model::FitStatistic::kMin): the fastest of the runs, and the
  /// predictor with the rates fitted to the samples' minimum times.
  double measured_min_s = 0;
  double predicted_min_s = 0;
  /// The median comparison's predictor without the profile's measured shapes (model::
  /// CalibratedEfficiency::linear_shapes and attention_shapes cleared): the rates fitted over
  /// all shapes alone.
  double predicted_fit_only_s = 0;
  /// The median comparison's predictor from the profile with the model's samples re-timed
  /// alongside the steps (ValidationOptions::retime): its matrix products at the grid's
  /// batches, its attention layout at each context + 1 (KV tokens of the step), and the read
  /// bandwidth of the probes. What is left of the error
  /// is the predictor's composition of kernel times into a step, not drift of the machine
  /// between the calibration and the steps. 0 when not re-timed.
  double predicted_retimed_s = 0;
  /// The re-timed comparison paired by round: per round r, the predictor from the kernels
  /// re-timed at the start of round r (and that round's read-bandwidth probe) against the step
  /// timed in round r, seconds apart; the median over the rounds of predicted / measured - 1.
  /// A shared host's bandwidth can move by half within a minute (docs/model.md); pairing by
  /// round compares a step with kernels timed in the same state of the host. 0 when not
  /// re-timed.
  double retimed_paired_error = 0;
  /// The steps' own spread over the runs: the median of |step / measured_s - 1| (relative
  /// median absolute deviation). The machine's noise at this point; an error of this size
  /// cannot be told from it.
  double measured_spread = 0;
  /// Per operator (kernels::StepSections names): median measured seconds over the runs and
  /// the predictor's seconds (layer graph operators x layers; "lm_head" once per step).
  std::vector<std::string> section_names;
  std::vector<double> section_measured_s;
  std::vector<double> section_predicted_s;
  std::vector<double> section_retimed_s;  ///< the re-timed predictor's (empty when not re-timed)
  /// A mixture of experts: the distinct routed experts per layer of the timed steps (mean over
  /// the layers and runs), and the predictor's expectation under uniform top-k routing,
  /// E (1 - (1 - k/E)^batch). 0 for a dense model.
  double experts_hit = 0;
  double experts_expected = 0;
  double error() const { return predicted_s / measured_s - 1.0; }  ///< signed fraction
  double min_error() const { return predicted_min_s / measured_min_s - 1.0; }
  double retimed_error() const { return predicted_retimed_s / measured_s - 1.0; }
};

struct ValidationResult {
  std::vector<ValidationPoint> points;
  double median_abs_error = 0;      ///< nearest-rank median of |error|
  double p95_abs_error = 0;         ///< nearest-rank p95 of |error|
  double min_median_abs_error = 0;  ///< the same over min_error() (uncontended comparison)
  double min_p95_abs_error = 0;
  double fit_only_median_abs_error = 0;  ///< of predicted_fit_only_s / measured_s - 1
  double fit_only_p95_abs_error = 0;
  bool retimed = false;                 ///< ValidationOptions::retime was set
  double retimed_median_abs_error = 0;  ///< of retimed_error()
  double retimed_p95_abs_error = 0;
  double retimed_paired_median_abs_error = 0;  ///< of retimed_paired_error
  double retimed_paired_p95_abs_error = 0;
  /// Median and nearest-rank p95 of the points' measured_spread: the noise floor the errors
  /// above are to be read against.
  double spread_median = 0;
  double spread_p95 = 0;
  int threads = 0;                      ///< threads of the decoder (the profile's fitted count)
  std::string profile;                  ///< where the rates came from
  double profile_read_bytes_per_s = 0;  ///< the profile's read bandwidth at `threads`
  /// Median of the read-bandwidth probes taken between the runs (one per round per model and
  /// format), bytes/s.
  double validation_read_bytes_per_s = 0;
};

/// Runs the grid on this machine with profile.fit.threads threads and predicts each point with
/// the profile's calibrated rates (step overhead 0: the reference decoder has no engine
/// scheduling), twice: the median step time against rates fitted to the kernel samples'
/// medians, and the fastest run against rates fitted to their minimum times (the profile's own
/// fit serves for its statistic; the other is refitted from its samples with the same
/// settings, model::refit_calibration). Per model and format, every point is warmed up once,
/// then the rounds run all points in turn (so that drift hits them alike), each round after a
/// read-bandwidth probe (kernels::ReadProbe, 256 MiB) and, with options.retime, after one
/// round of the model's kernels (kernels::ShapeTimer; rotated as a quick sweep, or in cache
/// for a profile of the test sweep). Throws model::InputError for a model that is not
/// Llama-architecture, a weight format without a kernel (fp8), or a profile without a matmul
/// fit for a requested format.
ValidationResult run_validation(const ValidationOptions& options,
                                const model::CalibrationProfile& profile,
                                const std::string& profile_source);

/// `{"points": [{"model", "format", "batch", "context_tokens", "measured_s", "predicted_s",
/// "error", "measured_min_s", "predicted_min_s", "min_error", "predicted_fit_only_s",
/// "predicted_retimed_s", "retimed_error", "retimed_paired_error", "measured_spread",
/// "experts_hit", "experts_expected" (mixture of experts only), "sections":
/// {"<name>": {"measured_s", "predicted_s", "retimed_s"}}}], "median_abs_error", "p95_abs_error",
/// "min_statistic":
/// {"median_abs_error", "p95_abs_error"}, "fit_only": {"median_abs_error", "p95_abs_error"},
/// "retimed": {"median_abs_error", "p95_abs_error", "paired_median_abs_error",
/// "paired_p95_abs_error"}, "read_bandwidth_bytes_per_s":
/// {"profile", "during_validation"}, "threads", "profile"}`; the re-timed keys only when
/// re-timed.
std::string validation_to_json(const ValidationResult& result);

}  // namespace llmcap::app
