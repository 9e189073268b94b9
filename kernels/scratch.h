// Grow-only 64-byte-aligned scratch memory for kernels (internal to kernels/).
// Defined in scratch.cpp, a translation unit built without ISA flags, so the per-ISA kernel
// files can share it without any AVX-512 code reaching an AVX2 build.
#pragma once

#include <cstdint>
#include <memory>

namespace llmcap::kernels::detail {

/// `bytes` (rounded up to 64) of 64-byte-aligned memory for std::free; from 4 KiB up 4 KiB
/// aligned (the reference decoder's KV heads start on 4 KiB boundaries, kv_capacity_tokens).
/// From 2 MiB up, the block is 2 MiB aligned and advised for transparent huge pages (madvise
/// MADV_HUGEPAGE; Linux only, a refusal is ignored): streamed weights, KV caches and probe buffers
/// then take one TLB entry per 2 MiB instead of per 4 KiB. On the development VM (THP "madvise")
/// this made int4 and int8 batch-1 products 3-13% faster (4096 x 14336, median of 15, side by
/// side). Throws std::bad_alloc.
void* allocate_large(int64_t bytes);

/// Deleter for allocate_large's blocks (std::free).
struct FreeDeleter {
  void operator()(void* p) const noexcept;
};

/// `bytes` (rounded up to 64) of 64-byte-aligned memory on 2 MiB pages, whatever the size:
/// from 2 MiB up a block of its own (allocate_large), below that a piece of a shared 64 MiB
/// block (bump allocation), which is freed when its last piece is (the pointers share the
/// block's ownership). Thread-safe. Weights and benchmark copies smaller than 2 MiB otherwise
/// land on 4 KiB pages, and on the development VM memory on 4 KiB pages was at times 10-40x
/// slower to stream: in full calibration sweeps, decode attention over 0.5-1 MiB KV copies
/// took 0.5-2.4 ms instead of 0.05-0.1 ms and 1024 x 1024 int4 products 0.3-0.4 ms instead of
/// 15 us (medians; the fastest runs were normal), and the same sweep with every such copy on
/// 2 MiB pages had no such cell (2026-11-30). Throws std::bad_alloc.
std::shared_ptr<uint8_t> allocate_huge_shared(int64_t bytes);

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
