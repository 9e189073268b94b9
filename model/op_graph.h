// The operators of one transformer layer as a DAG (Boost.Graph), and its critical path.
#pragma once

#include <array>
#include <boost/graph/adjacency_list.hpp>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "model/model_spec.h"

namespace llmcap::model {

/// What an operator node does; decides how model/roofline.h costs it.
enum class OpKind {
  kNorm,       ///< RMSNorm / LayerNorm over the hidden state
  kLinear,     ///< one or more weight matrices applied to every new token
  kAttention,  ///< softmax(QK^T)V over the KV cache (reads K and V of the context)
  kAllReduce,  ///< tensor-parallel ring all-reduce of the hidden state (tp > 1 only)
  /// Expert-parallel all-to-all of the hidden states of a mixture-of-experts layer: the
  /// dispatch to the routed experts' devices, or the combine back (expert_parallel only).
  kAllToAll,
};
/// "norm" | "linear" | "attention" | "all_reduce" | "all_to_all"
std::string_view to_string(OpKind kind);

/// One weight matrix of a linear node, with the shape of the whole (unsharded) model.
/// Tensor parallelism (Megatron-LM, Shoeybi et al. 2019) shards column-parallel matrices
/// (QKV, gate, up) by output rows and row-parallel ones (out, down) by input columns, so each
/// device holds 1/tp of every matrix.
struct LinearMatrix {
  std::string name;  ///< "q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", ...
  int64_t out_features = 0;
  int64_t in_features = 0;
  bool has_bias = false;      ///< a bf16 bias of out_features
  bool row_parallel = false;  ///< sharded along in_features (its output is a partial sum)
  /// Reads the same input as the previous matrix of its node (fused QKV, fused gate/up), so
  /// the kernel reads that input once.
  bool shares_input_with_previous = false;
  /// Every device holds the whole matrix (vLLM's ReplicatedLinear: MLA's q_a_proj and
  /// kv_a_proj_with_mqa, a MoE router), so tensor parallelism splits neither weights nor FLOPs.
  bool replicated = false;
};

/// A vertex: one operator of the layer.
struct OpNode {
  std::string name;  ///< "input_norm", "qkv_proj", "attention", "out_proj", "attn_all_reduce",
                     ///< "post_attention_norm", "mlp" (or "gate_proj", "up_proj", "down_proj"),
                     ///< "mlp_all_reduce", "all_reduce" (GPT-NeoX parallel residual)
  OpKind kind = OpKind::kNorm;
  std::vector<LinearMatrix> matrices;  ///< kLinear only
  /// kLinear "experts" node of a mixture-of-experts layer only: `matrices` are ONE routed
  /// expert's, of which the layer holds num_experts and each token uses num_experts_per_token.
  int64_t num_experts = 0;
  int64_t num_experts_per_token = 0;
  /// kAllReduce and kAllToAll only: hidden-state vectors each new token moves over one
  /// device's link (bytes = this x T x hidden x activation bytes): a ring all-reduce
  /// 2 (tp-1)/tp (Patarasuk & Yuan 2009); an expert-parallel dispatch or combine
  /// (ep-1)(1 - (1 - 1/ep)^k), the other devices a token's k routed experts live on under
  /// uniform routing (LayerGraphOptions::expert_parallel_degree).
  double link_hidden_per_token = 0;
};

/// Why an edge exists.
enum class EdgeKind {
  kData,         ///< the target reads the source's output
  kStreamOrder,  ///< both run on the same device stream, the source is issued first
};

struct OpEdge {
  EdgeKind kind = EdgeKind::kData;
};

struct LayerGraphOptions {
  /// Three MLP nodes (gate_proj, up_proj, down_proj; GELU MLPs: up_proj, down_proj) instead of
  /// one "mlp" node.
  bool split_mlp = false;
  /// Add stream-order edges (the default, and what the roofline uses). Without them the graph
  /// holds data dependencies only and independent branches would overlap, as on a machine
  /// with one device per branch.
  bool serialize_on_device = true;
  /// Expert parallelism over this many devices (1: none). vLLM's --data-parallel-size N
  /// --enable-expert-parallel, SGLang's --enable-dp-attention --ep N (docs/model.md, "Expert
  /// parallelism"): attention, dense MLPs, shared experts and the router run data-parallel
  /// (each device its own sequences, the graph's tp_degree, normally 1), and the routed
  /// experts are split whole over the N devices. With N > 1 a mixture-of-experts layer gains
  /// "moe_dispatch" before and "moe_combine" after "experts" (kAllToAll), each moving a local
  /// token's hidden state to the (N-1)(1 - (1 - 1/N)^k) other devices its k experts live on
  /// (uniform routing; one copy per device, as DeepEP's and vLLM's all-to-all kernels send).
  int expert_parallel_degree = 1;
};

/// The operators of ONE transformer layer on one device of a tensor-parallel replica.
///
/// Nodes (in issue order):
///   sequential residual (Llama, Mistral, Qwen2, GPT-NeoX with use_parallel_residual=false):
///     input_norm -> qkv_proj -> attention -> out_proj -> [attn_all_reduce]
///       -> post_attention_norm -> mlp -> [mlp_all_reduce]
///   GPT-NeoX parallel residual (x + attn(ln1(x)) + mlp(ln2(x)), HF GPTNeoXLayer):
///     input_norm -> qkv_proj -> attention -> out_proj --+
///     post_attention_norm -> mlp -----------------------+--> [all_reduce]
///     (post_attention_norm reads the layer input, not input_norm's output; with tp > 1 one
///     all-reduce sums both branches, as in Megatron/GPT-NeoX.)
///   The all-reduce nodes exist only when tp_degree > 1.
///
/// Edges are data dependencies PLUS the device's execution order: all operators of a replica
/// device run one after another on one stream, so a stream-order edge joins every pair of
/// consecutive nodes (in issue order) that has no data edge. Two branches on one device
/// (GPT-NeoX's attention and MLP) therefore serialize; with these edges the critical path
/// equals the sum of the node times, and it stays the right quantity if a later model puts
/// communication on its own stream and drops some stream-order edges.
///
/// The layer time is the longest (critical) path through the DAG with node weights = operator
/// times, by dynamic programming in topological order (CLRS 3rd ed., sec. 24.2, "DAG shortest
/// paths", with max for min). The topological order and a flat predecessor list are computed
/// once at construction; critical_path_s() allocates nothing and is O(nodes + edges).
class LayerOpGraph {
 public:
  using Graph = boost::adjacency_list<boost::vecS, boost::vecS, boost::directedS, OpNode, OpEdge>;
  /// Upper bound on nodes of a layer graph (the largest has 10).
  static constexpr std::size_t kMaxOps = 16;

