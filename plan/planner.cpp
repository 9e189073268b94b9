#include "plan/planner.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "base/text.h"
#include "model/input_error.h"
#include "model/roofline.h"
#include "plan/candidates.h"
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

using base::gb;
using base::gb_per_s;
using base::plural;

/// vCPUs of one socket of a CPU instance (as model::make_deployment counts them).
int socket_threads_of(const model::InstanceType& instance, const model::HardwareSpec& cpu) {
  return instance.vcpus_per_socket > 0 ? instance.vcpus_per_socket
                                       : cpu.num_cores * cpu.threads_per_core;
}

/// Whole sockets of a CPU instance; 0 for a slice of one socket.
int whole_sockets_of(const model::InstanceType& instance, const model::HardwareSpec& cpu) {
  const int threads = socket_threads_of(instance, cpu);
  return threads > 0 && instance.vcpus >= threads ? instance.vcpus / threads : 0;
}

/// Memory check of one replica for deployment_for_tp (model::make_deployment's rule): usable
/// = round(usable_memory_fraction x memory); KV = usable - weights - reserve must hold one
/// sequence of min(max_position_embeddings, kMaxFitSequenceTokens) tokens.
int64_t kv_bytes_or_throw(const std::string& where, const std::string& of, int64_t memory_bytes,
                          int64_t reserve_bytes, const model::ModelSpec& m, model::WeightFormat wf,
                          model::KvFormat kf, const model::Efficiency& e) {
  const int64_t weights = m.weight_bytes(wf);
  const int64_t usable = std::llround(e.usable_memory_fraction * static_cast<double>(memory_bytes));
  const std::string has = of + " has " + std::to_string(usable) + " bytes usable";
  if (weights + reserve_bytes > usable) {
    throw model::InfeasibleError(where + ": weights need " + gb(weights) + ", " + gb(usable) +
                                 " usable: " + std::to_string(weights) + " bytes (" +
                                 std::string(model::to_string(wf)) + "), " + has + " and keeps " +
                                 std::to_string(reserve_bytes) + " bytes for activations");
  }
  const int64_t seq_tokens = std::min(m.max_position_embeddings, model::kMaxFitSequenceTokens);
  const int64_t seq_kv = seq_tokens * m.kv_cache_bytes_per_token(kf);
  const int64_t kv = usable - weights - reserve_bytes;
  if (kv < seq_kv) {
    throw model::InfeasibleError(where + ": weights need " + std::to_string(weights) + " bytes + " +
                                 std::to_string(reserve_bytes) + " bytes activation reserve + " +
                                 std::to_string(seq_kv) + " bytes of KV cache for one " +
                                 std::to_string(seq_tokens) + "-token sequence, " + has);
  }
  return kv;
}

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
  const std::string where = "model \"" + model.id + "\" on instance \"" + instance.id + "\"";
  model::Deployment d;
  d.kind = instance.kind;
  d.tp_degree = tp_degree;
  d.weight_bytes = model.weight_bytes(weight_format);
  if (instance.kind == model::DeviceKind::kGpu) {
    const model::HardwareSpec& gpu = catalog.hardware(instance.gpu_id, instance.id);
    d.num_replicas = instance.num_gpus / tp_degree;
    d.memory_bytes = tp_degree * gpu.memory_bytes;
    d.kv_cache_bytes = kv_bytes_or_throw(where, "a tp=" + std::to_string(tp_degree) + " replica",
                                         d.memory_bytes, tp_degree * model::kActivationReserveBytes,
                                         model, weight_format, kv_format, efficiency);
    d.memory_bandwidth_bytes_per_s = gpu.peak_memory_bandwidth_bytes_per_s;
    d.peak_flops_per_s = gpu.peak_flops_per_s;
    d.link_bandwidth_bytes_per_s = tp_degree > 1 ? gpu.interconnect_bandwidth_bytes_per_s : 0.0;
    d.rule =
        std::to_string(tp_degree) + " of " + std::to_string(instance.num_gpus) + " " + gpu.name +
        " GPUs per replica (tp=" + std::to_string(tp_degree) + ", chosen), " +
        plural(d.num_replicas, "replica") + ": " + gb_per_s(gpu.peak_memory_bandwidth_bytes_per_s) +
        " and " + gb(gpu.memory_bytes) + " per GPU" +
        (tp_degree > 1
             ? ", all-reduce over " + gb_per_s(gpu.interconnect_bandwidth_bytes_per_s) + " links"
             : "");
    return d;
  }
  const model::HardwareSpec& cpu = catalog.hardware(instance.cpu_id, instance.id);
  const int sockets = whole_sockets_of(instance, cpu);
  d.num_replicas = sockets / tp_degree;
  d.memory_bytes = instance.memory_bytes / d.num_replicas;
  d.kv_cache_bytes = kv_bytes_or_throw(
      where, d.num_replicas == 1 ? "instance" : "a tp=" + std::to_string(tp_degree) + " replica",
      d.memory_bytes, model::kActivationReserveBytes, model, weight_format, kv_format, efficiency);
  d.memory_bandwidth_bytes_per_s = cpu.peak_memory_bandwidth_bytes_per_s;
  d.peak_flops_per_s = cpu.peak_flops_per_s;
  d.link_bandwidth_bytes_per_s = cpu.socket_link_bandwidth_bytes_per_s;
  char latency[64];
  std::snprintf(latency, sizeof latency, "%.3g us", cpu.socket_link_latency_s * 1e6);
  d.rule = (d.num_replicas == 1 ? std::string("1 replica over ")
                                : std::to_string(d.num_replicas) + " replicas, each over ") +
           std::to_string(tp_degree) + " whole " + cpu.name +
           " sockets (tp=" + std::to_string(tp_degree) + ", " +
           std::to_string(socket_threads_of(instance, cpu)) + " of " +
           std::to_string(instance.vcpus) +
           " vCPUs per socket): " + gb_per_s(cpu.peak_memory_bandwidth_bytes_per_s) +
           " and peak FLOP/s per socket, all-reduce over the inter-socket link at " +
           gb_per_s(cpu.socket_link_bandwidth_bytes_per_s) + ", " + latency + " per crossing; " +
           gb(d.memory_bytes) + " memory" + (d.num_replicas == 1 ? "" : " each");
  return d;
}

