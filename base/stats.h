// Summary statistics defined once: medians and quantiles (docs/metrics.md, Summary statistics).
//
// The tree uses more than one definition of "median"; each has its own name here, so that a
// caller says which one it means and results stay bit-identical to what it computed before:
//   median()          the nearest-rank median, value[ceil(n / 2) - 1] (the lower middle for an
//                     even count); the definition of docs/metrics.md and the same value as
//                     nearest_rank_quantile(v, 0.5).
//   upper_median()    value[n / 2] (the upper middle for an even count).
//   midpoint_median() the mean of the two middle values for an even count.
// For an odd count all three are the middle value.
#pragma once

#include <cstdint>
#include <vector>

namespace llmcap::base {

/// 0-based index of the nearest-rank quantile q = percent / 100 among `n` sorted values, in
/// exact integer arithmetic: rank ceil(percent * n / 100), 1-based, at least 1. Expects n >= 1
/// and 0 <= percent <= 100 (so the index is in [0, n)).
int64_t nearest_rank_index(int64_t n, int64_t percent);

/// Nearest-rank q-quantile of `values`: value[ceil(q * n) - 1] of the sorted values, the rank
/// computed in double arithmetic and clamped to [1, n]. 0 for an empty vector. q in [0, 1].
double nearest_rank_quantile(std::vector<double> values, double q);

/// nearest_rank_quantile of the absolute values (|v|) of `values`. 0 for an empty vector.
double abs_nearest_rank_quantile(std::vector<double> values, double q);

/// The nearest-rank median: sorted value[(n - 1) / 2]. 0 for an empty vector.
double median(std::vector<double> values);

/// The upper median: sorted value[n / 2]. 0 for an empty vector.
double upper_median(std::vector<double> values);

/// The midpoint median: the middle sorted value, or the mean of the two middle ones for an even
/// count. 0 for an empty vector.
double midpoint_median(std::vector<double> values);

/// Signed relative error of a prediction: predicted / measured - 1 (0 when measured <= 0).
inline double relative_error(double predicted, double measured) {
  return measured > 0 ? predicted / measured - 1.0 : 0.0;
}

}  // namespace llmcap::base
