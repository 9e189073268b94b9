// The future event list of the discrete-event simulator.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/sim_time.h"

namespace llmcap::sim {

/// Phase of an event: at equal times, events run in phase order, then in the order they were
/// scheduled. Step completions run first (they free KV blocks and batch slots), then arrivals,
/// then scheduling decisions (so all arrivals of one instant are seen by one decision).
enum class Phase : uint8_t { kStepComplete = 0, kArrival = 1, kSchedule = 2 };

/// What an event does, and what its `target` is.
///  - kArrival: a request arrives (target: the open loop's position in arrival order, or the
///    closed loop's user).
///  - kSchedule: a replica decides its next step (target: the replica).
///  - kStepDone: a replica's step ends (target: the replica).
///  - kTransferDone: a KV transfer lands at its decode replica (target: the request id).
///  - kAdmit: a request reaches the engine after the fleet's front-end latency (target: the
///    request id).
enum class EventKind : uint8_t { kArrival, kSchedule, kStepDone, kTransferDone, kAdmit };

/// A scheduled event.
struct Event {
  SimTime time;
  Phase phase = Phase::kArrival;
  uint64_t sequence = 0;  ///< handed out by EventQueue::schedule, unique per queue
  EventKind kind = EventKind::kArrival;
  int64_t target = 0;
};

/// Min-priority queue of events ordered by (time, phase, sequence): a strict total order, so
/// a run is fully determined by its inputs. Not thread-safe; one per simulation.
class EventQueue {
 public:
  /// Adds an event; returns its sequence number.
  uint64_t schedule(SimTime time, Phase phase, EventKind kind, int64_t target);
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  /// The earliest event. Precondition: !empty().
  Event top() const { return to_event(heap_.front()); }
  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop();

 private:
  /// (time, phase, sequence) packed into two unsigned words with the same lexicographic order:
  /// time (sign bit flipped, so negative times sort first) in `high`, phase in the top 8 bits
  /// of `low` and the sequence (< 2^56) below it. Two word comparisons per heap step.
  struct Entry {
    uint64_t high;
    uint64_t low;
    int64_t target;
    EventKind kind;
    bool before(const Entry& o) const { return high < o.high || (high == o.high && low < o.low); }
  };
  static Event to_event(const Entry& e);
  std::vector<Entry> heap_;  ///< a binary min-heap in Entry::before order
  uint64_t next_sequence_ = 0;
};

}  // namespace llmcap::sim
