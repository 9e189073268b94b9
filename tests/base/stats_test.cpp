#include "base/stats.h"

#include <gtest/gtest.h>

#include <vector>

namespace llmcap::base {
namespace {

TEST(StatsTest, NearestRankIndexFollowsDocsMetrics) {
  EXPECT_EQ(nearest_rank_index(100, 99), 98);  // p99 of 100 values is the 99th smallest
  EXPECT_EQ(nearest_rank_index(100, 50), 49);
  EXPECT_EQ(nearest_rank_index(1, 50), 0);
  EXPECT_EQ(nearest_rank_index(10, 0), 0);  // rank at least 1
  EXPECT_EQ(nearest_rank_index(3, 90), 2);
}

TEST(StatsTest, NearestRankQuantileSortsAndClamps) {
  const std::vector<double> v = {5, 1, 4, 2, 3};
  EXPECT_EQ(nearest_rank_quantile(v, 0.5), 3);
  EXPECT_EQ(nearest_rank_quantile(v, 0.95), 5);
  EXPECT_EQ(nearest_rank_quantile(v, 0.0), 1);
  EXPECT_EQ(nearest_rank_quantile({}, 0.5), 0);
}

TEST(StatsTest, AbsQuantileUsesMagnitudes) {
  EXPECT_EQ(abs_nearest_rank_quantile({-4, 1, -2, 3}, 0.5), 2);
  EXPECT_EQ(abs_nearest_rank_quantile({-4, 1, -2, 3}, 1.0), 4);
  EXPECT_EQ(abs_nearest_rank_quantile({}, 0.5), 0);
}

TEST(StatsTest, TheThreeMediansDifferOnlyForEvenCounts) {
  const std::vector<double> odd = {3, 1, 2};
  EXPECT_EQ(median(odd), 2);
  EXPECT_EQ(upper_median(odd), 2);
  EXPECT_EQ(midpoint_median(odd), 2);
  const std::vector<double> even = {4, 1, 3, 2};
  EXPECT_EQ(median(even), 2);  // nearest rank: value[ceil(n / 2) - 1]
  EXPECT_EQ(median(even), nearest_rank_quantile(even, 0.5));
  EXPECT_EQ(upper_median(even), 3);
  EXPECT_EQ(midpoint_median(even), 2.5);
}

TEST(StatsTest, MediansOfNothingAreZero) {
  EXPECT_EQ(median({}), 0);
  EXPECT_EQ(upper_median({}), 0);
  EXPECT_EQ(midpoint_median({}), 0);
}

}  // namespace
}  // namespace llmcap::base
