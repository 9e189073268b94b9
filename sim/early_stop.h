// SimOptions::stop_at_certain_p99_miss: a run observer that counts TTFT and TPOT values above
// their p99 bounds and says when the verdict "missed" is certain. Internal to the simulator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "sim/sim_options.h"
#include "sim/workload.h"

namespace llmcap::sim {

class P99EarlyStop {
 public:
  /// Arms the watch for `bounds` over the requests of an open-loop workload (the number of
  /// values each class and metric will produce is known in advance).
  void watch(const P99Bounds& bounds, const std::vector<RequestSpec>& requests);
  bool watching() const { return watching_; }

  /// A TTFT of client class `c`, in seconds.
  void observe_ttft(int32_t c, double value_s) { observe(ttft_, c, value_s, "TTFT"); }
  /// A TPOT of client class `c`, in seconds.
  void observe_tpot(int32_t c, double value_s) { observe(tpot_, c, value_s, "TPOT"); }
  /// Request `id` was rejected: a rejected request misses the objective.
  void reject(int64_t id);

  /// Non-empty once the miss is certain: why (the run stops after the current event).
  const std::string& stop_reason() const { return stop_reason_; }

 private:
  /// Per class and metric: its bound and how many more values above it make the p99 exceed it.
  struct Watch {
    double bound_s = 0;
    int64_t num_values = 0;      ///< values the run will produce (if nothing is rejected)
    int64_t misses_to_fail = 0;  ///< n - rank + 1, rank = max(1, ceil(0.99 n))
    int64_t num_misses = 0;
    bool watched = false;
  };
  /// Counts `value_s` of class `c` against its watch; sets stop_reason_ when the p99 is
  /// certain to exceed the bound.
  void observe(std::vector<Watch>& watches, int32_t c, double value_s, const char* metric);

  bool watching_ = false;
  std::vector<Watch> ttft_;  ///< by client class
  std::vector<Watch> tpot_;  ///< by client class
  std::string stop_reason_;
};

}  // namespace llmcap::sim
