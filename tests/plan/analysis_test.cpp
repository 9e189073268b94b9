// The analyses of a plan: load multipliers on every workload kind, the uncertainty ranges and
// their dominant assumption, cost against load, latency CDFs, sensitivity, the recommendation.
#include "plan/analysis.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "synthetic_catalog.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

using llmcap::testing::error_message;
using ::testing::HasSubstr;

model::Catalog test_catalog() {
  model::Catalog c;
  c.add_hardware(testing::synthetic_gpu("g40", int64_t{40} << 30, 1e12, 3e14));
  c.add_instance(testing::synthetic_gpu_instance("one-gpu", "g40", 1, 1.0));
  return c;
}

Scenario test_scenario() {
  Scenario s;
  s.file = "analysis-test.json";
  s.name = "analysis-test";
  s.model_config = llmcap::testing::data_dir() / "models" / "llama-3.1-8b.json";
  s.workload.kind = WorkloadSpec::Kind::kArrivalProcess;
  s.workload.path = llmcap::testing::test_data("lengths.csv");
  s.workload.rate_per_s = 30.0;
  s.workload.num_requests = 400;
  s.slo.ttft_s = 1.5;
  s.slo.tpot_s = 0.08;
  s.seed = 5;
  s.max_instances = 32;
  return s;
}

TEST(WithLoadMultiplier, ScalesEachWorkloadKind) {
  Scenario trace;
  trace.workload.kind = WorkloadSpec::Kind::kTrace;
  trace.workload.rate_multiplier = 1.5;
  EXPECT_DOUBLE_EQ(with_load_multiplier(trace, 2).workload.rate_multiplier, 3.0);

  Scenario arrivals = test_scenario();
  const Scenario a2 = with_load_multiplier(arrivals, 0.5);
  EXPECT_DOUBLE_EQ(a2.workload.rate_per_s, 15.0);
  EXPECT_EQ(a2.workload.num_requests, 400);
  EXPECT_EQ(a2.slo.ttft_s, arrivals.slo.ttft_s);

  Scenario closed;
  closed.workload.kind = WorkloadSpec::Kind::kClosedLoop;
  closed.workload.num_users = 10;
  EXPECT_EQ(with_load_multiplier(closed, 1.26).workload.num_users, 13);
  EXPECT_EQ(with_load_multiplier(closed, 0.01).workload.num_users, 1);

  Scenario classes;
  classes.workload.kind = WorkloadSpec::Kind::kArrivalProcess;
  ClientClassSpec chat;
  chat.name = "chat";
  chat.workload.kind = WorkloadSpec::Kind::kArrivalProcess;
  chat.workload.rate_per_s = 4;
  ClientClassSpec batch;
  batch.name = "batch";
  batch.workload.kind = WorkloadSpec::Kind::kTrace;
  batch.workload.rate_multiplier = 1;
  classes.workload.classes = {chat, batch};
  const Scenario c3 = with_load_multiplier(classes, 3);
  EXPECT_DOUBLE_EQ(c3.workload.classes[0].workload.rate_per_s, 12.0);
  EXPECT_DOUBLE_EQ(c3.workload.classes[1].workload.rate_multiplier, 3.0);

  EXPECT_EQ(error_message<InputError>([&] { with_load_multiplier(arrivals, 0); }),
            "analysis-test.json: load multiplier 0.000000: expected a positive number");
  EXPECT_THAT(error_message<InputError>([&] { with_load_multiplier(arrivals, -1); }),
              HasSubstr("expected a positive number"));
}

TEST(StepTimeError, ComesFromTheScenarioTheProfileOrTheDatasheetDefault) {
  PlanRow gpu;
  gpu.device_kind = model::DeviceKind::kGpu;
  gpu.predictor = "roofline (datasheet defaults)";
  PlanRow cpu;
  cpu.device_kind = model::DeviceKind::kCpu;
  cpu.predictor = "calibrated: test profile";
  cpu.predictor_kind = model::PredictorKind::kCalibrated;
  model::CalibrationProfile profile;
  profile.fit.p95_rel_error = 0.08;
  UncertaintySpec spec;
  EXPECT_DOUBLE_EQ(step_time_error(spec, gpu, &profile).fraction, kDatasheetStepTimeErrorFraction);
  EXPECT_THAT(step_time_error(spec, gpu, &profile).source, HasSubstr("datasheet"));
  EXPECT_DOUBLE_EQ(step_time_error(spec, cpu, &profile).fraction, 0.08);
  EXPECT_THAT(step_time_error(spec, cpu, &profile).source, HasSubstr("calibration profile"));
  EXPECT_DOUBLE_EQ(step_time_error(spec, cpu, nullptr).fraction, kDatasheetStepTimeErrorFraction);
  // Another confidence scales the 95% half-width as a normal one: z(0.68) / z(0.95).
  spec.confidence = 0.6827;
  constexpr double kZTolerance = 1e-3;
  EXPECT_NEAR(step_time_error(spec, cpu, &profile).fraction, 0.08 * 1.0 / 1.95996, kZTolerance);
  spec.step_time_error_fraction = 0.3;
  EXPECT_DOUBLE_EQ(step_time_error(spec, cpu, &profile).fraction, 0.3);
  EXPECT_THAT(step_time_error(spec, cpu, &profile).source, HasSubstr("scenario"));
}

