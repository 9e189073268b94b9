// Number formats of weights and of the KV cache.
#pragma once

#include <string>
#include <string_view>

namespace llmcap::model {

/// Storage format of the weights. Each is exact in bytes, tensor by tensor, as
/// model/weight_encoding.h describes (bits per weight, group shape, scale type, and which tensor
/// classes it covers); docs/model.md, "Weight formats", tabulates them.
/// Uniform formats (every matrix, embeddings and LM head included, in the format):
///   kF32, kBf16;
///   kInt8: llmcap's kernels' int8: one byte per weight plus one f32 scale per output row;
///   kInt4: llmcap's kernels' 4-bit: blocks of 32 weights along a row with one bf16 scale
///   (0.5 + 2/32 = 0.5625 bytes per weight).
/// Checkpoint formats (as the tools that make them ship them):
///   kFp8: FP8 E4M3 layer matrices with one f32 weight scale and one f32 input scale per tensor;
///     embeddings and LM head bf16 (llm-compressor / vLLM "fp8", ModelOpt FP8);
///   kFp8Block: FP8 E4M3 layer matrices with one f32 scale per 128 x 128 block; embeddings, LM
///     head and routers bf16 (DeepSeek-V3's checkpoint, "weight_block_size": [128, 128]);
///   kQ4_0, kQ8_0, kQ4KM, kQ5KM, kQ6K: GGUF files as llama.cpp's llama-quantize writes them
///     (the K-quant mixes raise attn_v, ffn_down and the output matrix on some layers; norms
///     and routers f32);
///   kGptqInt4, kAwqInt4: 4-bit weights in groups of 128 input columns with an f16 scale and a
///     4-bit zero point per group (GPTQ also an int32 group index per input column); embeddings
///     and LM head f16;
///   kMxfp4: OCP MX FP4 (E2M1) layer matrices in blocks of 32 with one E8M0 scale byte;
///     embeddings, LM head and routers bf16;
///   kMxfp4Experts: gpt-oss as shipped: routed experts in MXFP4, every other tensor bf16;
///   kNvfp4: NVIDIA NVFP4 layer matrices in blocks of 16 with one FP8 E4M3 scale, plus f32
///     global and input scales per tensor; embeddings, LM head and routers bf16 (ModelOpt).
enum class WeightFormat {
  kF32,
  kBf16,
  kFp8,
  kInt8,
  kInt4,
  kFp8Block,
  kQ4_0,
  kQ8_0,
  kQ4KM,
  kQ5KM,
  kQ6K,
  kGptqInt4,
  kAwqInt4,
  kMxfp4,
  kMxfp4Experts,
  kNvfp4,
};

/// Every weight format, in the order above.
inline constexpr WeightFormat kAllWeightFormats[] = {
    WeightFormat::kF32,     WeightFormat::kBf16,  WeightFormat::kFp8,
    WeightFormat::kInt8,    WeightFormat::kInt4,  WeightFormat::kFp8Block,
    WeightFormat::kQ4_0,    WeightFormat::kQ8_0,  WeightFormat::kQ4KM,
    WeightFormat::kQ5KM,    WeightFormat::kQ6K,   WeightFormat::kGptqInt4,
    WeightFormat::kAwqInt4, WeightFormat::kMxfp4, WeightFormat::kMxfp4Experts,
    WeightFormat::kNvfp4};

/// The kernel class of a format's layer matrices (its bulk): one of kF32, kBf16, kFp8, kInt8,
/// kInt4 (the classes the kernels, the calibration tables and the peak FLOP/s keys know).
/// The 4-bit and 5/6-bit formats are kInt4 (weight-only low-bit: dequantised on GPUs, int8 dot
/// products on CPUs), q8_0 kInt8, fp8-block kFp8, mxfp4-experts kInt4 (its routed experts).
WeightFormat kernel_class(WeightFormat format);

/// Storage format of the KV cache.
enum class KvFormat { kF32, kBf16, kFp8, kInt8 };

/// Canonical names: "f32", "bf16", "fp8", "int8", "int4", "fp8-block", "q4_0", "q8_0",
/// "q4_k_m", "q5_k_m", "q6_k", "gptq-int4", "awq-int4", "mxfp4", "mxfp4-experts", "nvfp4".
std::string_view to_string(WeightFormat format);
/// One line saying what the format stores (for `llmcap model` and reports).
std::string_view describe(WeightFormat format);
/// Canonical names: "f32", "bf16", "fp8", "int8".
std::string_view to_string(KvFormat format);

/// Parses a canonical name. Throws InputError("<context>: unknown weight format "x"; known:
/// f32, bf16, ...") where `context` names the file and field.
WeightFormat parse_weight_format(std::string_view name, const std::string& context);
KvFormat parse_kv_format(std::string_view name, const std::string& context);

/// Bytes of one KV-cache element.
double bytes_per_element(KvFormat format);

/// Name of the compute data type that a weight format runs its matrix products in, as used in
/// the hardware catalog's "peak_flops_per_s" keys: f32->"f32", bf16->"bf16", fp8->"fp8",
/// int8->"int8"; int4 depends on the device. On a GPU ("bf16"), weight-only 4-bit kernels
/// dequantise the weights to 16-bit before the tensor-core product (AWQ, Lin et al. 2024; the
/// Marlin kernel, Frantar et al. 2024). On a CPU ("int8"), the activations are quantised to
/// 8 bits and the product runs on integer dot products (VPDPBUSD / AMX-INT8): llmcap's kernels
/// (kernels/matmul.h) and GGML's Q4_0 x Q8_0 dot product do so; measured here, int4 at batch
/// 32 runs 2.6x faster than bf16 (docs/model.md). Other formats: their kernel_class's.
std::string_view compute_dtype(WeightFormat format, bool on_gpu);

}  // namespace llmcap::model
