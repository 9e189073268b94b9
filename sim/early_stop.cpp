#include "sim/early_stop.h"

#include <algorithm>
#include <sstream>

namespace llmcap::sim {

void P99EarlyStop::watch(const P99Bounds& bounds, const std::vector<RequestSpec>& requests) {
  const size_t num_classes = std::max(bounds.ttft_s.size(), bounds.tpot_s.size());
  ttft_.assign(num_classes, Watch{});
  tpot_.assign(num_classes, Watch{});
  for (const RequestSpec& spec : requests) {
    const auto c = static_cast<size_t>(spec.client_class);
    if (c >= num_classes) continue;
    ++ttft_[c].num_values;
    if (spec.num_output_tokens >= 2) ++tpot_[c].num_values;
  }
  const auto arm = [](Watch& w, const std::vector<double>& bound_s, size_t c) {
    if (c >= bound_s.size() || w.num_values == 0) return;
    const int64_t rank = std::max<int64_t>(1, (99 * w.num_values + 99) / 100);
    w.bound_s = bound_s[c];
    w.misses_to_fail = w.num_values - rank + 1;
    w.watched = true;
  };
  for (size_t c = 0; c < num_classes; ++c) {
    arm(ttft_[c], bounds.ttft_s, c);
    arm(tpot_[c], bounds.tpot_s, c);
  }
  watching_ = true;
}

void P99EarlyStop::reject(int64_t id) {
  if (!watching_) return;
  stop_reason_ = "request " + std::to_string(id) +
                 " was rejected (it fits in no replica's KV cache), and a rejected "
                 "request misses the objective";
}

void P99EarlyStop::observe(std::vector<Watch>& watches, int32_t c, double value_s,
                           const char* metric) {
  if (c < 0 || static_cast<size_t>(c) >= watches.size()) return;
  Watch& w = watches[static_cast<size_t>(c)];
  if (!w.watched || !(value_s > w.bound_s)) return;
  if (++w.num_misses < w.misses_to_fail) return;
  std::ostringstream out;
  out << w.num_misses << " of the " << w.num_values << " " << metric << " values of client class "
      << c << " exceed its p99 bound of " << w.bound_s << " s, so its p99 " << metric
      << " exceeds the bound whatever the remaining requests do";
  stop_reason_ = out.str();
}

}  // namespace llmcap::sim
