// Weight formats, packing, the scalar reference product and the dispatch to the ISA paths
// (through the kernel tables of dispatch.h).
#include "kernels/matmul.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "base/random.h"
#include "kernels/bf16.h"
#include "kernels/dispatch.h"
#include "kernels/matmul_internal.h"
#include "kernels/scratch.h"

namespace llmcap::kernels {

namespace {

using detail::bf16_to_f32;
using detail::f32_to_bf16;

// kInt8 / kInt4 tiles of kTileRows rows and their blocks per tile (matmul.h).
int64_t tiles(int64_t rows) { return (rows + kTileRows - 1) / kTileRows; }
int64_t int8_groups(int64_t cols) { return (cols + Int8Group::kCols - 1) / Int8Group::kCols; }
int64_t int4_super_blocks(int64_t cols) {
  return (cols + Int4SuperBlock::kCols - 1) / Int4SuperBlock::kCols;
}

int64_t storage_bytes_for(WeightFormat format, int64_t rows, int64_t cols) {
  switch (format) {
    case WeightFormat::kF32:
      return rows * cols * 4;
    case WeightFormat::kBf16:
      return rows * cols * 2;
    case WeightFormat::kInt8:
      return tiles(rows) * int8_groups(cols) * int64_t{sizeof(Int8Group)};
    case WeightFormat::kInt4:
      return tiles(rows) * int4_super_blocks(cols) * int64_t{sizeof(Int4SuperBlock)};
  }
  return 0;
}

void check_shape(WeightFormat format, int64_t rows, int64_t cols) {
  if (rows < 1 || cols < 1) {
    throw std::invalid_argument("PackedWeights: rows and cols must be >= 1, got rows " +
                                std::to_string(rows) + " x cols " + std::to_string(cols));
  }
  if (format == WeightFormat::kInt4 && cols % 32 != 0) {
    throw std::invalid_argument("PackedWeights: int4 needs cols a multiple of 32, got cols " +
                                std::to_string(cols));
  }
}

// Packs row r of `src` (cols floats) into the storage of a PackedWeights.
void pack_row(WeightFormat format, const float* src, int64_t r, int64_t cols, uint8_t* storage,
              float* scales, int32_t* sums) {
  switch (format) {
    case WeightFormat::kF32:
      std::memcpy(storage + r * cols * 4, src, static_cast<size_t>(cols) * 4);
      return;
    case WeightFormat::kBf16: {
      auto* dst = reinterpret_cast<uint16_t*>(storage) + r * cols;
      for (int64_t c = 0; c < cols; ++c) dst[c] = f32_to_bf16(src[c]);
      return;
    }
    case WeightFormat::kInt8: {
      float max_abs = 0.0f;
      for (int64_t c = 0; c < cols; ++c) max_abs = std::max(max_abs, std::fabs(src[c]));
      const float scale = max_abs / 127.0f;
      scales[r] = scale;
      Int8Group* tile = reinterpret_cast<Int8Group*>(storage) + (r / kTileRows) * int8_groups(cols);
      const int64_t i = r % kTileRows;
      int32_t sum = 0;
      for (int64_t c = 0; c < cols; ++c) {
        const float q = scale > 0.0f ? std::round(src[c] / scale) : 0.0f;
        const auto v = static_cast<int8_t>(std::clamp(q, -127.0f, 127.0f));
        tile[c / Int8Group::kCols].q[i][c % Int8Group::kCols] = v;
        sum += v;
      }
      sums[r] = sum;
      return;
    }
    case WeightFormat::kInt4: {
      // storage is zeroed: nibbles are OR-ed into place.
      Int4SuperBlock* tile =
          reinterpret_cast<Int4SuperBlock*>(storage) + (r / kTileRows) * int4_super_blocks(cols);
      const int64_t row = r % kTileRows;
      for (int64_t j = 0; j < cols / Int4SuperBlock::kBlockCols; ++j) {
        const float* v = src + j * Int4SuperBlock::kBlockCols;
        float max_abs = 0.0f;
        for (int i = 0; i < 32; ++i) max_abs = std::max(max_abs, std::fabs(v[i]));
        const uint16_t scale_bf16 = f32_to_bf16(max_abs / 7.0f);
        const float scale = bf16_to_f32(scale_bf16);  // quantise against the stored scale
        Int4SuperBlock& sb = tile[j / 2];
        const int64_t h = j % 2;
        sb.scale[h][row] = scale_bf16;
        for (int i = 0; i < 32; ++i) {
          const float qi = scale > 0.0f ? std::round(v[i] / scale) + 8.0f : 8.0f;
          const auto q = static_cast<uint8_t>(std::clamp(qi, 0.0f, 15.0f));
          // Columns i and i + 16 of the block share a byte: low and high nibble.
          uint8_t& byte = sb.q[4 * h + (i % 16) / 4][row][i % 4];
          byte = static_cast<uint8_t>(byte | (q << (i < 16 ? 0 : 4)));
        }
      }
      return;
    }
  }
}

// Row r of w as f32 (dequantised), into out[0, cols).
void dequantise_row(const PackedWeights& w, int64_t r, float* out) {
  const int64_t cols = w.cols();
  switch (w.format()) {
    case WeightFormat::kF32:
      std::memcpy(out, static_cast<const float*>(w.data()) + r * cols,
                  static_cast<size_t>(cols) * 4);
      return;
    case WeightFormat::kBf16: {
      const auto* src = static_cast<const uint16_t*>(w.data()) + r * cols;
      for (int64_t c = 0; c < cols; ++c) out[c] = bf16_to_f32(src[c]);
      return;
    }
    case WeightFormat::kInt8: {
      const Int8Group* tile =
          static_cast<const Int8Group*>(w.data()) + (r / kTileRows) * int8_groups(cols);
      const int64_t i = r % kTileRows;
      const float scale = w.row_scales()[static_cast<size_t>(r)];
      for (int64_t c = 0; c < cols; ++c) {
        out[c] = scale * static_cast<float>(tile[c / Int8Group::kCols].q[i][c % Int8Group::kCols]);
      }
      return;
    }
    case WeightFormat::kInt4: {
      const Int4SuperBlock* tile =
          static_cast<const Int4SuperBlock*>(w.data()) + (r / kTileRows) * int4_super_blocks(cols);
      const int64_t row = r % kTileRows;
      for (int64_t j = 0; j < cols / Int4SuperBlock::kBlockCols; ++j) {
        const Int4SuperBlock& sb = tile[j / 2];
        const int64_t h = j % 2;
        const float scale = bf16_to_f32(sb.scale[h][row]);
        float* o = out + j * Int4SuperBlock::kBlockCols;
        // Group g of the block: row r's 4 bytes, columns 4g..4g+3 (low) and 16+4g.. (high).
        for (int g = 0; g < 4; ++g) {
          const uint8_t* b = sb.q[4 * h + g][row];
          for (int k = 0; k < 4; ++k) {
            o[4 * g + k] = scale * static_cast<float>((b[k] & 0x0f) - 8);
            o[16 + 4 * g + k] = scale * static_cast<float>((b[k] >> 4) - 8);
          }
        }
      }
      return;
    }
  }
}

std::atomic<bool> g_avx512_extensions{true};

std::string isa_name(Isa isa) {
  switch (isa) {
    case Isa::kScalar:
    case Isa::kAvx2:
    case Isa::kAvx512:
      return std::string(to_string(isa));
  }
  return "#" + std::to_string(static_cast<int>(isa));
}

}  // namespace

namespace detail {

// The reference: each weight row is dequantised once and dotted with every activation row in
// double precision, then rounded to f32.
void matmul_scalar(const PackedWeights& w, const float* x, int64_t batch, float* y,
                   ThreadPool& pool) {
  const int64_t rows = w.rows();
  const int64_t cols = w.cols();
  pool.parallel_for(rows, [&](int64_t begin, int64_t end, int) {
    std::vector<float> row(static_cast<size_t>(cols));
    for (int64_t r = begin; r < end; ++r) {
      dequantise_row(w, r, row.data());
      for (int64_t b = 0; b < batch; ++b) {
        const float* xb = x + b * cols;
        double sum = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
          sum += static_cast<double>(row[static_cast<size_t>(c)]) * static_cast<double>(xb[c]);
        }
        y[b * rows + r] = static_cast<float>(sum);
      }
    }
  });
}

}  // namespace detail

