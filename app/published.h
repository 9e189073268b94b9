// Validation of the predictor against published measurements (`llmcap validate --published`,
// docs/validation.md): each row of data/validation/published.json is a benchmark someone ran
// and published (engine, hardware, model, formats, load, lengths, one figure); llmcap
// simulates the same benchmark on its own model of that hardware and reports the error of its
// prediction, per row and as distributions per device kind, metric and split.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/engine_profile.h"
#include "model/hardware.h"
#include "model/model_spec.h"
#include "plan/analysis.h"
#include "sim/sim_result.h"

namespace llmcap::app {

/// One published measurement. Times are in seconds, throughput in output tokens per second.
struct PublishedRow {
  std::string id;           ///< unique slug
  std::string split;        ///< "fit" (may inform efficiencies) or "held_out" (never)
  std::string device_kind;  ///< "cpu" | "gpu" (must match the hardware's kind)
  std::string engine;  ///< engine profile id (data/engines/<engine>.json), e.g. "vllm", "llama.cpp"
  std::string engine_version;  ///< as published (for people; not used in the prediction)
  std::string hardware;        ///< catalog id (data/hardware/*.json)
  /// GPUs used (GPU rows; >= 1). CPU rows: 1.
  int device_count = 1;
  /// GPU rows: GPUs per replica (divides device_count; 0 in the file: device_count). The
  /// other device_count / tensor_parallel GPUs run replicas of their own (data parallel).
  int tensor_parallel = 1;
  /// CPU rows: physical cores the benchmark ran on (0 in the file: one whole socket). More
  /// cores than one socket has: whole sockets, tensor parallel over them.
  int cores_used = 0;
  std::string model;          ///< data/models/<model>.json
  std::string weight_format;  ///< llmcap's name (model/formats.h) of the published format
  std::string kv_format;      ///< llmcap's name of the KV cache format
  /// The load, exactly one of: `batch` requests submitted together, the engine running at most
  /// that many at once (a static batch); `offline_requests` submitted together, the engine
  /// running as many as its limits allow (a max-throughput run, "infinite request rate");
  /// `concurrency` clients each sending its next request when the last one finished; or
  /// `num_requests` Poisson arrivals at `request_rate_per_s`.
  int64_t batch = 0;
  int64_t offline_requests = 0;
  int64_t concurrency = 0;
  double request_rate_per_s = 0;
  int64_t num_requests = 0;  ///< requests of a rate-driven benchmark (absent in the file: 500)
  /// `concurrency` rows: requests each client sends (a benchmark's prompts over its clients;
  /// not in the file; 0: kClosedLoopRequestsPerUser).
  double requests_per_user = 0;
  int64_t prompt_tokens = 0;
  int64_t output_tokens = 0;
  std::string metric;     ///< "tpot" | "ttft" | "throughput"
  std::string statistic;  ///< "mean" | "median" | "p90" | "p99" (throughput: "total")
  double published = 0;   ///< the published figure, in seconds or output tokens per second
  std::string source;     ///< where it was published (URL, or repository path at a commit)
  std::string as_of;      ///< publication date
};

/// The published measurements of one file.
struct PublishedSet {
  std::filesystem::path file;
  std::vector<PublishedRow> rows;
};

/// Reads a published-measurements file: {"source", "as_of", "rows": [row...]} with each row's
/// fields as PublishedRow names them (plus free-text "published_as_stated", "quote", "notes",
/// "engine_version" that are kept in the file for people, not read). Throws InputError naming
/// the file, the row (`row "id"`), the field, the value and what was expected for: a missing
/// or mistyped field, a duplicate id, a split other than fit/held_out, an unknown device kind,
/// metric or statistic (each lists the known ones), a hardware id not in `catalog` or of the
/// other device kind, a load with none or several of batch / concurrency /
/// request_rate_per_s / offline_requests, a tensor_parallel that does not divide device_count, a
/// non-positive length or figure, and an unknown weight or KV format.
PublishedSet read_published(const std::filesystem::path& file, const model::Catalog& catalog);

/// The prediction of one row.
struct PublishedPrediction {
  const PublishedRow* row = nullptr;
  double predicted = 0;   ///< same unit as row->published
  double error = 0;       ///< predicted / published - 1
  std::string predictor;  ///< which predictor and deployment rule produced it (one line)
};

/// Predicts every row of `set` by simulating its benchmark: the model
/// (`<data_dir>/models/<model>.json`) on a deployment of the row's hardware (GPU rows:
/// device_count GPUs in replicas of tensor_parallel; CPU rows: cores_used cores of the socket,
/// a slice as model::make_deployment prices it, with kCpuHostMemoryBytes of memory per socket)
/// priced as PublishedOptions says: with the row's engine profile (an engine without a
/// profile is an InputError that lists the known ones), or with the datasheet efficiencies
/// (model::default_efficiency) and the simulator's default engine limits (continuous
/// batching, 256 sequences, 16,384 new tokens per step). A `batch` row runs at most `batch`
/// sequences. Loads: `batch` or `offline_requests` requests at t =
/// 0; `concurrency`
/// closed-loop users without think time for long enough that each sends about
/// kClosedLoopRequestsPerUser requests; `request_rate_per_s` Poisson arrivals (seeded by
/// `seed`). The figure is the row's statistic over the finished requests: TTFT = first token -
/// arrival, TPOT = (completion - first token) / (output - 1), throughput = output tokens /
/// (last completion - first arrival). Throws InputError for a model file that is missing or
/// invalid (naming the row), and InfeasibleError when the weights do not fit the hardware.
/// How predict_published prices the rows.
struct PublishedOptions {
  uint64_t seed = 1;  ///< Poisson arrivals and closed-loop streams
  /// Price each row with its engine's profile (the catalog's, from
  /// `<data_dir>/engines/<engine>.json`, model/engine_profile.h): its efficiencies and per-kernel
  /// cost, its scheduler defaults, and on CPUs the CPU model (model/cpu_model.h: bandwidth of the
  /// cores used, the peak of the engine's instruction path). false: the datasheet roofline with
  /// default_efficiency and the simulator's default engine limits for every row (the predictor
  /// before engine profiles, kept for comparison).
  bool use_engines = true;
  /// Threads the rows' simulations run on (0: one per hardware thread); the predictions are
  /// the same on any number.
  int num_threads = 0;
};

std::vector<PublishedPrediction> predict_published(const PublishedSet& set,
                                                   const model::Catalog& catalog,
                                                   const std::filesystem::path& data_dir,
                                                   const PublishedOptions& options = {});

/// The simulation predict_published runs for one row (its deployment, engine, load and
/// lengths; the metric is not used), on the model `spec`, priced with `engine` (nullptr: the
/// datasheet defaults and the simulator's default engine limits; the caller checks that the
/// engine is for the row's device kind): the simulated requests and the one-line description
/// of the predictor and deployment. Throws as predict_published.
struct PublishedSimulation {
  sim::SimResult result;
  std::string predictor;
};
PublishedSimulation simulate_published_row(const PublishedRow& row, const model::ModelSpec& spec,
                                           const model::Catalog& catalog,
                                           const model::EngineProfile* engine, uint64_t seed);
/// The row's figure (its metric and statistic, in its unit) from a simulation of its run.
double published_figure(const PublishedRow& row, const sim::SimResult& result);

/// CPU host memory assumed per socket of a published CPU benchmark (those hosts are sized for
/// the model; it only bounds the KV cache): 512 GiB.
inline constexpr int64_t kCpuHostMemoryBytes = int64_t{512} << 30;
/// Requests each closed-loop user sends in a `concurrency` row's simulation.
inline constexpr int kClosedLoopRequestsPerUser = 8;

/// The error distribution of one group of rows.
struct PublishedSummary {
  std::string device_kind, metric, split;
  int64_t rows = 0;
  double median_abs_error = 0;    ///< nearest-rank median of |error|
  double p90_abs_error = 0;       ///< nearest-rank p90 of |error|
  double within_25_fraction = 0;  ///< share of rows with |error| <= 25%
  /// Largest factor between predicted and published, max(p / m, m / p) over the rows.
  double worst_factor = 1;
};

/// Summaries per (device kind, metric, split), in that order of keys, sorted by name.
std::vector<PublishedSummary> summarize_published(
    const std::vector<PublishedPrediction>& predictions);

/// The held-out rows against issue 27's targets: decode (TPOT) and max-throughput rows
/// together at median |error| <= 10% with >= 85% within 25%; TTFT rows at median <= 20% with
/// >= 70% within 25%; no CPU prefill (TTFT) row off by more than 2x.
struct PublishedTarget {
  std::string what;  ///< e.g. "tpot + throughput, held_out"
  int64_t rows = 0;
  double median_abs_error = 0;
  double within_25_fraction = 0;
  double worst_factor = 1;
  bool met = false;
  std::string goal;  ///< the target in words
};
std::vector<PublishedTarget> published_targets(const std::vector<PublishedPrediction>& predictions);

/// The step-time error the validation measured for each engine of the catalog: the
/// nearest-rank p95 of |error| over the held-out TPOT and TTFT rows of that engine on its
/// device kind, when there are at least kMinErrorRows of them; else over the held-out TPOT and
/// TTFT rows of every engine of that kind (and the source says so); none when the kind has
/// fewer than kMinErrorRows either. Empty when `<data_dir>/validation/published.json` is
/// absent. Runs predict_published over those rows of the file only (on `num_threads`, 0: one
/// per hardware thread). Throws as read_published and predict_published.
plan::MeasuredStepTimeErrors published_step_time_errors(const model::Catalog& catalog,
                                                        const std::filesystem::path& data_dir,
                                                        int num_threads = 0);
/// Fewest held-out rows a measured step-time error is taken from.
inline constexpr int64_t kMinErrorRows = 3;

/// {"mode": "engines" | "datasheet" (PublishedOptions::use_engines), "rows": [{"id", "split",
/// "device_kind", "engine", "metric", "published", "predicted", "source"}], "summary":
/// [{"device_kind", "metric", "split", "rows", "median_abs_error", "p90_abs_error",
/// "within_25_fraction", "worst_factor"}], "targets": [{"what", "goal", "rows",
/// "median_abs_error", "within_25_fraction", "worst_factor", "met"}]}, two-space indented.
std::string published_json(const std::vector<PublishedPrediction>& predictions,
                           bool use_engines = true);

}  // namespace llmcap::app
