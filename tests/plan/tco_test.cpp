// TCO arithmetic against hand calculations (docs/tco.md), and every error path of the "tco"
// section.
#include "plan/tco.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "model/hardware.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "plan/spec_parsers.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

using llmcap::testing::error_message;
using nlohmann::json;

constexpr double kTolerance = 1e-9;       // relative, for closed-form figures
constexpr double kMoneyTolerance = 1e-6;  // absolute USD

/// A catalog of two instance types with known prices:
/// "test-gpu": on-demand $2.00, reserved_1y $1.30, reserved_3y $0.90, spot $0.60 at 0.5
/// interruptions per instance-hour; "test-block": a capacity block at $40 only.
/// Owned server "test-server" ($240,000, 10.2 kW) stands for "test-gpu"; USD -> CNY 7.0.
model::Catalog test_catalog() {
  model::Catalog c;
  model::InstanceType gpu;
  gpu.id = "test-gpu";
  gpu.provider = "AWS";
  gpu.name = "t.xlarge";
  gpu.kind = model::DeviceKind::kGpu;
  gpu.usd_per_hour = 2.0;
  gpu.source = "test";
  gpu.as_of = "2026-01-01";
  auto offer = [](const std::string& model, double usd) {
    model::PriceOffer o;
    o.price_model = model;
    o.usd_per_hour = usd;
    o.amount_per_hour = usd;
    o.source = "test " + model;
    o.as_of = "2026-01-02";
    return o;
  };
  gpu.prices = {offer("on_demand", 2.0), offer("reserved_1y", 1.3), offer("reserved_3y", 0.9),
                offer("spot", 0.6)};
  gpu.prices.back().interruption_rate_per_hour = 0.5;
  gpu.prices.back().interruption_source = "test advisor";
  gpu.prices.back().interruption_as_of = "2026-01-03";
  c.add_instance(gpu);
  model::InstanceType block = gpu;
  block.id = "test-block";
  block.usd_per_hour = 40;
  block.price_model = "capacity_block";
  block.prices.clear();  // add_instance gives it its own offer only
  c.add_instance(block);
  c.add_exchange_rate({"CNY", 7.0, "test rate", "2026-01-27"});
  model::OwnedHardware server;
  server.id = "test-server";
  server.name = "8-GPU server";
  server.equivalent_instance = "test-gpu";
  server.purchase_usd = 240000;
  server.purchase_amount = 240000;
  server.power_watts = 10200;
  server.source = "test quote";
  server.as_of = "2026-01-04";
  c.add_owned_hardware(server);
  model::TcoDefaults d;
  d.pue = {1.5, "test pue", "2026-01-05", ""};
  d.usd_per_kwh = {0.10, "test kwh", "2026-01-05", ""};
  d.spot_replacement_s = {600, "test replacement", "2026-01-05", ""};
  c.set_tco_defaults(d);
  return c;
}

/// A scenario file "s.json" whose root JSON is `root` (only "tco" and "hours_per_year" matter).
Scenario scenario_with(const json& root) {
  Scenario sc;
  sc.file = "s.json";
  sc.candidates = {"test-gpu"};
  if (root.contains("hours_per_year")) sc.hours_per_year = root.at("hours_per_year").get<double>();
  sc.tco = parse_tco_spec(root, sc.file);
  return sc;
}

PlanRow row_of(const std::string& type, int64_t n) {
  PlanRow r;
  r.instance_type = type;
  r.feasible = true;
  r.num_instances = n;
  return r;
}

/// 3600 requests over 3600 s (1 request/s), 1000 prompt and 200 output tokens each.
WorkloadSummary one_per_second() {
  WorkloadSummary w;
  w.num_requests = 3600;
  w.span_s = 3600;
  w.mean_prompt_tokens = 1000;
  w.mean_output_tokens = 200;
  return w;
}

TcoRow tco(const json& root, const PlanRow& row, double sustainable = 0,
           const WorkloadSummary& w = one_per_second()) {
  return compute_tco(row, scenario_with(root), test_catalog(), w, sustainable);
}

// ---- Price models and service hours ----------------------------------------------------------

