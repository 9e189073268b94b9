#include "kernels/thread_pool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace llmcap::kernels {
namespace {

using ::testing::HasSubstr;

struct Chunk {
  int64_t begin, end;
  int thread;
};

std::vector<Chunk> record(ThreadPool& pool, int64_t n, int64_t grain) {
  std::mutex mu;
  std::vector<Chunk> chunks;
  pool.parallel_for(
      n,
      [&](int64_t b, int64_t e, int t) {
        std::lock_guard<std::mutex> lock(mu);
        chunks.push_back({b, e, t});
      },
      grain);
  return chunks;
}

TEST(ThreadPool, ChunksCoverRangeExactlyOnceAndRespectGrain) {
  for (int threads : {1, 2, 3, 5}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.num_threads(), threads);
    for (int64_t n : {1, 2, 3, 7, 16, 100, 1001}) {
      for (int64_t grain : {1, 4, 16, 2000}) {
        SCOPED_TRACE("threads " + std::to_string(threads) + " n " + std::to_string(n) + " grain " +
                     std::to_string(grain));
        std::vector<Chunk> chunks = record(pool, n, grain);
        std::vector<int> hits(n, 0);
        std::vector<int> thread_seen(threads, 0);
        int64_t min_size = n, max_size = 0;
        for (const Chunk& c : chunks) {
          ASSERT_LT(c.begin, c.end);
          ASSERT_GE(c.thread, 0);
          ASSERT_LT(c.thread, threads);
          ++thread_seen[c.thread];
          for (int64_t i = c.begin; i < c.end; ++i) ++hits[i];
          // Every chunk starts on a grain boundary; all but the one ending at n are multiples.
          EXPECT_EQ(c.begin % grain, 0);
          if (c.end != n) {
            EXPECT_EQ((c.end - c.begin) % grain, 0);
          }
          min_size = std::min(min_size, c.end - c.begin);
          max_size = std::max(max_size, c.end - c.begin);
        }
        for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[i], 1) << "index " << i;
        for (int t = 0; t < threads; ++t) EXPECT_LE(thread_seen[t], 1);
        // Sizes differ by at most grain when every thread got a chunk.
        if (static_cast<int>(chunks.size()) == threads) {
          EXPECT_LE(max_size - min_size, grain);
        }
        // As many chunks as there are blocks of grain, up to the thread count.
        EXPECT_EQ(static_cast<int64_t>(chunks.size()),
                  std::min<int64_t>(threads, (n + grain - 1) / grain));
      }
    }
  }
}

TEST(ThreadPool, ChunkZeroRunsOnCaller) {
  ThreadPool pool(3);
  std::thread::id caller = std::this_thread::get_id();
  std::atomic<int> on_caller{0}, elsewhere{0};
  pool.parallel_for(3, [&](int64_t, int64_t, int t) {
    bool here = std::this_thread::get_id() == caller;
    if (t == 0) {
      EXPECT_TRUE(here);
    }
    (here ? on_caller : elsewhere).fetch_add(1);
  });
  EXPECT_EQ(on_caller.load(), 1);
  EXPECT_EQ(elsewhere.load(), 2);
}

TEST(ThreadPool, ZeroItemsCallsNothing) {
  ThreadPool pool(2);
  bool called = false;
  pool.parallel_for(0, [&](int64_t, int64_t, int) { called = true; });
  EXPECT_FALSE(called);
}

TEST(ThreadPool, ExceptionFromWorkerPropagatesAndPoolStaysUsable) {
  ThreadPool pool(2);
  for (int thrower : {0, 1}) {
    try {
      pool.parallel_for(2, [&](int64_t, int64_t, int t) {
        if (t == thrower) throw std::runtime_error("boom from " + std::to_string(t));
      });
      FAIL() << "no exception";
    } catch (const std::runtime_error& e) {
      EXPECT_EQ(std::string(e.what()), "boom from " + std::to_string(thrower));
    }
  }
  std::atomic<int64_t> sum{0};
  pool.parallel_for(100, [&](int64_t b, int64_t e, int) {
    for (int64_t i = b; i < e; ++i) sum += i;
  });
  EXPECT_EQ(sum.load(), 4950);
}

TEST(ThreadPool, OneThreadPoolRunsInline) {
  ThreadPool pool(1);
  std::thread::id caller = std::this_thread::get_id();
  std::vector<Chunk> chunks = record(pool, 10, 3);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].begin, 0);
  EXPECT_EQ(chunks[0].end, 10);
  pool.parallel_for(5,
                    [&](int64_t, int64_t, int) { EXPECT_EQ(std::this_thread::get_id(), caller); });
  EXPECT_THROW(pool.parallel_for(1, [](int64_t, int64_t, int) { throw std::logic_error("x"); }),
               std::logic_error);
}

TEST(ThreadPool, ManyCallsBackToBack) {
  ThreadPool pool(3);
  int64_t total = 0;
  for (int rep = 0; rep < 2000; ++rep) {
    std::atomic<int64_t> count{0};
    pool.parallel_for(7, [&](int64_t b, int64_t e, int) { count += e - b; });
    total += count.load();
  }
  EXPECT_EQ(total, 2000 * 7);
}

TEST(ThreadPool, CallersFromSeveralThreadsAreSerialised) {
  ThreadPool pool(2);
  std::atomic<int> inside{0}, max_inside{0};
  std::atomic<int64_t> total{0};
  auto caller = [&] {
    for (int rep = 0; rep < 200; ++rep) {
      pool.parallel_for(2, [&](int64_t b, int64_t e, int) {
        int now = ++inside;
        int prev = max_inside.load();
        while (now > prev && !max_inside.compare_exchange_weak(prev, now)) {
        }
        total += e - b;
        --inside;
      });
    }
  };
  std::thread a(caller), b(caller);
  a.join();
  b.join();
  EXPECT_EQ(total.load(), 2 * 200 * 2);
  EXPECT_LE(max_inside.load(), 2);  // never two calls' chunks at once on a 2-thread pool
}

TEST(ThreadPool, NestedCallOnSamePoolRunsInline) {
  ThreadPool pool(2);
  std::atomic<int64_t> inner_total{0};
  pool.parallel_for(2, [&](int64_t, int64_t, int) {
    pool.parallel_for(10, [&](int64_t b, int64_t e, int) { inner_total += e - b; });
  });
  EXPECT_EQ(inner_total.load(), 20);
}

TEST(ThreadPool, InvalidArguments) {
  try {
    ThreadPool pool(0);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("num_threads must be >= 1, got 0"));
  }
  ThreadPool pool(2);
  auto noop = [](int64_t, int64_t, int) {};
  try {
    pool.parallel_for(-1, noop);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("n must be >= 0, got -1"));
  }
  try {
    pool.parallel_for(4, noop, 0);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("grain must be >= 1, got 0"));
  }
}

}  // namespace
}  // namespace llmcap::kernels
