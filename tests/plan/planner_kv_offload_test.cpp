// "serving.kv_offload_bytes": a host tier behind each GPU replica's prefix cache, sized from
// the instance's host memory and priced over its GPUs' host links; a tier larger than the
// host's memory makes that type's row infeasible, and is refused before any simulation when
// no GPU candidate's host has that much (or a given fleet's type does not).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/input_error.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

using ::testing::HasSubstr;

constexpr int64_t kGiB = int64_t{1} << 30;

/// Multi-turn conversations of Llama 3.1 8B on one L4 (aws-g6.xlarge), 0.3 requests/s: about
/// 5 GB of KV for conversations whose next turn comes 120 s later on average, so the GPU
/// cache evicts turns that a later turn needs again (hit rate 0.39 without a tier, 0.73 with
/// 12 GiB of host memory: 404,096 tokens loaded in 1.66 s of PCIe time over the run).
Scenario conversations() {
  Scenario s;
  s.file = "offload-scenario.json";
  s.name = "offload";
  s.model_config = llmcap::testing::data_dir() / "models" / "llama-3.1-8b.json";
  s.workload.kind = WorkloadSpec::Kind::kPoisson;
  s.workload.path = std::filesystem::path(LLMCAP_TEST_DATA_DIR) / "lengths.csv";
  s.workload.rate_per_s = 0.3;
  s.workload.num_requests = 400;
  sim::SessionOptions sessions;
  sessions.mean_turns = 4;
  sessions.think_time_s = 120;
  s.workload.sessions = sessions;
  s.serving.prefix_caching = true;
  s.prefix_caching_set = true;
  s.slo.ttft_s = 60.0;
  s.slo.tpot_s = 1.0;
  s.seed = 5;
  s.max_instances = 4;
  s.candidates = {"aws-g6.xlarge"};
  return s;
}

TEST(PlanKvOffload, AHostTierLoadsEvictedTurnsBackOverPcie) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario s = conversations();
  const FleetEvaluation without = evaluate_fleet(s, catalog, "aws-g6.xlarge", 1);
  s.kv_offload_bytes = 12 * kGiB;  // of the instance's 16 GiB
  const FleetEvaluation with = evaluate_fleet(s, catalog, "aws-g6.xlarge", 1);
  EXPECT_GT(without.metrics.num_evicted_blocks, 0);
  EXPECT_EQ(without.metrics.num_kv_offload_loaded_tokens, 0);
  EXPECT_GT(with.metrics.num_kv_offload_loaded_tokens, 0);
  EXPECT_GT(with.metrics.kv_offload_load_s, 0);
  // Host hits count as cached prompt tokens: the tier can only add to them.
  EXPECT_GT(with.metrics.prefix_cache_hit_rate, without.metrics.prefix_cache_hit_rate);
}

TEST(PlanKvOffload, CpuInstancesHaveNoTier) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario s = conversations();
  s.candidates = {"aws-m7i.8xlarge"};
  s.kv_offload_bytes = 8 * kGiB;
  const FleetEvaluation e = evaluate_fleet(s, catalog, "aws-m7i.8xlarge", 1);
  EXPECT_EQ(e.metrics.num_kv_offload_loaded_tokens, 0);
  EXPECT_EQ(e.metrics.kv_offload_load_s, 0);
}

TEST(PlanKvOffload, ATierLargerThanTheHostMemoryIsRefusedNamingFieldValueAndLimit) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario s = conversations();
  s.kv_offload_bytes = 100'000'000'000;
  const std::string message = llmcap::testing::error_message<InputError>([&] { plan(s, catalog); });
  EXPECT_THAT(message,
              HasSubstr("offload-scenario.json: field \"serving.kv_offload_bytes\": 1e+11 bytes "
                        "(100 GB) are more than the host memory of instance \"aws-g6.xlarge\" "
                        "(17.18 GB, memory_bytes in "));
  EXPECT_THAT(message, HasSubstr("instances.json); expected at most that"));
  EXPECT_EQ(message.find('\n'), std::string::npos);  // one line
}