model::Efficiency tp_efficiency(model::Efficiency efficiency, const model::Deployment& deployment,
                                const model::HardwareSpec* cpu) {
  if (deployment.kind == model::DeviceKind::kCpu && deployment.tp_degree > 1 && cpu != nullptr) {
    efficiency.all_reduce_latency_s = 2.0 * (deployment.tp_degree - 1) * cpu->socket_link_latency_s;
  }
  return efficiency;
}

namespace {

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
  double step_time_scale = 1.0;  ///< PlanOptions::step_time_scale
  bool record_itl = true;        ///< PlanOptions::record_itl
  std::function<bool()> cancel;  ///< PlanOptions::cancel

  /// SimOptions with this context's cancel hook and ITL choice.
  sim::SimOptions sim_options() const {
    sim::SimOptions o;
    o.record_itl_ns = record_itl;
    o.cancel = cancel;
    return o;
  }
  /// Throws Cancelled when PlanOptions::cancel says so.
  void check_cancel() const {
    if (cancel && cancel()) throw Cancelled("planning cancelled");
  }

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

 private:
  std::shared_ptr<const model::StepTimePredictor> base_;
  double scale_;
};

/// One instance type (at one tensor-parallel degree) made ready to simulate, or the reason it
/// cannot serve the scenario.
struct Candidate : PreparedType {
  /// `stop_at_certain_miss`: the fleet-size search only needs the verdict of a failing size,
  /// so the run stops once missing an SLO is certain (sim::SimOptions::stop_at_certain_p99_miss;
  /// the evaluation then carries only the reason). A size that meets every SLO runs in full.
  FleetEvaluation simulate(const Context& ctx, int64_t num_instances,
                           bool stop_at_certain_miss = false) {
    fleet.num_replicas = num_instances * deployment.num_replicas;
    ++row.num_simulations;
    sim::SimOptions options = ctx.sim_options();
    if (stop_at_certain_miss) {
      sim::P99Bounds bounds;
      for (const sim::Slo& slo : ctx.class_slos) {
        bounds.ttft_s.push_back(slo.ttft_s);
        bounds.tpot_s.push_back(slo.tpot_s);
      }
      options.stop_at_certain_p99_miss = std::move(bounds);
    }
    return evaluate(ctx,
                    sim::simulate(ctx.workload, fleet, *predictor, ctx.scenario.seed, options));
  }

