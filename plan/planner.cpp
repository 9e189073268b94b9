#include "plan/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <numeric>
#include <sstream>

#include "base/text.h"
#include "model/calibrated_predictor.h"
#include "model/cpu_model.h"
#include "model/engine_profile.h"
#include "model/expert_parallel.h"
#include "model/input_error.h"
#include "model/roofline.h"
#include "model/speculative.h"
#include "plan/candidates.h"
#include "plan/fleet_over_day.h"
#include "plan/planner_detail.h"
#include "plan/search.h"
#include "sim/simulator.h"

namespace llmcap::plan {
namespace detail {

std::string format_s(double seconds) { return base::significant(seconds, 3) + " s"; }

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
    std::vector<double> offsets_s;
    offsets_s.reserve(w.open_loop.size());
    for (const auto& r : w.open_loop) offsets_s.push_back(r.arrival.seconds());
    s.hourly_requests_per_s = hourly_requests_per_s(offsets_s);
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

}  // namespace detail

namespace {

using base::gb;
using base::gb_per_s;
using base::plural;

using model::socket_threads_of;  // model/deployment.h: the placement rules
using model::whole_sockets_of;

}  // namespace

std::vector<int> tp_options(const model::InstanceType& instance, const model::Catalog& catalog,
                            const model::ModelSpec& model) {
  std::vector<int> options;
  int devices = 1;
  bool link = true;
  if (instance.kind == model::DeviceKind::kGpu) {
    devices = std::max(1, instance.num_gpus);
  } else {
    const model::HardwareSpec& cpu = catalog.hardware(instance.cpu_id, instance.id);
    devices = std::max(1, whole_sockets_of(instance, cpu));
    link = cpu.socket_link_bandwidth_bytes_per_s > 0;
  }
  for (int tp = 1; tp <= devices; ++tp) {
    if (devices % tp != 0 || model.num_attention_heads % tp != 0) continue;
    if (tp > 1 && !link) continue;
    options.push_back(tp);
  }
  return options;
}

std::string tp_refusal(const model::InstanceType& instance, const model::Catalog& catalog,
                       const model::ModelSpec& model, int tp_degree) {
  const std::string tp = "tp " + std::to_string(tp_degree);
  if (tp_degree < 1) return tp + " is not a degree (at least 1 device per replica)";
  if (instance.kind == model::DeviceKind::kGpu) {
    const model::HardwareSpec& gpu = catalog.hardware(instance.gpu_id, instance.id);
    if (tp_degree > instance.num_gpus) {
      return tp + " is larger than the instance's " + plural(instance.num_gpus, "GPU") + " (" +
             gpu.name + ")";
    }
    if (instance.num_gpus % tp_degree != 0) {
      return tp + " does not divide the instance's " + plural(instance.num_gpus, "GPU") +
             " (a replica takes tp whole GPUs)";
    }
  } else {
    const model::HardwareSpec& cpu = catalog.hardware(instance.cpu_id, instance.id);
    const int sockets = whole_sockets_of(instance, cpu);
    if (sockets == 0 && tp_degree > 1) {
      return tp + " is larger than the instance's 1 socket (a " + std::to_string(instance.vcpus) +
             "-vCPU slice of one " + std::to_string(socket_threads_of(instance, cpu)) + "-vCPU " +
             cpu.name + " socket)";
    }
    if (sockets > 0 && tp_degree > sockets) {
      return tp + " is larger than the instance's " + plural(sockets, "socket") + " (" + cpu.name +
             ")";
    }
    if (sockets > 0 && sockets % tp_degree != 0) {
      return tp + " does not divide the instance's " + plural(sockets, "socket") +
             " (a replica takes tp whole sockets)";
    }
    if (tp_degree > 1 && !(cpu.socket_link_bandwidth_bytes_per_s > 0)) {
      return tp + " all-reduces over the inter-socket link of \"" + cpu.id +
             "\", which hardware/cpus.json does not give (field \"socket_link\")";
    }
  }
  if (model.num_attention_heads % tp_degree != 0) {
    return tp + " does not divide the model's " + std::to_string(model.num_attention_heads) +
           " attention heads";
  }
  return "";
}

model::Deployment deployment_for_tp(const model::InstanceType& instance,
                                    const model::Catalog& catalog, const model::ModelSpec& model,
                                    model::WeightFormat weight_format, model::KvFormat kv_format,
                                    const model::Efficiency& efficiency, int tp_degree) {
  if (tp_degree == 0 || (tp_degree == 1 && instance.kind == model::DeviceKind::kCpu)) {
    return model::make_deployment(instance, catalog, model, weight_format, kv_format, efficiency);
  }
  if (const std::string refusal = tp_refusal(instance, catalog, model, tp_degree);
      !refusal.empty()) {
    std::string known;
    for (const int tp : tp_options(instance, catalog, model)) {
      known += (known.empty() ? "" : ", ") + std::to_string(tp);
    }
    throw InputError("instance \"" + instance.id + "\": " + refusal +
                     "; expected one of: " + known);
  }
  // The degree make_deployment picks itself: its deployment, identical.
  try {
    model::Deployment automatic =
        model::make_deployment(instance, catalog, model, weight_format, kv_format, efficiency);
    if (automatic.tp_degree == tp_degree) return automatic;
  } catch (const model::InfeasibleError&) {
    // nothing fits at its degrees; the chosen one is checked below
  }
  return model::make_deployment_at_tp(instance, catalog, model, weight_format, kv_format,
                                      efficiency, tp_degree);
}

model::Efficiency tp_efficiency(model::Efficiency efficiency, const model::Deployment& deployment,
                                const model::HardwareSpec* cpu) {
  if (deployment.kind == model::DeviceKind::kCpu && deployment.tp_degree > 1 && cpu != nullptr) {
    efficiency.all_reduce_latency_s = 2.0 * (deployment.tp_degree - 1) * cpu->socket_link_latency_s;
  }
  return efficiency;
}

namespace detail {

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

FleetEvaluation evaluate(const Context& ctx, const sim::SimResult& result) {
  if (result.cancelled) throw Cancelled("planning cancelled: " + result.stop_reason);
  FleetEvaluation e;
  if (result.stopped_early) {
    e.stopped_early_reason = result.stop_reason;
    return e;
  }
  e.metrics = sim::compute_metrics(result, ctx.scenario.slo);
  e.classes = sim::compute_class_metrics(result, ctx.workload, ctx.class_slos);
  return e;
}

/// A predictor whose step times are another's times a factor (PlanOptions::step_time_scale).
class ScaledPredictor final : public model::StepTimePredictor {
 public:
  ScaledPredictor(std::shared_ptr<const model::StepTimePredictor> base, double scale)
      : base_(std::move(base)), scale_(scale) {}
  double step_time_s(const model::BatchShape& batch) const override {
    return scale_ * base_->step_time_s(batch);
  }
  std::unique_ptr<model::DecodeRunPricer> decode_run_pricer() const override {
    return std::make_unique<Pricer>(base_->decode_run_pricer(), scale_);
  }
  model::PredictorKind kind() const override { return base_->kind(); }