TEST(StepTimeError, ARowPricedWithAnEngineTakesItsMeasuredError) {
  PlanRow gpu;
  gpu.device_kind = model::DeviceKind::kGpu;
  gpu.engine = "vllm";
  MeasuredStepTimeErrors measured;
  measured[{"gpu", "vllm"}] = {0.31, 10, "the p95 |error| of vllm (test)"};
  measured[{"cpu", "vllm"}] = {0.77, 10, "wrong kind"};
  UncertaintySpec spec;
  EXPECT_DOUBLE_EQ(step_time_error(spec, gpu, nullptr, &measured).fraction, 0.31);
  EXPECT_EQ(step_time_error(spec, gpu, nullptr, &measured).source,
            "the p95 |error| of vllm (test)");
  // Another confidence scales it as the other 95% figures are scaled.
  spec.confidence = 0.6827;
  constexpr double kZTolerance = 1e-3;
  EXPECT_NEAR(step_time_error(spec, gpu, nullptr, &measured).fraction, 0.31 / 1.95996, kZTolerance);
  EXPECT_THAT(step_time_error(spec, gpu, nullptr, &measured).source, HasSubstr("scaled to"));
  // No entry for the engine, or no engine: the datasheet default.
  spec.confidence = 0.95;
  gpu.engine = "sglang";
  EXPECT_DOUBLE_EQ(step_time_error(spec, gpu, nullptr, &measured).fraction,
                   kDatasheetStepTimeErrorFraction);
  gpu.engine = "";
  EXPECT_DOUBLE_EQ(step_time_error(spec, gpu, nullptr, &measured).fraction,
                   kDatasheetStepTimeErrorFraction);
  // The scenario's own figure still comes first.
  gpu.engine = "vllm";
  spec.step_time_error_fraction = 0.05;
  EXPECT_DOUBLE_EQ(step_time_error(spec, gpu, nullptr, &measured).fraction, 0.05);
}

TEST(Analyse, RangesAreOrderedAndTheDominantAssumptionIsNamed) {
  const model::Catalog catalog = test_catalog();
  Scenario s = test_scenario();
  s.uncertainty.step_time_error_fraction = 0.3;
  s.uncertainty.price_error_fraction = 0.0;
  const PlanResult planned = plan(s, catalog);
  ASSERT_TRUE(planned.rows[0].feasible);
  AnalysisOptions options;
  options.max_rate = false;
  options.load_multipliers = {1.0, 2.0};
  const Analysis a = analyse(s, catalog, planned, options);
  ASSERT_EQ(a.uncertainty.size(), 1u);
  const UncertaintyRow& u = a.uncertainty[0];
  EXPECT_EQ(u.num_instances, planned.rows[0].num_instances);
  EXPECT_LE(u.num_instances_low, u.num_instances);
  ASSERT_TRUE(u.feasible_high);
  EXPECT_LE(u.num_instances, u.num_instances_high);
  EXPECT_LT(u.num_instances_low, u.num_instances_high) << "a 30% error should move the fleet";
  EXPECT_LE(u.usd_per_hour_low, u.usd_per_hour);
  EXPECT_LE(u.usd_per_hour, u.usd_per_hour_high);
  EXPECT_EQ(u.dominant_assumption, "step_time");
  EXPECT_THAT(u.text, HasSubstr(std::to_string(u.num_instances_low) + " to " +
                                std::to_string(u.num_instances_high) + " instances"));
  EXPECT_THAT(u.text, HasSubstr("(95%)"));
  EXPECT_THAT(a.recommendation, HasSubstr("one-gpu"));
  EXPECT_THAT(a.recommendation, HasSubstr("the dominant assumption is the step-time"));
  // The catalog has no CPU instance type: the recommendation says nothing about CPUs.
  EXPECT_THAT(a.recommendation, ::testing::Not(HasSubstr("CPU")));

  // A large price error and no step-time error: the price dominates.
  s.uncertainty.step_time_error_fraction = 0.0;
  s.uncertainty.price_error_fraction = 0.5;
  options.load_multipliers = {1.0};
  const Analysis b = analyse(s, catalog, planned, options);
  ASSERT_EQ(b.uncertainty.size(), 1u);
  EXPECT_EQ(b.uncertainty[0].dominant_assumption, "price");
  EXPECT_EQ(b.uncertainty[0].num_instances_low, b.uncertainty[0].num_instances_high);
  EXPECT_DOUBLE_EQ(b.uncertainty[0].usd_per_hour_low, 0.5 * planned.rows[0].usd_per_hour);
  EXPECT_DOUBLE_EQ(b.uncertainty[0].usd_per_hour_high, 1.5 * planned.rows[0].usd_per_hour);
}

