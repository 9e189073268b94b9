// A fixed set of worker threads for data-parallel kernels.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>

namespace llmcap::kernels {

/// `num_threads` threads including the caller: parallel_for runs chunk 0 on the calling thread
/// and the others on num_threads - 1 persistent workers. Not reentrant: one parallel_for at a
/// time per pool (calls from several threads on one pool are serialised). A parallel_for issued
/// from inside fn on the same pool runs all its chunks on the calling thread instead of
/// deadlocking.
///
/// Idle workers spin on a generation counter for about 2 milliseconds after each call (busy for
/// the first 50 microseconds, then yielding their core between checks) and then block on a
/// condition variable; the caller likewise spins for the workers to finish, then blocks. A
/// decode step issues calls back to back with gaps of up to a few hundred microseconds (a run
/// of single-threaded attention calls), and waking a blocked worker costs ~100 us on a VM
/// (thread_pool.cpp, kSpin).
class ThreadPool {
 public:
  /// num_threads >= 1; throws std::invalid_argument otherwise.
  explicit ThreadPool(int num_threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int num_threads() const;

  /// Splits [0, n) into num_threads contiguous chunks (sizes differ by at most `grain`, each a
  /// multiple of `grain` except the last) and runs fn(begin, end, thread_index) for each
  /// non-empty chunk; returns when all are done. An exception from fn is rethrown here (the
  /// first one thrown; the other chunks still run to completion). Throws std::invalid_argument
  /// for n < 0 or grain < 1.
  void parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn,
                    int64_t grain = 1);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmcap::kernels
