#include "plan/what_if.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>

#include "plan/candidates.h"
#include "plan/sim_cache.h"
#include "synthetic_catalog.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

using testing::synthetic_gpu;
using testing::synthetic_gpu_instance;

/// Two GPU types that fit Llama-3.1-8B at different prices, and one that does not.
model::Catalog test_catalog() {
  model::Catalog c;
  c.add_hardware(synthetic_gpu("big", int64_t{80} << 30, 2e12, 5e14));
  c.add_hardware(synthetic_gpu("slow", int64_t{80} << 30, 1e12, 3e14));
  c.add_hardware(synthetic_gpu("small", int64_t{8} << 30, 2e12, 5e14));
  c.add_instance(synthetic_gpu_instance("gpu-big", "big", 1, 2.0));
  c.add_instance(synthetic_gpu_instance("gpu-slow", "slow", 1, 1.1));
  c.add_instance(synthetic_gpu_instance("gpu-small", "small", 1, 0.5));
  return c;
}

Scenario test_scenario(double load) { return testing::poisson_llama_scenario(12.0 * load, 600); }

/// The previous answer as a warm start computed at `load`.
WarmStart warm_start_of(const PlanResult& previous, double load) {
  WarmStart w;
  for (const PlanRow& r : previous.rows) {
    if (!r.feasible) continue;
    w.sizes[r.instance_type] = r.num_instances;
    w.usd_per_hour[r.instance_type] = r.usd_per_hour;
  }
  w.load_multiplier = load;
  return w;
}

void expect_same_sizes(const std::vector<PlanRow>& got, const PlanResult& cold) {
  ASSERT_EQ(got.size(), cold.rows.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(got[i].instance_type, cold.rows[i].instance_type);
    EXPECT_EQ(got[i].feasible, cold.rows[i].feasible) << got[i].instance_type;
    EXPECT_EQ(got[i].num_instances, cold.rows[i].num_instances) << got[i].instance_type;
    EXPECT_EQ(got[i].infeasible_reason, cold.rows[i].infeasible_reason) << got[i].instance_type;
  }
}

TEST(WhatIf, WarmStartedAnswerEqualsTheColdPlan) {
  const model::Catalog catalog = test_catalog();
  const PlanResult before = plan(test_scenario(1.0), catalog);
  ASSERT_TRUE(before.rows[0].feasible) << before.rows[0].infeasible_reason;
  ASSERT_TRUE(before.rows[1].feasible) << before.rows[1].infeasible_reason;
  const Scenario after = test_scenario(1.5);
  const PlanResult cold = plan(after, catalog);

  WhatIfOptions options;
  options.plan.num_threads = 2;
  options.warm_start = warm_start_of(before, 1.0);
  options.load_multiplier = 1.5;
  size_t num_rows = 0;
  std::atomic<int> in_call{0};
  options.on_row = [&](const PlanRow& row, const TcoRow* tco, size_t num_done, size_t num_total) {
    EXPECT_EQ(in_call.fetch_add(1), 0) << "on_row calls overlap";
    EXPECT_EQ(num_total, 3u);
    EXPECT_EQ(num_done, ++num_rows);
    EXPECT_EQ(tco != nullptr, row.feasible) << row.instance_type;
    in_call.fetch_sub(1);
  };
  const WhatIfResult warm = plan_what_if(after, catalog, options);
  EXPECT_FALSE(warm.cancelled);
  EXPECT_EQ(num_rows, 3u);
  expect_same_sizes(warm.rows, cold);
  ASSERT_EQ(warm.tco.size(), warm.rows.size());
  for (size_t i = 0; i < warm.rows.size(); ++i) {
    EXPECT_EQ(warm.tco[i].has_value(), warm.rows[i].feasible);
  }

  // A cold what-if (no previous answer) gives the same sizes too.
  WhatIfOptions no_warm;
  no_warm.load_multiplier = 1.5;
  expect_same_sizes(plan_what_if(after, catalog, no_warm).rows, cold);
}

TEST(WhatIf, CarriedOverFailuresSkipSimulations) {
  // A small load change: each type's search starts at its previous size, which passes again;
  // without the carried failures the search then simulates the size below it.
  const model::Catalog catalog = test_catalog();
  const PlanResult before = plan(test_scenario(1.0), catalog);
  const Scenario after = test_scenario(1.05);
  const PlanResult cold = plan(after, catalog);

  WhatIfOptions options;
  options.plan.num_threads = 1;
  options.warm_start = warm_start_of(before, 1.0);
  options.load_multiplier = 1.05;
  options.basis = VerdictBasis{"{scenario}", nullptr, 1.05, 2.0, 0.05};
  const WhatIfResult unknown_basis = plan_what_if(after, catalog, options);

  options.warm_start.basis = VerdictBasis{"{scenario}", nullptr, 1.0, 2.0, 0.05};
  ASSERT_TRUE(failures_carry_over(*options.warm_start.basis, options.basis));
  const WhatIfResult carried = plan_what_if(after, catalog, options);

  expect_same_sizes(unknown_basis.rows, cold);
  expect_same_sizes(carried.rows, cold);
  EXPECT_LT(carried.num_simulations, unknown_basis.num_simulations);
}

