// A planning scenario: model, workload, SLO, serving limits and candidate instance types.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.h"
#include "model/engine_profile.h"
#include "model/formats.h"
#include "model/model_spec.h"
#include "plan/price_overrides.h"
#include "plan/scenario_files.h"
#include "plan/search_spec.h"
#include "plan/tco_spec.h"
#include "sim/metrics.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace llmcap::plan {

/// Bad scenario input. One line naming the file, the field, the value and what was expected,
/// e.g. `s.json: field "workload.rate_multiplier": expected a positive number, got -2`. The
/// tree's one input error type (base/error.h), the same type as model::InputError and
/// sim::InputError.
using InputError = base::InputError;

struct ClientClassSpec;

/// Where requests come from. Its files are named by id or by path relative to the scenario
/// file's folder (plan/scenario_files.h); `path` holds the file found.
struct WorkloadSpec {
  /// kTrace: replay a trace. kArrivalProcess: open-loop arrivals of a renewal process
  /// (`arrival`: Poisson, Gamma or Weibull) with lengths from a file. kClosedLoop: users with
  /// think time. kPoisson is the old name of kArrivalProcess (the same value).
  enum class Kind { kTrace, kArrivalProcess, kClosedLoop, kPoisson = kArrivalProcess };
  Kind kind = Kind::kTrace;
  /// kTrace: an Azure 2023, Vidur or JSON Lines (Mooncake) trace. kArrivalProcess / kClosedLoop:
  /// any file with lengths.
  std::filesystem::path path;
  double rate_multiplier = 1.0;    ///< kTrace: > 0, divides arrival offsets
  std::optional<double> window_s;  ///< kTrace: keep arrivals before this offset (after scaling)
  /// kTrace, a `.jsonl` trace: tokens per block of its hash_ids (Mooncake: 512), > 0.
  int32_t hash_block_tokens = 512;
  /// kArrivalProcess: mean rate at load multiplier 1, requests per second, > 0.
  double rate_per_s = 0;
  /// kArrivalProcess: stop after this many; 0 = no count limit (duration_s > 0 then).
  int64_t num_requests = 0;
  int64_t num_users = 0;    ///< kClosedLoop: > 0
  double think_time_s = 0;  ///< kClosedLoop: mean think time, >= 0
  /// kClosedLoop: > 0, no request is sent at or after it. kArrivalProcess: keep arrivals
  /// before this offset; 0 = no time limit (num_requests > 0 then).
  double duration_s = 0;
  sim::ArrivalProcess arrival;  ///< kArrivalProcess: which renewal process, and its shape
  /// kArrivalProcess: empty, or 24 hourly rate multipliers (>= 0, not all 0; see
  /// sim::ArrivalOptions::hourly_multipliers).
  std::vector<double> load_profile;
  /// kArrivalProcess / kClosedLoop: set, multi-turn sessions (workload.sessions; see
  /// sim::ArrivalOptions::sessions and sim::ClosedLoopWorkload).
  std::optional<sim::SessionOptions> sessions;
  /// Several client classes: when non-empty, the workload is the merge of the classes'
  /// arrivals in arrival order (sim::merge_client_classes), request client_class = index
  /// here. kind and path then mirror classes[0] (for displays that show one source) and the
  /// other fields above are unused.
  std::vector<ClientClassSpec> classes;
  /// What to do with requests whose prompt plus output exceed the model's context length
  /// (max_position_embeddings), "workload.over_context": kRefuse (default) refuses the scenario
  /// before any simulation with the count of such requests; kClip clips them as vLLM does (a
  /// prompt to context - 1 tokens, then the output to what the context has left).
  enum class OverContext { kRefuse, kClip };
  OverContext over_context = OverContext::kRefuse;
};

/// One client class: its own source of requests (kTrace or kArrivalProcess, no classes of
/// its own) and its own SLO.
struct ClientClassSpec {
  std::string name;  ///< unique within the scenario
  WorkloadSpec workload;
  sim::Slo slo;  ///< p99 TTFT and p99 TPOT bounds of this class, seconds
};

