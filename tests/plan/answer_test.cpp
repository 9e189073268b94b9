// plan::make_answer on hand-built plans: the ranking under the scenario's price model and
// currency, the binding constraint, the runner-up, the other device kind and the search's winner.
#include "plan/answer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmcap::plan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

PlanRow feasible_row(const std::string& id, model::DeviceKind kind, int64_t n,
                     double usd_per_hour) {
  PlanRow r;
  r.instance_type = id;
  r.device_kind = kind;
  r.hardware_name = "hw of " + id;
  r.feasible = true;
  r.num_instances = n;
  r.usd_per_hour = usd_per_hour;
  r.instance_usd_per_hour = usd_per_hour / static_cast<double>(n);
  r.configuration = "tp=1 bf16 chunked_prefill chunk=2048 max_num_seqs=256";
  r.metrics.ttft.p99_s = 0.5;   // of 2 s: 25% of the bound
  r.metrics.tpot.p99_s = 0.04;  // of 0.05 s: 80%
  return r;
}

PlanRow infeasible_row(const std::string& id, model::DeviceKind kind, double instance_usd,
                       double tpot_floor_s = 0.113) {
  PlanRow r;
  r.tpot_floor_s = tpot_floor_s;
  r.instance_type = id;
  r.device_kind = kind;
  r.instance_usd_per_hour = instance_usd;
  r.infeasible_reason =
      "TPOT floor at batch 1 is 0.113 s > SLO 0.05 s (2 replicas, one per socket)";
  return r;
}

/// The TCO of `row` as compute_tco would give it, at `usd_per_hour` for the fleet under
/// `price_model` (8,760 hours a year).
TcoRow tco_of(const PlanRow& row, double usd_per_hour, const std::string& price_model) {
  TcoRow t;
  t.price_model = price_model;
  t.num_instances = row.num_instances;
  t.num_instances_billed = row.num_instances;
  t.usd_per_hour = usd_per_hour;
  t.annual_usd = usd_per_hour * 8760;
  t.usd_per_million_output_tokens = usd_per_hour / 3.6;
  return t;
}

Scenario scenario_with_slo() {
  Scenario s;
  s.name = "s";
  s.slo.ttft_s = 2.0;
  s.slo.tpot_s = 0.05;
  s.max_instances = 64;
  return s;
}

constexpr double kCent = 0.005;

TEST(MakeAnswer, RanksByTheScenariosPriceModelNotByOnDemand) {
  // On demand, gpu-a (USD 6/h) is cheaper than gpu-b (USD 7/h); reserved, gpu-b is.
  PlanResult result;
  result.rows = {feasible_row("gpu-a", model::DeviceKind::kGpu, 3, 6.0),
                 feasible_row("gpu-b", model::DeviceKind::kGpu, 2, 7.0)};
  const std::vector<TcoRow> tco = {tco_of(result.rows[0], 4.2, "reserved_1y"),
                                   tco_of(result.rows[1], 3.9, "reserved_1y")};
  Scenario s = scenario_with_slo();
  s.tco.price_model = "reserved_1y";
  s.tco.price_model_given = true;
  const Answer a = make_answer(s, result, nullptr, tco, {});
  ASSERT_TRUE(a.feasible);
  EXPECT_EQ(a.recommended.instance_type, "gpu-b");
  EXPECT_EQ(a.recommended.num_instances, 2);
  EXPECT_EQ(a.price_model, "reserved_1y");
  EXPECT_EQ(a.recommended.price_model, "reserved_1y");
  EXPECT_NEAR(a.recommended.cost_per_hour, 3.9, kCent);
  EXPECT_NEAR(a.recommended.cost_per_year, 3.9 * 8760, kCent);
  EXPECT_NEAR(a.cost_per_month, 3.9 * 8760 / 12, kCent);
  ASSERT_TRUE(a.runner_up.has_value());
  EXPECT_EQ(a.runner_up->instance_type, "gpu-a");
  EXPECT_THAT(a.headline, HasSubstr("2 x gpu-b"));
  EXPECT_THAT(a.headline, HasSubstr("USD 3.90/hour reserved_1y"));
}

