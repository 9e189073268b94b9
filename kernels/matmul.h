// Weight-streaming matrix products of decode: y = x W^T for 1..64 activation rows.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "kernels/cpu_features.h"
#include "kernels/thread_pool.h"

namespace llmcap::kernels {

/// Storage format of a weight matrix.
///  - kF32: 4 bytes per weight.
///  - kBf16: 2 bytes per weight (the upper half of an IEEE f32, round-to-nearest-even).
///  - kInt8: 1 byte per weight (symmetric, round to nearest) + one f32 scale per output row:
///    w[r][c] = scale[r] * q[r][c]. Stored in tiles of 16 rows (the layout of VNNI dot
///    products, which read 16 output rows per instruction, so that the weights stream
///    sequentially): tile t holds rows [16t, 16t + 16) as groups of 4 columns, 64 bytes per
///    group, row 16t + i at bytes [4i, 4i + 4) of each group (Int8Group, int8_offset). Rows are
///    padded to a multiple of 16 and columns to a multiple of 4 with zeros.
///  - kInt4: 4-bit weights in blocks of 32 consecutive weights of a row with one bf16 scale
///    each: w = scale * (q - 8), q in [0, 15] (the quantisation of GGML's Q4_0, with a bf16
///    scale: 0.5625 bytes per weight). cols must be a multiple of 32. Stored, like kInt8, in
///    tiles of 16 rows for VNNI dot products: a tile is a run of 576-byte super-blocks, one per
///    64 columns (the last one padded with zero weights and scales): 64 bytes of scales (block
///    h = columns [32h, 32h + 32) of the super-block: row i's bf16 scale at byte 32h + 2i),
///    then 8 groups of 64 bytes; group 4h + g holds, for row i at bytes [4i, 4i + 4), columns
///    32h + 4g + k (k = 0..3) in the low nibbles and 32h + 16 + 4g + k in the high nibbles
///    (Int4SuperBlock, int4_location). Rows are padded to a multiple of 16 with zeros.
enum class WeightFormat { kF32, kBf16, kInt8, kInt4 };
std::string_view to_string(WeightFormat format);  ///< "f32" | "bf16" | "int8" | "int4"
/// Throws std::invalid_argument("unknown weight format \"x\"; known: f32, bf16, int8, int4").
WeightFormat parse_weight_format(std::string_view name);

/// Packed weight blocks of the kInt8 and kInt4 formats. data() of a kInt8 matrix is an array of
/// Int8Group: tile t (rows [16t, 16t + 16)) holds groups [t * G, (t + 1) * G), G = ceil(cols / 4),
/// group g of a tile covering columns [4g, 4g + 4). data() of a kInt4 matrix is an array of
/// Int4SuperBlock: tile t holds super-blocks [t * S, (t + 1) * S), S = ceil(cols / 64),
/// super-block s of a tile covering columns [64s, 64s + 64). Both are 64-byte aligned (data() is,
/// and every block is a whole number of 64-byte lines): the kernels load them with aligned vector
/// loads.
inline constexpr int64_t kTileRows = 16;  ///< output rows per kInt8 / kInt4 tile

/// 4 consecutive columns of the 16 rows of a kInt8 tile: row i's 4 weights at bytes [4i, 4i + 4),
/// the 16 output rows a VNNI dot product of 4-byte words reads at once.
struct alignas(64) Int8Group {
  static constexpr int64_t kCols = 4;
  int8_t q[kTileRows][kCols];  ///< [row in tile][column in group]
};
static_assert(sizeof(Int8Group) == 64 && alignof(Int8Group) == 64);

/// 64 consecutive columns of the 16 rows of a kInt4 tile: two blocks h of 32 columns
/// [32h, 32h + 32) with one bf16 scale per row, w = scale * (q - 8). 576 bytes.
struct alignas(64) Int4SuperBlock {
  static constexpr int64_t kCols = 64;       ///< columns per super-block
  static constexpr int64_t kBlockCols = 32;  ///< columns per block (one scale)
  /// [block h][row i]: bf16 scale of row i over the block's 32 columns (bytes 32h + 2i).
  uint16_t scale[2][kTileRows];
  /// [group 4h + g][row i][k] (byte 64 + 64(4h + g) + 4i + k): the low nibble is column
  /// 32h + 4g + k of the super-block, the high nibble column 32h + 16 + 4g + k.
  uint8_t q[8][kTileRows][4];
};
static_assert(sizeof(Int4SuperBlock) == 576 && alignof(Int4SuperBlock) == 64);
static_assert(offsetof(Int4SuperBlock, q) == 64);

/// Byte offset of weight (r, c) in the kInt8 layout of a matrix with `cols` columns.
constexpr int64_t int8_offset(int64_t r, int64_t c, int64_t cols) {
  const int64_t groups = (cols + Int8Group::kCols - 1) / Int8Group::kCols;
  const int64_t group = (r / kTileRows) * groups + c / Int8Group::kCols;
  return group * int64_t{sizeof(Int8Group)} + (r % kTileRows) * Int8Group::kCols +
         c % Int8Group::kCols;
}

/// Where weight (r, c) of a kInt4 matrix with `cols` columns lives: the byte holding its
/// nibble (bits [shift, shift + 4)) and the first byte of its block's bf16 scale, as offsets
/// into data().
struct Int4Location {
  int64_t byte = 0;
  int shift = 0;
  int64_t scale_byte = 0;
};
constexpr Int4Location int4_location(int64_t r, int64_t c, int64_t cols) {
  constexpr int64_t kQ = offsetof(Int4SuperBlock, q), kGroupBytes = sizeof(Int4SuperBlock::q[0]);
  const int64_t super_blocks = (cols + Int4SuperBlock::kCols - 1) / Int4SuperBlock::kCols;
  const int64_t base = ((r / kTileRows) * super_blocks + c / Int4SuperBlock::kCols) *
                       int64_t{sizeof(Int4SuperBlock)};
  const int64_t h = (c % Int4SuperBlock::kCols) / Int4SuperBlock::kBlockCols;
  const int64_t in_block = c % Int4SuperBlock::kBlockCols;
  const int64_t group = 4 * h + (in_block % 16) / 4;
  return {base + kQ + group * kGroupBytes + (r % kTileRows) * 4 + in_block % 4,
          in_block < 16 ? 0 : 4,
          base + h * int64_t{sizeof(Int4SuperBlock::scale[0])} + (r % kTileRows) * 2};
}

/// A weight matrix of `rows` output features x `cols` input features, stored row-major in one
/// of the formats above, 64-byte aligned. Movable, not copyable.
class PackedWeights {
 public:
  PackedWeights() = default;
  PackedWeights(PackedWeights&&) noexcept = default;
  PackedWeights& operator=(PackedWeights&&) noexcept = default;
  PackedWeights(const PackedWeights&) = delete;
  PackedWeights& operator=(const PackedWeights&) = delete;

