#include "kernels/decoder.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <stdexcept>
#include <string>

#include "base/random.h"
#include "kernels/bf16.h"
#include "kernels/decoder_internal.h"
#include "kernels/dispatch.h"
#include "kernels/elementwise.h"
#include "kernels/scratch.h"

namespace llmcap::kernels {
namespace detail {

uint64_t derive_seed(uint64_t seed, uint64_t stream, uint64_t index) {
  uint64_t s = seed ^ (stream * 0xD1B54A32D192ED03ull);
  base::splitmix64_next(s);
  s ^= index * 0x8CB92BA72F3D8DD7ull;
  return base::splitmix64_next(s);
}

/// Uniform in [lo, hi) from 24 random bits.
float uniform24(uint64_t bits24, float lo, float hi) {
  return lo + (hi - lo) * static_cast<float>(bits24 & 0xFFFFFF) * (1.0f / 16777216.0f);
}

std::vector<float> random_vector(int64_t n, uint64_t seed, float lo, float hi) {
  std::vector<float> v(static_cast<size_t>(n));
  uint64_t state = seed;
  for (auto& x : v) x = uniform24(base::splitmix64_next(state) >> 40, lo, hi);
  return v;
}

}  // namespace detail
namespace {

using detail::add_in_place;
using detail::derive_seed;
using detail::for_rows;
using detail::random_vector;
using detail::swiglu_blocks;

using detail::f32_to_bf16;
constexpr auto uniform = detail::uniform24;

/// PackedWeights::bytes_for in double (absurd shapes must not overflow before they are
/// refused): int8 and int4 pad rows to 16-row tiles (matmul.h).
double packed_bytes(WeightFormat format, double rows, double cols) {
  const double tile_rows = std::ceil(rows / 16) * 16;
  switch (format) {
    case WeightFormat::kF32:
      return 4 * rows * cols;
    case WeightFormat::kBf16:
      return 2 * rows * cols;
    case WeightFormat::kInt8:
      return tile_rows * std::ceil(cols / 4) * 4 + 8 * rows;
    case WeightFormat::kInt4:
      return tile_rows / 16 * std::ceil(cols / 64) * 576;
  }
  return 0;
}

int64_t kv_elem_bytes(KvType type) { return type == KvType::kF32 ? 4 : 2; }

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("ReferenceDecoder: " + what);
}

/// The mixture-of-experts fields of `s` (ReferenceDecoder's constructor states the rules).
void validate_moe(const DecoderShape& s, WeightFormat format) {
  const auto text = [](int64_t v) { return std::to_string(v); };
  require(s.num_experts >= 0 && s.num_experts <= (int64_t{1} << 20),
          "num_experts must be in [0, 2^20] (got " + text(s.num_experts) + ")");
  if (!s.is_moe()) {
    require(s.experts_per_token == 0 && s.expert_intermediate == 0 && s.shared_intermediate == 0,
            "experts_per_token, expert_intermediate and shared_intermediate must be 0 without "
            "experts (got " +
                text(s.experts_per_token) + ", " + text(s.expert_intermediate) + ", " +
                text(s.shared_intermediate) + ")");
    return;
  }
  require(s.experts_per_token >= 1 && s.experts_per_token <= s.num_experts,
          "experts_per_token must be in [1, num_experts " + text(s.num_experts) + "] (got " +
              text(s.experts_per_token) + ")");
  require(s.expert_intermediate >= 1 && s.expert_intermediate <= (int64_t{1} << 31),
          "expert_intermediate must be in [1, 2^31] (got " + text(s.expert_intermediate) + ")");
  require(s.shared_intermediate >= 0 && s.shared_intermediate <= (int64_t{1} << 31),
          "shared_intermediate must be in [0, 2^31] (got " + text(s.shared_intermediate) + ")");
  if (format == WeightFormat::kInt4) {
    const std::pair<const char*, int64_t> cols[] = {{"hidden", s.hidden},
                                                    {"num_heads x head_dim", s.q_dim()},
                                                    {"expert_intermediate", s.expert_intermediate},
                                                    {"shared_intermediate", s.shared_intermediate}};
    for (const auto& [name, value] : cols) {
      require(value % 32 == 0, std::string("int4 weights need ") + name +
                                   " to be a multiple of 32 (got " + text(value) + ")");
    }
  }
}

void validate(const DecoderShape& s, WeightFormat format, int64_t max_batch, int64_t max_context) {
  // A mixture of experts has no dense MLP: its `intermediate` is not checked.
  const std::pair<const char*, int64_t> dims[] = {{"hidden", s.hidden},
                                                  {"intermediate", s.is_moe() ? 1 : s.intermediate},
                                                  {"num_layers", s.num_layers},
                                                  {"num_heads", s.num_heads},
                                                  {"num_kv_heads", s.num_kv_heads},
                                                  {"head_dim", s.head_dim},
                                                  {"vocab", s.vocab},
                                                  {"max_batch", max_batch},
                                                  {"max_context", max_context}};
  for (const auto& [name, value] : dims) {
    require(value >= 1, std::string(name) + " must be >= 1 (got " + std::to_string(value) + ")");
    require(value <= (int64_t{1} << 31),
            std::string(name) + " must be <= 2^31 (got " + std::to_string(value) + ")");
  }
  require(s.num_heads % s.num_kv_heads == 0, "num_heads (" + std::to_string(s.num_heads) +
                                                 ") must be a multiple of num_kv_heads (" +
                                                 std::to_string(s.num_kv_heads) + ")");
  require(s.head_dim % 2 == 0,
          "head_dim must be even for RoPE (got " + std::to_string(s.head_dim) + ")");
  require(s.rope_theta > 0, "rope_theta must be > 0 (got " + std::to_string(s.rope_theta) + ")");
  require(s.rms_eps > 0, "rms_eps must be > 0 (got " + std::to_string(s.rms_eps) + ")");
  validate_moe(s, format);
  if (format == WeightFormat::kInt4 && !s.is_moe()) {
    const std::pair<const char*, int64_t> cols[] = {{"hidden", s.hidden},
                                                    {"num_heads x head_dim", s.q_dim()},
                                                    {"intermediate", s.intermediate}};
    for (const auto& [name, value] : cols) {
      require(value % 32 == 0, std::string("int4 weights need ") + name +
                                   " to be a multiple of 32 (got " + std::to_string(value) + ")");
    }
  }
}

/// Index of the first largest element of `row` (as std::max_element): a 16-lane running maximum
/// the compiler vectorises, then a scan for its first occurrence.
int64_t argmax(std::span<const float> row) {
  constexpr size_t kLanes = 16;
  const size_t n = row.size();
  float best = row[0];
  size_t i = 0;
  if (n >= kLanes) {
    float lane[kLanes];
    for (size_t j = 0; j < kLanes; ++j) lane[j] = row[j];
    for (i = kLanes; i + kLanes <= n; i += kLanes) {
      for (size_t j = 0; j < kLanes; ++j) lane[j] = row[i + j] > lane[j] ? row[i + j] : lane[j];
    }
    for (size_t j = 0; j < kLanes; ++j) best = lane[j] > best ? lane[j] : best;
  }
  for (; i < n; ++i) best = row[i] > best ? row[i] : best;
  for (size_t k = 0; k < n; ++k) {
    if (row[k] == best) return static_cast<int64_t>(k);
  }
  return static_cast<int64_t>(std::max_element(row.begin(), row.end()) - row.begin());  // NaNs
}

}  // namespace