TEST(MakeAnswer, QuotesTheScenariosCurrency) {
  PlanResult result;
  result.rows = {feasible_row("gpu-a", model::DeviceKind::kGpu, 3, 6.0)};
  TcoRow t = tco_of(result.rows[0], 6.0, "on_demand");
  t.converted = true;
  t.in_currency.currency = "CNY";
  t.in_currency.rate = 7.1;
  t.in_currency.per_hour = 6.0 * 7.1;
  t.in_currency.per_year = 6.0 * 7.1 * 8760;
  Scenario s = scenario_with_slo();
  s.tco.currency = "CNY";
  const Answer a = make_answer(s, result, nullptr, {t}, {});
  EXPECT_EQ(a.currency, "CNY");
  EXPECT_NEAR(a.recommended.cost_per_hour, 42.6, kCent);
  EXPECT_THAT(a.headline, HasSubstr("CNY 42.60/hour"));
  EXPECT_THAT(a.headline, HasSubstr("CNY 373,176/year"));
  EXPECT_EQ(a.price_model, "catalog");  // the scenario named no price model
}

TEST(MakeAnswer, NamesTheMetricNearestItsBoundAsBinding) {
  PlanResult result;
  result.rows = {feasible_row("gpu-a", model::DeviceKind::kGpu, 3, 6.0)};
  const Answer a = make_answer(scenario_with_slo(), result, nullptr,
                               {tco_of(result.rows[0], 6.0, "on_demand")}, {});
  EXPECT_EQ(a.binding_constraint, "tpot");
  EXPECT_NEAR(a.binding_margin, 0.2, 1e-9);
  EXPECT_THAT(a.binding_text, HasSubstr("p99 TPOT 40.0 ms against 50.0 ms (20% margin)"));

  result.rows[0].metrics.ttft.p99_s = 1.9;  // 95% of the TTFT bound
  EXPECT_EQ(make_answer(scenario_with_slo(), result, nullptr,
                        {tco_of(result.rows[0], 6.0, "on_demand")}, {})
                .binding_constraint,
            "ttft");

  result.rows[0].metrics.num_preemptions = 7;
  const Answer kv = make_answer(scenario_with_slo(), result, nullptr,
                                {tco_of(result.rows[0], 6.0, "on_demand")}, {});
  EXPECT_EQ(kv.binding_constraint, "kv_capacity");
  EXPECT_THAT(kv.binding_text, HasSubstr("7 preemptions"));

  result.rows[0].metrics.num_preemptions = 0;
  result.rows[0].num_instances = 1;
  EXPECT_EQ(make_answer(scenario_with_slo(), result, nullptr,
                        {tco_of(result.rows[0], 2.0, "on_demand")}, {})
                .binding_constraint,
            "none");
}

TEST(MakeAnswer, SpeaksOfTheOtherDeviceKindOnlyWhenItWasACandidate) {
  PlanResult gpus_only;
  gpus_only.rows = {feasible_row("gpu-a", model::DeviceKind::kGpu, 3, 6.0)};
  const Answer a = make_answer(scenario_with_slo(), gpus_only, nullptr,
                               {tco_of(gpus_only.rows[0], 6.0, "on_demand")}, {});
  EXPECT_FALSE(a.other_kind_candidate);
  EXPECT_EQ(a.other_kind_text, "");
  EXPECT_THAT(a.headline, Not(HasSubstr("CPU")));

  PlanResult with_cpu = gpus_only;
  with_cpu.rows.push_back(infeasible_row("cpu-big", model::DeviceKind::kCpu, 9.0));
  with_cpu.rows.push_back(infeasible_row("cpu-small", model::DeviceKind::kCpu, 1.5));
  // A type too small for the model (no floor computed) comes after those that hold it.
  PlanRow tiny = infeasible_row("cpu-tiny", model::DeviceKind::kCpu, 0.2, 0);
  tiny.infeasible_reason =
      "model \"m\" on instance \"cpu-tiny\": weights need 16.06 GB, 15.46 GB usable: "
      "16060522496 bytes (bf16), instance has 154618...";
  with_cpu.rows.push_back(tiny);
  const Answer b = make_answer(scenario_with_slo(), with_cpu, nullptr,
                               {tco_of(with_cpu.rows[0], 6.0, "on_demand"), {}, {}, {}}, {});
  EXPECT_TRUE(b.other_kind_candidate);
  EXPECT_EQ(b.other_kind, "cpu");
  EXPECT_FALSE(b.other_kind_cheapest.has_value());
  EXPECT_EQ(b.other_kind_text,
            "No CPU instance type meets the SLO (3 tried); the nearest, cpu-small: TPOT floor at "
            "batch 1 is 0.113 s > SLO 0.05 s.");
  // The why-not lines name the infeasible types that hold the model cheapest instance first,
  // then those too small for it, each without the detail.
  ASSERT_EQ(b.why_not.size(), 3u);
  EXPECT_EQ(b.why_not[2], "cpu-tiny: weights need 16.06 GB, 15.46 GB usable");
  EXPECT_EQ(b.why_not[0], "cpu-small: TPOT floor at batch 1 is 0.113 s > SLO 0.05 s");
  EXPECT_EQ(b.why_not[1], "cpu-big: TPOT floor at batch 1 is 0.113 s > SLO 0.05 s");

  PlanResult feasible_cpu = gpus_only;
  feasible_cpu.rows.push_back(feasible_row("cpu-a", model::DeviceKind::kCpu, 4, 15.0));
  const Answer c = make_answer(scenario_with_slo(), feasible_cpu, nullptr,
                               {tco_of(feasible_cpu.rows[0], 6.0, "on_demand"),
                                tco_of(feasible_cpu.rows[1], 15.0, "on_demand")},
                               {});
  ASSERT_TRUE(c.other_kind_cheapest.has_value());
  EXPECT_EQ(c.other_kind_cheapest->instance_type, "cpu-a");
  EXPECT_NEAR(c.other_kind_cost_ratio, 2.5, 1e-12);
  EXPECT_EQ(c.other_kind_text,
            "The cheapest CPU fleet, 4 x cpu-a at USD 15.00/hour, costs 2.5 times as much.");
}

