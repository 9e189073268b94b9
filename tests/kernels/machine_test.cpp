#include "kernels/machine.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "kernels/cpu_features.h"

namespace llmcap::kernels {
namespace {

TEST(DescribeMachine, ReportsModelFlagsCoresAndCaches) {
  const MachineInfo m = describe_machine();
  EXPECT_FALSE(m.cpu_model.empty());
  EXPECT_EQ(m.isa, cpu_features().flags());
  EXPECT_GE(m.num_cores, 1);
  EXPECT_GE(m.l1d_bytes, 0);
  EXPECT_GE(m.l2_bytes, 0);
  EXPECT_TRUE(m.read_bandwidth_bytes_per_s.empty());
}

TEST(MeasureBandwidth, GivesPlausibleReadAndCopyRatesPerThreadCount) {
  MachineInfo m = describe_machine();
  // Small buffer and one round: this checks the mechanics, not the machine.
  measure_bandwidth(m, 2, int64_t{8} << 20, 1);
  ASSERT_EQ(m.read_bandwidth_bytes_per_s.size(), 2u);
  ASSERT_EQ(m.copy_bandwidth_bytes_per_s.size(), 2u);
  for (const int t : {1, 2}) {
    // Between 100 MB/s (a badly oversubscribed machine) and 10 TB/s (caches).
    EXPECT_GT(m.read_bandwidth_bytes_per_s.at(t), 1e8) << t;
    EXPECT_LT(m.read_bandwidth_bytes_per_s.at(t), 1e13) << t;
    EXPECT_GT(m.copy_bandwidth_bytes_per_s.at(t), 1e8) << t;
    EXPECT_LT(m.copy_bandwidth_bytes_per_s.at(t), 1e13) << t;
  }
}

TEST(MeasureBandwidth, RejectsBadArguments) {
  MachineInfo m;
  EXPECT_THROW(measure_bandwidth(m, 0, int64_t{8} << 20, 1), std::invalid_argument);
  EXPECT_THROW(measure_bandwidth(m, 1, 1000, 1), std::invalid_argument);
  EXPECT_THROW(measure_bandwidth(m, 1, int64_t{8} << 20, 0), std::invalid_argument);
}

}  // namespace
}  // namespace llmcap::kernels
