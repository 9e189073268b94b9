#include "app/published.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "base/error.h"
#include "base/json_reader.h"
#include "base/parallel_for.h"
#include "base/stats.h"
#include "base/text.h"
#include "model/calibrated_predictor.h"
#include "model/cpu_model.h"
#include "model/deployment.h"
#include "model/efficiency.h"
#include "model/engine_profile.h"
#include "model/formats.h"
#include "model/model_spec.h"
#include "sim/fleet_config.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace llmcap::app {
namespace {

const std::vector<std::string> kSplits = {"fit", "held_out"};
const std::vector<std::string> kDeviceKinds = {"cpu", "gpu"};
const std::vector<std::string> kMetrics = {"tpot", "ttft", "throughput"};
const std::vector<std::string> kTimeStatistics = {"mean", "median", "p90", "p99"};
// clang-format off
const std::vector<std::string> kRowFields = {
    "id", "split", "device_kind", "engine", "engine_version", "hardware", "device_count",
    "tensor_parallel", "cores_used", "model", "weight_format", "kv_format", "batch",
    "offline_requests", "concurrency", "request_rate_per_s", "num_requests", "prompt_tokens",
    "output_tokens", "metric", "statistic", "published", "published_as_stated", "source",
    "as_of", "quote", "notes"};
// clang-format on
constexpr int64_t kDefaultRateRequests = 500;

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// A string field that must be one of `known`.
std::string one_of(const base::JsonReader& r, const std::string& key,
                   const std::vector<std::string>& known) {
  const std::string v = r.string(key);
  if (std::find(known.begin(), known.end(), v) == known.end()) {
    r.fail(key, "one of " + joined(known), r.got(key));
  }
  return v;
}

PublishedRow read_row(const base::JsonReader& r, const model::Catalog& catalog) {
  PublishedRow row;
  row.id = r.non_empty_string("id");
  base::JsonReader rec = r;
  rec.set_record("row \"" + row.id + "\"");
  rec.only(kRowFields);
  row.split = one_of(rec, "split", kSplits);
  row.device_kind = one_of(rec, "device_kind", kDeviceKinds);
  row.engine = rec.non_empty_string("engine");
  row.engine_version = rec.has_value("engine_version") ? rec.string("engine_version") : "";
  row.hardware = rec.non_empty_string("hardware");
  const model::HardwareSpec* hw = catalog.find_hardware(row.hardware);
  if (hw == nullptr) rec.fail("hardware", "a hardware id of the catalog", rec.got("hardware"));
  if (std::string(model::to_string(hw->kind)) != row.device_kind) {
    rec.fail("hardware", "a " + row.device_kind + " (device_kind)",
             rec.got("hardware") + ", a " + std::string(model::to_string(hw->kind)));
  }
  row.device_count = static_cast<int>(rec.positive_int_or("device_count", 1));
  row.tensor_parallel = static_cast<int>(
      rec.has_value("tensor_parallel") ? rec.positive_int("tensor_parallel") : row.device_count);
  if (row.device_count % row.tensor_parallel != 0) {
    rec.fail("tensor_parallel", "a divisor of device_count " + std::to_string(row.device_count),
             rec.got("tensor_parallel"));
  }
  if (row.device_kind == "cpu" && row.device_count != 1) {
    rec.fail("device_count", "1 on a CPU row (cores_used says how many cores)",
             rec.got("device_count"));
  }
  row.cores_used =
      static_cast<int>(rec.has_value("cores_used") ? rec.positive_int("cores_used") : 0);
  row.model = rec.non_empty_string("model");
  row.weight_format = rec.non_empty_string("weight_format");
  model::parse_weight_format(row.weight_format,
                             r.file() + ": row \"" + row.id + "\": field \"weight_format\"");
  row.kv_format = rec.non_empty_string("kv_format");
  model::parse_kv_format(row.kv_format, r.file() + ": row \"" + row.id + "\": field \"kv_format\"");
  const int loads = int{rec.has_value("batch")} + int{rec.has_value("offline_requests")} +
                    int{rec.has_value("concurrency")} + int{rec.has_value("request_rate_per_s")};
  if (loads != 1) {
    rec.fail("batch", "exactly one of batch, offline_requests, concurrency, request_rate_per_s",
             std::to_string(loads) + " of them");
  }
  row.batch = rec.has_value("batch") ? rec.positive_int("batch") : 0;
  row.offline_requests =
      rec.has_value("offline_requests") ? rec.positive_int("offline_requests") : 0;
  row.concurrency = rec.has_value("concurrency") ? rec.positive_int("concurrency") : 0;
  row.request_rate_per_s =
      rec.has_value("request_rate_per_s") ? rec.positive_number("request_rate_per_s") : 0;
  row.num_requests =
      rec.has_value("num_requests") ? rec.positive_int("num_requests") : kDefaultRateRequests;
  row.prompt_tokens = rec.positive_int("prompt_tokens");
  row.output_tokens = rec.positive_int("output_tokens");
  row.metric = one_of(rec, "metric", kMetrics);
  if (row.metric == "throughput") {
    row.statistic = one_of(rec, "statistic", {"total"});
  } else {
    row.statistic = one_of(rec, "statistic", kTimeStatistics);
  }
  if (row.metric == "tpot" && row.output_tokens < 2) {
    rec.fail("output_tokens", "at least 2 for a tpot row", rec.got("output_tokens"));
  }
  row.published = rec.positive_number("published");
  row.source = rec.non_empty_string("source");
  row.as_of = rec.non_empty_string("as_of");
  return row;
}

/// The time statistic `name` of `values` (seconds).
double statistic_of(const std::vector<double>& values, const std::string& name) {
  if (values.empty()) return 0;
  if (name == "mean") {
    double sum = 0;
    for (double v : values) sum += v;
    return sum / static_cast<double>(values.size());
  }
  if (name == "median") return base::midpoint_median(values);
  if (name == "p90") return base::nearest_rank_quantile(values, 0.90);
  return base::nearest_rank_quantile(values, 0.99);
}

/// The deployment of one row: GPU rows on device_count GPUs at the row's tensor-parallel
/// degree; CPU rows on cores_used cores (whole sockets at tp = sockets beyond one socket).
model::Deployment row_deployment(const PublishedRow& row, const model::Catalog& catalog,
                                 const model::ModelSpec& spec, const model::Efficiency& eff,
                                 model::WeightFormat wf, model::KvFormat kv,
                                 const model::EngineProfile* engine) {
  const model::HardwareSpec& hw = catalog.hardware(row.hardware, "published row " + row.id);
  model::InstanceType inst;
  inst.id = "published:" + row.id;
  if (hw.kind == model::DeviceKind::kGpu) {
    inst.kind = model::DeviceKind::kGpu;
    inst.gpu_id = hw.id;
    inst.num_gpus = row.device_count;
    return model::make_deployment_at_tp(inst, catalog, spec, wf, kv, eff, row.tensor_parallel);
  }
  inst.kind = model::DeviceKind::kCpu;
  inst.cpu_id = hw.id;
  const int cores = row.cores_used > 0 ? row.cores_used : hw.num_cores;
  const int sockets = (cores + hw.num_cores - 1) / hw.num_cores;
  inst.vcpus = (sockets > 1 ? sockets * hw.num_cores : cores) * hw.threads_per_core;
  inst.memory_bytes = kCpuHostMemoryBytes * sockets;
  model::Deployment d =
      sockets > 1 ? model::make_deployment_at_tp(inst, catalog, spec, wf, kv, eff, sockets)
                  : model::make_deployment(inst, catalog, spec, wf, kv, eff);
  if (engine != nullptr) {
    // The CPU model: each socket's cores pull min(cores x per-core, socket) and compute on
    // the engine's instruction path.
    // A published benchmark ran on a machine of its own: the whole socket's memory system.
    model::apply_cpu_model(d, hw, sockets > 1 ? hw.num_cores : cores, engine->cpu_path,
                           engine->compute_fraction.value, 1.0);
  }
  return d;
}

/// The benchmark's requests: `batch` at t = 0, a closed loop, or Poisson arrivals.
sim::Workload row_workload(const PublishedRow& row, const model::StepTimePredictor& predictor,
                           uint64_t seed) {
  sim::Workload w;
  const sim::LengthSample lengths{row.prompt_tokens, row.output_tokens};
  if (row.batch > 0 || row.offline_requests > 0) {
    for (int64_t i = 0; i < row.batch + row.offline_requests; ++i) {
      w.open_loop.push_back({sim::SimTime::Zero(), row.prompt_tokens, row.output_tokens, 0});
    }
  } else if (row.concurrency > 0) {
    // Long enough for each user to send about kClosedLoopRequestsPerUser requests at the
    // uncontended request time of a full batch of decodes.
    model::BatchShape prefill;
    prefill.num_prefill_seqs = 1;
    prefill.num_prefill_tokens = row.prompt_tokens;
    prefill.num_prefill_attention_pairs = row.prompt_tokens * (row.prompt_tokens + 1) / 2;
    prefill.num_prefill_seqs_completing = 1;
    model::BatchShape decode;
    decode.num_decode_seqs = row.concurrency;
    decode.num_decode_context_tokens =
        row.concurrency * (row.prompt_tokens + row.output_tokens / 2);
    const double request_s = predictor.step_time_s(prefill) * static_cast<double>(row.concurrency) +
                             predictor.step_time_s(decode) * static_cast<double>(row.output_tokens);
    sim::ClosedLoopWorkload loop;
    loop.num_users = row.concurrency;
    loop.think_time_s = 0;
    loop.duration_s = request_s * (row.requests_per_user > 0 ? row.requests_per_user
                                                             : kClosedLoopRequestsPerUser);
    loop.lengths = {lengths};
    w.closed_loop = loop;
  } else {
    w.open_loop = sim::poisson_arrivals(row.request_rate_per_s, row.num_requests, {lengths}, seed);
  }
  return w;
}

/// The row's figure from the simulated records.
double figure_of(const PublishedRow& row, const sim::SimResult& result) {
  std::vector<double> values;
  int64_t output_tokens = 0;
  sim::SimTime first = sim::SimTime::Max(), last = sim::SimTime::Zero();
  for (const sim::RequestRecord& rec : result.requests) {
    if (rec.rejected) continue;
    output_tokens += rec.num_output_tokens;
    first = std::min(first, rec.arrival);
    last = std::max(last, rec.completion);
    if (row.metric == "ttft") {
      values.push_back((rec.first_token - rec.arrival).seconds());
    } else if (row.metric == "tpot" && rec.num_output_tokens >= 2) {
      values.push_back((rec.completion - rec.first_token).seconds() /
                       static_cast<double>(rec.num_output_tokens - 1));
    }
  }
  if (row.metric == "throughput") {
    const double span_s = (last - first).seconds();
    return span_s > 0 ? static_cast<double>(output_tokens) / span_s : 0;
  }
  return statistic_of(values, row.statistic);
}

/// The error statistics of `members`: rows, median and p90 of |error| (nearest rank), the share
/// within 25%, and the largest factor between predicted and published.
struct ErrorStats {
  int64_t rows = 0;
  double median_abs_error = 0;
  double p90_abs_error = 0;
  double within_25_fraction = 0;
  double worst_factor = 1;
};

ErrorStats error_stats(const std::vector<const PublishedPrediction*>& members) {
  ErrorStats s;
  std::vector<double> errors;
  int64_t within = 0;
  for (const PublishedPrediction* p : members) {
    errors.push_back(p->error);
    if (std::abs(p->error) <= 0.25) ++within;
    if (p->predicted > 0) {
      s.worst_factor = std::max(s.worst_factor, std::max(p->predicted / p->row->published,
                                                         p->row->published / p->predicted));
    }
  }
  s.rows = static_cast<int64_t>(errors.size());
  s.median_abs_error = base::abs_nearest_rank_quantile(errors, 0.5);
  s.p90_abs_error = base::abs_nearest_rank_quantile(errors, 0.9);
  s.within_25_fraction =
      s.rows > 0 ? static_cast<double>(within) / static_cast<double>(s.rows) : 0.0;
  return s;
}

}  // namespace

