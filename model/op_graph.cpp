#include "model/op_graph.h"

#include <algorithm>
#include <boost/graph/topological_sort.hpp>
#include <cmath>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace llmcap::model {
namespace {

using Vertex = LayerOpGraph::Graph::vertex_descriptor;

/// Adds a node and returns its vertex.
Vertex add_op(LayerOpGraph::Graph& g, std::string name, OpKind kind,
              std::vector<LinearMatrix> matrices = {}) {
  return boost::add_vertex(OpNode{std::move(name), kind, std::move(matrices)}, g);
}

void add_data(LayerOpGraph::Graph& g, Vertex from, Vertex to) {
  boost::add_edge(from, to, OpEdge{EdgeKind::kData}, g);
}

}  // namespace

std::string_view to_string(OpKind kind) {
  switch (kind) {
    case OpKind::kNorm:
      return "norm";
    case OpKind::kLinear:
      return "linear";
    case OpKind::kAttention:
      return "attention";
    case OpKind::kAllReduce:
      return "all_reduce";
    case OpKind::kAllToAll:
      return "all_to_all";
  }
  return "?";
}

LayerOpGraph::LayerOpGraph(const ModelSpec& m, int tp_degree, LayerGraphOptions options)
    : tp_degree_(tp_degree) {
  if (tp_degree < 1) throw std::invalid_argument("LayerOpGraph: tp_degree must be >= 1");
  if (m.description) {
    build(*m.description, m.description->layers.front(), options);
    return;
  }
  const bool tp = tp_degree > 1;
  const int64_t h = m.hidden_size;
  const int64_t q = m.num_attention_heads * m.head_dim;
  const int64_t kv = m.num_kv_heads * m.head_dim;
  const int64_t inter = m.intermediate_size;
  Graph& g = graph_;

  // Attention half.
  const Vertex input_norm = add_op(g, "input_norm", OpKind::kNorm);
  const Vertex qkv = add_op(g, "qkv_proj", OpKind::kLinear,
                            {{"q_proj", q, h, m.qkv_bias, false, false},
                             {"k_proj", kv, h, m.qkv_bias, false, true},
                             {"v_proj", kv, h, m.qkv_bias, false, true}});
  const Vertex attention = add_op(g, "attention", OpKind::kAttention);
  const Vertex out_proj =
      add_op(g, "out_proj", OpKind::kLinear, {{"o_proj", h, q, m.mlp_bias, true}});
  add_data(g, input_norm, qkv);
  add_data(g, qkv, attention);
  add_data(g, attention, out_proj);
  Vertex attention_end = out_proj;
  if (tp && !m.parallel_residual) {
    const Vertex ar = add_op(g, "attn_all_reduce", OpKind::kAllReduce);
    add_data(g, out_proj, ar);
    attention_end = ar;
  }

  // MLP half.
  const Vertex post_norm = add_op(g, "post_attention_norm", OpKind::kNorm);
  if (!m.parallel_residual) add_data(g, attention_end, post_norm);
  const LinearMatrix gate{"gate_proj", inter, h, m.mlp_bias, false};
  const LinearMatrix up{"up_proj", inter, h, m.mlp_bias, false};
  const LinearMatrix down{"down_proj", h, inter, m.mlp_bias, true};
  Vertex mlp_end;
  if (options.split_mlp) {
    std::vector<Vertex> inputs;
    if (m.gated_mlp) {
      inputs.push_back(add_op(g, "gate_proj", OpKind::kLinear, {gate}));
    }
    inputs.push_back(add_op(g, "up_proj", OpKind::kLinear, {up}));
    mlp_end = add_op(g, "down_proj", OpKind::kLinear, {down});
    for (const Vertex v : inputs) {
      add_data(g, post_norm, v);
      add_data(g, v, mlp_end);
    }
  } else {
    std::vector<LinearMatrix> mats;
    if (m.gated_mlp) mats.push_back(gate);
    mats.push_back(up);
    mats.back().shares_input_with_previous = m.gated_mlp;  // gate and up read one input
    mats.push_back(down);
    mlp_end = add_op(g, "mlp", OpKind::kLinear, std::move(mats));
    add_data(g, post_norm, mlp_end);
  }
  if (tp) {
    const Vertex ar =
        add_op(g, m.parallel_residual ? "all_reduce" : "mlp_all_reduce", OpKind::kAllReduce);
    add_data(g, mlp_end, ar);
    if (m.parallel_residual) add_data(g, out_proj, ar);
  }
  finish(options);
}

