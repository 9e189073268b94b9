// The scenario's "tco" section: price model, service hours, autoscaling, currency and owned
// hardware (issue 5, item 3; format in docs/scenarios.md, arithmetic in docs/tco.md).
#pragma once

#include <string>

namespace llmcap::plan {

/// What the scenario asks of the cost model. Defaults reproduce the planner's old arithmetic:
/// the catalog's on-demand price, 24 hours a day, a fixed fleet, USD.
struct TcoSpec {
  /// "on_demand", "reserved_1y", "reserved_3y" or "spot".
  std::string price_model = "on_demand";
  double hours_per_day = 24;  ///< hours in service per day, (0, 24]
  // Helper A extends this struct (autoscaling, currency, owned hardware, price uncertainty).
};

}  // namespace llmcap::plan
