// A reference decode step of a Llama-architecture model (Llama-3.x, Qwen2 shapes) built only
// from this library's kernels, with random weights: for measuring what a real decode step costs
// on this CPU and comparing it with a predictor's per-operator accounting.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "kernels/attention.h"
#include "kernels/cpu_features.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"

namespace llmcap::kernels {

/// The shape of a Llama-architecture decoder (pre-norm RMSNorm, RoPE on the whole head,
/// grouped-query attention, SwiGLU MLP; see ReferenceDecoder).
struct DecoderShape {
  int64_t hidden = 0;        ///< model width d
  int64_t intermediate = 0;  ///< MLP width (gate and up each have this many rows)
  int64_t num_layers = 0;
  int64_t num_heads = 0;     ///< query heads
  int64_t num_kv_heads = 0;  ///< key/value heads; divides num_heads
  int64_t head_dim = 0;      ///< even (RoPE rotates pairs)
  int64_t vocab = 0;
  float rope_theta = 10000.0f;  ///< RoPE base
  float rms_eps = 1e-5f;        ///< RMSNorm epsilon
  bool qkv_bias = false;        ///< Qwen2 adds a bias to the q, k and v projections
  /// Mixture of experts (num_experts > 0; `intermediate` is then unused and may be 0): every
  /// layer's MLP is a router [num_experts x hidden] whose logits are soft-maxed over all
  /// experts, the experts_per_token largest kept with their probabilities renormalised to sum
  /// 1 (Mixtral's routing), then that many routed experts per token, each a SwiGLU MLP of width
  /// expert_intermediate (gate/up and down run by kernels::moe_matmul, the tokens grouped per
  /// expert), summed with their gates; plus, with shared_intermediate > 0, a shared expert (a
  /// dense SwiGLU MLP of that width, no gate) every token goes through, added to the sum.
  int64_t num_experts = 0;
  int64_t experts_per_token = 0;    ///< top-k, 1..num_experts
  int64_t expert_intermediate = 0;  ///< inner width of one routed expert
  int64_t shared_intermediate = 0;  ///< inner width of the shared expert; 0: none