PublishedSet read_published(const std::filesystem::path& file, const model::Catalog& catalog) {
  PublishedSet set;
  set.file = file;
  const nlohmann::json doc = base::read_json_file(file);
  if (!doc.is_object()) throw base::InputError::bad_document(file.string(), "a JSON object");
  const base::JsonReader top(doc, file.string(), "");
  top.only({"source", "as_of", "note", "rows"});
  top.non_empty_string("source");
  top.non_empty_string("as_of");
  if (!top.at("rows").is_array() || top.at("rows").empty()) {
    top.fail("rows", "a non-empty array of rows", top.got("rows"));
  }
  std::set<std::string> ids;
  for (size_t i = 0; i < top.at("rows").size(); ++i) {
    PublishedRow row = read_row(top.element("rows", i), catalog);
    if (!ids.insert(row.id).second) {
      top.element("rows", i).fail("id", "an id not used by an earlier row", "\"" + row.id + "\"");
    }
    set.rows.push_back(std::move(row));
  }
  return set;
}

PublishedSimulation simulate_published_row(const PublishedRow& row, const model::ModelSpec& spec,
                                           const model::Catalog& catalog,
                                           const model::EngineProfile* engine, uint64_t seed) {
  const model::WeightFormat wf = model::parse_weight_format(row.weight_format, row.id);
  const model::KvFormat kv = model::parse_kv_format(row.kv_format, row.id);
  const model::HardwareSpec& hw = catalog.hardware(row.hardware, "published row " + row.id);
  const model::Efficiency eff =
      engine != nullptr ? model::engine_efficiency(*engine, model::default_efficiency(hw.kind))
                        : model::default_efficiency(hw.kind);
  const model::Deployment dep = row_deployment(row, catalog, spec, eff, wf, kv, engine);
  const std::shared_ptr<const model::StepTimePredictor> predictor =
      model::make_step_time_predictor(spec, wf, kv, dep, eff);

  sim::FleetConfig fleet;
  fleet.num_replicas = dep.num_replicas;
  if (engine != nullptr) {
    fleet.serving.policy =
        sim::parse_batching_policy(engine->scheduler.policy, engine->file.string() + ": scheduler");
    fleet.serving.max_num_seqs = engine->scheduler.max_num_seqs;
    fleet.serving.max_num_batched_tokens = engine->scheduler.max_num_batched_tokens;
    fleet.frontend_latency = sim::SimTime::Seconds(engine->frontend_latency_s.value);
  }
  if (row.batch > 0) {
    fleet.serving.max_num_seqs = row.batch;
    fleet.serving.max_num_batched_tokens =
        std::max(fleet.serving.max_num_batched_tokens, row.batch);
  }
  fleet.serving.num_kv_blocks =
      dep.kv_cache_bytes / (spec.kv_cache_bytes_per_token(kv) * fleet.serving.block_size_tokens);
  const sim::Workload workload = row_workload(row, *predictor, seed);
  sim::SimOptions sim_options;
  sim_options.record_itl_ns = false;
  PublishedSimulation out;
  out.result = sim::simulate(workload, fleet, *predictor, seed, sim_options);
  out.predictor = (engine != nullptr ? "engine " + engine->id : std::string("datasheet defaults")) +
                  "; " + dep.rule;
  return out;
}

