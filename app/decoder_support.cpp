#include "app/decoder_support.h"

#include <algorithm>
#include <optional>

#include "app/plan_output.h"
#include "app/profile.h"
#include "kernels/machine.h"
#include "model/input_error.h"

namespace llmcap::app {

namespace {

/// The decoder shape of a described model whose layers are all one Llama-like layer with a
/// mixture-of-experts MLP; std::nullopt for any other.
std::optional<kernels::DecoderShape> moe_decoder_shape(const model::ModelSpec& m) {
  const model::ModelDescription& d = *m.description;
  if (d.layers.empty() || d.layer_norm_bias || d.num_learned_positions > 0 || d.lm_head_bias ||
      d.num_norms_per_layer != 2) {
    return std::nullopt;
  }
  const model::LayerSpec& first = d.layers.front();
  const model::AttentionSpec& a = first.attention;
  const model::MlpSpec& mlp = first.mlp;
  const bool same = std::all_of(d.layers.begin(), d.layers.end(),
                                [&](const model::LayerSpec& l) { return l == first; });
  if (!same || a.kind != model::AttentionKind::kFull || a.out_bias || a.sinks ||
      mlp.kind != model::MlpKind::kMoe || !mlp.gated || mlp.bias || mlp.router_bias ||
      mlp.score_correction_bias) {
    return std::nullopt;
  }
  kernels::DecoderShape s;
  s.hidden = d.hidden_size;
  s.num_layers = static_cast<int64_t>(d.layers.size());
  s.num_heads = a.num_heads;
  s.num_kv_heads = a.num_kv_heads;
  s.head_dim = a.head_dim;
  s.vocab = d.vocab_size;
  s.qkv_bias = a.qkv_bias;
  s.num_experts = mlp.num_experts;
  s.experts_per_token = mlp.num_experts_per_token;
  s.expert_intermediate = mlp.expert_intermediate_size;
  s.shared_intermediate = mlp.num_shared_experts > 0 ? mlp.shared_intermediate_size : 0;
  return s;
}

}  // namespace

kernels::DecoderShape decoder_shape(const model::ModelSpec& m, const std::string& file) {
  if (m.description) {
    if (const auto moe = moe_decoder_shape(m)) return *moe;
    throw model::InputError(file +
                            ": the reference decoder runs Llama-architecture models "
                            "(model_type llama, mistral, qwen2) and mixture-of-experts models "
                            "whose layers are all alike (full attention, a gated MoE MLP without "
                            "biases, such as olmoe, mixtral, qwen3_moe), got model_type \"" +
                            m.description->model_type + "\"");
  }
  if (m.architecture == model::Architecture::kGptNeox || !m.gated_mlp || m.parallel_residual) {
    throw model::InputError(file +
                            ": the reference decoder runs Llama-architecture models "
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
  return s;
}

kernels::WeightFormat kernel_format(model::WeightFormat f, const std::string& context) {
  switch (f) {
    case model::WeightFormat::kF32:
      return kernels::WeightFormat::kF32;
    case model::WeightFormat::kBf16:
      return kernels::WeightFormat::kBf16;
    case model::WeightFormat::kInt8:
      return kernels::WeightFormat::kInt8;
    case model::WeightFormat::kInt4:
      return kernels::WeightFormat::kInt4;
    default:
      break;
  }
  throw model::InputError(context + "weight format \"" + std::string(model::to_string(f)) +
                          "\": no CPU kernel of the reference decoder; known: f32, bf16, int8, "
                          "int4");
}

std::vector<kernels::MatmulShape> model_matmul_shapes(
    const std::vector<std::filesystem::path>& model_files,
    const std::vector<model::WeightFormat>& formats) {
  std::vector<kernels::WeightFormat> kernel_formats;
  for (const model::WeightFormat f : formats) kernel_formats.push_back(kernel_format(f));
  std::vector<kernels::MatmulShape> out;
  for (const std::filesystem::path& file : model_files) {
    const model::ModelSpec spec = model::load_model_spec(file);
    const std::vector<model::MatmulShapeKey> calls = model::linear_call_shapes(spec);
    for (std::size_t i = 0; i < calls.size(); ++i) {
      // The layer's calls also at a prefill's batch; the LM head runs on one row per sequence
      // even in a prefill. It is listed last, unless a layer call has its shape (then listed
      // once, as that call).
      const bool lm_head = i + 1 == calls.size() && calls[i].rows == spec.vocab_size &&
                           calls[i].cols == spec.hidden_size;
      out.push_back({calls[i].rows, calls[i].cols, kernel_formats,
                     lm_head ? int64_t{0} : kPrefillCalibrationBatch});
    }
  }
  return out;
}

std::vector<kernels::AttentionLayout> model_attention_layouts(
    const std::vector<std::filesystem::path>& model_files) {
  std::vector<kernels::AttentionLayout> out;
  for (const std::filesystem::path& file : model_files) {
    const model::ModelSpec spec = model::load_model_spec(file);
    const kernels::AttentionLayout l{spec.num_attention_heads, spec.num_kv_heads, spec.head_dim};
    if (std::none_of(out.begin(), out.end(), [&](const kernels::AttentionLayout& o) {
          return o.q_heads == l.q_heads && o.kv_heads == l.kv_heads && o.head_dim == l.head_dim;
        })) {
      out.push_back(l);
    }
  }
  return out;
}

model::CalibrationProfile benchmark_profile(const BenchmarkProfileOptions& options,
                                            std::string& source) {
  if (!options.profile_file.empty()) {
    model::CalibrationProfile profile = model::read_profile_json(options.profile_file);
    const kernels::MachineInfo here = kernels::describe_machine();
    model::check_profile_machine(profile, model::MachineIdentity{here.cpu_model, here.isa},
                                 options.profile_file);
    source = options.profile_file;
    return profile;
  }
  if (options.progress) options.progress("no --profile: running a quick calibration first");
  kernels::CalibrationOptions cal;
  cal.quick = true;
  cal.size = options.size;
  cal.max_threads = options.threads;
  // The models' own shapes too, so that the predictor uses their measured times.
  cal.extra_matmul_shapes = model_matmul_shapes(options.models, options.formats);
  cal.extra_attention_layouts = model_attention_layouts(options.models);
  const kernels::CalibrationRun run = kernels::run_calibration(cal);
  model::CalibrationProfile profile = to_profile(run, options.tool);
  if (!options.save_file.empty() && options.outputs != nullptr) {
    options.outputs->add("--save-profile", options.save_file, model::profile_to_json(profile));
  } else if (!options.save_file.empty()) {
    write_file_atomically(options.save_file, model::profile_to_json(profile));
  }
  source = options.save_file.empty() ? "a quick calibration just now"
                                     : "a quick calibration just now (" + options.save_file + ")";
  return profile;
}

model::Deployment measured_machine(const model::CalibrationProfile& profile,
                                   const model::Efficiency& efficiency) {
  const int threads = profile.fit.threads;
  double read_bw = 0;
  if (auto it = profile.machine.read_bandwidth_bytes_per_s.find(threads);
      it != profile.machine.read_bandwidth_bytes_per_s.end()) {
    read_bw = it->second;
  }
  if (!(read_bw > 0)) {
    throw model::InputError(
        "calibration profile: field \"machine.read_bandwidth_bytes_per_s\": "
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

}  // namespace llmcap::app
