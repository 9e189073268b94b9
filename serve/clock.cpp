#include "serve/clock.h"

#include <chrono>
#include <thread>

namespace llmcap::serve {

using sim::SimTime;

SteadyServeClock::SteadyServeClock()
    : start_ns_(std::chrono::duration_cast<std::chrono::nanoseconds>(
                    std::chrono::steady_clock::now().time_since_epoch())
                    .count()) {}

SimTime SteadyServeClock::now() {
  const int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::steady_clock::now().time_since_epoch())
                         .count();
  return SimTime::Nanoseconds(ns - start_ns_);
}

void SteadyServeClock::wait_until(SimTime t) {
  constexpr int64_t kSpinNs = 1'000'000;  // sleep to 1 ms before, then spin
  for (SimTime n = now(); n < t; n = now()) {
    const int64_t left_ns = (t - n).ns();
    if (left_ns > kSpinNs) {
      std::this_thread::sleep_for(std::chrono::nanoseconds(left_ns - kSpinNs));
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace llmcap::serve
