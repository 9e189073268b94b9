// A parallel loop over independent tasks (the planner's search and analyses use it).
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