/// How the planner picks each candidate's tensor-parallel degree ("serving.tensor_parallel";
/// docs/scenarios.md).
struct TensorParallelSpec {
  /// kAuto: model::make_deployment's rule (GPUs: the smallest power of two whose memory
  /// holds the model; CPUs: 1, one replica per socket). kSearch: plan() tries every degree the
  /// instance type allows (tp_options) and keeps the cheapest fleet. kPerType: the degree in
  /// `per_type` for the instance types it names, kAuto for the others.
  enum class Mode { kAuto, kSearch, kPerType };
  Mode mode = Mode::kAuto;
  std::map<std::string, int> per_type;  ///< kPerType: instance id -> degree (>= 1)
};

/// One group of a given fleet (Scenario::fleet): `count` instances of one type.
struct FleetGroupSpec {
  std::string field;     ///< where it was read, e.g. "fleet.decode[1]" (for messages)
  std::string instance;  ///< catalog id, checked against the catalog by the planner
  int64_t count = 1;     ///< instances, > 0
  /// Tensor-parallel degree of its replicas; 0: the scenario's rule for the type (kAuto, or
  /// kPerType's entry).
  int tensor_parallel = 0;
  /// The scenario's serving limits with the group's own "serving" overrides applied
  /// (num_kv_blocks is filled by the planner from the deployment).
  sim::ServingConfig serving;
  sim::ReplicaRole role = sim::ReplicaRole::kUnified;
};

/// A given fleet to evaluate instead of searching fleet sizes ("fleet"; docs/scenarios.md):
/// a mixed fleet ("groups", all unified) or disaggregated prefill and decode pools ("prefill"
/// and "decode", each a list of groups).
struct FleetSpec {
  std::vector<FleetGroupSpec> groups;  ///< "groups" in order, or "prefill" then "decode"
  bool disaggregated = false;
  /// Disaggregated: the decode pool's router ("fleet.decode_router", default the scenario's
  /// router; the prefill pool uses the scenario's router).
  sim::RouterKind decode_router = sim::RouterKind::kLeastOutstanding;
};

/// The default of Scenario::max_requests (docs/scenarios.md, "Bounds").
inline constexpr int64_t kDefaultMaxRequests = 2'000'000;
/// Memory one simulated request takes, about (its record, metrics and queue entries), bytes:
/// the estimate in the message of a refused workload.
inline constexpr double kBytesPerSimulatedRequest = 2048;

/// A file a scenario names (model, lengths, trace) that was not found when it was read: kept
/// rather than refused at once, so that a scenario can be read, edited and checked where its
/// files are absent (sweeps probing fields, the GUI, tests of the reader); planning refuses it
/// (check_scenario_files).
struct MissingFile {
  std::string field;  ///< dotted field, e.g. "model" or "workload.classes[1].lengths_path"
  std::string value;  ///< as written in the scenario
  ScenarioFileKind kind = ScenarioFileKind::kModel;
  std::vector<std::filesystem::path> looked;  ///< every place looked, in order
  bool data_dir_known = true;                 ///< false: no data folder was given to look ids up in
};

/// "serving.speculative": speculative decoding on every candidate (docs/scenarios.md,
/// "Speculative decoding"). The simulator advances each decode by 1 + the sum of the
/// acceptance rates per step (sim/simulator.h); the planner prices the draft
/// (model/speculative.h) and takes its weights and KV out of the replica's KV cache.
struct SpeculativeSpec {
  /// kNgram: prompt lookup (vLLM's "ngram"), no draft cost; kMtp: the model's multi-token-
  /// prediction layers (DeepSeek-V3); kEagle: an EAGLE draft head; kDraftModel: a smaller
  /// model of the same tokenizer.
  enum class Method { kNgram, kMtp, kEagle, kDraftModel };
  Method method = Method::kMtp;
  /// k and the per-position acceptance rates; num_draft_tokens 0: off (no "speculative").
  sim::SpeculativeConfig config;
  int64_t draft_layers = 1;  ///< kMtp, kEagle: decoder layers of the draft head
  /// kDraftModel: "draft_model", found as "model" is (plan/scenario_files.h), and the model
  /// read from it (null while the file is missing: planning refuses it then).
  std::filesystem::path draft_model_config;
  std::shared_ptr<const model::ModelSpec> draft_model;
  std::string source;  ///< "source": where the acceptance rates were measured (free text)

