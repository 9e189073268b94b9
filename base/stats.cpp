#include "base/stats.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <utility>

namespace llmcap::base {

int64_t nearest_rank_index(int64_t n, int64_t percent) {
  return std::max<int64_t>(1, (percent * n + 99) / 100) - 1;
}

double nearest_rank_quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

double abs_nearest_rank_quantile(std::vector<double> values, double q) {
  for (double& v : values) v = std::fabs(v);
  return nearest_rank_quantile(std::move(values), q);
}

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[(values.size() - 1) / 2];
}

double upper_median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double midpoint_median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace llmcap::base