namespace {

/// The attention projections of `a` (see the header): (qkv_proj matrices, out_proj matrix).
std::pair<std::vector<LinearMatrix>, LinearMatrix> attention_matrices(const AttentionSpec& a,
                                                                      int64_t h) {
  std::vector<LinearMatrix> qkv;
  if (a.kind == AttentionKind::kMla) {
    const int64_t q_out = a.num_heads * (a.qk_nope_head_dim + a.qk_rope_head_dim);
    if (a.q_lora_rank > 0) {
      qkv.push_back({"q_a_proj", a.q_lora_rank, h, false, false, false, true});
      qkv.push_back(
          {"kv_a_proj_with_mqa", a.kv_lora_rank + a.qk_rope_head_dim, h, false, false, true, true});
      qkv.push_back({"q_b_proj", q_out, a.q_lora_rank});
    } else {
      qkv.push_back({"kv_a_proj_with_mqa", a.kv_lora_rank + a.qk_rope_head_dim, h, false, false,
                     false, true});
      qkv.push_back({"q_proj", q_out, h});
    }
    qkv.push_back({"kv_b_proj", a.num_heads * (a.qk_nope_head_dim + a.v_head_dim), a.kv_lora_rank});
    return {qkv, {"o_proj", h, a.num_heads * a.v_head_dim, a.out_bias, true}};
  }
  const int64_t q = a.num_heads * a.head_dim;
  const int64_t kv = a.num_kv_heads * a.head_dim;
  qkv = {{"q_proj", q, h, a.qkv_bias, false, false},
         {"k_proj", kv, h, a.qkv_bias, false, true},
         {"v_proj", kv, h, a.qkv_bias, false, true}};
  return {qkv, {"o_proj", h, q, a.out_bias, true}};
}

/// gate (when gated), up and down of an MLP of inner width `width`, fused as one node's
/// matrices (gate and up read one input).
std::vector<LinearMatrix> ffn_matrices(int64_t h, int64_t width, bool gated, bool bias) {
  std::vector<LinearMatrix> mats;
  if (gated) mats.push_back({"gate_proj", width, h, bias, false});
  mats.push_back({"up_proj", width, h, bias, false, gated});
  mats.push_back({"down_proj", h, width, bias, true});
  return mats;
}

}  // namespace

LayerOpGraph::LayerOpGraph(const ModelDescription& model, const LayerSpec& layer, int tp_degree,
                           LayerGraphOptions options)
    : tp_degree_(tp_degree) {
  if (tp_degree < 1) throw std::invalid_argument("LayerOpGraph: tp_degree must be >= 1");
  build(model, layer, options);
}

