// The matrix-product kernel calls of a layer's linear nodes and what their weights cost in a
// weight format: shared by the roofline (model/roofline.h) and the calibration's shape list.
#pragma once

#include <vector>

#include "model/efficiency.h"
#include "model/op_graph.h"
#include "model/weight_encoding.h"

namespace llmcap::model {

/// One kernel call of a linear node: its shape and weight bytes (the weight of its ratio).
struct CallShape {
  MatmulShapeKey key;
  double weight_bytes = 0;
};

/// What each weight matrix of a layer costs in bytes, and which kernel class runs it, in a
/// weight format (model/weight_encoding.h): the mean over the model's layers of its
/// encoding's bytes (GGUF's K-quant mixes raise some layers).
struct WeightPricing {
  WeightFormat format = WeightFormat::kBf16;
  QuantModel quant;
  bool fused_qkv = false;

  /// The pricing of `model`'s layers in `format`.
  static WeightPricing of(const ModelSpec& model, WeightFormat format);
  /// role_of_matrix of `mat` in `node`.
  TensorRole role(const OpNode& node, const LinearMatrix& mat) const;
  /// Bytes of the whole (unsharded) matrix: its encoding's, averaged over the model's layers.
  double bytes(const OpNode& node, const LinearMatrix& mat) const;
  /// The kernel class of a node: its first matrix's encoding's.
  WeightFormat kernel(const OpNode& node) const;
};

/// The kernel calls of a linear node's matrices on one of `tp` devices: a matrix sharing the
/// previous one's input joins its call (fused QKV, fused gate/up), as the reference decoder
/// packs them. Column-parallel matrices hold out / tp rows, row-parallel ones in / tp columns; a
/// call whose split is not whole gets rows -1, which matches no measurement. Keys name the
/// node's kernel class ("int4", ...); weight bytes per device.
std::vector<CallShape> call_shapes(const OpNode& node, const WeightPricing& wp, int tp);

}  // namespace llmcap::model