std::string_view to_string(WeightFormat format) {
  switch (format) {
    case WeightFormat::kF32:
      return "f32";
    case WeightFormat::kBf16:
      return "bf16";
    case WeightFormat::kInt8:
      return "int8";
    case WeightFormat::kInt4:
      return "int4";
  }
  return "unknown";
}

WeightFormat parse_weight_format(std::string_view name) {
  for (WeightFormat f :
       {WeightFormat::kF32, WeightFormat::kBf16, WeightFormat::kInt8, WeightFormat::kInt4}) {
    if (name == to_string(f)) return f;
  }
  throw std::invalid_argument("unknown weight format \"" + std::string(name) +
                              "\"; known: f32, bf16, int8, int4");
}

PackedWeights PackedWeights::pack(WeightFormat format, std::span<const float> w, int64_t rows,
                                  int64_t cols) {
  check_shape(format, rows, cols);
  if (static_cast<int64_t>(w.size()) != rows * cols) {
    throw std::invalid_argument("PackedWeights::pack: w has " + std::to_string(w.size()) +
                                " elements, expected rows " + std::to_string(rows) + " x cols " +
                                std::to_string(cols) + " = " + std::to_string(rows * cols));
  }
  PackedWeights p;
  p.format_ = format;
  p.rows_ = rows;
  p.cols_ = cols;
  p.storage_bytes_ = storage_bytes_for(format, rows, cols);
  const size_t alloc = static_cast<size_t>((p.storage_bytes_ + 63) / 64 * 64);
  p.storage_ = detail::allocate_huge_shared(static_cast<int64_t>(alloc));
  if (!p.storage_) throw std::bad_alloc();
  std::memset(p.storage_.get(), 0, alloc);
  if (format == WeightFormat::kInt8) {
    p.scales_.assign(static_cast<size_t>(rows), 0.0f);
    p.sums_.assign(static_cast<size_t>(rows), 0);
  }
  for (int64_t r = 0; r < rows; ++r) {
    pack_row(format, w.data() + r * cols, r, cols, p.storage_.get(), p.scales_.data(),
             p.sums_.data());
  }
  return p;
}

