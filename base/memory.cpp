#include "base/memory.h"

#include <cstdlib>  // defines __GLIBC__ under glibc

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace llmcap::base {

bool keep_freed_memory_for_reuse() {
#if defined(__GLIBC__)
  constexpr int kMmapThresholdBytes = 1 << 30;
  // mallopt takes an int: the largest trim threshold it can express (about 2 GiB).
  constexpr int kTrimThresholdBytes = 0x7fffffff;
  const bool mmap_ok = mallopt(M_MMAP_THRESHOLD, kMmapThresholdBytes) == 1;
  const bool trim_ok = mallopt(M_TRIM_THRESHOLD, kTrimThresholdBytes) == 1;
  return mmap_ok && trim_ok;
#else
  return false;
#endif
}

}  // namespace llmcap::base
