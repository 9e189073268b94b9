#include "plan/planner.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "model/input_error.h"
#include "model/roofline.h"
#include "sim/simulator.h"

namespace llmcap::plan {
namespace {

std::string format_s(double seconds) {
  std::ostringstream o;
  o.precision(3);
  o << seconds << " s";
  return o.str();
}

/// Nearest-rank p99 of `values` (any order); 0 when empty.
int64_t p99_of(std::vector<int64_t> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(std::ceil(0.99 * static_cast<double>(values.size())));
  return values[std::max<size_t>(rank, 1) - 1];
}

WorkloadSummary summarize_workload(const sim::Workload& w, const WorkloadSpec& spec) {
  WorkloadSummary s;
  std::vector<int64_t> prompts;
  double sum_out = 0;
  if (w.closed_loop) {
    for (const auto& l : w.closed_loop->lengths) {
      prompts.push_back(l.num_prompt_tokens);
      sum_out += static_cast<double>(l.num_output_tokens);
    }
    s.span_s = spec.duration_s;
  } else {
    for (const auto& r : w.open_loop) {
      prompts.push_back(r.num_prompt_tokens);
      sum_out += static_cast<double>(r.num_output_tokens);
    }
    if (!w.open_loop.empty()) {
      s.span_s = (w.open_loop.back().arrival - w.open_loop.front().arrival).seconds();
    }
    s.num_requests = static_cast<int64_t>(w.open_loop.size());
  }
  if (!prompts.empty()) {
    double sum_in = 0;
    for (int64_t p : prompts) sum_in += static_cast<double>(p);
    s.mean_prompt_tokens = sum_in / static_cast<double>(prompts.size());
    s.mean_output_tokens = sum_out / static_cast<double>(prompts.size());
    s.p99_prompt_tokens = p99_of(std::move(prompts));
  }
  // Client classes (always an open loop): the requests of class c are those with
  // client_class == c.
  for (size_t c = 0; c < spec.classes.size(); ++c) {
    ClassWorkloadSummary cs;
    cs.name = spec.classes[c].name;
    std::vector<int64_t> class_prompts;
    double class_in = 0;
    double class_out = 0;
    for (const auto& r : w.open_loop) {
      if (r.client_class != static_cast<int32_t>(c)) continue;
      class_prompts.push_back(r.num_prompt_tokens);
      class_in += static_cast<double>(r.num_prompt_tokens);
      class_out += static_cast<double>(r.num_output_tokens);
    }
    cs.num_requests = static_cast<int64_t>(class_prompts.size());
    if (cs.num_requests > 0) {
      cs.mean_prompt_tokens = class_in / static_cast<double>(cs.num_requests);
      cs.mean_output_tokens = class_out / static_cast<double>(cs.num_requests);
    }
    cs.p99_prompt_tokens = p99_of(std::move(class_prompts));
    s.classes.push_back(std::move(cs));
  }
  return s;
}

int64_t max_request_tokens(const sim::Workload& w) {
  int64_t m = 0;
  if (w.closed_loop) {
    for (const auto& l : w.closed_loop->lengths) {
      m = std::max(m, l.num_prompt_tokens + l.num_output_tokens);
    }
  } else {
    for (const auto& r : w.open_loop) m = std::max(m, r.num_prompt_tokens + r.num_output_tokens);
  }
  return m;
}

struct Context {
  const Scenario& scenario;
  const model::Catalog& catalog;
  const model::ModelSpec& model;
  const sim::Workload& workload;
  const WorkloadSummary& summary;
  int64_t max_request_tokens;
  const model::CalibrationProfile* calibration;
  /// Scenario::class_slos(): one per client class, or {scenario.slo} without classes.
  const std::vector<sim::Slo>& class_slos;

  bool has_classes() const { return !scenario.workload.classes.empty(); }
  /// " of class \"name\"" for a scenario with classes, "" without (messages).
  std::string of_class(size_t c) const {
    return has_classes() ? " of class \"" + scenario.workload.classes[c].name + "\"" : "";
  }
};

/// Roofline time of the prefill of one prompt of `num_tokens` tokens alone in a step.
double prefill_floor_s(const model::StepTimePredictor& predictor, int64_t num_tokens) {
  const int64_t p = std::max<int64_t>(num_tokens, 1);
  model::BatchShape prefill;
  prefill.num_prefill_seqs = 1;
  prefill.num_prefill_tokens = p;
  prefill.num_prefill_attention_pairs = p * (p + 1) / 2;
  prefill.num_prefill_seqs_completing = 1;
  return predictor.step_time_s(prefill);
}

/// One instance type made ready to simulate, or the reason it cannot serve the scenario.
struct Candidate {
  PlanRow row;  ///< identity, floors and deployment filled; infeasible_reason set on failure
  model::Deployment deployment;
  std::unique_ptr<model::RooflinePredictor> predictor;
  sim::FleetConfig fleet;