PackedWeights PackedWeights::random(WeightFormat format, int64_t rows, int64_t cols,
                                    uint64_t seed) {
  check_shape(format, rows, cols);
  // Drawn and packed row by row so that a large matrix never exists in f32 at once.
  PackedWeights p;
  p.format_ = format;
  p.rows_ = rows;
  p.cols_ = cols;
  p.storage_bytes_ = storage_bytes_for(format, rows, cols);
  const size_t alloc = static_cast<size_t>((p.storage_bytes_ + 63) / 64 * 64);
  p.storage_ = detail::allocate_huge_shared(static_cast<int64_t>(alloc));
  if (!p.storage_) throw std::bad_alloc();
  // int8 / int4 tiles have padding inside the storage (and int4 nibbles are OR-ed into place);
  // other formats only pad the tail.
  const bool tiled = format == WeightFormat::kInt8 || format == WeightFormat::kInt4;
  const size_t keep = tiled ? 0 : static_cast<size_t>(p.storage_bytes_);
  std::memset(p.storage_.get() + keep, 0, alloc - keep);
  if (format == WeightFormat::kInt8) {
    p.scales_.assign(static_cast<size_t>(rows), 0.0f);
    p.sums_.assign(static_cast<size_t>(rows), 0);
  }
  std::vector<float> row(static_cast<size_t>(cols));
  uint64_t state = seed;
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : row) {
      // SplitMix64, top 24 bits -> [-1, 1)
      v = static_cast<float>(base::splitmix64_next(state) >> 40) * 0x1.0p-23f - 1.0f;
    }
    pack_row(format, row.data(), r, cols, p.storage_.get(), p.scales_.data(), p.sums_.data());
  }
  return p;
}

PackedWeights PackedWeights::clone() const {
  PackedWeights p;
  p.format_ = format_;
  p.rows_ = rows_;
  p.cols_ = cols_;
  p.storage_bytes_ = storage_bytes_;
  const size_t alloc = static_cast<size_t>((storage_bytes_ + 63) / 64 * 64);
  p.storage_ = detail::allocate_huge_shared(static_cast<int64_t>(alloc));
  if (!p.storage_) throw std::bad_alloc();
  std::memcpy(p.storage_.get(), storage_.get(), alloc);
  p.scales_ = scales_;
  p.sums_ = sums_;
  return p;
}

