#include "kernels/scratch.h"

#include <cstdlib>
#include <new>

namespace llmcap::kernels::detail {

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
