#include "cli/validate.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "kernels/decoder.h"
#include "model/input_error.h"
#include "model/model_spec.h"
#include "model/roofline.h"

namespace llmcap::cli {
namespace {

/// Nearest-rank quantile of |values| (docs/metrics.md).
double abs_quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  for (double& v : values) v = std::fabs(v);
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::max<size_t>(rank, 1) - 1];
}

kernels::DecoderShape decoder_shape(const model::ModelSpec& m, const std::string& file) {
  if (m.architecture == model::Architecture::kGptNeox || !m.gated_mlp || m.parallel_residual) {
    throw model::InputError(file + ": the reference decoder runs Llama-architecture models "
                                   "(model_type llama, mistral, qwen2), got a GPT-NeoX layer");
  }
  kernels::DecoderShape s;
  s.hidden = m.hidden_size;
  s.intermediate = m.intermediate_size;
  s.num_layers = m.num_layers;
  s.num_heads = m.num_attention_heads;
  s.num_kv_heads = m.num_kv_heads;
  s.head_dim = m.head_dim;
  s.vocab = m.vocab_size;
  s.qkv_bias = m.qkv_bias;
  return s;  // rope_theta and rms_eps keep their defaults: step time does not depend on them
}

kernels::WeightFormat kernel_format(model::WeightFormat f) {
  switch (f) {
    case model::WeightFormat::kF32: return kernels::WeightFormat::kF32;
    case model::WeightFormat::kBf16: return kernels::WeightFormat::kBf16;
    case model::WeightFormat::kInt8: return kernels::WeightFormat::kInt8;
    case model::WeightFormat::kInt4: return kernels::WeightFormat::kInt4;
    case model::WeightFormat::kFp8: break;
  }
  throw model::InputError("weight format \"fp8\": no CPU kernel; known: f32, bf16, int8, int4");
}

/// The measured machine as a deployment: one replica, tp 1, with the profile's read bandwidth.
/// Peak FLOP/s (only a floor under the calibrated compute term) is estimated as
/// threads x 3 GHz x 64 f32 FLOP/cycle (two 512-bit FMA pipes), x2 for bf16 and x4 for int8.
model::Deployment measured_machine(const model::CalibrationProfile& profile,
                                   const model::Efficiency& efficiency) {
  const int threads = profile.fit.threads;
  double read_bw = 0;
  if (auto it = profile.machine.read_bandwidth_bytes_per_s.find(threads);
      it != profile.machine.read_bandwidth_bytes_per_s.end()) {
    read_bw = it->second;
  }
  if (!(read_bw > 0)) {
    throw model::InputError("calibration profile: field \"machine.read_bandwidth_bytes_per_s\": "
                            "no measurement at " +
                            std::to_string(threads) + " threads");
  }
  model::Deployment d;
  d.kind = model::DeviceKind::kCpu;
  d.memory_bandwidth_bytes_per_s = read_bw / efficiency.memory_bandwidth_fraction;
  const double f32_peak = threads * 3e9 * 64;
  d.peak_flops_per_s = {{"f32", f32_peak}, {"bf16", 2 * f32_peak}, {"int8", 4 * f32_peak}};
  d.rule = "the measured machine: " + std::to_string(threads) + " threads";
  return d;
}

}  // namespace