TEST(Tco, DefaultIsTheCatalogPriceAllYear) {
  const TcoRow t = tco(json::object(), row_of("test-gpu", 3));
  EXPECT_EQ(t.price_model, "on_demand");
  EXPECT_NEAR(t.instance_usd_per_hour, 2.0, kMoneyTolerance);
  EXPECT_NEAR(t.usd_per_hour, 6.0, kMoneyTolerance);           // 3 x $2
  EXPECT_NEAR(t.annual_usd, 3 * 2.0 * 8760, kMoneyTolerance);  // 52,560
  EXPECT_EQ(t.num_instances_billed, 3);
  EXPECT_FALSE(t.spot);
  EXPECT_FALSE(t.autoscaled);
  EXPECT_FALSE(t.converted);
  ASSERT_EQ(t.prices.size(), 1u);
  EXPECT_EQ(t.prices[0].offer.source, "test on_demand");
}

TEST(Tco, OnDemandTwelveHoursADay) {
  const TcoRow t = tco({{"tco", {{"hours_per_day", 12}}}}, row_of("test-gpu", 3));
  // Billed only in service: 3 x $2 x 12 h x 365 d = $26,280 a year; $6 per hour in service.
  EXPECT_NEAR(t.service_hours_per_year, 4380, kMoneyTolerance);
  EXPECT_NEAR(t.annual_usd, 26280, kMoneyTolerance);
  EXPECT_NEAR(t.usd_per_hour, 6.0, kMoneyTolerance);
}

TEST(Tco, ReservedIsPaidEveryHourOfTheTerm) {
  const TcoRow t = tco({{"tco", {{"hours_per_day", 12}, {"price_model", "reserved_1y"}}}},
                       row_of("test-gpu", 3));
  // 3 x $1.30 x 8760 h = $34,164 a year, over 4,380 service hours = $7.80 per hour in service:
  // at 12 h a day the reservation costs more than on-demand ($26,280).
  EXPECT_EQ(t.price_model, "reserved_1y");
  EXPECT_NEAR(t.billed_hours_per_year, 8760, kMoneyTolerance);
  EXPECT_NEAR(t.annual_usd, 34164, kMoneyTolerance);
  EXPECT_NEAR(t.usd_per_hour, 7.8, kMoneyTolerance);
  // All day, it is cheaper: 3 x 0.90 x 8760 = $23,652 for three years' rate.
  const TcoRow t3 = tco({{"tco", {{"price_model", "reserved_3y"}}}}, row_of("test-gpu", 3));
  EXPECT_NEAR(t3.annual_usd, 23652, kMoneyTolerance);
  EXPECT_NEAR(t3.usd_per_hour, 2.7, kMoneyTolerance);
}

TEST(Tco, HoursPerYearWithHoursPerDayGiveWorkingDays) {
  // 3000 h a year at 12 h a day: 250 days; on-demand 3 x $2 x 3000 = $18,000.
  const TcoRow t =
      tco({{"hours_per_year", 3000}, {"tco", {{"hours_per_day", 12}}}}, row_of("test-gpu", 3));
  EXPECT_NEAR(t.days_per_year, 250, kMoneyTolerance);
  EXPECT_NEAR(t.annual_usd, 18000, kMoneyTolerance);
  // hours_per_year alone keeps 24 h days: 4380 h = 182.5 days.
  const TcoRow u = tco({{"hours_per_year", 4380}}, row_of("test-gpu", 1));
  EXPECT_NEAR(u.days_per_year, 182.5, kMoneyTolerance);
  EXPECT_NEAR(u.annual_usd, 8760, kMoneyTolerance);
}

TEST(Tco, CatalogDefaultKeepsACapacityBlock) {
  Scenario sc = scenario_with(json::object());
  sc.candidates = {"test-block"};
  const TcoRow t = compute_tco(row_of("test-block", 2), sc, test_catalog(), one_per_second());
  EXPECT_EQ(t.price_model, "capacity_block");
  EXPECT_NEAR(t.usd_per_hour, 80, kMoneyTolerance);
}

// ---- Per-token and per-request costs ---------------------------------------------------------

TEST(Tco, PerTokenCostsChargeTheWholeCostToEachKind) {
  const TcoRow t = tco(json::object(), row_of("test-gpu", 3));
  // $6/h; 1 request/s = 3600 requests/h, 3.6 M input and 0.72 M output tokens per hour.
  EXPECT_NEAR(t.requests_per_hour, 3600, kMoneyTolerance);
  EXPECT_NEAR(t.input_tokens_per_hour, 3.6e6, 1e-3);
  EXPECT_NEAR(t.output_tokens_per_hour, 7.2e5, 1e-3);
  EXPECT_NEAR(t.usd_per_million_input_tokens, 6.0 / 3.6, kMoneyTolerance);    // 1.6667
  EXPECT_NEAR(t.usd_per_million_output_tokens, 6.0 / 0.72, kMoneyTolerance);  // 8.3333
  EXPECT_NEAR(t.usd_per_million_tokens, 6.0 / 4.32, kMoneyTolerance);         // 1.3889
  EXPECT_NEAR(t.usd_per_thousand_requests, 6.0 / 3.6, kMoneyTolerance);       // 1.6667
}

