#include "model/roofline.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "model/input_error.h"
#include "predictor_fixtures.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using ::testing::HasSubstr;

constexpr double kRelTol = 1e-9;
/// Decode of a real model vs. "streamed weights / bandwidth": activations, norms and one KV
/// entry per layer add < 0.02% to the 15 GB of weights.
constexpr double kDecodeRelTol = 1e-3;

ModelSpec load(const std::string& name) {
  return load_model_spec(llmcap::testing::test_data("models/" + name + ".json"));
}

Catalog fixture_catalog() { return Catalog::load(llmcap::testing::test_data("catalog")); }

/// A single device with the given bandwidth and bf16 peak, tp 1.
Deployment device(double bandwidth_bytes_per_s, double bf16_flops_per_s) {
  Deployment d;
  d.kind = DeviceKind::kGpu;
  d.memory_bandwidth_bytes_per_s = bandwidth_bytes_per_s;
  d.peak_flops_per_s = {{"bf16", bf16_flops_per_s}};
  return d;
}

Efficiency efficiency(double bw_fraction, double compute_fraction, double overhead_s) {
  Efficiency e = default_efficiency(DeviceKind::kGpu);
  e.memory_bandwidth_fraction = bw_fraction;
  e.compute_fraction = compute_fraction;
  e.step_overhead_s = overhead_s;
  return e;
}

BatchShape decode(int64_t num_seqs, int64_t context_per_seq) {
  BatchShape b;
  b.num_decode_seqs = num_seqs;
  b.num_decode_context_tokens = num_seqs * context_per_seq;
  return b;
}

/// One prompt of `tokens` tokens, prefilled in one chunk with nothing cached, completing.
BatchShape prefill(int64_t tokens) {
  BatchShape b;
  b.num_prefill_seqs = 1;
  b.num_prefill_tokens = tokens;
  b.num_prefill_attention_pairs = tokens * (tokens + 1) / 2;
  b.num_prefill_seqs_completing = 1;
  return b;
}

/// A small Llama-shaped model whose per-operator bytes are easy to write out.
ModelSpec toy_llama() {
  ModelSpec m;
  m.id = "toy";
  m.hidden_size = 1024;
  m.intermediate_size = 4096;
  m.num_layers = 2;
  m.num_attention_heads = 8;
  m.num_kv_heads = 2;
  m.head_dim = 128;
  m.vocab_size = 1000;
  m.max_position_embeddings = 4096;
  return m;
}

TEST(DefaultEfficiency, GpuAndCpuValues) {
  const Efficiency gpu = default_efficiency(DeviceKind::kGpu);
  EXPECT_EQ(gpu.memory_bandwidth_fraction, 0.80);
  EXPECT_EQ(gpu.compute_fraction, 0.60);
  EXPECT_EQ(gpu.link_bandwidth_fraction, 0.75);
  EXPECT_EQ(gpu.all_reduce_latency_s, 10e-6);
  EXPECT_EQ(gpu.step_overhead_s, 2e-3);
  EXPECT_EQ(gpu.usable_memory_fraction, 0.90);
  const Efficiency cpu = default_efficiency(DeviceKind::kCpu);
  EXPECT_EQ(cpu.memory_bandwidth_fraction, 0.70);
  EXPECT_EQ(cpu.compute_fraction, 0.40);
  EXPECT_EQ(cpu.step_overhead_s, 1e-3);
  EXPECT_EQ(cpu.usable_memory_fraction, 0.90);
}

