#include "model/formats.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "model/input_error.h"

namespace llmcap::model {
namespace {

using ::testing::HasSubstr;

TEST(WeightFormat, NamesRoundTrip) {
  for (const WeightFormat f : kAllWeightFormats) {
    EXPECT_EQ(parse_weight_format(to_string(f), "test"), f);
  }
  EXPECT_EQ(to_string(WeightFormat::kInt4), "int4");
  EXPECT_EQ(to_string(WeightFormat::kBf16), "bf16");
}

TEST(KvFormat, NamesRoundTrip) {
  for (const KvFormat f : {KvFormat::kF32, KvFormat::kBf16, KvFormat::kFp8, KvFormat::kInt8}) {
    EXPECT_EQ(parse_kv_format(to_string(f), "test"), f);
  }
  EXPECT_EQ(to_string(KvFormat::kFp8), "fp8");
}

TEST(WeightFormat, UnknownNameListsKnownOnes) {
  try {
    parse_weight_format("q4_k_s", "scenario.json: field \"weight_format\"");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "scenario.json: field \"weight_format\": unknown weight format \"q4_k_s\"; known: "
              "f32, bf16, fp8, int8, int4, fp8-block, q4_0, q8_0, q4_k_m, q5_k_m, q6_k, gptq-int4, "
              "awq-int4, mxfp4, mxfp4-experts, nvfp4");
  }
}

TEST(KvFormat, UnknownNameListsKnownOnes) {
  try {
    parse_kv_format("int4", "scenario.json: field \"kv_format\"");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    const std::string msg = e.what();
    EXPECT_THAT(msg, HasSubstr("scenario.json: field \"kv_format\""));
    EXPECT_THAT(msg, HasSubstr("\"int4\""));
    EXPECT_THAT(msg, HasSubstr("known: f32, bf16, fp8, int8"));
  }
}

TEST(KvFormat, NamesAreCaseSensitive) { EXPECT_THROW(parse_kv_format("BF16", "ctx"), InputError); }

TEST(KvFormat, BytesPerElement) {
  EXPECT_EQ(bytes_per_element(KvFormat::kF32), 4.0);
  EXPECT_EQ(bytes_per_element(KvFormat::kBf16), 2.0);
  EXPECT_EQ(bytes_per_element(KvFormat::kFp8), 1.0);
  EXPECT_EQ(bytes_per_element(KvFormat::kInt8), 1.0);
}

TEST(WeightFormat, ComputeDtypeOfInt4DependsOnTheDevice) {
  for (const bool gpu : {false, true}) {
    EXPECT_EQ(compute_dtype(WeightFormat::kF32, gpu), "f32");
    EXPECT_EQ(compute_dtype(WeightFormat::kBf16, gpu), "bf16");
    EXPECT_EQ(compute_dtype(WeightFormat::kFp8, gpu), "fp8");
    EXPECT_EQ(compute_dtype(WeightFormat::kInt8, gpu), "int8");
  }
  EXPECT_EQ(compute_dtype(WeightFormat::kInt4, true), "bf16");   // dequantised, tensor cores
  EXPECT_EQ(compute_dtype(WeightFormat::kInt4, false), "int8");  // int8 dot products
}

TEST(WeightFormat, CheckpointFormatsComputeAsTheirKernelClass) {
  EXPECT_EQ(kernel_class(WeightFormat::kQ4KM), WeightFormat::kInt4);
  EXPECT_EQ(kernel_class(WeightFormat::kQ8_0), WeightFormat::kInt8);
  EXPECT_EQ(kernel_class(WeightFormat::kFp8Block), WeightFormat::kFp8);
  EXPECT_EQ(kernel_class(WeightFormat::kMxfp4), WeightFormat::kInt4);
  EXPECT_EQ(compute_dtype(WeightFormat::kNvfp4, true), "bf16");
  EXPECT_EQ(compute_dtype(WeightFormat::kQ6K, false), "int8");
  EXPECT_EQ(compute_dtype(WeightFormat::kFp8Block, true), "fp8");
}

}  // namespace
}  // namespace llmcap::model