namespace detail {

/// act[b][i] = SwiGLU(gate, up of feature i) for the gate_up_row layout of gu (rows of
/// 2 x intermediate): with several rows, the feature blocks split over the pool as the gate/up
/// product split its output rows, so each thread reads the lines its own product wrote.
void swiglu_blocks(const float* gu, float* act, int64_t batch, int64_t intermediate,
                   ThreadPool& pool, Isa isa) {
  const KernelTable& k = kernel_table(isa, "swiglu");
  const int64_t blocks = (intermediate + kGateUpBlock - 1) / kGateUpBlock;
  const auto run = [&](int64_t j0, int64_t j1) {
    for (int64_t b = 0; b < batch; ++b) {
      const float* row = gu + b * 2 * intermediate;
      for (int64_t j = j0; j < j1; ++j) {
        const int64_t n = std::min(kGateUpBlock, intermediate - j * kGateUpBlock);
        const float* gate = row + j * 2 * kGateUpBlock;
        k.swiglu(gate, gate + n, act + b * intermediate + j * kGateUpBlock, n);
      }
    }
  };
  if (batch == 1) {
    run(0, blocks);
    return;
  }
  pool.parallel_for(blocks, [&](int64_t j0, int64_t j1, int) { run(j0, j1); });
}

}  // namespace detail

void ReferenceDecoder::KvFree::operator()(uint8_t* p) const noexcept { std::free(p); }

