#include "kernels/attention.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/attention_internal.h"
#include "kernels/dispatch.h"

namespace llmcap::kernels {

std::string_view to_string(KvType type) {
  switch (type) {
    case KvType::kF32:
      return "f32";
    case KvType::kBf16:
      return "bf16";
  }
  return "unknown";
}

int64_t kv_capacity_tokens(int64_t context_tokens, int64_t head_dim, KvType type) {
  if (context_tokens < 1 || head_dim < 1) {
    throw std::invalid_argument("kv_capacity_tokens: context_tokens " +
                                std::to_string(context_tokens) + ", head_dim " +
                                std::to_string(head_dim) + ", expected both >= 1");
  }
  const int64_t row_bytes = head_dim * (type == KvType::kF32 ? 4 : 2);
  int64_t align = kKvHeadAlignBytes / std::gcd(kKvHeadAlignBytes, row_bytes);  // tokens
  if (align > kMaxKvAlignTokens) align = 1;  // odd head dims: not worth the memory
  return (context_tokens + align - 1) / align * align;
}

int64_t KvCacheView::bytes_read() const {
  const int64_t element_bytes = type == KvType::kF32 ? 4 : 2;
  return 2 * num_kv_heads * context_tokens * head_dim * element_bytes;
}

namespace detail {

namespace {
inline float bf16_to_f32(uint16_t h) {
  uint32_t bits = static_cast<uint32_t>(h) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

template <class Elem>
inline float load(const Elem* p, int64_t i) {
  if constexpr (sizeof(Elem) == 2) {
    return bf16_to_f32(p[i]);
  } else {
    return p[i];
  }
}

/// Token by token, all query heads of the group per K/V row; the running max is updated per
/// token (the textbook online softmax).
template <class Elem>
void attend_scalar_typed(const AttentionPiece& pc) {
  const int64_t d = pc.head_dim, group = pc.group;
  const Elem* k = static_cast<const Elem*>(pc.k);
  const Elem* v = static_cast<const Elem*>(pc.v);
  for (int64_t g = 0; g < group; ++g) {
    pc.max[g] = -std::numeric_limits<float>::infinity();
    pc.sum[g] = 0;
    std::fill(pc.acc + g * d, pc.acc + (g + 1) * d, 0.0f);
  }
  for (int64_t t = 0; t < pc.tokens; ++t) {
    const Elem* kt = k + t * d;
    const Elem* vt = v + t * d;
    for (int64_t g = 0; g < group; ++g) {
      const float* qg = pc.q + g * d;
      float dot = 0;
      for (int64_t i = 0; i < d; ++i) dot += qg[i] * load(kt, i);
      const float s = pc.scale * dot;
      float* acc = pc.acc + g * d;
      if (s > pc.max[g]) {
        const float alpha = std::exp(pc.max[g] - s);  // 0 for the first token
        pc.sum[g] *= alpha;
        for (int64_t i = 0; i < d; ++i) acc[i] *= alpha;
        pc.max[g] = s;
      }
      const float p = std::exp(s - pc.max[g]);
      pc.sum[g] += p;
      for (int64_t i = 0; i < d; ++i) acc[i] += p * load(vt, i);
    }
  }
}
}  // namespace

void attend_scalar_f32(const AttentionPiece& piece) { attend_scalar_typed<float>(piece); }
void attend_scalar_bf16(const AttentionPiece& piece) { attend_scalar_typed<uint16_t>(piece); }

}  // namespace detail

namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::invalid_argument("decode_attention: " + what);
}

/// One contiguous range of tokens of one KV head, run by one thread.
struct Piece {
  int64_t kv_head, t0, t1;
  int64_t slot;  ///< -1: the whole head, finalised into out; else index of its partial result
};

struct Plan {
  std::vector<Piece> pieces;
  std::vector<int64_t> thread_begin;  ///< pieces of thread i: [thread_begin[i], [i + 1])
  std::vector<float> partial;         ///< per slot: acc [group][d], max [group], sum [group]
};

}  // namespace

void decode_attention(std::span<const float> q, int64_t num_q_heads, const KvCacheView& kv,
                      float scale, std::span<float> out, ThreadPool& pool, Isa isa) {
  decode_attention(q, num_q_heads, kv, scale, out, pool, isa, AttentionOptions{});
}