TEST(RooflinePredictor, ToyDecodeStepByHand) {
  // Memory-bound everywhere: bf16 peak 1e20 FLOP/s. bandwidth 1e12 B/s x 0.8.
  const RooflinePredictor p(toy_llama(), WeightFormat::kBf16, KvFormat::kBf16, device(1e12, 1e20),
                            efficiency(0.8, 0.5, 2e-3));
  const BatchShape b = decode(1, 10);
  // Per layer, bytes (T = 1 token, bf16 activations):
  const double input_norm = 2 * 1 * 1024 * 2;                   // 4,096
  const double qkv = (1024 + 256 + 256) * 1024 * 2              // weights 3,145,728
                     + (1024 + 1024 + 256 + 256) * 2;           // read x once, write q,k,v
  const double attention = 10 * (2 * 2 * 128 * 2)               // 10 K/V entries of 1,024 B
                           + 2 * 1024 * 2;                      // read q, write o
  const double out_proj = 1024 * 1024 * 2 + (1024 + 1024) * 2;  // 2,101,248
  const double post_norm = 4096;
  const double mlp = 3 * 4096 * 1024 * 2                        // gate, up, down weights
                     + (1024 + 4096 + 4096 + 4096 + 1024) * 2;  // x, gate, up, h, out
  const double layer = input_norm + qkv + attention + out_proj + post_norm + mlp;
  EXPECT_EQ(layer, 30'469'120.0);
  // Embedding row 2,048 + final norm 4,096 + LM head 1000x1024x2 + (1024 + 1000) x 2.
  const double lm_head = 1024 * 2 + 2 * 1024 * 2 + 1000 * 1024 * 2 + (1024 + 1000) * 2;
  EXPECT_EQ(lm_head, 2'058'192.0);
  const double expected_s = (2 * layer + lm_head) / (0.8 * 1e12) + 2e-3;
  EXPECT_NEAR(p.step_time_s(b), expected_s, expected_s * kRelTol);

  const std::vector<OpTime> ops = p.breakdown(b);
  ASSERT_EQ(ops.size(), 7u);
  EXPECT_EQ(ops[1].op, "qkv_proj");
  EXPECT_EQ(ops[1].bytes, qkv);
  EXPECT_EQ(ops[1].flops, 2.0 * 1536 * 1024);   // 2 FLOPs per weight per token
  EXPECT_EQ(ops[2].flops, 4.0 * 10 * 8 * 128);  // 4 x context x heads x head_dim
  EXPECT_EQ(ops[2].bytes, attention);
  EXPECT_EQ(ops[5].bytes, mlp);
  EXPECT_TRUE(ops[5].memory_bound);
  EXPECT_NEAR(ops[5].time_s, mlp / 0.8e12, mlp / 0.8e12 * kRelTol);
  EXPECT_EQ(ops[6].op, "lm_head");
  EXPECT_EQ(ops[6].bytes, lm_head);
}

TEST(RooflinePredictor, Llama8bDecodeStreamsTheWeights) {
  const ModelSpec m = load("llama-3.1-8b");
  const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, device(1e12, 1e15),
                            efficiency(0.8, 0.6, 2e-3));
  // A decode step reads every weight once except the input embedding table, of which it reads
  // one row: 16,060,522,496 - 128256 x 4096 x 2 = 15,009,849,344 bytes.
  const double streamed = 16'060'522'496.0 - 128'256.0 * 4096 * 2;
  const double expected_s = streamed / 0.8e12 + 2e-3;  // 20.76 ms
  EXPECT_NEAR(p.step_time_s(decode(1, 1)), expected_s, expected_s * kDecodeRelTol);
  // qkv_proj of one token: 25,165,824 weights x 2 bytes + (4096 + 6144) x 2 activation bytes.
  const std::vector<OpTime> ops = p.breakdown(decode(1, 1));
  EXPECT_EQ(ops[1].bytes, 50'331'648.0 + 20'480.0);
  EXPECT_TRUE(ops[1].memory_bound);
}