ReferenceDecoder::ReferenceDecoder(const DecoderShape& shape, WeightFormat format, KvType kv_type,
                                   int64_t max_batch, int64_t max_context, uint64_t seed,
                                   int64_t max_bytes)
    : shape_(shape),
      format_(format),
      kv_type_(kv_type),
      max_batch_(max_batch),
      max_context_(max_context),
      seed_(seed) {
  validate(shape, format, max_batch, max_context);
  const DecoderShape& s = shape_;

  // Memory needed, in double so that absurd shapes cannot overflow.
  const double h = static_cast<double>(s.hidden), inter = static_cast<double>(s.intermediate);
  const double qd = static_cast<double>(s.q_dim()), rows = static_cast<double>(s.qkv_rows());
  const double ei = static_cast<double>(s.expert_intermediate);
  const double si = static_cast<double>(s.shared_intermediate);
  const double mlp_weights =
      s.is_moe() ? packed_bytes(format, static_cast<double>(s.num_experts), h) +
                       static_cast<double>(s.num_experts) *
                           (packed_bytes(format, 2 * ei, h) + packed_bytes(format, h, ei)) +
                       (si > 0 ? packed_bytes(format, 2 * si, h) + packed_bytes(format, h, si) : 0)
                 : packed_bytes(format, 2 * inter, h) + packed_bytes(format, h, inter);
  const double layer_weights = packed_bytes(format, rows, h) + packed_bytes(format, h, qd) +
                               mlp_weights + 4 * (2 * h + (s.qkv_bias ? rows : 0));
  const double weights = static_cast<double>(s.num_layers) * layer_weights +
                         packed_bytes(format, static_cast<double>(s.vocab), h) + 4 * h;
  kv_elem_bytes_ = kv_elem_bytes(kv_type);
  kv_capacity_ = kv_capacity_tokens(max_context, s.head_dim, kv_type);
  const double kv = static_cast<double>(s.num_layers) * 2 * static_cast<double>(s.kv_dim()) *
                    static_cast<double>(kv_elem_bytes_) * static_cast<double>(max_batch) *
                    static_cast<double>(kv_capacity_);
  // A mixture of experts: router logits and, per (token, expert) pair, input, gate/up,
  // activation and output.
  const double mlp_rows = s.is_moe()
                              ? 3 * si + static_cast<double>(s.num_experts) +
                                    static_cast<double>(s.experts_per_token) * (2 * h + 3 * ei)
                              : 3 * inter;
  const double activations = 4.0 * static_cast<double>(max_batch) *
                             (3 * h + rows + qd + mlp_rows + static_cast<double>(s.vocab));
  const double needed = weights + kv + activations;
  if (needed > static_cast<double>(max_bytes)) {
    std::ostringstream msg;
    msg.precision(15);
    msg << "ReferenceDecoder: needs " << needed << " bytes (weights " << weights << ", KV cache "
        << kv << ", activations " << activations << "), more than max_bytes " << max_bytes;
    throw std::invalid_argument(msg.str());
  }

  // Weights: stream 1 = matrices, 2 = f32 vectors. The matrices hold uniform [-1, 1) values, so
  // RMSNorm weights of about 1/sqrt(hidden) keep the projections' outputs near unit scale (like
  // a properly initialised model): attention scores stay moderate instead of saturating the
  // softmax, and rounding in the kernels is not amplified from layer to layer.
  const float norm_lo = 0.5f / std::sqrt(static_cast<float>(s.hidden));
  const float norm_hi = 1.5f / std::sqrt(static_cast<float>(s.hidden));
  uint64_t matrix = 0, vector = 0;
  layers_.reserve(static_cast<size_t>(s.num_layers));
  for (int64_t l = 0; l < s.num_layers; ++l) {
    DecoderLayerWeights w;
    w.attn_norm = random_vector(s.hidden, derive_seed(seed, 2, vector++), norm_lo, norm_hi);
    w.qkv = PackedWeights::random(format, s.qkv_rows(), s.hidden, derive_seed(seed, 1, matrix++));
    if (s.qkv_bias) w.qkv_bias = random_vector(s.qkv_rows(), derive_seed(seed, 2, vector++), -1, 1);
    w.o = PackedWeights::random(format, s.hidden, s.q_dim(), derive_seed(seed, 1, matrix++));
    w.mlp_norm = random_vector(s.hidden, derive_seed(seed, 2, vector++), norm_lo, norm_hi);
    if (s.is_moe()) {
      init_moe_weights(w, matrix);
    } else {
      w.gate_up = PackedWeights::random(format, 2 * s.intermediate, s.hidden,
                                        derive_seed(seed, 1, matrix++));
      w.down =
          PackedWeights::random(format, s.hidden, s.intermediate, derive_seed(seed, 1, matrix++));
    }
    layers_.push_back(std::move(w));
  }
  final_norm_ = random_vector(s.hidden, derive_seed(seed, 2, vector++), norm_lo, norm_hi);
  lm_head_ = PackedWeights::random(format, s.vocab, s.hidden, derive_seed(seed, 1, matrix++));

  // KV caches: reserved now, touched as contexts reach them.
  const int64_t kv_total =
      s.num_layers * max_batch * 2 * s.kv_dim() * kv_capacity_ * kv_elem_bytes_;
  const size_t kv_alloc = (static_cast<size_t>(kv_total) + 63) / 64 * 64;
  kv_.reset(static_cast<uint8_t*>(detail::allocate_large(static_cast<int64_t>(kv_alloc))));
  if (!kv_) throw std::bad_alloc();
  pristine_.assign(static_cast<size_t>(max_batch), 0);
  contexts_.assign(static_cast<size_t>(max_batch), 0);
  next_tokens_.assign(static_cast<size_t>(max_batch), 0);

  ensure_rows(max_batch);
  logits_.resize(static_cast<size_t>(max_batch) * static_cast<size_t>(s.vocab));
}

void ReferenceDecoder::ensure_rows(int64_t rows) {
  if (rows <= activation_rows_) return;
  const DecoderShape& s = shape_;
  const auto n = static_cast<size_t>(rows);
  x_.resize(n * static_cast<size_t>(s.hidden));
  h_.resize(n * static_cast<size_t>(s.hidden));
  proj_.resize(n * static_cast<size_t>(s.hidden));
  qkv_.resize(n * static_cast<size_t>(s.qkv_rows()));
  attn_.resize(n * static_cast<size_t>(s.q_dim()));
  // A mixture of experts' shared expert uses gu_ and act_ (its routed experts, pair_*).
  const auto mlp_width = static_cast<size_t>(s.is_moe() ? s.shared_intermediate : s.intermediate);
  gu_.resize(n * 2 * mlp_width);
  act_.resize(n * mlp_width);
  activation_rows_ = rows;
}