  bool is_moe() const { return num_experts > 0; }
  int64_t q_dim() const { return num_heads * head_dim; }
  int64_t kv_dim() const { return num_kv_heads * head_dim; }
  /// Rows of the fused QKV projection: q_dim + 2 kv_dim.
  int64_t qkv_rows() const { return q_dim() + 2 * kv_dim(); }
};

/// Bytes and FLOPs of one operator kind, summed over all layers of one decode step.
struct OpAccount {
  std::string op;
  int64_t bytes = 0;  ///< bytes read and written in memory (weights, KV, activations)
  int64_t flops = 0;  ///< floating-point (or integer dot-product) operations, a multiply-add = 2
};

/// Wall time of the sections of one ReferenceDecoder::step, summed over layers, named as the
/// operators of the step-time predictor's layer graph (model/op_graph.h) so the two can be
/// compared operator by operator:
///  - input_norm: the RMSNorm before attention;
///  - qkv_proj: the QKV product;
///  - rope_kv_append: the QKV bias (if any), RoPE of q and k and the KV-cache append;
///  - attention: decode attention of every sequence;
///  - out_proj: the output projection;
///  - post_attention_norm: the residual add and the RMSNorm before the MLP;
///  - mlp: gate/up product, SwiGLU, down product and the residual add;
///  - lm_head: embedding lookup, final RMSNorm, LM-head product and argmax (once per step).
struct StepSections {
  static constexpr int kCount = 8;
  static constexpr const char* kNames[kCount] = {"input_norm", "qkv_proj", "rope_kv_append",
                                                 "attention",  "out_proj", "post_attention_norm",
                                                 "mlp",        "lm_head"};
  double seconds[kCount] = {};
};

/// Features per block of the fused gate/up matrix (gate_up_row).
inline constexpr int64_t kGateUpBlock = 64;

/// Row of the fused gate/up matrix (2 x `intermediate` rows) that holds feature i's gate
/// (`up` false) or up (`up` true) projection: the rows come in blocks, the gate rows of
/// features [64 j, 64 j + n) then the up rows of the same features (n = 64, the last block the
/// rest). The product's threads split its output rows, so a thread writes the gate and up of
/// the same features, and SwiGLU, split by the same blocks, reads what its own core wrote. With
/// [gate | up] halves and SwiGLU split by rows, half the product's output lay in the other core's
/// cache when the next layer's gate/up product wrote it again: Qwen2.5-0.5B int8 at batch 16,
/// 24 such products took 7.1-8.0 ms after a row-split SwiGLU and 6.5-6.8 ms after a
/// feature-split one, as when called in a row (2 threads, one process, 2026-11-30).
constexpr int64_t gate_up_row(int64_t i, int64_t intermediate, bool up) {
  const int64_t j = i / kGateUpBlock;
  const int64_t rest = intermediate - j * kGateUpBlock;
  const int64_t n = rest < kGateUpBlock ? rest : kGateUpBlock;
  return j * 2 * kGateUpBlock + (up ? n : 0) + i % kGateUpBlock;
}

/// One layer's weights. Matrices are PackedWeights of `rows` outputs x `cols` inputs (y = x W^T).
struct DecoderLayerWeights {
  std::vector<float> attn_norm;  ///< hidden, RMSNorm weight before attention
  PackedWeights qkv;             ///< qkv_rows x hidden: rows [q | k | v], heads contiguous
  std::vector<float> qkv_bias;   ///< qkv_rows (empty unless shape.qkv_bias)
  PackedWeights o;               ///< hidden x q_dim
  std::vector<float> mlp_norm;   ///< hidden, RMSNorm weight before the MLP
  PackedWeights gate_up;         ///< 2 intermediate x hidden, gate and up by blocks (gate_up_row)
  PackedWeights down;            ///< hidden x intermediate
  // Mixture of experts only (DecoderShape::is_moe; gate_up and down above are then empty).
  PackedWeights router;                       ///< num_experts x hidden
  std::vector<PackedWeights> expert_gate_up;  ///< per expert: 2 expert_intermediate x hidden
  std::vector<PackedWeights> expert_down;     ///< per expert: hidden x expert_intermediate
  PackedWeights shared_gate_up;               ///< 2 shared_intermediate x hidden (none when 0)
  PackedWeights shared_down;                  ///< hidden x shared_intermediate
};

/// One sequence of a ReferenceDecoder::prefill call: `tokens` enter slot `slot`'s KV cache at
/// positions [cached_tokens, cached_tokens + tokens.size()), after the cached_tokens positions
/// already there (0: a new sequence; a recompute after preemption, or the next chunk of a
/// chunked prefill, keeps a prefix).
struct PrefillSequence {
  int64_t slot = 0;                 ///< sequence slot, 0..max_batch-1; distinct within one call
  int64_t cached_tokens = 0;        ///< KV positions kept, 0..slot_context(slot)
  std::span<const int64_t> tokens;  ///< >= 1 token ids, each 0..vocab-1
};

/// A decode step of a Llama-architecture model, per layer:
///   h = RMSNorm(x) -> qkv = h Wqkv^T (+ bias) -> RoPE(q), RoPE(k) at the token's position ->
///   append k, v to the sequence's KV cache -> decode_attention (GQA, scale 1/sqrt(head_dim)) ->
///   x += attn Wo^T -> h = RMSNorm(x) -> [gate | up] = h Wgu^T -> a = SwiGLU(gate, up) ->
///   x += a Wdown^T;
/// then logits = RMSNorm(x) Wlm^T. The input embedding is tied to the LM head (row `token` of
/// Wlm, as in Llama-3.2-1B and Qwen2.5-0.5B); the token a sequence consumes is the greedy
/// argmax of its previous logits (or the one given to set_contexts).
/// Projections run as one `matmul` over all sequences of the batch (weights streamed once per
/// step); attention runs once per sequence over that sequence's KV cache. Element-wise operators
/// (RMSNorm, bias, RoPE, KV append, residual, SwiGLU, argmax) run on the pool, split over the
/// sequences of the batch, as an engine runs them (a batch of 1 runs them on the calling thread).
///
/// Sequence slots. The decoder holds max_batch slots, each with a KV cache of max_context
/// tokens, a context (tokens in its KV cache; 0 at construction) and the next token it consumes
/// (0 at construction). set_contexts + step drive slots [0, batch) together (the benchmark
/// interface); a serving loop instead starts sequences in free slots with prefill() and decodes
/// any subset of slots with step_slots(). A slot is "freed" simply by no longer being stepped:
/// the next prefill with cached_tokens 0 overwrites it.
///
/// Prefill (prefill()): the P new tokens of each sequence (over all sequences of the call,
/// T = sum of P) run through the layers as one batch of T activation rows: each projection is
/// one `matmul` over the T rows (kernels/matmul.h processes them in slices of 64 rows, so the
/// weights are streamed ceil(T / 64) times); every row's k and v are written to the KV cache
/// at its position before attention, and causal attention is decode_attention once per new
/// token (query position p of a sequence attends to positions [0, p]), i.e. T calls, spread
/// over the pool's threads row by row (each call then runs on one thread); the final norm and
/// the LM head run only for the last token of each sequence (the logits of its first output
/// token), so prefill() writes one logits row per sequence.
/// Mixture of experts (DecoderShape::is_moe): the MLP of every layer is
///   h -> logits = h Wrouter^T -> top-k of softmax(logits), renormalised -> per token and chosen
///   expert e: a_e = SwiGLU(h Wgu_e^T) -> x += sum_e gate_e (a_e Wdown_e^T) (+ the shared expert)
/// where the products over experts run as kernels::moe_matmul over the step's (token, expert)
/// pairs, each expert's weights read once for all the pairs routed to it. Routing by the random
/// router of random hidden states: the router rows are independent of each other and of the
/// states, so each token's logits are close to independent draws and a step of T tokens that
/// differ hits about E (1 - (1 - k/E)^T) distinct experts (uniform top-k routing, the
/// predictor's assumption); tokens with equal hidden states (equal token, position and KV
/// prefix) route alike. experts_hit() reports what each layer's routing gave.
/// Weights and the KV prefix are random (latency does not depend on the values): matrices uniform
/// in [-1, 1) (PackedWeights::random), biases uniform in [-1, 1), RMSNorm weights uniform in
/// [0.5, 1.5) / sqrt(hidden) so that activations stay near unit scale; all activations are f32.
class ReferenceDecoder {
 public:
  static constexpr int64_t kDefaultMaxBytes = int64_t{16} << 30;  ///< 16 GiB

