#include "model/audit.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <utility>

#include "base/text.h"
#include "model/audit_lookup.h"
#include "model/calibrated_predictor.h"
#include "model/cpu_model.h"
#include "model/engine_profile.h"
#include "model/input_error.h"
#include "model/roofline.h"

namespace llmcap::model {

std::string_view to_string(ClaimKind kind) {
  switch (kind) {
    case ClaimKind::kTpot:
      return "tpot";
    case ClaimKind::kThroughput:
      return "throughput";
    case ClaimKind::kMemoryBandwidth:
      return "memory_bandwidth";
  }
  return "?";
}

std::string_view to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::kPlausible:
      return "plausible";
    case Verdict::kOptimistic:
      return "optimistic";
    case Verdict::kImpossible:
      return "impossible";
  }
  return "?";
}

namespace {

using audit_lookup::find_model;
using audit_lookup::id_list;
using audit_lookup::known_hardware;

// ---- Text ------------------------------------------------------------------------------------

std::string printf_text(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
using base::gb;  // decimal gigabytes, 4 significant digits: 39716622336 -> "39.72 GB"
using base::gb_per_s;
// 4 (or 3) significant digits, never an exponent (base::significant).
std::string tflop(double flops) { return base::significant(flops / 1e12, 4) + " TFLOP"; }
std::string tflop_per_s(double flops_per_s) {
  return base::significant(flops_per_s / 1e12, 4) + " TFLOP/s";
}
/// Milliseconds, 4 significant digits: 0.1274 -> "127.4 ms".
std::string ms(double s) { return base::significant(s * 1e3, 4) + " ms"; }
std::string times(double f) { return base::significant(f, 3) + "x"; }
std::string percent(double f) { return printf_text("%.1f%%", 100 * f); }
std::string number(double v) { return base::significant(v, 4); }

/// The highest peak FLOP/s of a device and its data type ("", 0 when it lists none).
std::pair<std::string, double> highest_peak(const HardwareSpec& hw) {
  std::pair<std::string, double> best{"", 0.0};
  for (const auto& [dtype, flops] : hw.peak_flops_per_s) {
    if (flops > best.second) best = {dtype, flops};
  }
  return best;
}

/// MT/s of a CPU's memory from its catalog peak: peak / (channels x 8 bytes).
double cpu_transfer_rate_mts(const HardwareSpec& cpu) {
  return cpu.memory_channels > 0
             ? cpu.peak_memory_bandwidth_bytes_per_s / (cpu.memory_channels * 8.0 * 1e6)
             : 0.0;
}

// ---- Resources of a claim --------------------------------------------------------------------

/// What the hardware of a latency claim offers: the bound's resources, the memory checked, and
/// the deployment and efficiency of the prediction.
struct Resources {
  std::string description;  ///< "24 of the 60 cores of one Intel Xeon Platinum 8490H socket"
  double bound_bandwidth_bytes_per_s = 0;
  std::string bandwidth_text;  ///< what bound_bandwidth is, for the explanation
  double bound_flops_per_s = 0;
  std::string flops_text;
  int64_t memory_bytes = 0;  ///< 0: not stated
  std::string memory_text;   ///< "the stated 137.4 GB", "the instance's 96 GB"
  std::optional<Deployment> deployment;
  std::string no_deployment_reason;
  const HardwareSpec* cpu = nullptr;  ///< CPU predictions: the socket (for a profile)
  std::string hardware_id;            ///< catalog id of the CPU or GPU predicted on
  double share = 1.0;                 ///< CPU: fraction of the socket the prediction gets
};

using base::plural;

Resources resources_of(const Claim& claim, const Catalog& catalog, const ModelSpec& model,
                       WeightFormat wf, KvFormat kf, const std::string& context) {
  Resources r;
  if (const HardwareSpec* hw = catalog.find_hardware(claim.hardware)) {
    const auto [dtype, peak] = highest_peak(*hw);
    Deployment d;
    d.kind = hw->kind;
    r.hardware_id = hw->id;
    d.tp_degree = 1;
    d.num_replicas = 1;
    d.weight_bytes = model.weight_bytes(wf);
    if (hw->kind == DeviceKind::kCpu) {
      const int cores = claim.num_cores > 0 ? claim.num_cores : hw->num_cores;
      r.share = hw->num_cores > 0 ? static_cast<double>(cores) / hw->num_cores : 1.0;
      r.cpu = hw;
      r.bound_bandwidth_bytes_per_s = hw->peak_memory_bandwidth_bytes_per_s;
      r.bound_flops_per_s = r.share * peak;
      if (r.share < 1.0) {
        r.description = std::to_string(cores) + " of the " + std::to_string(hw->num_cores) +
                        " cores of one " + hw->name + " socket";
        r.bandwidth_text = gb_per_s(r.bound_bandwidth_bytes_per_s) +
                           ", the whole socket's peak memory bandwidth (a slice of a socket "
                           "can at best use all of it)";
        r.flops_text = "the highest peak of any data type, " + dtype + ", of " +
                       std::to_string(cores) + " of " + std::to_string(hw->num_cores) + " cores";
      } else {
        r.description = "one whole " + hw->name + " socket (" + plural(hw->num_cores, "core") + ")";
        r.bandwidth_text =
            gb_per_s(r.bound_bandwidth_bytes_per_s) + ", the socket's peak memory bandwidth";
        r.flops_text = "the socket's highest peak of any data type, " + dtype;
      }
      // As the planner gives a slice of a socket (make_deployment): the share of the socket's
      // bandwidth and compute.
      d.memory_bandwidth_bytes_per_s = r.share * hw->peak_memory_bandwidth_bytes_per_s;
      for (const auto& [k, v] : hw->peak_flops_per_s) d.peak_flops_per_s[k] = r.share * v;
      d.memory_bytes = claim.memory_bytes;
      d.rule = r.share < 1.0
                   ? std::to_string(cores) + "/" + std::to_string(hw->num_cores) +
                         " cores of one " + hw->name + " socket: " + percent(r.share) + " of " +
                         gb_per_s(hw->peak_memory_bandwidth_bytes_per_s) + " and of peak FLOP/s"
                   : "one whole " + hw->name +
                         " socket: " + gb_per_s(hw->peak_memory_bandwidth_bytes_per_s);
      r.memory_bytes = claim.memory_bytes;
      r.memory_text = "the stated " + gb(static_cast<double>(claim.memory_bytes));
    } else {
      r.description = "one " + hw->name;
      r.bound_bandwidth_bytes_per_s = hw->peak_memory_bandwidth_bytes_per_s;
      r.bandwidth_text = gb_per_s(r.bound_bandwidth_bytes_per_s) +
                         ", the GPU's peak memory "
                         "bandwidth";
      r.bound_flops_per_s = peak;
      r.flops_text = "the GPU's highest peak of any data type, " + dtype;
      d.memory_bandwidth_bytes_per_s = hw->peak_memory_bandwidth_bytes_per_s;
      d.peak_flops_per_s = hw->peak_flops_per_s;
      r.memory_bytes = claim.memory_bytes > 0 ? claim.memory_bytes : hw->memory_bytes;
      d.memory_bytes = r.memory_bytes;
      r.memory_text = (claim.memory_bytes > 0 ? "the stated " : "the GPU's ") +
                      gb(static_cast<double>(r.memory_bytes));
      d.rule = "one " + hw->name + ": " + gb_per_s(hw->peak_memory_bandwidth_bytes_per_s);
    }
    r.deployment = d;
    return r;
  }

  const InstanceType& inst = catalog.instance(claim.hardware, context);
  InstanceType placed = inst;
  if (inst.kind == DeviceKind::kCpu) {
    const HardwareSpec& cpu = catalog.hardware(inst.cpu_id, context);
    const auto [dtype, peak] = highest_peak(cpu);
    const int socket_threads =
        inst.vcpus_per_socket > 0 ? inst.vcpus_per_socket : cpu.num_cores * cpu.threads_per_core;
    const double sockets_used = static_cast<double>(inst.vcpus) / std::max(1, socket_threads);
    // Every socket the instance touches can lend its bandwidth to the bound.
    const int64_t sockets_touched =
        std::max<int64_t>(1, (inst.vcpus + socket_threads - 1) / std::max(1, socket_threads));
    r.cpu = &cpu;
    r.hardware_id = cpu.id;
    r.bound_bandwidth_bytes_per_s =
        static_cast<double>(sockets_touched) * cpu.peak_memory_bandwidth_bytes_per_s;
    r.bound_flops_per_s = sockets_used * peak;
    r.description = "instance " + inst.id + " (" + std::to_string(inst.vcpus) + " vCPUs of " +
                    cpu.name + ", " + std::to_string(socket_threads) + " per socket)";
    if (sockets_used < 1.0) {
      r.bandwidth_text = gb_per_s(r.bound_bandwidth_bytes_per_s) +
                         ", the whole socket's peak memory bandwidth (a slice of a socket can "
                         "at best use all of it)";
      r.flops_text = "the highest peak of any data type, " + dtype + ", of " +
                     std::to_string(inst.vcpus) + "/" + std::to_string(socket_threads) +
                     " of the socket";
    } else {
      r.bandwidth_text = gb_per_s(r.bound_bandwidth_bytes_per_s) + ", the peak of " +
                         plural(sockets_touched, "socket") + " together";
      r.flops_text = "the highest peak of any data type, " + dtype + ", of " +
                     number(sockets_used) + " sockets";
    }
    r.memory_bytes = claim.memory_bytes > 0 ? claim.memory_bytes : inst.memory_bytes;
  } else {
    const HardwareSpec& gpu = catalog.hardware(inst.gpu_id, context);
    r.hardware_id = gpu.id;
    const auto [dtype, peak] = highest_peak(gpu);
    r.bound_bandwidth_bytes_per_s = inst.num_gpus * gpu.peak_memory_bandwidth_bytes_per_s;
    r.bound_flops_per_s = inst.num_gpus * peak;
    r.description =
        "instance " + inst.id + " (" + std::to_string(inst.num_gpus) + " x " + gpu.name + ")";
    r.bandwidth_text = gb_per_s(r.bound_bandwidth_bytes_per_s) + ", the peak of " +
                       plural(inst.num_gpus, "GPU") + " together";
    r.flops_text =
        "the highest peak of any data type, " + dtype + ", of " + plural(inst.num_gpus, "GPU");
    // The model lives in GPU memory.
    r.memory_bytes = claim.memory_bytes > 0 ? claim.memory_bytes : inst.num_gpus * gpu.memory_bytes;
  }
  r.memory_text = (claim.memory_bytes > 0 ? "the stated " : "the instance's ") +
                  gb(static_cast<double>(r.memory_bytes));
  if (claim.memory_bytes > 0 && inst.kind == DeviceKind::kCpu) {
    placed.memory_bytes = claim.memory_bytes;
  }
  // The planner's placement. Its fit rule asks for KV room of one max-length sequence (at
  // most kMaxFitSequenceTokens); here the claim's own context is what must fit.
  ModelSpec for_fit = model;
  for_fit.max_position_embeddings = std::max<int64_t>(1, claim.context_tokens);
  try {
    r.deployment = make_deployment(placed, catalog, for_fit, wf, kf, default_efficiency(inst.kind));
    if (inst.kind == DeviceKind::kCpu) {
      r.share = std::min(1.0, r.deployment->memory_bandwidth_bytes_per_s /
                                  r.cpu->peak_memory_bandwidth_bytes_per_s);
    }
  } catch (const InfeasibleError& e) {
    r.no_deployment_reason = e.what();
  }
  return r;
}

// ---- Audits ----------------------------------------------------------------------------------

ClaimAudit audit_bandwidth(const Claim& claim, const Catalog& catalog) {
  ClaimAudit a;
  a.id = claim.id;
  a.kind = claim.kind;
  a.claimed_bytes_per_s = claim.memory_bandwidth_bytes_per_s;
  a.memory_transfer_rate_mts = claim.memory_transfer_rate_mts;
  const double per_channel = static_cast<double>(claim.memory_transfer_rate_mts) * 1e6 * 8.0;
  a.implied_channels = claim.memory_bandwidth_bytes_per_s / per_channel;
  const std::string mts = std::to_string(claim.memory_transfer_rate_mts);

  std::ostringstream e;
  const double rounded = std::round(a.implied_channels);
  const bool whole = rounded >= 1 && std::fabs(a.implied_channels - rounded) <= 1e-3 * rounded;
  e << gb_per_s(claim.memory_bandwidth_bytes_per_s) << " of " << claim.memory_type << " = "
    << number(a.implied_channels) << " channels x " << mts << " MT/s x 8 bytes";
  if (whole) {
    const int n = static_cast<int>(rounded);
    e << ": the theoretical peak of " << plural(n, "channel");
    if (n <= 2) {
      e << ", a desktop or laptop (dual-channel) platform, not a server socket";
    } else if (n < 8) {
      e << ", a workstation-class platform, less than a server socket";
    } else {
      e << ", a server socket's channel count";
    }
  } else {
    e << ": not a whole number of channels (between " << std::floor(a.implied_channels) << " and "
      << std::ceil(a.implied_channels) << "), so not a theoretical peak; perhaps a "
      << "measured figure";
  }
  // What the catalog's server sockets have, at the claim's rate and at their own.
  std::map<int, const HardwareSpec*> by_channels;  // first CPU of the catalog per channel count
  for (const HardwareSpec& cpu : catalog.hardware()) {
    if (cpu.kind == DeviceKind::kCpu && cpu.memory_channels > 0) {
      by_channels.emplace(cpu.memory_channels, &cpu);
    }
  }
  if (!by_channels.empty()) {
    e << ". The catalog's server sockets have ";
    std::size_t k = 0;
    for (const auto& [channels, cpu] : by_channels) {
      e << (k == 0 ? "" : (k + 1 == by_channels.size() ? " or " : ", ")) << channels
        << " channels (e.g. " << cpu->name << ": " << channels << " x "
        << number(cpu_transfer_rate_mts(*cpu))
        << " MT/s x 8 bytes = " << gb_per_s(cpu->peak_memory_bandwidth_bytes_per_s) << ")";
      ++k;
    }
    e << "; at " << mts << " MT/s";
    k = 0;
    for (const auto& [channels, cpu] : by_channels) {
      e << (k == 0 ? " " : (k + 1 == by_channels.size() ? " and " : ", ")) << channels
        << " channels give " << gb_per_s(channels * per_channel);
      ++k;
    }
  }

  std::optional<double> peak;
  std::string peak_of;
  if (claim.num_channels > 0) {
    peak = claim.num_channels * per_channel;
    peak_of = "the stated " + plural(claim.num_channels, "channel") + " (" +
              std::to_string(claim.num_channels) + " x " + mts +
              " MT/s x 8 bytes = " + gb_per_s(*peak) + ")";
  }
  if (!claim.hardware.empty()) {
    const HardwareSpec* cpu = catalog.find_hardware(claim.hardware);
    int64_t sockets = 1;
    std::string what;
    if (cpu == nullptr) {
      const InstanceType& inst = catalog.instance(claim.hardware, "claim \"" + claim.id + "\"");
      cpu = &catalog.hardware(inst.cpu_id, "instance \"" + inst.id + "\"");
      const int socket_threads = inst.vcpus_per_socket > 0 ? inst.vcpus_per_socket
                                                           : cpu->num_cores * cpu->threads_per_core;
      sockets =
          std::max<int64_t>(1, (inst.vcpus + socket_threads - 1) / std::max(1, socket_threads));
      what = "instance " + inst.id + " (" + plural(sockets, "socket") + " of " + cpu->name + ")";
    } else {
      what = "one " + cpu->name + " socket";
    }
    const double hw_peak = static_cast<double>(sockets) * cpu->peak_memory_bandwidth_bytes_per_s;
    const double hw_mts = cpu_transfer_rate_mts(*cpu);
    e << ". The named " << what << " has " << sockets * cpu->memory_channels << " channels x "
      << number(hw_mts) << " MT/s x 8 bytes = " << gb_per_s(hw_peak) << " peak; the claim is "
      << percent(claim.memory_bandwidth_bytes_per_s / hw_peak) << " of it";
    if (std::fabs(hw_mts - static_cast<double>(claim.memory_transfer_rate_mts)) > 0.5) {
      e << " (the catalog gives its memory " << number(hw_mts) << " MT/s, not " << mts << ")";
    }
    if (!peak || hw_peak < *peak) {
      peak = hw_peak;
      peak_of = "the peak of the named hardware";
    }
  }
  a.peak_bytes_per_s = peak;
  if (peak && claim.memory_bandwidth_bytes_per_s > *peak * (1 + kBoundRelativeSlack)) {
    a.verdict = Verdict::kImpossible;
    e << ". Claimed " << gb_per_s(claim.memory_bandwidth_bytes_per_s) << " is above " << peak_of
      << ": impossible.";
  } else {
    a.verdict = Verdict::kPlausible;
    e << ". " << (peak ? "Not above " + peak_of : std::string("No hardware named to compare with"))
      << ": plausible as a figure of " << number(a.implied_channels) << " channels of "
      << claim.memory_type << ".";
  }
  a.explanation = e.str();
  return a;
}

/// What one decode step of `batch` sequences of `context_tokens` reads and computes at the
/// least (the bound's arithmetic; docs/audit.md, "The rule").
struct StepReads {
  double weight_bytes = 0;     ///< weights streamed (decode_step_weight_bytes)
  double embedding_bytes = 0;  ///< the untied input embedding table left out (dense text)
  double kv_bytes = 0;         ///< batch x the KV cache of one sequence (window-aware, MLA latent)
  int64_t kv_bytes_per_sequence = 0;
  bool windowed = false;  ///< kv_bytes_per_sequence < context x KV bytes per token
  /// Mixture of experts: routed experts per MoE layer, per token, and the distinct experts
  /// the batch's tokens reach, E x (1 - (1 - k/E)^batch) (0 for a dense model).
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;
  double distinct_experts = 0;
  double flops = 0;
};

StepReads step_reads(const ModelSpec& m, WeightFormat wf, KvFormat kf, int64_t batch,
                     int64_t context_tokens, int64_t all_weight_bytes) {
  const ModelDescription d = describe_layers(m);
  const double b = static_cast<double>(batch);
  StepReads r;
  r.weight_bytes = d.decode_step_weight_bytes(wf, b);
  r.kv_bytes_per_sequence = d.kv_cache_bytes_for_sequence(context_tokens, kf);
  r.kv_bytes = b * static_cast<double>(r.kv_bytes_per_sequence);
  r.windowed = r.kv_bytes_per_sequence < context_tokens * m.kv_cache_bytes_per_token(kf);
  // Attention: per layer and sequence, a query-key product over the cached tokens and a
  // weighted sum of the values: 2 x cached x heads x (qk width + v width) FLOPs (MLA: its
  // decompressed widths, the smaller of its two forms).
  int64_t attention_elements = 0;
  for (const LayerSpec& layer : d.layers) {
    const AttentionSpec& a = layer.attention;
    const int64_t cached = a.kind == AttentionKind::kSlidingWindow
                               ? std::min(context_tokens, a.window_tokens)
                               : context_tokens;
    const int64_t widths = a.kind == AttentionKind::kMla
                               ? a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim
                               : 2 * a.head_dim;
    attention_elements += cached * a.num_heads * widths;
    if (layer.mlp.kind == MlpKind::kMoe && r.num_experts == 0) {
      r.num_experts = layer.mlp.num_experts;
      r.experts_per_token = layer.mlp.num_experts_per_token;
    }
  }
  if (r.num_experts > 0) {
    const double e = static_cast<double>(r.num_experts);
    r.distinct_experts =
        e * expected_fraction_of_experts_hit(e, static_cast<double>(r.experts_per_token), b);
  } else {
    r.embedding_bytes = static_cast<double>(all_weight_bytes) - r.weight_bytes;
  }
  r.flops = 2.0 * b *
                (static_cast<double>(m.num_layer_matrix_params()) +
                 static_cast<double>(m.vocab_size) * static_cast<double>(m.hidden_size)) +
            2.0 * b * static_cast<double>(attention_elements);
  return r;
}

/// The parts of what a decode step reads, for the explanation: "<weights> of weights; + <KV>".
void explain_reads(const Claim& claim, const StepReads& step, int64_t weight_bytes, WeightFormat wf,
                   int64_t kv_per_token, std::ostringstream& e) {
  const double streamed = step.weight_bytes;
  if (step.num_experts > 0) {
    e << gb(streamed) << " of the " << gb(static_cast<double>(weight_bytes))
      << " of weights: all but the input embedding table, of which a step reads one row per "
         "sequence, and the routed experts its tokens do not reach: of "
      << step.num_experts << " experts per MoE layer, " << step.experts_per_token << " per token, "
      << plural(claim.batch, "token") << (claim.batch == 1 ? " reaches " : " reach ")
      << step.num_experts << " x (1 - (1 - " << step.experts_per_token << "/" << step.num_experts
      << ")^" << claim.batch << ") = " << number(step.distinct_experts)
      << " under uniform routing, each in " << to_string(wf) << "; + ";
  } else {
    if (step.embedding_bytes > 0) {
      e << gb(static_cast<double>(weight_bytes)) << " of weights less the "
        << gb(step.embedding_bytes)
        << " input embedding table, of which a step reads one row per sequence, = ";
    }
    e << gb(streamed) << " of weights; + ";
  }
  if (step.windowed) {
    e << claim.batch << " x " << step.kv_bytes_per_sequence << " bytes of KV cache of a "
      << claim.context_tokens << "-token sequence (sliding-window layers keep only their window)";
  } else {
    e << claim.batch << " x " << claim.context_tokens << " tokens x " << kv_per_token
      << " bytes of KV cache";
  }
}

/// The predicted step of `claim` on res.deployment (the planner's placement rule) into `a`
/// (predictor, predicted_s, factor), its sentences appended to `e`.
void predict_step(const Claim& claim, const ModelSpec& m, WeightFormat wf, KvFormat kf,
                  const Resources& res, const AuditOptions& options, ClaimAudit& a,
                  std::ostringstream& e) {
  if (res.deployment) {
    Efficiency eff = default_efficiency(res.deployment->kind);
    a.predictor = std::string("the roofline with the ") +
                  (res.deployment->kind == DeviceKind::kCpu ? "CPU" : "GPU") +
                  " datasheet defaults: " + percent(eff.memory_bandwidth_fraction) +
                  " of peak bandwidth, " + percent(eff.compute_fraction) + " of peak FLOP/s, " +
                  ms(eff.step_overhead_s) + " per step";
    std::string by = a.predictor;
    Deployment deployment = *res.deployment;
    const EngineProfile* engine =
        deployment.kind == DeviceKind::kCpu ? options.cpu_engine : options.gpu_engine;
    if (options.fitted_engines != nullptr) {
      engine = engine_for(engine, *options.fitted_engines, res.hardware_id);
    }
    if (options.profile != nullptr && res.cpu != nullptr) {
      eff = transfer_efficiency(*options.profile, *res.cpu, std::min(1.0, res.share));
      a.predictor = "calibrated: " + eff.calibrated->source;
      by = "the roofline with rates " + eff.calibrated->source;
    } else if (engine != nullptr) {
      eff = engine_efficiency(*engine, eff);
      if (res.cpu != nullptr) {
        const int cores =
            std::max(1, static_cast<int>(std::lround(res.share * res.cpu->num_cores)));
        apply_cpu_model(deployment, *res.cpu, cores, engine->cpu_path,
                        engine->compute_fraction.value, std::min(1.0, res.share));
      }
      a.predictor = "engine " + engine->id + " (" + engine->name + ", docs/engines.md)";
      if (!engine->hardware.empty()) a.predictor += "; " + engine->fit_summary;
      by = "the roofline priced as " + engine->name + " runs it";
    } else if (options.profile != nullptr) {
      a.predictor += "; the calibration profile covers CPUs only";
      by = a.predictor;
    }
    const std::shared_ptr<const StepTimePredictor> predictor =
        make_step_time_predictor(m, wf, kf, deployment, eff);
    BatchShape step;
    step.num_decode_seqs = claim.batch;
    step.num_decode_context_tokens = claim.batch * claim.context_tokens;
    a.predicted_s = predictor->step_time_s(step);
    a.factor = *a.predicted_s / *a.claimed_s;
    e << " Predicted: " << ms(*a.predicted_s) << ", by " << by << "; on " << deployment.rule << ".";
    if (*a.predicted_s < *a.lower_bound_s) {
      e << " The prediction is below the physical bound: its rates exceed this hardware's peak "
           "(a profile measured on data that fit the caches, or transferred too far?), so it "
           "cannot be trusted here.";
    }
  } else {
    a.predictor = "none";
    e << " No prediction: the planner's placement rule does not place the model here ("
      << res.no_deployment_reason << ").";
  }
}

}  // namespace

ClaimAudit audit_claim(const Claim& claim, const Catalog& catalog,
                       const std::vector<ModelSpec>& models, const AuditOptions& options) {
  const std::string context = "claim \"" + claim.id + "\"";
  if (!(options.tolerance >= 1.0)) {
    throw InputError(context + ": tolerance: expected a factor >= 1, got " +
                     number(options.tolerance));
  }
  if (claim.kind == ClaimKind::kMemoryBandwidth) return audit_bandwidth(claim, catalog);

  const ModelSpec* found = find_model(models, claim.model);
  if (found == nullptr) {
    throw InputError(context + ": field \"model\": unknown model \"" + claim.model +
                     "\"; known: " + id_list(models));
  }
  if (catalog.find_hardware(claim.hardware) == nullptr &&
      catalog.find_instance(claim.hardware) == nullptr) {
    throw InputError(context + ": field \"hardware\": unknown hardware or instance \"" +
                     claim.hardware + "\"; " + known_hardware(catalog));
  }
  const ModelSpec& m = *found;
  ClaimAudit a;
  a.id = claim.id;
  a.kind = claim.kind;
  a.model = m.id;
  a.weight_format_assumed = !claim.weight_format.has_value();
  a.weight_format = claim.weight_format.value_or(WeightFormat::kInt4);
  a.kv_format_assumed = !claim.kv_format.has_value();
  a.kv_format = claim.kv_format.value_or(KvFormat::kFp8);
  const WeightFormat wf = a.weight_format;
  const KvFormat kf = a.kv_format;
  const double batch = static_cast<double>(claim.batch);
  a.claimed_s = claim.kind == ClaimKind::kTpot ? claim.tpot_s : batch / claim.output_tokens_per_s;

  const Resources res = resources_of(claim, catalog, m, wf, kf, context);
  std::ostringstream e;
  if (claim.kind == ClaimKind::kThroughput) {
    e << "Claimed " << number(claim.output_tokens_per_s) << " output tokens/s over a batch of "
      << claim.batch << " = one decode step every " << ms(*a.claimed_s) << ". ";
  }
  e << m.id << " in " << to_string(wf);
  if (a.weight_format_assumed) {
    e << " (assumed: the claim names no weight format; 4-bit is the most favourable the model "
         "could use)";
  }
  e << ", " << to_string(kf) << " KV cache";
  if (a.kv_format_assumed) e << " (assumed: not stated; 1 byte per element, the most favourable)";
  e << ", batch " << claim.batch << ", context " << claim.context_tokens << " tokens, on "
    << res.description << ".";

  // Memory.
  a.weight_bytes = m.weight_bytes(wf);
  const int64_t kv_per_token = m.kv_cache_bytes_per_token(kf);
  const StepReads step = step_reads(m, wf, kf, claim.batch, claim.context_tokens, a.weight_bytes);
  const double kv_bytes = step.kv_bytes;
  a.memory_bytes = res.memory_bytes;
  if (res.memory_bytes > 0) {
    const double need = static_cast<double>(a.weight_bytes) + kv_bytes;
    a.fits = need <= static_cast<double>(res.memory_bytes);
    e << " Memory: " << gb(static_cast<double>(a.weight_bytes)) << " of weights (" << a.weight_bytes
      << " bytes) + " << gb(kv_bytes) << " of KV cache = " << gb(need)
      << (a.fits ? " fit " : " do not fit ") << res.memory_text << " (" << res.memory_bytes
      << " bytes).";
  } else {
    e << " Memory: not stated, not checked (weights need "
      << gb(static_cast<double>(a.weight_bytes)) << ").";
  }

  // Lower bound.
  const double streamed = step.weight_bytes;
  const double bytes = streamed + kv_bytes;
  a.bytes_per_step = std::llround(bytes);
  a.flops_per_step = step.flops;
  a.bound_bandwidth_bytes_per_s = res.bound_bandwidth_bytes_per_s;
  a.bound_flops_per_s = res.bound_flops_per_s;
  const double memory_s = bytes / res.bound_bandwidth_bytes_per_s;
  const double compute_s = res.bound_flops_per_s > 0 ? a.flops_per_step / res.bound_flops_per_s : 0;
  a.lower_bound_s = std::max(memory_s, compute_s);
  e << " Lower bound: a decode step reads " << gb(bytes) << " (";
  explain_reads(claim, step, a.weight_bytes, wf, kv_per_token, e);
  e << " = " << gb(kv_bytes) << "); at " << res.bandwidth_text << ", that takes " << ms(memory_s)
    << ". It does " << tflop(a.flops_per_step) << "; at " << tflop_per_s(res.bound_flops_per_s)
    << " (" << res.flops_text << ") that takes " << ms(compute_s)
    << ". Bound: " << ms(*a.lower_bound_s)
    << (memory_s >= compute_s ? " (memory)." : " (compute).");

  predict_step(claim, m, wf, kf, res, options, a, e);

  // Verdict.
  const double claimed = *a.claimed_s;
  if (!a.fits) {
    a.verdict = Verdict::kImpossible;
    if (a.weight_bytes > res.memory_bytes) {
      e << " Impossible: the weights alone need " << a.weight_bytes << " bytes, more than the "
        << res.memory_bytes << " bytes of memory.";
    } else {
      e << " Impossible: the weights (" << a.weight_bytes << " bytes) and the batch's KV cache ("
        << std::llround(kv_bytes) << " bytes) need more than the " << res.memory_bytes
        << " bytes of memory.";
    }
  } else if (claimed < *a.lower_bound_s * (1 - kBoundRelativeSlack)) {
    a.verdict = Verdict::kImpossible;
    e << " Claimed " << ms(claimed) << " is below the bound " << ms(*a.lower_bound_s)
      << ": impossible";
    if (memory_s >= compute_s) {
      e << " (reading " << gb(bytes) << " in " << ms(claimed) << " needs "
        << gb_per_s(bytes / claimed) << ", "
        << times(bytes / claimed / res.bound_bandwidth_bytes_per_s) << " the peak).";
    } else {
      e << " (" << tflop(a.flops_per_step) << " in " << ms(claimed) << " needs "
        << tflop_per_s(a.flops_per_step / claimed) << ", "
        << times(a.flops_per_step / claimed / res.bound_flops_per_s) << " the peak).";
    }
  } else if (a.factor && *a.factor > options.tolerance) {
    a.verdict = Verdict::kOptimistic;
    e << " Claimed " << ms(claimed) << " is " << times(*a.factor) << " faster than predicted ("
      << "more than the tolerance " << number(options.tolerance) << "x): optimistic.";
  } else {
    a.verdict = Verdict::kPlausible;
    e << " Claimed " << ms(claimed) << " is not below the bound";
    if (a.factor) {
      e << " and within " << number(options.tolerance) << "x of the prediction (predicted / "
        << "claimed = " << number(*a.factor) << ")";
    }
    e << ": plausible.";
  }
  a.explanation = e.str();
  return a;
}

}  // namespace llmcap::model