  /// Converts or quantises a row-major f32 matrix (w.size() == rows * cols). Throws
  /// std::invalid_argument for a size mismatch, rows or cols < 1, or kInt4 with cols % 32 != 0.
  static PackedWeights pack(WeightFormat format, std::span<const float> w, int64_t rows,
                            int64_t cols);
  /// Weights drawn uniformly from [-1, 1) (deterministic for a seed), packed. For benchmarks
  /// and the reference decoder, where latency does not depend on the values.
  static PackedWeights random(WeightFormat format, int64_t rows, int64_t cols, uint64_t seed);
  /// A copy in new memory (the type is not copyable: copies are explicit). For benchmarks that
  /// rotate over many copies so that each call reads from memory (a memcpy, far cheaper than
  /// drawing new random weights).
  PackedWeights clone() const;

  WeightFormat format() const { return format_; }
  int64_t rows() const { return rows_; }
  int64_t cols() const { return cols_; }
  /// Bytes a product streams from memory: the packed weights (with their padding) and scales.
  int64_t bytes() const;
  /// bytes() of a rows x cols matrix in `format`, without packing one (same checks as pack).
  static int64_t bytes_for(WeightFormat format, int64_t rows, int64_t cols);
  /// Element (r, c) as f32 after dequantisation (for tests).
  float at(int64_t r, int64_t c) const;
  /// Row r as f32 after dequantisation (an embedding lookup). Throws std::invalid_argument
  /// unless 0 <= r < rows and out.size() == cols.
  void dequantise_row(int64_t r, std::span<float> out) const;

  // Raw storage for kernels: data() points at rows*cols elements (f32, uint16 bf16) or at the
  // int8 / int4 tiles described at WeightFormat; row_scales() at rows f32 scales and row_sums() at
  // rows int32 sums of the quantised values of each row (kInt8 only, else empty; the sums let VNNI
  // kernels undo the +128 offset of unsigned activations without summing the weights at every
  // call).
  const void* data() const { return storage_.get(); }
  std::span<const float> row_scales() const { return scales_; }
  std::span<const int32_t> row_sums() const { return sums_; }

 private:
  WeightFormat format_ = WeightFormat::kF32;
  int64_t rows_ = 0;
  int64_t cols_ = 0;
  /// 64-byte aligned, on 2 MiB pages (detail::allocate_huge_shared: matrices under 2 MiB
  /// share blocks), owned by this object alone (copies are explicit, by clone()).
  std::shared_ptr<uint8_t> storage_;
  int64_t storage_bytes_ = 0;
  std::vector<float> scales_;
  std::vector<int32_t> sums_;
};

/// y[b * rows + r] = sum_c x[b * cols + c] * w(r, c), for b in [0, batch).
/// Shapes: x.size() == batch * cols, y.size() == batch * rows, batch >= 1 (fast paths are tuned
/// for batch <= 64; larger batches are processed in slices of 64). Weights are read from memory
/// once per call for all rows of x (not once per row). int8 and int4 paths may quantise x to
/// int8 per activation row for VNNI dot products; their results then differ from the f32
/// reference by that rounding (see tests/kernels for the tolerances).
/// Threads split the output rows. `isa` must be supported (isa_supported); throws
/// std::invalid_argument naming the mismatched size or the unsupported path.
void matmul(const PackedWeights& w, std::span<const float> x, int64_t batch, std::span<float> y,
            ThreadPool& pool, Isa isa = best_isa());

namespace detail {
// The per-ISA kernels are in matmul_internal.h; matmul() reaches them through the kernel
// tables of dispatch.h.

/// Test and benchmark hook: whether matmul(..., Isa::kAvx512) may use AVX512_BF16 / AVX512_VNNI
/// (default true; they are used only when cpu_features() reports them). With false it runs the
/// f32-FMA fallback, so tests cover it on CPUs that have the extensions. Process-wide; do not
/// flip it while a matmul is running.
void set_avx512_extensions_enabled(bool enabled);
bool avx512_extensions_enabled();
}  // namespace detail

}  // namespace llmcap::kernels