  bool on() const { return config.num_draft_tokens > 0; }
};

/// "mtp" | "eagle" | "draft_model" | "ngram".
const char* speculative_method_name(SpeculativeSpec::Method method);

struct Scenario {
  std::filesystem::path file;  ///< the scenario file itself
  std::string name;
  std::string description;
  /// "model": a Hugging Face config.json or a model file of data/models, by id or by path
  /// (plan/scenario_files.h); the file found (else the scenario-relative path; missing_files
  /// says so).
  std::filesystem::path model_config;
  /// "weight_format": one name for every device kind, or {"gpu": name, "cpu": name} (each
  /// default bf16). This is the GPU instances' format (and every kind's when one name).
  model::WeightFormat weight_format = model::WeightFormat::kBf16;
  /// The CPU instances' format when "weight_format" gave one per kind; unset: weight_format.
  std::optional<model::WeightFormat> cpu_weight_format;
  model::KvFormat kv_format = model::KvFormat::kBf16;
  WorkloadSpec workload;
  /// p99 TTFT and p99 TPOT bounds, seconds. With client classes: the tightest of the classes'
  /// bounds (min TTFT, min TPOT), kept for summaries only: the planner judges each class by its
  /// own SLO (class_slos()), since all requests meeting the tightest bound together does not
  /// mean each class meets its own.
  sim::Slo slo;
  /// num_kv_blocks is filled per instance by the planner; policy from "serving.batching".
  sim::ServingConfig serving;
  sim::RouterKind router = sim::RouterKind::kLeastOutstanding;
  /// "engine": {"gpu": id, "cpu": id}: the engine profile (model/engine_profile.h,
  /// docs/engines.md) the candidates of each device kind are priced with: its fractions,
  /// per-step and per-kernel costs and usable memory, and on CPUs the CPU model (bandwidth of
  /// the cores used, the engine's instruction path). "" for a kind: the default engine of that
  /// kind (kDefaultGpuEngine, kDefaultCpuEngine) when the catalog has its profile, else the
  /// datasheet roofline; kDatasheetEngine: the datasheet roofline (model::default_efficiency).
  /// A calibration profile still prices CPU candidates when given. The planner checks the ids
  /// against the catalog; engine_id() resolves them.
  std::string gpu_engine;
  std::string cpu_engine;
  /// "engine": {"profiles": [FILE, ...]}: fitted engine profiles (llmcap calibrate
  /// --from-benchmark --out; paths relative to the scenario), read with
  /// model::load_fitted_engines: candidates on the hardware one was fitted on are priced with
  /// it (the engine of their kind must be its engine or unnamed). The planner checks their
  /// hardware against the catalog.
  std::vector<model::EngineProfile> fitted_engines;
  /// Which of serving's batching policy, max_num_seqs and max_num_batched_tokens the scenario
  /// set ("serving"); the others come from the engine's scheduler defaults (serving_for).
  bool batching_set = false;
  bool max_num_seqs_set = false;
  bool max_num_batched_tokens_set = false;
  /// Whether the scenario set "serving.prefix_caching" and "serving.block_size_tokens"; if
  /// not, the engine's scheduler defaults apply (EngineScheduler::prefix_caching,
  /// block_size_tokens).
  bool prefix_caching_set = false;
  bool block_size_set = false;
  bool schedule_order_set = false;  ///< "serving.schedule_order"
  /// Tensor-parallel degree per candidate ("serving.tensor_parallel"; default kAuto).
  TensorParallelSpec tensor_parallel;
  /// "serving.expert_parallel" (default false): every replica splits the model's routed
  /// experts whole over its tensor-parallel devices, ep = tp (vLLM's --enable-expert-parallel;
  /// model/expert_parallel.h). The planner refuses, before any simulation, a model without
  /// routed experts and a degree fixed by serving.tensor_parallel or a fleet group that does
  /// not divide the routed experts per layer; an automatic or searched degree that does not is
  /// an infeasible candidate.
  bool expert_parallel = false;
  /// "serving.kv_offload_bytes" (default 0: off): host memory of each GPU instance given to
  /// KV offload (sim::KvOffloadConfig), split evenly over the instance's replicas; ignored on
  /// CPU instances (their KV is in host memory already) and where prefix caching is off. A
  /// GPU candidate using it whose memory_bytes are less is an infeasible row; the planner refuses a
  /// value above every GPU candidate's, or a given fleet's type's (check_kv_offload).
  int64_t kv_offload_bytes = 0;
  /// "serving.speculative" (also copied into serving.speculative, so every replica has it).
  SpeculativeSpec speculative;
  /// Instance ids to try, where "cpu" or "gpu" stands for every type of that device kind
  /// (plan::resolve_candidates); empty means every instance type in the catalog (of
  /// candidate_kind, when set).
  std::vector<std::string> candidates;
  /// "candidates": "cpu" or "gpu": every instance type of that device kind in the catalog.
  std::optional<model::DeviceKind> candidate_kind;
  /// A given fleet: plan() evaluates it (one row) instead of searching each candidate's
  /// fleet size. Excludes `candidates`.
  std::optional<FleetSpec> fleet;
  uint64_t seed = 1;
  double hours_per_year = 8760;  ///< hours in service per year, for the annual cost
  int64_t max_instances = 256;   ///< largest fleet the search tries per instance type
  /// "tco": price model, service hours, autoscaling, currency, owned hardware (plan/tco.h).
  TcoSpec tco;
  /// "search": serving configurations tried per instance type (plan/search.h).
  SearchSpec search;
  /// "uncertainty": the errors carried to the answer as ranges (plan/search.h).
  UncertaintySpec uncertainty;
  /// "price_overrides": prices the scenario sets itself (plan/price_overrides.h), applied to
  /// the catalog by app::make_plan_run and the GUI before planning.
  std::vector<PriceOverride> price_overrides;
  /// Not a field of the file: the most requests the workload may have (`llmcap plan
  /// --max-requests`). Planning refuses a larger workload before any simulation (arrival
  /// processes before their arrivals are drawn, from rate x duration), with its estimated
  /// memory (kBytesPerSimulatedRequest a request) in the message.
  int64_t max_requests = kDefaultMaxRequests;
  /// The file fields whose file was not found when the scenario was read, in the order of the
  /// file; empty when every file was found. check_scenario_files refuses a scenario with any.
  std::vector<MissingFile> missing_files;

