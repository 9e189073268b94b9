#include "model/roofline_calls.h"

#include <algorithm>
#include <deque>
#include <string>

#include "model/input_error.h"
#include "model/roofline.h"

namespace llmcap::model {

WeightPricing WeightPricing::of(const ModelSpec& model, WeightFormat format) {
  WeightPricing wp;
  wp.format = format;
  wp.quant = quant_model(model);
  wp.fused_qkv = has_fused_qkv(wp.quant.model_type);
  return wp;
}

TensorRole WeightPricing::role(const OpNode& node, const LinearMatrix& mat) const {
  return role_of_matrix(node.name, mat.name, fused_qkv);
}

double WeightPricing::bytes(const OpNode& node, const LinearMatrix& mat) const {
  return mean_layer_tensor_bytes(format, role(node, mat), mat.out_features, mat.in_features, quant);
}

WeightFormat WeightPricing::kernel(const OpNode& node) const {
  if (node.matrices.empty()) return kernel_class(format);
  const LinearMatrix& mat = node.matrices.front();
  return encoding_for(format, role(node, mat), 0, mat.in_features, quant).kernel;
}

/// The kernel calls of a linear node's matrices on one of `tp` devices: a matrix sharing the
/// previous one's input joins its call (fused QKV, fused gate/up), as the reference decoder
/// packs them. Column-parallel matrices hold out / tp rows, row-parallel ones in / tp columns; a
/// call whose split is not whole gets rows -1, which matches no measurement.
std::vector<CallShape> call_shapes(const OpNode& node, const WeightPricing& wp, int tp) {
  std::vector<CallShape> calls;
  const std::string kernel(to_string(wp.kernel(node)));
  for (const LinearMatrix& mat : node.matrices) {
    if (calls.empty() || !mat.shares_input_with_previous) {
      calls.push_back({{kernel, 0, 0}, 0});
      const int64_t cols = mat.row_parallel ? mat.in_features / tp : mat.in_features;
      calls.back().key.cols = mat.row_parallel && mat.in_features % tp != 0 ? -1 : cols;
    }
    CallShape& call = calls.back();
    const bool whole = mat.row_parallel || mat.replicated || mat.out_features % tp == 0;
    if (!whole || call.key.rows < 0 || call.key.cols < 0) {
      call.key.rows = -1;
    } else {
      call.key.rows +=
          mat.row_parallel || mat.replicated ? mat.out_features : mat.out_features / tp;
    }
    call.weight_bytes += wp.bytes(node, mat) / (mat.replicated ? 1 : tp);
  }
  return calls;
}

std::vector<MatmulShapeKey> linear_call_shapes(const ModelSpec& model, int tp) {
  if (tp < 1) throw InputError("linear_call_shapes: tp: expected >= 1, got " + std::to_string(tp));
  std::deque<LayerOpGraph> graphs;
  if (!model.description) {
    graphs.emplace_back(model, tp);
  } else {
    for (const LayerKind& k : layer_kinds(*model.description)) {
      graphs.emplace_back(*model.description, k.layer, tp);
    }
  }
  std::vector<MatmulShapeKey> out;
  const auto add = [&](const MatmulShapeKey& k) {
    if (k.rows < 1 || k.cols < 1) return;
    MatmulShapeKey shape{"", k.rows, k.cols};
    if (std::find(out.begin(), out.end(), shape) == out.end()) out.push_back(shape);
  };
  for (const LayerOpGraph& graph : graphs) {
    for (std::size_t v = 0; v < graph.num_ops(); ++v) {
      const OpNode& node = graph.op(v);
      if (node.kind != OpKind::kLinear) continue;
      for (const CallShape& call : call_shapes(node, WeightPricing{}, tp)) {
        add(call.key);
      }
    }
  }
  if (model.vocab_size % tp == 0) add({"", model.vocab_size / tp, model.hidden_size});
  return out;
}

}  // namespace llmcap::model
