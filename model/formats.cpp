#include "model/formats.h"

#include <array>
#include <string>

#include "model/input_error.h"

namespace llmcap::model {
namespace {

constexpr std::array<WeightFormat, 5> kWeightFormats = {WeightFormat::kF32, WeightFormat::kBf16,
                                                        WeightFormat::kFp8, WeightFormat::kInt8,
                                                        WeightFormat::kInt4};
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

}  // namespace

std::string_view to_string(WeightFormat format) {
  switch (format) {
    case WeightFormat::kF32:
      return "f32";
    case WeightFormat::kBf16:
      return "bf16";
    case WeightFormat::kFp8:
      return "fp8";
    case WeightFormat::kInt8:
      return "int8";
    case WeightFormat::kInt4:
      return "int4";
  }
  return "?";
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
  switch (format) {
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
  }
  return "bf16";
}

}  // namespace llmcap::model