  /// One SLO per client class, indexed like RequestSpec::client_class: the classes' own SLOs,
  /// or {slo} for a scenario without classes. For sim::compute_class_metrics.
  std::vector<sim::Slo> class_slos() const;
};

/// The engines a scenario assumes when it names none for a device kind: vLLM on GPUs (the most
/// used open serving engine) and llama.cpp on CPUs (the most used CPU engine; docs/engines.md).
inline constexpr const char* kDefaultGpuEngine = "vllm";
inline constexpr const char* kDefaultCpuEngine = "llama.cpp";
/// The engine id that asks for the datasheet roofline instead of an engine profile.
inline constexpr const char* kDatasheetEngine = "datasheet";

/// The engine profile id the candidates of `kind` are priced with ("" for the datasheet
/// roofline): the scenario's id, else the kind's default when `catalog` has its profile.
std::string engine_id(const Scenario& scenario, model::DeviceKind kind,
                      const model::Catalog& catalog);

/// The engine profile that prices `instance` (nullptr: the datasheet roofline): the scenario's
/// fitted profile for its hardware, else the profile of engine_id.
const model::EngineProfile* engine_for(const Scenario& scenario,
                                       const model::InstanceType& instance,
                                       const model::Catalog& catalog);

/// The serving limits the candidates of `instance` run with: the scenario's "serving", with
/// the batching policy, max_num_seqs and max_num_batched_tokens it does not set taken from the
/// scheduler defaults of the engine that prices the instance (a fitted profile for its
/// hardware, else engine_id's; none: the simulator's defaults). A chunked_prefill token budget
/// below max_num_seqs is raised to it (every running decode must fit in a step).
sim::ServingConfig serving_for(const Scenario& scenario, const model::InstanceType& instance,
                               const model::Catalog& catalog);