TEST(PlanKvOffload, ATypeWhoseHostIsTooSmallIsAnInfeasibleRowTheOthersArePlanned) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario s = conversations();
  s.candidates = {"aws-g6.xlarge", "aws-g6.2xlarge"};  // 16 and 32 GiB of host memory
  s.kv_offload_bytes = 24 * kGiB;
  const PlanResult result = plan(s, catalog);
  ASSERT_EQ(result.rows.size(), 2u);
  const PlanRow& small =
      result.rows[0].instance_type == "aws-g6.xlarge" ? result.rows[0] : result.rows[1];
  const PlanRow& large = &small == &result.rows[0] ? result.rows[1] : result.rows[0];
  EXPECT_FALSE(small.feasible);
  EXPECT_EQ(small.infeasible_reason,
            "its host memory (17.18 GB) is less than the KV offload tier "
            "(serving.kv_offload_bytes, 25.77 GB)");
  EXPECT_TRUE(large.feasible) << large.infeasible_reason;
  EXPECT_GT(large.metrics.num_kv_offload_loaded_tokens, 0);
}

TEST(PlanKvOffload, WithoutPrefixCachingTheTierIsIgnoredAndNoHostIsTooSmall) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario s = conversations();
  s.serving.prefix_caching = false;
  s.candidates = {"aws-g6.xlarge", "aws-g6.2xlarge"};
  s.kv_offload_bytes = 24 * kGiB;
  for (const PlanRow& row : plan(s, catalog).rows) {
    EXPECT_TRUE(row.feasible) << row.instance_type << ": " << row.infeasible_reason;
    EXPECT_EQ(row.metrics.num_kv_offload_loaded_tokens, 0);
  }
}

TEST(PlanKvOffload, WithoutPrefixCachingNoHostIsHeldToATierNoneWouldUse) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario s = conversations();
  s.serving.prefix_caching = false;
  s.kv_offload_bytes = 100'000'000'000;  // more than every candidate's host memory
  s.candidates = {"aws-g6.xlarge", "aws-g6.2xlarge"};
  for (const PlanRow& row : plan(s, catalog).rows) {
    EXPECT_TRUE(row.feasible) << row.instance_type << ": " << row.infeasible_reason;
  }
  // A given fleet's group likewise.
  FleetGroupSpec group;
  group.field = "fleet.groups[0]";
  group.instance = "aws-g6.xlarge";
  group.count = 1;
  group.serving = s.serving;
  s.fleet = FleetSpec{};
  s.fleet->groups = {group};
  s.candidates.clear();
  const PlanResult fleet = plan(s, catalog);
  ASSERT_EQ(fleet.rows.size(), 1u);
  EXPECT_EQ(fleet.rows[0].metrics.num_kv_offload_loaded_tokens, 0);
  // With prefix caching the same group is refused.
  s.fleet->groups[0].serving.prefix_caching = true;
  EXPECT_THAT(llmcap::testing::error_message<InputError>([&] { plan(s, catalog); }),
              HasSubstr("are more than the host memory of instance \"aws-g6.xlarge\""));
}

TEST(PlanKvOffload, ATierLargerThanEveryCandidatesHostIsRefusedNamingTheLargest) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario s = conversations();
  s.candidates = {"aws-g6.xlarge", "aws-g6.2xlarge"};
  s.kv_offload_bytes = 100'000'000'000;
  const std::string message = llmcap::testing::error_message<InputError>([&] { plan(s, catalog); });
  EXPECT_THAT(message, HasSubstr("offload-scenario.json: field \"serving.kv_offload_bytes\": "
                                 "1e+11 bytes (100 GB) are more than the host memory of every GPU "
                                 "candidate (the largest: instance \"aws-g6.2xlarge\" (34.36 "
                                 "GB, memory_bytes in "));
  EXPECT_THAT(message, HasSubstr("instances.json)); expected at most that"));
}

}  // namespace
}  // namespace llmcap::plan
