#include "kernels/cpu_features.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace llmcap::kernels {
namespace {

using ::testing::HasSubstr;

TEST(CpuFeatures, ScalarAlwaysSupportedAndListedFirst) {
  EXPECT_TRUE(isa_supported(Isa::kScalar));
  std::vector<Isa> isas = supported_isas();
  ASSERT_FALSE(isas.empty());
  EXPECT_EQ(isas.front(), Isa::kScalar);
  for (Isa isa : isas) EXPECT_TRUE(isa_supported(isa));
}

TEST(CpuFeatures, IsaSupportFollowsFlags) {
  const CpuFeatures& f = cpu_features();
  EXPECT_EQ(isa_supported(Isa::kAvx2), f.avx2 && f.fma && f.f16c);
  EXPECT_EQ(isa_supported(Isa::kAvx512), f.avx512f && f.avx512bw && f.avx512vl && f.fma);
  EXPECT_FALSE(f.model_name.empty());
  // Implications that hold on every real CPU: AVX-512 extensions need the foundation.
  if (f.avx512_bf16 || f.avx512_vnni || f.avx512bw || f.avx512vl) {
    EXPECT_TRUE(f.avx512f);
  }
  if (f.avx512f) {
    EXPECT_TRUE(f.avx2);
  }
}

TEST(CpuFeatures, FlagsNamesTheSetFlags) {
  CpuFeatures f;
  EXPECT_EQ(f.flags(), "");
  f.avx2 = f.fma = f.avx512_bf16 = f.amx_int8 = true;
  EXPECT_EQ(f.flags(), "avx2 fma avx512_bf16 amx_int8");
}

TEST(CpuFeatures, DetectedOnceSameObject) { EXPECT_EQ(&cpu_features(), &cpu_features()); }

TEST(CpuFeatures, BestIsaIsSupportedAndAtMostTheFastest) {
  Isa best = best_isa();
  EXPECT_TRUE(isa_supported(best));
  EXPECT_LE(static_cast<int>(best), static_cast<int>(supported_isas().back()));
  EXPECT_EQ(best, best_isa());
}

TEST(CpuFeatures, ToStringParseRoundTrip) {
  for (Isa isa : {Isa::kScalar, Isa::kAvx2, Isa::kAvx512}) {
    ASSERT_TRUE(parse_isa(to_string(isa)).has_value());
    EXPECT_EQ(*parse_isa(to_string(isa)), isa);
  }
  EXPECT_EQ(to_string(Isa::kAvx512), "avx512");
  EXPECT_FALSE(parse_isa("AVX2").has_value());
  EXPECT_FALSE(parse_isa("").has_value());
  EXPECT_FALSE(parse_isa("sse").has_value());
}

TEST(CpuFeatures, ChooseIsaCapLowersButNeverRaises) {
  std::string warning = "stale";
  EXPECT_EQ(choose_isa(Isa::kAvx512, nullptr, &warning), Isa::kAvx512);
  EXPECT_EQ(warning, "");
  EXPECT_EQ(choose_isa(Isa::kAvx512, "avx2", &warning), Isa::kAvx2);
  EXPECT_EQ(choose_isa(Isa::kAvx512, "scalar", &warning), Isa::kScalar);
  EXPECT_EQ(choose_isa(Isa::kAvx2, "avx512", &warning), Isa::kAvx2);
  EXPECT_EQ(choose_isa(Isa::kScalar, "avx2", &warning), Isa::kScalar);
  EXPECT_EQ(warning, "");
}

TEST(CpuFeatures, ChooseIsaUnknownCapIgnoredWithWarning) {
  std::string warning;
  EXPECT_EQ(choose_isa(Isa::kAvx2, "avx9000", &warning), Isa::kAvx2);
  EXPECT_THAT(warning, HasSubstr("LLMCAP_ISA=\"avx9000\""));
  EXPECT_THAT(warning, HasSubstr("using avx2"));
  EXPECT_EQ(choose_isa(Isa::kAvx2, "avx9000"), Isa::kAvx2);  // no warning sink
}

}  // namespace
}  // namespace llmcap::kernels