ValidationResult run_validation(const ValidationOptions& options,
                                const model::CalibrationProfile& profile,
                                const std::string& profile_source) {
  ValidationResult result;
  result.threads = profile.fit.threads;
  result.profile = profile_source;
  model::Efficiency efficiency = model::calibrated_efficiency(profile);
  efficiency.step_overhead_s = 0;  // the reference decoder has no engine scheduling
  const model::Deployment machine = measured_machine(profile, efficiency);
  kernels::ThreadPool pool(std::max(1, result.threads));
  const int64_t max_batch = *std::max_element(options.batches.begin(), options.batches.end());
  const int64_t max_context = *std::max_element(options.contexts.begin(), options.contexts.end());

  for (const auto& path : options.models) {
    const model::ModelSpec spec = model::load_model_spec(path);
    const kernels::DecoderShape shape = decoder_shape(spec, path.string());
    for (const model::WeightFormat format : options.formats) {
      const std::string format_name(model::to_string(format));
      if (profile.fit.matmul.count(format_name) == 0) {
        throw model::InputError(profile_source + ": field \"fit.matmul\": no fitted rates for \"" +
                                format_name + "\" weights");
      }
      const model::RooflinePredictor predictor(spec, format, model::KvFormat::kBf16, machine,
                                               efficiency);
      kernels::ReferenceDecoder decoder(shape, kernel_format(format), kernels::KvType::kBf16,
                                        max_batch, max_context + options.runs + 2,
                                        options.seed);
      for (const int64_t batch : options.batches) {
        for (const int64_t context : options.contexts) {
          const std::vector<int64_t> contexts(static_cast<size_t>(batch), context);
          decoder.set_contexts(contexts);
          decoder.step(pool);  // warm-up: caches, page faults of the KV pages touched
          std::vector<double> times;
          for (int run = 0; run < options.runs; ++run) {
            decoder.set_contexts(contexts);
            const auto start = std::chrono::steady_clock::now();
            decoder.step(pool);
            times.push_back(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
          }
          std::sort(times.begin(), times.end());
          model::BatchShape step;
          step.num_decode_seqs = batch;
          step.num_decode_context_tokens = batch * (context + 1);
          ValidationPoint p;
          p.model = spec.id;
          p.format = format_name;
          p.batch = batch;
          p.context_tokens = context;
          p.measured_s = times[times.size() / 2];
          p.predicted_s = predictor.step_time_s(step);
          result.points.push_back(p);
          if (options.progress) {
            std::ostringstream line;
            line << p.model << " " << p.format << " batch " << batch << " context " << context
                 << ": measured " << p.measured_s * 1e3 << " ms, predicted "
                 << p.predicted_s * 1e3 << " ms";
            options.progress(line.str());
          }
        }
      }
    }
  }
  std::vector<double> errors;
  for (const auto& p : result.points) errors.push_back(p.error());
  result.median_abs_error = abs_quantile(errors, 0.5);
  result.p95_abs_error = abs_quantile(errors, 0.95);
  return result;
}

std::string validation_to_json(const ValidationResult& result) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : result.points) {
    points.push_back({{"model", p.model},
                      {"format", p.format},
                      {"batch", p.batch},
                      {"context_tokens", p.context_tokens},
                      {"measured_s", p.measured_s},
                      {"predicted_s", p.predicted_s},
                      {"error", p.error()}});
  }
  const nlohmann::json doc = {{"points", points},
                              {"median_abs_error", result.median_abs_error},
                              {"p95_abs_error", result.p95_abs_error},
                              {"threads", result.threads},
                              {"profile", result.profile}};
  return doc.dump(2) + "\n";
}

void print_validation(const ValidationResult& result, std::ostream& out) {
  out << "Reference decoder steps on this machine (" << result.threads
      << " threads) against the calibrated predictor (" << result.profile << "):\n\n";
  out << std::left << std::setw(16) << "model" << std::setw(7) << "format" << std::right
      << std::setw(6) << "batch" << std::setw(9) << "context" << std::setw(14) << "measured ms"
      << std::setw(15) << "predicted ms" << std::setw(9) << "error" << "\n";
  for (const auto& p : result.points) {
    char err[32];
    std::snprintf(err, sizeof err, "%+.1f%%", 100 * p.error());
    char measured[32];
    char predicted[32];
    std::snprintf(measured, sizeof measured, "%.2f", p.measured_s * 1e3);
    std::snprintf(predicted, sizeof predicted, "%.2f", p.predicted_s * 1e3);
    out << std::left << std::setw(16) << p.model << std::setw(7) << p.format << std::right
        << std::setw(6) << p.batch << std::setw(9) << p.context_tokens << std::setw(14)
        << measured << std::setw(15) << predicted << std::setw(9) << err << "\n";
  }
  char summary[128];
  std::snprintf(summary, sizeof summary,
                "\n|error| over %zu points: median %.1f%%, p95 %.1f%%\n", result.points.size(),
                100 * result.median_abs_error, 100 * result.p95_abs_error);
  out << summary;
}

}  // namespace llmcap::cli
