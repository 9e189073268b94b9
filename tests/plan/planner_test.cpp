#include "plan/planner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/input_error.h"
#include "synthetic_catalog.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing::synthetic_gpu;
using testing::synthetic_gpu_instance;

/// A GPU that fits Llama-3.1-8B, one that does not, and a small CPU slice.
model::Catalog test_catalog() {
  model::Catalog c;
  c.add_hardware(synthetic_gpu("big", int64_t{80} << 30, 2e12, 5e14));
  c.add_hardware(synthetic_gpu("small", int64_t{8} << 30, 2e12, 5e14));
  model::HardwareSpec cpu;
  cpu.id = "cpu";
  cpu.name = "Test CPU";
  cpu.kind = model::DeviceKind::kCpu;
  cpu.num_cores = 56;
  cpu.threads_per_core = 2;
  cpu.clock_hz = 2e9;
  cpu.memory_channels = 8;
  cpu.peak_memory_bandwidth_bytes_per_s = 3e11;
  cpu.peak_flops_per_s = {{"f32", 7e12}, {"bf16", 1e14}, {"int8", 2e14}};
  cpu.tdp_watts = 350;
  cpu.source = "synthetic";
  cpu.as_of = "2026-11-29";
  c.add_hardware(cpu);
  c.add_instance(synthetic_gpu_instance("gpu-big", "big", 1, 2.0));
  c.add_instance(synthetic_gpu_instance("gpu-small", "small", 1, 0.5));
  model::InstanceType slice;
  slice.id = "cpu-slice";
  slice.provider = "Test";
  slice.name = "cpu-slice";
  slice.region = "test-1";
  slice.kind = model::DeviceKind::kCpu;
  slice.cpu_id = "cpu";
  slice.vcpus = 16;
  slice.memory_bytes = int64_t{64} << 30;
  slice.usd_per_hour = 0.7;
  slice.source = "synthetic";
  slice.as_of = "2026-11-29";
  c.add_instance(slice);
  return c;
}

Scenario test_scenario() { return testing::poisson_llama_scenario(12.0, 600); }

const PlanRow& row_of(const PlanResult& r, const std::string& id) {
  for (const auto& row : r.rows) {
    if (row.instance_type == id) return row;
  }
  throw std::runtime_error("no row " + id);
}

TEST(Plan, FindsTheSmallestFleetThatMeetsTheSlo) {
  const model::Catalog catalog = test_catalog();
  Scenario s = test_scenario();
  s.candidates = {"gpu-big"};
  const PlanResult result = plan(s, catalog);
  ASSERT_EQ(result.rows.size(), 1u);
  const PlanRow& row = result.rows[0];
  ASSERT_TRUE(row.feasible) << row.infeasible_reason;
  EXPECT_GE(row.num_instances, 1);
  EXPECT_TRUE(meets_slo(evaluate_fleet(s, catalog, "gpu-big", row.num_instances).metrics, s.slo));
  if (row.num_instances > 1) {
    EXPECT_FALSE(
        meets_slo(evaluate_fleet(s, catalog, "gpu-big", row.num_instances - 1).metrics, s.slo));
  }
  EXPECT_LE(row.metrics.ttft.p99_s, s.slo.ttft_s);
  EXPECT_LE(row.metrics.tpot.p99_s, s.slo.tpot_s);
  EXPECT_DOUBLE_EQ(row.usd_per_hour, 2.0 * static_cast<double>(row.num_instances));
  EXPECT_DOUBLE_EQ(row.annual_usd, row.usd_per_hour * 8760.0);
  // Per million output tokens of the offered load (as the TCO counts them), not of the
  // simulated throughput, which the drain after the last arrival lowers.
  const WorkloadSummary& w = result.workload;
  const double offered_tokens_per_hour =
      static_cast<double>(w.num_requests) / w.span_s * w.mean_output_tokens * 3600.0;
  EXPECT_NEAR(row.usd_per_million_output_tokens, row.usd_per_hour / offered_tokens_per_hour * 1e6,
              1e-9 * row.usd_per_million_output_tokens);
}

