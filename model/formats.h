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
/// int8->"int8"; int4 depends on the device. On a GPU ("bf16"), weight-only 4-bit kernels
/// dequantise the weights to 16-bit before the tensor-core product (AWQ, Lin et al. 2024; the
/// Marlin kernel, Frantar et al. 2024). On a CPU ("int8"), the activations are quantised to
/// 8 bits and the product runs on integer dot products (VPDPBUSD / AMX-INT8): llmcap's kernels
/// (kernels/matmul.h) and GGML's Q4_0 x Q8_0 dot product do so; measured here, int4 at batch
/// 32 runs 2.6x faster than bf16 (docs/model.md).
std::string_view compute_dtype(WeightFormat format, bool on_gpu);

}  // namespace llmcap::model
