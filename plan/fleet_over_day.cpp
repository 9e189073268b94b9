#include "plan/fleet_over_day.h"

#include <algorithm>
#include <cmath>

namespace llmcap::plan {
namespace {

constexpr double kSecondsPerHour = 3600.0;
constexpr size_t kHoursPerDay = 24;
/// Below this a ratio's rounding error is not an extra instance (as plan/tco.cpp's counts).
constexpr double kCeilSlack = 1e-9;

int64_t ceil_count(double x) {
  return x <= 0 ? 0 : static_cast<int64_t>(std::ceil(x - kCeilSlack));
}

}  // namespace

std::vector<double> hourly_requests_per_s(const std::vector<double>& arrival_offsets_s) {
  if (arrival_offsets_s.empty()) return {};
  const auto [lo, hi] = std::minmax_element(arrival_offsets_s.begin(), arrival_offsets_s.end());
  const double span_s = *hi - *lo;
  const auto whole_hours = static_cast<size_t>(std::floor(span_s / kSecondsPerHour));
  if (whole_hours < 2) return {};
  std::vector<double> count(kHoursPerDay, 0.0);
  std::vector<double> hours_seen(kHoursPerDay, 0.0);
  for (size_t k = 0; k < whole_hours; ++k) hours_seen[k % kHoursPerDay] += 1;
  for (double t : arrival_offsets_s) {
    const auto k = static_cast<size_t>(std::floor((t - *lo) / kSecondsPerHour));
    if (k < whole_hours) count[k % kHoursPerDay] += 1;
  }
  std::vector<double> rate(kHoursPerDay, 0.0);
  double covered_sum = 0;
  size_t covered = 0;
  for (size_t h = 0; h < kHoursPerDay; ++h) {
    if (hours_seen[h] == 0) continue;
    rate[h] = count[h] / (hours_seen[h] * kSecondsPerHour);
    covered_sum += rate[h];
    ++covered;
  }
  const double covered_mean = covered_sum / static_cast<double>(covered);
  for (size_t h = 0; h < kHoursPerDay; ++h) {
    if (hours_seen[h] == 0) rate[h] = covered_mean;
  }
  return rate;
}

FleetOverDay fleet_over_day(const PlanRow& row, const Scenario& scenario,
                            const WorkloadSummary& workload, const TcoRow* tco) {
  FleetOverDay f;
  f.instance_type = row.instance_type;
  if (tco != nullptr && tco->autoscaled) {
    f.autoscaled = true;
    f.hourly_load_multiplier = tco->hourly_multipliers;
    f.hourly_instances = tco->hourly_instances;
    f.origin =
        scenario.tco.autoscaling.hourly_multipliers.empty() &&
                scenario.workload.load_profile.size() == kHoursPerDay &&
                scenario.workload.classes.empty()
            ? "workload.load_profile"
            : (scenario.tco.autoscaling.hourly_multipliers.empty() ? "flat" : "tco.autoscaling");
    f.rule = tco->autoscaling_rule;
    return f;
  }
  std::vector<double> m(kHoursPerDay, 1.0);
  f.origin = "flat";
  if (scenario.workload.load_profile.size() == kHoursPerDay && scenario.workload.classes.empty()) {
    m = scenario.workload.load_profile;
    f.origin = "workload.load_profile";
  } else if (workload.hourly_requests_per_s.size() == kHoursPerDay) {
    double mean = 0;
    for (double r : workload.hourly_requests_per_s) mean += r / kHoursPerDay;
    if (mean > 0) {
      for (size_t h = 0; h < kHoursPerDay; ++h) m[h] = workload.hourly_requests_per_s[h] / mean;
      f.origin = "workload hourly rate";
    }
  }
  const double peak = *std::max_element(m.begin(), m.end());
  f.hourly_load_multiplier = m;
  for (double x : m) {
    f.hourly_instances.push_back(
        peak > 0 ? ceil_count(static_cast<double>(row.num_instances) * x / peak) : 0);
  }
  f.rule = f.origin == "flat"
               ? "instances(h) = planned instances (one load all day)"
               : "instances(h) = ceil(planned instances x multiplier(h) / peak multiplier) (the "
                 "planned fleet met the SLO at the simulated peak)";
  return f;
}

}  // namespace llmcap::plan
