// Number formats of weights and of the KV cache.
#pragma once

#include <string>
#include <string_view>

namespace llmcap::model {

/// Storage format of the weight matrices.
/// kInt4 stores 4-bit weights in blocks of 32 with one bf16 scale per block
/// (0.5 + 2/32 = 0.5625 bytes per weight), as in GGML Q4 / AWQ-style group quantisation.
/// kInt8 stores one byte per weight plus one f32 scale per output channel.
enum class WeightFormat { kF32, kBf16, kFp8, kInt8, kInt4 };

/// Storage format of the KV cache.
enum class KvFormat { kF32, kBf16, kFp8, kInt8 };

/// Canonical names: "f32", "bf16", "fp8", "int8", "int4".
std::string_view to_string(WeightFormat format);
/// Canonical names: "f32", "bf16", "fp8", "int8".
std::string_view to_string(KvFormat format);

/// Parses a canonical name. Throws InputError("<context>: unknown weight format "x"; known:
/// f32, bf16, fp8, int8, int4") where `context` names the file and field.
WeightFormat parse_weight_format(std::string_view name, const std::string& context);
KvFormat parse_kv_format(std::string_view name, const std::string& context);

/// Bytes of one KV-cache element.
double bytes_per_element(KvFormat format);

/// Name of the compute data type that a weight format runs its matrix products in, as used in
/// the hardware catalog's "peak_flops_per_s" keys: f32->"f32", bf16->"bf16", fp8->"fp8",
/// int8->"int8", int4->"bf16" (4-bit weights are dequantised to bf16 before the dot product,
/// as in GGML/llama.cpp CPU kernels and weight-only GPU kernels).
std::string_view compute_dtype(WeightFormat format);

}  // namespace llmcap::model