 private:
  /// The base's pricer, its times x the factor.
  class Pricer final : public model::DecodeRunPricer {
   public:
    Pricer(std::unique_ptr<model::DecodeRunPricer> base, double scale)
        : base_(std::move(base)), scale_(scale) {}
    void start(const model::BatchShape& first) override { base_->start(first); }
    double step_time_s(const model::BatchShape& batch) override {
      return scale_ * base_->step_time_s(batch);
    }

   private:
    std::unique_ptr<model::DecodeRunPricer> base_;
    double scale_;
  };
  std::shared_ptr<const model::StepTimePredictor> base_;
  double scale_;
};

/// The KV layout of `model` (sim::KvLayout) when some layers attend to a sliding window
/// (vLLM v1's hybrid KV-cache manager: a window layer keeps the blocks of its last w tokens):
/// per token, the full layers' bytes (`kv_bytes_per_token` on the replica less the window
/// layers') and each window's layers' bytes (2 x kv_heads x head_dim x element bytes per
/// layer), in units of their greatest common divisor, whose bytes go to `unit_bytes`. The
/// default layout (unit = kv_bytes_per_token) for a model without window layers.
sim::KvLayout kv_layout_for(const model::ModelSpec& model, model::KvFormat kv_format,
                            int64_t kv_bytes_per_token, int64_t block_size_tokens,
                            int64_t* unit_bytes) {
  sim::KvLayout layout;
  *unit_bytes = kv_bytes_per_token;
  if (!model.description) return layout;
  std::map<int64_t, int64_t> window_bytes;  // window tokens -> bytes per token
  const auto element = static_cast<int64_t>(model::bytes_per_element(kv_format));
  for (const model::LayerSpec& layer : model.description->layers) {
    const model::AttentionSpec& a = layer.attention;
    if (a.kind != model::AttentionKind::kSlidingWindow) continue;
    window_bytes[a.window_tokens] += 2 * a.num_kv_heads * a.head_dim * element;
  }
  if (window_bytes.empty()) return layout;
  int64_t full = kv_bytes_per_token;
  for (const auto& [w, bytes] : window_bytes) full -= bytes;
  int64_t unit = full;
  for (const auto& [w, bytes] : window_bytes) unit = std::gcd(unit, bytes);
  layout.full_units_per_block = full / unit;
  for (const auto& [w, bytes] : window_bytes) {
    // The blocks a window of w tokens spans at most: the last w - 1 tokens and the current one.
    const int64_t blocks = (w - 1 + block_size_tokens - 1) / block_size_tokens + 1;
    layout.windows.push_back({blocks, bytes / unit});
  }
  *unit_bytes = unit;
  return layout;
}

/// KV offload on a replica of `instance` deployed as `d` (Scenario::kv_offload_bytes): the
/// instance's host bytes split evenly over its replicas, in blocks of `block_bytes` (the
/// replica's KV block), loaded over its tp_degree GPUs' host links at once. Off on CPU
/// instances, without prefix caching, or with sliding-window layers (no prefix cache there).
sim::KvOffloadConfig kv_offload_for(const Scenario& sc, const model::InstanceType& instance,
                                    const model::Catalog& catalog, const model::Deployment& d,
                                    const sim::ServingConfig& serving, int64_t block_bytes) {
  sim::KvOffloadConfig offload;
  if (sc.kv_offload_bytes <= 0 || instance.kind != model::DeviceKind::kGpu ||
      !serving.prefix_caching || !serving.kv_layout.windows.empty()) {
    return offload;
  }
  const model::HardwareSpec& gpu = catalog.hardware(instance.gpu_id, instance.id);
  offload.num_host_blocks = sc.kv_offload_bytes / std::max(1, d.num_replicas) / block_bytes;
  offload.host_link_bytes_per_s = d.tp_degree * gpu.host_link_bandwidth_bytes_per_s;
  offload.block_bytes = block_bytes;
  if (offload.num_host_blocks == 0 || !(offload.host_link_bytes_per_s > 0)) return {};
  return offload;
}

/// Deploys the model on `instance` with `tp_degree` (0: the automatic rule) and `serving`
/// limits: identity, deployment, predictor, KV blocks and floors. infeasible_reason is set
/// only when the model cannot be placed (model::InfeasibleError).
namespace {

/// Speculative decoding on candidate `c` (the scenario's serving.speculative on): `target`
/// wrapped with the draft's passes (model::SpeculativePredictor; a draft model or draft head
/// priced like the target on the same deployment), and the draft's weights and KV taken out of
/// the replica's KV cache: what the draft's weights leave is shared by target and draft KV in
/// proportion to their bytes per token. Sets row.infeasible_reason when nothing is left.
std::shared_ptr<const model::StepTimePredictor> with_speculation(
    const Context& ctx, Candidate& c, std::shared_ptr<const model::StepTimePredictor> target,
    model::WeightFormat weight_format, const model::Efficiency& efficiency,
    int64_t kv_bytes_per_token) {
  const SpeculativeSpec& spec = ctx.scenario.speculative;
  const model::KvFormat kv = ctx.scenario.kv_format;
  std::shared_ptr<const model::StepTimePredictor> draft;
  int64_t draft_weight_bytes = 0;
  int64_t draft_kv_bytes_per_token = 0;
  if (spec.method != SpeculativeSpec::Method::kNgram) {
    const bool own_model = spec.method == SpeculativeSpec::Method::kDraftModel;
    if (own_model && spec.draft_model == nullptr) {  // check_scenario_files refused it first
      throw InputError(ctx.scenario.file.string() +
                       ": field \"serving.speculative.draft_model\": not read");
    }
    const model::ModelSpec draft_spec =
        own_model ? *spec.draft_model : model::draft_head_spec(ctx.model, spec.draft_layers);
    model::Deployment d = c.deployment;
    if (own_model) d.expert_parallel = false;  // a dense draft runs tensor-parallel
    draft = model::make_step_time_predictor(draft_spec, weight_format, kv, d, efficiency);
    draft_weight_bytes =
        own_model ? draft_spec.weight_bytes(weight_format)
                  : model::draft_head_weight_bytes(ctx.model, spec.draft_layers, weight_format);
    draft_kv_bytes_per_token =
        c.deployment.expert_parallel
            ? draft_spec.kv_cache_bytes_per_token(kv)
            : draft_spec.kv_cache_bytes_per_token_on_replica(kv, c.deployment.tp_degree);
  }
  const int64_t left = c.deployment.kv_cache_bytes - draft_weight_bytes;
  if (left <= 0) {
    c.row.infeasible_reason =
        "the draft's weights (" + base::gb(static_cast<double>(draft_weight_bytes)) +
        ") leave no KV cache (a replica has " +
        base::gb(static_cast<double>(c.deployment.kv_cache_bytes)) + " after the model's)";
    return target;
  }
  c.deployment.kv_cache_bytes =
      static_cast<int64_t>(static_cast<double>(left) * static_cast<double>(kv_bytes_per_token) /
                           static_cast<double>(kv_bytes_per_token + draft_kv_bytes_per_token));
  c.row.predictor +=
      "; speculative decoding: " + std::string(speculative_method_name(spec.method)) + ", " +
      base::plural(spec.config.num_draft_tokens, "draft token") + ", " +
      base::significant(spec.config.tokens_per_step(), 3) + " tokens per step";
  return std::make_shared<model::SpeculativePredictor>(std::move(target), std::move(draft),
                                                       spec.config.num_draft_tokens);
}

}  // namespace

Candidate make_candidate(const Context& ctx, const model::InstanceType& instance, int tp_degree,
                         const sim::ServingConfig& serving, model::WeightFormat weight_format) {
  const Scenario& sc = ctx.scenario;
  Candidate c;
  c.instance = &instance;
  c.choice.tp_degree = tp_degree;
  c.choice.weight_format = weight_format;
  c.choice.serving = serving;
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
  const model::HardwareSpec* cpu = nullptr;
  if (instance.kind == model::DeviceKind::kGpu) {
    const auto& gpu = ctx.catalog.hardware(instance.gpu_id, instance.id);
    row.hardware_name = std::to_string(instance.num_gpus) + " x " + gpu.name;
  } else {
    cpu = &ctx.catalog.hardware(instance.cpu_id, instance.id);
    row.hardware_name = cpu->name + ", " + std::to_string(instance.vcpus) + " vCPU";
  }

  const model::EngineProfile* engine = plan::engine_for(sc, instance, ctx.catalog);
  model::Efficiency efficiency =
      engine != nullptr
          ? model::engine_efficiency(*engine, model::default_efficiency(instance.kind))
          : model::default_efficiency(instance.kind);
  try {
    c.deployment = deployment_for_tp(instance, ctx.catalog, ctx.model, weight_format, sc.kv_format,
                                     efficiency, tp_degree);
    if (sc.expert_parallel) {
      model::make_expert_parallel(c.deployment, ctx.model, weight_format, sc.kv_format);
    }
  } catch (const model::InfeasibleError& e) {
    row.infeasible_reason = e.what();
    row.tp_degree = tp_degree;
    row.configuration = config_label(c.choice);
    return c;
  }
  row.deployment_rule = c.deployment.rule;
  row.predictor = "roofline (datasheet defaults)";
  if (ctx.calibration != nullptr && cpu != nullptr) {
    const double share =
        c.deployment.memory_bandwidth_bytes_per_s / cpu->peak_memory_bandwidth_bytes_per_s;
    efficiency = model::transfer_efficiency(*ctx.calibration, *cpu, std::min(1.0, share));
    row.predictor = "calibrated: " + efficiency.calibrated->source;
  } else if (engine != nullptr) {
    if (cpu != nullptr) {
      // Each device of the replica: the cores of its share of a socket (a whole socket for tp
      // over sockets or a replica per socket).
      const double share = std::min(
          1.0, c.deployment.memory_bandwidth_bytes_per_s / cpu->peak_memory_bandwidth_bytes_per_s);
      const int cores = std::max(1, static_cast<int>(std::lround(share * cpu->num_cores)));
      model::apply_cpu_model(c.deployment, *cpu, cores, engine->cpu_path,
                             engine->compute_fraction.value, share);
      row.deployment_rule = c.deployment.rule;
    }
    row.predictor = "engine " + engine->id + " (" + engine->name + ", docs/engines.md)";
    if (!engine->hardware.empty()) row.predictor += "; " + engine->fit_summary;
    row.engine = engine->id;
  }
  efficiency = tp_efficiency(efficiency, c.deployment, cpu);
  c.efficiency = efficiency;
  row.num_replicas_per_instance = c.deployment.num_replicas;
  row.tp_degree = c.deployment.tp_degree;
  ServingChoice resolved = c.choice;
  resolved.tp_degree = static_cast<int>(c.deployment.tp_degree);
  row.configuration = config_label(resolved);

  std::shared_ptr<const model::StepTimePredictor> roofline = model::make_step_time_predictor(
      ctx.model, weight_format, sc.kv_format, c.deployment, efficiency);
  row.predictor_kind = roofline->kind();
  // Expert parallelism runs attention data-parallel: each device keeps its own sequences' KV.
  const int64_t kv_bytes_per_token =
      c.deployment.expert_parallel
          ? ctx.model.kv_cache_bytes_per_token(sc.kv_format)
          : ctx.model.kv_cache_bytes_per_token_on_replica(sc.kv_format, c.deployment.tp_degree);
  if (sc.speculative.on()) {
    roofline = with_speculation(ctx, c, std::move(roofline), weight_format, efficiency,
                                kv_bytes_per_token);
    if (!row.infeasible_reason.empty()) return c;
  }
  if (ctx.step_time_scale != 1.0) {
    c.predictor = std::make_shared<ScaledPredictor>(std::move(roofline), ctx.step_time_scale);
  } else {
    c.predictor = std::move(roofline);
  }
  int64_t kv_unit_bytes = kv_bytes_per_token;
  c.fleet.serving = serving;
  c.fleet.serving.kv_layout = kv_layout_for(ctx.model, sc.kv_format, kv_bytes_per_token,
                                            serving.block_size_tokens, &kv_unit_bytes);
  c.fleet.router = sc.router;
  if (engine != nullptr && !row.engine.empty()) {
    c.fleet.frontend_latency = sim::SimTime::Seconds(engine->frontend_latency_s.value);
  }
  c.fleet.serving.num_kv_blocks =
      c.deployment.kv_cache_bytes / (kv_unit_bytes * serving.block_size_tokens);
  c.fleet.serving.kv_offload =
      kv_offload_for(sc, instance, ctx.catalog, c.deployment, c.fleet.serving,
                     kv_unit_bytes * serving.block_size_tokens);
  if (c.fleet.serving.kv_offload.num_host_blocks > 0 &&
      sc.kv_offload_bytes > instance.memory_bytes) {
    // A tier this type uses and its host cannot hold (check_kv_offload refused the scenario
    // if no GPU candidate's host had that much).
    row.infeasible_reason = "its host memory (" +
                            base::gb(static_cast<double>(instance.memory_bytes)) +
                            ") is less than the KV offload tier (serving.kv_offload_bytes, " +
                            base::gb(static_cast<double>(sc.kv_offload_bytes)) + ")";
    return c;
  }

  model::BatchShape decode1;
  decode1.num_decode_seqs = 1;
  decode1.num_decode_context_tokens = 1;
  const sim::SpeculativeConfig& spec = sc.speculative.config;
  decode1.num_decode_draft_tokens = spec.num_draft_tokens;
  decode1.num_decode_draft_attention_pairs =
      spec.num_draft_tokens + spec.num_draft_tokens * (spec.num_draft_tokens + 1) / 2;
  row.tpot_floor_s = c.predictor->step_time_s(decode1) / spec.tokens_per_step();
  row.ttft_floor_s = prefill_floor_s(*c.predictor, ctx.summary.p99_prompt_tokens) +
                     c.fleet.frontend_latency.seconds();
  return c;
}

void check_engines(const Scenario& sc, const model::Catalog& catalog) {
  const std::string file = sc.file.string();
  model::check_fitted_hardware(sc.fitted_engines, catalog, file + ": field \"engine.profiles\"");
  for (const auto& [field, id, kind] : {std::tuple<std::string, std::string, model::DeviceKind>{
                                            "engine.gpu", sc.gpu_engine, model::DeviceKind::kGpu},
                                        {"engine.cpu", sc.cpu_engine, model::DeviceKind::kCpu}}) {
    if (id.empty() || id == kDatasheetEngine) continue;
    const model::EngineProfile* e = catalog.find_engine(id);
    if (e == nullptr) {
      throw InputError::refused_field(
          file, field, "unknown engine \"" + id + "\"; known: " + catalog.engine_ids());
    }
    if (e->kind != kind) {
      throw InputError::refused_field(file, field,
                                      "\"" + id + "\" is an engine for " +
                                          std::string(model::to_string(e->kind)) + ", not " +
                                          std::string(model::to_string(kind)));
    }
  }
}

/// Refuses, before any simulation, a degree the scenario fixes that its instance type cannot
/// run: serving.tensor_parallel entries and fleet groups' tensor_parallel; and
/// serving.expert_parallel for a model without routed experts, or with a fixed degree that does
/// not divide them.
void check_fixed_tp(const Scenario& sc, const model::Catalog& catalog,
                    const model::ModelSpec& model) {
  const std::string file = sc.file.string();
  if (sc.expert_parallel && model::routed_experts_per_layer(model) == 0) {
    throw InputError::bad_field(
        file, "serving.expert_parallel", "true",
        "false for model \"" + model.id +
            "\", which has no routed experts (no mixture-of-experts layer)");
  }
  auto check = [&](const std::string& field, const std::string& instance_id, int tp) {
    const model::InstanceType* instance = catalog.find_instance(instance_id);
    if (instance == nullptr) {
      std::string known;
      for (const auto& k : catalog.instances()) known += (known.empty() ? "" : ", ") + k.id;
      throw InputError(file + ": field \"" + field + "\": unknown instance type \"" + instance_id +
                       "\"; known: " + known);
    }
    if (tp == 0) return;
    if (const std::string refusal = tp_refusal(*instance, catalog, model, tp); !refusal.empty()) {
      std::string known;
      for (const int option : tp_options(*instance, catalog, model)) {
        known += (known.empty() ? "" : ", ") + std::to_string(option);
      }
      throw InputError(file + ": field \"" + field + "\": instance \"" + instance_id +
                       "\": " + refusal + "; expected one of: " + known);
    }
    if (sc.expert_parallel && !model::expert_parallel_refusal(model, tp).empty()) {
      throw InputError::bad_field(file, field, std::to_string(tp),
                                  "a degree dividing the " +
                                      std::to_string(model::routed_experts_per_layer(model)) +
                                      " routed experts per layer of model \"" + model.id +
                                      "\" (serving.expert_parallel splits them whole over a "
                                      "replica's devices)");
    }
  };
  for (const auto& [id, tp] : sc.tensor_parallel.per_type) {
    check("serving.tensor_parallel." + id, id, tp);
  }
  if (sc.fleet) {
    for (const FleetGroupSpec& g : sc.fleet->groups) {
      const int tp = g.tensor_parallel > 0 ? g.tensor_parallel : chosen_tp(sc, g.instance);
      check(g.field + (g.tensor_parallel > 0 ? ".tensor_parallel" : ".instance"), g.instance, tp);
    }
  }
}

// ---- a given fleet ----------------------------------------------------------------------------

GivenFleet prepare_fleet(const Context& ctx) {
  const Scenario& sc = ctx.scenario;
  const FleetSpec& spec = *sc.fleet;
  const std::string file = sc.file.string();
  GivenFleet f;
  PlanRow& row = f.row;
  std::string description;
  std::string hardware;
  std::string rules;
  std::vector<std::string> providers;
  std::vector<std::string> predictors;
  bool any_gpu = false;
  int64_t tp_all = -1;
  row.tpot_floor_s = 0;
  row.ttft_floor_s = 0;
  for (const ClientClassSpec& cls : sc.workload.classes) {
    ClassRow cr;
    cr.name = cls.name;
    cr.slo = cls.slo;
    row.classes.push_back(std::move(cr));
  }
  for (const FleetGroupSpec& g : spec.groups) {
    const model::InstanceType& instance =
        ctx.catalog.instance(g.instance, file + ": field \"" + g.field + ".instance\"");
    const int tp = g.tensor_parallel > 0 ? g.tensor_parallel : chosen_tp(sc, g.instance);
    Candidate c =
        make_candidate(ctx, instance, tp, g.serving, weight_format_for(sc, instance.kind));
    const std::string role =
        spec.disaggregated ? std::string(" ") + sim::replica_role_name(g.role) : "";
    description +=
        (description.empty() ? "" : " + ") + std::to_string(g.count) + " x " + instance.id + role;
    hardware += (hardware.empty() ? "" : " + ") + std::to_string(g.count) + " x (" +
                c.row.hardware_name + ")";
    if (std::find(providers.begin(), providers.end(), instance.provider) == providers.end()) {
      providers.push_back(instance.provider);
    }
    any_gpu = any_gpu || instance.kind == model::DeviceKind::kGpu;
    row.usd_per_hour += static_cast<double>(g.count) * instance.usd_per_hour;
    row.num_instances += g.count;
    if (!c.ready()) {
      if (row.infeasible_reason.empty()) {
        row.infeasible_reason = g.field + " (" + instance.id + "): " + c.row.infeasible_reason;
      }
      f.groups.push_back(std::move(c));
      continue;
    }
    tp_all = tp_all < 0 || tp_all == c.row.tp_degree ? c.row.tp_degree : 0;
    if (row.configuration.empty()) row.configuration = c.row.configuration;
    rules += (rules.empty() ? "" : "; ") + g.field + " (" + instance.id + "): " + c.deployment.rule;
    if (std::find(predictors.begin(), predictors.end(), c.row.predictor) == predictors.end()) {
      if (predictors.empty()) row.predictor_kind = c.row.predictor_kind;  // the first one's
      predictors.push_back(c.row.predictor);
    }
    // Floors: the best group's (a request may go to any replica of its pool).
    if (g.role != sim::ReplicaRole::kPrefill) {
      row.tpot_floor_s = row.tpot_floor_s == 0 ? c.row.tpot_floor_s
                                               : std::min(row.tpot_floor_s, c.row.tpot_floor_s);
    }
    if (g.role != sim::ReplicaRole::kDecode) {
      row.ttft_floor_s = row.ttft_floor_s == 0 ? c.row.ttft_floor_s
                                               : std::min(row.ttft_floor_s, c.row.ttft_floor_s);
    }
    sim::ReplicaGroup rg;
    rg.name = g.field + " " + instance.id;
    rg.num_replicas = g.count * c.deployment.num_replicas;
    rg.serving = c.fleet.serving;
    rg.predictor = c.predictor.get();
    rg.role = g.role;
    if (spec.disaggregated) {
      if (!(instance.network_bandwidth_bytes_per_s > 0)) {
        throw InputError(file + ": field \"" + g.field + ".instance\": instance \"" + instance.id +
                         "\" has no network figures in instances/instances.json (field "
                         "\"network\"); a disaggregated fleet needs them to move KV caches");
      }
      // The instance's network is shared by its replicas.
      rg.network_bandwidth_bytes_per_s =
          instance.network_bandwidth_bytes_per_s / c.deployment.num_replicas;
      rg.network_latency_s = instance.network_latency_s;
    }
    GroupRow gr;
    gr.field = g.field;
    gr.instance_type = instance.id;
    gr.device_kind = instance.kind;
    gr.role = sim::replica_role_name(g.role);
    gr.num_instances = g.count;
    gr.tp_degree = c.row.tp_degree;
    gr.num_replicas_per_instance = c.deployment.num_replicas;
    gr.num_kv_blocks = c.fleet.serving.num_kv_blocks;
    gr.usd_per_hour = static_cast<double>(g.count) * instance.usd_per_hour;
    gr.network_bandwidth_bytes_per_s = rg.network_bandwidth_bytes_per_s;
    gr.tpot_floor_s = c.row.tpot_floor_s;
    gr.ttft_floor_s = c.row.ttft_floor_s;
    gr.deployment_rule = c.deployment.rule;
    gr.predictor = c.row.predictor;
    gr.engine = c.row.engine;
    row.groups.push_back(std::move(gr));
    f.fleet.groups.push_back(std::move(rg));
    f.groups.push_back(std::move(c));
  }
  row.instance_type = base::kGivenFleetPrefix + description;
  row.instance_name = spec.disaggregated ? "disaggregated fleet" : "mixed fleet";
  for (const std::string& p : providers) row.provider += (row.provider.empty() ? "" : ", ") + p;
  for (const std::string& p : predictors) {
    row.predictor += (row.predictor.empty() ? "" : "; ") + p;
  }
  row.device_kind = any_gpu ? model::DeviceKind::kGpu : model::DeviceKind::kCpu;
  row.hardware_name = hardware;
  row.deployment_rule = rules;
  row.tp_degree = std::max<int64_t>(tp_all, 0);
  row.instance_usd_per_hour = row.usd_per_hour;
  f.fleet.router = sc.router;
  f.fleet.decode_router = spec.decode_router;
  f.fleet.kv_bytes_per_token = ctx.model.kv_cache_bytes_per_token(sc.kv_format);
  return f;
}

/// Simulates the scenario's fleet once and fills its row: feasible when it meets every
/// class's SLO, else the reason names what it misses (with its cost).
PlanRow plan_given_fleet(const Context& ctx) {
  GivenFleet f = prepare_fleet(ctx);
  PlanRow& row = f.row;
  if (!row.infeasible_reason.empty()) return std::move(row);
  ++row.num_simulations;
  const sim::SimResult result =
      sim::simulate(ctx.workload, f.fleet, ctx.scenario.seed, ctx.sim_options());
  if (result.cancelled) throw Cancelled("planning cancelled: " + result.stop_reason);
  const FleetEvaluation e = evaluate(ctx, result);
  row.metrics = e.metrics;
  row.num_kv_transfers = result.num_kv_transfers;
  row.kv_transfer_bytes = result.kv_transfer_bytes;
  for (size_t c = 0; c < row.classes.size() && c < e.classes.size(); ++c) {
    row.classes[c].metrics = e.classes[c];
  }
  fill_cost(row, row.usd_per_hour, e.metrics, ctx.summary, ctx.scenario.hours_per_year);
  row.feasible = meets_class_slos(e, ctx.class_slos);
  if (!row.feasible) {
    char cost[64];
    std::snprintf(cost, sizeof cost, "%.2f", row.usd_per_hour);
    row.infeasible_reason = "the given fleet (USD " + std::string(cost) +
                            "/hour) misses the SLO: " + slo_miss_text(ctx, e);
  }
  return std::move(row);
}

}  // namespace detail

bool meets_slo(const sim::Metrics& metrics, const sim::Slo& slo) {
  return metrics.num_rejected == 0 && metrics.num_completed > 0 &&
         metrics.ttft.p99_s <= slo.ttft_s && metrics.tpot.p99_s <= slo.tpot_s;
}

bool meets_class_slos(const FleetEvaluation& fleet, const std::vector<sim::Slo>& class_slos) {
  if (fleet.stopped_early()) return false;
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

std::string row_kind_name(const PlanRow& row) {
  for (const GroupRow& g : row.groups) {
    if (g.device_kind != row.groups.front().device_kind) return "mixed";
  }
  return std::string(model::to_string(row.device_kind));
}

}  // namespace llmcap::plan