TEST(Tco, ClosedLoopUsesTheSimulatedThroughput) {
  WorkloadSummary w;  // closed loop: no request count
  w.mean_prompt_tokens = 500;
  w.mean_output_tokens = 100;
  PlanRow row = row_of("test-gpu", 1);
  row.metrics.throughput_requests_per_s = 2.0;
  const TcoRow t = tco(json::object(), row, 0, w);
  EXPECT_NEAR(t.requests_per_hour, 7200, kMoneyTolerance);
  // $2/h over 7200 x 100 = 0.72 M output tokens.
  EXPECT_NEAR(t.usd_per_million_output_tokens, 2.0 / 0.72, kMoneyTolerance);
}

TEST(Tco, NoTrafficGivesZeroPerTokenFigures) {
  WorkloadSummary w;
  const TcoRow t = tco(json::object(), row_of("test-gpu", 1), 0, w);
  EXPECT_EQ(t.usd_per_million_output_tokens, 0);
  EXPECT_EQ(t.usd_per_thousand_requests, 0);
  EXPECT_NEAR(t.usd_per_hour, 2.0, kMoneyTolerance);
}

// ---- Currency --------------------------------------------------------------------------------

TEST(Tco, ConvertsToCnyAtTheDatedRate) {
  const TcoRow t = tco({{"tco", {{"currency", "CNY"}}}}, row_of("test-gpu", 3));
  ASSERT_TRUE(t.converted);
  EXPECT_EQ(t.in_currency.currency, "CNY");
  EXPECT_EQ(t.in_currency.rate_as_of, "2026-01-27");
  EXPECT_NEAR(t.in_currency.per_hour, 42.0, kMoneyTolerance);  // $6 x 7.0
  EXPECT_NEAR(t.in_currency.per_year, 52560 * 7.0, 1e-3);
  EXPECT_NEAR(t.in_currency.per_million_output_tokens, 7.0 * 6.0 / 0.72, kMoneyTolerance);
  EXPECT_NEAR(t.in_currency.instance_per_hour, 14.0, kMoneyTolerance);
  // The USD figures are unchanged.
  EXPECT_NEAR(t.usd_per_hour, 6.0, kMoneyTolerance);
}

// ---- Owned hardware --------------------------------------------------------------------------

TEST(Tco, OwnedServerAmortisedPlusPower) {
  const json root = {{"tco",
                      {{"owned",
                        {{{"hardware", "test-server"},
                          {"years", 4},
                          {"utilisation", 0.6},
                          {"pue", 1.5},
                          {"usd_per_kwh", 0.10}}}}}}};
  const TcoRow t = tco(root, row_of("test-gpu", 2));
  ASSERT_EQ(t.owned.size(), 1u);
  const TcoOwnedRow& o = t.owned[0];
  EXPECT_EQ(o.num_servers, 2);
  // capex: 2 x 240,000 / 4 / 8760 = 13.69863 $/h; power: 2 x 10.2 kW x 0.6 x 1.5 x 0.10 =
  // 1.836 $/h.
  EXPECT_NEAR(o.capex_usd_per_hour, 2 * 240000.0 / 4 / 8760, kMoneyTolerance);
  EXPECT_NEAR(o.power_usd_per_hour, 1.836, kMoneyTolerance);
  EXPECT_NEAR(o.usd_per_hour, 2 * 240000.0 / 4 / 8760 + 1.836, kMoneyTolerance);
  EXPECT_NEAR(o.annual_usd, 120000 + 1.836 * 8760, 1e-3);
  EXPECT_NEAR(o.usd_per_million_output_tokens, o.usd_per_hour / 0.72, kMoneyTolerance);
}