  bool ready() const { return row.infeasible_reason.empty(); }

  FleetEvaluation simulate(const Context& ctx, int64_t num_instances) {
    fleet.num_replicas = num_instances * deployment.num_replicas;
    ++row.num_simulations;
    const sim::SimResult result = sim::simulate(ctx.workload, fleet, *predictor, ctx.scenario.seed);
    FleetEvaluation e;
    e.metrics = sim::compute_metrics(result, ctx.scenario.slo);
    e.classes = sim::compute_class_metrics(result, ctx.workload, ctx.class_slos);
    return e;
  }

  /// Copies the per-class metrics of `e` into the row (scenarios with classes).
  void keep_class_metrics(const FleetEvaluation& e) {
    for (size_t c = 0; c < row.classes.size() && c < e.classes.size(); ++c) {
      row.classes[c].metrics = e.classes[c];
    }
  }
};

Candidate prepare(const Context& ctx, const model::InstanceType& instance) {
  const Scenario& sc = ctx.scenario;
  Candidate c;
  PlanRow& row = c.row;
  row.instance_type = instance.id;
  row.provider = instance.provider;
  row.instance_name = instance.name;
  row.device_kind = instance.kind;
  row.instance_usd_per_hour = instance.usd_per_hour;
  row.price_model = instance.price_model;
  row.instance_note = instance.note;
  for (const ClientClassSpec& spec : sc.workload.classes) {
    ClassRow cr;
    cr.name = spec.name;
    cr.slo = spec.slo;
    row.classes.push_back(std::move(cr));
  }
  if (instance.kind == model::DeviceKind::kGpu) {
    const auto& gpu = ctx.catalog.hardware(instance.gpu_id, instance.id);
    row.hardware_name = std::to_string(instance.num_gpus) + " x " + gpu.name;
  } else {
    row.hardware_name = ctx.catalog.hardware(instance.cpu_id, instance.id).name + ", " +
                        std::to_string(instance.vcpus) + " vCPU";
  }

  model::Efficiency efficiency = model::default_efficiency(instance.kind);
  try {
    c.deployment = model::make_deployment(instance, ctx.catalog, ctx.model, sc.weight_format,
                                          sc.kv_format, efficiency);
  } catch (const model::InfeasibleError& e) {
    row.infeasible_reason = e.what();
    return c;
  }
  row.deployment_rule = c.deployment.rule;
  row.predictor = "roofline (datasheet defaults)";
  if (ctx.calibration != nullptr && instance.kind == model::DeviceKind::kCpu) {
    const model::HardwareSpec& cpu = ctx.catalog.hardware(instance.cpu_id, instance.id);
    const double share =
        c.deployment.memory_bandwidth_bytes_per_s / cpu.peak_memory_bandwidth_bytes_per_s;
    efficiency = model::transfer_efficiency(*ctx.calibration, cpu, std::min(1.0, share));
    row.predictor = "calibrated: " + efficiency.calibrated->source;
  }
  row.num_replicas_per_instance = c.deployment.num_replicas;
  row.tp_degree = c.deployment.tp_degree;

  c.predictor = std::make_unique<model::RooflinePredictor>(ctx.model, sc.weight_format,
                                                           sc.kv_format, c.deployment, efficiency);
  const int64_t kv_bytes_per_token = ctx.model.kv_cache_bytes_per_token(sc.kv_format);
  c.fleet.serving = sc.serving;
  c.fleet.router = sc.router;
  c.fleet.serving.num_kv_blocks =
      c.deployment.kv_cache_bytes / (kv_bytes_per_token * sc.serving.block_size_tokens);

  model::BatchShape decode1;
  decode1.num_decode_seqs = 1;
  decode1.num_decode_context_tokens = 1;
  row.tpot_floor_s = c.predictor->step_time_s(decode1);
  row.ttft_floor_s = prefill_floor_s(*c.predictor, ctx.summary.p99_prompt_tokens);

  // The TPOT floor against every class's bound, then each class's p99 prompt against its own
  // TTFT bound (without classes: the workload's p99 prompt against Scenario::slo).
  for (size_t k = 0; k < ctx.class_slos.size(); ++k) {
    if (row.tpot_floor_s > ctx.class_slos[k].tpot_s) {
      row.infeasible_reason = "TPOT floor at batch 1 is " + format_s(row.tpot_floor_s) + " > SLO " +
                              format_s(ctx.class_slos[k].tpot_s) + ctx.of_class(k) + " (" +
                              c.deployment.rule + ")";
      return c;
    }
  }
  for (size_t k = 0; k < ctx.class_slos.size(); ++k) {
    int64_t p = ctx.summary.p99_prompt_tokens;
    double floor_s = row.ttft_floor_s;
    if (ctx.has_classes()) {
      if (ctx.summary.classes[k].num_requests == 0) continue;  // nothing to serve
      p = ctx.summary.classes[k].p99_prompt_tokens;
      floor_s = prefill_floor_s(*c.predictor, p);
      row.classes[k].ttft_floor_s = floor_s;
    }
    if (floor_s > ctx.class_slos[k].ttft_s) {
      row.infeasible_reason = "TTFT floor for the p99 prompt" + ctx.of_class(k) + " (" +
                              std::to_string(std::max<int64_t>(p, 1)) +
                              " tokens, prefilled alone) is " + format_s(floor_s) + " > SLO " +
                              format_s(ctx.class_slos[k].ttft_s);
      return c;
    }
  }
  const int64_t needed_blocks =
      (ctx.max_request_tokens + sc.serving.block_size_tokens - 1) / sc.serving.block_size_tokens;
  if (c.fleet.serving.num_kv_blocks < needed_blocks) {
    row.infeasible_reason =
        "the longest request (" + std::to_string(ctx.max_request_tokens) + " tokens) needs " +
        std::to_string(needed_blocks * sc.serving.block_size_tokens * kv_bytes_per_token) +
        " bytes of KV cache, a replica has " + std::to_string(c.deployment.kv_cache_bytes);
  }
  return c;
}

/// What a fleet that fails meets_class_slos misses. Without classes: "p99 TTFT x s, p99 TPOT
/// y s". With classes: each class that misses its SLO, e.g. `class "chat": p99 TTFT 3.1 s
/// (SLO 2 s), p99 TPOT 0.04 s (SLO 0.05 s)`, joined by "; ", with its rejected requests.
std::string slo_miss_text(const Context& ctx, const FleetEvaluation& e) {
  if (!ctx.has_classes()) {
    return "p99 TTFT " + format_s(e.metrics.ttft.p99_s) + ", p99 TPOT " +
           format_s(e.metrics.tpot.p99_s);
  }
  std::string text;
  for (size_t k = 0; k < e.classes.size() && k < ctx.class_slos.size(); ++k) {
    const sim::Metrics& m = e.classes[k];
    const sim::Slo& slo = ctx.class_slos[k];
    if (m.num_rejected == 0 && m.ttft.p99_s <= slo.ttft_s && m.tpot.p99_s <= slo.tpot_s) continue;
    text += (text.empty() ? "" : "; ") + std::string("class \"") +
            ctx.scenario.workload.classes[k].name + "\": p99 TTFT " + format_s(m.ttft.p99_s) +
            " (SLO " + format_s(slo.ttft_s) + "), p99 TPOT " + format_s(m.tpot.p99_s) + " (SLO " +
            format_s(slo.tpot_s) + ")";
    if (m.num_rejected > 0) text += ", " + std::to_string(m.num_rejected) + " rejected";
  }
  if (text.empty()) {  // no class misses: nothing completed
    text = std::to_string(e.metrics.num_completed) + " of " +
           std::to_string(e.metrics.num_requests) + " requests completed";
  }
  return text;
}

PlanRow plan_one(const Context& ctx, const model::InstanceType& instance) {
  const Scenario& sc = ctx.scenario;
  Candidate c = prepare(ctx, instance);
  if (!c.ready()) return std::move(c.row);
  PlanRow& row = c.row;

  // Double until the SLO holds, then bisect between the last failing and first passing size.
  int64_t failing = 0;
  int64_t passing = 1;
  FleetEvaluation best = c.simulate(ctx, passing);
  while (!meets_class_slos(best, ctx.class_slos)) {
    if (passing >= sc.max_instances) {
      row.infeasible_reason =
          "SLO not met with " + std::to_string(passing) +
          " instances (the scenario's max_instances): " + slo_miss_text(ctx, best);
      row.metrics = best.metrics;
      c.keep_class_metrics(best);
      return std::move(row);
    }
    failing = passing;
    passing = std::min(passing * 2, sc.max_instances);
    best = c.simulate(ctx, passing);
  }
  while (passing - failing > 1) {
    const int64_t mid = failing + (passing - failing) / 2;
    FleetEvaluation m = c.simulate(ctx, mid);
    if (meets_class_slos(m, ctx.class_slos)) {
      passing = mid;
      best = std::move(m);
    } else {
      failing = mid;
    }
  }

  row.feasible = true;
  row.num_instances = passing;
  row.metrics = best.metrics;
  c.keep_class_metrics(best);
  row.usd_per_hour = static_cast<double>(passing) * instance.usd_per_hour;
  row.annual_usd = row.usd_per_hour * sc.hours_per_year;
  const double tokens_per_hour = best.metrics.throughput_output_tokens_per_s * 3600.0;
  row.usd_per_million_output_tokens =
      tokens_per_hour > 0 ? row.usd_per_hour / tokens_per_hour * 1e6 : 0.0;
  return std::move(row);
}

}  // namespace

bool meets_slo(const sim::Metrics& metrics, const sim::Slo& slo) {
  return metrics.num_rejected == 0 && metrics.num_completed > 0 &&
         metrics.ttft.p99_s <= slo.ttft_s && metrics.tpot.p99_s <= slo.tpot_s;
}

bool meets_class_slos(const FleetEvaluation& fleet, const std::vector<sim::Slo>& class_slos) {
  if (fleet.classes.size() != class_slos.size()) {
    throw InputError("meets_class_slos: metrics of " + std::to_string(fleet.classes.size()) +
                     " client classes, SLOs of " + std::to_string(class_slos.size()) +
                     "; expected one SLO per class");
  }
  if (fleet.metrics.num_rejected != 0 || fleet.metrics.num_completed == 0) return false;
  for (size_t c = 0; c < class_slos.size(); ++c) {
    const sim::Metrics& m = fleet.classes[c];
    if (m.num_rejected != 0 || m.ttft.p99_s > class_slos[c].ttft_s ||
        m.tpot.p99_s > class_slos[c].tpot_s) {
      return false;
    }
  }
  return true;
}

FleetEvaluation evaluate_fleet(const Scenario& scenario, const model::Catalog& catalog,
                               const std::string& instance_type, int64_t num_instances,
                               const model::CalibrationProfile* calibration) {
  const model::ModelSpec model = model::load_model_spec(scenario.model_config);
  const sim::Workload workload = load_workload(scenario.workload, scenario.seed);
  const WorkloadSummary summary = summarize_workload(workload, scenario.workload);
  const std::vector<sim::Slo> class_slos = scenario.class_slos();
  const Context ctx{.scenario = scenario,
                    .catalog = catalog,
                    .model = model,
                    .workload = workload,
                    .summary = summary,
                    .max_request_tokens = max_request_tokens(workload),
                    .calibration = calibration,
                    .class_slos = class_slos};
  const model::InstanceType& instance =
      catalog.instance(instance_type, scenario.file.string() + ": instance type");
  Candidate c = prepare(ctx, instance);
  if (c.predictor == nullptr) throw model::InfeasibleError(c.row.infeasible_reason);
  return c.simulate(ctx, num_instances);
}

PlanResult plan(const Scenario& scenario, const model::Catalog& catalog,
                const PlanOptions& options) {
  const model::ModelSpec model = model::load_model_spec(scenario.model_config);

  std::vector<const model::InstanceType*> candidates;
  if (scenario.candidates.empty()) {
    for (const auto& i : catalog.instances()) candidates.push_back(&i);
  } else {
    for (const auto& id : scenario.candidates) {
      const model::InstanceType* i = catalog.find_instance(id);
      if (i == nullptr) {
        std::string known;
        for (const auto& k : catalog.instances()) known += (known.empty() ? "" : ", ") + k.id;
        throw InputError(scenario.file.string() +
                         ": field \"candidates\": unknown instance type \"" + id +
                         "\"; known: " + known);
      }
      candidates.push_back(i);
    }
  }

  const sim::Workload workload = load_workload(scenario.workload, scenario.seed);
  PlanResult result;
  result.model_id = model.id;
  result.model_num_params = model.num_params();
  result.workload = summarize_workload(workload, scenario.workload);
  const std::vector<sim::Slo> class_slos = scenario.class_slos();
  const Context ctx{.scenario = scenario,
                    .catalog = catalog,
                    .model = model,
                    .workload = workload,
                    .summary = result.workload,
                    .max_request_tokens = max_request_tokens(workload),
                    .calibration = options.calibration,
                    .class_slos = class_slos};

  result.rows.resize(candidates.size());
  std::atomic<size_t> next{0};
  std::mutex observer_mutex;
  size_t num_done = 0;
  std::exception_ptr failure;
  auto worker = [&] {
    for (size_t i = next++; i < candidates.size(); i = next++) {
      try {
        result.rows[i] = plan_one(ctx, *candidates[i]);
      } catch (...) {
        const std::lock_guard lock(observer_mutex);
        if (!failure) failure = std::current_exception();
        return;
      }
      const std::lock_guard lock(observer_mutex);
      ++num_done;
      if (options.observer != nullptr) {
        options.observer->on_row_done(result.rows[i], num_done, candidates.size());
      }
    }
  };
  int num_threads = options.num_threads > 0
                        ? options.num_threads
                        : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  num_threads =
      std::min<int>(num_threads, static_cast<int>(std::max<size_t>(candidates.size(), 1)));
  std::vector<std::thread> threads;
  for (int t = 1; t < num_threads; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  if (failure) std::rethrow_exception(failure);
  return result;
}

}  // namespace llmcap::plan
