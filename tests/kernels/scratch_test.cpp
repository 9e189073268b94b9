#include "kernels/scratch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

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

}  // namespace
}  // namespace llmcap::kernels::detail
