// Expert parallelism (model/expert_parallel.h, op_graph.h, roofline.h): how routed experts split
// over a replica's devices, the all-to-all dispatch and combine a step pays for it, and the
// refusals. Figures worked by hand in each test.
#include "model/expert_parallel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "model/input_error.h"
#include "model/op_graph.h"
#include "model/roofline.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using llmcap::testing::data_dir;
using ::testing::HasSubstr;

constexpr double kRelTol = 1e-9;

ModelSpec family(const std::string& name) {
  return load_model_spec(data_dir() / "models" / "families" / (name + ".json"));
}

/// A replica of `tp` H100-like GPUs linked at 450 GB/s per direction.
Deployment gpus(int tp, bool expert_parallel) {
  Deployment d;
  d.kind = DeviceKind::kGpu;
  d.tp_degree = tp;
  d.memory_bandwidth_bytes_per_s = 3.35e12;
  d.peak_flops_per_s = {{"bf16", 989e12}};
  d.link_bandwidth_bytes_per_s = 450e9;
  d.expert_parallel = expert_parallel;
  return d;
}

BatchShape decode(int64_t num_seqs, int64_t context_per_seq) {
  BatchShape b;
  b.num_decode_seqs = num_seqs;
  b.num_decode_context_tokens = num_seqs * context_per_seq;
  return b;
}

/// A copy: callers pass breakdown()'s temporary vector (a reference into it would dangle, as
/// AddressSanitizer found).
OpTime op_named(const std::vector<OpTime>& ops, const std::string& name) {
  for (const OpTime& op : ops) {
    if (op.op == name) return op;
  }
  throw std::out_of_range("no operator " + name);
}

bool has_op(const std::vector<OpTime>& ops, const std::string& name) {
  for (const OpTime& op : ops) {
    if (op.op == name) return true;
  }
  return false;
}

// DeepSeek-V3 in fp8 per tensor over 8 GPUs: 58 MoE layers x 256 experts x 3 matrices of
// 2,048 x 7,168 one-byte weights plus two f32 scales each = 653,909,127,168 bytes of routed
// experts, 32 whole experts per GPU per layer = 81,738,640,896 bytes; the rest (attention, 3
// dense layers, the shared experts, embeddings) whole on every GPU. In fp8-block (as DeepSeek
// ships it) each matrix has 16 x 56 f32 block scales instead.
TEST(ExpertParallel, DeepSeekV3Fp8OverEightGpusHoldsAnEighthOfTheExpertsWholePerGpu) {
  const ModelSpec m = family("deepseek-v3");
  const ExpertParallelShare s = expert_parallel_share(m, WeightFormat::kFp8, 8);
  EXPECT_EQ(routed_experts_per_layer(m), 256);
  EXPECT_EQ(s.experts_per_device, 32);
  EXPECT_EQ(s.routed_expert_bytes, int64_t{58} * 256 * 3 * (2048 * 7168 + 8));
  EXPECT_EQ(s.routed_expert_bytes, int64_t{653909127168});
  EXPECT_EQ(s.routed_bytes_per_device, int64_t{81738640896});
  EXPECT_EQ(s.other_bytes, m.weight_bytes(WeightFormat::kFp8) - s.routed_expert_bytes);
  const ExpertParallelShare block = expert_parallel_share(m, WeightFormat::kFp8Block, 8);
  EXPECT_EQ(block.routed_expert_bytes, int64_t{58} * 256 * 3 * (2048 * 7168 + 16 * 56 * 4));
  // The rest is replicated: every GPU holds it whole (data-parallel attention).
  EXPECT_EQ(s.other_bytes_per_device, s.other_bytes);
  EXPECT_EQ(s.weight_bytes_per_device(), s.routed_bytes_per_device + s.other_bytes);
  EXPECT_EQ(s.replica_weight_bytes(), s.routed_expert_bytes + 8 * s.other_bytes);
}

// gpt-oss-120b's experts carry biases: one expert in bf16 is 2 x [2,880 x 2,880] (gate, up) +
// [2,880 x 2,880] (down) weights plus 2 x 2,880 + 2,880 bf16 biases; 36 layers x 128 experts.
TEST(ExpertParallel, BiasedExpertsCountTheirBiasesInTheRoutedBytes) {
  const ModelSpec m = family("gpt-oss-120b");
  const ExpertParallelShare s = expert_parallel_share(m, WeightFormat::kBf16, 4);
  const int64_t one = 3 * int64_t{2880} * 2880 * 2 + (3 * 2880) * 2;
  EXPECT_EQ(s.routed_expert_bytes, int64_t{36} * 128 * one);
  EXPECT_EQ(s.experts_per_device, 32);
  EXPECT_EQ(s.routed_bytes_per_device, int64_t{36} * 32 * one);
}

