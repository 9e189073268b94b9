// Private to the attention kernels: one (kv head, token range) piece of decode attention, with
// one implementation per instruction set and KV element type (attention.cpp, attention_avx2.cpp,
// attention_avx512.cpp), put in the kernel tables by kernels/dispatch.cpp (AttendKernel).
#pragma once

#include <cstdint>

#include "kernels/attention.h"

namespace llmcap::kernels::detail {

/// Inputs and outputs of one piece: `group` query heads against `tokens` rows of one KV head.
/// Outputs are unnormalised: acc[g][d] = sum_t exp(s_gt - max[g]) v_t[d],
/// sum[g] = sum_t exp(s_gt - max[g]), max[g] = max_t s_gt, with s_gt = scale * q_g . k_t.
struct AttentionPiece {
  KvType type = KvType::kBf16;
  const void* k = nullptr;  ///< first row of the piece, rows of head_dim elements
  const void* v = nullptr;
  int64_t tokens = 0;  ///< >= 1
  int64_t head_dim = 0;
  const float* q = nullptr;  ///< [group][head_dim]
  int64_t group = 0;
  float scale = 1;
  bool bf16_dot = false;     ///< AVX-512 only: vdpbf16ps for q.k (bf16 KV)
  bool bf16_pv_dot = false;  ///< AVX-512 only: vdpbf16ps for p.V over token pairs (bf16 KV)
  float* acc = nullptr;      ///< [group][head_dim], overwritten
  float* max = nullptr;      ///< [group], overwritten
  float* sum = nullptr;      ///< [group], overwritten
};

// piece.type must be the kernel's: kF32 for *_f32, kBf16 for *_bf16.
void attend_scalar_f32(const AttentionPiece& piece);  ///< the reference (attention.cpp)
void attend_scalar_bf16(const AttentionPiece& piece);
void attend_avx2_f32(const AttentionPiece& piece);
void attend_avx2_bf16(const AttentionPiece& piece);
void attend_avx512_f32(const AttentionPiece& piece);
/// Honours piece.bf16_dot and piece.bf16_pv_dot (which need AVX512_BF16).
void attend_avx512_bf16(const AttentionPiece& piece);

}  // namespace llmcap::kernels::detail
