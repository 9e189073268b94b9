// Each engine preset's scheduler (data/engines/*.json, applied by plan::serving_for) on one
// hand-worked case: a 10,000-token prompt A, a short prompt B arriving during A's first step,
// and later C, A's conversation continued (A's prompt and 100 more tokens). The presets differ
// in batching policy, token budget, block size and prefix caching, and so in their steps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/hardware.h"
#include "plan/scenario.h"
#include "sim/simulator.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

/// Every step lasts 1 ms; records the shapes in step order.
class RecordingPredictor final : public model::StepTimePredictor {
 public:
  double step_time_s(const model::BatchShape& b) const override {
    shapes.push_back(b);
    return 1e-3;
  }
  mutable std::vector<model::BatchShape> shapes;
};

/// One prefill chunk of `c` tokens after `p` prefilled (or cached) ones.
struct Chunk {
  int64_t tokens;
  int64_t after;
};

/// A step of prefill chunks, `completing` of which end their prefill.
model::BatchShape chunks(const std::vector<Chunk>& list, int64_t completing) {
  model::BatchShape s;
  for (const Chunk& c : list) {
    ++s.num_prefill_seqs;
    s.num_prefill_tokens += c.tokens;
    s.num_prefill_attention_pairs += c.tokens * c.after + c.tokens * (c.tokens + 1) / 2;
    s.num_prefill_cached_tokens += c.after;
  }
  s.num_prefill_seqs_completing = completing;
  return s;
}

model::BatchShape decode(int64_t seqs, int64_t context_tokens) {
  model::BatchShape s;
  s.num_decode_seqs = seqs;
  s.num_decode_context_tokens = context_tokens;
  return s;
}

void expect_steps(const std::vector<model::BatchShape>& got,
                  const std::vector<model::BatchShape>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    EXPECT_EQ(got[i].num_prefill_seqs, want[i].num_prefill_seqs);
    EXPECT_EQ(got[i].num_prefill_tokens, want[i].num_prefill_tokens);
    EXPECT_EQ(got[i].num_prefill_attention_pairs, want[i].num_prefill_attention_pairs);
    EXPECT_EQ(got[i].num_prefill_cached_tokens, want[i].num_prefill_cached_tokens);
    EXPECT_EQ(got[i].num_prefill_seqs_completing, want[i].num_prefill_seqs_completing);
    EXPECT_EQ(got[i].num_decode_seqs, want[i].num_decode_seqs);
    EXPECT_EQ(got[i].num_decode_context_tokens, want[i].num_decode_context_tokens);
  }
}

/// The case's steps under `engine` on `instance`: A (10,000 tokens, conversation 1) at 0, B
/// (100 tokens, conversation 2) at 0.5 ms, C (10,100 tokens, conversation 1) at 100 ms; two
/// output tokens each; conversations keyed in 16-token blocks.
std::vector<model::BatchShape> steps_of(const std::string& engine, const std::string& instance) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  const model::InstanceType& type = catalog.instance(instance, "test");
  Scenario s;
  (type.kind == model::DeviceKind::kGpu ? s.gpu_engine : s.cpu_engine) = engine;
  sim::FleetConfig fleet;
  fleet.num_replicas = 1;
  fleet.serving = serving_for(s, type, catalog);
  fleet.serving.num_kv_blocks = 1'000'000 / fleet.serving.block_size_tokens;
  const auto turn = [](double ms, int64_t prompt, uint64_t stream) {
    sim::RequestSpec r;
    r.arrival = sim::SimTime::MilliSeconds(ms);
    r.num_prompt_tokens = prompt;
    r.num_output_tokens = 2;
    r.prefix.block_tokens = 16;
    r.prefix.stream = stream;
    return r;
  };
  sim::Workload w;
  w.open_loop = {turn(0, 10'000, 1), turn(0.5, 100, 2), turn(100, 10'100, 1)};
  const RecordingPredictor predictor;
  sim::simulate(w, fleet, predictor, 1);
  return predictor.shapes;
}

TEST(EnginePresets, VllmChunksUnderItsBudgetDecodesFirstAndReusesTheSharedPrefix) {
  // Chunked prefill, 8,192 tokens per step: A's first 8,192, then its last 1,808 with B's 100;
  // one decode step ends both. C finds A's 625 blocks of 16 cached and computes 100 tokens.
  expect_steps(steps_of("vllm", "aws-p5.4xlarge"),
               {chunks({{8192, 0}}, 0), chunks({{1808, 8192}, {100, 0}}, 2),
                decode(2, 10'001 + 101), chunks({{100, 10'000}}, 1), decode(1, 10'101)});
}

TEST(EnginePresets, SglangPrefillsFirstAndKeepsItsRadixCache) {
  // Prefill first: A alone (over the budget, admitted alone), then B's prefill before any
  // decode; C reuses A's prompt (the cache unit is the conversation's 16-token key block).
  expect_steps(steps_of("sglang", "aws-p5.4xlarge"),
               {chunks({{10'000, 0}}, 1), chunks({{100, 0}}, 1), decode(2, 10'001 + 101),
                chunks({{100, 10'000}}, 1), decode(1, 10'101)});
}

TEST(EnginePresets, TensorRtLlmReusesWhole32TokenBlocksOnly) {
  // As vLLM's steps, but its 32-token blocks hold 312 whole blocks of A's 10,000 tokens:
  // C computes 10,100 - 9,984 = 116.
  expect_steps(steps_of("tensorrt-llm", "aws-p5.4xlarge"),
               {chunks({{8192, 0}}, 0), chunks({{1808, 8192}, {100, 0}}, 2),
                decode(2, 10'001 + 101), chunks({{116, 9'984}}, 1), decode(1, 10'101)});
}

TEST(EnginePresets, LlamaCppChunksBy2048AndCachesNothingAcrossRequests) {
  // 2,048 tokens per step: A takes four whole steps, then its last 1,808 with B's 100; C is
  // prefilled whole again (no cache shared between slots) in 2,048-token chunks.
  expect_steps(
      steps_of("llama.cpp", "aws-m7i.8xlarge"),
      {chunks({{2048, 0}}, 0), chunks({{2048, 2048}}, 0), chunks({{2048, 4096}}, 0),
       chunks({{2048, 6144}}, 0), chunks({{1808, 8192}, {100, 0}}, 2), decode(2, 10'001 + 101),
       chunks({{2048, 0}}, 0), chunks({{2048, 2048}}, 0), chunks({{2048, 4096}}, 0),
       chunks({{2048, 6144}}, 0), chunks({{1908, 8192}}, 1), decode(1, 10'101)});
}

}  // namespace
}  // namespace llmcap::plan
