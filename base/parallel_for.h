// A parallel loop over independent tasks: the one parallel_for of the tree outside the kernels.
// The planner's candidate loop (plan/plan_session.cpp), its search and analyses
// (plan/search.cpp, plan/analysis.cpp) and the what-if walks (plan/what_if.cpp) use it.
//
// The kernels keep their own executor, kernels::ThreadPool (kernels/thread_pool.h), for speed:
// this loop starts and joins its threads on every call (~25 us for an empty call on 2 threads),
// which is nothing next to a planner task (a simulation, milliseconds to seconds), while a
// decode step calls its pool for every matmul and attention of every layer, hundreds of times
// per step with gaps of microseconds; the pool's persistent, spinning workers answer an empty
// call in ~0.8 us (both measured on the 2-core build VM, 2 threads). Its interface differs for
// the same reason: contiguous chunks [begin, end) with the thread index (per-thread scratch)
// instead of one call per index. The sweep's workers (app/sweep.cpp) are no loop either: they
// run while the calling thread collects their results and writes them to the database.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace llmcap::base {

/// Runs `task(i)` for i in [0, n) on up to `num_threads` threads (0: one per hardware thread),
/// the calling thread included; each index runs once. Rethrows the first failure after every
/// thread has stopped (a thread stops at its first failure). Results must not depend on which
/// thread runs an index (tasks write only their own slot).
template <typename Task>
void parallel_for(size_t n, int num_threads, Task task) {
  std::atomic<size_t> next{0};
  std::mutex mutex;
  std::exception_ptr failure;
  auto worker = [&] {
    for (size_t i = next++; i < n; i = next++) {
      try {
        task(i);
      } catch (...) {
        const std::lock_guard lock(mutex);
        if (!failure) failure = std::current_exception();
        return;
      }
    }
  };
  int threads = num_threads > 0
                    ? num_threads
                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  threads = std::min<int>(threads, static_cast<int>(std::max<size_t>(n, 1)));
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace llmcap::base
