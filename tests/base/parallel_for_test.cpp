#include "base/parallel_for.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace llmcap::base {
namespace {

TEST(ParallelForTest, RunsEveryIndexOnce) {
  for (const int threads : {0, 1, 3, 16}) {
    std::vector<int> runs(100, 0);
    parallel_for(runs.size(), threads, [&](size_t i) { ++runs[i]; });
    for (const int r : runs) EXPECT_EQ(r, 1);
  }
}

TEST(ParallelForTest, NothingToDoIsFine) {
  int calls = 0;
  parallel_for(0, 4, [&](size_t) { ++calls; });
  EXPECT_EQ(calls, 0);
}

TEST(ParallelForTest, RethrowsAFailure) {
  EXPECT_THROW(parallel_for(10, 2,
                            [](size_t i) {
                              if (i == 7) throw std::runtime_error("seven");
                            }),
               std::runtime_error);
}

}  // namespace
}  // namespace llmcap::base
