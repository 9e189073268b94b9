// The simulations a planning context shares between instance types that deploy alike
// (plan/sim_cache.h): one run per key, the same rows as planning each type alone.
#include "plan/sim_cache.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "plan/analysis.h"
#include "plan/planner.h"
#include "plan/planner_detail.h"
#include "plan/search.h"
#include "synthetic_catalog.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

using detail::simulation_key;
using detail::SimulationCache;
using testing::synthetic_gpu;
using testing::synthetic_gpu_instance;

FleetEvaluation evaluation_with_requests(int64_t n) {
  FleetEvaluation e;
  e.metrics.num_requests = n;
  return e;
}

TEST(SimulationCache, RunsEachKeyOnceWhenThreadsAskAtOnce) {
  SimulationCache cache;
  std::atomic<int> runs{0};
  std::vector<int64_t> got(4);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      got[t] = cache
                   .get_or_run("same",
                               [&] {
                                 ++runs;
                                 std::this_thread::sleep_for(std::chrono::milliseconds(20));
                                 return evaluation_with_requests(7);
                               })
                   .metrics.num_requests;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(runs.load(), 1);
  EXPECT_THAT(got, ::testing::Each(7));
  EXPECT_EQ(cache.num_run(), 1);
  // Another key runs; an empty key is never shared.
  cache.get_or_run("other", [&] { return ++runs, evaluation_with_requests(8); });
  cache.get_or_run("", [&] { return ++runs, evaluation_with_requests(9); });
  cache.get_or_run("", [&] { return ++runs, evaluation_with_requests(9); });
  EXPECT_EQ(runs.load(), 4);
  EXPECT_EQ(cache.num_run(), 2);
}

TEST(SimulationCache, ForgetsARunThatThrewSoTheNextAskerRunsIt) {
  SimulationCache cache;
  EXPECT_THROW(
      cache.get_or_run("k", []() -> FleetEvaluation { throw Cancelled("planning cancelled"); }),
      Cancelled);
  EXPECT_EQ(cache.num_run(), 0);
  EXPECT_EQ(cache.get_or_run("k", [] { return evaluation_with_requests(3); }).metrics.num_requests,
            3);
}

/// One GPU type and its sizes of 1, 2 and 4 GPUs at the price of that many, and a GPU that
/// differs only in bandwidth.
model::Catalog family_catalog() {
  model::Catalog c;
  c.add_hardware(synthetic_gpu("g", int64_t{80} << 30, 2e12, 5e14));
  c.add_hardware(synthetic_gpu("g-fast", int64_t{80} << 30, 3e12, 5e14));
  c.add_instance(synthetic_gpu_instance("one", "g", 1, 1.0));
  c.add_instance(synthetic_gpu_instance("one-big-host", "g", 1, 1.5));
  c.add_instance(synthetic_gpu_instance("four", "g", 4, 4.0));
  c.add_instance(synthetic_gpu_instance("fast", "g-fast", 1, 1.2));
  return c;
}

Scenario family_scenario() { return testing::poisson_llama_scenario(30.0, 600); }

TEST(SimulationKey, ReplicasThatDeployAlikeShareAKeyAndAnyDifferenceSeparatesThem) {
  const model::Catalog catalog = family_catalog();
  const Scenario sc = family_scenario();
  const PlanSession session(sc, catalog, PlanOptions{});
  const auto prepared = [&](const std::string& id) {
    return session.prepare(catalog.instance(id, "test"), session.default_choice(id));
  };
  const PreparedType one = prepared("one");
  const PreparedType host = prepared("one-big-host");
  const PreparedType four = prepared("four");
  const PreparedType fast = prepared("fast");
  ASSERT_TRUE(one.ready() && host.ready() && four.ready() && fast.ready());
  ASSERT_EQ(four.deployment.num_replicas, 4);  // tp 1: a replica per GPU
  const auto key = [](const PreparedType& t, int64_t replicas, bool stop = false) {
    return simulation_key(t.deployment, t.efficiency, t.choice.weight_format, t.fleet, replicas,
                          stop);
  };
  // The same GPU on another host, and four single-GPU replicas of either type: one key.
  EXPECT_EQ(key(one, 4), key(host, 4));
  EXPECT_EQ(key(one, 4), key(four, 4));
  EXPECT_NE(key(one, 4), key(one, 3));
  EXPECT_NE(key(one, 4), key(one, 4, /*stop=*/true));
  EXPECT_NE(key(one, 4), key(fast, 4));  // another bandwidth
  // Each serving limit, the router and the weight format are part of the key.
  PreparedType t = one;
  t.fleet.serving.max_num_seqs += 1;
  EXPECT_NE(key(t, 4), key(one, 4));
  t = one;
  t.fleet.serving.num_kv_blocks -= 1;
  EXPECT_NE(key(t, 4), key(one, 4));
  t = one;
  t.fleet.router = sim::RouterKind::kRoundRobin;
  EXPECT_NE(key(t, 4), key(one, 4));
  t = one;
  t.choice.weight_format = model::WeightFormat::kInt8;
  EXPECT_NE(key(t, 4), key(one, 4));
  t = one;
  t.efficiency.step_overhead_s += 1e-6;
  EXPECT_NE(key(t, 4), key(one, 4));
  // Calibrated rates are not in the key: such a simulation is never shared.
  t = one;
  t.efficiency.calibrated = model::CalibratedEfficiency{};
  EXPECT_EQ(key(t, 4), "");
}

