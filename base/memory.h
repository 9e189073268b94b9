// Process-wide memory allocator settings for the programs that run many simulations in one
// process (the CLI and the GUI call it in main()).
#pragma once

namespace llmcap::base {

/// Keeps memory freed by one simulation in the process for the next one instead of returning it
/// to the operating system: with glibc's defaults, blocks above its mmap threshold (grown
/// dynamically, at most 32 MiB) are unmapped when freed and the heap top is trimmed, so each of
/// a plan's hundreds of simulations faults its large vectors (request records, ITL gaps, event
/// heaps) in page by page again. Sets glibc's mmap threshold to 1 GiB and its trim threshold to
/// 2 GiB (mallopt); the peak resident memory is what it was, but it is held until exit. Call
/// once, first thing in main(), before any thread starts. No effect without glibc. Returns
/// whether both settings were accepted. Measured: docs/measurements/plan-speed.md.
bool keep_freed_memory_for_reuse();

}  // namespace llmcap::base
