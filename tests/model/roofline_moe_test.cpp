// The roofline predictor on described models (model/model_description.h): mixture-of-experts
// layers read the distinct experts a step's tokens reach, MLA reads its latent cache, and
// sliding-window layers read at most their window. Figures worked by hand in each test.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "model/op_graph.h"
#include "model/roofline.h"
#include "predictor_fixtures.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using llmcap::testing::data_dir;

constexpr double kRelTol = 1e-9;

ModelSpec family(const std::string& name) {
  return load_model_spec(data_dir() / "models" / "families" / (name + ".json"));
}

Deployment device() {
  Deployment d;
  d.kind = DeviceKind::kGpu;
  d.memory_bandwidth_bytes_per_s = 4.8e12;
  d.peak_flops_per_s = {{"bf16", 989e12}};
  return d;
}

RooflinePredictor bf16_predictor(const ModelSpec& m) {
  return RooflinePredictor(m, WeightFormat::kBf16, KvFormat::kBf16, device(),
                           default_efficiency(DeviceKind::kGpu));
}

BatchShape decode(int64_t num_seqs, int64_t context_per_seq) {
  BatchShape b;
  b.num_decode_seqs = num_seqs;
  b.num_decode_context_tokens = num_seqs * context_per_seq;
  return b;
}

/// Sum over the breakdown's operators named `op` of bytes x their layers.
double step_bytes_of(const std::vector<OpTime>& ops, const std::string& op) {
  double sum = 0;
  for (const OpTime& t : ops) {
    if (t.op == op) sum += t.bytes * t.num_layers;
  }
  return sum;
}

void expect_rel_near(double actual, double expected) {
  EXPECT_NEAR(actual, expected, kRelTol * std::abs(expected));
}

TEST(LoadModelSpec, EveryFamilyLoadsWithItsDescriptionsCounts) {
  int files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(data_dir() / "models" / "families")) {
    const ModelSpec m = load_model_spec(entry.path());
    const ModelDescription d = load_model_description(entry.path());
    SCOPED_TRACE(entry.path().string());
    EXPECT_EQ(m.num_params(), d.num_params());
    EXPECT_EQ(m.weight_bytes(WeightFormat::kInt4), d.weight_bytes(WeightFormat::kInt4));
    EXPECT_EQ(m.kv_cache_bytes_per_token(KvFormat::kBf16),
              d.kv_cache_bytes_per_token(KvFormat::kBf16));
    EXPECT_EQ(m.num_layers, static_cast<int64_t>(d.layers.size()));
    ++files;
  }
  EXPECT_GE(files, 18);
}

