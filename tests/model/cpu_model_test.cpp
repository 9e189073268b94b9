// The CPU hardware model: bandwidth of the cores used (per-core limit reached and not), and the
// peaks of each instruction path by microarchitecture.
#include "model/cpu_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "base/error.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using ::testing::HasSubstr;

/// Rates are products of round figures: exact to double rounding.
constexpr double kRelTolerance = 1e-12;

HardwareSpec spr(bool with_memory_model) {
  HardwareSpec c;
  c.id = "spr";
  c.kind = DeviceKind::kCpu;
  c.microarchitecture = "Sapphire Rapids";
  c.num_cores = 56;
  c.clock_hz = 3e9;
  c.peak_memory_bandwidth_bytes_per_s = 307.2e9;
  if (with_memory_model) {
    c.per_core_read_bytes_per_s = 17.5e9;
    c.sustained_read_bytes_per_s = 240.6e9;
    c.memory_model_source = "test";
  }
  return c;
}

TEST(CpuBandwidth, FewCoresPullTheirPerCoreRateBelowTheSocketLimit) {
  // 8 cores x 17.5 GB/s = 140 GB/s < 240.6 GB/s: the per-core limit binds.
  EXPECT_NEAR(cpu_read_bandwidth_bytes_per_s(spr(true), 8), 140e9, 140e9 * kRelTolerance);
  EXPECT_NEAR(cpu_read_bandwidth_bytes_per_s(spr(true), 1), 17.5e9, 17.5e9 * kRelTolerance);
}

TEST(CpuBandwidth, ManyCoresReachTheSocketsSustainedRate) {
  // 14 x 17.5 = 245 > 240.6: the socket binds from 14 cores on, so 32 and 56 cores get the same.
  EXPECT_DOUBLE_EQ(cpu_read_bandwidth_bytes_per_s(spr(true), 14), 240.6e9);
  EXPECT_DOUBLE_EQ(cpu_read_bandwidth_bytes_per_s(spr(true), 32), 240.6e9);
  EXPECT_DOUBLE_EQ(cpu_read_bandwidth_bytes_per_s(spr(true), 56), 240.6e9);
  // Below: 13 x 17.5 = 227.5.
  EXPECT_NEAR(cpu_read_bandwidth_bytes_per_s(spr(true), 13), 227.5e9, 227.5e9 * kRelTolerance);
}

TEST(CpuBandwidth, WithoutAMemoryModelASliceGetsItsShareOfTheDatasheet) {
  EXPECT_NEAR(cpu_read_bandwidth_bytes_per_s(spr(false), 14), 307.2e9 / 4,
              307.2e9 / 4 * kRelTolerance);
  EXPECT_DOUBLE_EQ(cpu_read_bandwidth_bytes_per_s(spr(false), 56), 307.2e9);
}

TEST(CpuPaths, PeaksAreCoresTimesClockTimesTheOpsOfThePath) {
  const auto amx = path_peak_flops(spr(true), 56, InstructionPath::kAmx);
  EXPECT_DOUBLE_EQ(amx.at("int8"), 56 * 3e9 * 2048);  // the catalog's AMX-INT8 figure
  EXPECT_DOUBLE_EQ(amx.at("bf16"), 56 * 3e9 * 1024);
  EXPECT_DOUBLE_EQ(amx.at("f32"), 56 * 3e9 * 64);  // f32 stays on AVX-512
  const auto avx512 = path_peak_flops(spr(true), 32, InstructionPath::kAvx512);
  EXPECT_DOUBLE_EQ(avx512.at("int8"), 32 * 3e9 * 256);
  EXPECT_DOUBLE_EQ(avx512.at("bf16"), 32 * 3e9 * 128);
  const auto avx2 = path_peak_flops(spr(true), 1, InstructionPath::kAvx2);
  EXPECT_DOUBLE_EQ(avx2.at("f32"), 3e9 * 32);
}

TEST(CpuPaths, AnEngineBuiltForAmxRunsItsBestPathOnCoresWithout) {
  HardwareSpec genoa = spr(true);
  genoa.microarchitecture = "Zen 4 (Genoa)";
  EXPECT_EQ(available_path(genoa, InstructionPath::kAmx), InstructionPath::kAvx512);
  EXPECT_EQ(path_rates(genoa.microarchitecture, InstructionPath::kAvx512)->bf16, 64);
  HardwareSpec milan = genoa;
  milan.microarchitecture = "Zen 3 (Milan)";
  EXPECT_EQ(available_path(milan, InstructionPath::kAmx), InstructionPath::kAvx2);
  EXPECT_EQ(available_path(spr(true), InstructionPath::kAvx512), InstructionPath::kAvx512);
  EXPECT_EQ(available_path(spr(true), InstructionPath::kAmx), InstructionPath::kAmx);
}