TEST(RooflinePredictor, Llama8bPrefillIsComputeBound) {
  const ModelSpec m = load("llama-3.1-8b");
  // H100-like: 3.35e12 B/s x 0.8 = 2.68e12 B/s; 9.89e14 FLOP/s x 0.6 = 5.934e14 FLOP/s.
  const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, device(3.35e12, 9.89e14),
                            efficiency(0.8, 0.6, 2e-3));
  const double bw = 3.35e12 * 0.8;
  const double flops_per_s = 9.89e14 * 0.6;
  const BatchShape b = prefill(4096);  // 4096 x 4097 / 2 = 8,390,656 attention pairs
  // Per layer: two norms, memory-bound: 2 x 4096 x 4096 x 2 = 67,108,864 bytes each.
  const double norm_s = 67'108'864.0 / bw;
  // Compute-bound FLOPs: qkv 2 x 4096 x 25,165,824; attention 4 x 8,390,656 x 32 x 128;
  // out 2 x 4096 x 16,777,216; mlp 2 x 4096 x 176,160,768.
  const double qkv_flops = 206'158'430'208.0;
  const double attention_flops = 137'472'507'904.0;
  const double out_flops = 137'438'953'472.0;
  const double mlp_flops = 1'443'109'011'456.0;
  const double layer_s =
      2 * norm_s + (qkv_flops + attention_flops + out_flops + mlp_flops) / flops_per_s;
  // Per step, memory-bound: embedding rows 4096 x 4096 x 2 = 33,554,432, final norm 67,108,864,
  // LM head weights 1,050,673,152 and one row of logits (4096 + 128256) x 2 = 264,704.
  const double lm_head_s = (33'554'432.0 + 67'108'864.0 + 1'050'673'152.0 + 264'704.0) / bw;
  const double expected_s = 2e-3 + 32 * layer_s + lm_head_s;  // ~0.108 s
  EXPECT_NEAR(p.step_time_s(b), expected_s, expected_s * kRelTol);

  const std::vector<OpTime> ops = p.breakdown(b);
  EXPECT_EQ(ops[1].flops, qkv_flops);
  EXPECT_EQ(ops[2].flops, attention_flops);
  EXPECT_EQ(ops[5].flops, mlp_flops);
  for (const int v : {1, 2, 3, 5}) EXPECT_FALSE(ops[v].memory_bound) << ops[v].op;
  for (const int v : {0, 4, 6}) EXPECT_TRUE(ops[v].memory_bound) << ops[v].op;
  // Rule of thumb (Kaplan et al.): ~2 x params FLOPs per token -> within 12% here (attention
  // over 4096 tokens adds ~7%, norms and the LM head the rest).
  const double rule_of_thumb_s = 2.0 * 8.03e9 * 4096 / flops_per_s;
  EXPECT_NEAR(p.step_time_s(b), rule_of_thumb_s, 0.12 * rule_of_thumb_s);
}

TEST(RooflinePredictor, Tp2ShardsWeightsAndAddsAllReduces) {
  const ModelSpec m = load("llama-3.1-8b");
  Deployment d = device(3.35e12, 9.89e14);
  d.tp_degree = 2;
  d.link_bandwidth_bytes_per_s = 4.5e11;
  const Efficiency e = efficiency(0.8, 0.6, 2e-3);  // link 0.75, latency 10 us
  const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, d, e);
  const BatchShape b = decode(4, 100);
  const std::vector<OpTime> ops = p.breakdown(b);
  ASSERT_EQ(ops.size(), 9u);
  // qkv: half of 50,331,648 weight bytes + 4 tokens x (4096 in + 6144/2 out) x 2.
  EXPECT_EQ(ops[1].bytes, 25'165'824.0 + 4 * (4096 + 3072) * 2);
  // attention: 4 of 8 KV heads per device: 400 tokens x 2 x 4 x 128 x 2 + 4 x 2 x 2048 x 2.
  EXPECT_EQ(ops[2].bytes, 400.0 * 2048 + 4 * 2 * 2048 * 2);
  EXPECT_EQ(ops[4].op, "attn_all_reduce");
  // Ring all-reduce: 2 x (2-1)/2 x 4 tokens x 4096 x 2 bytes = 32,768 link bytes.
  EXPECT_EQ(ops[4].bytes, 32'768.0);
  const double ar_s = 10e-6 + 32'768.0 / (4.5e11 * 0.75);
  EXPECT_NEAR(ops[4].time_s, ar_s, ar_s * kRelTol);
  EXPECT_NEAR(ops[7].time_s, ar_s, ar_s * kRelTol);  // mlp_all_reduce
  // Step = overhead + 32 x (sum of the serialized layer ops) + lm_head.
  double layer_s = 0;
  for (int v = 0; v < 8; ++v) layer_s += ops[v].time_s;
  const double expected_s = 2e-3 + 32 * layer_s + ops[8].time_s;
  EXPECT_NEAR(p.step_time_s(b), expected_s, expected_s * kRelTol);
}

TEST(RooflinePredictor, MonotonicInBatchAndContext) {
  const ModelSpec m = load("llama-3.1-8b");
  const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, device(3.35e12, 9.89e14),
                            efficiency(0.8, 0.6, 2e-3));
  double previous = 0;
  for (const int64_t batch : {1, 2, 4, 8, 16, 32, 64, 128, 256, 512}) {
    const double t = p.step_time_s(decode(batch, 1000));
    EXPECT_GT(t, previous) << "batch " << batch;
    previous = t;
  }
  previous = 0;
  for (const int64_t context : {1, 100, 1000, 10000, 100000}) {
    const double t = p.step_time_s(decode(8, context));
    EXPECT_GT(t, previous) << "context " << context;
    previous = t;
  }
  previous = 0;
  for (const int64_t tokens : {16, 128, 512, 2048, 8192}) {
    const double t = p.step_time_s(prefill(tokens));
    EXPECT_GT(t, previous) << "prefill " << tokens;
    previous = t;
  }
}