  /// Copies the per-class metrics of `e` into the row (scenarios with classes).
  void keep_class_metrics(const FleetEvaluation& e) {
    for (size_t c = 0; c < row.classes.size() && c < e.classes.size(); ++c) {
      row.classes[c].metrics = e.classes[c];
    }
  }
};

/// Deploys the model on `instance` with `tp_degree` (0: the automatic rule) and `serving`
/// limits: identity, deployment, predictor, KV blocks and floors. infeasible_reason is set
/// only when the model cannot be placed (model::InfeasibleError).
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

  model::Efficiency efficiency = model::default_efficiency(instance.kind);
  try {
    c.deployment = deployment_for_tp(instance, ctx.catalog, ctx.model, weight_format, sc.kv_format,
                                     efficiency, tp_degree);
  } catch (const model::InfeasibleError& e) {
    row.infeasible_reason = e.what();
    row.tp_degree = tp_degree;
    return c;
  }
  row.deployment_rule = c.deployment.rule;
  row.predictor = "roofline (datasheet defaults)";
  if (ctx.calibration != nullptr && cpu != nullptr) {
    const double share =
        c.deployment.memory_bandwidth_bytes_per_s / cpu->peak_memory_bandwidth_bytes_per_s;
    efficiency = model::transfer_efficiency(*ctx.calibration, *cpu, std::min(1.0, share));
    row.predictor = "calibrated: " + efficiency.calibrated->source;
  }
  efficiency = tp_efficiency(efficiency, c.deployment, cpu);
  row.num_replicas_per_instance = c.deployment.num_replicas;
  row.tp_degree = c.deployment.tp_degree;

  std::shared_ptr<const model::StepTimePredictor> roofline =
      std::make_shared<model::RooflinePredictor>(ctx.model, weight_format, sc.kv_format,
                                                 c.deployment, efficiency);
  if (ctx.step_time_scale != 1.0) {
    c.predictor = std::make_shared<ScaledPredictor>(std::move(roofline), ctx.step_time_scale);
  } else {
    c.predictor = std::move(roofline);
  }
  const int64_t kv_bytes_per_token = ctx.model.kv_cache_bytes_per_token(sc.kv_format);
  c.fleet.serving = serving;
  c.fleet.router = sc.router;
  c.fleet.serving.num_kv_blocks =
      c.deployment.kv_cache_bytes / (kv_bytes_per_token * serving.block_size_tokens);

  model::BatchShape decode1;
  decode1.num_decode_seqs = 1;
  decode1.num_decode_context_tokens = 1;
  row.tpot_floor_s = c.predictor->step_time_s(decode1);
  row.ttft_floor_s = prefill_floor_s(*c.predictor, ctx.summary.p99_prompt_tokens);
  return c;
}