TEST(SimulationKey, APlanOfAlikeTypesGivesTheRowsOfPlanningEachAlone) {
  const model::Catalog catalog = family_catalog();
  Scenario together = family_scenario();
  together.candidates = {"one", "one-big-host", "four", "fast"};
  PlanOptions options;
  options.num_threads = 2;
  const PlanResult all = plan(together, catalog, options);
  ASSERT_EQ(all.rows.size(), 4u);
  for (const PlanRow& row : all.rows) {
    Scenario alone = family_scenario();
    alone.candidates = {row.instance_type};
    const PlanResult one = plan(alone, catalog, options);
    ASSERT_EQ(one.rows.size(), 1u);
    const PlanRow& expected = one.rows[0];
    ASSERT_TRUE(expected.feasible) << expected.infeasible_reason;
    EXPECT_EQ(row.num_instances, expected.num_instances) << row.instance_type;
    EXPECT_EQ(row.num_simulations, expected.num_simulations) << row.instance_type;
    EXPECT_EQ(row.metrics.ttft.p99_s, expected.metrics.ttft.p99_s) << row.instance_type;
    EXPECT_EQ(row.metrics.tpot.p99_s, expected.metrics.tpot.p99_s) << row.instance_type;
    EXPECT_EQ(row.metrics.itl.p99_s, expected.metrics.itl.p99_s) << row.instance_type;
    EXPECT_EQ(row.usd_per_hour, expected.usd_per_hour) << row.instance_type;
  }
  // The three types on GPU "g" need the same replicas: "four" needs a quarter of the instances
  // (rounded up) of "one".
  const auto size_of = [&](const std::string& id) {
    for (const PlanRow& r : all.rows) {
      if (r.instance_type == id) return r.num_instances;
    }
    return int64_t{-1};
  };
  EXPECT_EQ(size_of("one"), size_of("one-big-host"));
  EXPECT_EQ(size_of("four"), (size_of("one") + 3) / 4);
}

TEST(LongestFirst, LargestLowerBoundFleetsFirstAndAlikeTypesAfterEveryFirst) {
  const model::Catalog catalog = family_catalog();
  // A load that takes several replicas of "g" (the lower bound is the work over the horizon).
  const Scenario sc = testing::poisson_llama_scenario(400.0, 4000);
  const PlanSession session(sc, catalog, PlanOptions{});
  const std::vector<std::string> ids = {"one", "one-big-host", "four", "fast"};
  const auto prepare = [&](size_t i) {
    return session.prepare(catalog.instance(ids[i], "test"), session.default_choice(ids[i]));
  };
  const auto replicas = [&](size_t i) {
    const PreparedType t = prepare(i);
    return fleet_lower_bound(session, t).num_instances * t.deployment.num_replicas;
  };
  // "four" rounds the bound up to whole instances of 4 replicas; "fast" differs from "one" in
  // bandwidth only, which the bound (at the largest batches) does not see: equal, index order.
  ASSERT_EQ(replicas(0), 7);
  ASSERT_EQ(replicas(2), 8);
  ASSERT_EQ(replicas(3), 7);
  // "one-big-host" is "one" on a bigger host, the same simulations: after every first.
  EXPECT_EQ(detail::longest_first(ids.size(), 2, session.workload(), sc.class_slos(), prepare),
            (std::vector<size_t>{2, 0, 3, 1}));
  // One thread: index order, nothing prepared.
  EXPECT_EQ(detail::longest_first(ids.size(), 1, session.workload(), sc.class_slos(), {}),
            (std::vector<size_t>{0, 1, 2, 3}));
}