void ReferenceDecoder::check_slot(int64_t slot, const char* what) const {
  if (slot < 0 || slot >= max_batch_) {
    throw std::out_of_range(std::string("ReferenceDecoder::") + what + ": slot " +
                            std::to_string(slot) + " outside [0, max_batch " +
                            std::to_string(max_batch_) + ")");
  }
}

int64_t ReferenceDecoder::slot_context(int64_t slot) const {
  check_slot(slot, "slot_context");
  return contexts_[static_cast<size_t>(slot)];
}

int64_t ReferenceDecoder::slot_next_token(int64_t slot) const {
  check_slot(slot, "slot_next_token");
  return next_tokens_[static_cast<size_t>(slot)];
}

ReferenceDecoder::~ReferenceDecoder() = default;

const DecoderLayerWeights& ReferenceDecoder::layer(int64_t i) const {
  if (i < 0 || i >= shape_.num_layers) {
    throw std::out_of_range("ReferenceDecoder: layer " + std::to_string(i) + " of " +
                            std::to_string(shape_.num_layers));
  }
  return layers_[static_cast<size_t>(i)];
}

uint8_t* ReferenceDecoder::kv_k(int64_t layer_index, int64_t seq) const {
  const int64_t block = shape_.kv_dim() * kv_capacity_ * kv_elem_bytes_;  // one of K or V
  return kv_.get() + ((layer_index * max_batch_ + seq) * 2) * block;
}

uint8_t* ReferenceDecoder::kv_v(int64_t layer_index, int64_t seq) const {
  return kv_k(layer_index, seq) + shape_.kv_dim() * kv_capacity_ * kv_elem_bytes_;
}

KvCacheView ReferenceDecoder::kv_cache(int64_t layer_index, int64_t seq) const {
  if (layer_index < 0 || layer_index >= shape_.num_layers || seq < 0 || seq >= max_batch_) {
    throw std::out_of_range("ReferenceDecoder: no KV cache for layer " +
                            std::to_string(layer_index) + ", sequence " + std::to_string(seq));
  }
  KvCacheView view;
  view.type = kv_type_;
  view.k = kv_k(layer_index, seq);
  view.v = kv_v(layer_index, seq);
  view.num_kv_heads = shape_.num_kv_heads;
  view.head_dim = shape_.head_dim;
  view.capacity_tokens = kv_capacity_;
  view.context_tokens = contexts_[static_cast<size_t>(seq)];
  return view;
}

std::vector<uint8_t> ReferenceDecoder::read_kv(int64_t slot, int64_t begin, int64_t count) const {
  check_slot(slot, "read_kv");
  const int64_t context = contexts_[static_cast<size_t>(slot)];
  require(begin >= 0 && count >= 1 && begin + count <= context,
          "read_kv: positions [" + std::to_string(begin) + ", " + std::to_string(begin + count) +
              ") outside slot " + std::to_string(slot) + "'s context of " +
              std::to_string(context));
  const int64_t row = shape_.head_dim * kv_elem_bytes_;
  std::vector<uint8_t> out(static_cast<size_t>(count * kv_bytes_per_token()));
  uint8_t* dst = out.data();
  for (int64_t l = 0; l < shape_.num_layers; ++l) {
    for (const uint8_t* base : {kv_k(l, slot), kv_v(l, slot)}) {
      for (int64_t g = 0; g < shape_.num_kv_heads; ++g) {
        const uint8_t* src = base + (g * kv_capacity_ + begin) * row;
        std::copy(src, src + count * row, dst);
        dst += count * row;
      }
    }
  }
  return out;
}

void ReferenceDecoder::write_kv(int64_t slot, int64_t begin, std::span<const uint8_t> kv) {
  check_slot(slot, "write_kv");
  const int64_t per_token = kv_bytes_per_token();
  const auto bytes = static_cast<int64_t>(kv.size());
  const int64_t count = bytes / per_token;
  const int64_t context = contexts_[static_cast<size_t>(slot)];
  require(count >= 1 && bytes % per_token == 0, "write_kv: " + std::to_string(bytes) +
                                                    " bytes are not whole tokens of " +
                                                    std::to_string(per_token) + " bytes");
  require(begin >= 0 && begin <= context && begin + count <= max_context_,
          "write_kv: positions [" + std::to_string(begin) + ", " + std::to_string(begin + count) +
              ") do not extend slot " + std::to_string(slot) + "'s context of " +
              std::to_string(context) + " within max_context " + std::to_string(max_context_));
  const int64_t row = shape_.head_dim * kv_elem_bytes_;
  const uint8_t* src = kv.data();
  for (int64_t l = 0; l < shape_.num_layers; ++l) {
    for (uint8_t* base : {kv_k(l, slot), kv_v(l, slot)}) {
      for (int64_t g = 0; g < shape_.num_kv_heads; ++g) {
        std::copy(src, src + count * row, base + (g * kv_capacity_ + begin) * row);
        src += count * row;
      }
    }
  }
  int64_t& pristine = pristine_[static_cast<size_t>(slot)];
  pristine = std::min(pristine, begin);
  contexts_[static_cast<size_t>(slot)] = begin + count;
}