TEST(CpuPaths, UnknownMicroarchitectureAndMissingPathAreNamed) {
  HardwareSpec odd = spr(true);
  odd.microarchitecture = "Itanium";
  EXPECT_THAT(testing::error_message<base::InputError>(
                  [&] { available_path(odd, InstructionPath::kAvx2); }),
              HasSubstr(R"(cpu "spr": microarchitecture "Itanium" has no instruction-path rates)"));
  HardwareSpec genoa = spr(true);
  genoa.microarchitecture = "Zen 4 (Genoa)";
  EXPECT_THAT(testing::error_message<base::InputError>(
                  [&] { path_peak_flops(genoa, 8, InstructionPath::kAmx); }),
              HasSubstr(R"(cpu "spr" (Zen 4 (Genoa)) has no amx path)"));
}

TEST(CpuModel, ASliceOfARentedSocketGetsAtMostItsShareOfTheSocket) {
  Deployment d;
  d.kind = DeviceKind::kCpu;
  // 16 cores of 56 want 16 x 17.5 = 280 GB/s; a third of the socket's 240.6 GB/s is 80.2.
  apply_cpu_model(d, spr(true), 16, InstructionPath::kAmx, 0.03, 1.0 / 3);
  EXPECT_NEAR(d.memory_bandwidth_bytes_per_s, 240.6e9 / 3, 1e-3);
  EXPECT_THAT(d.rule, HasSubstr("the slice's 33.3% of the socket at most"));
  // A machine of its own (share 1): the per-core limit.
  Deployment own;
  apply_cpu_model(own, spr(true), 8, InstructionPath::kAmx, 0.03, 1.0);
  EXPECT_NEAR(own.memory_bandwidth_bytes_per_s, 140e9, 140e9 * kRelTolerance);
  EXPECT_DOUBLE_EQ(own.peak_flops_per_s.at("bf16"), 8 * 3e9 * 1024);
}

TEST(CpuModel, OnANarrowerPathTheEngineKeepsItsMeasuredRateUpToThatPathsPeak) {
  HardwareSpec genoa = spr(true);
  genoa.microarchitecture = "Zen 4 (Genoa)";
  Deployment d;
  // An AMX engine reaching 3% of AMX: bf16 AMX at these 8 cores would be 8 x 3e9 x 1024; 3% of
  // that is 0.737 TFLOP/s, below Zen 4's AVX-512 bf16 peak (8 x 3e9 x 64 = 1.536 TFLOP/s), so
  // the engine keeps that rate: the peak becomes 1.536e12 / 0.03 capped at the AMX figure.
  apply_cpu_model(d, genoa, 8, InstructionPath::kAmx, 0.03, 1.0);
  EXPECT_DOUBLE_EQ(d.peak_flops_per_s.at("bf16"), std::min(8 * 3e9 * 1024, 8 * 3e9 * 64 / 0.03));
  EXPECT_NEAR(0.03 * d.peak_flops_per_s.at("bf16"), 0.03 * 8 * 3e9 * 1024, 1.0);
  // A fraction high enough to exceed the narrower peak is held at it.
  Deployment fast;
  apply_cpu_model(fast, genoa, 8, InstructionPath::kAmx, 0.5, 1.0);
  EXPECT_NEAR(0.5 * fast.peak_flops_per_s.at("bf16"), 8 * 3e9 * 64, 1.0);
  EXPECT_THAT(fast.rule, HasSubstr("the engine's amx rate carried over, up to the avx512 peak"));
}

TEST(CpuCatalog, EveryCatalogCpuHasRatesForItsPathsAndSaneMemoryModels) {
  const Catalog catalog = Catalog::load(testing::data_dir());
  for (const HardwareSpec& c : catalog.hardware_of_kind(DeviceKind::kCpu)) {
    EXPECT_NO_THROW(available_path(c, InstructionPath::kAmx)) << c.id;
    if (c.sustained_read_bytes_per_s > 0) {
      EXPECT_LE(c.sustained_read_bytes_per_s, c.peak_memory_bandwidth_bytes_per_s) << c.id;
      EXPECT_GT(c.per_core_read_bytes_per_s, 0) << c.id;
      EXPECT_FALSE(c.memory_model_source.empty()) << c.id;
      EXPECT_FALSE(c.memory_model_as_of.empty()) << c.id;
    }
  }
}

}  // namespace
}  // namespace llmcap::model
