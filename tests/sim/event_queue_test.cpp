#include "sim/event_queue.h"

#include <gtest/gtest.h>

#include <vector>

#include "sim/sim_time.h"

namespace llmcap::sim {
namespace {

TEST(SimTimeTest, ConvertsUnitsExactly) {
  EXPECT_EQ(SimTime::Seconds(1.5).ns(), 1'500'000'000);
  EXPECT_EQ(SimTime::MilliSeconds(2.5).ns(), 2'500'000);
  EXPECT_EQ(SimTime::Nanoseconds(7).ns(), 7);
  EXPECT_EQ(SimTime::Zero().ns(), 0);
  EXPECT_DOUBLE_EQ(SimTime::Nanoseconds(250'000'000).seconds(), 0.25);
  // Seconds round to the nearest nanosecond, both ways.
  EXPECT_EQ(SimTime::Seconds(1.4e-9).ns(), 1);
  EXPECT_EQ(SimTime::Seconds(1.6e-9).ns(), 2);
  EXPECT_EQ(SimTime::Seconds(-1.6e-9).ns(), -2);
}

TEST(SimTimeTest, ArithmeticAndOrder) {
  SimTime t = SimTime::MilliSeconds(10);
  t += SimTime::MilliSeconds(5);
  EXPECT_EQ(t, SimTime::MilliSeconds(15));
  EXPECT_EQ((t - SimTime::MilliSeconds(20)).ns(), -5'000'000);
  EXPECT_LT(SimTime::Nanoseconds(1), SimTime::Nanoseconds(2));
  EXPECT_LT(SimTime::Nanoseconds(INT64_MAX - 1), SimTime::Max());
}

TEST(EventQueueTest, OrdersByTimeThenPhaseThenScheduleOrder) {
  EventQueue queue;
  const SimTime t1 = SimTime::MilliSeconds(1);
  const SimTime t2 = SimTime::MilliSeconds(2);
  // Scheduled deliberately out of order; `target` labels the expected pop position.
  queue.schedule(t2, Phase::kStepComplete, EventKind::kArrival, 4);
  queue.schedule(t1, Phase::kSchedule, EventKind::kArrival, 3);
  queue.schedule(t1, Phase::kArrival, EventKind::kArrival, 1);
  queue.schedule(t1, Phase::kStepComplete, EventKind::kArrival, 0);
  queue.schedule(t1, Phase::kArrival, EventKind::kArrival,
                 2);  // same time and phase as #1: after it
  queue.schedule(t2, Phase::kArrival, EventKind::kArrival, 5);
  queue.schedule(t2, Phase::kArrival, EventKind::kArrival, 6);
  EXPECT_EQ(queue.size(), 7u);
  std::vector<int64_t> order;
  while (!queue.empty()) order.push_back(queue.pop().target);
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(EventQueueTest, SequenceNumbersAreUniqueAndIncreasing) {
  EventQueue queue;
  const uint64_t a = queue.schedule(SimTime::Zero(), Phase::kArrival, EventKind::kTransferDone, 8);
  const uint64_t b = queue.schedule(SimTime::Zero(), Phase::kArrival, EventKind::kTransferDone, 9);
  EXPECT_LT(a, b);
  const Event& top = queue.top();
  EXPECT_EQ(top.sequence, a);
  EXPECT_EQ(top.kind, EventKind::kTransferDone);
  EXPECT_EQ(top.target, 8);
  EXPECT_EQ(top.phase, Phase::kArrival);
}

TEST(EventQueueTest, EqualTimeAndPhaseKeepsScheduleOrderAtScale) {
  EventQueue queue;
  for (int64_t i = 0; i < 1000; ++i) {
    // Interleave two times so that the heap has to reorder.
    queue.schedule(SimTime::Nanoseconds(i % 2), Phase::kArrival, EventKind::kArrival, i);
  }
  int64_t previous_even = -2, previous_odd = -1;
  for (int64_t i = 0; i < 1000; ++i) {
    const Event e = queue.pop();
    if (i < 500) {
      EXPECT_EQ(e.time.ns(), 0);
      EXPECT_EQ(e.target, previous_even + 2);
      previous_even = e.target;
    } else {
      EXPECT_EQ(e.time.ns(), 1);
      EXPECT_EQ(e.target, previous_odd + 2);
      previous_odd = e.target;
    }
  }
}

}  // namespace
}  // namespace llmcap::sim