TEST(Tco, OwnedServerUsesCatalogDefaultsAndServiceHours) {
  const json root = {
      {"tco",
       {{"hours_per_day", 12},
        {"owned", {{{"hardware", "test-server"}, {"years", 3}, {"utilisation", 1}}}}}}};
  const TcoRow t = tco(root, row_of("test-gpu", 1));
  ASSERT_EQ(t.owned.size(), 1u);
  const TcoOwnedRow& o = t.owned[0];
  EXPECT_NEAR(o.pue, 1.5, kTolerance);
  EXPECT_NEAR(o.usd_per_kwh, 0.10, kTolerance);
  // Capex all year over 4380 service hours: 80,000 / 4380; power only in service: 10.2 x 1.5 x
  // 0.10 = 1.53 $/h.
  EXPECT_NEAR(o.capex_usd_per_hour, 80000.0 / 4380, kMoneyTolerance);
  EXPECT_NEAR(o.power_usd_per_hour, 1.53, kMoneyTolerance);
  EXPECT_NEAR(o.annual_usd, 80000 + 1.53 * 4380, 1e-3);
}

TEST(Tco, OwnedServerAppliesOnlyToItsInstanceType) {
  Scenario sc = scenario_with(
      {{"tco", {{"owned", {{{"hardware", "test-server"}, {"years", 4}, {"utilisation", 1}}}}}}});
  sc.candidates = {"test-block"};
  const TcoRow t = compute_tco(row_of("test-block", 1), sc, test_catalog(), one_per_second());
  EXPECT_TRUE(t.owned.empty());
}

// ---- Spot ------------------------------------------------------------------------------------

TEST(Tco, SpotSparesFollowTheBinomialTail) {
  // p_down = 0.5 x (600/3600) / (1 + 0.5 x 600/3600) = 1/13. Smallest s with
  // P(Bin(n + s, 1/13) > s) <= 1%: n = 10 -> 4; n = 100 -> 16; at 90%: n = 10 -> 2 (Python
  // math.comb sums).
  EXPECT_EQ(spot_spare_instances(10, 0.5, 600, 0.99), 4);
  EXPECT_EQ(spot_spare_instances(100, 0.5, 600, 0.99), 16);
  EXPECT_EQ(spot_spare_instances(10, 0.5, 600, 0.9), 2);
  // A realistic AWS band (20% a month / 730 h) needs no spare for 10 instances.
  EXPECT_EQ(spot_spare_instances(10, 0.000274, 600, 0.99), 0);
  EXPECT_EQ(spot_spare_instances(0, 0.5, 600, 0.99), 0);
}

TEST(Tco, SpotInterruptionsAddBilledInstances) {
  const TcoRow t = tco({{"tco", {{"price_model", "spot"}}}}, row_of("test-gpu", 10));
  ASSERT_TRUE(t.spot);
  EXPECT_EQ(t.spot_figures.num_spare_instances, 4);
  EXPECT_EQ(t.num_instances_billed, 14);
  EXPECT_NEAR(t.usd_per_hour, 14 * 0.6, kMoneyTolerance);  // 8.40, not 10 x 0.60 = 6.00
  EXPECT_NEAR(t.spot_figures.availability, 12.0 / 13.0, kTolerance);
  EXPECT_NEAR(t.spot_figures.expected_instances_down, 14.0 / 13.0, kTolerance);
  EXPECT_NEAR(t.spot_figures.replacement_s, 600, kTolerance);
  // A faster replacement (60 s): p_down = 1/121; one spare suffices.
  const TcoRow fast = tco({{"tco", {{"price_model", "spot"}, {"spot", {{"replacement_s", 60}}}}}},
                          row_of("test-gpu", 10));
  EXPECT_EQ(fast.spot_figures.num_spare_instances, spot_spare_instances(10, 0.5, 60, 0.99));
  EXPECT_LT(fast.usd_per_hour, t.usd_per_hour);
}

// ---- Autoscaling -----------------------------------------------------------------------------

json day_profile() {
  std::vector<double> m;
  for (int h = 0; h < 24; ++h) m.push_back(h < 8 ? 0.25 : h < 16 ? 0.5 : 1.0);
  return m;
}

TEST(Tco, AutoscalingProportionalWhenTheRateIsUnknown) {
  const json root = {
      {"tco", {{"autoscaling", {{"min_instances", 2}, {"hourly_multipliers", day_profile()}}}}}};
  const TcoRow t = tco(root, row_of("test-gpu", 8));
  ASSERT_TRUE(t.autoscaled);
  // Flat workload: the 8 planned instances serve multiplier 1. Hours: ceil(8 x 0.25) = 2,
  // ceil(8 x 0.5) = 4, 8; 8 h each: 112 instance-hours x $2 = $224 a day.
  ASSERT_EQ(t.hourly_instances.size(), 24u);
  EXPECT_EQ(t.hourly_instances[0], 2);
  EXPECT_EQ(t.hourly_instances[8], 4);
  EXPECT_EQ(t.hourly_instances[16], 8);
  EXPECT_NEAR(t.usd_per_day, 224, kMoneyTolerance);
  EXPECT_NEAR(t.annual_usd, 224 * 365.0, kMoneyTolerance);
  EXPECT_NEAR(t.usd_per_hour, 224 / 24.0, kMoneyTolerance);
  EXPECT_EQ(t.num_instances_billed, 8);
  // Requests follow the multipliers: (8 x 0.25 + 8 x 0.5 + 8 x 1) x 3600 = 50,400 a day.
  EXPECT_NEAR(t.requests_per_hour, 50400 / 24.0, 1e-6);
}

