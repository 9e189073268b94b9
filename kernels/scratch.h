// Grow-only 64-byte-aligned scratch memory for kernels (internal to kernels/).
// Defined in scratch.cpp, a translation unit built without ISA flags, so the per-ISA kernel
// files can share it without any AVX-512 code reaching an AVX2 build.
#pragma once

#include <cstdint>

namespace llmcap::kernels::detail {

/// `bytes` (rounded up to 64) of 64-byte-aligned memory for std::free. From 2 MiB up, the block
/// is 2 MiB aligned and advised for transparent huge pages (madvise MADV_HUGEPAGE; Linux only,
/// a refusal is ignored): streamed weights, KV caches and probe buffers then take one TLB
/// entry per 2 MiB instead of per 4 KiB. On the development VM (THP "madvise") this made int4
/// and int8 batch-1 products 3-13% faster (4096 x 14336, median of 15, side by side).
/// Throws std::bad_alloc.
void* allocate_large(int64_t bytes);

/// Deleter for allocate_large's blocks (std::free).
struct FreeDeleter {
  void operator()(void* p) const noexcept;
};

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
