// Prices a scenario sets itself ("price_overrides"): a planner's own quotes, or prices edited in
// llmcap-gui and saved with the scenario, so that `llmcap plan` and the GUI price one scenario
// file the same way (docs/scenarios.md, "price_overrides").
#pragma once

#include <string>
#include <vector>

#include "model/hardware.h"

namespace llmcap::plan {

/// One instance type's price under one price model, as the scenario states it.
struct PriceOverride {
  std::string instance;                         ///< catalog instance id
  std::string price_model;                      ///< one of model::price_model_names()
  double usd_per_hour = 0;                      ///< > 0
  std::string as_of;                            ///< date of the figure, YYYY-MM-DD (required)
  std::string source = "edited in llmcap-gui";  ///< where the figure comes from
};

/// `catalog` with each override's offer replaced (usd_per_hour, source, as_of), an offer added
/// when the instance had none under that price model; when the price model is the instance's
/// default one, its usd_per_hour (what the planner prices fleets with) too. Throws
/// plan::InputError naming `file`, "price_overrides[i]" and the value for an unknown instance,
/// an unknown price model or a non-positive price.
model::Catalog catalog_with_price_overrides(const model::Catalog& catalog,
                                            const std::vector<PriceOverride>& overrides,
                                            const std::string& file);

}  // namespace llmcap::plan