void ReferenceDecoder::fill_random_kv(int64_t seq, int64_t begin, int64_t end) {
  const int64_t hd = shape_.head_dim;
  for (int64_t l = 0; l < shape_.num_layers; ++l) {
    for (int kind = 0; kind < 2; ++kind) {
      uint8_t* base = kind == 0 ? kv_k(l, seq) : kv_v(l, seq);
      for (int64_t g = 0; g < shape_.num_kv_heads; ++g) {
        for (int64_t t = begin; t < end; ++t) {
          // One stream per (layer, k|v, head, position): independent of the slot.
          const uint64_t row = ((static_cast<uint64_t>(l) * 2 + static_cast<uint64_t>(kind)) *
                                    static_cast<uint64_t>(shape_.num_kv_heads) +
                                static_cast<uint64_t>(g)) *
                                   static_cast<uint64_t>(max_context_) +
                               static_cast<uint64_t>(t);
          // A mixture of experts: one stream per slot too (ReferenceDecoder::set_contexts).
          const uint64_t stream = shape_.is_moe() ? 4 + static_cast<uint64_t>(seq) : 3;
          uint64_t state = derive_seed(seed_, stream, row);
          const int64_t offset = (g * kv_capacity_ + t) * hd;
          if (kv_type_ == KvType::kF32) {
            float* dst = reinterpret_cast<float*>(base) + offset;
            for (int64_t d = 0; d < hd; d += 2) {
              const uint64_t r = base::splitmix64_next(state);
              dst[d] = uniform(r >> 40, -1, 1);
              dst[d + 1] = uniform(r >> 8, -1, 1);
            }
          } else {
            uint16_t* dst = reinterpret_cast<uint16_t*>(base) + offset;
            for (int64_t d = 0; d < hd; d += 2) {
              const uint64_t r = base::splitmix64_next(state);
              dst[d] = f32_to_bf16(uniform(r >> 40, -1, 1));
              dst[d + 1] = f32_to_bf16(uniform(r >> 8, -1, 1));
            }
          }
        }
      }
    }
  }
}

void ReferenceDecoder::set_contexts(std::span<const int64_t> context_tokens,
                                    std::span<const int64_t> next_tokens) {
  const auto batch = static_cast<int64_t>(context_tokens.size());
  require(batch >= 1 && batch <= max_batch_, "set_contexts: batch " + std::to_string(batch) +
                                                 " outside [1, max_batch " +
                                                 std::to_string(max_batch_) + "]");
  require(next_tokens.empty() || next_tokens.size() == context_tokens.size(),
          "set_contexts: " + std::to_string(next_tokens.size()) + " next tokens for " +
              std::to_string(batch) + " sequences");
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t c = context_tokens[static_cast<size_t>(b)];
    require(c >= 0 && c < max_context_,
            "set_contexts: context " + std::to_string(c) + " of sequence " + std::to_string(b) +
                " outside [0, max_context " + std::to_string(max_context_) + ")");
    if (!next_tokens.empty()) {
      const int64_t t = next_tokens[static_cast<size_t>(b)];
      require(t >= 0 && t < shape_.vocab,
              "set_contexts: token " + std::to_string(t) + " of sequence " + std::to_string(b) +
                  " outside [0, vocab " + std::to_string(shape_.vocab) + ")");
    }
  }
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t c = context_tokens[static_cast<size_t>(b)];
    int64_t& pristine = pristine_[static_cast<size_t>(b)];
    if (pristine < c) {
      fill_random_kv(b, pristine, c);
      pristine = c;
    }
  }
  batch_slots_.resize(static_cast<size_t>(batch));
  for (int64_t b = 0; b < batch; ++b) {
    const auto i = static_cast<size_t>(b);
    contexts_[i] = context_tokens[i];
    next_tokens_[i] = next_tokens.empty() ? 0 : next_tokens[i];
    batch_slots_[i] = b;
  }
  batch_ = batch;
  logits_batch_ = 0;
}

void ReferenceDecoder::step(ThreadPool& pool, Isa isa, StepSections* sections) {
  if (batch_ == 0) throw std::logic_error("ReferenceDecoder::step before set_contexts");
  step_slots(batch_slots_, pool, isa, sections);
}

void ReferenceDecoder::step_slots(std::span<const int64_t> slots, ThreadPool& pool, Isa isa,
                                  StepSections* sections) {
  const auto n = static_cast<int64_t>(slots.size());
  require(n >= 1 && n <= max_batch_, "step_slots: " + std::to_string(n) +
                                         " slots outside [1, max_batch " +
                                         std::to_string(max_batch_) + "]");
  for (int64_t b = 0; b < n; ++b) {
    const int64_t slot = slots[static_cast<size_t>(b)];
    require(slot >= 0 && slot < max_batch_, "step_slots: slot " + std::to_string(slot) +
                                                " outside [0, max_batch " +
                                                std::to_string(max_batch_) + ")");
    require(std::find(slots.begin(), slots.begin() + b, slot) == slots.begin() + b,
            "step_slots: slot " + std::to_string(slot) + " appears twice");
  }
  for (const int64_t slot : slots) {
    if (contexts_[static_cast<size_t>(slot)] >= max_context_) {
      throw std::logic_error("ReferenceDecoder::step: sequence " + std::to_string(slot) +
                             " is full (max_context " + std::to_string(max_context_) + ")");
    }
  }
  rows_.clear();
  logit_rows_.clear();
  for (int64_t b = 0; b < n; ++b) {
    const auto slot = static_cast<size_t>(slots[static_cast<size_t>(b)]);
    rows_.push_back({static_cast<int64_t>(slot), contexts_[slot], next_tokens_[slot]});
    logit_rows_.push_back(b);
  }
  forward(rows_, logit_rows_, /*attention_over_rows=*/false, pool, isa, sections);
}

