#include "kernels/scratch.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace llmcap::kernels::detail {

void* allocate_large(int64_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20, kPage = 4096;
  size_t n = (static_cast<size_t>(bytes < 0 ? 0 : bytes) + 63) / 64 * 64;
  if (n == 0) n = 64;
  const bool huge = n >= kHuge;
  const size_t align = huge ? kHuge : n >= kPage ? kPage : 64;
  n = (n + align - 1) / align * align;
  void* p = std::aligned_alloc(align, n);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (huge) (void)madvise(p, n, MADV_HUGEPAGE);
#endif
  return p;
}

void FreeDeleter::operator()(void* p) const noexcept { std::free(p); }

std::shared_ptr<uint8_t> allocate_huge_shared(int64_t bytes) {
  constexpr int64_t kHuge = int64_t{2} << 20, kBlock = int64_t{64} << 20;
  const int64_t n = std::max<int64_t>(64, (bytes + 63) / 64 * 64);
  if (n >= kHuge) {
    return std::shared_ptr<uint8_t>(static_cast<uint8_t*>(allocate_large(n)), FreeDeleter{});
  }
  static std::mutex mu;
  static std::weak_ptr<uint8_t> block;  // the block being filled, while any piece lives
  static int64_t used = 0;
  std::lock_guard<std::mutex> lock(mu);
  std::shared_ptr<uint8_t> b = block.lock();
  if (!b || used + n > kBlock) {
    b = std::shared_ptr<uint8_t>(static_cast<uint8_t*>(allocate_large(kBlock)), FreeDeleter{});
    block = b;
    used = 0;
  }
  std::shared_ptr<uint8_t> piece(b, b.get() + used);  // shares the block's ownership
  used += n;
  return piece;
}

ScratchBuffer::~ScratchBuffer() { std::free(p_); }

void* ScratchBuffer::get(int64_t bytes) {
  if (bytes > size_) {
    std::free(p_);
    size_ = (bytes + 4095) / 4096 * 4096;
    p_ = std::aligned_alloc(64, static_cast<size_t>(size_));
    if (p_ == nullptr) {
      size_ = 0;
      throw std::bad_alloc();
    }
  }
  return p_;
}

}  // namespace llmcap::kernels::detail
