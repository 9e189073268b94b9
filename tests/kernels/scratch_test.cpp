#include "kernels/scratch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace llmcap::kernels::detail {
namespace {

TEST(AllocateLarge, SmallBlocksAre64ByteAlignedAndLargeOnes2MiB) {
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  for (const int64_t bytes : {int64_t{0}, int64_t{1}, int64_t{100}, int64_t{1} << 20}) {
    void* p = allocate_large(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 64, 0u) << bytes;
    std::memset(p, 1, static_cast<size_t>(bytes));  // writable for all of its bytes
    std::free(p);
  }
  for (const int64_t bytes : {int64_t{2} << 20, (int64_t{5} << 20) + 3}) {
    void* p = allocate_large(bytes);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % kHuge, 0u) << bytes;
    std::memset(p, 1, static_cast<size_t>(bytes));
    std::free(p);
  }
}

TEST(AllocateHugeShared, SmallPiecesShareAligned2MiBBlocksWithoutOverlap) {
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  std::vector<std::shared_ptr<uint8_t>> pieces;
  std::vector<int64_t> sizes = {1, 100, int64_t{300} << 10, int64_t{1} << 20, 64, 4097};
  for (const int64_t bytes : sizes) pieces.push_back(allocate_huge_shared(bytes));
  for (size_t i = 0; i < pieces.size(); ++i) {
    const auto a = reinterpret_cast<std::uintptr_t>(pieces[i].get());
    EXPECT_EQ(a % 64, 0u) << sizes[i];
    std::memset(pieces[i].get(), static_cast<int>(i + 1), static_cast<size_t>(sizes[i]));
  }
  // Each piece still holds what was written to it: no two overlap.
  for (size_t i = 0; i < pieces.size(); ++i) {
    for (int64_t j = 0; j < sizes[i]; j += 97) {
      ASSERT_EQ(pieces[i].get()[j], static_cast<uint8_t>(i + 1)) << "piece " << i << " byte " << j;
    }
  }
  // Consecutive small pieces are neighbours in one block (no other live pieces here fill it).
  const auto first = reinterpret_cast<std::uintptr_t>(pieces[0].get());
  const auto second = reinterpret_cast<std::uintptr_t>(pieces[1].get());
  EXPECT_EQ(second - first, 64u);
  // From 2 MiB up: a block of its own, 2 MiB aligned.
  const auto big = allocate_huge_shared((int64_t{2} << 20) + 1);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(big.get()) % kHuge, 0u);
  // A piece outlives the others and keeps its block (and bytes) alive.
  std::shared_ptr<uint8_t> kept = pieces[3];
  pieces.clear();
  EXPECT_EQ(kept.get()[(int64_t{1} << 20) - 1], 4);
}

}  // namespace
}  // namespace llmcap::kernels::detail
