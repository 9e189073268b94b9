// Length models: a workload's prompt and output lengths given as published figures (quantiles
// computed from a trace) instead of the trace itself (issue 30, item 6; docs/scenarios.md,
// "Length models"). data/workloads/ holds those of the public Azure 2023 traces.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "sim/workload.h"

namespace llmcap::sim {

/// A length distribution by its quantiles: (probability, tokens) points with probabilities
/// rising strictly from 0 to 1 and tokens non-decreasing; between two points the quantile
/// function is linear.
struct LengthQuantiles {
  std::vector<std::pair<double, double>> points;

  /// The quantile at probability `p` in [0, 1] (linear between the points).
  double at(double p) const;
};

/// A length model file (`"format": "llmcap-length-model"`).
struct LengthModel {
  std::string id;
  std::string source;  ///< where the figures come from
  std::string as_of;   ///< when they were computed (YYYY-MM-DD)
  LengthQuantiles prompt_tokens;
  LengthQuantiles output_tokens;
};

/// The number of length samples a model stands for in the simulator (length_samples).
inline constexpr int64_t kLengthModelSamples = 1000;

/// Reads a length model. Throws InputError naming the file, the field, the value and what was
/// expected: unknown keys at any level, a missing id, source or as_of, fewer than two quantile
/// points, probabilities not rising strictly from 0 to 1, tokens that fall or lie outside
/// [1, 16777216] for prompts or [0, 16777216] for outputs (an output of 0 tokens is read as 1).
LengthModel read_length_model(const std::filesystem::path& path);

/// `n` stratified samples of the model: sample i has the prompt quantile at u_i = (i + 0.5) / n
/// and the output quantile at u_j with j = (617 i) mod n (a fixed permutation for n not a
/// multiple of 617, so that prompt
/// and output lengths are independent, as they nearly are in the Azure traces: Spearman 0.07
/// for conversations), each rounded to whole tokens (outputs at least 1). Drawing uniformly from
/// them (the simulator's length draws) follows the model's quantiles to within 1/n.
std::vector<LengthSample> length_samples(const LengthModel& model, int64_t n = kLengthModelSamples);

/// Whether `path` names a length model rather than a CSV (its extension is ".json").
bool is_length_model_path(const std::filesystem::path& path);

}  // namespace llmcap::sim