void ReferenceDecoder::prefill(std::span<const PrefillSequence> sequences, ThreadPool& pool,
                               Isa isa, StepSections* sections) {
  const auto n = static_cast<int64_t>(sequences.size());
  require(n >= 1 && n <= max_batch_, "prefill: " + std::to_string(n) +
                                         " sequences outside [1, max_batch " +
                                         std::to_string(max_batch_) + "]");
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const PrefillSequence& seq = sequences[static_cast<size_t>(i)];
    const std::string where =
        "prefill: sequence " + std::to_string(i) + " (slot " + std::to_string(seq.slot) + "): ";
    require(seq.slot >= 0 && seq.slot < max_batch_,
            where + "slot outside [0, max_batch " + std::to_string(max_batch_) + ")");
    for (int64_t j = 0; j < i; ++j) {
      require(sequences[static_cast<size_t>(j)].slot != seq.slot,
              where + "slot also used by sequence " + std::to_string(j));
    }
    const auto count = static_cast<int64_t>(seq.tokens.size());
    require(count >= 1, where + "no tokens");
    const int64_t context = contexts_[static_cast<size_t>(seq.slot)];
    require(seq.cached_tokens >= 0 && seq.cached_tokens <= context,
            where + "cached_tokens " + std::to_string(seq.cached_tokens) +
                " outside [0, slot context " + std::to_string(context) + "]");
    require(seq.cached_tokens + count <= max_context_,
            where + "cached_tokens " + std::to_string(seq.cached_tokens) + " + " +
                std::to_string(count) + " tokens > max_context " + std::to_string(max_context_));
    for (int64_t t = 0; t < count; ++t) {
      const int64_t token = seq.tokens[static_cast<size_t>(t)];
      require(token >= 0 && token < shape_.vocab,
              where + "token " + std::to_string(token) + " at " + std::to_string(t) +
                  " outside [0, vocab " + std::to_string(shape_.vocab) + ")");
    }
    total += count;
  }
  rows_.clear();
  logit_rows_.clear();
  rows_.reserve(static_cast<size_t>(total));
  for (const PrefillSequence& seq : sequences) {
    const auto count = static_cast<int64_t>(seq.tokens.size());
    for (int64_t t = 0; t < count; ++t) {
      rows_.push_back({seq.slot, seq.cached_tokens + t, seq.tokens[static_cast<size_t>(t)]});
    }
    logit_rows_.push_back(static_cast<int64_t>(rows_.size()) - 1);
  }
  ensure_rows(total);
  forward(rows_, logit_rows_, /*attention_over_rows=*/total > 1, pool, isa, sections);
}