  /// Allocates random weights (deterministic for `seed`) in `format` and KV caches of `kv_type`
  /// for up to `max_batch` sequences of up to `max_context` tokens each (KV memory is reserved,
  /// and touched only as contexts reach it). Throws std::invalid_argument for a bad shape (a
  /// dimension < 1, num_heads not a multiple of num_kv_heads, odd head_dim, rope_theta or
  /// rms_eps <= 0, kInt4 with hidden, q_dim or intermediate not a multiple of 32), for
  /// max_batch or max_context < 1, or when weights + KV + activations would need more than
  /// `max_bytes` (the message gives both numbers). A mixture of experts also needs
  /// experts_per_token in [1, num_experts], expert_intermediate >= 1, shared_intermediate >= 0
  /// and, for kInt4, both widths multiples of 32; a dense shape needs all four 0.
  ReferenceDecoder(const DecoderShape& shape, WeightFormat format, KvType kv_type,
                   int64_t max_batch, int64_t max_context, uint64_t seed,
                   int64_t max_bytes = kDefaultMaxBytes);
  ~ReferenceDecoder();
  ReferenceDecoder(const ReferenceDecoder&) = delete;
  ReferenceDecoder& operator=(const ReferenceDecoder&) = delete;

  /// Starts batch = context_tokens.size() (1..max_batch) sequences in slots [0, batch) (the other
  /// slots keep their state); sequence b's KV cache holds
  /// context_tokens[b] (0..max_context-1) tokens of random values in [-1, 1) (a function of
  /// seed, layer, position, head and element only, so equal contexts hold equal prefixes in
  /// every slot; a mixture of experts: of the slot too, so that the sequences of a batch route
  /// independently, as a serving batch's do: with one prefix in every slot, the attention
  /// outputs over it, common to all sequences, outweighed the token embeddings in the hidden
  /// states and a batch of 3 hit 7.2 distinct experts of 16 (top-4) instead of 9.25). The next step
  /// consumes next_tokens[b] (0..vocab-1), or token 0 when next_tokens is empty. Clears logits().
  /// Throws std::invalid_argument for bad sizes/values.
  void set_contexts(std::span<const int64_t> context_tokens,
                    std::span<const int64_t> next_tokens = {});