TEST(Tco, AutoscalingBySustainableRate) {
  const json root = {
      {"tco", {{"autoscaling", {{"min_instances", 2}, {"hourly_multipliers", day_profile()}}}}}};
  // 1 request/s at multiplier 1, 0.3 requests/s per instance: ceil(0.25/0.3) = 1 -> min 2,
  // ceil(0.5/0.3) = 2, ceil(1/0.3) = 4: 8 x (2 + 2 + 4) = 64 instance-hours = $128 a day.
  const TcoRow t = tco(root, row_of("test-gpu", 8), 0.3);
  EXPECT_EQ(t.hourly_instances[0], 2);
  EXPECT_EQ(t.hourly_instances[8], 2);
  EXPECT_EQ(t.hourly_instances[16], 4);
  EXPECT_NEAR(t.usd_per_day, 128, kMoneyTolerance);
  EXPECT_NE(t.autoscaling_rule.find("0.3"), std::string::npos);
}

TEST(Tco, AutoscalingToZeroAndWithReservations) {
  std::vector<double> m(24, 1.0);
  for (int h = 0; h < 6; ++h) m[h] = 0;
  const json root = {{"tco",
                      {{"price_model", "reserved_1y"},
                       {"autoscaling", {{"min_instances", 0}, {"hourly_multipliers", m}}}}}};
  const TcoRow t = tco(root, row_of("test-gpu", 3));
  EXPECT_EQ(t.hourly_instances[0], 0);
  EXPECT_EQ(t.hourly_instances[12], 3);
  // A reservation is paid all day for the busiest hour: 3 x $1.30 x 24 = $93.60 a day.
  EXPECT_NEAR(t.usd_per_day, 93.6, kMoneyTolerance);
  EXPECT_NEAR(t.annual_usd, 3 * 1.3 * 8760, kMoneyTolerance);
  // On-demand pays 18 h: 3 x 2 x 18 = $108 a day.
  const json od = {{"tco", {{"autoscaling", {{"min_instances", 0}, {"hourly_multipliers", m}}}}}};
  EXPECT_NEAR(tco(od, row_of("test-gpu", 3)).usd_per_day, 108, kMoneyTolerance);
}

TEST(Tco, AutoscalingDefaultsToTheWorkloadProfile) {
  Scenario sc = scenario_with({{"tco", {{"autoscaling", {{"min_instances", 1}}}}}});
  std::vector<double> profile(24, 0.5);
  profile[18] = 2.0;  // the planned fleet was sized for this peak hour
  sc.workload.load_profile = profile;
  const ResolvedTco r = resolve_tco(sc, test_catalog());
  EXPECT_EQ(r.multipliers_origin, "workload.load_profile");
  const TcoRow t = compute_tco(row_of("test-gpu", 8), sc, test_catalog(), one_per_second());
  EXPECT_EQ(t.hourly_instances[18], 8);
  EXPECT_EQ(t.hourly_instances[0], 2);  // ceil(8 x 0.5 / 2)
  EXPECT_NEAR(t.usd_per_day, (23 * 2 + 8) * 2.0, kMoneyTolerance);
}

TEST(Tco, AutoscaledOwnedServersOwnThePeakAndPowerWhatRuns) {
  const json root = {
      {"tco",
       {{"autoscaling", {{"min_instances", 2}, {"hourly_multipliers", day_profile()}}},
        {"owned", {{{"hardware", "test-server"}, {"years", 4}, {"utilisation", 0.6}}}}}}};
  const TcoRow t = tco(root, row_of("test-gpu", 8));
  ASSERT_EQ(t.owned.size(), 1u);
  EXPECT_EQ(t.owned[0].num_servers, 8);
  // 112 server-hours a day powered: 112 x 10.2 x 0.6 x 1.5 x 0.10 x 365 a year.
  const double power_per_year = 112 * 10.2 * 0.6 * 1.5 * 0.10 * 365;
  EXPECT_NEAR(t.owned[0].annual_usd, 8 * 240000.0 / 4 + power_per_year, 1e-3);
}

