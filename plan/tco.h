// Total cost of ownership of a planned fleet (issue 5, item 3). Every formula, its assumptions
// and its sources: docs/tco.md. Money is USD throughout (`_usd`); another currency appears only
// as converted figures (TcoConverted) at the catalog's dated rate.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/hardware.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "plan/tco_spec.h"

namespace llmcap::plan {

/// An instance type the scenario may cost that does not offer its price model: left out of
/// the TCO (not fatal), listed with what it does offer.
struct PriceModelNotOffered {
  std::string instance_type;  ///< catalog id
  std::string offered;        ///< its price models, comma-separated, e.g. "on_demand, spot"
};

/// The scenario's TCO settings with every default resolved from the catalog (what the run
/// document's top-level "tco" shows).
struct ResolvedTco {
  TcoSpec spec;  ///< as read, with owned pue / usd_per_kwh and spot.replacement_s filled in
  double hours_per_day = 24;
  double days_per_year = 365;
  double service_hours_per_year = 8760;  ///< hours_per_day x days_per_year
  /// Autoscaling multipliers (spec's, else the workload's load_profile, else 24 ones), and the
  /// workload's own profile (24 ones without one) that the planned fleet was simulated under.
  std::vector<double> hourly_multipliers;
  std::vector<double> workload_multipliers;
  std::string multipliers_origin;  ///< "tco.autoscaling", "workload.load_profile" or "flat"
  /// Provenance of the resolved defaults ("" when the scenario set the value).
  std::string spot_replacement_source;
  std::string spot_replacement_as_of;
  /// USD -> currency; rate 0 for USD.
  model::ExchangeRate exchange_rate;
  /// Every type the scenario may cost that lacks the scenario's price model (file order of the
  /// costed types; empty when the scenario names no price model). Their rows get no TCO.
  std::vector<PriceModelNotOffered> not_offered;
};

/// Resolves and checks the scenario's "tco" section against the catalog, before any
/// simulation: the price model is offered by at least one instance type the scenario may cost
/// (its candidates, every catalog type when it names none, or its fleet's groups; the others
/// are listed in ResolvedTco::not_offered, not refused), the currency
/// has a rate, owned hardware ids are known, defaults exist (data/tco/defaults.json) when the
/// scenario leaves pue, usd_per_kwh or spot.replacement_s unset, days_per_year <= 366, and
/// autoscaling is not asked of a given fleet. Throws InputError naming the scenario file, the
/// field (e.g. "tco.price_model"), the value and what was expected (for a price model no costed
/// type offers: every costed type with the models it offers).
ResolvedTco resolve_tco(const Scenario& scenario, const model::Catalog& catalog);

/// "" when every instance type of `row`'s fleet offers the scenario's price model (or the
/// scenario names none); else why its TCO is left out, naming each type that lacks it, e.g.
/// `"aws-x" offers no "reserved_1y" price (it offers: on_demand, spot)`.
std::string price_model_not_offered(const PlanRow& row, const Scenario& scenario,
                                    const model::Catalog& catalog);

/// One price used for a fleet (one per group of a given fleet), with its provenance.
struct TcoPriceUsed {
  std::string instance_type;  ///< catalog id
  int64_t num_instances = 0;  ///< planned (serving) instances of this type
  model::PriceOffer offer;    ///< the offer (price model, USD per hour, source, as_of)
};

/// Spot: how interruptions were absorbed (docs/tco.md#spot).
struct TcoSpot {
  double interruption_rate_per_hour = 0;  ///< of the (first) offer
  double replacement_s = 0;
  double capacity_confidence = 0;
  /// Fraction of time a slot serves: 1 / (1 + rate x replacement_h).
  double availability = 1;
  int64_t num_spare_instances = 0;     ///< added to the planned fleet (peak hour when autoscaled)
  double expected_instances_down = 0;  ///< (planned + spares) x (1 - availability)
};

/// An owned-hardware alternative to the rented fleet (docs/tco.md#owned-hardware). Per-hour
/// figures are per hour in service (annual / service hours); at 24 h a day, 365 days, without
/// autoscaling: capex = servers x price / (years x 8760), power = servers x kW x utilisation
/// x PUE x USD/kWh.
struct TcoOwnedRow {
  std::string field;     ///< "tco.owned[i]"
  std::string hardware;  ///< id
  std::string name;
  std::string source;
  std::string as_of;
  double purchase_usd = 0;  ///< one server
  double power_watts = 0;   ///< one server at TDP
  double years = 0;
  double utilisation = 0;
  double pue = 0;
  double usd_per_kwh = 0;
  int64_t num_servers = 0;  ///< planned fleet (peak hour when autoscaled)
  double capex_usd_per_hour = 0;
  double power_usd_per_hour = 0;
  double usd_per_hour = 0;  ///< capex + power
  double annual_usd = 0;
  double usd_per_million_output_tokens = 0;
  double usd_per_thousand_requests = 0;
};

/// The USD figures of a TcoRow in the scenario's currency (rate x USD).
struct TcoConverted {
  std::string currency;  ///< e.g. "CNY"
  double rate = 0;       ///< units of currency per USD
  std::string rate_source;
  std::string rate_as_of;
  double per_hour = 0;
  double per_year = 0;
  double per_day = 0;  ///< autoscaled fleets only, else 0
  double per_million_input_tokens = 0;
  double per_million_output_tokens = 0;
  double per_million_tokens = 0;
  double per_thousand_requests = 0;
  double instance_per_hour = 0;
};

/// The TCO of one planned fleet.
struct TcoRow {
  std::string price_model;  ///< used (the record's own when the scenario named none)
  /// Unit price of one instance, USD per hour (a given fleet of several types: fleet price
  /// per hour / instances, i.e. the mean).
  double instance_usd_per_hour = 0;
  std::vector<TcoPriceUsed> prices;  ///< one per instance type of the fleet
  int64_t num_instances = 0;         ///< planned (serving) fleet
  /// Instances billed: planned + spot spares; autoscaled: the busiest hour's.
  int64_t num_instances_billed = 0;
  double hours_per_day = 24;
  double days_per_year = 365;
  double service_hours_per_year = 8760;
  /// Hours a year each billed instance is paid for: service hours, or 8760 for a reservation
  /// (paid for every hour of its term whether used or not).
  double billed_hours_per_year = 8760;
  double usd_per_hour = 0;  ///< fleet, per hour in service: annual_usd / service hours
  double annual_usd = 0;
  /// Requests and tokens served per hour in service (mean over the year's service hours).
  double requests_per_hour = 0;
  double input_tokens_per_hour = 0;
  double output_tokens_per_hour = 0;
  /// Whole cost over each quantity (each figure carries all of the cost: they do not add up;
  /// docs/tco.md#per-token-costs). 0 when the quantity is 0.
  double usd_per_million_input_tokens = 0;
  double usd_per_million_output_tokens = 0;
  double usd_per_million_tokens = 0;  ///< input + output tokens
  double usd_per_thousand_requests = 0;
  bool spot = false;
  TcoSpot spot_figures;  ///< price_model "spot" only
  bool autoscaled = false;
  std::vector<double> hourly_multipliers;  ///< autoscaled: the 24 used
  std::vector<int64_t> hourly_instances;   ///< autoscaled: serving instances per hour
  std::string autoscaling_rule;            ///< autoscaled: which rule (docs/tco.md)
  double usd_per_day = 0;                  ///< autoscaled: the day's bill
  bool converted = false;                  ///< currency other than USD
  TcoConverted in_currency;
  std::vector<TcoOwnedRow> owned;  ///< the scenario's owned alternatives for this instance type
  std::vector<std::string> notes;  ///< assumptions worth reading (extrapolation, ...)
};

/// The TCO of `row`'s fleet (a planned instance type, or a given fleet's groups) under the
/// scenario's "tco" section (resolve_tco's checks apply; this calls it). `workload` gives the
/// rate and token counts: requests per second = num_requests / span_s (open loop), else the
/// row's simulated throughput. `sustainable_requests_per_s_per_instance` (0: unknown) is
/// what one instance serves within the SLO; autoscaling uses it when known, else scales the
/// planned fleet with the load (docs/tco.md#autoscaling). Owned alternatives apply to rows of
/// one instance type equal to the hardware's equivalent_instance. Deterministic. Throws
/// InputError for a row without instances (row.num_instances < 1) and as resolve_tco.
TcoRow compute_tco(const PlanRow& row, const Scenario& scenario, const model::Catalog& catalog,
                   const WorkloadSummary& workload,
                   double sustainable_requests_per_s_per_instance = 0);

/// Spare spot instances: the smallest s >= 0 with P(Binomial(n + s, p_down) > s) <=
/// 1 - confidence, p_down = rate x t / (1 + rate x t), t = replacement_s / 3600 (each of the
/// n + s slots is down, waiting for a replacement, that fraction of the time). 0 when n = 0.
int64_t spot_spare_instances(int64_t n, double interruption_rate_per_hour, double replacement_s,
                             double confidence);

}  // namespace llmcap::plan
