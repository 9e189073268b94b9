// Grow-only 64-byte-aligned scratch memory for kernels (internal to kernels/).
// Defined in scratch.cpp, a translation unit built without ISA flags, so the per-ISA kernel
// files can share it without any AVX-512 code reaching an AVX2 build.
#pragma once

#include <cstdint>

namespace llmcap::kernels::detail {

class ScratchBuffer {
 public:
  ScratchBuffer() = default;
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  ~ScratchBuffer();
  /// At least `bytes` bytes, 64-byte aligned; reallocates (contents lost) only to grow, in
  /// multiples of 4 KiB. Throws std::bad_alloc.
  void* get(int64_t bytes);

 private:
  void* p_ = nullptr;
  int64_t size_ = 0;
};

}  // namespace llmcap::kernels::detail
