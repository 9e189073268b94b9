#include "model/op_graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "test_util.h"

namespace llmcap::model {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kRelTol = 1e-12;

ModelSpec load(const std::string& name) {
  return load_model_spec(llmcap::testing::test_data("models/" + name + ".json"));
}

std::vector<std::string> names(const LayerOpGraph& g) {
  std::vector<std::string> out;
  for (std::size_t v = 0; v < g.num_ops(); ++v) out.push_back(g.op(v).name);
  return out;
}

/// Every edge goes forward in the cached topological order.
void expect_topological(const LayerOpGraph& g) {
  std::vector<std::size_t> position(g.num_ops());
  ASSERT_EQ(g.topological_order().size(), g.num_ops());
  for (std::size_t k = 0; k < g.num_ops(); ++k) position[g.topological_order()[k]] = k;
  for (auto [e, end] = boost::edges(g.graph()); e != end; ++e) {
    EXPECT_LT(position[boost::source(*e, g.graph())], position[boost::target(*e, g.graph())]);
  }
}

TEST(LayerOpGraph, LlamaTp1IsAChainOfSixOps) {
  const LayerOpGraph g(load("llama-3.1-8b"), 1);
  EXPECT_THAT(names(g), ElementsAre("input_norm", "qkv_proj", "attention", "out_proj",
                                    "post_attention_norm", "mlp"));
  EXPECT_EQ(g.num_edges(EdgeKind::kData), 5u);
  EXPECT_EQ(g.num_edges(EdgeKind::kStreamOrder), 0u);
  for (std::size_t v = 0; v + 1 < g.num_ops(); ++v) {
    EXPECT_TRUE(g.has_edge(v, v + 1, EdgeKind::kData)) << v;
  }
  expect_topological(g);
}

TEST(LayerOpGraph, LlamaTp2AddsTwoAllReduces) {
  const LayerOpGraph g(load("llama-3.1-8b"), 2);
  EXPECT_THAT(names(g),
              ElementsAre("input_norm", "qkv_proj", "attention", "out_proj", "attn_all_reduce",
                          "post_attention_norm", "mlp", "mlp_all_reduce"));
  EXPECT_EQ(g.op(g.find("attn_all_reduce")).kind, OpKind::kAllReduce);
  EXPECT_EQ(g.num_edges(EdgeKind::kData), 7u);
  EXPECT_EQ(g.tp_degree(), 2);
  expect_topological(g);
}

TEST(LayerOpGraph, LinearNodesCarryFullModelShapes) {
  const LayerOpGraph g(load("llama-3.1-8b"), 4);
  const OpNode& qkv = g.op(g.find("qkv_proj"));
  ASSERT_EQ(qkv.matrices.size(), 3u);
  EXPECT_EQ(qkv.matrices[0].out_features, 4096);  // q: 32 heads x 128
  EXPECT_EQ(qkv.matrices[1].out_features, 1024);  // k: 8 kv heads x 128
  EXPECT_EQ(qkv.matrices[2].in_features, 4096);
  EXPECT_FALSE(qkv.matrices[0].row_parallel);
  EXPECT_FALSE(qkv.matrices[0].shares_input_with_previous);
  EXPECT_TRUE(qkv.matrices[1].shares_input_with_previous);  // fused QKV reads x once
  const OpNode& mlp = g.op(g.find("mlp"));
  ASSERT_EQ(mlp.matrices.size(), 3u);  // gate, up, down
  EXPECT_EQ(mlp.matrices[2].name, "down_proj");
  EXPECT_EQ(mlp.matrices[2].in_features, 14336);
  EXPECT_TRUE(mlp.matrices[2].row_parallel);
  EXPECT_TRUE(mlp.matrices[1].shares_input_with_previous);  // up reads gate's input
  EXPECT_FALSE(mlp.matrices[2].shares_input_with_previous);
  EXPECT_TRUE(g.op(g.find("out_proj")).matrices[0].row_parallel);
}

TEST(LayerOpGraph, SplitGatedMlpSerializesGateAndUp) {
  const LayerOpGraph g(load("llama-3.1-8b"), 1, {.split_mlp = true});
  EXPECT_THAT(names(g), ElementsAre("input_norm", "qkv_proj", "attention", "out_proj",
                                    "post_attention_norm", "gate_proj", "up_proj", "down_proj"));
  const std::size_t gate = g.find("gate_proj");
  const std::size_t up = g.find("up_proj");
  const std::size_t down = g.find("down_proj");
  // gate and up both read the norm; down reads both; one device runs gate before up.
  EXPECT_TRUE(g.has_edge(g.find("post_attention_norm"), up, EdgeKind::kData));
  EXPECT_TRUE(g.has_edge(gate, down, EdgeKind::kData));
  EXPECT_TRUE(g.has_edge(gate, up, EdgeKind::kStreamOrder));
  EXPECT_EQ(g.num_edges(EdgeKind::kStreamOrder), 1u);
  // Weights 1..8: serialized, the critical path is the sum 36.
  const std::vector<double> w = {1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_NEAR(g.critical_path_s(w), 36.0, 36.0 * kRelTol);
  expect_topological(g);
}

TEST(LayerOpGraph, GptNeoxParallelResidualBranches) {
  const ModelSpec neox = load("gpt-neox-20b");
  const LayerOpGraph g1(neox, 1);
  EXPECT_THAT(names(g1), ElementsAre("input_norm", "qkv_proj", "attention", "out_proj",
                                     "post_attention_norm", "mlp"));
  // Data: the attention chain (3 edges) and post_attention_norm -> mlp; nothing joins the
  // branches within the layer at tp 1, so one stream-order edge out_proj -> post_attention_norm.
  EXPECT_EQ(g1.num_edges(EdgeKind::kData), 4u);
  EXPECT_EQ(g1.num_edges(EdgeKind::kStreamOrder), 1u);
  EXPECT_TRUE(
      g1.has_edge(g1.find("out_proj"), g1.find("post_attention_norm"), EdgeKind::kStreamOrder));
  EXPECT_FALSE(g1.has_edge(g1.find("out_proj"), g1.find("post_attention_norm"), EdgeKind::kData));
  // GELU MLP: up and down only.
  EXPECT_EQ(g1.op(g1.find("mlp")).matrices.size(), 2u);

  const LayerOpGraph g2(neox, 2);
  EXPECT_THAT(names(g2), ElementsAre("input_norm", "qkv_proj", "attention", "out_proj",
                                     "post_attention_norm", "mlp", "all_reduce"));
  const std::size_t ar = g2.find("all_reduce");
  EXPECT_TRUE(g2.has_edge(g2.find("out_proj"), ar, EdgeKind::kData));
  EXPECT_TRUE(g2.has_edge(g2.find("mlp"), ar, EdgeKind::kData));
  EXPECT_EQ(g2.num_edges(EdgeKind::kData), 6u);
  expect_topological(g2);
}

TEST(LayerOpGraph, GptNeoxBranchesSerializeOnOneDevice) {
  const ModelSpec neox = load("gpt-neox-20b");
  // input_norm 1, qkv 2, attention 3, out 4 | post_attention_norm 5, mlp 100.
  const std::vector<double> w = {1, 2, 3, 4, 5, 100};
  const LayerOpGraph serialized(neox, 1);
  EXPECT_NEAR(serialized.critical_path_s(w), 115.0, 115.0 * kRelTol);  // 1+2+3+4+5+100
  const LayerOpGraph overlapped(neox, 1, {.serialize_on_device = false});
  EXPECT_EQ(overlapped.num_edges(EdgeKind::kStreamOrder), 0u);
  EXPECT_NEAR(overlapped.critical_path_s(w), 105.0, 105.0 * kRelTol);  // max(10, 5+100)
  EXPECT_THAT(overlapped.critical_path(w), ElementsAre(4u, 5u));
  const std::vector<double> light_mlp = {1, 2, 3, 4, 5, 1};
  EXPECT_NEAR(overlapped.critical_path_s(light_mlp), 10.0, 10.0 * kRelTol);  // max(10, 6)
  EXPECT_THAT(overlapped.critical_path(light_mlp), ElementsAre(0u, 1u, 2u, 3u));

  // tp 2: the all-reduce (7) waits for both branches.
  const LayerOpGraph overlapped_tp2(neox, 2, {.serialize_on_device = false});
  const std::vector<double> w7 = {1, 2, 3, 4, 5, 100, 7};
  EXPECT_NEAR(overlapped_tp2.critical_path_s(w7), 112.0, 112.0 * kRelTol);  // 105 + 7
  const LayerOpGraph serialized_tp2(neox, 2);
  EXPECT_NEAR(serialized_tp2.critical_path_s(w7), 122.0, 122.0 * kRelTol);  // sum
}

TEST(LayerOpGraph, GptNeoxSequentialResidualIsAChain) {
  ModelSpec neox = load("gpt-neox-20b");
  neox.parallel_residual = false;
  const LayerOpGraph g(neox, 2, {.split_mlp = true});
  EXPECT_THAT(names(g),
              ElementsAre("input_norm", "qkv_proj", "attention", "out_proj", "attn_all_reduce",
                          "post_attention_norm", "up_proj", "down_proj", "mlp_all_reduce"));
  EXPECT_EQ(g.num_edges(EdgeKind::kStreamOrder), 0u);
}

TEST(LayerOpGraph, CriticalPathOfChainIsTheSum) {
  const LayerOpGraph g(load("mistral-7b-v0.1"), 2);
  const std::vector<double> w = {0.5, 1.5, 2.5, 3.5, 0.25, 0.75, 10.0, 0.125};
  const double sum = 0.5 + 1.5 + 2.5 + 3.5 + 0.25 + 0.75 + 10.0 + 0.125;  // 19.125
  EXPECT_NEAR(g.critical_path_s(w), sum, sum * kRelTol);
  EXPECT_EQ(g.critical_path(w).size(), 8u);
}

TEST(LayerOpGraph, SerializedLayerPathIsTheOrderedSumBitForBit) {
  // One stream serialises every layer graph: the longest path is the sum of all op times,
  // added in topological order, exactly (the fast path must not change a predicted step).
  for (const char* name : {"llama-3.1-8b", "mistral-7b-v0.1"}) {
    for (const int tp : {1, 2}) {
      const LayerOpGraph g(load(name), tp);
      std::vector<double> w(g.num_ops());
      for (std::size_t v = 0; v < w.size(); ++v) w[v] = 1.0 / (3.0 + 7.0 * static_cast<double>(v));
      double sum = 0;
      for (const std::size_t v : g.topological_order()) sum += w[v];
      EXPECT_EQ(g.critical_path_s(w), sum) << name << " tp=" << tp;
      // A negative time (not a real cost) takes the general longest-path rule: paths start at
      // 0, so a chain 1, -5, 3, ... restarts after the negative op.
      std::vector<double> with_negative(g.num_ops(), 0.0);
      const auto& order = g.topological_order();
      with_negative[order[0]] = 1.0;
      with_negative[order[1]] = -5.0;
      with_negative[order[2]] = 3.0;
      EXPECT_EQ(g.critical_path_s(with_negative), 3.0) << name << " tp=" << tp;
    }
  }
}

TEST(LayerOpGraph, RejectsBadArguments) {
  const ModelSpec m = load("llama-3.1-8b");
  EXPECT_THROW(LayerOpGraph(m, 0), std::invalid_argument);
  const LayerOpGraph g(m, 1);
  const std::vector<double> too_short = {1, 2};
  EXPECT_THROW(g.critical_path_s(too_short), std::invalid_argument);
  EXPECT_THROW(g.find("softmax"), std::out_of_range);
}

TEST(LayerOpGraph, DotOutput) {
  const std::string llama = LayerOpGraph(load("llama-3.1-8b"), 1).to_dot();
  EXPECT_THAT(llama, HasSubstr("digraph layer {"));
  EXPECT_THAT(llama, HasSubstr("n0 [label=\"input_norm\\n(norm)\"];"));
  EXPECT_THAT(llama, HasSubstr("q_proj 4096x4096"));
  EXPECT_THAT(llama, HasSubstr("n0 -> n1;"));
  EXPECT_THAT(llama, Not(HasSubstr("dashed]")));
  const std::string neox = LayerOpGraph(load("gpt-neox-20b"), 2).to_dot();
  EXPECT_THAT(neox, HasSubstr("n3 -> n4 [style=dashed];"));
  EXPECT_THAT(neox, HasSubstr("tp=2"));
}

}  // namespace
}  // namespace llmcap::model