TEST(SharedSimulations, ContextsShareOnlyWhenWorkloadSlosAndOptionsAgree) {
  const model::Catalog catalog = family_catalog();
  const Scenario sc = family_scenario();
  const auto fingerprint = [&](const Scenario& s, double scale = 1.0, bool itl = true) {
    const PlanSession session(s, catalog, PlanOptions{});
    return detail::context_fingerprint(s, session.model(), session.workload(), s.class_slos(),
                                       scale, itl, nullptr);
  };
  const std::string base = fingerprint(sc);
  EXPECT_FALSE(base.empty());
  EXPECT_EQ(fingerprint(sc), base);
  EXPECT_NE(fingerprint(with_load_multiplier(sc, 1.5)), base);
  Scenario tighter = sc;
  tighter.slo.tpot_s = 0.04;
  EXPECT_NE(fingerprint(tighter), base);
  Scenario reseeded = sc;
  reseeded.seed = 4;
  EXPECT_NE(fingerprint(reseeded), base);
  EXPECT_NE(fingerprint(sc, 1.1), base);
  EXPECT_NE(fingerprint(sc, 1.0, false), base);
}

TEST(SharedSimulations, AModelFileRewrittenIsAnotherContext) {
  const model::Catalog catalog = family_catalog();
  llmcap::testing::TempDir dir;
  std::ifstream in(llmcap::testing::data_dir() / "models" / "llama-3.1-8b.json", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Scenario sc = family_scenario();
  sc.model_config = dir.write("model.json", text);
  const auto fingerprint = [&] {
    const PlanSession session(sc, catalog, PlanOptions{});
    return detail::context_fingerprint(sc, session.model(), session.workload(), sc.class_slos(),
                                       1.0, true, nullptr);
  };
  const std::string before = fingerprint();
  EXPECT_EQ(fingerprint(), before);
  // The same model, its file written again a second later (a user's edit while the GUI holds
  // its simulations): the id and size alone would not tell.
  dir.write("model.json", text + "\n");
  std::filesystem::last_write_time(
      sc.model_config, std::filesystem::last_write_time(sc.model_config) + std::chrono::seconds(1));
  EXPECT_NE(fingerprint(), before);
}

TEST(SharedSimulations, PlansSharingThemGiveTheRowsOfPlansThatDoNot) {
  const model::Catalog catalog = family_catalog();
  Scenario sc = family_scenario();
  sc.candidates = {"one", "four", "fast"};
  PlanOptions alone;
  alone.num_threads = 2;
  PlanOptions shared = alone;
  shared.shared_simulations = make_shared_simulations();
  const PlanResult expected = plan(sc, catalog, alone);
  const Scenario busier = with_load_multiplier(sc, 1.5);
  const PlanResult expected_busier = plan(busier, catalog, alone);
  // Twice through one shared object (the second run reuses every simulation), and another
  // load in between (its own fingerprint).
  for (const Scenario* s : std::vector<const Scenario*>{&sc, &busier, &sc}) {
    const PlanResult got = plan(*s, catalog, shared);
    const PlanResult& want = s == &sc ? expected : expected_busier;
    ASSERT_EQ(got.rows.size(), want.rows.size());
    for (size_t i = 0; i < got.rows.size(); ++i) {
      EXPECT_EQ(got.rows[i].num_instances, want.rows[i].num_instances);
      EXPECT_EQ(got.rows[i].metrics.ttft.p99_s, want.rows[i].metrics.ttft.p99_s);
      EXPECT_EQ(got.rows[i].metrics.tpot.p99_s, want.rows[i].metrics.tpot.p99_s);
    }
  }
  EXPECT_EQ(shared.shared_simulations->num_contexts(), 2u);  // sc and busier
}

}  // namespace
}  // namespace llmcap::plan