/// The search's checks before any simulation: the TPOT floor against every class's bound,
/// each class's p99 prompt against its own TTFT bound (without classes: the workload's p99
/// prompt against Scenario::slo), and the longest request against a replica's KV cache.
void check_floors(const Context& ctx, Candidate& c) {
  const Scenario& sc = ctx.scenario;
  PlanRow& row = c.row;
  for (size_t k = 0; k < ctx.class_slos.size(); ++k) {
    if (row.tpot_floor_s > ctx.class_slos[k].tpot_s) {
      row.infeasible_reason = "TPOT floor at batch 1 is " + format_s(row.tpot_floor_s) + " > SLO " +
                              format_s(ctx.class_slos[k].tpot_s) + ctx.of_class(k) + " (" +
                              c.deployment.rule + ")";
      return;
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
      return;
    }
  }
  const int64_t kv_bytes_per_token = ctx.model.kv_cache_bytes_per_token(sc.kv_format);
  const int64_t block = c.fleet.serving.block_size_tokens;
  const int64_t needed_blocks = (ctx.max_request_tokens + block - 1) / block;
  if (c.fleet.serving.num_kv_blocks < needed_blocks) {
    row.infeasible_reason =
        "the longest request (" + std::to_string(ctx.max_request_tokens) + " tokens) needs " +
        std::to_string(needed_blocks * block * kv_bytes_per_token) +
        " bytes of KV cache, a replica has " + std::to_string(c.deployment.kv_cache_bytes);
  }
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

/// Cost figures of a fleet costing usd_per_hour with `metrics`.
void fill_cost(PlanRow& row, double usd_per_hour, const sim::Metrics& metrics,
               double hours_per_year) {
  row.usd_per_hour = usd_per_hour;
  row.annual_usd = usd_per_hour * hours_per_year;
  const double tokens_per_hour = metrics.throughput_output_tokens_per_s * 3600.0;
  row.usd_per_million_output_tokens =
      tokens_per_hour > 0 ? usd_per_hour / tokens_per_hour * 1e6 : 0.0;
}

/// The fleet-size search of a prepared candidate (SizeSearch documents the order).
PlanRow search_size_of(const Context& ctx, Candidate c, const SizeSearch& search) {
  const Scenario& sc = ctx.scenario;
  if (!c.ready()) return std::move(c.row);
  PlanRow& row = c.row;
  const int64_t cap = search.cap > 0 ? std::min(search.cap, sc.max_instances) : sc.max_instances;
  const int64_t lower = std::max<int64_t>(search.lower_bound, 1);
  if (lower > cap) {
    row.infeasible_reason = "the fleet-size lower bound (" + std::to_string(lower) +
                            " instances) is above the largest size tried (" + std::to_string(cap) +
                            ")";
    return std::move(row);
  }
  const int64_t start = std::clamp<int64_t>(search.start > 0 ? search.start : lower, lower, cap);
  int64_t step = search.first_step > 0 ? search.first_step : start;
  // Bracket the answer: `failing` fails (or is below the bound), `passing` passes.
  int64_t failing = lower - 1;
  int64_t passing = 0;
  // Sizes below the cap stop as soon as they certainly miss the SLO; the cap runs in full, as
  // an infeasible row quotes its metrics.
  const auto stop_early = [cap](int64_t size) { return size < cap; };
  FleetEvaluation best = c.simulate(ctx, start, stop_early(start));
  if (meets_class_slos(best, ctx.class_slos)) {
    passing = start;
    while (passing - failing > 1) {  // walk down
      const int64_t probe = passing - step;
      if (probe <= failing) break;
      FleetEvaluation e = c.simulate(ctx, probe, stop_early(probe));
      if (!meets_class_slos(e, ctx.class_slos)) {
        failing = probe;
        break;
      }
      passing = probe;
      best = std::move(e);
      step *= 2;
    }
  } else {
    failing = start;
    FleetEvaluation last = std::move(best);
    int64_t last_size = start;
    while (true) {  // walk up
      if (failing >= cap) {
        // `last` is the cap's evaluation, which ran in full (stop_early(cap) is false).
        row.infeasible_reason =
            cap == sc.max_instances
                ? "SLO not met with " + std::to_string(last_size) +
                      " instances (the scenario's max_instances): " + slo_miss_text(ctx, last)
                : "SLO not met with " + std::to_string(last_size) +
                      " instances (the largest size tried: a larger fleet costs more than the "
                      "best found): " +
                      slo_miss_text(ctx, last);
        row.metrics = last.metrics;
        c.keep_class_metrics(last);
        return std::move(row);
      }
      const int64_t probe = std::min(failing + step, cap);
      FleetEvaluation e = c.simulate(ctx, probe, stop_early(probe));
      if (meets_class_slos(e, ctx.class_slos)) {
        passing = probe;
        best = std::move(e);
        break;
      }
      failing = probe;
      last = std::move(e);
      last_size = probe;
      step *= 2;
    }
  }
  while (passing - failing > 1) {
    const int64_t mid = failing + (passing - failing) / 2;
    FleetEvaluation m = c.simulate(ctx, mid, stop_early(mid));
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
  fill_cost(row, static_cast<double>(passing) * c.instance->usd_per_hour, best.metrics,
            sc.hours_per_year);
  return std::move(row);
}

/// Deploys and checks the floors of one configuration.
Candidate prepare_candidate(const Context& ctx, const model::InstanceType& instance,
                            const ServingChoice& choice) {
  Candidate c =
      make_candidate(ctx, instance, choice.tp_degree, choice.serving, choice.weight_format);
  if (c.ready()) check_floors(ctx, c);
  return c;
}

/// The fleet-size search for one instance type at one tensor-parallel degree (0: automatic).
PlanRow plan_one_tp(const Context& ctx, const model::InstanceType& instance, int tp_degree,
                    const SizeSearch& search = {}) {
  const Scenario& sc = ctx.scenario;
  ServingChoice choice{tp_degree, sc.weight_format, sc.serving};
  return search_size_of(ctx, prepare_candidate(ctx, instance, choice), search);
}

/// The degree the scenario fixes for `instance`: 0 (automatic) unless kPerType names it.
int chosen_tp(const Scenario& sc, const std::string& instance_id) {
  if (sc.tensor_parallel.mode != TensorParallelSpec::Mode::kPerType) return 0;
  const auto it = sc.tensor_parallel.per_type.find(instance_id);
  return it == sc.tensor_parallel.per_type.end() ? 0 : it->second;
}

/// One candidate: its fixed degree, or (kSearch) every degree tp_options() lists, keeping the
/// cheapest feasible fleet (ties: the lower degree). A fixed degree's search starts at the
/// type's size in `start_sizes` when it has one (PlanOptions::warm_start_sizes).
PlanRow plan_one(const Context& ctx, const model::InstanceType& instance,
                 const std::map<std::string, int64_t>& start_sizes) {
  const Scenario& sc = ctx.scenario;
  if (sc.tensor_parallel.mode != TensorParallelSpec::Mode::kSearch) {
    SizeSearch search;
    const auto start = start_sizes.find(instance.id);
    if (start != start_sizes.end() && start->second > 0) {
      // The previous answer, then steps of 1, 2, 4, ... away from it.
      search.start = start->second;
      search.first_step = 1;
    }
    return plan_one_tp(ctx, instance, chosen_tp(sc, instance.id), search);
  }
  std::vector<PlanRow> rows;
  for (const int tp : tp_options(instance, ctx.catalog, ctx.model)) {
    rows.push_back(plan_one_tp(ctx, instance, tp));
  }
  size_t best = 0;
  int64_t num_simulations = 0;
  for (size_t i = 0; i < rows.size(); ++i) {
    num_simulations += rows[i].num_simulations;
    const bool better = rows[i].feasible &&
                        (!rows[best].feasible || rows[i].usd_per_hour < rows[best].usd_per_hour);
    if (better) best = i;
  }
  PlanRow row = rows[best];
  row.num_simulations = num_simulations;
  for (const PlanRow& r : rows) {
    TpOptionRow option;
    option.tp_degree = r.tp_degree;
    option.feasible = r.feasible;
    option.num_instances = r.num_instances;
    option.num_replicas_per_instance = r.num_replicas_per_instance;
    option.usd_per_hour = r.usd_per_hour;
    option.ttft_p99_s = r.metrics.ttft.p99_s;
    option.tpot_p99_s = r.metrics.tpot.p99_s;
    option.infeasible_reason = r.infeasible_reason;
    row.tp_options.push_back(std::move(option));
  }
  if (!row.feasible) {
    std::string reasons;
    for (const PlanRow& r : rows) {
      reasons += (reasons.empty() ? "" : "; ") + std::string("tp=") + std::to_string(r.tp_degree) +
                 ": " + r.infeasible_reason;
    }
    row.infeasible_reason = "no tensor-parallel degree meets the SLO: " + reasons;
  }
  return row;
}

/// Refuses, before any simulation, a degree the scenario fixes that its instance type cannot
/// run: serving.tensor_parallel entries and fleet groups' tensor_parallel.
void check_fixed_tp(const Scenario& sc, const model::Catalog& catalog,
                    const model::ModelSpec& model) {
  const std::string file = sc.file.string();
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

/// The scenario's fleet made ready: one candidate per group, and the simulator's groups.
struct GivenFleet {
  std::vector<Candidate> groups;  ///< parallel to Scenario::fleet->groups
  sim::FleetConfig fleet;
  PlanRow row;  ///< identity, cost and floors; infeasible_reason when a group cannot deploy
};

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
    Candidate c = make_candidate(ctx, instance, tp, g.serving, sc.weight_format);
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
    rules += (rules.empty() ? "" : "; ") + g.field + " (" + instance.id + "): " + c.deployment.rule;
    if (std::find(predictors.begin(), predictors.end(), c.row.predictor) == predictors.end()) {
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
    row.groups.push_back(std::move(gr));
    f.fleet.groups.push_back(std::move(rg));
    f.groups.push_back(std::move(c));
  }
  row.instance_type = "fleet: " + description;
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
  fill_cost(row, row.usd_per_hour, e.metrics, ctx.scenario.hours_per_year);
  row.feasible = meets_class_slos(e, ctx.class_slos);
  if (!row.feasible) {
    char cost[64];
    std::snprintf(cost, sizeof cost, "%.2f", row.usd_per_hour);
    row.infeasible_reason = "the given fleet (USD " + std::string(cost) +
                            "/hour) misses the SLO: " + slo_miss_text(ctx, e);
  }
  return std::move(row);
}

}  // namespace

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

namespace {

/// Loads what every entry point needs and calls `body` with the context; `before` runs after
/// the model is read and before the workload is (so errors come in that order).
template <typename Before, typename Body>
auto with_context(const Scenario& scenario, const model::Catalog& catalog,
                  const model::CalibrationProfile* calibration, Before before, Body body,
                  double step_time_scale = 1.0, bool record_itl = true,
                  const std::function<bool()>& cancel = {}) {
  if (!(step_time_scale > 0) || !std::isfinite(step_time_scale)) {
    throw InputError("plan options: step_time_scale " + std::to_string(step_time_scale) +
                     ": expected a positive number");
  }
  const model::ModelSpec model = model::load_model_spec(scenario.model_config);
  before();
  check_fixed_tp(scenario, catalog, model);
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
                    .class_slos = class_slos,
                    .step_time_scale = step_time_scale,
                    .record_itl = record_itl,
                    .cancel = cancel};
  return body(ctx);
}

}  // namespace