TEST(LoadModelSpec, DenseFamiliesKeepTheirDenseFieldsAndNoDescription) {
  const ModelSpec m = load_model_spec(data_dir() / "models" / "llama-3.1-8b.json");
  EXPECT_EQ(m.description, nullptr);
  EXPECT_EQ(m.num_params(), 8'030'261'248);
}

TEST(LayerKinds, GroupsIdenticalLayersWithTheirCounts) {
  const ModelSpec v3 = family("deepseek-v3");
  const auto kinds = layer_kinds(*v3.description);
  ASSERT_EQ(kinds.size(), 2u);  // first_k_dense_replace 3: 3 dense, 58 MoE
  EXPECT_EQ(kinds[0].num_layers, 3);
  EXPECT_EQ(kinds[0].layer.mlp.kind, MlpKind::kDense);
  EXPECT_EQ(kinds[1].num_layers, 58);
  const ModelSpec gemma = family("gemma-2-9b");
  const auto g = layer_kinds(*gemma.description);
  ASSERT_EQ(g.size(), 2u);
  EXPECT_EQ(g[0].num_layers, 21);
  EXPECT_EQ(g[1].num_layers, 21);
}

TEST(RooflinePredictor, PricesADescribedModelsDecodeRunExactlyAsEachStepAlone) {
  // MoE with MLA (DeepSeek-V3), sliding-window layers crossing their window during the run
  // (Gemma 2: 4,096 tokens), expert parallelism.
  for (const char* name : {"deepseek-v3", "gemma-2-9b", "gpt-oss-20b"}) {
    const RooflinePredictor p = bf16_predictor(family(name));
    for (const int64_t seqs : {1, 24}) {
      EXPECT_TRUE(testing::prices_each_step_alike(p, testing::decode_run(seqs, 4080, 40))) << name;
    }
  }
  Deployment ep = device();
  ep.tp_degree = 8;
  ep.link_bandwidth_bytes_per_s = 4.5e11;
  ep.expert_parallel = true;
  const RooflinePredictor p(family("deepseek-v3"), WeightFormat::kBf16, KvFormat::kBf16, ep,
                            default_efficiency(DeviceKind::kGpu));
  EXPECT_TRUE(testing::prices_each_step_alike(p, testing::decode_run(32, 900, 40)));
}

TEST(LayerOpGraphMoe, MoeLayerHasRouterExpertsAndSharedExperts) {
  const ModelSpec v3 = family("deepseek-v3");
  const LayerOpGraph g(*v3.description, v3.description->layers.back(), 8);
  const OpNode& experts = g.op(g.find("experts"));
  EXPECT_EQ(experts.num_experts, 256);
  EXPECT_EQ(experts.num_experts_per_token, 8);
  ASSERT_EQ(experts.matrices.size(), 3u);
  EXPECT_EQ(experts.matrices[0].out_features, 2048);
  EXPECT_TRUE(g.op(g.find("router")).matrices[0].replicated);
  EXPECT_EQ(g.op(g.find("shared_experts")).matrices[0].out_features, 2048);
  EXPECT_EQ(g.op(g.find("qkv_proj")).matrices[1].name, "kv_a_proj_with_mqa");
  EXPECT_EQ(g.op(g.find("qkv_proj")).matrices[1].out_features, 512 + 64);
}

// Mixtral-8x7B: one expert is gate, up and down of 14,336 x 4,096 in bf16 = 352,321,536
// bytes; its activations per token and expert are (4,096 + 3 x 14,336 + 4,096) x 2 = 102,400
// bytes. Top-2 of 8: batch 1 reads 8 x (1 - 6/8) = 2 experts; batch 64 reads
// 8 x (1 - 0.75^64) = 7.99999992 experts, all but 1e-8 of the 8.
TEST(RooflineMoe, DecodeReadsTheDistinctExpertsItsTokensReach) {
  const RooflinePredictor p = bf16_predictor(family("mixtral-8x7b"));
  constexpr double kExpertBytes = 3.0 * 14336 * 4096 * 2;
  constexpr double kActPerTokenPerExpert = (4096.0 + 3 * 14336 + 4096) * 2;
  expect_rel_near(step_bytes_of(p.breakdown(decode(1, 100)), "experts") / 32,
                  2 * kExpertBytes + 2 * kActPerTokenPerExpert);
  const double distinct_64 = 8 * (1 - std::pow(0.75, 64));
  EXPECT_NEAR(distinct_64, 8.0, 1e-7);
  expect_rel_near(step_bytes_of(p.breakdown(decode(64, 100)), "experts") / 32,
                  distinct_64 * kExpertBytes + 64 * 2 * kActPerTokenPerExpert);
}

// FLOPs count only the k active experts per token: 2 x 2 x 3 x 14,336 x 4,096 per token.
TEST(RooflineMoe, FlopsCountOnlyTheActiveExperts) {
  const RooflinePredictor p = bf16_predictor(family("mixtral-8x7b"));
  double flops = 0;
  for (const OpTime& t : p.breakdown(decode(4, 100))) {
    if (t.op == "experts") flops += t.flops;
  }
  expect_rel_near(flops, 4 * 2.0 * 2 * 3 * 14336 * 4096 * kExpertLoadImbalance);
}

// A batch-1 decode of Mixtral reads its active weights (2 of 8 experts per layer, attention,
// routers and the LM head; one row of the embedding): on a device at its full bandwidth and no
// overheads it takes (active params - vocab x hidden) x 2 bytes / bandwidth, attention over 100
// tokens and the activations adding less than kActiveReadRelTol. Reading every expert would
// take 3.6x as long.
TEST(RooflineMoe, BatchOneDecodeReadsTheActiveWeights) {
  constexpr double kActiveReadRelTol = 2e-3;
  const ModelSpec m = family("mixtral-8x7b");
  Efficiency e = default_efficiency(DeviceKind::kGpu);
  e.memory_bandwidth_fraction = 1.0;
  e.step_overhead_s = 0;
  e.kernel_overhead_s = 0;
  const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, device(), e);
  const double read_bytes =
      2.0 * static_cast<double>(m.description->num_active_params() - 32000 * 4096);
  const double expected_s = read_bytes / 4.8e12;
  EXPECT_NEAR(p.step_time_s(decode(1, 100)), expected_s, kActiveReadRelTol * expected_s);
  EXPECT_GT(static_cast<double>(m.weight_bytes(WeightFormat::kBf16)) / read_bytes, 3.5);
}

