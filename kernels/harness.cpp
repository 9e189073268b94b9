#include "kernels/harness.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <utility>
#include <vector>

#include "base/stats.h"

namespace llmcap::kernels {

namespace {

/// Median of `v` (the mean of the middle two for an even count); 0 when empty.
using base::midpoint_median;  // the mean of the middle pair for an even count

}  // namespace

Timing time_kernel(const std::function<void()>& fn, int warmup, int min_runs, double min_total_s,
                   int max_runs) {
  if (min_runs < 1 || max_runs < min_runs || warmup < 0) {
    throw std::invalid_argument("time_kernel: expected warmup >= 0 and 1 <= min_runs <= max_runs");
  }
  using clock = std::chrono::steady_clock;
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> runs;
  runs.reserve(static_cast<std::size_t>(std::min(max_runs, 4096)));
  double total = 0;
  while (static_cast<int>(runs.size()) < max_runs &&
         (static_cast<int>(runs.size()) < min_runs || total < min_total_s)) {
    const auto start = clock::now();
    fn();
    const double s = std::chrono::duration<double>(clock::now() - start).count();
    runs.push_back(s);
    total += s;
  }
  Timing t;
  t.num_runs = static_cast<int64_t>(runs.size());
  t.min_s = *std::min_element(runs.begin(), runs.end());
  t.median_s = midpoint_median(std::move(runs));
  return t;
}

void RepeatedTiming::add(const Timing& t) {
  min_s = medians.empty() ? t.min_s : std::min(min_s, t.min_s);
  medians.push_back(t.median_s);
}

double RepeatedTiming::median_s() const { return midpoint_median(medians); }

int remeasure_contended(const std::vector<RepeatedTiming*>& cells,
                        const std::function<Timing(std::size_t)>& measure, double ratio,
                        int max_extra) {
  int extra = 0;
  for (int pass = 0; pass < max_extra; ++pass) {
    bool any = false;
    for (std::size_t i = 0; i < cells.size(); ++i) {
      RepeatedTiming& c = *cells[i];
      if (c.medians.empty() || !(c.median_s() > ratio * c.min_s)) continue;
      c.add(measure(i));
      ++extra;
      any = true;
    }
    if (!any) break;
  }
  return extra;
}

}  // namespace llmcap::kernels
