#include "model/formats.h"

#include <array>
#include <string>

#include "model/input_error.h"

namespace llmcap::model {
namespace {

constexpr auto kWeightFormats = std::to_array(kAllWeightFormats);
constexpr std::array<KvFormat, 4> kKvFormats = {KvFormat::kF32, KvFormat::kBf16, KvFormat::kFp8,
                                                KvFormat::kInt8};

template <typename Format, std::size_t N>
Format parse_format(std::string_view name, const std::string& context,
                    const std::array<Format, N>& known, const char* what) {
  std::string known_names;
  for (Format format : known) {
    if (to_string(format) == name) return format;
    if (!known_names.empty()) known_names += ", ";
    known_names += to_string(format);
  }
  throw InputError(context + ": unknown " + what + " \"" + std::string(name) +
                   "\"; known: " + known_names);
}

/// Name and description of each weight format, in enum order.
struct FormatInfo {
  WeightFormat format;
  std::string_view name;
  std::string_view text;
};

constexpr FormatInfo kFormatInfo[] = {
    {WeightFormat::kF32, "f32", "every matrix in f32 (4 bytes per weight)"},
    {WeightFormat::kBf16, "bf16", "every matrix in bf16 (2 bytes per weight)"},
    {WeightFormat::kFp8, "fp8",
     "FP8 E4M3 layer matrices, one f32 weight scale and one f32 input scale per tensor; "
     "embeddings and LM head bf16 (llm-compressor, ModelOpt)"},
    {WeightFormat::kInt8, "int8",
     "every matrix int8 with one f32 scale per output row (llmcap's int8 kernels)"},
    {WeightFormat::kInt4, "int4",
     "every matrix 4-bit in blocks of 32 with one bf16 scale, 4.5 bits per weight (llmcap's "
     "4-bit kernels)"},
    {WeightFormat::kFp8Block, "fp8-block",
     "FP8 E4M3 layer matrices with one f32 scale per 128x128 block; embeddings, LM head and "
     "routers bf16 (DeepSeek-V3's checkpoint)"},
    {WeightFormat::kQ4_0, "q4_0",
     "GGUF Q4_0: 4-bit in blocks of 32 with an f16 scale (4.5 bits); output matrix Q6_K, norms "
     "f32 (llama-quantize)"},
    {WeightFormat::kQ8_0, "q8_0",
     "GGUF Q8_0: 8-bit in blocks of 32 with an f16 scale (8.5 bits); norms f32"},
    {WeightFormat::kQ4KM, "q4_k_m",
     "GGUF Q4_K_M: Q4_K (4.5 bits) with attn_v and ffn_down in Q6_K on half the layers, output "
     "Q6_K, norms f32 (llama-quantize's mix)"},
    {WeightFormat::kQ5KM, "q5_k_m",
     "GGUF Q5_K_M: Q5_K (5.5 bits) with attn_v and ffn_down in Q6_K on half the layers, output "
     "Q6_K, norms f32 (llama-quantize's mix)"},
    {WeightFormat::kQ6K, "q6_k", "GGUF Q6_K: 6.5625 bits per weight everywhere, norms f32"},
    {WeightFormat::kGptqInt4, "gptq-int4",
     "GPTQ 4-bit, groups of 128 input columns with an f16 scale and a 4-bit zero, an int32 "
     "group index per input column; embeddings and LM head f16"},
    {WeightFormat::kAwqInt4, "awq-int4",
     "AWQ 4-bit, groups of 128 input columns with an f16 scale and a 4-bit zero; embeddings "
     "and LM head f16"},
    {WeightFormat::kMxfp4, "mxfp4",
     "OCP MXFP4 (E2M1) layer matrices in blocks of 32 with an E8M0 scale (4.25 bits); "
     "embeddings, LM head and routers bf16"},
    {WeightFormat::kMxfp4Experts, "mxfp4-experts",
     "routed experts in MXFP4, every other tensor bf16 (gpt-oss as shipped)"},
    {WeightFormat::kNvfp4, "nvfp4",
     "NVFP4 (E2M1) layer matrices in blocks of 16 with an FP8 E4M3 scale (4.5 bits) plus f32 "
     "global and input scales per tensor; embeddings, LM head and routers bf16 (ModelOpt)"},
};

const FormatInfo& info(WeightFormat format) {
  for (const FormatInfo& i : kFormatInfo) {
    if (i.format == format) return i;
  }
  return kFormatInfo[1];
}

}  // namespace

std::string_view to_string(WeightFormat format) { return info(format).name; }

std::string_view describe(WeightFormat format) { return info(format).text; }

WeightFormat kernel_class(WeightFormat format) {
  switch (format) {
    case WeightFormat::kF32:
    case WeightFormat::kBf16:
    case WeightFormat::kFp8:
    case WeightFormat::kInt8:
    case WeightFormat::kInt4:
      return format;
    case WeightFormat::kFp8Block:
      return WeightFormat::kFp8;
    case WeightFormat::kQ8_0:
      return WeightFormat::kInt8;
    case WeightFormat::kQ4_0:
    case WeightFormat::kQ4KM:
    case WeightFormat::kQ5KM:
    case WeightFormat::kQ6K:
    case WeightFormat::kGptqInt4:
    case WeightFormat::kAwqInt4:
    case WeightFormat::kMxfp4:
    case WeightFormat::kMxfp4Experts:
    case WeightFormat::kNvfp4:
      return WeightFormat::kInt4;
  }
  return WeightFormat::kBf16;
}

std::string_view to_string(KvFormat format) {
  switch (format) {
    case KvFormat::kF32:
      return "f32";
    case KvFormat::kBf16:
      return "bf16";
    case KvFormat::kFp8:
      return "fp8";
    case KvFormat::kInt8:
      return "int8";
  }
  return "?";
}

WeightFormat parse_weight_format(std::string_view name, const std::string& context) {
  return parse_format(name, context, kWeightFormats, "weight format");
}

KvFormat parse_kv_format(std::string_view name, const std::string& context) {
  return parse_format(name, context, kKvFormats, "KV-cache format");
}

double bytes_per_element(KvFormat format) {
  switch (format) {
    case KvFormat::kF32:
      return 4.0;
    case KvFormat::kBf16:
      return 2.0;
    case KvFormat::kFp8:
      return 1.0;
    case KvFormat::kInt8:
      return 1.0;
  }
  return 0.0;
}

std::string_view compute_dtype(WeightFormat format, bool on_gpu) {
  switch (kernel_class(format)) {
    case WeightFormat::kF32:
      return "f32";
    case WeightFormat::kBf16:
      return "bf16";
    case WeightFormat::kFp8:
      return "fp8";
    case WeightFormat::kInt8:
      return "int8";
    case WeightFormat::kInt4:
      return on_gpu ? "bf16" : "int8";
    default:
      return "bf16";
  }
}

}  // namespace llmcap::model
