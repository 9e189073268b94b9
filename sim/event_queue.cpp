#include "sim/event_queue.h"

#include <stdexcept>

namespace llmcap::sim {
namespace {

constexpr uint64_t kSignBit = uint64_t{1} << 63;
constexpr int kPhaseShift = 56;
constexpr uint64_t kSequenceMask = (uint64_t{1} << kPhaseShift) - 1;

}  // namespace

Event EventQueue::to_event(const Entry& e) {
  Event event;
  event.time = SimTime::Nanoseconds(static_cast<int64_t>(e.high ^ kSignBit));
  event.phase = static_cast<Phase>(e.low >> kPhaseShift);
  event.sequence = e.low & kSequenceMask;
  event.kind = e.kind;
  event.target = e.target;
  return event;
}

uint64_t EventQueue::schedule(SimTime time, Phase phase, EventKind kind, int64_t target) {
  const uint64_t sequence = next_sequence_++;
  if (sequence > kSequenceMask) throw std::length_error("EventQueue: more than 2^56 events");
  const uint64_t high = static_cast<uint64_t>(time.ns()) ^ kSignBit;
  const uint64_t low = (static_cast<uint64_t>(phase) << kPhaseShift) | sequence;
  const Entry entry{high, low, target, kind};
  // Sift up.
  size_t i = heap_.size();
  heap_.push_back(entry);
  while (i > 0) {
    const size_t parent = (i - 1) / 2;
    if (!entry.before(heap_[parent])) break;
    heap_[i] = heap_[parent];
    i = parent;
  }
  heap_[i] = entry;
  return sequence;
}

Event EventQueue::pop() {
  const Event event = to_event(heap_.front());
  const Entry last = heap_.back();
  heap_.pop_back();
  const size_t n = heap_.size();
  if (n > 0) {
    // Sift the last entry down from the root.
    size_t i = 0;
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && heap_[child + 1].before(heap_[child])) ++child;
      if (!heap_[child].before(last)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = last;
  }
  return event;
}

}  // namespace llmcap::sim