// ---- Given fleets ----------------------------------------------------------------------------

TEST(Tco, GivenFleetSumsItsGroups) {
  Scenario sc = scenario_with({{"tco", {{"currency", "CNY"}}}});
  sc.candidates.clear();
  FleetSpec fleet;
  fleet.groups.resize(2);
  fleet.groups[0].instance = "test-gpu";
  fleet.groups[1].instance = "test-block";
  sc.fleet = fleet;
  PlanRow row = row_of("fleet: 2 x test-gpu + 1 x test-block", 3);
  GroupRow a;
  a.instance_type = "test-gpu";
  a.num_instances = 2;
  GroupRow b;
  b.instance_type = "test-block";
  b.num_instances = 1;
  row.groups = {a, b};
  const TcoRow t = compute_tco(row, sc, test_catalog(), one_per_second());
  EXPECT_EQ(t.price_model, "on_demand+capacity_block");
  EXPECT_NEAR(t.usd_per_hour, 2 * 2.0 + 40, kMoneyTolerance);
  EXPECT_NEAR(t.instance_usd_per_hour, 44.0 / 3, kMoneyTolerance);
  EXPECT_NEAR(t.in_currency.per_hour, 44 * 7.0, kMoneyTolerance);
  ASSERT_EQ(t.prices.size(), 2u);
}

// ---- Bad input -------------------------------------------------------------------------------

std::string parse_error(const json& root) {
  return error_message<InputError>([&] { parse_tco_spec(root, "s.json"); });
}

TEST(TcoErrors, ParseMessages) {
  EXPECT_EQ(parse_error({{"tco", 3}}), "s.json: field \"tco\": expected an object, got 3");
  EXPECT_EQ(parse_error({{"tco", {{"price", 1}}}}),
            "s.json: field \"tco.price\": unknown; known fields: price_model, hours_per_day, "
            "autoscaling, spot, currency, owned");
  EXPECT_EQ(parse_error({{"tco", {{"price_model", "reserved_2y"}}}}),
            "s.json: field \"tco.price_model\": expected one of \"on_demand\", \"reserved_1y\", "
            "\"reserved_3y\", \"spot\", \"capacity_block\", got \"reserved_2y\"");
  EXPECT_EQ(parse_error({{"tco", {{"hours_per_day", 25}}}}),
            "s.json: field \"tco.hours_per_day\": expected a number in (0, 24], got 25");
  EXPECT_EQ(parse_error({{"tco", {{"hours_per_day", 0}}}}),
            "s.json: field \"tco.hours_per_day\": expected a number in (0, 24], got 0");
  EXPECT_EQ(parse_error({{"hours_per_year", 8784}, {"tco", {{"hours_per_day", 12}}}}),
            "s.json: field \"tco.hours_per_day\": expected hours_per_year / hours_per_day <= 366 "
            "days in service (hours_per_year 8784.0 gives 732.0 days), got 12");
  EXPECT_EQ(parse_error({{"tco", {{"hours_per_day", 12}, {"autoscaling", {{"enabled", true}}}}}}),
            "s.json: field \"tco.hours_per_day\": expected 24 with autoscaling (give hours out "
            "of service a multiplier of 0 and min_instances 0 instead), got 12");
  EXPECT_EQ(parse_error({{"tco", {{"autoscaling", {{"hourly_multipliers", {1, 2}}}}}}}),
            "s.json: field \"tco.autoscaling.hourly_multipliers\": expected a list of 24 hourly "
            "multipliers (hours 00-01 to 23-24), got [1,2]");
  EXPECT_EQ(parse_error(
                {{"tco", {{"autoscaling", {{"hourly_multipliers", std::vector<double>(24, 0)}}}}}}),
            "s.json: field \"tco.autoscaling.hourly_multipliers\": expected at least one "
            "positive multiplier, got all 0");
  EXPECT_EQ(parse_error({{"tco", {{"autoscaling", {{"min_instances", -1}}}}}}),
            "s.json: field \"tco.autoscaling.min_instances\": expected a non-negative integer, "
            "got -1");
  EXPECT_EQ(parse_error({{"tco", {{"spot", {{"capacity_confidence", 1}}}}}}),
            "s.json: field \"tco.spot.capacity_confidence\": expected a probability in (0, 1), "
            "got 1");
  EXPECT_EQ(parse_error({{"tco", {{"currency", "cny"}}}}),
            "s.json: field \"tco.currency\": expected an ISO 4217 code such as \"USD\" or "
            "\"CNY\", got \"cny\"");
  EXPECT_EQ(parse_error({{"tco", {{"owned", {{{"hardware", "x"}, {"utilisation", 1}}}}}}}),
            "s.json: field \"tco.owned[0].years\": expected a value (required), got nothing "
            "(field missing)");
  EXPECT_EQ(parse_error(
                {{"tco", {{"owned", {{{"hardware", "x"}, {"years", 4}, {"utilisation", 1.5}}}}}}}),
            "s.json: field \"tco.owned[0].utilisation\": expected a fraction of TDP in (0, 1], "
            "got 1.5");
  EXPECT_EQ(
      parse_error(
          {{"tco",
            {{"owned", {{{"hardware", "x"}, {"years", 4}, {"utilisation", 1}, {"pue", 0.9}}}}}}}),
      "s.json: field \"tco.owned[0].pue\": expected a PUE in [1, 10], got 0.9");
}