TEST(Analyse, CostAgainstLoadCdfsAndSensitivity) {
  const model::Catalog catalog = test_catalog();
  const Scenario s = test_scenario();
  const PlanResult planned = plan(s, catalog);
  const PlanRow& row = planned.rows[0];
  ASSERT_TRUE(row.feasible);
  AnalysisOptions options;
  options.load_multipliers = {0.5, 1.0, 2.0};
  options.load_change = 0.2;
  options.num_cdf_points = 20;
  const Analysis a = analyse(s, catalog, planned, options);
  EXPECT_EQ(a.rows_analysed, std::vector<std::string>{"one-gpu"});
  EXPECT_GT(a.num_simulations, 0);

  ASSERT_EQ(a.cost_vs_load.size(), 1u);
  const std::vector<LoadPoint>& p = a.cost_vs_load[0].points;
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p[1].num_instances, row.num_instances);
  EXPECT_LE(p[0].num_instances, p[1].num_instances);
  EXPECT_LE(p[1].num_instances, p[2].num_instances);
  // Each replanned point is the smallest fleet at its load.
  const Scenario doubled = with_load_multiplier(s, 2.0);
  EXPECT_EQ(p[2].num_instances, plan(doubled, catalog).rows[0].num_instances);

  ASSERT_EQ(a.latency_cdf.size(), 2u);
  for (const LatencyCdf& c : a.latency_cdf) {
    SCOPED_TRACE(c.metric);
    ASSERT_EQ(c.points.size(), 22u);  // 20 + 0.995 and 0.999
    EXPECT_EQ(c.num_instances, row.num_instances);
    for (size_t k = 1; k < c.points.size(); ++k) {
      EXPECT_LE(c.points[k - 1].latency_s, c.points[k].latency_s);
      EXPECT_LT(c.points[k - 1].fraction, c.points[k].fraction);
    }
    EXPECT_EQ(c.points.back().fraction, 1.0);
  }
  // The CDF's 0.99 point is the plan's nearest-rank p99.
  constexpr double kSame = 1e-12;
  for (const CdfPoint& q : a.latency_cdf[0].points) {
    if (q.fraction == 0.99) {
      EXPECT_NEAR(q.latency_s, row.metrics.ttft.p99_s, kSame);
    }
  }

  int price_rows = 0;
  for (const SensitivityRow& r : a.sensitivity) {
    SCOPED_TRACE(r.parameter + " " + r.change);
    if (r.parameter == "price") {
      ++price_rows;
      EXPECT_EQ(r.num_instances, row.num_instances);
      EXPECT_DOUBLE_EQ(r.usd_per_hour, row.usd_per_hour * r.factor);
    }
    // Each replanned row is plan()'s answer for the changed scenario (monotonicity in load is
    // not asserted: on 400 requests a p99 is the 4th-worst request, and a faster arrival of
    // the same requests can land them better).
    if (r.parameter == "slo" && r.change == "-20%") {
      // The replanned fleet meets the tighter SLO and one instance fewer does not. (Not
      // necessarily plan()'s size: on 400 requests the verdict is not monotone in fleet size;
      // with tests/plan/data/lengths.csv 12 instances meet it, 13 miss, 14 meet, and searches
      // from different starts stop at 12 or 14.)
      Scenario tighter = s;
      tighter.slo.ttft_s *= 0.8;
      tighter.slo.tpot_s *= 0.8;
      ASSERT_TRUE(r.feasible);
      EXPECT_TRUE(meets_slo(
          evaluate_fleet(tighter, catalog, r.instance_type, r.num_instances).metrics, tighter.slo));
      if (r.num_instances > 1) {
        EXPECT_FALSE(meets_slo(
            evaluate_fleet(tighter, catalog, r.instance_type, r.num_instances - 1).metrics,
            tighter.slo));
      }
    }
    if (r.parameter == "load" && r.change == "+20%") {
      const PlanRow expected = plan(with_load_multiplier(s, 1.2), catalog).rows[0];
      ASSERT_TRUE(r.feasible);
      EXPECT_EQ(r.num_instances, expected.num_instances);
      EXPECT_NEAR(r.relative_change_usd_per_hour, expected.usd_per_hour / row.usd_per_hour - 1,
                  kSame);
    }
  }
  EXPECT_EQ(price_rows, 2);
  ASSERT_EQ(a.search.size(), 1u);
  EXPECT_GT(a.search[0].max_requests_per_s_per_instance, 0);
  EXPECT_FALSE(a.pareto.empty());
}

}  // namespace
}  // namespace llmcap::plan
