// Deterministic random streams of the simulator: std::mt19937_64 (whose output sequence the
// C++ standard fixes) plus hand-written transforms, so a seed gives the same numbers with
// every standard library. Never use std::*_distribution here: their algorithms are
// implementation-defined. The transforms call std::sqrt (exact under IEEE 754), std::log and
// std::pow (within about 1 ulp, but not fixed bit for bit by any standard): another C math
// library could change the last bit of a variate and, rarely, the nanosecond an arrival is
// rounded to.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>

#include "base/random.h"

namespace llmcap::sim {

using base::splitmix64;  // SplitMix64 (base/random.h)

/// The seed of the `index`-th of several independent sources drawn from one scenario seed
/// (e.g. client classes): `seed` itself for index 0, so a single source draws exactly what it
/// drew before there were several, and splitmix64(seed ^ splitmix64(index)) otherwise.
inline uint64_t substream_seed(uint64_t seed, uint64_t index) {
  return index == 0 ? seed : splitmix64(seed ^ splitmix64(index));
}

/// Stream ids: each use of randomness draws from its own generator so that, e.g., changing
/// how lengths are drawn does not shift the arrival times.
enum class Stream : uint64_t {
  kInterArrival = 1,    ///< gaps of an open-loop arrival process (Poisson, Gamma, Weibull)
  kArrivalLengths = 2,  ///< length draws of an open-loop arrival process
  kClosedLoopStart = 3,
  kClosedLoopThink = 4,
  kClosedLoopLengths = 5,
  kRouter = 6,           ///< random choices of a router (e.g. power-of-two choices)
  kSessionTurns = 7,     ///< turn counts of multi-turn sessions (sim/sessions.h)
  kSessionMessages = 8,  ///< new-message lengths of multi-turn sessions
  kSessionThink = 9,     ///< think times between the turns of open-loop sessions
};

/// One independent random stream: generator seeded with splitmix64(seed ^ stream id).
class RandomStream {
 public:
  RandomStream(uint64_t seed, Stream stream)
      : engine_(splitmix64(seed ^ static_cast<uint64_t>(stream))) {}

  /// Uniform on [0, 1) with 53 random bits.
  double uniform01() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

  /// Exponential with the given mean (inverse CDF: -mean * ln(1 - u)). mean >= 0.
  double exponential(double mean) { return -mean * std::log(1.0 - uniform01()); }

  /// Standard normal N(0, 1) by Marsaglia's polar method (Marsaglia & Bray, SIAM Review 6(3),
  /// 1964); of the pair it makes, the second is discarded so the stream holds no state
  /// beyond the engine. Uses about 2.55 uniforms per call on average.
  double standard_normal() {
    while (true) {
      const double u = 2.0 * uniform01() - 1.0;
      const double v = 2.0 * uniform01() - 1.0;
      const double s = u * u + v * v;
      if (s > 0.0 && s < 1.0) return u * std::sqrt(-2.0 * std::log(s) / s);
    }
  }

  /// Gamma with shape alpha > 0 and scale theta >= 0 (mean alpha * theta, variance
  /// alpha * theta^2). Marsaglia & Tsang, "A simple method for generating gamma variables",
  /// ACM TOMS 26(3), 2000: for alpha >= 1, d = alpha - 1/3, c = 1 / sqrt(9 d); repeat
  /// x ~ N(0, 1), v = (1 + c x)^3 until v > 0 and (u < 1 - 0.0331 x^4 or
  /// ln u < x^2 / 2 + d (1 - v + ln v)); return d v theta. For alpha < 1 the same paper's
  /// boost: Gamma(alpha) = Gamma(alpha + 1) * U^(1/alpha), U uniform on (0, 1].
  double gamma(double alpha, double theta) {
    if (alpha < 1.0) {
      const double boost = std::pow(1.0 - uniform01(), 1.0 / alpha);  // U in (0, 1]
      return gamma(alpha + 1.0, theta) * boost;
    }
    const double d = alpha - 1.0 / 3.0;
    const double c = 1.0 / std::sqrt(9.0 * d);
    while (true) {
      const double x = standard_normal();
      double v = 1.0 + c * x;
      if (v <= 0.0) continue;
      v = v * v * v;
      const double u = uniform01();
      const double x2 = x * x;
      if (u < 1.0 - 0.0331 * x2 * x2) return d * v * theta;
      if (std::log(u) < 0.5 * x2 + d * (1.0 - v + std::log(v))) return d * v * theta;
    }
  }

  /// Weibull with shape k > 0 and scale lambda >= 0 by its inverse CDF:
  /// lambda * (-ln(1 - u))^(1/k). Mean lambda * Gamma(1 + 1/k).
  double weibull(double k, double lambda) {
    return lambda * std::pow(-std::log(1.0 - uniform01()), 1.0 / k);
  }

  /// Geometric on {1, 2, ...} with the given mean >= 1 (success probability p = 1 / mean,
  /// P(K > k) = (1 - p)^k), by its inverse CDF: 1 + floor(ln(1 - u) / ln(1 - p)); exactly 1
  /// when mean == 1. Capped at 2^53 (a draw that far out needs u within 2^-53 of 1).
  int64_t geometric(double mean) {
    const double u = uniform01();
    if (!(mean > 1.0)) return 1;
    const double k = std::floor(std::log(1.0 - u) / std::log(1.0 - 1.0 / mean));
    return 1 + static_cast<int64_t>(std::min(k, 0x1.0p53));
  }

  /// Uniform index in [0, n) without modulo bias worth mentioning (multiply-high). n >= 1.
  uint64_t index(uint64_t n) {
    __extension__ typedef unsigned __int128 Wide;
    return static_cast<uint64_t>((static_cast<Wide>(engine_()) * n) >> 64);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace llmcap::sim