void PackedWeights::dequantise_row(int64_t r, std::span<float> out) const {
  if (r < 0 || r >= rows_ || static_cast<int64_t>(out.size()) != cols_) {
    throw std::invalid_argument("PackedWeights::dequantise_row: row " + std::to_string(r) + " of " +
                                std::to_string(rows_) + " into " + std::to_string(out.size()) +
                                " floats, expected cols " + std::to_string(cols_));
  }
  llmcap::kernels::dequantise_row(*this, r, out.data());
}

int64_t PackedWeights::bytes_for(WeightFormat format, int64_t rows, int64_t cols) {
  check_shape(format, rows, cols);
  const int64_t per_row = format == WeightFormat::kInt8 ? 8 : 0;  // f32 scale + int32 sum
  return storage_bytes_for(format, rows, cols) + per_row * rows;
}

int64_t PackedWeights::bytes() const {
  return storage_bytes_ +
         static_cast<int64_t>(scales_.size() * sizeof(float) + sums_.size() * sizeof(int32_t));
}

float PackedWeights::at(int64_t r, int64_t c) const {
  if (r < 0 || r >= rows_ || c < 0 || c >= cols_) {
    throw std::out_of_range("PackedWeights::at: (" + std::to_string(r) + ", " + std::to_string(c) +
                            ") outside rows " + std::to_string(rows_) + " x cols " +
                            std::to_string(cols_));
  }
  switch (format_) {
    case WeightFormat::kF32:
      return reinterpret_cast<const float*>(storage_.get())[r * cols_ + c];
    case WeightFormat::kBf16:
      return bf16_to_f32(reinterpret_cast<const uint16_t*>(storage_.get())[r * cols_ + c]);
    case WeightFormat::kInt8:
      return scales_[static_cast<size_t>(r)] * static_cast<float>(reinterpret_cast<const int8_t*>(
                                                   storage_.get())[int8_offset(r, c, cols_)]);
    case WeightFormat::kInt4: {
      const Int4Location at = int4_location(r, c, cols_);
      uint16_t scale_bf16;
      std::memcpy(&scale_bf16, storage_.get() + at.scale_byte, 2);
      const int q = (storage_.get()[at.byte] >> at.shift) & 0x0f;
      return bf16_to_f32(scale_bf16) * static_cast<float>(q - 8);
    }
  }
  return 0.0f;
}

void matmul(const PackedWeights& w, std::span<const float> x, int64_t batch, std::span<float> y,
            ThreadPool& pool, Isa isa) {
  const int64_t rows = w.rows();
  const int64_t cols = w.cols();
  if (rows < 1 || cols < 1) throw std::invalid_argument("matmul: weights are empty");
  if (batch < 1) {
    throw std::invalid_argument("matmul: batch must be >= 1, got " + std::to_string(batch));
  }
  if (static_cast<int64_t>(x.size()) != batch * cols) {
    throw std::invalid_argument("matmul: x has " + std::to_string(x.size()) +
                                " elements, expected batch " + std::to_string(batch) + " x cols " +
                                std::to_string(cols) + " = " + std::to_string(batch * cols));
  }
  if (static_cast<int64_t>(y.size()) != batch * rows) {
    throw std::invalid_argument("matmul: y has " + std::to_string(y.size()) +
                                " elements, expected batch " + std::to_string(batch) + " x rows " +
                                std::to_string(rows) + " = " + std::to_string(batch * rows));
  }
  if (isa != Isa::kScalar && isa != Isa::kAvx2 && isa != Isa::kAvx512) {
    throw std::invalid_argument("matmul: unknown isa " + isa_name(isa));
  }
  if (!isa_supported(isa)) {
    throw std::invalid_argument("matmul: isa " + isa_name(isa) + " is not supported by this CPU");
  }
  constexpr int64_t kMaxSlice = 64;
  MatmulKernel* const kernel = kernel_table(isa).matmul_for(w.format());
  for (int64_t b0 = 0; b0 < batch; b0 += kMaxSlice) {
    const int64_t nb = std::min(kMaxSlice, batch - b0);
    kernel(w, x.data() + b0 * cols, nb, y.data() + b0 * rows, pool);
  }
}

namespace detail {
void set_avx512_extensions_enabled(bool enabled) { g_avx512_extensions.store(enabled); }
bool avx512_extensions_enabled() { return g_avx512_extensions.load(); }
}  // namespace detail

}  // namespace llmcap::kernels