// DeepSeek-V3's MLA caches kv_lora_rank + qk_rope_head_dim = 576 elements per token and layer:
// 61 x 576 x 2 = 70,272 bytes in bf16. A decode at context 4,096 reads 70,272 x 4,096 bytes,
// plus per layer the absorbed query and output of 128 heads x (576 + 512) x 2 bytes.
TEST(RooflineMla, DecodeReadsTheLatentCache) {
  const RooflinePredictor p = bf16_predictor(family("deepseek-v3"));
  expect_rel_near(step_bytes_of(p.breakdown(decode(1, 4096)), "attention"),
                  70272.0 * 4096 + 61.0 * 128 * (576 + 512) * 2);
}

// Every device of a tensor-parallel replica keeps DeepSeek-V3's whole latent: at tp 8 a cached
// token takes 8 x 70,272 = 562,176 bytes of the replica's memory; a GQA model's KV heads split.
TEST(ModelSpecMla, TheLatentTakesMemoryOnEveryDeviceOfAReplica) {
  const ModelSpec v3 = family("deepseek-v3");
  EXPECT_EQ(v3.kv_cache_bytes_per_token_on_replica(KvFormat::kBf16, 1), 70'272);
  EXPECT_EQ(v3.kv_cache_bytes_per_token_on_replica(KvFormat::kBf16, 8), 562'176);
  const ModelSpec mixtral = family("mixtral-8x7b");
  EXPECT_EQ(mixtral.kv_cache_bytes_per_token_on_replica(KvFormat::kBf16, 8),
            mixtral.kv_cache_bytes_per_token(KvFormat::kBf16));
}

// Gemma-2-9B: 8 KV heads x 256 x 2 (K, V) x 2 bytes = 8,192 bytes per token and layer. At a
// context of 8,192 its 21 full layers read 8,192 tokens and its 21 sliding ones their window of
// 4,096; each layer also reads the query and writes the output, 2 x 16 x 256 x 2 bytes.
TEST(RooflineSlidingWindow, DecodeReadsAtMostTheWindow) {
  const RooflinePredictor p = bf16_predictor(family("gemma-2-9b"));
  constexpr double kPerLayerQuery = 2.0 * 16 * 256 * 2;
  expect_rel_near(step_bytes_of(p.breakdown(decode(1, 8192)), "attention"),
                  21 * (8192.0 * 8192 + kPerLayerQuery) + 21 * (4096.0 * 8192 + kPerLayerQuery));
  // Below the window every layer reads the whole context.
  expect_rel_near(step_bytes_of(p.breakdown(decode(1, 2048)), "attention"),
                  42 * (2048.0 * 8192 + kPerLayerQuery));
}

}  // namespace
}  // namespace llmcap::model
