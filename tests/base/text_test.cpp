#include "base/text.h"

#include <gtest/gtest.h>

namespace llmcap::base {
namespace {

TEST(TextTest, DescribePrintsLikeAnOstream) {
  EXPECT_EQ(describe(0.1), "0.1");
  EXPECT_EQ(describe(1e-7), "1e-07");
  EXPECT_EQ(describe(2), "2");
  EXPECT_EQ(describe(1234567), "1.23457e+06");
}

TEST(TextTest, FixedRoundsToTheGivenDigits) {
  EXPECT_EQ(fixed(2.345, 1), "2.3");
  EXPECT_EQ(fixed(2, 2), "2.00");
  EXPECT_EQ(fixed(-0.5, 0), "-0");
}

TEST(TextTest, PluralAddsAnSUnlessOne) {
  EXPECT_EQ(plural(1, "replica"), "1 replica");
  EXPECT_EQ(plural(0, "replica"), "0 replicas");
  EXPECT_EQ(plural(3, "replica"), "3 replicas");
}

TEST(TextTest, GigabytesUseFourSignificantDigits) {
  EXPECT_EQ(gb(141107412992.0), "141.1 GB");
  EXPECT_EQ(gb(39716622336.0), "39.72 GB");
  EXPECT_EQ(gb_per_s(3.35e12), "3350 GB/s");
}

}  // namespace
}  // namespace llmcap::base