void ReferenceDecoder::forward(std::span<const Row> rows, std::span<const int64_t> logit_rows,
                               bool attention_over_rows, ThreadPool& pool, Isa isa,
                               StepSections* sections) {
  const auto batch = static_cast<int64_t>(rows.size());
  const auto num_logits = static_cast<int64_t>(logit_rows.size());
  const DecoderShape& s = shape_;
  const int64_t H = s.hidden, R = s.qkv_rows(), QD = s.q_dim(), KD = s.kv_dim(), I = s.intermediate,
                hd = s.head_dim;
  const auto bs = [](std::vector<float>& v, int64_t n, int64_t per_token) {
    return std::span<float>(v.data(), static_cast<size_t>(n * per_token));
  };
  const std::span<float> x = bs(x_, batch, H), h = bs(h_, batch, H), proj = bs(proj_, batch, H),
                         qkv = bs(qkv_, batch, R), attn = bs(attn_, batch, QD),
                         gu = bs(gu_, batch, 2 * I), act = bs(act_, batch, I),
                         logits = bs(logits_, num_logits, s.vocab);
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  // Section timing: mark(i) charges the time since the previous mark to section i.
  enum Section { kInputNorm, kQkv, kRopeKv, kAttention, kOut, kPostNorm, kMlp, kLmHead };
  auto last = std::chrono::steady_clock::now();
  const auto mark = [&](Section i) {
    if (sections == nullptr) return;
    const auto now = std::chrono::steady_clock::now();
    sections->seconds[i] += std::chrono::duration<double>(now - last).count();
    last = now;
  };
  if (sections != nullptr) *sections = StepSections{};

  // Embedding (tied to the LM head).
  for (int64_t b = 0; b < batch; ++b) {
    lm_head_.dequantise_row(rows[static_cast<size_t>(b)].token, x.subspan(b * H, H));
  }
  mark(kLmHead);
  // Positions written by this pass are no longer the random prefix.
  for (const Row& row : rows) {
    int64_t& pristine = pristine_[static_cast<size_t>(row.slot)];
    pristine = std::min(pristine, row.position);
  }

  const auto attention_view = [&](int64_t l, const Row& row) {
    KvCacheView view;
    view.type = kv_type_;
    view.k = kv_k(l, row.slot);
    view.v = kv_v(l, row.slot);
    view.num_kv_heads = s.num_kv_heads;
    view.head_dim = hd;
    view.capacity_tokens = kv_capacity_;
    view.context_tokens = row.position + 1;
    return view;
  };

  for (int64_t l = 0; l < s.num_layers; ++l) {
    const DecoderLayerWeights& w = layers_[static_cast<size_t>(l)];
    for_rows(pool, batch, [&](int64_t b) {
      rms_norm(x.subspan(b * H, H), w.attn_norm, H, s.rms_eps, h.subspan(b * H, H), isa);
    });
    mark(kInputNorm);
    matmul(w.qkv, h, batch, qkv, pool, isa);
    mark(kQkv);
    for_rows(pool, batch, [&](int64_t b) {
      float* row = qkv.data() + b * R;
      if (s.qkv_bias) {
        for (int64_t r = 0; r < R; ++r) row[r] += w.qkv_bias[static_cast<size_t>(r)];
      }
      const Row& token = rows[static_cast<size_t>(b)];
      const int64_t pos = token.position;
      const std::span<float> q(row, static_cast<size_t>(QD));
      const std::span<float> k(row + QD, static_cast<size_t>(KD));
      const float* v = row + QD + KD;
      rope(q, s.num_heads, hd, hd, pos, s.rope_theta, isa);
      rope(k, s.num_kv_heads, hd, hd, pos, s.rope_theta, isa);
      // Append k and v at position `pos` of each KV head.
      uint8_t* kc = kv_k(l, token.slot);
      uint8_t* vc = kv_v(l, token.slot);
      for (int64_t g = 0; g < s.num_kv_heads; ++g) {
        const int64_t dst = (g * kv_capacity_ + pos) * hd;
        const float* ks = k.data() + g * hd;
        const float* vs = v + g * hd;
        if (kv_type_ == KvType::kF32) {
          std::memcpy(reinterpret_cast<float*>(kc) + dst, ks, static_cast<size_t>(hd) * 4);
          std::memcpy(reinterpret_cast<float*>(vc) + dst, vs, static_cast<size_t>(hd) * 4);
        } else {
          const auto n = static_cast<size_t>(hd);
          convert_to_bf16({ks, n}, {reinterpret_cast<uint16_t*>(kc) + dst, n}, isa);
          convert_to_bf16({vs, n}, {reinterpret_cast<uint16_t*>(vc) + dst, n}, isa);
        }
      }
    });
    mark(kRopeKv);
    const auto attend = [&](int64_t b) {
      const std::span<float> q(qkv.data() + b * R, static_cast<size_t>(QD));
      decode_attention(q, s.num_heads, attention_view(l, rows[static_cast<size_t>(b)]), scale,
                       attn.subspan(b * QD, QD), pool, isa);
    };
    const int64_t threads = pool.num_threads();
    if (threads > 1 && (attention_over_rows || batch >= threads)) {
      // One call per row, rows dealt to the threads in turn (row b to thread b mod threads);
      // each call, issued from inside the pool, runs on its thread alone. Prefill: the causal
      // rows' growing costs balance. Decode with at least one sequence per thread: each thread
      // streams its own sequences' KV caches, as CPU engines split decode attention over
      // sequences; one call over the whole pool at a time runs calls of a few hundred (KV head,
      // token) pairs on one thread and leaves the others idle (Qwen2.5-0.5B int8, batch 16,
      // context 128, 2 threads: attention took 4.7-5.0 ms of a 25 ms step, 2026-11-30).
      pool.parallel_for(threads, [&](int64_t begin, int64_t end, int) {
        for (int64_t t = begin; t < end; ++t) {
          for (int64_t b = t; b < batch; b += threads) attend(b);
        }
      });
    } else {
      // Decode of fewer sequences than threads: one call per sequence, each parallel over the
      // pool.
      for (int64_t b = 0; b < batch; ++b) attend(b);
    }
    mark(kAttention);
    matmul(w.o, attn, batch, proj, pool, isa);
    mark(kOut);
    for_rows(pool, batch, [&](int64_t b) {
      add_in_place(x.subspan(b * H, H), proj.subspan(b * H, H));
      rms_norm(x.subspan(b * H, H), w.mlp_norm, H, s.rms_eps, h.subspan(b * H, H), isa);
    });
    mark(kPostNorm);
    if (s.is_moe()) {
      moe_mlp(l, h, x, batch, pool, isa);
    } else {
      matmul(w.gate_up, h, batch, gu, pool, isa);
      swiglu_blocks(gu.data(), act.data(), batch, I, pool, isa);
      matmul(w.down, act, batch, proj, pool, isa);
      for_rows(pool, batch,
               [&](int64_t b) { add_in_place(x.subspan(b * H, H), proj.subspan(b * H, H)); });
    }
    mark(kMlp);
  }

  // Final norm of the rows that need logits, gathered into h's first rows (for a decode step
  // logit row i is row i, so nothing moves).
  for_rows(pool, num_logits, [&](int64_t i) {
    const int64_t b = logit_rows[static_cast<size_t>(i)];
    rms_norm(x.subspan(b * H, H), final_norm_, H, s.rms_eps, h.subspan(i * H, H), isa);
  });
  matmul(lm_head_, h.subspan(0, static_cast<size_t>(num_logits * H)), num_logits, logits, pool,
         isa);
  logits_batch_ = num_logits;

  for_rows(pool, num_logits, [&](int64_t i) {
    const Row& row = rows[static_cast<size_t>(logit_rows[static_cast<size_t>(i)])];
    next_tokens_[static_cast<size_t>(row.slot)] = argmax(logits.subspan(i * s.vocab, s.vocab));
  });
  mark(kLmHead);
  for (const Row& row : rows) contexts_[static_cast<size_t>(row.slot)] = row.position + 1;
}

