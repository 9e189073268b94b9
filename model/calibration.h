// Calibration profiles: measured kernel timings of one machine, the fitted rates, and the
// efficiency they give the roofline predictor (docs/model.md, "Calibration").
// Plain data: model/ does not depend on kernels/ (the kernels library measures, this one fits,
// reads and writes the JSON form, and applies; store/profile_store.h keeps profiles in SQLite).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "model/hardware.h"
#include "model/roofline.h"

namespace llmcap::model {

/// Version of the JSON layout below and of the profile database's tables (store/profile_store.h).
/// A reader rejects any other version.
inline constexpr int kCalibrationSchemaVersion = 1;

/// The machine a profile was measured on.
struct CalibrationMachine {
  std::string cpu_model;  ///< "model name" of /proc/cpuinfo
  std::string isa;        ///< CPU feature flags, space-separated ("avx2 fma ... avx512_bf16")
  int num_cores = 0;      ///< logical CPUs the measuring process could use
  int64_t l1d_bytes = 0, l2_bytes = 0, l3_bytes = 0;  ///< 0: unknown
  /// Measured streaming bandwidth by thread count (bytes / s).
  std::map<int, double> read_bandwidth_bytes_per_s;
  std::map<int, double> copy_bandwidth_bytes_per_s;
};

/// One timed kernel shape.
/// matmul: rows x cols weights, `batch` activation rows; attention: rows = KV heads x head_dim,
/// cols = context tokens, batch = query heads; bytes are the bytes the kernel must move
/// (packed weights + activations; K and V read), flops 2 per multiply-add.
struct KernelSample {
  /// "matmul", "attention", "attention_spread" (decode attention spread over the threads, one
  /// single-threaded call per thread at once: time per call; the attention shape fields),
  /// "rms_norm", "swiglu"
  std::string op;
  std::string format;   ///< weight format ("f32", "bf16", "int8", "int4") or KV type
  std::string backend;  ///< "llmcap" (our kernels)
  int64_t rows = 0, cols = 0, batch = 0;
  int threads = 0;
  double min_s = 0, median_s = 0;
  double bytes = 0, flops = 0;
  double bytes_per_s = 0, flops_per_s = 0;  ///< bytes / median_s, flops / median_s
  bool cache_resident = false;              ///< measured on data that fits the caches (not fitted)
};

/// median_s ~= overhead_s + bytes / bytes_per_s + flops / flops_per_s, fitted for one weight
/// format (matmul) or KV type (attention: overhead_s per call, i.e. per sequence; bytes_per_s
/// the rate of the K/V stream; flops_per_s that of the QK^T and PV products, which grow with the
/// query heads sharing a KV head, so GQA layouts of different group sizes are told apart). A
/// rate of 0 means the term was dropped (its coefficient would have been negative). Errors are
/// |predicted - measured| / measured over the fitted samples.
/// Matmul samples of one batch size fitted to median_s = overhead_s + bytes / bytes_per_s.
struct BatchRateFit {
  int64_t batch = 0;
  double overhead_s = 0;
  double bytes_per_s = 0;
  int num_samples = 0;
};

struct RateFit {
  double overhead_s = 0;
  double bytes_per_s = 0;
  double flops_per_s = 0;
  int num_samples = 0;
  double median_rel_error = 0;  ///< of the three-term fit above
  double p95_rel_error = 0;
  /// Matmul only: one fit per measured batch size (>= 2 samples), ascending; empty for
  /// attention and for profiles written before these existed. The predictor uses them within
  /// the measured batches (CalibratedRates::by_batch).
  std::vector<BatchRateFit> by_batch;
  double by_batch_median_rel_error = 0;  ///< of the per-batch fits over the same samples
  double by_batch_p95_rel_error = 0;
};

/// Which time of a kernel sample a fit explains.
/// kMedian: the median over the sample's timed repetitions (the default; what a machine gives
/// with whatever else runs on it during the calibration).
/// kMin: the minimum, i.e. the uncontended time. On a shared host, neighbours' memory traffic
/// and descheduling inflate the median by tens of percent from minute to minute (seen on the
/// 2-vCPU development VM: read bandwidth 26-51 GB/s within an hour); the minimum over
/// repetitions spread in time is the nearest estimate of the machine alone, which is what a
/// dedicated (rented whole) instance gives. `llmcap validate` compares both ways.
enum class FitStatistic { kMedian, kMin };
/// "median" or "min".
const char* to_string(FitStatistic statistic);

struct CalibrationFit {
  int threads = 0;       ///< the thread count whose samples were fitted (the largest measured)
  double min_bytes = 0;  ///< samples with fewer bytes (cache-resident) are not fitted
  FitStatistic statistic = FitStatistic::kMedian;  ///< the sample time fitted
  bool cache_resident_fitted = false;     ///< cache-resident samples were fitted too (test sweeps)
  std::map<std::string, RateFit> matmul;  ///< by weight format
  std::map<std::string, RateFit> attention;  ///< by KV type
  double median_rel_error = 0;               ///< over all fitted samples
  double p95_rel_error = 0;
};

struct CalibrationProfile {
  int schema_version = kCalibrationSchemaVersion;
  std::string created_at;  ///< ISO 8601 UTC
  std::string tool;        ///< e.g. "llmcap 0.1.0 calibrate --quick"
  CalibrationMachine machine;
  std::vector<KernelSample> kernels;
  CalibrationFit fit;
};

/// Least-squares fit of the matmul and attention samples measured with `threads` threads
/// (0: the largest thread count present) having bytes >= min_bytes and not cache_resident.
/// The time fitted is the sample's median_s, or its min_s with FitStatistic::kMin (below, "t").
/// Each sample is weighted by 1 / t (relative error is minimised, shapes span orders of
/// magnitude); coefficients are constrained to be >= 0 by solving every subset of the terms
/// and keeping the best non-negative one (exact NNLS for three unknowns). A format needs at
/// least 2 samples; fewer leaves it out.
/// `include_cache_resident` fits cache-resident samples too (for a sweep that has nothing else,
/// such as the CLI's test sweep; the rates are then those of the caches, not of memory).
/// `read_bandwidth_bytes_per_s` (the profile's machine.read_bandwidth_bytes_per_s: threads ->
/// measured read bandwidth) bounds attention's bytes rate from above by the read bandwidth at
/// the fitted thread count, when that count has a figure: decode attention streams the KV
/// cache, and the samples' bytes and FLOPs are nearly collinear, so an unbounded fit may put
/// the whole cost on FLOPs (seen: bf16 attention "read" at 2,303 GB/s by a quick calibration).
CalibrationFit fit_calibration(const std::vector<KernelSample>& samples, int threads = 0,
                               double min_bytes = 0, bool include_cache_resident = false,
                               FitStatistic statistic = FitStatistic::kMedian,
                               const std::map<int, double>& read_bandwidth_bytes_per_s = {});

/// The profile's samples fitted again with the same thread count, byte floor and
/// cache-resident choice as profile.fit, explaining `statistic` instead.
CalibrationFit refit_calibration(const CalibrationProfile& profile, FitStatistic statistic);

/// JSON text of a profile (keys documented in docs/model.md, "Calibration").
std::string profile_to_json(const CalibrationProfile& profile);
/// Parses a profile; throws InputError naming `source`, the field and the value for malformed
/// JSON, a missing or mistyped field, or another schema version.
CalibrationProfile profile_from_json(const std::string& text, const std::string& source);
/// Reads a JSON profile file (InputError for a missing or bad file).
CalibrationProfile read_profile_json(const std::filesystem::path& path);

/// The fit alone as compact JSON text (one line; the "fit" object of profile_to_json): what the
/// profile database keeps in its fit_json column (store/profile_store.h holds that database).
std::string fit_to_json(const CalibrationFit& fit);
/// Parses fit_to_json's text. Throws InputError: `<text_name>: malformed JSON: <parser message>`
/// for text that is not JSON; for a missing or mistyped field one naming `source`, the field
/// path under "fit" (e.g. "fit.threads") and the value.
CalibrationFit fit_from_json(const std::string& text, const std::string& source,
                             const std::string& text_name);

/// The identity of the machine that wants to use a profile.
struct MachineIdentity {
  std::string cpu_model;
  std::string isa;
};
/// Throws InputError("<source>: profile was measured on <cpu> with <isa>, this machine is <cpu>
/// with <isa>; pass --transfer to use it for another CPU") when cpu_model or isa differ.
void check_profile_machine(const CalibrationProfile& profile, const MachineIdentity& here,
                           const std::string& source);

/// Each measured matrix shape of the profile's fit (matmul samples at the fitted thread count
/// that were fitted: not cache-resident unless those were fitted too, bytes >= min_bytes) as
/// its time (the fit's statistic: median or min) over its format's fitted time at that batch
/// (the per-batch line when the fit has one for the batch, else the three-term line), by
/// shape and ascending batch (samples of one shape and batch averaged).
std::map<MatmulShapeKey, std::vector<ShapeRatio>> measured_shape_ratios(
    const CalibrationProfile& profile);

/// The same for the profile's attention samples of operator `op` ("attention", or
/// "attention_spread": calls spread over the threads, one per thread at once) at the fitted
/// thread count: by KV type, KV heads x head_dim and query heads (the sample's rows and batch),
/// the sample's time over the attention fit's three-term time of one call, ascending by
/// context tokens (the sample's cols).
std::map<AttentionShapeKey, std::vector<ShapeRatio>> measured_attention_ratios(
    const CalibrationProfile& profile, const std::string& op = "attention");

/// The efficiency the roofline predictor gets from a profile, for the measured machine itself
/// (tp 1, the fitted thread count): CPU defaults (default_efficiency(kCpu)) plus the profile's
/// calibrated rates and its measured shapes (measured_shape_ratios, measured_attention_ratios).
/// Throws InputError when the profile has no matmul fit.
Efficiency calibrated_efficiency(const CalibrationProfile& profile);

/// Transfer of a profile to a catalog CPU (docs/model.md, "Calibration", for the rule and its
/// limits). With m = measured read bandwidth at the fitted thread count,
///   bw_ratio = target peak bandwidth x share x default memory_bandwidth_fraction / m,
///   compute_ratio = target cores x share / fitted threads (per-core compute parity: same
///   kernels, same ISA class, similar clock),
/// each fitted seconds-per-byte s is split into a memory part min(s, 1/m), divided by
/// bw_ratio, and a CPU part (the rest: dequantisation, conversion), divided by compute_ratio;
/// flops_per_s is multiplied by compute_ratio; the stream rate by bw_ratio; fixed overheads are
/// kept. `share` is the fraction of the socket the replica gets (1: a whole socket). Throws
/// InputError for a GPU target, share outside (0, 1], or a profile without a matmul fit or
/// measured read bandwidth.
Efficiency transfer_efficiency(const CalibrationProfile& profile, const HardwareSpec& target_cpu,
                               double share = 1.0);

}  // namespace llmcap::model
