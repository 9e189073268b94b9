// An engine profile fitted to the user's own benchmark results (`llmcap calibrate
// --from-benchmark FILE...`, docs/calibrate-from-benchmark.md): the runs of the files are
// replayed by the simulator on llmcap's model of the machine they ran on, and the engine's
// figures (the fixed cost of each kernel a step runs, the fraction of the memory bandwidth its
// kernels reach, the fraction of its instruction path's peak on prefill-sized and on
// decode-sized products, the serving front end's latency) are fitted so that the replayed TTFT,
// TPOT and throughput match the measured ones.
//
// The fit is a projected Gauss-Newton iteration: each step linearises the simulated figures in
// the parameters (the two times and the inverse fractions, in which a roofline step time is
// piecewise linear; the front-end latency adds to TTFT) by finite differences and solves the
// non-negative least-squares problem of the relative errors (Eigen; every subset of the
// parameters, which is exact for so few). The profile is fitted on every run; the error on
// unseen runs is measured by leaving each run out in turn and predicting it from a fit on the
// others (independent of the files' order).
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/benchmark_files.h"
#include "model/engine_profile.h"
#include "model/hardware.h"

namespace llmcap::app {

/// What the result files were measured on, in the catalog's terms (the files do not say).
struct BenchmarkSetup {
  std::string engine;       ///< engine id of the catalog: the profile the fit starts from
  std::string hardware;     ///< catalog hardware id (data/hardware/*.json)
  int device_count = 1;     ///< GPUs the benchmark used (GPU hardware); CPU: 1
  int tensor_parallel = 0;  ///< GPUs per replica (0: device_count)
  /// CPU: physical cores used (0: each point's thread count when its file gives one, else the
  /// whole socket).
  int cores_used = 0;
  std::filesystem::path model_file;  ///< model config JSON (model/model_spec.h)
  std::string weight_format = "bf16";
  std::string kv_format = "bf16";
};

/// One fitted parameter of the profile.
struct FittedParameter {
  /// "kernel_overhead_s" | "memory_bandwidth_fraction" | "compute_fraction" |
  /// "decode_compute_fraction" | "frontend_latency_s"
  std::string name;
  double start = 0;  ///< the engine profile's value (decode: its compute_fraction when absent)
  double value = 0;  ///< fitted (start when not determined)
  /// false: no fitted point's prediction depends on it (e.g. decode compute when every decode
  /// step is bandwidth-bound); it keeps the engine profile's value.
  bool determined = false;
};

/// One measured figure and its prediction by the fitted profile.
struct FittedPoint {
  std::filesystem::path file;
  BenchmarkPoint point;
  int run = 0;           ///< run index (0-based, in file order)
  double predicted = 0;  ///< by the fitted profile, in the point's unit
  double error = 0;      ///< predicted / measured - 1
  /// By the profile fitted on the other runs (its run left out), and its error.
  double left_out_predicted = 0;
  double left_out_error = 0;
};

/// The fit.
struct BenchmarkFit {
  model::EngineProfile profile;  ///< the engine's profile with the fitted figures, for `hardware`
  std::vector<FittedParameter> parameters;
  std::vector<FittedPoint> points;  ///< the points fitted and left out (one statistic per metric)
  int64_t runs = 0;
  int64_t left_out_runs = 0;  ///< runs left out in turn (all of them)
  int iterations = 0;
  double fit_median_abs_error = 0;  ///< nearest-rank median of |error| over fitted points
  double fit_max_abs_error = 0;
  /// Over every point, each predicted by the fit on the runs other than its own.
  double left_out_median_abs_error = 0;
  double left_out_max_abs_error = 0;
  std::string tools;  ///< the tools of the files, comma-separated
  /// The model the files name ("" when none does): for the user to compare with --model (the
  /// fit cannot: a checkpoint's name need not be the config's).
  std::string files_model;
};

/// Fewest distinct runs (loads or lengths) a fit takes: each is left out in turn, so three are
/// fitted and one checks them.
inline constexpr int64_t kMinBenchmarkRuns = 4;

/// Fits `setup.engine`'s profile to the points of `files`. Per run and metric the fit takes one
/// statistic (the mean, else the median, else the first given). Throws base::InputError
/// (nothing is fitted) for: no files; files naming different models or machines (naming both
/// files and values); an engine id the catalog lacks (listing the known ones) or for the other
/// device kind; a hardware id the catalog lacks; an unreadable model file or unknown format;
/// fewer than kMinBenchmarkRuns runs (saying how many it has and needs); and a fit that puts
/// the memory bandwidth above the datasheet peak or the compute above the instruction path's
/// peak (naming the parameter, the file set and by how much). Throws model::InfeasibleError
/// when the model does not fit the hardware.
BenchmarkFit fit_benchmarks(const std::vector<BenchmarkFile>& files, const BenchmarkSetup& setup,
                            const model::Catalog& catalog, uint64_t seed = 1);

/// The "fit" object stored in the fitted profile: {"summary", "tools", "files", "model",
/// "hardware", "runs", "left_out_runs", "fit_median_abs_error", "fit_max_abs_error",
/// "left_out_median_abs_error", "left_out_max_abs_error", "parameters": [{"name", "start",
/// "value", "determined"}], "points": [{"file", "where", "metric", "statistic", "measured",
/// "predicted", "error", "left_out_predicted", "left_out_error"}]}.
nlohmann::ordered_json fit_json(const BenchmarkFit& fit, const BenchmarkSetup& setup);

}  // namespace llmcap::app
