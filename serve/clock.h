// The serving loop's time: a real clock (steady_clock) or a virtual one that moves only when told.
#pragma once

#include <algorithm>
#include <cstdint>

#include "sim/sim_time.h"

namespace llmcap::serve {

/// The loop's time: offsets from the start of the run (sim::SimTime, nanoseconds).
class ServeClock {
 public:
  virtual ~ServeClock() = default;
  virtual sim::SimTime now() = 0;
  /// Returns at time `t` or later (at once if t <= now()).
  virtual void wait_until(sim::SimTime t) = 0;
};

/// std::chrono::steady_clock from construction; wait_until sleeps to 1 ms before the target,
/// then spins (yielding) so that an arrival is seen within microseconds.
class SteadyServeClock final : public ServeClock {
 public:
  SteadyServeClock();
  sim::SimTime now() override;
  void wait_until(sim::SimTime t) override;

 private:
  int64_t start_ns_ = 0;
};

/// A clock that moves only when told: for replaying the loop in simulated time (tests, and
/// PredictedStepExecutor in serve/step_executor.h).
class VirtualServeClock final : public ServeClock {
 public:
  sim::SimTime now() override { return now_; }
  void wait_until(sim::SimTime t) override { now_ = std::max(now_, t); }
  void advance(sim::SimTime d) { now_ += d; }

 private:
  sim::SimTime now_;
};

}  // namespace llmcap::serve