TEST(RooflinePredictor, PricesARunOfDecodeStepsExactlyAsEachStepAlone) {
  const ModelSpec m = load("llama-3.1-8b");
  Deployment tp2 = device(3.35e12, 9.89e14);
  tp2.tp_degree = 2;
  tp2.link_bandwidth_bytes_per_s = 4.5e11;
  for (const Deployment& d : {device(3.35e12, 9.89e14), tp2}) {
    const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, d,
                              efficiency(0.8, 0.6, 2e-3));
    for (const int64_t seqs : {1, 7, 64}) {
      EXPECT_TRUE(testing::prices_each_step_alike(p, testing::decode_run(seqs, 300, 50)));
      EXPECT_TRUE(testing::prices_each_step_alike(p, testing::decode_run(seqs, 300, 20, 3)));
    }
    // Not a run (a prefill among them, or the batch size changing): each priced alone all
    // the same.
    std::vector<BatchShape> mixed = testing::decode_run(4, 100, 5);
    mixed.insert(mixed.begin() + 2, prefill(64));
    mixed.push_back(decode(9, 80));
    EXPECT_TRUE(testing::prices_each_step_alike(p, mixed));
    EXPECT_TRUE(testing::prices_each_step_alike(p, {}));
  }
}

TEST(RooflinePredictor, PrefillChunkAfterCachedTokensReadsTheCache) {
  const RooflinePredictor p(toy_llama(), WeightFormat::kBf16, KvFormat::kBf16, device(1e12, 1e20),
                            efficiency(0.8, 0.5, 0));
  // A chunk of 4 tokens after 6 cached ones: 4 x 6 + 4 x 5 / 2 = 34 pairs.
  BatchShape b;
  b.num_prefill_seqs = 1;
  b.num_prefill_tokens = 4;
  b.num_prefill_cached_tokens = 6;
  b.num_prefill_attention_pairs = 34;
  const std::vector<OpTime> ops = p.breakdown(b);
  EXPECT_EQ(ops[2].flops, 4.0 * 34 * 8 * 128);
  EXPECT_EQ(ops[2].bytes, (6 + 4) * 1024.0 + 4 * 2 * 1024 * 2);  // K/V of 10 tokens, q and o
  // No sequence completes: no logits, the LM head weights are not read.
  EXPECT_EQ(ops[6].bytes, 4 * 1024 * 2 + 2 * 4 * 1024 * 2);  // embedding + final norm only
}

TEST(RooflinePredictor, ComputeDtypeFallsBackToBf16ThenF32) {
  const ModelSpec m = toy_llama();
  const BatchShape b = prefill(4096);
  const Efficiency e = efficiency(0.8, 0.5, 0);
  Deployment d = device(1e15, 1e13);  // huge bandwidth: compute-bound
  d.peak_flops_per_s = {{"bf16", 1e13}, {"int8", 4e13}};
  // fp8 weights on a device without fp8: bf16 peak. qkv: 2 x 4096 x 1536 x 1024 FLOPs.
  const double qkv_flops = 2.0 * 4096 * 1536 * 1024;
  const auto fp8 = RooflinePredictor(m, WeightFormat::kFp8, KvFormat::kBf16, d, e).breakdown(b);
  EXPECT_NEAR(fp8[1].time_s, qkv_flops / (1e13 * 0.5), qkv_flops / 5e12 * kRelTol);
  // int8 weights use the int8 peak.
  const auto int8 = RooflinePredictor(m, WeightFormat::kInt8, KvFormat::kBf16, d, e).breakdown(b);
  EXPECT_NEAR(int8[1].time_s, qkv_flops / (4e13 * 0.5), qkv_flops / 2e13 * kRelTol);
  // Only f32: everything runs at the f32 peak.
  d.peak_flops_per_s = {{"f32", 2e12}};
  const auto f32 = RooflinePredictor(m, WeightFormat::kInt4, KvFormat::kBf16, d, e).breakdown(b);
  EXPECT_NEAR(f32[1].time_s, qkv_flops / (2e12 * 0.5), qkv_flops / 1e12 * kRelTol);
  // Nothing usable: an error naming the dtypes.
  d.peak_flops_per_s = {{"int8", 1e13}};
  try {
    RooflinePredictor(m, WeightFormat::kBf16, KvFormat::kBf16, d, e);
    FAIL() << "expected InputError";
  } catch (const InputError& err) {
    EXPECT_THAT(std::string(err.what()), HasSubstr("no peak_flops_per_s for \"bf16\""));
    EXPECT_THAT(std::string(err.what()), HasSubstr("(has: int8)"));
  }
}

