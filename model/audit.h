// Claim audit: a published decode latency, throughput or memory-bandwidth figure checked against
// the physics of the hardware (roofline lower bound) and against the predictor (docs/audit.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/calibration.h"
#include "model/formats.h"
#include "model/hardware.h"
#include "model/model_spec.h"

namespace llmcap::model {

/// A claim is "optimistic" when the predicted time exceeds the claimed time by more than this
/// factor (predicted / claimed > kOptimisticTolerance). 1.25 covers the predictor's spread:
/// the calibration fits' kernel error is ~5-8% at the median and 16-21% at p95 (docs/model.md,
/// "Calibration"), the datasheet efficiency factors are the middle of ranges ~+-10% wide, and
/// a real engine may be tuned better than our defaults (docs/audit.md).
inline constexpr double kOptimisticTolerance = 1.25;

/// Relative slack of the "impossible" test: a claim below the lower bound by less than one
/// part in 1e9 (floating-point rounding of the same arithmetic) is at the bound, not below it.
inline constexpr double kBoundRelativeSlack = 1e-9;

/// What a claim states.
enum class ClaimKind {
  kTpot,             ///< decode time per output token of each sequence, seconds
  kThroughput,       ///< output tokens per second summed over the batch
  kMemoryBandwidth,  ///< a memory type and a bandwidth, bytes per second
};
std::string_view to_string(ClaimKind kind);  ///< "tpot" | "throughput" | "memory_bandwidth"

/// One claim, as read from a claims file (docs/audit.md gives the file format). Ids it names
/// (hardware, model) have been checked against the catalogs by read_claims / parse_claims.
struct Claim {
  std::string id;
  ClaimKind kind = ClaimKind::kTpot;
  /// A CPU or GPU id of the hardware catalog, or an instance id; empty only for a memory-
  /// bandwidth claim that names no hardware.
  std::string hardware;
  /// CPU ids only: cores of one socket the claim runs on (a slice); 0: the whole socket.
  int num_cores = 0;
  /// Memory the claim states, bytes; 0: not stated (a GPU's or instance's own memory is used).
  int64_t memory_bytes = 0;
  // Latency and throughput claims:
  /// ModelSpec::id (llmcap_id of data/models/*.json or data/models/families/*.json).
  std::string model;
  /// Any weight format of model/formats.h (q4_k_m, mxfp4, fp8-block, ...); unset: not stated
  /// (kInt4 is assumed).
  std::optional<WeightFormat> weight_format;
  std::optional<KvFormat> kv_format;  ///< unset: not stated (kFp8 is assumed)
  int64_t batch = 1;                  ///< sequences decoding together, >= 1
  int64_t context_tokens = 0;         ///< KV entries per sequence, >= 1
  double tpot_s = 0;                  ///< kTpot: claimed seconds per output token
  double output_tokens_per_s = 0;     ///< kThroughput: claimed tokens/s over the batch
  // Memory-bandwidth claims:
  std::string memory_type;               ///< e.g. "DDR5-5600"
  int64_t memory_transfer_rate_mts = 0;  ///< parsed from memory_type (5600)
  double memory_bandwidth_bytes_per_s = 0;
  int num_channels = 0;  ///< channels the claim states; 0: not stated
  // Provenance.
  std::string source;
  std::string as_of;
  std::string note;
};

/// Reads every `*.json` of `models_dir` and of its subfolders (data/models and
/// data/models/families; sorted by path) with load_model_spec, so that a claim may name any of
/// them by id. Throws InputError for an unreadable folder or file, and
/// "<file>: model id "x" is also the id of <other file>; ..." for two files with one id.
std::vector<ModelSpec> load_models(const std::filesystem::path& models_dir);

/// Parses a claims file's text, `{"claims": [{...}, ...]}` (docs/audit.md), checking each claim
/// against `catalog` and `models`. `source` names the file in messages. Throws InputError
/// "<source>: claim "<id>": field "<f>": expected ..., got ..." for malformed JSON, a missing,
/// mistyped, non-positive or unknown field, a duplicate id, not exactly one of "tpot_s",
/// "output_tokens_per_s", "memory_bandwidth_bytes_per_s", a "num_cores" on anything but a CPU
/// id or above the CPU's cores, an unknown weight/KV format or memory type; and for an unknown
/// hardware or model id, listing the known ones.
std::vector<Claim> parse_claims(const std::string& text, const std::string& source,
                                const Catalog& catalog, const std::vector<ModelSpec>& models);
/// parse_claims over the file at `path` (InputError "<path>: cannot open file" when missing).
std::vector<Claim> read_claims(const std::filesystem::path& path, const Catalog& catalog,
                               const std::vector<ModelSpec>& models);

enum class Verdict { kPlausible, kOptimistic, kImpossible };
std::string_view to_string(Verdict verdict);  ///< "plausible" | "optimistic" | "impossible"

/// Options of audit_claim.
struct AuditOptions {
  /// A calibration profile (llmcap calibrate): CPU predictions use its rates transferred to the
  /// claim's CPU and share (transfer_efficiency). nullptr: the datasheet defaults.
  const CalibrationProfile* profile = nullptr;
  double tolerance = kOptimisticTolerance;  ///< > 1; see kOptimisticTolerance
  /// Engine profiles (model/engine_profile.h; not owned; nullptr: none) the predictions of
  /// GPU and of CPU claims assume: the engine's fractions and costs, and on CPUs the CPU model
  /// (bandwidth of the cores used, the engine's instruction path). A calibration profile
  /// still prices CPU claims when given.
  const EngineProfile* gpu_engine = nullptr;
  const EngineProfile* cpu_engine = nullptr;
  /// Fitted engine profiles (load_fitted_engines; not owned; nullptr: none): a claim on the
  /// hardware one was fitted on is priced with it.
  const std::vector<EngineProfile>* fitted_engines = nullptr;
};

/// The audit of one claim. Times are seconds per output token of one sequence (one decode
/// step); a throughput claim's time is batch / output_tokens_per_s.
struct ClaimAudit {
  std::string id;
  ClaimKind kind = ClaimKind::kTpot;
  Verdict verdict = Verdict::kPlausible;
  /// Latency and throughput claims (unset for memory-bandwidth claims):
  std::optional<double> claimed_s;
  std::optional<double> lower_bound_s;
  /// Unset also when the catalog's deployment rule would not place the model (see
  /// explanation).
  std::optional<double> predicted_s;
  /// predicted_s / claimed_s (latency and throughput claims with a prediction).
  std::optional<double> factor;
  // The arithmetic of the bound (latency and throughput claims).
  std::string model;
  WeightFormat weight_format = WeightFormat::kInt4;
  bool weight_format_assumed = false;  ///< the claim named none; kInt4 was assumed
  KvFormat kv_format = KvFormat::kFp8;
  bool kv_format_assumed = false;  ///< the claim named none; kFp8 was assumed
  int64_t weight_bytes = 0;        ///< all weights in weight_format (the memory check)
  int64_t bytes_per_step = 0;      ///< weights streamed + KV cache read by one decode step
  double flops_per_step = 0;
  double bound_bandwidth_bytes_per_s = 0;  ///< whole socket(s) / device(s)
  double bound_flops_per_s = 0;            ///< highest peak of the cores or devices used
  int64_t memory_bytes = 0;                ///< memory checked; 0: not stated, not checked
  bool fits = true;                        ///< weights + KV cache fit memory_bytes
  std::string predictor;                   ///< which efficiency predicted_s used
  // Memory-bandwidth claims.
  std::optional<double> claimed_bytes_per_s;
  /// Peak of the named hardware, else of the stated channels at the claim's transfer rate.
  std::optional<double> peak_bytes_per_s;
  double implied_channels = 0;  ///< claimed / (MT/s x 8 bytes)
  int64_t memory_transfer_rate_mts = 0;
  /// The arithmetic in plain words (several sentences, one line).
  std::string explanation;
};

/// Audits one claim (the rule is at docs/audit.md):
///  - lower bound of a decode step (seconds per output token) = max(bytes / B, flops / F) with
///    bytes = the weights the step reads, ModelDescription::decode_step_weight_bytes(format,
///    batch) (every tensor in its encoding less the input embedding table of an untied model, a
///    step reading one row per sequence of it; a mixture of experts' routed experts only as many
///    as the batch's tokens reach, E x (1 - (1 - k/E)^batch) per MoE layer under uniform
///    routing) + batch x the KV cache of one sequence of `context` tokens
///    (kv_cache_bytes_for_sequence: a sliding-window layer keeps at most its window, an MLA
///    layer one latent), B = the peak memory bandwidth of every socket or device the hardware
///    has (a slice of a socket can at best use the whole socket's), flops = 2 x batch x (layer
///    matrix parameters one token multiplies by + LM head) + 2 x batch x sum over layers of
///    cached tokens x heads x (q/k width + v width) (MLA: its decompressed widths), F = the
///    highest peak FLOP/s of any data type of the cores or devices used (a slice: cores /
///    socket cores of the socket's); a dense model's bound is weights less the embedding +
///    batch x context x KV bytes per token, and 4 x batch x context x layers x heads x head_dim;
///  - impossible when the weights (all of them, every expert) + the batch's KV cache exceed the
///  memory (the
///    claim's memory_bytes, else an instance's RAM, a GPU instance's or a GPU id's GPU memory;
///    a CPU id without memory_bytes is not checked), or when the claimed time is below the
///    bound (by more than kBoundRelativeSlack);
///  - predicted time: RooflinePredictor for a decode step of `batch` sequences of
///    `context_tokens` on the deployment the planner would use (make_deployment for an
///    instance; for a CPU id with cores c of n, the share c / n of the socket's bandwidth and
///    compute; a GPU id: one device), with default_efficiency, or the engine profile of the
///    claim's device kind (options.gpu_engine / cpu_engine; a CPU deployment then as
///    apply_cpu_model prices it), or, given options.profile, the profile transferred to the
///    CPU (transfer_efficiency);
///  - optimistic when predicted / claimed > options.tolerance, plausible otherwise.
/// Memory-bandwidth claims: implied channels = claimed / (MT/s x 8 bytes); impossible when the
/// claim exceeds the peak of the named hardware (or of its stated channels), plausible
/// otherwise, the explanation saying what the figure corresponds to.
/// Throws InputError for a claim naming hardware or a model not in `catalog` / `models` (the
/// readers above check this first) or for a tolerance below 1.
ClaimAudit audit_claim(const Claim& claim, const Catalog& catalog,
                       const std::vector<ModelSpec>& models, const AuditOptions& options = {});

}  // namespace llmcap::model
