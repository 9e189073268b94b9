// Simulated time: an integer count of nanoseconds.
#pragma once

#include <cmath>
#include <compare>
#include <cstdint>

namespace llmcap::sim {

/// A point or span of simulated time in integer nanoseconds. Built only through the named
/// factories, so no unit is ever implicit. Arithmetic is exact; conversion from seconds
/// rounds to the nearest nanosecond.
class SimTime {
 public:
  constexpr SimTime() = default;
  static constexpr SimTime Nanoseconds(int64_t ns) { return SimTime(ns); }
  static SimTime Seconds(double s) { return SimTime(round_half_away(s * 1e9)); }
  static SimTime MilliSeconds(double ms) { return Seconds(ms * 1e-3); }
  static constexpr SimTime Zero() { return SimTime(0); }
  static constexpr SimTime Max() { return SimTime(INT64_MAX); }

  constexpr int64_t ns() const { return ns_; }
  constexpr double seconds() const { return static_cast<double>(ns_) * 1e-9; }

  constexpr auto operator<=>(const SimTime&) const = default;
  constexpr SimTime operator+(SimTime o) const { return SimTime(ns_ + o.ns_); }
  constexpr SimTime operator-(SimTime o) const { return SimTime(ns_ - o.ns_); }
  constexpr SimTime& operator+=(SimTime o) {
    ns_ += o.ns_;
    return *this;
  }

 private:
  constexpr explicit SimTime(int64_t ns) : ns_(ns) {}
  /// std::llround(x), inline: the integer part, plus or minus one when the (exact) fraction
  /// is at least one half; the library call outside +-2^62.
  static int64_t round_half_away(double x) {
    if (!(std::fabs(x) < 0x1p62)) return static_cast<int64_t>(std::llround(x));
    const auto i = static_cast<int64_t>(x);  // truncates
    const double fraction = x - static_cast<double>(i);
    return i + (fraction >= 0.5) - (fraction <= -0.5);
  }
  int64_t ns_ = 0;
};

}  // namespace llmcap::sim