TEST(Plan, CancelHookStopsPlanningWithCancelled) {
  const model::Catalog catalog = test_catalog();
  const Scenario s = test_scenario();
  PlanOptions options;
  options.num_threads = 1;
  options.cancel = [] { return true; };
  try {
    (void)plan(s, catalog, options);
    FAIL() << "expected Cancelled";
  } catch (const Cancelled& e) {
    EXPECT_THAT(e.what(), HasSubstr("planning cancelled"));
  }
  // Inside a simulation: the session's fleet-size search stops at the simulator's first poll.
  const PlanSession session(s, catalog, options);
  const PreparedType type =
      session.prepare(*catalog.find_instance("gpu-big"), session.default_choice("gpu-big"));
  ASSERT_TRUE(type.ready()) << type.row.infeasible_reason;
  try {
    (void)session.search_size(type, SizeSearch{});
    FAIL() << "expected Cancelled";
  } catch (const Cancelled& e) {
    EXPECT_THAT(e.what(), HasSubstr("cancelled at simulated time"));
  }
  // A hook that never says yes gives the plan without one.
  options.cancel = [] { return false; };
  const PlanResult with_hook = plan(s, catalog, options);
  const PlanResult without = plan(s, catalog);
  ASSERT_EQ(with_hook.rows.size(), without.rows.size());
  for (size_t i = 0; i < without.rows.size(); ++i) {
    EXPECT_EQ(with_hook.rows[i].num_instances, without.rows[i].num_instances);
    EXPECT_EQ(with_hook.rows[i].metrics.ttft.p99_s, without.rows[i].metrics.ttft.p99_s);
  }
}

TEST(Plan, WithoutClassesOneClassHoldsAllRequestsAndTheRowListsNone) {
  // A scenario without client classes is judged as before: its one class is every request,
  // with the same p99s as the fleet, so meets_class_slos agrees with meets_slo at every size.
  const model::Catalog catalog = test_catalog();
  Scenario s = test_scenario();
  s.workload.rate_per_s = 20.0;
  for (int64_t n : {1, 2, 4}) {
    SCOPED_TRACE("instances " + std::to_string(n));
    const FleetEvaluation e = evaluate_fleet(s, catalog, "gpu-big", n);
    ASSERT_EQ(e.classes.size(), 1u);
    EXPECT_EQ(e.classes[0].num_requests, e.metrics.num_requests);
    EXPECT_EQ(e.classes[0].ttft.p99_s, e.metrics.ttft.p99_s);
    EXPECT_EQ(e.classes[0].tpot.p99_s, e.metrics.tpot.p99_s);
    EXPECT_EQ(e.classes[0].slo_attainment, e.metrics.slo_attainment);
    EXPECT_EQ(meets_class_slos(e, s.class_slos()), meets_slo(e.metrics, s.slo));
  }
  s.candidates = {"gpu-big"};
  const PlanResult r = plan(s, catalog);
  EXPECT_TRUE(r.rows[0].classes.empty());
  EXPECT_TRUE(r.workload.classes.empty());
}