  /// Throws std::invalid_argument if tp_degree < 1. For a described model (model.description
  /// set), the graph of its first layer; layer_kinds() lists them all.
  LayerOpGraph(const ModelSpec& model, int tp_degree, LayerGraphOptions options = {});
  /// The graph of `layer` of `model` (hidden size from the model), sequential residual:
  ///   input_norm -> qkv_proj -> attention -> out_proj -> [attn_all_reduce]
  ///     -> post_attention_norm -> MLP -> [mlp_all_reduce]
  /// qkv_proj holds q, k, v (biases as the layer has them); MLA (DeepSeek-V2 paper, Liu et al.
  /// 2024, sec. 2.1): q_a_proj [q_lora_rank, hidden] and kv_a_proj_with_mqa [kv_lora_rank +
  /// qk_rope_head_dim, hidden] (replicated, reading one input), then q_b_proj [heads x
  /// (qk_nope + qk_rope), q_lora_rank] (q_proj [.., hidden] without q_lora_rank) and kv_b_proj
  /// [heads x (qk_nope + v_head_dim), kv_lora_rank], which the absorbed decode form applies once
  /// per new token (to the query and to the attention output). MLP: a dense layer's "mlp" node
  /// (split_mlp as above); a mixture-of-experts layer's "router" [num_experts, hidden]
  /// (replicated), "experts" (one routed expert's gate/up/down, num_experts and
  /// num_experts_per_token set) and, with shared experts, "shared_experts" (gate/up/down of
  /// shared_intermediate_size); with options.expert_parallel_degree > 1, router ->
  /// moe_dispatch -> experts -> moe_combine -> [mlp_all_reduce, only with tp_degree > 1 and
  /// shared experts].
  /// Ignored as negligible: extra norms (Gemma's four per layer), q/k
  /// norms, attention sinks, Qwen2-MoE's shared-expert gate, Falcon's and GPT-J's parallel
  /// residual (one device stream serialises both branches anyway; only the all-reduce count
  /// differs). Throws std::invalid_argument if tp_degree < 1.
  LayerOpGraph(const ModelDescription& model, const LayerSpec& layer, int tp_degree,
               LayerGraphOptions options = {});

  const Graph& graph() const { return graph_; }
  std::size_t num_ops() const { return boost::num_vertices(graph_); }
  /// Node `v` (vertex index, = issue order).
  const OpNode& op(std::size_t v) const { return graph_[v]; }
  /// Vertex index of the node named `name`; throws std::out_of_range if there is none.
  std::size_t find(const std::string& name) const;
  int tp_degree() const { return tp_degree_; }
  /// A topological order of all vertices (cached).
  const std::vector<std::size_t>& topological_order() const { return topo_order_; }
  /// Number of edges of each kind.
  std::size_t num_edges(EdgeKind kind) const;
  /// True if there is an edge u -> v of the given kind.
  bool has_edge(std::size_t u, std::size_t v, EdgeKind kind) const;

  /// Length of the longest path, node weights op_time_s[v] (seconds, size num_ops()).
  double critical_path_s(std::span<const double> op_time_s) const;
  /// The vertices of one longest path, source first (for reports and docs).
  std::vector<std::size_t> critical_path(std::span<const double> op_time_s) const;

  /// Graphviz text: one box per node (name, kind), solid data edges, dashed stream-order edges.
  std::string to_dot() const;

 private:
  /// Adds the nodes of `layer` (see the ModelDescription constructor), then finish().
  void build(const ModelDescription& model, const LayerSpec& layer,
             const LayerGraphOptions& options);
  /// Adds the stream-order edges (if asked) and caches the topological order and predecessors.
  void finish(const LayerGraphOptions& options);

  Graph graph_;
  int tp_degree_ = 1;
  std::vector<std::size_t> topo_order_;
  /// Predecessors of topo_order_[k]: preds_[pred_begin_[k] .. pred_begin_[k+1]).
  std::vector<std::size_t> pred_begin_;
  std::vector<std::size_t> preds_;
  /// Each vertex of topo_order_ after the first has its predecessor in that order among its
  /// predecessors (one stream serialises the layer): the longest path is then the whole chain.
  bool is_chain_ = false;
};

/// One kind of layer of a model and how many layers have it (their order does not matter to
/// a step's time).
struct LayerKind {
  LayerSpec layer;
  int64_t num_layers = 0;
};

/// The distinct layers of `model`, in order of first appearance, with their counts (summing to
/// model.layers.size()). Gemma-2-9B: sliding-window and full-attention dense layers, 21 each.
std::vector<LayerKind> layer_kinds(const ModelDescription& model);

}  // namespace llmcap::model