FleetEvaluation evaluate_fleet(const Scenario& scenario, const model::Catalog& catalog,
                               const std::string& instance_type, int64_t num_instances,
                               const model::CalibrationProfile* calibration) {
  return with_context(
      scenario, catalog, calibration, [] {},
      [&](const Context& ctx) {
        const model::InstanceType& instance =
            catalog.instance(instance_type, scenario.file.string() + ": instance type");
        Candidate c = make_candidate(ctx, instance, chosen_tp(scenario, instance.id),
                                     scenario.serving, scenario.weight_format);
        if (c.predictor == nullptr) throw model::InfeasibleError(c.row.infeasible_reason);
        return c.simulate(ctx, num_instances);
      });
}

FleetEvaluation evaluate_given_fleet(const Scenario& scenario, const model::Catalog& catalog,
                                     const model::CalibrationProfile* calibration) {
  if (!scenario.fleet) {
    throw InputError(scenario.file.string() +
                     ": field \"fleet\": missing; expected a given "
                     "fleet to evaluate");
  }
  return with_context(
      scenario, catalog, calibration, [] {},
      [&](const Context& ctx) {
        GivenFleet f = prepare_fleet(ctx);
        if (!f.row.infeasible_reason.empty()) throw model::InfeasibleError(f.row.infeasible_reason);
        return evaluate(ctx,
                        sim::simulate(ctx.workload, f.fleet, scenario.seed, ctx.sim_options()));
      });
}

