#include "kernels/thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define LLMCAP_PAUSE() _mm_pause()
#else
#define LLMCAP_PAUSE() std::this_thread::yield()
#endif

namespace llmcap::kernels {

namespace {

/// How long an idle worker (or a waiting caller) spins before blocking. Waking a blocked worker
/// costs ~100 us on the 2-vCPU development VM (futex wake and an interrupt through the
/// hypervisor), so the spin must outlast the gaps between parallel calls of a decode step:
/// with 50 us, Qwen2.5-0.5B int8 at batch 16 and context 256 (decode attention of 2 KV heads x
/// 256 tokens runs on the calling thread alone, 16 calls in a row, ~250 us) took its output
/// projection in 2.9-4.3 ms per step against 0.83-0.91 ms with 2 ms (2026-11-30, interleaved
/// runs; the same product alone takes 0.7 ms). OpenMP runtimes and llama.cpp's pool also spin
/// for about a millisecond or more before sleeping.
constexpr auto kSpin = std::chrono::microseconds(2000);

/// The pool whose parallel_for the current thread is executing (for the reentrancy fallback).
thread_local const void* t_active_pool = nullptr;

/// The first part of kSpin is a busy spin (pause); after it the spinner yields its core
/// between checks, so that a pool with more threads than free cores (oversubscribed, or beside
/// other work) lets the threads it waits for run.
constexpr auto kBusySpin = std::chrono::microseconds(50);

/// Spins until pred() or kSpin has passed; returns pred().
template <class Pred>
bool spin_until(Pred pred) {
  auto start = std::chrono::steady_clock::now();
  bool busy = true;
  for (int i = 0;; ++i) {
    if (pred()) return true;
    if (busy) {
      LLMCAP_PAUSE();
    } else {
      std::this_thread::yield();
    }
    if ((i & 63) == 63 || !busy) {
      const auto waited = std::chrono::steady_clock::now() - start;
      if (waited > kSpin) return pred();
      busy = waited < kBusySpin;
    }
  }
}

}  // namespace

struct ThreadPool::Impl {
  int num_threads = 1;
  std::vector<std::thread> workers;

  std::mutex call_mu;  // serialises parallel_for callers

  // Job description, written by the caller before the generation is bumped.
  const std::function<void(int64_t, int64_t, int)>* fn = nullptr;
  int64_t n = 0, grain = 1;

  std::mutex wake_mu;
  std::condition_variable wake_cv;
  std::atomic<uint64_t> generation{0};
  int sleepers = 0;  // guarded by wake_mu
  std::atomic<bool> stop{false};

  std::mutex done_mu;
  std::condition_variable done_cv;
  std::atomic<int> remaining{0};

  std::mutex error_mu;
  std::exception_ptr error;

  /// Chunk `index` of [0, n) among `threads`: blocks of `grain`, the last (blocks % threads)
  /// chunks one block more, so the chunk holding n's partial block is among the larger ones and
  /// sizes differ by less than grain (or by grain exactly when n is a multiple of grain).
  static void chunk(int64_t n, int64_t grain, int threads, int index, int64_t& begin,
                    int64_t& end) {
    const int64_t blocks = (n + grain - 1) / grain;
    const int64_t base = blocks / threads, extra = blocks % threads;
    // Chunks >= first_big get base + 1 blocks; with fewer blocks than threads, the first ones
    // (the caller's chunk 0 included) get one block each.
    if (base == 0) {
      begin = std::min(n, index * grain);
      end = index < blocks ? std::min(n, (index + 1) * grain) : begin;
      return;
    }
    const int64_t first_big = threads - extra;
    const int64_t b0 = index * base + std::max<int64_t>(0, index - first_big);
    const int64_t b1 = b0 + base + (index >= first_big ? 1 : 0);
    begin = std::min(n, b0 * grain);
    end = std::min(n, b1 * grain);
  }

  void run_chunk(int index) {
    int64_t begin = 0, end = 0;
    chunk(n, grain, num_threads, index, begin, end);
    if (begin >= end) return;
    try {
      (*fn)(begin, end, index);
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mu);
      if (!error) error = std::current_exception();
    }
  }

  void worker_loop(int index) {
    uint64_t seen = 0;
    for (;;) {
      if (!spin_until([&] { return generation.load(std::memory_order_acquire) != seen; })) {
        std::unique_lock<std::mutex> lock(wake_mu);
        ++sleepers;
        wake_cv.wait(lock, [&] {
          return stop.load() || generation.load(std::memory_order_acquire) != seen;
        });
        --sleepers;
      }
      if (stop.load()) return;
      seen = generation.load(std::memory_order_acquire);
      t_active_pool = this;
      run_chunk(index);
      t_active_pool = nullptr;
      if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(done_mu);
        done_cv.notify_one();
      }
    }
  }
};

ThreadPool::ThreadPool(int num_threads) : impl_(std::make_unique<Impl>()) {
  if (num_threads < 1) {
    throw std::invalid_argument("ThreadPool: num_threads must be >= 1, got " +
                                std::to_string(num_threads));
  }
  impl_->num_threads = num_threads;
  impl_->workers.reserve(num_threads - 1);
  for (int i = 1; i < num_threads; ++i) {
    impl_->workers.emplace_back([impl = impl_.get(), i] { impl->worker_loop(i); });
  }
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(impl_->wake_mu);
    impl_->stop.store(true);
    impl_->generation.fetch_add(1, std::memory_order_release);  // releases spinning workers
  }
  impl_->wake_cv.notify_all();
  for (auto& t : impl_->workers) t.join();
}

int ThreadPool::num_threads() const { return impl_->num_threads; }

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int64_t, int)>& fn,
                              int64_t grain) {
  if (n < 0) throw std::invalid_argument("parallel_for: n must be >= 0, got " + std::to_string(n));
  if (grain < 1) {
    throw std::invalid_argument("parallel_for: grain must be >= 1, got " + std::to_string(grain));
  }
  if (n == 0) return;
  Impl& p = *impl_;

  // Reentrant call from inside fn, a single thread, or a single block: run inline.
  if (t_active_pool == &p || p.num_threads == 1 || n <= grain) {
    if (t_active_pool == &p || p.num_threads == 1) {
      // Same chunking as the parallel case, all on this thread.
      for (int i = 0; i < p.num_threads; ++i) {
        int64_t b = 0, e = 0;
        Impl::chunk(n, grain, p.num_threads, i, b, e);
        if (b < e) fn(b, e, i);
      }
    } else {
      fn(0, n, 0);
    }
    return;
  }

  std::lock_guard<std::mutex> call_lock(p.call_mu);
  p.fn = &fn;
  p.n = n;
  p.grain = grain;
  p.error = nullptr;
  p.remaining.store(p.num_threads - 1, std::memory_order_relaxed);
  bool any_sleeping = false;
  {
    std::lock_guard<std::mutex> lock(p.wake_mu);
    p.generation.fetch_add(1, std::memory_order_release);
    any_sleeping = p.sleepers > 0;
  }
  if (any_sleeping) p.wake_cv.notify_all();

  t_active_pool = &p;
  p.run_chunk(0);
  t_active_pool = nullptr;

  if (!spin_until([&] { return p.remaining.load(std::memory_order_acquire) == 0; })) {
    std::unique_lock<std::mutex> lock(p.done_mu);
    p.done_cv.wait(lock, [&] { return p.remaining.load(std::memory_order_acquire) == 0; });
  }
  p.fn = nullptr;
  if (p.error) {
    std::exception_ptr e = p.error;
    p.error = nullptr;
    std::rethrow_exception(e);
  }
}

}  // namespace llmcap::kernels
