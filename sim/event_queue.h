// The future event list of the discrete-event simulator.
#pragma once

#include <cstdint>
#include <queue>
#include <vector>

#include "sim/sim_time.h"

namespace llmcap::sim {

/// Phase of an event: at equal times, events run in phase order, then in the order they were
/// scheduled. Step completions run first (they free KV blocks and batch slots), then arrivals,
/// then scheduling decisions (so all arrivals of one instant are seen by one decision).
enum class Phase : uint8_t { kStepComplete = 0, kArrival = 1, kSchedule = 2 };

/// A scheduled event. `kind` and `target` are interpreted by the simulator (e.g. the replica
/// index or the request index).
struct Event {
  SimTime time;
  Phase phase = Phase::kArrival;
  uint64_t sequence = 0;  ///< handed out by EventQueue::schedule, unique per queue
  int32_t kind = 0;
  int64_t target = 0;
};

/// Min-priority queue of events ordered by (time, phase, sequence): a strict total order, so
/// a run is fully determined by its inputs. Not thread-safe; one per simulation.
class EventQueue {
 public:
  /// Adds an event; returns its sequence number.
  uint64_t schedule(SimTime time, Phase phase, int32_t kind, int64_t target);
  bool empty() const { return heap_.empty(); }
  size_t size() const { return heap_.size(); }
  /// The earliest event. Precondition: !empty().
  const Event& top() const { return heap_.top(); }
  /// Removes and returns the earliest event. Precondition: !empty().
  Event pop();

 private:
  struct Later {
    bool operator()(const Event& a, const Event& b) const;
  };
  std::priority_queue<Event, std::vector<Event>, Later> heap_;
  uint64_t next_sequence_ = 0;
};

}  // namespace llmcap::sim