TEST(WhatIf, GivenConfigurationsReplaceTheScenariosOwnPerType) {
  const model::Catalog catalog = test_catalog();
  const Scenario sc = test_scenario(1.0);
  const PlanSession session(sc, catalog, PlanOptions{});
  ServingChoice int8 = session.default_choice("gpu-big");
  int8.weight_format = model::WeightFormat::kInt8;
  WhatIfOptions options;
  options.choices["gpu-big"] = int8;
  const WhatIfResult got = plan_what_if(sc, catalog, options);
  ASSERT_EQ(got.rows.size(), 3u);
  for (const PlanRow& row : got.rows) {
    // The listed type at its given configuration; the others at the scenario's (bf16).
    const bool listed = row.instance_type == "gpu-big";
    EXPECT_EQ(row.configuration.find(listed ? " int8 " : " bf16 ") != std::string::npos, true)
        << row.instance_type << ": " << row.configuration;
  }
  // The listed type's row is what planning it at that configuration gives.
  const PlanRow expected =
      session.search_size(session.prepare(catalog.instance("gpu-big", "test"), int8), {});
  for (const PlanRow& row : got.rows) {
    if (row.instance_type != "gpu-big") continue;
    EXPECT_EQ(row.num_instances, expected.num_instances);
    EXPECT_EQ(row.metrics.tpot.p99_s, expected.metrics.tpot.p99_s);
  }
}

TEST(WhatIf, ARevisitedLoadReusesTheSimulationsItSharesAndGivesTheSameRows) {
  // The GUI holds one SharedSimulations per window: a slider moved back to a load it visited
  // before answers from the simulations of that visit.
  const model::Catalog catalog = test_catalog();
  WhatIfOptions options;
  options.plan.num_threads = 2;
  options.plan.shared_simulations = make_shared_simulations();
  options.load_multiplier = 1.5;
  const Scenario busier = test_scenario(1.5);
  const WhatIfResult first = plan_what_if(busier, catalog, options);
  const int64_t run_once = options.plan.shared_simulations->num_run();
  ASSERT_GT(run_once, 0);
  options.load_multiplier = 1.2;
  (void)plan_what_if(test_scenario(1.2), catalog, options);  // another load in between
  const int64_t run_twice = options.plan.shared_simulations->num_run();
  EXPECT_GT(run_twice, run_once);
  options.load_multiplier = 1.5;
  const WhatIfResult again = plan_what_if(busier, catalog, options);
  EXPECT_EQ(options.plan.shared_simulations->num_run(), run_twice);  // no new simulation
  ASSERT_EQ(again.rows.size(), first.rows.size());
  for (size_t i = 0; i < again.rows.size(); ++i) {
    EXPECT_EQ(again.rows[i].num_instances, first.rows[i].num_instances);
    EXPECT_EQ(again.rows[i].metrics.ttft.p99_s, first.rows[i].metrics.ttft.p99_s);
    EXPECT_EQ(again.rows[i].metrics.tpot.p99_s, first.rows[i].metrics.tpot.p99_s);
  }
}

TEST(WhatIf, CancelledRunReportsCancelled) {
  const model::Catalog catalog = test_catalog();
  const Scenario s = test_scenario(1.0);
  WhatIfOptions options;
  options.plan.cancel = [] { return true; };
  bool called = false;
  options.on_row = [&](const PlanRow&, const TcoRow*, size_t, size_t) { called = true; };
  const WhatIfResult r = plan_what_if(s, catalog, options);
  EXPECT_TRUE(r.cancelled);
  EXPECT_TRUE(r.rows.empty());
  EXPECT_FALSE(called);

  // Cancelled inside the searches (after the floors): still reported, not thrown.
  std::atomic<int> polls{0};
  options.plan.cancel = [&] { return polls.fetch_add(1) > 8; };
  EXPECT_TRUE(plan_what_if(s, catalog, options).cancelled);
}

TEST(WhatIf, AppliesToCandidateSearchesWithoutTensorParallelSearch) {
  Scenario s = test_scenario(1.0);
  EXPECT_TRUE(what_if_applies(s));
  s.tensor_parallel.mode = TensorParallelSpec::Mode::kSearch;
  EXPECT_FALSE(what_if_applies(s));
}

TEST(PlanWarmStart, SameAnswerAsColdWithFewerSimulations) {
  const model::Catalog catalog = test_catalog();
  const Scenario s = test_scenario(1.0);
  const PlanResult cold = plan(s, catalog);
  PlanOptions options;
  options.warm_start_sizes = warm_start_of(cold, 1.0).sizes;
  const PlanResult warm = plan(s, catalog, options);
  expect_same_sizes(warm.rows, cold);
  int64_t cold_sims = 0;
  int64_t warm_sims = 0;
  for (size_t i = 0; i < cold.rows.size(); ++i) {
    cold_sims += cold.rows[i].num_simulations;
    warm_sims += warm.rows[i].num_simulations;
    EXPECT_EQ(warm.rows[i].usd_per_hour, cold.rows[i].usd_per_hour);
    EXPECT_EQ(warm.rows[i].metrics.ttft.p99_s, cold.rows[i].metrics.ttft.p99_s);
  }
  EXPECT_LT(warm_sims, cold_sims);
}

TEST(Candidates, UnknownIdNamesTheFieldPath) {
  const model::Catalog catalog = test_catalog();
  Scenario s = test_scenario(1.0);
  s.candidates = {"gpu-big", "nope"};
  try {
    (void)resolve_candidates(s, catalog);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(),
                 "test-scenario.json: field \"candidates\": unknown instance type \"nope\"; "
                 "known: gpu-big, gpu-slow, gpu-small");
    EXPECT_EQ(e.field_path(), "candidates");
  }
  s.candidates.clear();
  EXPECT_EQ(resolve_candidates(s, catalog).size(), 3u);
}

}  // namespace
}  // namespace llmcap::plan
