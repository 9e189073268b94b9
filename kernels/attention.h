// Decode attention: one query token per sequence against its KV cache (grouped-query heads).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "kernels/cpu_features.h"
#include "kernels/thread_pool.h"

namespace llmcap::kernels {

/// Element type of the KV cache.
enum class KvType { kF32, kBf16 };
std::string_view to_string(KvType type);  ///< "f32" | "bf16"

/// One sequence's KV cache for one layer: K and V each laid out [kv_head][token][head_dim],
/// `capacity_tokens` tokens reserved per head, the first `context_tokens` valid. Elements are
/// f32 or bf16 (uint16) per `type`.
struct KvCacheView {
  KvType type = KvType::kBf16;
  const void* k = nullptr;
  const void* v = nullptr;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t capacity_tokens = 0;
  int64_t context_tokens = 0;  ///< 1 <= context_tokens <= capacity_tokens

  /// Bytes of K and V that one attention call reads: 2 x kv_heads x context x head_dim x size.
  int64_t bytes_read() const;
};

/// Bytes at whose multiples each KV head's rows should start (kv_capacity_tokens).
inline constexpr int64_t kKvHeadAlignBytes = 4096;
/// kv_capacity_tokens rounds up to multiples of at most this many tokens; rows that would need
/// more (head dims whose row size shares few factors of two with 4 KiB, such as 13 or 100 bf16)
/// are not aligned.
inline constexpr int64_t kMaxKvAlignTokens = 256;

/// The smallest capacity_tokens >= context_tokens whose rows of one KV head (capacity x head_dim
/// x element size) fill a whole number of kKvHeadAlignBytes, so that every head of a cache laid
/// out [kv_head][capacity][head_dim] from a 4 KiB-aligned base starts on a 4 KiB boundary (as
/// the blocks of a paged KV cache do). decode_attention streams such caches faster: Llama-8B
/// layout (8 KV heads of 128 bf16 dims), 2 threads, Zen 3 VM (2026-12-01), KV from memory,
/// layouts timed back to back in 9 rounds: 1,024 tokens 391-411 us per call with capacity 1,024,
/// 1,040 or 2,048 against 459 with 1,025 or 1,032; 4,096 tokens 1,380-1,411 us against 1,653
/// with 4,097; f32 1,024 tokens 964-988 us against 1,105 with 1,025. (64-dim bf16 heads did not
/// care.) Rows that would need rounding by more than kMaxKvAlignTokens are left as they are
/// (returns context_tokens). Throws std::invalid_argument for context_tokens < 1 or head_dim < 1.
int64_t kv_capacity_tokens(int64_t context_tokens, int64_t head_dim, KvType type);

/// out[h * head_dim + d] = sum_t softmax_t(scale * q_h . k_{g(h),t}) v_{g(h),t}[d]
/// for query heads h in [0, num_q_heads), g(h) = h / (num_q_heads / num_kv_heads).
/// Each KV head is read once for all the query heads that share it (grouped-query attention,
/// Ainslie et al. 2023). Softmax is computed in f32 with the running-max (online) form
/// (Milakov & Gimelshein 2018). Shapes: q.size() == out.size() == num_q_heads * head_dim;
/// num_q_heads a multiple of num_kv_heads. Threads split the KV heads (and, for long contexts,
/// the tokens; partial results are merged with the log-sum-exp rule). The (kv head, token)
/// pairs are cut into one contiguous range per thread, so every thread streams an equal share
/// of the cache. Throws std::invalid_argument for a shape mismatch or an unsupported isa.
void decode_attention(std::span<const float> q, int64_t num_q_heads, const KvCacheView& kv,
                      float scale, std::span<float> out, ThreadPool& pool, Isa isa = best_isa());

/// Tuning knobs of decode_attention (for benchmarks and tests; the defaults are the fastest
/// exact choice measured on the development machine).
struct AttentionOptions {
  /// bf16 KV on a CPU with AVX512_BF16, isa kAvx512: round q to bf16 and form q.k with
  /// vdpbf16ps instead of widening k to f32 exactly (each product then carries q's rounding,
  /// 2^-9 relative). Measured on AMD EPYC (Zen 4 class, 2 threads, Llama-3.1-8B shapes): 0-5%
  /// faster. On a Zen 5 VM with the kernel of 2026-12-01 (Llama-3.1-8B layout): from cache on
  /// one thread 11.8 against 13.1 ns per (KV head, token) (1.11x); from memory, two threads
  /// (attention_bench, three runs, read probe 88-95 GB/s), 62.0-65.4% of the read bandwidth at
  /// 4,096 and 32,768 tokens against the exact path's 61.7-67.9%: no faster. Off by default: the
  /// exact path is what the accuracy tests hold. Ignored elsewhere.
  bool bf16_qk_dot = false;
  /// bf16 KV on a CPU with AVX512_BF16, isa kAvx512: round the softmax weights p to bf16 and
  /// form p.V with vdpbf16ps over pairs of tokens (V rows interleaved in registers) instead of
  /// widening V to f32 and one FMA per token: half the multiply instructions, each weight
  /// carrying a 2^-9 relative rounding. On the Zen 5 VM above, alone: from cache 12.1 ns per
  /// (KV head, token) on one thread; from memory, two threads, 64.1-68.4% of the read bandwidth
  /// (4,096 and 32,768 tokens), the best of the four; with bf16_qk_dot: 10.6 ns from cache,
  /// 60.3-64.6% from memory. Ignored elsewhere.
  bool bf16_pv_dot = false;
  /// A thread is given at least this many (kv head, token) pairs before another thread joins:
  /// smaller calls run on fewer threads. >= 1.
  int64_t min_tokens_per_thread = 512;
};

/// decode_attention with explicit options; throws std::invalid_argument as above and for
/// options.min_tokens_per_thread < 1.
void decode_attention(std::span<const float> q, int64_t num_q_heads, const KvCacheView& kv,
                      float scale, std::span<float> out, ThreadPool& pool, Isa isa,
                      const AttentionOptions& options);

}  // namespace llmcap::kernels