void LayerOpGraph::build(const ModelDescription& model, const LayerSpec& layer,
                         const LayerGraphOptions& options) {
  const bool tp = tp_degree_ > 1;
  const int64_t h = model.hidden_size;
  Graph& g = graph_;
  auto [qkv_mats, o_proj] = attention_matrices(layer.attention, h);
  Vertex last = add_op(g, "input_norm", OpKind::kNorm);
  const auto then = [&](std::string name, OpKind kind, std::vector<LinearMatrix> mats = {}) {
    const Vertex v = add_op(g, std::move(name), kind, std::move(mats));
    add_data(g, last, v);
    last = v;
    return v;
  };
  then("qkv_proj", OpKind::kLinear, std::move(qkv_mats));
  then("attention", OpKind::kAttention);
  then("out_proj", OpKind::kLinear, {o_proj});
  if (tp) then("attn_all_reduce", OpKind::kAllReduce);
  then("post_attention_norm", OpKind::kNorm);
  const MlpSpec& mlp = layer.mlp;
  if (mlp.kind == MlpKind::kDense) {
    std::vector<LinearMatrix> mats = ffn_matrices(h, mlp.intermediate_size, mlp.gated, mlp.bias);
    if (options.split_mlp) {
      const Vertex norm = last;
      std::vector<Vertex> inputs;
      for (std::size_t k = 0; k + 1 < mats.size(); ++k) {
        mats[k].shares_input_with_previous = false;
        inputs.push_back(add_op(g, mats[k].name, OpKind::kLinear, {mats[k]}));
        add_data(g, norm, inputs.back());
      }
      last = add_op(g, "down_proj", OpKind::kLinear, {mats.back()});
      for (const Vertex v : inputs) add_data(g, v, last);
    } else {
      then("mlp", OpKind::kLinear, std::move(mats));
    }
  } else {
    const Vertex norm = last;
    LinearMatrix router{"router", mlp.num_experts, h, mlp.router_bias, false};
    router.replicated = true;
    then("router", OpKind::kLinear, {router});
    // Expert parallelism: the hidden states go to the routed experts' devices and back.
    const int ep_degree = options.expert_parallel_degree;
    const bool ep = ep_degree > 1;
    const double ep_devices = static_cast<double>(ep_degree);
    const double ep_link =  // other devices a token's k experts live on, each way
        (ep_devices - 1) *
        (1 - std::pow(1 - 1 / ep_devices, static_cast<double>(mlp.num_experts_per_token)));
    if (ep) g[then("moe_dispatch", OpKind::kAllToAll)].link_hidden_per_token = ep_link;
    const Vertex experts = then("experts", OpKind::kLinear,
                                ffn_matrices(h, mlp.expert_intermediate_size, mlp.gated, mlp.bias));
    g[experts].num_experts = mlp.num_experts;
    g[experts].num_experts_per_token = mlp.num_experts_per_token;
    add_data(g, norm, experts);  // the experts read the normed hidden state and the routing
    const Vertex routed_end = ep ? then("moe_combine", OpKind::kAllToAll) : experts;
    if (ep) g[routed_end].link_hidden_per_token = ep_link;
    if (mlp.num_shared_experts > 0) {
      const Vertex shared = add_op(g, "shared_experts", OpKind::kLinear,
                                   ffn_matrices(h, mlp.shared_intermediate_size, mlp.gated, false));
      add_data(g, norm, shared);
      last = shared;
    }
    // One all-reduce sums the routed and shared outputs; with expert parallelism the combine
    // already brings each device every token's routed output, so only shared experts need one.
    if (tp && (!ep || mlp.num_shared_experts > 0)) {
      const Vertex ar = add_op(g, "mlp_all_reduce", OpKind::kAllReduce);
      add_data(g, routed_end, ar);
      if (last != routed_end) add_data(g, last, ar);
      last = ar;
    }
  }
  if (tp && mlp.kind == MlpKind::kDense) then("mlp_all_reduce", OpKind::kAllReduce);
  finish(options);
}

std::vector<LayerKind> layer_kinds(const ModelDescription& model) {
  std::vector<LayerKind> out;
  for (const LayerSpec& layer : model.layers) {
    const auto it =
        std::find_if(out.begin(), out.end(), [&](const LayerKind& k) { return k.layer == layer; });
    if (it == out.end()) {
      out.push_back({layer, 1});
    } else {
      ++it->num_layers;
    }
  }
  return out;
}

void LayerOpGraph::finish(const LayerGraphOptions& options) {
  Graph& g = graph_;
  // Stream order: vertices were added in issue order; chain consecutive ones.
  const std::size_t n = boost::num_vertices(g);
  if (n > kMaxOps) throw std::logic_error("LayerOpGraph: more nodes than kMaxOps");
  for (std::size_t v = 0; v < n; ++v) {  // a ring all-reduce moves 2 (tp-1)/tp hidden states
    if (g[v].kind == OpKind::kAllReduce)
      g[v].link_hidden_per_token = 2.0 * (tp_degree_ - 1) / tp_degree_;
  }
  if (options.serialize_on_device) {
    for (std::size_t v = 0; v + 1 < n; ++v) {
      if (!boost::edge(v, v + 1, g).second) {
        boost::add_edge(v, v + 1, OpEdge{EdgeKind::kStreamOrder}, g);
      }
    }
  }

  // Cache a topological order and the predecessor lists in that order.
  std::vector<Vertex> reversed;
  boost::topological_sort(g, std::back_inserter(reversed));
  topo_order_.assign(reversed.rbegin(), reversed.rend());
  std::vector<std::vector<std::size_t>> preds(n);
  for (auto [e, end] = boost::edges(g); e != end; ++e) {
    preds[boost::target(*e, g)].push_back(boost::source(*e, g));
  }
  pred_begin_.push_back(0);
  for (const std::size_t v : topo_order_) {
    std::sort(preds[v].begin(), preds[v].end());
    preds_.insert(preds_.end(), preds[v].begin(), preds[v].end());
    pred_begin_.push_back(preds_.size());
  }
  is_chain_ = true;
  for (std::size_t k = 1; k < topo_order_.size(); ++k) {
    const auto& p = preds[topo_order_[k]];
    is_chain_ = is_chain_ && std::binary_search(p.begin(), p.end(), topo_order_[k - 1]);
  }
}