std::string resolve_error(const json& root,
                          const std::vector<std::string>& candidates = {"test-gpu"}) {
  Scenario sc = scenario_with(root);
  sc.candidates = candidates;
  return error_message<InputError>([&] { resolve_tco(sc, test_catalog()); });
}

TEST(TcoPriceModels, TypesWithoutThePriceModelAreListedNotRefused) {
  Scenario sc = scenario_with({{"tco", {{"price_model", "reserved_3y"}}}});
  sc.candidates = {"test-gpu", "test-block"};
  const ResolvedTco r = resolve_tco(sc, test_catalog());
  ASSERT_EQ(r.not_offered.size(), 1U);
  EXPECT_EQ(r.not_offered[0].instance_type, "test-block");
  EXPECT_EQ(r.not_offered[0].offered, "capacity_block");
  // The row of that type says why it has no TCO; the type that offers it has none to say.
  EXPECT_EQ(price_model_not_offered(row_of("test-block", 1), sc, test_catalog()),
            "\"test-block\" offers no \"reserved_3y\" price (it offers: capacity_block)");
  EXPECT_EQ(price_model_not_offered(row_of("test-gpu", 1), sc, test_catalog()), "");
  // A scenario without a price model leaves nothing out.
  Scenario plain = scenario_with(json::object());
  plain.candidates = {"test-gpu", "test-block"};
  EXPECT_TRUE(resolve_tco(plain, test_catalog()).not_offered.empty());
  EXPECT_EQ(price_model_not_offered(row_of("test-block", 1), plain, test_catalog()), "");
}

TEST(TcoPriceModels, AGivenFleetNamesEveryGroupWithoutIt) {
  Scenario sc = scenario_with({{"tco", {{"price_model", "spot"}}}});
  PlanRow row = row_of("fleet", 3);
  row.groups = {{}, {}};
  row.groups[0].instance_type = "test-block";
  row.groups[1].instance_type = "test-gpu";
  EXPECT_EQ(price_model_not_offered(row, sc, test_catalog()),
            "\"test-block\" offers no \"spot\" price (it offers: capacity_block)");
}

TEST(TcoErrors, PriceModelNoCostedTypeOffersNamesEveryType) {
  EXPECT_EQ(resolve_error({{"tco", {{"price_model", "spot"}}}}, {"test-block"}),
            "s.json: field \"tco.price_model\": no instance type the scenario costs offers a "
            "\"spot\" price in instances/instances.json: \"test-block\" offers capacity_block; "
            "give your quotes in price_overrides or import a price list (llmcap catalog import, "
            "docs/catalog.md)");
  // compute_tco refuses a row whose type lacks it (callers skip such rows).
  Scenario sc = scenario_with({{"tco", {{"price_model", "spot"}}}});
  sc.candidates = {"test-gpu", "test-block"};
  EXPECT_EQ(error_message<InputError>([&] {
              compute_tco(row_of("test-block", 1), sc, test_catalog(), one_per_second());
            }),
            "s.json: field \"tco.price_model\": instance \"test-block\" offers no \"spot\" price "
            "in instances/instances.json; it offers: capacity_block");
}

