#include "base/memory.h"

#include <gtest/gtest.h>

#include <cstdlib>  // defines __GLIBC__ under glibc
#include <vector>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace llmcap::base {
namespace {

#if defined(__GLIBC__)
#if defined(__SANITIZE_ADDRESS__)
#define LLMCAP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LLMCAP_ASAN 1
#endif
#endif

TEST(Memory, FreedLargeBlocksStayInTheProcessForTheNextAllocation) {
#if defined(LLMCAP_ASAN)
  GTEST_SKIP() << "AddressSanitizer replaces glibc's allocator: its settings do not apply";
#endif
  ASSERT_TRUE(keep_freed_memory_for_reuse());
  // A 64 MiB block (above glibc's largest default mmap threshold, 32 MiB) comes from the heap
  // now, not from its own mapping: mallinfo2 counts no mapped bytes for it, and after it is
  // freed the heap keeps it (no trim below 2 GiB).
  constexpr size_t kBlockBytes = size_t{64} << 20;
  const struct mallinfo2 before = mallinfo2();
  {
    std::vector<char> block(kBlockBytes, 1);
    const struct mallinfo2 held = mallinfo2();
    EXPECT_EQ(held.hblkhd, before.hblkhd);  // no new mapping
    EXPECT_GE(held.uordblks, kBlockBytes);
  }
  const struct mallinfo2 after = mallinfo2();
  EXPECT_GE(after.fordblks, kBlockBytes);  // freed, still the process's
}
#else
TEST(Memory, WithoutGlibcNothingIsSet) { EXPECT_FALSE(keep_freed_memory_for_reuse()); }
#endif

}  // namespace
}  // namespace llmcap::base