TEST(MakeAnswer, TheSearchsWinnerIsTheAnswerWithItsConfiguration) {
  // The plan's bf16 row needs 3 instances; the search finds 1 instance with int8.
  PlanResult result;
  result.rows = {feasible_row("gpu-a", model::DeviceKind::kGpu, 3, 5.58)};
  Analysis analysis;
  PlanRow winner = feasible_row("gpu-a", model::DeviceKind::kGpu, 1, 1.86);
  winner.configuration = "tp=1 int8 chunked_prefill chunk=512 max_num_seqs=64";
  analysis.search_best = {winner};
  UncertaintyRow u;
  u.instance_type = "gpu-a";
  u.num_instances = 1;
  u.usd_per_hour = 1.86;
  u.usd_per_hour_low = 1.674;
  u.usd_per_hour_high = 4.092;
  u.dominant_assumption = "step_time";
  analysis.uncertainty = {u};
  const Answer a =
      make_answer(scenario_with_slo(), result, &analysis,
                  {tco_of(result.rows[0], 5.58, "on_demand")}, {tco_of(winner, 1.86, "on_demand")});
  EXPECT_TRUE(a.recommended.from_search);
  EXPECT_EQ(a.recommended.num_instances, 1);
  EXPECT_EQ(a.recommended.configuration, "tp=1 int8 chunked_prefill chunk=512 max_num_seqs=64");
  ASSERT_TRUE(a.has_range);
  EXPECT_NEAR(a.cost_per_hour_low, 1.674, 1e-9);
  EXPECT_NEAR(a.cost_per_hour_high, 4.092, 1e-9);
  EXPECT_EQ(a.dominant_assumption, "step_time");
}

TEST(MakeAnswer, RangeFollowsThePriceModelAsARatio) {
  // The uncertainty analysis works in catalog USD; the answer's range is scaled to its cost.
  PlanResult result;
  result.rows = {feasible_row("gpu-a", model::DeviceKind::kGpu, 2, 4.0)};
  Analysis analysis;
  UncertaintyRow u;
  u.instance_type = "gpu-a";
  u.num_instances = 2;
  u.usd_per_hour = 4.0;
  u.usd_per_hour_low = 1.8;
  u.usd_per_hour_high = 6.6;
  analysis.uncertainty = {u};
  const Answer a = make_answer(scenario_with_slo(), result, &analysis,
                               {tco_of(result.rows[0], 2.5, "reserved_1y")}, {});
  ASSERT_TRUE(a.has_range);
  EXPECT_NEAR(a.cost_per_hour_low, 1.8 * 2.5 / 4.0, 1e-12);
  EXPECT_NEAR(a.cost_per_hour_high, 6.6 * 2.5 / 4.0, 1e-12);
}

TEST(MakeAnswer, NoFeasibleFleetGivesReasonsNotARecommendation) {
  PlanResult result;
  result.rows = {infeasible_row("cpu-a", model::DeviceKind::kCpu, 2.0)};
  const Answer a = make_answer(scenario_with_slo(), result, nullptr, {TcoRow{}}, {});
  EXPECT_FALSE(a.feasible);
  EXPECT_THAT(a.headline, HasSubstr("No candidate fleet meets the SLO within max_instances (64)"));
  ASSERT_EQ(a.why_not.size(), 1u);
  EXPECT_THAT(a.why_not[0], HasSubstr("cpu-a: TPOT floor"));
}

}  // namespace
}  // namespace llmcap::plan