void decode_attention(std::span<const float> q, int64_t num_q_heads, const KvCacheView& kv,
                      float scale, std::span<float> out, ThreadPool& pool, Isa isa,
                      const AttentionOptions& options) {
  const KernelTable& table = kernel_table(isa, "decode_attention");
  if (kv.num_kv_heads < 1)
    fail("num_kv_heads must be >= 1, got " + std::to_string(kv.num_kv_heads));
  if (kv.head_dim < 1) fail("head_dim must be >= 1, got " + std::to_string(kv.head_dim));
  if (num_q_heads < 1 || num_q_heads % kv.num_kv_heads != 0) {
    fail("num_q_heads (" + std::to_string(num_q_heads) + ") must be a positive multiple of " +
         "num_kv_heads (" + std::to_string(kv.num_kv_heads) + ")");
  }
  if (kv.context_tokens < 1 || kv.context_tokens > kv.capacity_tokens) {
    fail("context_tokens (" + std::to_string(kv.context_tokens) + ") must be in [1, " +
         "capacity_tokens (" + std::to_string(kv.capacity_tokens) + ")]");
  }
  const int64_t d = kv.head_dim;
  if (static_cast<int64_t>(q.size()) != num_q_heads * d) {
    fail("q.size() (" + std::to_string(q.size()) + ") != num_q_heads * head_dim (" +
         std::to_string(num_q_heads) + " * " + std::to_string(d) + ")");
  }
  if (static_cast<int64_t>(out.size()) != num_q_heads * d) {
    fail("out.size() (" + std::to_string(out.size()) + ") != num_q_heads * head_dim (" +
         std::to_string(num_q_heads) + " * " + std::to_string(d) + ")");
  }
  if (kv.k == nullptr || kv.v == nullptr) fail("kv.k and kv.v must not be null");
  if (!std::isfinite(scale)) fail("scale must be finite, got " + std::to_string(scale));
  if (options.min_tokens_per_thread < 1) {
    fail("options.min_tokens_per_thread must be >= 1, got " +
         std::to_string(options.min_tokens_per_thread));
  }

  AttendKernel* const attend = table.attend_for(kv.type);
  const bool bf16_ok = table.attention_bf16_dots && kv.type == KvType::kBf16;
  const bool bf16_dot = options.bf16_qk_dot && bf16_ok;
  const bool bf16_pv_dot = options.bf16_pv_dot && bf16_ok;

  const int64_t heads = kv.num_kv_heads, context = kv.context_tokens;
  const int64_t group = num_q_heads / heads;
  const int64_t elem = kv.type == KvType::kF32 ? 4 : 2;
  const int64_t work = heads * context;
  const int64_t threads =
      std::clamp<int64_t>(work / options.min_tokens_per_thread, 1, pool.num_threads());

  // Cut the (head, token) pairs into `threads` equal contiguous ranges; a range that covers a
  // head only in part yields a partial result, merged below.
  thread_local Plan plan;
  plan.pieces.clear();
  plan.thread_begin.assign(1, 0);
  int64_t slots = 0;
  for (int64_t i = 0; i < threads; ++i) {
    const int64_t w0 = work * i / threads, w1 = work * (i + 1) / threads;
    for (int64_t w = w0; w < w1;) {
      const int64_t h = w / context, t0 = w % context;
      const int64_t t1 = std::min(context, t0 + (w1 - w));
      const bool whole = t0 == 0 && t1 == context;
      plan.pieces.push_back({h, t0, t1, whole ? -1 : slots++});
      w += t1 - t0;
    }
    plan.thread_begin.push_back(static_cast<int64_t>(plan.pieces.size()));
  }
  const int64_t slot_floats = group * d + 2 * group;
  if (static_cast<int64_t>(plan.partial.size()) < slots * slot_floats) {
    plan.partial.resize(slots * slot_floats);
  }

  const Plan& p = plan;
  auto run = [&](int64_t i0, int64_t i1, int) {
    thread_local std::vector<float> stats;
    if (static_cast<int64_t>(stats.size()) < 2 * group) stats.resize(2 * group);
    for (int64_t i = i0; i < i1; ++i) {
      for (int64_t j = p.thread_begin[i]; j < p.thread_begin[i + 1]; ++j) {
        const Piece& pc = p.pieces[j];
        detail::AttentionPiece a;
        a.type = kv.type;
        const int64_t row0 = (pc.kv_head * kv.capacity_tokens + pc.t0) * d;
        a.k = static_cast<const char*>(kv.k) + row0 * elem;
        a.v = static_cast<const char*>(kv.v) + row0 * elem;
        a.tokens = pc.t1 - pc.t0;
        a.head_dim = d;
        a.q = q.data() + pc.kv_head * group * d;
        a.group = group;
        a.scale = scale;
        a.bf16_dot = bf16_dot;
        a.bf16_pv_dot = bf16_pv_dot;
        if (pc.slot < 0) {
          a.acc = out.data() + pc.kv_head * group * d;
          a.max = stats.data();
          a.sum = stats.data() + group;
        } else {
          float* slot = const_cast<float*>(p.partial.data()) + pc.slot * slot_floats;
          a.acc = slot;
          a.max = slot + group * d;
          a.sum = slot + group * d + group;
        }
        attend(a);
        if (pc.slot < 0) {
          for (int64_t g = 0; g < group; ++g) {
            const float inv = 1.0f / a.sum[g];
            for (int64_t x = 0; x < d; ++x) a.acc[g * d + x] *= inv;
          }
        }
      }
    }
  };
  pool.parallel_for(threads, run);

  // Merge the partial results of split heads: consecutive slots belong to the same head.
  for (size_t j = 0; j < p.pieces.size();) {
    if (p.pieces[j].slot < 0) {
      ++j;
      continue;
    }
    size_t e = j;
    while (e < p.pieces.size() && p.pieces[e].kv_head == p.pieces[j].kv_head) ++e;
    const int64_t h = p.pieces[j].kv_head;
    for (int64_t g = 0; g < group; ++g) {
      float m = -std::numeric_limits<float>::infinity();
      for (size_t i = j; i < e; ++i) {
        m = std::max(m, p.partial[p.pieces[i].slot * slot_floats + group * d + g]);
      }
      float* o = out.data() + (h * group + g) * d;
      std::fill(o, o + d, 0.0f);
      float l = 0;
      for (size_t i = j; i < e; ++i) {
        const float* slot = p.partial.data() + p.pieces[i].slot * slot_floats;
        const float w = std::exp(slot[group * d + g] - m);
        l += w * slot[group * d + group + g];
        for (int64_t x = 0; x < d; ++x) o[x] += w * slot[g * d + x];
      }
      const float inv = 1.0f / l;
      for (int64_t x = 0; x < d; ++x) o[x] *= inv;
    }
    j = e;
  }
}

}  // namespace llmcap::kernels
