// The TCO objects of the run document (docs/run-document.md, docs/tco.md): the "tco" of each
// result row, the top-level "tco" settings, and the "sources" entries of the prices, exchange
// rate and owned hardware used.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "model/hardware.h"
#include "plan/tco.h"

namespace llmcap::app {

/// A result row's "tco" object: price model and unit price, USD per hour / year / day, per
/// million input, output and all tokens, per thousand requests, billed instances, spot and
/// autoscaling figures (null when not used), the figures in the scenario's currency
/// ("<code>_per_hour", ... with "exchange_rate"; null for USD), owned alternatives, notes.
nlohmann::json tco_row_to_json(const plan::TcoRow& row);

/// The top-level "tco" settings: {"price_model", "price_model_given", "hours_per_day",
/// "days_per_year", "service_hours_per_year", "currency", "exchange_rate": null | {"from",
/// "to", "rate", "source", "as_of"}, "autoscaling": {"enabled", "min_instances",
/// "hourly_multipliers", "multipliers_origin"}, "spot": {"replacement_s",
/// "capacity_confidence", "replacement_source", "replacement_as_of"}, "owned": [{"hardware",
/// "years", "utilisation", "pue", "usd_per_kwh"}], "price_model_not_offered": [{"instance_type",
/// "offers"}] (every costed type without the scenario's price model: no TCO for its rows)}.
nlohmann::json tco_settings_to_json(const plan::ResolvedTco& tco);

/// "sources" entries ({"kind", "id", "name", "figures", "source", "as_of"}) for every price
/// offer, exchange rate and owned server the rows used, each once, in first-use order: kind
/// "instance" (id "<instance>:<price_model>"; spot offers add a second entry for the
/// interruption rate), "exchange_rate" (id "USD-<code>"), "owned_hardware".
nlohmann::json price_sources_to_json(const std::vector<plan::TcoRow>& rows);

}  // namespace llmcap::app
