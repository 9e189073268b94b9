#include "sim/event_queue.h"

#include <tuple>

namespace llmcap::sim {

bool EventQueue::Later::operator()(const Event& a, const Event& b) const {
  // std::priority_queue keeps the "largest" on top, so "a after b" puts the earliest on top.
  return std::tie(a.time, a.phase, a.sequence) > std::tie(b.time, b.phase, b.sequence);
}

uint64_t EventQueue::schedule(SimTime time, Phase phase, int32_t kind, int64_t target) {
  const uint64_t sequence = next_sequence_++;
  heap_.push(Event{time, phase, sequence, kind, target});
  return sequence;
}

Event EventQueue::pop() {
  Event event = heap_.top();
  heap_.pop();
  return event;
}

}  // namespace llmcap::sim