std::size_t LayerOpGraph::find(const std::string& name) const {
  for (std::size_t v = 0; v < num_ops(); ++v) {
    if (graph_[v].name == name) return v;
  }
  throw std::out_of_range("LayerOpGraph: no node named \"" + name + "\"");
}

std::size_t LayerOpGraph::num_edges(EdgeKind kind) const {
  std::size_t count = 0;
  for (auto [e, end] = boost::edges(graph_); e != end; ++e) {
    if (graph_[*e].kind == kind) ++count;
  }
  return count;
}

bool LayerOpGraph::has_edge(std::size_t u, std::size_t v, EdgeKind kind) const {
  for (auto [e, end] = boost::out_edges(u, graph_); e != end; ++e) {
    if (boost::target(*e, graph_) == v && graph_[*e].kind == kind) return true;
  }
  return false;
}

double LayerOpGraph::critical_path_s(std::span<const double> op_time_s) const {
  if (op_time_s.size() != num_ops()) {
    throw std::invalid_argument("LayerOpGraph::critical_path_s: wrong number of op times");
  }
  if (is_chain_) {
    // The DP below reduces to this sum when no time is negative (each start is the previous
    // vertex's finish), with the same additions in the same order: the same result, bit for bit.
    double sum = 0;
    bool negative = false;
    for (const std::size_t v : topo_order_) {
      sum += op_time_s[v];
      negative = negative || op_time_s[v] < 0;
    }
    if (!negative) return sum;
  }
  std::array<double, kMaxOps> finish{};  // finish[v]: longest path ending at v, inclusive
  double longest = 0;
  for (std::size_t k = 0; k < topo_order_.size(); ++k) {
    const std::size_t v = topo_order_[k];
    double start = 0;
    for (std::size_t p = pred_begin_[k]; p < pred_begin_[k + 1]; ++p) {
      start = std::max(start, finish[preds_[p]]);
    }
    finish[v] = start + op_time_s[v];
    longest = std::max(longest, finish[v]);
  }
  return longest;
}

std::vector<std::size_t> LayerOpGraph::critical_path(std::span<const double> op_time_s) const {
  if (op_time_s.size() != num_ops()) {
    throw std::invalid_argument("LayerOpGraph::critical_path: wrong number of op times");
  }
  const std::size_t n = num_ops();
  std::vector<double> finish(n, 0.0);
  std::vector<std::size_t> best_pred(n, n);
  for (std::size_t k = 0; k < topo_order_.size(); ++k) {
    const std::size_t v = topo_order_[k];
    double start = 0;
    for (std::size_t p = pred_begin_[k]; p < pred_begin_[k + 1]; ++p) {
      if (best_pred[v] == n || finish[preds_[p]] > start) {
        start = finish[preds_[p]];
        best_pred[v] = preds_[p];
      }
    }
    finish[v] = start + op_time_s[v];
  }
  std::size_t last = 0;
  for (std::size_t v = 1; v < n; ++v) {
    if (finish[v] > finish[last]) last = v;
  }
  std::vector<std::size_t> path;
  for (std::size_t v = last; v != n; v = best_pred[v]) path.push_back(v);
  std::reverse(path.begin(), path.end());
  return path;
}

std::string LayerOpGraph::to_dot() const {
  std::ostringstream out;
  out << "digraph layer {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\"];\n";
  out << "  label=\"one transformer layer, tp=" << tp_degree_
      << " (solid: data, dashed: stream order)\";\n";
  for (std::size_t v = 0; v < num_ops(); ++v) {
    const OpNode& node = graph_[v];
    out << "  n" << v << " [label=\"" << node.name << "\\n(" << to_string(node.kind);
    for (const LinearMatrix& mat : node.matrices) {
      out << "\\n" << mat.name << " " << mat.out_features << "x" << mat.in_features;
    }
    out << ")\"];\n";
  }
  for (auto [e, end] = boost::edges(graph_); e != end; ++e) {
    out << "  n" << boost::source(*e, graph_) << " -> n" << boost::target(*e, graph_);
    if (graph_[*e].kind == EdgeKind::kStreamOrder) out << " [style=dashed]";
    out << ";\n";
  }
  out << "}\n";
  return out.str();
}

}  // namespace llmcap::model
