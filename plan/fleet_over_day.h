// Fleet size over the day (issue 30, item 8): the instances each hour of a day needs, for
// every planned row, whether or not the scenario autoscales. The GUI's chart and the report's
// "Fleet size over the day" read it (through the run document's analysis.fleet_over_day).
// docs/tco.md#fleet-size-over-the-day.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "plan/planner.h"
#include "plan/scenario.h"
#include "plan/tco.h"

namespace llmcap::plan {

struct FleetOverDay {
  std::string instance_type;  ///< the row's (a given fleet: the row's name)
  /// 24 load multipliers, hours 00-01 to 23-24, relative to the workload's mean hour
  /// (autoscaled rows: the autoscaling multipliers as given).
  std::vector<double> hourly_load_multiplier;
  std::vector<int64_t> hourly_instances;  ///< 24 counts: instances the hour needs
  /// Where the multipliers come from: "tco.autoscaling", "workload.load_profile",
  /// "workload hourly rate" (the arrivals' rate per hour of day, a trace's or a generated
  /// workload's spanning two hours or more) or "flat" (one rate all day: an arrival process
  /// without a load profile, a closed loop, a workload shorter than two hours).
  std::string origin;
  std::string rule;         ///< how hourly_instances follow the multipliers, in words
  bool autoscaled = false;  ///< the TCO's autoscaled fleet (tco.autoscaling) was used
};

/// The fleet over the day of a feasible `row` (num_instances >= 1). With `tco` autoscaled
/// (TcoRow::autoscaled), its hourly_multipliers and hourly_instances. Otherwise the planned
/// fleet met the SLO under the simulated workload, whose busiest hour has the peak
/// multiplier, so instances(h) = ceil(n x m(h) / max m), m = the workload's load_profile when
/// it has one (no client classes), else `workload.hourly_requests_per_s` over its mean when
/// given, else 1 every hour (the planned fleet all day). Deterministic; throws nothing.
FleetOverDay fleet_over_day(const PlanRow& row, const Scenario& scenario,
                            const WorkloadSummary& workload, const TcoRow* tco);

/// 24 mean arrival rates (requests/s) by hour of day of `arrival_offsets_s` (seconds from the
/// first arrival): hour h averages the whole hours k < floor(span / 3600) with k mod 24 == h;
/// hours no whole hour covers take the mean of those covered. Empty when the offsets span
/// less than two whole hours (the rate is then taken as flat).
std::vector<double> hourly_requests_per_s(const std::vector<double>& arrival_offsets_s);

}  // namespace llmcap::plan