PlanResult plan(const Scenario& scenario, const model::Catalog& catalog,
                const PlanOptions& options) {
  std::vector<const model::InstanceType*> candidates;
  const auto resolve = [&] { candidates = resolve_candidates(scenario, catalog); };

  return with_context(
      scenario, catalog, options.calibration, resolve,
      [&](const Context& ctx) {
        PlanResult result;
        result.model_id = ctx.model.id;
        result.model_num_params = ctx.model.num_params();
        result.workload = ctx.summary;
        if (scenario.fleet) {
          result.rows.push_back(plan_given_fleet(ctx));
          if (options.observer != nullptr) options.observer->on_row_done(result.rows.back(), 1, 1);
          return result;
        }
        result.rows.resize(candidates.size());
        std::atomic<size_t> next{0};
        std::mutex observer_mutex;
        size_t num_done = 0;
        std::exception_ptr failure;
        auto worker = [&] {
          for (size_t i = next++; i < candidates.size(); i = next++) {
            try {
              ctx.check_cancel();
              result.rows[i] = plan_one(ctx, *candidates[i], options.warm_start_sizes);
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
      },
      options.step_time_scale, options.record_itl, options.cancel);
}

// ---- PlanSession ------------------------------------------------------------------------------

struct PlanSession::Impl {
  Scenario scenario;
  const model::Catalog& catalog;
  model::ModelSpec model;
  sim::Workload workload;
  WorkloadSummary summary;
  std::vector<sim::Slo> class_slos;
  std::unique_ptr<Context> ctx;
};

PlanSession::PlanSession(const Scenario& scenario, const model::Catalog& catalog,
                         const PlanOptions& options) {
  if (!(options.step_time_scale > 0) || !std::isfinite(options.step_time_scale)) {
    throw InputError("plan options: step_time_scale " + std::to_string(options.step_time_scale) +
                     ": expected a positive number");
  }
  model::ModelSpec model = model::load_model_spec(scenario.model_config);
  check_fixed_tp(scenario, catalog, model);
  impl_ = std::unique_ptr<Impl>(new Impl{scenario, catalog, std::move(model), {}, {}, {}, {}});
  Impl& m = *impl_;
  m.workload = load_workload(m.scenario.workload, m.scenario.seed);
  m.summary = summarize_workload(m.workload, m.scenario.workload);
  m.class_slos = m.scenario.class_slos();
  m.ctx = std::unique_ptr<Context>(new Context{.scenario = m.scenario,
                                               .catalog = catalog,
                                               .model = m.model,
                                               .workload = m.workload,
                                               .summary = m.summary,
                                               .max_request_tokens = max_request_tokens(m.workload),
                                               .calibration = options.calibration,
                                               .class_slos = m.class_slos,
                                               .step_time_scale = options.step_time_scale,
                                               .record_itl = options.record_itl,
                                               .cancel = options.cancel});
}

PlanSession::~PlanSession() = default;

const Scenario& PlanSession::scenario() const { return impl_->scenario; }
const model::Catalog& PlanSession::catalog() const { return impl_->catalog; }
const model::ModelSpec& PlanSession::model() const { return impl_->model; }
const sim::Workload& PlanSession::workload() const { return impl_->workload; }
const WorkloadSummary& PlanSession::summary() const { return impl_->summary; }

ServingChoice PlanSession::default_choice(const std::string& instance_id) const {
  const Scenario& sc = impl_->scenario;
  return ServingChoice{chosen_tp(sc, instance_id), sc.weight_format, sc.serving};
}

PreparedType PlanSession::prepare(const model::InstanceType& instance,
                                  const ServingChoice& choice) const {
  return prepare_candidate(*impl_->ctx, instance, choice);
}

FleetEvaluation PlanSession::evaluate(const PreparedType& type, int64_t num_instances) const {
  if (!type.ready() || type.predictor == nullptr) {
    throw InputError("instance \"" + type.row.instance_type +
                     "\" cannot be simulated: " + type.row.infeasible_reason);
  }
  Candidate c;
  static_cast<PreparedType&>(c) = type;
  return c.simulate(*impl_->ctx, num_instances);
}

RequestLatencies PlanSession::request_latencies(const PreparedType& type,
                                                int64_t num_instances) const {
  if (!type.ready() || type.predictor == nullptr) {
    throw InputError("instance \"" + type.row.instance_type +
                     "\" cannot be simulated: " + type.row.infeasible_reason);
  }
  sim::FleetConfig fleet = type.fleet;
  fleet.num_replicas = num_instances * type.deployment.num_replicas;
  sim::SimOptions options = impl_->ctx->sim_options();
  options.record_itl_ns = false;
  const sim::SimResult result =
      sim::simulate(impl_->workload, fleet, *type.predictor, impl_->scenario.seed, options);
  if (result.cancelled) throw Cancelled("planning cancelled: " + result.stop_reason);
  RequestLatencies out;
  for (const sim::RequestRecord& r : result.requests) {
    if (r.rejected) continue;
    out.ttft_s.push_back((r.first_token - r.arrival).seconds());
    if (r.num_output_tokens >= 2) {
      out.tpot_s.push_back((r.completion - r.first_token).seconds() /
                           static_cast<double>(r.num_output_tokens - 1));
    }
  }
  return out;
}

PlanRow PlanSession::search_size(const PreparedType& type, const SizeSearch& search) const {
  Candidate c;
  static_cast<PreparedType&>(c) = type;
  return search_size_of(*impl_->ctx, std::move(c), search);
}

}  // namespace llmcap::plan
