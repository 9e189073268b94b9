// Window-aware KV capacity (sim::KvLayout, vLLM v1's hybrid KV-cache manager): a sliding-window
// layer keeps the blocks of its window only, so long sequences take fewer blocks than the
// every-layer-caches-every-token bound. Figures worked by hand in each test.
#include <gtest/gtest.h>

#include <vector>

#include "sim/fleet_config.h"
#include "sim_test_helpers.h"

namespace llmcap::sim {
namespace {

using testing::open_loop;
using testing::RecordingPredictor;
using testing::request;

// Gemma-2-9B's layout: 21 full and 21 window layers of equal KV bytes (one unit per block
// each), a 4,096-token window spanning at most ceil(4,095 / 16) + 1 = 257 blocks of 16 tokens.
KvLayout gemma2_layout() { return KvLayout{1, {{257, 1}}}; }

// 10,000 units hold b blocks while b + min(b, 257) <= 10,000: b = 9,743, 155,888 tokens; the
// full-context bound (2 units per block) holds 5,000 blocks, 80,000 tokens.
TEST(KvWindows, CapacityOfALongSequenceCountsTheWindowLayersUpToTheirWindow) {
  EXPECT_EQ(gemma2_layout().units_for_blocks(1000), 1000 + 257);
  EXPECT_EQ(gemma2_layout().units_for_blocks(100), 200);
  EXPECT_EQ(kv_capacity_tokens(gemma2_layout(), 10000, 16), 9743 * 16);
  EXPECT_EQ(kv_capacity_tokens(KvLayout{2, {}}, 10000, 16), 80000);
  EXPECT_EQ(kv_capacity_tokens(KvLayout{}, 10000, 16), 160000);  // the default: one per block
}

// Eight 16,000-token prompts (1,000 blocks; 100 output tokens) at once on a replica of 8,056
// units. Admission reserves a prompt's blocks: 2 x 1,000 units at the full-context bound, so 4
// fit; window-aware, 1,000 + 257 = 1,257 units, so 6 are admitted in the first step.
TEST(KvWindows, GemmaAtLongContextAdmitsMoreSequencesThanTheFullContextBound) {
  std::vector<RequestSpec> requests;
  for (int i = 0; i < 8; ++i) requests.push_back(request(0, 16000, 100));
  auto first_step_admissions = [&](const KvLayout& layout) {
    FleetConfig fleet = testing::one_replica(BatchingPolicy::kContinuous, 16, 8056);
    fleet.serving.max_num_batched_tokens = 200000;
    fleet.serving.kv_layout = layout;
    RecordingPredictor predictor(0.01, 1e-6);
    const SimResult r = simulate(open_loop(requests), fleet, predictor, 1);
    int admitted = 0;
    for (const RequestRecord& rec : r.requests) {
      EXPECT_FALSE(rec.rejected);
      admitted += rec.first_scheduled == SimTime() ? 1 : 0;
    }
    return admitted;
  };
  EXPECT_EQ(first_step_admissions(KvLayout{2, {}}), 4);
  EXPECT_EQ(first_step_admissions(gemma2_layout()), 6);
}

// Decoders grow their window layers only up to the window: 6 sequences whose prompts (4,000
// tokens, 250 blocks) are below the 257-block window decode 400 tokens, crossing it. Every unit
// comes back at the end (the simulator's conservation check) and none is preempted when the
// cache holds 6 x (275 + 257) = 3,192 units for their final 4,400 tokens, though the
// full-context bound would need 6 x 2 x 275 = 3,300.
TEST(KvWindows, DecodersStopGrowingTheirWindowLayersPastTheWindow) {
  std::vector<RequestSpec> requests;
  for (int i = 0; i < 6; ++i) requests.push_back(request(0, 4000, 400));
  FleetConfig fleet = testing::one_replica(BatchingPolicy::kContinuous, 16, 3192);
  fleet.serving.max_num_batched_tokens = 100000;
  fleet.serving.kv_layout = gemma2_layout();
  RecordingPredictor predictor(0.01, 1e-6);
  const SimResult r = simulate(open_loop(requests), fleet, predictor, 1);
  EXPECT_EQ(r.num_preemptions, 0);
  EXPECT_EQ(r.num_rejected, 0);
  fleet.serving.num_kv_blocks = 3191;  // one unit short: the last growth preempts
  EXPECT_GT(simulate(open_loop(requests), fleet, predictor, 1).num_preemptions, 0);
}

}  // namespace
}  // namespace llmcap::sim
