// What `llmcap validate` and `llmcap serve-bench` share to run the reference decoder of the
// kernels beside the predictor of the model: shapes, formats and the measured machine.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "app/output_files.h"
#include "kernels/calibrate.h"
#include "kernels/decoder.h"
#include "kernels/matmul.h"
#include "model/calibration.h"
#include "model/formats.h"
#include "model/model_spec.h"
#include "model/roofline.h"

namespace llmcap::app {

/// The decoder shape of a Llama-architecture model (llama, mistral, qwen2), or of a described
/// mixture-of-experts model whose layers are all alike (full attention, a gated MoE MLP
/// without biases: olmoe, mixtral, qwen3_moe; kernels::DecoderShape::is_moe). rope_theta and
/// rms_eps keep their defaults: step time does not depend on them. The decoder does not run a
/// q/k norm (OLMoE, Qwen3) or Qwen2-MoE's shared-expert gate, small next to the products.
/// Throws model::InputError naming `file` for a GPT-NeoX layer (no gated MLP, parallel
/// residual) and for any other described model (MLA, sliding windows, dense and MoE layers
/// mixed, ...).
kernels::DecoderShape decoder_shape(const model::ModelSpec& m, const std::string& file);

/// The kernels' weight format for a model format. Throws model::InputError("<context>weight
/// format "fp8": no CPU kernel; known: f32, bf16, int8, int4") for fp8.
kernels::WeightFormat kernel_format(model::WeightFormat f, const std::string& context = "");

/// Activation rows at which a calibration also times a model's layer products, as a prefill
/// runs them (kernels::MatmulShape::prefill_batch): a prompt chunk of a few hundred tokens.
inline constexpr int64_t kPrefillCalibrationBatch = 256;

/// The matrix-product shapes of the models in `model_files` (model::linear_call_shapes at tp
/// 1: fused QKV, output, fused gate/up, down, LM head; each shape once), to be timed in
/// `formats` (empty: all four) by a calibration, so that the predictor uses their measured
/// times (model::CalibratedEfficiency::linear_shapes); the layer's products (not the LM head)
/// also at kPrefillCalibrationBatch rows. Throws model::InputError for a model file that
/// cannot be read and for fp8.
std::vector<kernels::MatmulShape> model_matmul_shapes(
    const std::vector<std::filesystem::path>& model_files,
    const std::vector<model::WeightFormat>& formats = {});

/// The decode-attention layouts (query heads, KV heads, head_dim) of the models in
/// `model_files`, each once, for a calibration to time. Throws model::InputError for a model
/// file that cannot be read.
std::vector<kernels::AttentionLayout> model_attention_layouts(
    const std::vector<std::filesystem::path>& model_files);

/// What a decoder benchmark (`validate`, `serve-bench`) calibrates with.
struct BenchmarkProfileOptions {
  std::string profile_file;  ///< --profile: read and checked against this machine; "" = calibrate
  std::string save_file;     ///< --save-profile: the quick calibration's profile, written (JSON)
  /// When set, the profile for save_file is added to it (option "--save-profile") instead of
  /// written at once, for the caller to commit with its other outputs (app/output_files.h).
  OutputSet* outputs = nullptr;
  std::vector<std::filesystem::path> models;            ///< their shapes join a quick calibration
  std::vector<model::WeightFormat> formats;             ///< the formats those shapes are timed in
  int threads = 0;                                      ///< of a quick calibration (0: all)
  kernels::SweepSize size = kernels::SweepSize::kFull;  ///< kTest for the CLI tests
  std::string tool;                                     ///< the profile's `tool` line
  std::function<void(const std::string&)> progress;     ///< optional progress lines
};

/// The calibration profile of a decoder benchmark and where it came from (`source`: the file,
/// or "a quick calibration just now"). With a profile file: it is read and must describe this
/// machine (model::check_profile_machine). Without: a quick calibration that also times the
/// models' shapes in `formats` (model_matmul_shapes, model_attention_layouts), its profile
/// written to `save_file` when that is set (atomically, as `calibrate --out`; or added to
/// `outputs`). Throws
/// model::InputError for an unreadable or foreign profile or model file.
model::CalibrationProfile benchmark_profile(const BenchmarkProfileOptions& options,
                                            std::string& source);

/// The machine a profile was measured on as a deployment: one replica, tp 1, with the
/// profile's read bandwidth at its fitted thread count. Peak FLOP/s (only a floor under the
/// calibrated compute term) is estimated as threads x 3 GHz x 64 f32 FLOP/cycle (two 512-bit
/// FMA pipes), x2 for bf16 and x4 for int8. Throws model::InputError when the profile has no
/// read bandwidth at that thread count.
model::Deployment measured_machine(const model::CalibrationProfile& profile,
                                   const model::Efficiency& efficiency);

}  // namespace llmcap::app