TEST(TcoErrors, CurrencyWithoutRate) {
  EXPECT_EQ(resolve_error({{"tco", {{"currency", "EUR"}}}}),
            "s.json: field \"tco.currency\": expected \"USD\" or a currency with a rate in "
            "tco/exchange_rates.json (one of \"USD\", \"CNY\"), got \"EUR\"");
}

TEST(TcoErrors, UnknownOwnedHardware) {
  EXPECT_EQ(
      resolve_error(
          {{"tco", {{"owned", {{{"hardware", "dgx-b200"}, {"years", 4}, {"utilisation", 1}}}}}}}),
      "s.json: field \"tco.owned[0].hardware\": expected an id of "
      "tco/owned_hardware.json (known: test-server), got \"dgx-b200\"");
}

TEST(TcoErrors, MissingDefaults) {
  Scenario sc = scenario_with(
      {{"tco",
        {{"price_model", "spot"},
         {"owned", {{{"hardware", "test-server"}, {"years", 4}, {"utilisation", 1}}}}}}});
  model::Catalog c = test_catalog();
  c.set_tco_defaults({});
  EXPECT_EQ(error_message<InputError>([&] { resolve_tco(sc, c); }),
            "s.json: field \"tco.owned[0].pue\": expected a value (the catalog has no "
            "tco/defaults.json \"pue\"), got nothing (field missing)");
  sc.tco.owned.clear();
  EXPECT_EQ(error_message<InputError>([&] { resolve_tco(sc, c); }),
            "s.json: field \"tco.spot.replacement_s\": expected a value (the catalog has no "
            "tco/defaults.json \"spot_replacement_s\"), got nothing (field missing)");
}

TEST(TcoErrors, AutoscalingAGivenFleet) {
  Scenario sc = scenario_with({{"tco", {{"autoscaling", {{"min_instances", 1}}}}}});
  sc.fleet = FleetSpec{};
  EXPECT_EQ(error_message<InputError>([&] { resolve_tco(sc, test_catalog()); }),
            "s.json: field \"tco.autoscaling\": expected no autoscaling with a given fleet (its "
            "sizes are fixed), got \"enabled\": true");
}

TEST(TcoErrors, TooManyDaysFromHoursPerYear) {
  Scenario sc = scenario_with(json::object());
  sc.hours_per_year = 8784;
  sc.tco.hours_per_day = 12;  // set programmatically, bypassing parse_tco_spec's check
  EXPECT_EQ(error_message<InputError>([&] { resolve_tco(sc, test_catalog()); }),
            "s.json: field \"hours_per_year\": expected at most 366 days of tco.hours_per_day "
            "(12.0 h), got 8784.0");
}

TEST(TcoErrors, RowWithoutInstances) {
  EXPECT_EQ(error_message<InputError>([&] { tco(json::object(), row_of("test-gpu", 0)); }),
            "s.json: TCO of \"test-gpu\": expected a fleet of at least 1 instance, got 0");
}

// ---- The shipped catalog ---------------------------------------------------------------------

// The shipped catalog holds on-demand prices only (every price read from the provider's own
// price list: docs/catalog.md), so on-demand here.
TEST(Tco, ShippedCatalogOnDemandAndOwnedL40s) {
  const model::Catalog c = model::Catalog::load(llmcap::testing::data_dir());
  Scenario sc = scenario_with(
      {{"tco",
        {{"price_model", "on_demand"},
         {"currency", "CNY"},
         {"owned", {{{"hardware", "l40s-1gpu-server"}, {"years", 4}, {"utilisation", 0.5}}}}}}});
  sc.candidates = {"aws-g6e.xlarge"};
  const TcoRow t = compute_tco(row_of("aws-g6e.xlarge", 2), sc, c, one_per_second());
  const model::PriceOffer* offer = c.instance("aws-g6e.xlarge", "test").find_price("on_demand");
  ASSERT_NE(offer, nullptr);
  EXPECT_NEAR(t.annual_usd, 2 * offer->usd_per_hour * 8760, kMoneyTolerance);
  EXPECT_NEAR(t.in_currency.rate, c.find_exchange_rate("CNY")->rate, kTolerance);
  ASSERT_EQ(t.owned.size(), 1u);
  const model::OwnedHardware* hw = c.find_owned_hardware("l40s-1gpu-server");
  EXPECT_NEAR(t.owned[0].power_usd_per_hour,
              2 * hw->power_watts / 1000 * 0.5 * c.tco_defaults().pue.value *
                  c.tco_defaults().usd_per_kwh.value,
              kMoneyTolerance);
}

}  // namespace
}  // namespace llmcap::plan