std::span<const float> ReferenceDecoder::logits() const {
  return {logits_.data(), static_cast<size_t>(logits_batch_ * shape_.vocab)};
}

std::span<const int64_t> ReferenceDecoder::contexts() const {
  return {contexts_.data(), static_cast<size_t>(batch_)};
}

std::span<const int64_t> ReferenceDecoder::next_tokens() const {
  return {next_tokens_.data(), static_cast<size_t>(batch_)};
}

int64_t ReferenceDecoder::weight_bytes() const {
  int64_t total = lm_head_.bytes() + 4 * static_cast<int64_t>(final_norm_.size());
  for (const auto& w : layers_) {
    total += w.qkv.bytes() + w.o.bytes() + w.gate_up.bytes() + w.down.bytes();
    total += w.router.bytes() + w.shared_gate_up.bytes() + w.shared_down.bytes();
    for (size_t e = 0; e < w.expert_gate_up.size(); ++e) {
      total += w.expert_gate_up[e].bytes() + w.expert_down[e].bytes();
    }
    total += 4 * static_cast<int64_t>(w.attn_norm.size() + w.mlp_norm.size() + w.qkv_bias.size());
  }
  return total;
}

int64_t ReferenceDecoder::kv_bytes_per_token() const {
  return shape_.num_layers * 2 * shape_.kv_dim() * kv_elem_bytes_;
}

std::vector<OpAccount> ReferenceDecoder::account() const {
  const DecoderShape& s = shape_;
  const int64_t B = batch_;
  const int64_t L = s.num_layers, H = s.hidden, R = s.qkv_rows(), QD = s.q_dim(), KD = s.kv_dim(),
                I = s.intermediate, hd = s.head_dim;
  // Per-layer matrix bytes (all layers have equal shapes).
  int64_t qkv_w = 0, o_w = 0, gu_w = 0, down_w = 0;
  for (const auto& w : layers_) {
    qkv_w += w.qkv.bytes() + 4 * static_cast<int64_t>(w.qkv_bias.size());
    o_w += w.o.bytes();
    gu_w += w.gate_up.bytes();
    down_w += w.down.bytes();
  }
  const auto proj = [B](const char* name, int64_t weight_bytes, int64_t layers, int64_t rows,
                        int64_t cols, int64_t extra_flops) {
    return OpAccount{name, weight_bytes + layers * B * (rows + cols) * 4,
                     layers * (2 * B * rows * cols + extra_flops)};
  };
  int64_t attn_bytes = 0, attn_flops = 0;
  for (const int64_t c : contexts()) {
    const int64_t t = c + 1;
    attn_bytes += 2 * KD * t * kv_elem_bytes_ + 2 * QD * 4;
    attn_flops += 4 * s.num_heads * t * hd;
  }
  const int64_t lm_row_bytes = lm_head_.bytes() / s.vocab;
  const int64_t norms = 2 * L + 1;
  std::vector<OpAccount> ops = {
      {"embedding", B * (lm_row_bytes + H * 4), 0},
      // Read x, write out, read the weight; sum of squares (2/elem) and two scalings (2/elem).
      {"rms_norm", norms * (2 * B * H * 4 + H * 4), norms * 4 * B * H},
      proj("qkv_proj", qkv_w, L, R, H, s.qkv_bias ? B * R : 0),
      // Read and write q and k; a rotation is 6 FLOPs per pair (3 per element).
      {"rope", L * 2 * B * (QD + KD) * 4, L * 3 * B * (QD + KD)},
      {"kv_append", L * B * 2 * KD * (4 + kv_elem_bytes_), 0},
      {"attention", L * attn_bytes, L * attn_flops},
      proj("o_proj", o_w, L, H, QD, 0),
      {"residual_add", 2 * L * 3 * B * H * 4, 2 * L * B * H},
      proj("gate_up_proj", gu_w, L, 2 * I, H, 0),
      // Read gate and up, write out; silu and the product ~4 FLOPs per element.
      {"swiglu", L * 3 * B * I * 4, L * 4 * B * I},
      proj("down_proj", down_w, L, H, I, 0),
      proj("lm_head", lm_head_.bytes(), 1, s.vocab, H, 0),
      {"argmax", B * s.vocab * 4, B * s.vocab},
  };
  if (s.is_moe()) {
    // The experts' operators in place of the dense MLP's three.
    const auto first = std::find_if(ops.begin(), ops.end(),
                                    [](const OpAccount& a) { return a.op == "gate_up_proj"; });
    const auto at = ops.erase(first, first + 3);
    const std::vector<OpAccount> moe = moe_account();
    ops.insert(at, moe.begin(), moe.end());
  }
  return ops;
}

}  // namespace llmcap::kernels