// Qwen3-30B-A3B (hidden 2,048; 48 MoE layers of 128 experts of width 768, 8 per token, no
// shared expert) on 4 GPUs, a decode step of 64 sequences. With expert parallelism each device
// runs attention for its 16 sequences (no all-reduce), and each MoE layer sends each of them to
// the 3 x (1 - (3/4)^8) other devices its 8 experts live on and back: 16 x 2.69966 x 2,048 x 2
// link bytes each way, at the all-reduce latency + bytes / (450e9 x link fraction).
TEST(ExpertParallel, EachMoeLayerPaysAnAllToAllDispatchAndCombineForADevicesTokens) {
  const ModelSpec m = family("qwen3-30b-a3b");
  const Efficiency e = default_efficiency(DeviceKind::kGpu);
  const RooflinePredictor ep(m, WeightFormat::kBf16, KvFormat::kBf16, gpus(4, true), e);
  const BatchShape b = decode(64, 1000);
  const std::vector<OpTime> ops = ep.breakdown(b);
  const double link_s_per_byte = 1.0 / (450e9 * e.link_bandwidth_fraction);
  const double remote_devices = 3 * (1 - std::pow(0.75, 8));
  const double a2a_bytes = 16 * remote_devices * 2048 * 2;
  for (const char* name : {"moe_dispatch", "moe_combine"}) {
    SCOPED_TRACE(name);
    const OpTime op = op_named(ops, name);
    EXPECT_NEAR(op.bytes, a2a_bytes, kRelTol * a2a_bytes);
    EXPECT_NEAR(op.time_s, e.all_reduce_latency_s + a2a_bytes * link_s_per_byte, 1e-15);
    EXPECT_EQ(op.num_layers, 48);
  }
  EXPECT_FALSE(has_op(ops, "mlp_all_reduce"));
  EXPECT_FALSE(has_op(ops, "attn_all_reduce"));
  const RooflinePredictor tp(m, WeightFormat::kBf16, KvFormat::kBf16, gpus(4, false), e);
  EXPECT_TRUE(has_op(tp.breakdown(b), "mlp_all_reduce"));
}

// Data-parallel attention: a device of the expert-parallel replica runs the attention of its
// quarter of the sequences, as one GPU alone would for 16 sequences.
TEST(ExpertParallel, AttentionRunsDataParallelOnADevicesShareOfTheSequences) {
  const ModelSpec m = family("qwen3-30b-a3b");
  const Efficiency e = default_efficiency(DeviceKind::kGpu);
  const RooflinePredictor ep(m, WeightFormat::kBf16, KvFormat::kBf16, gpus(4, true), e);
  const RooflinePredictor one(m, WeightFormat::kBf16, KvFormat::kBf16, gpus(1, false), e);
  for (const char* name : {"attention", "qkv_proj", "out_proj", "router"}) {
    SCOPED_TRACE(name);
    const OpTime a = op_named(ep.breakdown(decode(64, 1000)), name);
    const OpTime b = op_named(one.breakdown(decode(16, 1000)), name);
    EXPECT_NEAR(a.bytes, b.bytes, kRelTol * b.bytes);
    EXPECT_NEAR(a.flops, b.flops, kRelTol * b.flops);
  }
}

// Each of 4 devices holds 32 whole experts and reads those the step's 64 tokens reach:
// 32 x (1 - (1 - 8/128)^64) distinct experts x one whole expert (3 x 768 x 2,048 x 2 bytes),
// the bytes tensor parallelism reads with 128 x one quarter-expert; the activations of the
// 64 x 8 / 4 token-expert rows it serves (input 2,048, gate/up outputs 2 x 768, down input
// 768 and output 2,048, 2 bytes each).
TEST(ExpertParallel, EachDeviceReadsTheDistinctExpertsOfItsShare) {
  const ModelSpec m = family("qwen3-30b-a3b");
  const Efficiency e = default_efficiency(DeviceKind::kGpu);
  const RooflinePredictor ep(m, WeightFormat::kBf16, KvFormat::kBf16, gpus(4, true), e);
  const RooflinePredictor tp(m, WeightFormat::kBf16, KvFormat::kBf16, gpus(4, false), e);
  const BatchShape b = decode(64, 1000);
  const double distinct_per_device = 32 * (1 - std::pow(1 - 8.0 / 128, 64));
  const double whole_expert = 3.0 * 768 * 2048 * 2;
  const double ep_rows = 64.0 * 8 / 4;
  const double ep_expected =
      distinct_per_device * whole_expert + ep_rows * (2048 + 2 * 768 + 768 + 2048) * 2;
  EXPECT_NEAR(op_named(ep.breakdown(b), "experts").bytes, ep_expected, kRelTol * ep_expected);
  const double tp_expected =
      distinct_per_device * whole_expert + 64.0 * 8 * (2048 + 2 * 768 / 4 + 768 / 4 + 2048) * 2;
  EXPECT_NEAR(op_named(tp.breakdown(b), "experts").bytes, tp_expected, kRelTol * tp_expected);
}

