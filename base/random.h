// SplitMix64 (Steele, Lea, Flood, OOPSLA 2014), defined once: the mixer that seeds the
// simulator's random streams and the generator of the kernels' random weights and the serving
// loop's token ids.
#pragma once

#include <cstdint>

namespace llmcap::base {

/// SplitMix64 of `x`: x + 0x9E3779B97F4A7C15 through the finaliser, a bijective 64-bit mixer.
inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ULL;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
  return x ^ (x >> 31);
}

/// The next output of the SplitMix64 generator whose state is `state` (advanced by the golden
/// gamma): splitmix64(state) before the advance.
inline uint64_t splitmix64_next(uint64_t& state) {
  const uint64_t out = splitmix64(state);
  state += 0x9E3779B97F4A7C15ULL;
  return out;
}

}  // namespace llmcap::base