TEST(Plan, MoreInstancesAreNeverWorse) {
  // The planner's bisection assumes that meeting the SLO is monotone in the fleet size. Check it
  // on fleets of 1..8 under a load that overwhelms small fleets, and check that doubling a fleet
  // never raises p99 TTFT, nor p99 TPOT once the smaller fleet runs without preemptions (an
  // overloaded replica that preempts and recomputes can show a lower TPOT only because it
  // serves fewer sequences at once while the queue, and TTFT, explode).
  const model::Catalog catalog = test_catalog();
  Scenario s = test_scenario();
  s.workload.rate_per_s = 20.0;
  std::vector<sim::Metrics> by_size(9);
  bool met = false;
  for (int64_t n = 1; n <= 8; ++n) {
    SCOPED_TRACE("instances " + std::to_string(n));
    by_size[n] = evaluate_fleet(s, catalog, "gpu-big", n).metrics;
    const bool meets = meets_slo(by_size[n], s.slo);
    if (met) {
      EXPECT_TRUE(meets);
    }
    met = met || meets;
  }
  EXPECT_TRUE(met) << "8 instances should meet the SLO at 20 req/s";
  EXPECT_FALSE(meets_slo(by_size[1], s.slo))
      << "the load should overwhelm one instance, or this test checks nothing";
  for (int64_t n = 1; n <= 4; ++n) {
    SCOPED_TRACE("instances " + std::to_string(n) + " vs " + std::to_string(2 * n));
    EXPECT_LE(by_size[2 * n].ttft.p99_s, by_size[n].ttft.p99_s);
    if (by_size[n].num_preemptions == 0) {
      EXPECT_LE(by_size[2 * n].tpot.p99_s, by_size[n].tpot.p99_s);
    }
  }
}

TEST(Plan, IsDeterministicAndIndependentOfThreadCount) {
  const model::Catalog catalog = test_catalog();
  const Scenario s = test_scenario();
  PlanOptions one;
  one.num_threads = 1;
  PlanOptions two;
  two.num_threads = 2;
  const PlanResult a = plan(s, catalog, one);
  const PlanResult b = plan(s, catalog, two);
  ASSERT_EQ(a.rows.size(), b.rows.size());
  for (size_t i = 0; i < a.rows.size(); ++i) {
    EXPECT_EQ(a.rows[i].instance_type, b.rows[i].instance_type);
    EXPECT_EQ(a.rows[i].feasible, b.rows[i].feasible);
    EXPECT_EQ(a.rows[i].num_instances, b.rows[i].num_instances);
    EXPECT_EQ(a.rows[i].metrics.ttft.p99_s, b.rows[i].metrics.ttft.p99_s);
    EXPECT_EQ(a.rows[i].metrics.tpot.p99_s, b.rows[i].metrics.tpot.p99_s);
    EXPECT_EQ(a.rows[i].infeasible_reason, b.rows[i].infeasible_reason);
  }
}

TEST(Plan, ModelThatDoesNotFitIsInfeasibleWithTheSizesInGb) {
  const PlanResult r = plan(test_scenario(), test_catalog());
  const PlanRow& row = row_of(r, "gpu-small");
  EXPECT_FALSE(row.feasible);
  // 16,060,522,496 bytes of bf16 weights; 0.9 x 8 GiB usable.
  EXPECT_THAT(row.infeasible_reason, HasSubstr("weights need 16.06 GB (bf16), instance has "
                                               "7.731 GB usable (0.9 x 8.59 GB)"));
  EXPECT_THAT(row.infeasible_reason, Not(HasSubstr("bytes")));
}

TEST(Plan, CpuSliceBelowTheTpotFloorIsInfeasibleWithTheNumbers) {
  const PlanResult r = plan(test_scenario(), test_catalog());
  const PlanRow& row = row_of(r, "cpu-slice");
  EXPECT_FALSE(row.feasible);
  // 16 of 112 threads of a 3e11 B/s socket cannot stream 16 GB of weights in 50 ms.
  EXPECT_THAT(row.infeasible_reason, StartsWith("TPOT floor at batch 1 is "));
  EXPECT_THAT(row.infeasible_reason, HasSubstr("> SLO 0.05 s"));
  EXPECT_GT(row.tpot_floor_s, 0.05);
  EXPECT_EQ(row.num_simulations, 0);
}

TEST(Plan, TtftFloorAboveTheSloIsInfeasible) {
  Scenario s = test_scenario();
  s.candidates = {"gpu-big"};
  s.slo.ttft_s = 1e-4;
  const PlanResult r = plan(s, test_catalog());
  EXPECT_FALSE(r.rows[0].feasible);
  EXPECT_THAT(r.rows[0].infeasible_reason, HasSubstr("TTFT floor for the p99 prompt"));
}