  /// One decode step for all sequences: each consumes one token at position = its context,
  /// runs all layers, writes logits (batch x vocab); contexts grow by one and the next tokens
  /// become the argmax of the logits. Throws std::logic_error before set_contexts or when a
  /// sequence has reached max_context (call set_contexts to reset).
  /// With `sections`, also records the wall time of each section (steady clock, a few
  /// nanoseconds per section boundary).
  /// Equivalent to step_slots over slots [0, batch) of the last set_contexts.
  void step(ThreadPool& pool, Isa isa = best_isa(), StepSections* sections = nullptr);

  /// One decode step for the sequences in `slots` (1..max_batch distinct slot indices, in the
  /// order their logits rows are written): as step(), slot s consuming slot_next_token(s) at
  /// position slot_context(s). Throws std::invalid_argument for an empty list, a slot outside
  /// [0, max_batch) or a repeated slot, and std::logic_error("ReferenceDecoder::step: sequence
  /// s is full (max_context N)") when a slot's context has reached max_context.
  void step_slots(std::span<const int64_t> slots, ThreadPool& pool, Isa isa = best_isa(),
                  StepSections* sections = nullptr);

  /// Prefill of one or more sequences (see the class comment): for each sequence, its tokens
  /// enter its slot's KV cache after cached_tokens kept positions; afterwards
  /// slot_context(slot) = cached_tokens + tokens.size(), logits() holds one row per sequence
  /// (call order): those of its last token, and slot_next_token(slot) is their argmax. The
  /// activation buffers grow to T = sum of tokens.size() rows if they hold fewer (f32, 4 x T x
  /// (3 hidden + qkv_rows + q_dim + 3 intermediate) bytes; not counted in max_bytes). With
  /// `sections`, records section times as step() does (attention: all T calls).
  /// Throws std::invalid_argument (nothing is changed) for: no sequences, more than max_batch, a
  /// slot outside [0, max_batch) or repeated, an empty token list, a token outside [0, vocab),
  /// cached_tokens outside [0, slot_context(slot)], or cached_tokens + tokens.size() >
  /// max_context.
  void prefill(std::span<const PrefillSequence> sequences, ThreadPool& pool, Isa isa = best_isa(),
               StepSections* sections = nullptr);

