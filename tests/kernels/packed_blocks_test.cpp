// Tests of the packed weight blocks of kernels/matmul.h (Int8Group, Int4SuperBlock): the structs
// name the bytes int8_offset and int4_location compute, and packing gives the bytes of record
// (hashes taken from the byte-arithmetic packer these structs replaced, 2026-12-02).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/matmul.h"

namespace llmcap::kernels {
namespace {

// Byte offset of `field` in the storage of `p`.
int64_t offset_in(const PackedWeights& p, const void* field) {
  return static_cast<const uint8_t*>(field) - static_cast<const uint8_t*>(p.data());
}

TEST(PackedBlocks, Int8GroupNamesTheBytesOfInt8Offset) {
  for (int64_t cols : {1, 3, 4, 45, 128}) {
    const int64_t rows = 19, groups = (cols + 3) / 4;
    const auto p = PackedWeights::random(WeightFormat::kInt8, rows, cols, 3);
    const auto* blocks = static_cast<const Int8Group*>(p.data());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        const Int8Group& g = blocks[(r / kTileRows) * groups + c / Int8Group::kCols];
        const int8_t* q = &g.q[r % kTileRows][c % Int8Group::kCols];
        ASSERT_EQ(offset_in(p, q), int8_offset(r, c, cols)) << r << "," << c << " of " << cols;
      }
    }
  }
}

TEST(PackedBlocks, Int4SuperBlockNamesTheBytesOfInt4Location) {
  for (int64_t cols : {32, 64, 96, 224}) {
    const int64_t rows = 19, super_blocks = (cols + 63) / 64;
    const auto p = PackedWeights::random(WeightFormat::kInt4, rows, cols, 4);
    const auto* blocks = static_cast<const Int4SuperBlock*>(p.data());
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t c = 0; c < cols; ++c) {
        SCOPED_TRACE(std::to_string(r) + "," + std::to_string(c) + " of " + std::to_string(cols));
        const Int4SuperBlock& sb = blocks[(r / kTileRows) * super_blocks + c / 64];
        const int64_t h = (c % 64) / 32, in_block = c % 32, i = r % kTileRows;
        const Int4Location at = int4_location(r, c, cols);
        ASSERT_EQ(offset_in(p, &sb.scale[h][i]), at.scale_byte);
        ASSERT_EQ(offset_in(p, &sb.q[4 * h + (in_block % 16) / 4][i][in_block % 4]), at.byte);
        ASSERT_EQ(at.shift, in_block < 16 ? 0 : 4);
      }
    }
  }
}

TEST(PackedBlocks, BlocksAreWholeAlignedCacheLines) {
  EXPECT_EQ(sizeof(Int8Group), 64u);
  EXPECT_EQ(sizeof(Int4SuperBlock), 576u);
  EXPECT_EQ(alignof(Int8Group), 64u);
  EXPECT_EQ(alignof(Int4SuperBlock), 64u);
  EXPECT_EQ(offsetof(Int4SuperBlock, q), 64u);
  const auto p = PackedWeights::random(WeightFormat::kInt4, 3, 64, 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p.data()) % 64, 0u);
}

// FNV-1a over the packed storage, then the row scales and row sums.
uint64_t fnv1a(uint64_t h, const void* data, size_t n) {
  const auto* b = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= b[i];
    h *= 0x100000001b3ull;
  }
  return h;
}
uint64_t packed_hash(const PackedWeights& p) {
  const int64_t r = p.rows(), c = p.cols();
  int64_t storage = 0;
  switch (p.format()) {
    case WeightFormat::kF32:
      storage = r * c * 4;
      break;
    case WeightFormat::kBf16:
      storage = r * c * 2;
      break;
    case WeightFormat::kInt8:
      storage = (r + 15) / 16 * 16 * ((c + 3) / 4 * 4);
      break;
    case WeightFormat::kInt4:
      storage = (r + 15) / 16 * ((c + 63) / 64) * 576;
      break;
  }
  uint64_t h = fnv1a(0xcbf29ce484222325ull, p.data(), static_cast<size_t>(storage));
  h = fnv1a(h, p.row_scales().data(), p.row_scales().size() * sizeof(float));
  return fnv1a(h, p.row_sums().data(), p.row_sums().size() * sizeof(int32_t));
}

// Values in [-2, 2) from splitmix64, with exact zeros now and then (zero blocks, zero scales).
std::vector<float> values(int64_t rows, int64_t cols) {
  std::vector<float> w(static_cast<size_t>(rows * cols));
  uint64_t state = 42 + static_cast<uint64_t>(rows * 1000 + cols);
  for (auto& v : w) {
    state += 0x9e3779b97f4a7c15ull;
    uint64_t z = state;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    v = (z % 17 == 0) ? 0.0f : static_cast<float>(z >> 40) * 0x1.0p-22f - 2.0f;
  }
  return w;
}

TEST(PackedBlocks, PackedBytesAreThoseOfRecord) {
  struct Case {
    WeightFormat format;
    int64_t rows, cols;
    uint64_t packed, random;  // hashes of pack(values(rows, cols)) and random(seed 7 + rows)
  };
  const Case cases[] = {
      {WeightFormat::kF32, 7, 37, 0x289aa11f74f0bd94ull, 0x04753b24d83ab91aull},
      {WeightFormat::kBf16, 9, 45, 0xa74eb9cb05eb6c76ull, 0x4f8b2ba30bebf470ull},
      {WeightFormat::kInt8, 19, 45, 0xb45271ae3bc9f54bull, 0x493453c9138230d6ull},
      {WeightFormat::kInt8, 33, 128, 0x0e1b0d5dfd6f53b1ull, 0xa6f1e1816c90a44bull},
      {WeightFormat::kInt8, 1, 3, 0x00dd8e7c79df4512ull, 0x8cbd076f8c9cfa27ull},
      {WeightFormat::kInt4, 19, 96, 0x410e4f20c51d79f8ull, 0x773dda9398b49b6cull},
      {WeightFormat::kInt4, 33, 224, 0x29aad111a2f5708dull, 0xfa608b391ee2c81eull},
      {WeightFormat::kInt4, 1, 32, 0x5d256a00e2317944ull, 0xb9ef06658727ec7dull},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(to_string(c.format)) + " " + std::to_string(c.rows) + " x " +
                 std::to_string(c.cols));
    const std::vector<float> w = values(c.rows, c.cols);
    EXPECT_EQ(packed_hash(PackedWeights::pack(c.format, w, c.rows, c.cols)), c.packed);
    EXPECT_EQ(packed_hash(PackedWeights::random(c.format, c.rows, c.cols, 7 + c.rows)), c.random);
  }
}

}  // namespace
}  // namespace llmcap::kernels
