// Fleet size over the day (plan/fleet_over_day.h): the hourly rate of a workload's arrivals and
// the instances each hour needs, with content for every shipped scenario.
#include "plan/fleet_over_day.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "model/hardware.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

constexpr double kRateTolerance = 1e-9;
constexpr size_t kHours = 24;

PlanRow feasible_row(int64_t num_instances) {
  PlanRow row;
  row.instance_type = "t";
  row.feasible = true;
  row.num_instances = num_instances;
  return row;
}

TEST(FleetOverDay, HourlyRateFoldsWholeHoursOntoTheDay) {
  // Hour 0: 3600 arrivals (1/s); hour 1: 7200 (2/s); hour 2: 1 arrival closing the span.
  std::vector<double> offsets;
  for (int i = 0; i < 3600; ++i) offsets.push_back(i);
  for (int i = 0; i < 7200; ++i) offsets.push_back(3600 + i * 0.5);
  offsets.push_back(7200.5);
  const std::vector<double> rate = hourly_requests_per_s(offsets);
  ASSERT_EQ(rate.size(), kHours);
  EXPECT_NEAR(rate[0], 1.0, kRateTolerance);
  EXPECT_NEAR(rate[1], 2.0, kRateTolerance);
  // Hours no whole hour of the workload covers take the covered hours' mean.
  for (size_t h = 2; h < kHours; ++h) EXPECT_NEAR(rate[h], 1.5, kRateTolerance) << h;
}

TEST(FleetOverDay, AWorkloadShorterThanTwoHoursHasNoHourlyShape) {
  std::vector<double> offsets;
  for (int i = 0; i < 3600; ++i) offsets.push_back(i * 1.5);  // 1.5 h
  EXPECT_TRUE(hourly_requests_per_s(offsets).empty());
  EXPECT_TRUE(hourly_requests_per_s({}).empty());
}

TEST(FleetOverDay, AFlatLoadNeedsThePlannedFleetEveryHour) {
  const FleetOverDay f = fleet_over_day(feasible_row(3), Scenario{}, WorkloadSummary{}, nullptr);
  EXPECT_EQ(f.origin, "flat");
  EXPECT_FALSE(f.autoscaled);
  EXPECT_EQ(f.hourly_instances, std::vector<int64_t>(kHours, 3));
  EXPECT_EQ(f.hourly_load_multiplier, std::vector<double>(kHours, 1.0));
}

TEST(FleetOverDay, TheHourlyRateScalesThePlannedFleetFromItsPeak) {
  WorkloadSummary w;
  w.hourly_requests_per_s.assign(kHours, 1.0);
  w.hourly_requests_per_s[5] = 4.0;  // the peak hour: the planned 4 instances
  w.hourly_requests_per_s[6] = 2.0;
  const FleetOverDay f = fleet_over_day(feasible_row(4), Scenario{}, w, nullptr);
  EXPECT_EQ(f.origin, "workload hourly rate");
  EXPECT_EQ(f.hourly_instances[5], 4);
  EXPECT_EQ(f.hourly_instances[6], 2);
  EXPECT_EQ(f.hourly_instances[0], 1);
}

TEST(FleetOverDay, ALoadProfileComesBeforeTheHourlyRate) {
  Scenario s;
  s.workload.load_profile.assign(kHours, 0.5);
  s.workload.load_profile[12] = 2.0;
  WorkloadSummary w;
  w.hourly_requests_per_s.assign(kHours, 1.0);
  const FleetOverDay f = fleet_over_day(feasible_row(8), s, w, nullptr);
  EXPECT_EQ(f.origin, "workload.load_profile");
  EXPECT_EQ(f.hourly_instances[12], 8);
  EXPECT_EQ(f.hourly_instances[0], 2);  // ceil(8 x 0.5 / 2)
}

TEST(FleetOverDay, AnAutoscaledTcoRowIsTakenAsItIs) {
  TcoRow t;
  t.autoscaled = true;
  t.hourly_multipliers.assign(kHours, 1.0);
  t.hourly_instances.assign(kHours, 2);
  t.hourly_instances[3] = 5;
  t.autoscaling_rule = "rule";
  const FleetOverDay f = fleet_over_day(feasible_row(5), Scenario{}, WorkloadSummary{}, &t);
  EXPECT_TRUE(f.autoscaled);
  EXPECT_EQ(f.hourly_instances, t.hourly_instances);
  EXPECT_EQ(f.rule, "rule");
}

TEST(FleetOverDay, EveryShippedScenarioHasAFleetForEachHour) {
  const std::filesystem::path data = llmcap::testing::data_dir();
  const model::Catalog catalog = model::Catalog::load(data);
  int num_scenarios = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data / "scenarios")) {
    if (entry.path().extension() != ".json") continue;
    ++num_scenarios;
    const Scenario s = load_scenario(entry.path(), data);
    const PlanSession session(s, catalog);
    const FleetOverDay f = fleet_over_day(feasible_row(3), s, session.summary(), nullptr);
    ASSERT_EQ(f.hourly_instances.size(), kHours) << entry.path();
    EXPECT_FALSE(f.origin.empty()) << entry.path();
    // The busiest hour needs the planned fleet; no hour needs more.
    EXPECT_EQ(*std::max_element(f.hourly_instances.begin(), f.hourly_instances.end()), 3)
        << entry.path();
  }
  EXPECT_GE(num_scenarios, 11);
}

}  // namespace
}  // namespace llmcap::plan
