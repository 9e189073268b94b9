// Deterministic random streams of the simulator: std::mt19937_64 (whose output sequence the
// C++ standard fixes) plus hand-written transforms, so a seed gives the same numbers with
// every standard library. Never use std::*_distribution here: their algorithms are
// implementation-defined.
#pragma once

#include <cmath>
#include <cstdint>
#include <random>

namespace llmcap::sim {

/// SplitMix64 finaliser (Steele, Lea, Flood 2014): a bijective 64-bit mixer.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// Stream ids: each use of randomness draws from its own generator so that, e.g., changing
/// how lengths are drawn does not shift the arrival times.
enum class Stream : uint64_t {
  kPoissonInterArrival = 1,
  kPoissonLengths = 2,
  kClosedLoopStart = 3,
  kClosedLoopThink = 4,
  kClosedLoopLengths = 5,
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

  /// Uniform index in [0, n) without modulo bias worth mentioning (multiply-high). n >= 1.
  uint64_t index(uint64_t n) {
    __extension__ typedef unsigned __int128 Wide;
    return static_cast<uint64_t>((static_cast<Wide>(engine_()) * n) >> 64);
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace llmcap::sim