double published_figure(const PublishedRow& row, const sim::SimResult& result) {
  return figure_of(row, result);
}

std::vector<PublishedPrediction> predict_published(const PublishedSet& set,
                                                   const model::Catalog& catalog,
                                                   const std::filesystem::path& data_dir,
                                                   const PublishedOptions& options) {
  const uint64_t seed = options.seed;
  // Every row's model and engine first, in order (the first bad row is the one named); then
  // the simulations, each row's own, in parallel.
  std::map<std::string, model::ModelSpec> specs;
  std::vector<const model::ModelSpec*> row_specs;
  std::vector<const model::EngineProfile*> row_engines;
  for (const PublishedRow& row : set.rows) {
    auto it = specs.find(row.model);
    if (it == specs.end()) {
      const std::filesystem::path path = data_dir / "models" / (row.model + ".json");
      if (!std::filesystem::exists(path)) {
        throw base::InputError::bad_record_field(set.file.string(), "row \"" + row.id + "\"",
                                                 "model", "\"" + row.model + "\"",
                                                 "a model with a file " + path.string());
      }
      it = specs.emplace(row.model, model::load_model_spec(path)).first;
    }
    row_specs.push_back(&it->second);
    const model::HardwareSpec& hw = catalog.hardware(row.hardware, "published row " + row.id);
    const model::EngineProfile* engine = nullptr;
    if (options.use_engines) {
      engine = &model::find_engine(
          catalog, row.engine, set.file.string() + ": row \"" + row.id + "\": field \"engine\"");
      if (engine->kind != hw.kind) {
        throw base::InputError::bad_record_field(
            set.file.string(), "row \"" + row.id + "\"", "engine", "\"" + row.engine + "\"",
            "an engine profile for a " + row.device_kind + " (its profile is for a " +
                std::string(model::to_string(engine->kind)) + ")");
      }
    }
    row_engines.push_back(engine);
  }
  std::vector<PublishedPrediction> out(set.rows.size());
  base::parallel_for(set.rows.size(), options.num_threads, [&](size_t i) {
    const PublishedRow& row = set.rows[i];
    PublishedPrediction& p = out[i];
    p.row = &row;
    const PublishedSimulation sim =
        simulate_published_row(row, *row_specs[i], catalog, row_engines[i], seed);
    p.predicted = figure_of(row, sim.result);
    p.predictor = sim.predictor;
    p.error = base::relative_error(p.predicted, row.published);
  });
  return out;
}