  /// Logits of the last step, step_slots or prefill, [rows][vocab] row-major (one row per
  /// sequence of that call, in call order); empty before the first call and after set_contexts.
  std::span<const float> logits() const;
  /// Current context length of each sequence of the last set_contexts (slots [0, batch)).
  std::span<const int64_t> contexts() const;
  /// The token each sequence of the last set_contexts consumes at the next step.
  std::span<const int64_t> next_tokens() const;
  /// Tokens in slot `slot`'s KV cache (0..max_context). Throws std::out_of_range for a slot
  /// outside [0, max_batch).
  int64_t slot_context(int64_t slot) const;
  /// The token slot `slot` consumes at its next decode step. Throws std::out_of_range as above.
  int64_t slot_next_token(int64_t slot) const;

  /// The KV of positions [begin, begin + count) of slot `slot`, every layer: count x
  /// kv_bytes_per_token() bytes laid out [layer][k|v][kv_head][token][head_dim] (for a prefix
  /// cache kept outside the slots). Throws std::out_of_range for a bad slot and
  /// std::invalid_argument unless 0 <= begin, count >= 1, begin + count <= slot_context(slot).
  std::vector<uint8_t> read_kv(int64_t slot, int64_t begin, int64_t count) const;
  /// Writes KV read by read_kv (`kv`, a whole number of tokens) at positions [begin, begin +
  /// count) of slot `slot`, which then holds begin + count tokens (its context; what lay after
  /// them is dropped). Throws std::out_of_range for a bad slot and std::invalid_argument
  /// (nothing changed) unless kv holds >= 1 whole tokens, 0 <= begin <= slot_context(slot) and
  /// begin + count <= max_context.
  void write_kv(int64_t slot, int64_t begin, std::span<const uint8_t> kv);

  /// Mixture of experts: per layer, the distinct experts the rows of the last step, step_slots
  /// or prefill were routed to (1..min(num_experts, rows x experts_per_token)); empty for a
  /// dense shape and before the first call.
  std::span<const int64_t> experts_hit() const { return experts_hit_; }

  /// Bytes of all weights: packed matrices (with their scales) + f32 norm weights and biases.
  int64_t weight_bytes() const;
  /// KV cache bytes per token over all layers: num_layers x 2 x kv_dim x element size.
  int64_t kv_bytes_per_token() const;

  /// Per-operator accounting of one step at the current contexts and batch, in execution
  /// order, each kind summed over layers: embedding, rms_norm (incl. the final one), qkv_proj,
  /// rope, kv_append, attention, o_proj, residual_add, gate_up_proj, swiglu, down_proj,
  /// lm_head, argmax (a mixture of experts: router, expert_gate_up_proj, expert_swiglu,
  /// expert_down_proj, and shared_gate_up_proj, shared_swiglu, shared_down_proj with a shared
  /// expert, in place of gate_up_proj, swiglu, down_proj; the experts' weight bytes are those of
  /// experts_hit(), or of min(num_experts, batch x k) experts per layer before any step; their
  /// FLOPs and activations count batch x k rows). Projections: weight bytes + f32 activations
  /// in and out, 2 x batch x rows x
  /// cols FLOPs (+ batch x rows for the bias). Attention: KvCacheView::bytes_read at context+1
  /// + q and output, 4 x heads x (context+1) x head_dim FLOPs (QK^T and PV; softmax not
  /// counted). Element-wise operators: f32 bytes in and out, a few FLOPs per element.
  std::vector<OpAccount> account() const;

  // For tests: the shape, weights and KV caches.
  const DecoderShape& shape() const { return shape_; }
  WeightFormat weight_format() const { return format_; }
  KvType kv_type() const { return kv_type_; }
  int64_t max_batch() const { return max_batch_; }
  int64_t max_context() const { return max_context_; }
  const DecoderLayerWeights& layer(int64_t i) const;
  std::span<const float> final_norm() const { return final_norm_; }
  const PackedWeights& lm_head() const { return lm_head_; }
  /// The KV cache of sequence slot `seq` (0..max_batch-1) in layer `layer_index`, context =
  /// slot_context(seq). Throws std::out_of_range for a bad layer or slot.
  KvCacheView kv_cache(int64_t layer_index, int64_t seq) const;

