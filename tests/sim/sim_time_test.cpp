// SimTime's conversion from seconds rounds to the nearest nanosecond, halves away from zero,
// exactly as std::llround does (it is inlined: every step end goes through it).
#include "sim/sim_time.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace llmcap::sim {
namespace {

TEST(SimTime, SecondsRoundToTheNearestNanosecondAsLlroundDoes) {
  std::vector<double> ns = {
      0.0,    0.5,         -0.5, 1.5,  2.5,    -2.5,   0.49999999999999994, 1e-300,
      1.4999, 123456789.5, -7.5, 1e15, 4.6e18, 0x1p62, 0x1p62 + 0x1p10,     -0x1p62,
      9e18};
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> seconds(-100.0, 100.0);
  for (int i = 0; i < 100000; ++i) ns.push_back(seconds(rng) * 1e9);
  for (int64_t k = -2000; k <= 2000; ++k) ns.push_back(static_cast<double>(k) + 0.5);
  for (const double x : ns) {
    ASSERT_EQ(SimTime::Seconds(x * 1e-9).ns(), std::llround((x * 1e-9) * 1e9)) << x;
  }
  EXPECT_EQ(SimTime::Seconds(2.5e-9).ns(), 3);
  EXPECT_EQ(SimTime::Seconds(-2.5e-9).ns(), -3);
  EXPECT_EQ(SimTime::MilliSeconds(1.0000005).ns(), 1000001);
}

}  // namespace
}  // namespace llmcap::sim
