// The prefix identity of a request's tokens, for prefix caching: which blocks of its context
// (prompt, then output) are equal to blocks of other requests. Shared by the simulator's
// prefix cache (sim/prefix_cache.h), the real serving loop (serve/) and the workload readers
// (a trace's block hashes, multi-turn sessions).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

namespace llmcap::sim {

/// A request's context (prompt tokens, then output tokens) cut into blocks of block_tokens
/// tokens. Block j has the key k_j = prefix_chain(k_{j-1}, x_j), k_{-1} = kPrefixChainStart,
/// so equal keys mean equal prefixes (as vLLM's chained block hashes), where x_j is
///  - (*hashes)[begin + j] for a block that a trace hashed and that lies wholly in the prompt
///    (j < count and (j + 1) x block_tokens <= prompt tokens): a trace's hash ids, e.g.
///    Mooncake's hash_ids of 512-token blocks;
///  - `stream` otherwise: every block of a conversation's token stream after the hashed ones.
///    Every turn of one multi-turn session carries the session's stream, so turn t + 1 (whose
///    prompt is turn t's prompt, its output and a new message) finds turn t's blocks; a
///    request that shares nothing beyond its hashes carries a stream value of its own.
/// block_tokens == 0: the request shares no block with any other (no keys).
struct PrefixIdentity {
  /// A trace's block hashes, shared by all its requests (null: none).
  std::shared_ptr<const std::vector<uint64_t>> hashes;
  int64_t begin = 0;         ///< this request's first hash in *hashes
  int32_t count = 0;         ///< its hashes (a trace: ceil(prompt / block_tokens))
  int32_t block_tokens = 0;  ///< tokens per keyed block, > 0 when keyed
  uint64_t stream = 0;       ///< the conversation's stream id (see above)

  bool keyed() const { return block_tokens > 0; }
};

inline constexpr uint64_t kPrefixChainStart = 0x6a09e667f3bcc908ULL;
/// Seed of the private streams the simulator gives unkeyed sequences it preempts (with prefix
/// caching): stream = prefix_chain(kPrivateStreamSalt, request id).
inline constexpr uint64_t kPrivateStreamSalt = 0xbb67ae8584caa73bULL;

/// splitmix64's finaliser over (prev, x): a fixed, platform-independent mix.
inline uint64_t prefix_chain(uint64_t prev, uint64_t x) {
  uint64_t z = prev ^ (x + 0x9e3779b97f4a7c15ULL + (prev << 6) + (prev >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

/// Appends to `keys` the keys k_0 .. k_{num_blocks - 1} of the first num_blocks blocks (of
/// id.block_tokens tokens) of a request of num_prompt_tokens prompt tokens. Nothing when the
/// identity is not keyed.
inline void append_prefix_keys(const PrefixIdentity& id, int64_t num_prompt_tokens,
                               int64_t num_blocks, std::vector<uint64_t>& keys) {
  if (!id.keyed()) return;
  uint64_t k = kPrefixChainStart;
  const int64_t hashed_blocks = std::min<int64_t>(id.count, num_prompt_tokens / id.block_tokens);
  for (int64_t j = 0; j < num_blocks; ++j) {
    const uint64_t x = j < hashed_blocks ? (*id.hashes)[id.begin + j] : id.stream;
    k = prefix_chain(k, x);
    keys.push_back(k);
  }
}

}  // namespace llmcap::sim
