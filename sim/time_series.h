// The per-replica time series of a run (SimOptions::time_series_interval; InstanceWindow):
// a run observer that integrates piecewise-constant signals over fixed windows. Internal to
// the simulator.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "sim/kv_cache.h"
#include "sim/sim_result.h"
#include "sim/sim_time.h"

namespace llmcap::sim {

/// Time averages of piecewise-constant signals over fixed windows (one replica). With an
/// interval of zero it records nothing and every call returns at once.
class WindowRecorder {
 public:
  explicit WindowRecorder(int64_t interval_ns) : interval_ns_(interval_ns) {}
  bool enabled() const { return interval_ns_ > 0; }

  enum Signal { kWaiting = 0, kBatch = 1, kKvUsed = 2, kBusy = 3, kNumSignals = 4 };
  struct Window {
    double area[kNumSignals] = {0, 0, 0, 0};  ///< value x ns
    int64_t max_waiting = 0;
    int64_t num_steps = 0;
  };

  /// The signal `s` holds `value` from `now` on.
  void set(Signal s, SimTime now, int64_t value) {
    if (!enabled()) return;
    integrate(s, now);
    value_[s] = value;
  }
  /// A step started at `now`.
  void count_step(SimTime now) {
    if (!enabled()) return;
    window(now.ns() / interval_ns_).num_steps += 1;
  }
  /// Brings every signal up to `end` and returns the windows [0, end) (at least one).
  /// Precondition: enabled().
  std::vector<InstanceWindow> finish(SimTime end, int64_t num_kv_blocks) {
    const int64_t interval_ns = interval_ns_;
    for (int s = 0; s < kNumSignals; ++s) integrate(static_cast<Signal>(s), end);
    const int64_t num_windows = std::max<int64_t>(1, ceil_div(end.ns(), interval_ns));
    window(num_windows - 1);
    std::vector<InstanceWindow> out(static_cast<size_t>(num_windows));
    for (int64_t w = 0; w < num_windows; ++w) {
      const Window& acc = windows_[w];
      InstanceWindow& o = out[w];
      o.start = SimTime::Nanoseconds(w * interval_ns);
      o.end = w + 1 < num_windows ? SimTime::Nanoseconds((w + 1) * interval_ns) : end;
      o.num_steps = acc.num_steps;
      o.max_num_waiting = acc.max_waiting;
      if (o.end <= o.start) continue;  // a run that ends at 0 (no requests): all zeros
      const double span = static_cast<double>((o.end - o.start).ns());
      o.mean_num_waiting = acc.area[kWaiting] / span;
      o.mean_batch_size = acc.area[kBatch] / span;
      o.mean_kv_utilization = acc.area[kKvUsed] / span / static_cast<double>(num_kv_blocks);
      o.busy_fraction = acc.area[kBusy] / span;
    }
    return out;
  }

 private:
  Window& window(int64_t w) {
    if (static_cast<int64_t>(windows_.size()) <= w) windows_.resize(static_cast<size_t>(w + 1));
    return windows_[w];
  }
  /// Adds value x [since, now) to the windows it covers.
  void integrate(Signal s, SimTime now) {
    const int64_t interval_ns = interval_ns_;
    int64_t t = since_[s];
    const int64_t end = now.ns();
    since_[s] = end;
    if (end <= t) return;
    const int64_t value = value_[s];
    while (t < end) {
      const int64_t w = t / interval_ns;
      const int64_t stop = std::min(end, (w + 1) * interval_ns);
      Window& acc = window(w);
      acc.area[s] += static_cast<double>(value) * static_cast<double>(stop - t);
      if (s == kWaiting) acc.max_waiting = std::max(acc.max_waiting, value);
      t = stop;
    }
  }
  int64_t interval_ns_;  ///< window width; 0: disabled
  int64_t value_[kNumSignals] = {0, 0, 0, 0};
  int64_t since_[kNumSignals] = {0, 0, 0, 0};
  std::vector<Window> windows_;
};

}  // namespace llmcap::sim