TEST(Plan, UnknownCandidateListsTheKnownOnes) {
  Scenario s = test_scenario();
  s.candidates = {"gpu-huge"};
  try {
    plan(s, test_catalog());
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("test-scenario.json: field \"candidates\": unknown instance "
                                    "type \"gpu-huge\"; known: gpu-big, gpu-small, cpu-slice"));
  }
}

TEST(Plan, FleetLimitMakesAnOverloadedTypeInfeasible) {
  Scenario s = test_scenario();
  s.candidates = {"gpu-big"};
  s.workload.rate_per_s = 200.0;
  s.max_instances = 2;
  const PlanResult r = plan(s, test_catalog());
  EXPECT_FALSE(r.rows[0].feasible);
  EXPECT_THAT(r.rows[0].infeasible_reason, HasSubstr("SLO not met with 2 instances"));
}

}  // namespace
}  // namespace llmcap::plan

namespace llmcap::plan {
namespace {

/// A profile of a 2-thread machine that streams bf16 weights at 20 GB/s (its measured read
/// bandwidth) and computes at 100 GFLOP/s, with no fixed overheads.
model::CalibrationProfile two_thread_profile() {
  model::CalibrationProfile p;
  p.machine.cpu_model = "test CPU";
  p.machine.isa = "avx2";
  p.machine.num_cores = 2;
  p.machine.read_bandwidth_bytes_per_s = {{2, 20e9}};
  p.fit.threads = 2;
  model::RateFit bf16;
  bf16.bytes_per_s = 20e9;
  bf16.flops_per_s = 100e9;
  bf16.num_samples = 6;
  p.fit.matmul["bf16"] = bf16;
  return p;
}

TEST(PlanWithProfile, CpuTypesUseTheTransferredRatesAndGpuTypesTheRoofline) {
  const model::Catalog catalog = test_catalog();
  const Scenario s = test_scenario();
  const model::CalibrationProfile profile = two_thread_profile();
  PlanOptions options;
  options.calibration = &profile;
  const PlanResult calibrated = plan(s, catalog, options);
  const PlanResult datasheet = plan(s, catalog);
  const PlanRow& cpu = row_of(calibrated, "cpu-slice");
  EXPECT_THAT(cpu.predictor, StartsWith("calibrated: measured on \"test CPU\""));
  EXPECT_THAT(cpu.predictor, HasSubstr("transferred to cpu"));
  EXPECT_NE(cpu.tpot_floor_s, row_of(datasheet, "cpu-slice").tpot_floor_s);
  // The slice gets 16/112 of 3e11 B/s; x 0.7 / 20e9 measured = bandwidth ratio 1.5, and
  // 56 x 16/112 = 8 cores / 2 threads = compute ratio 4. A decode step at batch 1 streams the
  // 15.0e9 bytes of layer matrices and LM head (all weights but the embedding table) and does
  // 2 FLOPs per weight of them: 15.0e9 / (20e9 x 1.5) + 15.0e9 / (100e9 x 4) = 0.500 + 0.0375
  // s, plus the engine's 1 ms step overhead and the small element-wise and attention traffic.
  constexpr double kStreamedBytes = 16'060'522'496.0 - 128256.0 * 4096 * 2;
  constexpr double kFlops = 2.0 * (32.0 * 218'103'808 + 128256.0 * 4096);
  const double expected = kStreamedBytes / (20e9 * 1.5) + kFlops / (100e9 * 4) + 1e-3;
  constexpr double kElementwiseShare = 0.005;  // norms, attention at context 1, embedding row
  EXPECT_NEAR(cpu.tpot_floor_s, expected, kElementwiseShare * expected);
  EXPECT_EQ(row_of(calibrated, "gpu-big").predictor, "roofline (datasheet defaults)");
  EXPECT_EQ(row_of(calibrated, "gpu-big").num_instances,
            row_of(datasheet, "gpu-big").num_instances);
}

}  // namespace
}  // namespace llmcap::plan