TEST(RooflinePredictor, Int4ComputesAtTheInt8PeakOnACpuAndBf16OnAGpu) {
  const ModelSpec m = toy_llama();
  const BatchShape b = prefill(4096);
  const Efficiency e = efficiency(0.8, 0.5, 0);
  Deployment d = device(1e15, 1e13);  // huge bandwidth: compute-bound
  d.peak_flops_per_s = {{"bf16", 1e13}, {"int8", 4e13}};
  const double qkv_flops = 2.0 * 4096 * 1536 * 1024;
  d.kind = DeviceKind::kCpu;  // activations quantised to int8, integer dot products
  const auto cpu = RooflinePredictor(m, WeightFormat::kInt4, KvFormat::kBf16, d, e).breakdown(b);
  EXPECT_NEAR(cpu[1].time_s, qkv_flops / (4e13 * 0.5), qkv_flops / 2e13 * kRelTol);
  d.kind = DeviceKind::kGpu;  // weights dequantised to 16 bits for the tensor cores
  const auto gpu = RooflinePredictor(m, WeightFormat::kInt4, KvFormat::kBf16, d, e).breakdown(b);
  EXPECT_NEAR(gpu[1].time_s, qkv_flops / (1e13 * 0.5), qkv_flops / 5e12 * kRelTol);
}

TEST(RooflinePredictor, Int4WeightsStreamFewerBytes) {
  const ModelSpec m = load("llama-3.1-8b");
  const Deployment d = device(1e12, 1e15);
  const Efficiency e = efficiency(0.8, 0.6, 0);
  const auto bf16 = RooflinePredictor(m, WeightFormat::kBf16, KvFormat::kBf16, d, e);
  const auto int4 = RooflinePredictor(m, WeightFormat::kInt4, KvFormat::kBf16, d, e);
  // mlp weights: 3 x 14336 x 4096 = 176,160,768 weights at 2 vs 0.5625 bytes.
  const double act = (4096 + 14336 + 14336 + 14336 + 4096) * 2.0;
  EXPECT_EQ(bf16.breakdown(decode(1, 1))[5].bytes, 176'160'768.0 * 2 + act);
  EXPECT_EQ(int4.breakdown(decode(1, 1))[5].bytes, 176'160'768.0 * 0.5625 + act);
  EXPECT_LT(int4.step_time_s(decode(1, 1)), 0.3 * bf16.step_time_s(decode(1, 1)));
}

TEST(RooflinePredictor, EmptyBatchTakesNoTime) {
  const RooflinePredictor p(toy_llama(), WeightFormat::kBf16, KvFormat::kBf16, device(1e12, 1e15),
                            efficiency(0.8, 0.6, 2e-3));
  EXPECT_EQ(p.step_time_s(BatchShape{}), 0.0);
}

TEST(RooflinePredictor, RejectsMissingLinkForTp) {
  Deployment d = device(1e12, 1e15);
  d.tp_degree = 2;
  EXPECT_THROW(RooflinePredictor(toy_llama(), WeightFormat::kBf16, KvFormat::kBf16, d,
                                 efficiency(0.8, 0.6, 0)),
               InputError);
}

// ---- make_deployment ------------------------------------------------------------------------

TEST(MakeDeployment, PredictorOnADeployment) {
  // End to end: Llama-3.1-8B bf16 on one H100 (tp 1), a decode step of one token is
  // ~ 15,009,849,344 / (0.8 x 3.35e12) + 2 ms.
  const Catalog c = fixture_catalog();
  const ModelSpec m = load("llama-3.1-8b");
  const Efficiency e = default_efficiency(DeviceKind::kGpu);
  const Deployment d = make_deployment(c.instance("test-gpu-8xh100", "t"), c, m,
                                       WeightFormat::kBf16, KvFormat::kBf16, e);
  const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, d, e);
  const double expected_s = 15'009'849'344.0 / (0.8 * 3.35e12) + 2e-3;  // 7.60 ms
  EXPECT_NEAR(p.step_time_s(decode(1, 1)), expected_s, expected_s * kDecodeRelTol);
}

}  // namespace
}  // namespace llmcap::model