TEST(ExpertParallel, TheGraphOfAnExpertParallelMoeLayerDispatchesAndCombines) {
  const ModelSpec m = family("deepseek-v3");
  const LayerSpec& moe_layer = m.description->layers.back();
  ASSERT_EQ(moe_layer.mlp.kind, MlpKind::kMoe);
  const LayerOpGraph g(*m.description, moe_layer, 1, {.expert_parallel_degree = 8});
  const std::size_t dispatch = g.find("moe_dispatch");
  const std::size_t combine = g.find("moe_combine");
  EXPECT_EQ(g.op(dispatch).kind, OpKind::kAllToAll);
  EXPECT_TRUE(g.has_edge(g.find("router"), dispatch, EdgeKind::kData));
  EXPECT_TRUE(g.has_edge(dispatch, g.find("experts"), EdgeKind::kData));
  EXPECT_TRUE(g.has_edge(g.find("experts"), combine, EdgeKind::kData));
  EXPECT_THROW(g.find("mlp_all_reduce"), std::out_of_range);
  // 8 routed experts per token over 8 GPUs: 7 x (1 - (7/8)^8) = 4.59 other GPUs per token.
  EXPECT_DOUBLE_EQ(g.op(combine).link_hidden_per_token, 7 * (1 - std::pow(7.0 / 8, 8)));
  // Degree 1: no all-to-all.
  const LayerOpGraph one(*m.description, moe_layer, 1, {.expert_parallel_degree = 1});
  EXPECT_THROW(one.find("moe_dispatch"), std::out_of_range);
}

TEST(ExpertParallel, ADegreeThatDoesNotDivideTheExpertsIsRefusedWithTheNumbers) {
  const ModelSpec qwen15 = family("qwen1.5-moe-a2.7b");  // 60 routed experts
  EXPECT_EQ(expert_parallel_refusal(qwen15, 4), "");
  EXPECT_THAT(expert_parallel_refusal(qwen15, 8),
              HasSubstr("8 does not divide the 60 routed experts per layer of model"));
  Deployment d = gpus(8, false);
  EXPECT_THROW(make_expert_parallel(d, qwen15, WeightFormat::kBf16, KvFormat::kBf16),
               InfeasibleError);
  EXPECT_FALSE(d.expert_parallel);
  EXPECT_THROW(expert_parallel_share(qwen15, WeightFormat::kBf16, 8), InputError);
}

TEST(ExpertParallel, ADenseModelHasNoExpertsToSplit) {
  const ModelSpec dense = family("qwen3-8b");
  EXPECT_EQ(routed_experts_per_layer(dense), 0);
  EXPECT_THAT(expert_parallel_refusal(dense, 2), HasSubstr("has no routed experts"));
}

/// An 8 x H200 replica placed by the tensor-parallel rule: usable memory less reserves =
/// `room` bytes, of which the TP weights of `m` in `f` and the rest KV.
Deployment placed(const ModelSpec& m, WeightFormat f, int64_t room) {
  Deployment d = gpus(8, false);
  d.weight_bytes = m.weight_bytes(f);
  d.kv_cache_bytes = room - d.weight_bytes;
  d.rule = "8 of 8 GPUs per replica";
  return d;
}

// DeepSeek-V3 in fp8-block on 8 x 141 GB at 0.92 usable, 8 x 1 GiB reserves: the replica keeps
// the routed experts once and the rest (attention, dense layers, shared experts, embeddings)
// on every GPU; the KV cache gets what remains, and one cached token takes its 70,272-byte
// latent once (not on all 8 GPUs as under tensor parallelism).
TEST(ExpertParallel, MakeExpertParallelReplicatesTheRestAndGivesTheKvCacheWhatRemains) {
  const ModelSpec m = family("deepseek-v3");
  const int64_t room = std::llround(0.92 * 8 * 141e9) - 8 * (int64_t{1} << 30);
  Deployment d = placed(m, WeightFormat::kFp8Block, room);
  make_expert_parallel(d, m, WeightFormat::kFp8Block, KvFormat::kBf16);
  const ExpertParallelShare s = expert_parallel_share(m, WeightFormat::kFp8Block, 8);
  EXPECT_TRUE(d.expert_parallel);
  EXPECT_EQ(d.weight_bytes, s.routed_expert_bytes + 8 * s.other_bytes);
  EXPECT_EQ(d.kv_cache_bytes, room - d.weight_bytes);
  EXPECT_THAT(d.rule, HasSubstr("expert-parallel (ep=8, attention data-parallel): 32 of 256 "
                                "routed experts per MoE layer per device"));
}

TEST(ExpertParallel, ReplicatedWeightsThatLeaveNoKvRoomAreInfeasible) {
  const ModelSpec m = family("deepseek-v3");
  // Room for the tensor-parallel weights and 10 GB, less than the 7 replicas of the rest.
  const int64_t room = m.weight_bytes(WeightFormat::kFp8Block) + 10'000'000'000;
  Deployment d = placed(m, WeightFormat::kFp8Block, room);
  try {
    make_expert_parallel(d, m, WeightFormat::kFp8Block, KvFormat::kBf16);
    FAIL() << "expected InfeasibleError";
  } catch (const InfeasibleError& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("expert parallelism over 8 devices: 32 of 256 routed experts"));
    EXPECT_THAT(std::string(e.what()), HasSubstr("for KV cache, less than one 32768-token"));
  }
  EXPECT_FALSE(d.expert_parallel);
}

}  // namespace
}  // namespace llmcap::model