 private:
  /// One activation row of a forward pass: `token` of slot `slot` at KV position `position`.
  struct Row {
    int64_t slot;
    int64_t position;
    int64_t token;
  };
  /// Runs `rows` through the layers (each row's k, v written at its position, attention over
  /// positions [0, position]), then the final norm, LM head and argmax for `logit_rows`
  /// (indices into rows; the slot of each gets its next token), and sets each row's slot
  /// context to position + 1 (rows of one slot in increasing position). Arguments are valid.
  /// attention_over_rows: spread the attention calls over the pool row by row (prefill); a
  /// decode of at least as many sequences as threads is spread so too, a smaller one runs each
  /// call on the whole pool.
  void forward(std::span<const Row> rows, std::span<const int64_t> logit_rows,
               bool attention_over_rows, ThreadPool& pool, Isa isa, StepSections* sections);
  void ensure_rows(int64_t rows);
  /// Mixture of experts (decoder_moe.cpp): the random weights of layer w's MLP (matrix seeds
  /// from `matrix`, advanced), and the MLP of `batch` rows: x += MLP(h), `out` a scratch of
  /// batch x hidden; records experts_hit_[layer].
  void init_moe_weights(DecoderLayerWeights& w, uint64_t& matrix);
  void moe_mlp(int64_t layer, std::span<const float> h, std::span<float> x, int64_t batch,
               ThreadPool& pool, Isa isa);
  std::vector<OpAccount> moe_account() const;
  void check_slot(int64_t slot, const char* what) const;

  void fill_random_kv(int64_t seq, int64_t begin, int64_t end);
  uint8_t* kv_k(int64_t layer_index, int64_t seq) const;
  uint8_t* kv_v(int64_t layer_index, int64_t seq) const;

  DecoderShape shape_;
  WeightFormat format_;
  KvType kv_type_;
  int64_t max_batch_;
  int64_t max_context_;
  /// Rows reserved per KV head: kv_capacity_tokens(max_context, head_dim, kv type), so that
  /// every head's rows start on a 4 KiB boundary.
  int64_t kv_capacity_ = 0;
  uint64_t seed_;

  std::vector<DecoderLayerWeights> layers_;
  std::vector<float> final_norm_;
  PackedWeights lm_head_;  ///< vocab x hidden, also the input embedding

  struct KvFree {
    void operator()(uint8_t* p) const noexcept;
  };
  std::unique_ptr<uint8_t, KvFree> kv_;  ///< [layer][seq][k|v][kv_head][kv_capacity_][head_dim]
  int64_t kv_elem_bytes_ = 0;
  std::vector<int64_t> pristine_;  ///< per slot: positions [0, pristine) hold the random prefix

  std::vector<int64_t> contexts_;     ///< per slot (max_batch)
  std::vector<int64_t> next_tokens_;  ///< per slot (max_batch)
  int64_t batch_ = 0;                 ///< sequences of the last set_contexts (slots [0, batch))
  std::vector<int64_t> batch_slots_;  ///< 0..batch-1, the slots step() steps
  std::vector<float> logits_;         ///< max_batch x vocab
  int64_t logits_batch_ = 0;          ///< rows of logits_ written by the last step

  // Activations for activation_rows_ tokens (max_batch, grown by prefill).
  int64_t activation_rows_ = 0;
  std::vector<float> x_, h_, qkv_, attn_, proj_, gu_, act_;
  std::vector<Row> rows_;  ///< scratch of step_slots / prefill
  // Mixture of experts: distinct experts per layer of the last forward, and scratch (grown as
  // needed): router logits, the (token, expert) pairs' inputs, gate/up, activations, outputs.
  std::vector<int64_t> experts_hit_;
  std::vector<float> router_logits_, pair_x_, pair_gu_, pair_act_, pair_out_;
  std::vector<int64_t> logit_rows_;  ///< scratch of step_slots / prefill
};

}  // namespace llmcap::kernels
