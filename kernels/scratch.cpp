#include "kernels/scratch.h"

#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace llmcap::kernels::detail {

void* allocate_large(int64_t bytes) {
  constexpr size_t kHuge = size_t{2} << 20;
  size_t n = (static_cast<size_t>(bytes < 0 ? 0 : bytes) + 63) / 64 * 64;
  if (n == 0) n = 64;
  const bool huge = n >= kHuge;
  if (huge) n = (n + kHuge - 1) / kHuge * kHuge;
  void* p = std::aligned_alloc(huge ? kHuge : 64, n);
  if (p == nullptr) throw std::bad_alloc();
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (huge) (void)madvise(p, n, MADV_HUGEPAGE);
#endif
  return p;
}

void FreeDeleter::operator()(void* p) const noexcept { std::free(p); }

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
