// The scenario's "search" and "uncertainty" sections: which serving configurations the planner
// tries per instance type, and how sure the answer is (issue 5, items 1 and 2; format and
// method in docs/search.md).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "model/formats.h"
#include "sim/simulator.h"

namespace llmcap::plan {

/// The configuration search ("search"). Default: off (the scenario's one configuration per
/// type). Each list, when empty, stands for the scenario's own value; the configurations of a
/// type are the product of the lists, in the order: tensor-parallel degree, weight format,
/// batching policy, max_num_seqs, chunk size (chunk sizes apply to chunked_prefill only, and
/// a chunk below max_num_seqs is not a valid chunked_prefill configuration and is left out).
struct SearchSpec {
  bool enabled = false;  ///< the section is present
  /// "tensor_parallel": "search": every degree the type allows (plan::tp_options).
  bool tp_search = false;
  /// "tensor_parallel": [degrees] (>= 1, distinct): those the type allows (others are left
  /// out for that type). Empty and !tp_search: the scenario's rule per type.
  std::vector<int> tp_degrees;
  /// "tensor_parallel": {"gpu": ..., "cpu": ...}: each kind's own choice, as above (a kind
  /// missing from the object: the scenario's rule per type). tp_search and tp_degrees then
  /// hold the GPU instances' choice, these the CPU instances'.
  bool tp_by_kind = false;
  bool cpu_tp_search = false;
  std::vector<int> cpu_tp_degrees;
  /// "weight_formats": a list (every device kind), or {"gpu": [...], "cpu": [...]}; distinct.
  /// The GPU instances' list (every kind's when one list).
  std::vector<model::WeightFormat> weight_formats;
  /// The CPU instances' list when "weight_formats" gave one per kind (empty: weight_formats;
  /// a kind missing from the object: that kind's scenario format only).
  std::vector<model::WeightFormat> cpu_weight_formats;
  bool weight_formats_by_kind = false;        ///< "weight_formats" was an object
  std::vector<sim::BatchingPolicy> policies;  ///< "batching", distinct
  std::vector<int64_t> max_num_seqs;          ///< "max_num_seqs", > 0, distinct
  /// "chunk_sizes_tokens": chunked_prefill's max_num_batched_tokens (> 0, distinct). Other
  /// policies keep the scenario's max_num_batched_tokens.
  std::vector<int64_t> chunk_sizes_tokens;
  /// "prune": skip configurations whose analytic lower bound on cost cannot beat the best
  /// found, and start each fleet-size search at the lower bound (docs/search.md proves the
  /// bounds). Off: every configuration's fleet is searched from 1 (for checking).
  bool prune = true;
  /// "max_rate": find each type's maximum sustainable request rate per instance (a bisection
  /// on the load multiplier with one instance of its best configuration).
  bool max_rate = true;
};

/// The uncertainty carried to the answer ("uncertainty"; docs/search.md, "Uncertainty").
struct UncertaintySpec {
  /// Of the reported ranges, in (0, 1). The error fractions below are half-widths at this
  /// confidence.
  double confidence = 0.95;
  /// "step_time_error_fraction" e in [0, 0.9]: predicted step times may be off by a factor in
  /// [1 - e, 1 + e]. Unset: a calibrated CPU row takes the calibration profile's fit p95
  /// relative error (scaled to `confidence` as a normal half-width), every other row
  /// kDatasheetStepTimeErrorFraction.
  std::optional<double> step_time_error_fraction;
  /// "price_error_fraction" p in [0, 0.9]: each price may be off by a factor in [1 - p, 1 + p]
  /// (e.g. list price against a negotiated one). Default 0.
  double price_error_fraction = 0;
};

/// The datasheet roofline's step-time error at 95% used when nothing better is known: the
/// H200 probe in docs/model.md found decode steps 16% slower and large prefills 14% faster
/// than the roofline (per-operator median error 14.6%); 0.20 rounds that up to a 95%
/// half-width. A judgement, not a measured quantile (docs/search.md).
inline constexpr double kDatasheetStepTimeErrorFraction = 0.20;

}  // namespace llmcap::plan