std::vector<PublishedSummary> summarize_published(
    const std::vector<PublishedPrediction>& predictions) {
  std::map<std::tuple<std::string, std::string, std::string>,
           std::vector<const PublishedPrediction*>>
      groups;
  for (const PublishedPrediction& p : predictions) {
    groups[{p.row->device_kind, p.row->metric, p.row->split}].push_back(&p);
  }
  std::vector<PublishedSummary> out;
  for (const auto& [key, members] : groups) {
    PublishedSummary s;
    std::tie(s.device_kind, s.metric, s.split) = key;
    const ErrorStats e = error_stats(members);
    s.rows = e.rows;
    s.median_abs_error = e.median_abs_error;
    s.p90_abs_error = e.p90_abs_error;
    s.within_25_fraction = e.within_25_fraction;
    s.worst_factor = e.worst_factor;
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<PublishedTarget> published_targets(
    const std::vector<PublishedPrediction>& predictions) {
  const auto measure = [&](const std::string& what, const std::string& goal, auto&& member) {
    std::vector<const PublishedPrediction*> members;
    for (const PublishedPrediction& p : predictions) {
      if (p.row->split == "held_out" && member(*p.row)) members.push_back(&p);
    }
    const ErrorStats e = error_stats(members);
    PublishedTarget t;
    t.what = what;
    t.goal = goal;
    t.rows = e.rows;
    t.median_abs_error = e.median_abs_error;
    t.within_25_fraction = e.within_25_fraction;
    t.worst_factor = e.worst_factor;
    return t;
  };
  std::vector<PublishedTarget> out;
  PublishedTarget decode =
      measure("tpot + throughput, held_out", "median |error| <= 10%, >= 85% of rows within 25%",
              [](const PublishedRow& r) { return r.metric != "ttft"; });
  decode.met =
      decode.rows > 0 && decode.median_abs_error <= 0.10 && decode.within_25_fraction >= 0.85;
  out.push_back(decode);
  PublishedTarget ttft =
      measure("ttft, held_out", "median |error| <= 20%, >= 70% of rows within 25%",
              [](const PublishedRow& r) { return r.metric == "ttft"; });
  ttft.met = ttft.rows > 0 && ttft.median_abs_error <= 0.20 && ttft.within_25_fraction >= 0.70;
  out.push_back(ttft);
  PublishedTarget cpu_prefill =
      measure("cpu ttft, held_out", "no row off by more than 2x",
              [](const PublishedRow& r) { return r.metric == "ttft" && r.device_kind == "cpu"; });
  cpu_prefill.met = cpu_prefill.rows > 0 && cpu_prefill.worst_factor <= 2.0;
  out.push_back(cpu_prefill);
  return out;
}

plan::MeasuredStepTimeErrors published_step_time_errors(const model::Catalog& catalog,
                                                        const std::filesystem::path& data_dir,
                                                        int num_threads) {
  plan::MeasuredStepTimeErrors out;
  const std::filesystem::path file = data_dir / "validation" / "published.json";
  if (!std::filesystem::exists(file)) return out;
  PublishedSet set = read_published(file, catalog);
  // Only the held-out step-time rows are used: the others are not simulated.
  std::erase_if(set.rows, [](const PublishedRow& row) {
    return row.split != "held_out" || row.metric == "throughput";
  });
  PublishedOptions options;
  options.num_threads = num_threads;
  const std::vector<PublishedPrediction> predictions =
      predict_published(set, catalog, data_dir, options);
  // |error| of the held-out step-time rows, by engine and by device kind.
  std::map<std::string, std::vector<double>> by_engine, by_kind;
  for (const PublishedPrediction& p : predictions) {
    by_engine[p.row->engine].push_back(p.error);
    by_kind[p.row->device_kind].push_back(p.error);
  }
  const auto describe = [&](const std::vector<double>& errors, const std::string& whose) {
    plan::MeasuredStepTimeError m;
    m.rows = static_cast<int64_t>(errors.size());
    m.p95_abs_error = base::abs_nearest_rank_quantile(errors, 0.95);
    m.source = "the p95 |error| (" + base::fixed(100 * m.p95_abs_error, 1) + "%) of " + whose +
               " on the " + std::to_string(m.rows) +
               " held-out TPOT and TTFT rows of the published measurements (docs/validation.md)";
    return m;
  };
  for (const model::EngineProfile* e : catalog.engines()) {
    const std::string kind(model::to_string(e->kind));
    const auto own = by_engine.find(e->id);
    if (own != by_engine.end() && static_cast<int64_t>(own->second.size()) >= kMinErrorRows) {
      out[{kind, e->id}] = describe(own->second, "engine " + e->id);
      continue;
    }
    const auto all = by_kind.find(kind);
    if (all != by_kind.end() && static_cast<int64_t>(all->second.size()) >= kMinErrorRows) {
      out[{kind, e->id}] =
          describe(all->second, "every " + kind + " engine (" + e->id + " has fewer than " +
                                    std::to_string(kMinErrorRows) + " rows of its own)");
    }
  }
  return out;
}

std::string published_json(const std::vector<PublishedPrediction>& predictions, bool use_engines) {
  nlohmann::ordered_json j;
  j["mode"] = use_engines ? "engines" : "datasheet";
  j["rows"] = nlohmann::ordered_json::array();
  for (const PublishedPrediction& p : predictions) {
    nlohmann::ordered_json r;
    r["id"] = p.row->id;
    r["split"] = p.row->split;
    r["device_kind"] = p.row->device_kind;
    r["engine"] = p.row->engine;
    r["metric"] = p.row->metric;
    r["published"] = p.row->published;
    r["predicted"] = p.predicted;
    r["source"] = p.row->source;
    j["rows"].push_back(std::move(r));
  }
  j["summary"] = nlohmann::ordered_json::array();
  for (const PublishedSummary& s : summarize_published(predictions)) {
    nlohmann::ordered_json r;
    r["device_kind"] = s.device_kind;
    r["metric"] = s.metric;
    r["split"] = s.split;
    r["rows"] = s.rows;
    r["median_abs_error"] = s.median_abs_error;
    r["p90_abs_error"] = s.p90_abs_error;
    r["within_25_fraction"] = s.within_25_fraction;
    r["worst_factor"] = s.worst_factor;
    j["summary"].push_back(std::move(r));
  }
  j["targets"] = nlohmann::ordered_json::array();
  for (const PublishedTarget& t : published_targets(predictions)) {
    nlohmann::ordered_json r;
    r["what"] = t.what;
    r["goal"] = t.goal;
    r["rows"] = t.rows;
    r["median_abs_error"] = t.median_abs_error;
    r["within_25_fraction"] = t.within_25_fraction;
    r["worst_factor"] = t.worst_factor;
    r["met"] = t.met;
    j["targets"].push_back(std::move(r));
  }
  return j.dump(2) + "\n";
}

}  // namespace llmcap::app
