// The scenario's "tco" section: price model, service hours, autoscaling, spot, currency and
// owned hardware (issue 5, item 3; format in docs/scenarios.md, arithmetic in docs/tco.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace llmcap::plan {

/// Instances per hour following the load ("tco.autoscaling"; docs/tco.md#autoscaling).
struct AutoscalingSpec {
  bool enabled = false;
  /// Fewest instances in any hour (>= 0; 0 lets an idle hour scale to nothing).
  int64_t min_instances = 1;
  /// 24 rate multipliers for the hours 00-01 .. 23-24, relative to the workload's base rate
  /// (the meaning of workload.load_profile). Empty: the workload's load_profile when it has
  /// one, else flat (24 ones).
  std::vector<double> hourly_multipliers;
};

/// How spot interruptions are absorbed ("tco.spot"; docs/tco.md#spot).
struct SpotSpec {
  /// Seconds from an interruption until the replacement instance serves (launch, load the
  /// weights, warm up). 0: the catalog default (data/tco/defaults.json "spot_replacement_s").
  double replacement_s = 0;
  /// Probability, in (0, 1), that at least the planned number of instances serve at any
  /// moment; spare instances are added until it holds.
  double capacity_confidence = 0.99;
};

/// One owned-hardware alternative ("tco.owned[i]"; docs/tco.md#owned-hardware).
struct OwnedSpec {
  std::string field;       ///< where it was read, e.g. "tco.owned[0]" (for messages)
  std::string hardware;    ///< id in data/tco/owned_hardware.json
  double years = 0;        ///< amortisation period of the purchase price, > 0
  double utilisation = 0;  ///< mean power draw as a fraction of TDP, in (0, 1]
  double pue = 0;          ///< power usage effectiveness >= 1; 0: the catalog default
  double usd_per_kwh = 0;  ///< electricity price > 0; 0: the catalog default
};

/// What the scenario asks of the cost model. Defaults reproduce the planner's old arithmetic:
/// the catalog's own price of each instance type, 24 hours a day all year, a fixed fleet, USD.
struct TcoSpec {
  /// "on_demand", "reserved_1y", "reserved_3y", "spot" or "capacity_block"
  /// (model::price_model_names()).
  std::string price_model = "on_demand";
  /// Whether the scenario named price_model. When not, each instance type is costed at its
  /// record's own price (whatever its model, e.g. a capacity block); when named, an instance
  /// type without that offer is refused (docs/tco.md).
  bool price_model_given = false;
  double hours_per_day = 24;  ///< hours in service per day, (0, 24]
  /// Days in service per year; 0: the scenario's hours_per_year / hours_per_day (parse_tco_spec
  /// sets 365 when hours_per_day is given without hours_per_year).
  double days_per_year = 0;
  AutoscalingSpec autoscaling;
  SpotSpec spot;
  /// Currency the figures are also shown in: "USD" (no conversion) or a code with a rate in
  /// data/tco/exchange_rates.json, e.g. "CNY". Money stays USD in the computation.
  std::string currency = "USD";
  std::vector<OwnedSpec> owned;
};

}  // namespace llmcap::plan