/// Reads a scenario JSON file (format: docs/scenarios.md). Throws InputError naming the file,
/// field and value for a missing file, malformed JSON, a missing, mistyped or out-of-range
/// field, a field that does not belong to the workload kind (e.g. "cv" for "poisson"), a load
/// profile without 24 non-negative entries, a client class without its SLO (or with a
/// duplicate name, or a scenario-level "slo" beside classes), and an unknown name (weight
/// format, router, batching policy, workload kind: lists the known ones); a
/// "serving.tensor_parallel" that is not "auto", "search" or an object of positive integers;
/// an "engine" that is not an object of "gpu" and "cpu" engine ids;
/// a "fleet" with both "groups" and "prefill"/"decode", with only one of "prefill" and
/// "decode", with an empty group list, a group without "instance" or with a "count" below
/// 1, a router inside a group's "serving", or beside "candidates" or "search". Whether the
/// instance ids exist and a degree suits its instance type is checked by the planner (it
/// needs the catalog), still before any simulation.
///
/// The file fields ("model", "lengths_path", a trace's "path") are looked up by
/// find_scenario_file (plan/scenario_files.h): relative to the scenario's folder first, then,
/// for a bare name, as an id in `data_dir` (empty: ids are not looked up). An empty value is
/// refused here; a file not found is recorded in Scenario::missing_files (check_scenario_files
/// refuses it). "engine.profiles" paths are relative to the scenario's folder only.
Scenario load_scenario(const std::filesystem::path& path,
                       const std::filesystem::path& data_dir = {});

/// The weight format the scenario gives instances of `kind` (Scenario::cpu_weight_format for
/// CPUs when set, else Scenario::weight_format).
model::WeightFormat weight_format_for(const Scenario& scenario, model::DeviceKind kind);

/// load_scenario on JSON text that stands for the file `path`: messages name `path`, and
/// relative paths inside resolve against its folder (the file itself need not exist). For
/// sweeps and the GUI, which edit a scenario before planning it. Throws as load_scenario.
Scenario load_scenario_text(const std::string& text, const std::filesystem::path& path,
                            const std::filesystem::path& data_dir = {});

/// Throws InputError for the first of scenario.missing_files, one line naming the scenario
/// file, the field, the value, every place looked and what was expected, e.g.
/// `s.json: field "model": no file "llama-9b" (looked for /x/llama-9b,
/// /data/models/llama-9b.json, /data/models/families/llama-9b.json); expected a model id
/// (<id>.json in <data-dir>/models/ or models/families/) or the path of a model file (relative:
/// to the scenario's folder)`. Planning (plan/planner.h) calls it before reading any file.
void check_scenario_files(const Scenario& scenario);

/// Builds the simulator's workload from the spec: a trace, generated arrivals
/// (sim::generate_arrivals with `seed`), a closed loop, or the merge of the classes' arrivals
/// (class c drawn with sim::substream_seed(seed, c), so class 0 draws what it would alone).
/// Multi-turn sessions end a conversation whose next turn would outgrow `context_tokens`
/// (the model's context length; 0: no limit; sim::SessionOptions::max_context_tokens).
/// Throws sim::InputError for a bad trace or length file.
sim::Workload load_workload(const WorkloadSpec& spec, uint64_t seed, int64_t context_tokens = 0);

}  // namespace llmcap::plan
