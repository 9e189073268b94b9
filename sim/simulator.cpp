#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <map>
#include <queue>
#include <sstream>
#include <utility>

#include "sim/check.h"
#include "sim/event_queue.h"
#include "sim/input_error.h"
#include "sim/random.h"

namespace llmcap::sim {

BatchingPolicy parse_batching_policy(const std::string& name, const std::string& context) {
  if (name == "static") return BatchingPolicy::kStatic;
  if (name == "continuous") return BatchingPolicy::kContinuous;
  if (name == "chunked_prefill") return BatchingPolicy::kChunkedPrefill;
  throw InputError(context + ": unknown batching policy \"" + name +
                   "\"; known: static, continuous, chunked_prefill");
}

const char* batching_policy_name(BatchingPolicy policy) {
  switch (policy) {
    case BatchingPolicy::kStatic:
      return "static";
    case BatchingPolicy::kContinuous:
      return "continuous";
    case BatchingPolicy::kChunkedPrefill:
      return "chunked_prefill";
  }
  return "?";
}

RouterKind parse_router(const std::string& name, const std::string& context) {
  if (name == "round_robin") return RouterKind::kRoundRobin;
  if (name == "least_outstanding") return RouterKind::kLeastOutstanding;
  if (name == "least_kv_load") return RouterKind::kLeastKvLoad;
  if (name == "power_of_two") return RouterKind::kPowerOfTwo;
  throw InputError(context + ": unknown router \"" + name +
                   "\"; known: round_robin, least_outstanding, least_kv_load, power_of_two");
}

const char* router_name(RouterKind router) {
  switch (router) {
    case RouterKind::kRoundRobin:
      return "round_robin";
    case RouterKind::kLeastOutstanding:
      return "least_outstanding";
    case RouterKind::kLeastKvLoad:
      return "least_kv_load";
    case RouterKind::kPowerOfTwo:
      return "power_of_two";
  }
  return "?";
}

namespace {

enum EventKind : int32_t { kArrive = 0, kStepDone = 1, kScheduleStep = 2 };

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }
int64_t floor_mod(int64_t a, int64_t m) {
  const int64_t r = a % m;
  return r < 0 ? r + m : r;
}

/// A double-ended queue of request ids on a growable ring buffer: after warm-up, pushes and
/// pops never allocate (std::deque allocates and frees chunks as it moves).
class IdDeque {
 public:
  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  int64_t front() const { return buffer_[head_]; }
  void pop_front() {
    head_ = (head_ + 1) & (buffer_.size() - 1);
    --size_;
  }
  void push_back(int64_t id) {
    grow_if_full();
    buffer_[(head_ + size_) & (buffer_.size() - 1)] = id;
    ++size_;
  }
  void push_front(int64_t id) {
    grow_if_full();
    head_ = (head_ + buffer_.size() - 1) & (buffer_.size() - 1);
    buffer_[head_] = id;
    ++size_;
  }

 private:
  void grow_if_full() {
    if (size_ < buffer_.size()) return;
    std::vector<int64_t> bigger(std::max<size_t>(16, buffer_.size() * 2));  // power of two
    for (size_t i = 0; i < size_; ++i) bigger[i] = buffer_[(head_ + i) & (buffer_.size() - 1)];
    buffer_.swap(bigger);
    head_ = 0;
  }
  std::vector<int64_t> buffer_;
  size_t head_ = 0;
  size_t size_ = 0;
};

/// Number of decoding sequences per KV phase (context length mod block size, relative to the
/// replica's decode counter): a flat array for the usual block sizes, an ordered map for huge
/// ones (at most max_num_seqs phases are ever in use).
class PhaseCounts {
 public:
  static constexpr int64_t kMaxFlatBlockSize = int64_t{1} << 16;
  explicit PhaseCounts(int64_t block_size_tokens) {
    if (block_size_tokens <= kMaxFlatBlockSize) flat_.assign(block_size_tokens, 0);
  }
  void add(int64_t phase, int64_t delta) {
    if (!flat_.empty()) {
      flat_[phase] += delta;
    } else if ((sparse_[phase] += delta) == 0) {
      sparse_.erase(phase);
    }
  }
  int64_t get(int64_t phase) const {
    if (!flat_.empty()) return flat_[phase];
    const auto it = sparse_.find(phase);
    return it == sparse_.end() ? 0 : it->second;
  }

 private:
  std::vector<int64_t> flat_;
  std::map<int64_t, int64_t> sparse_;
};

enum class SeqState : uint8_t { kWaiting, kPrefilling, kDecoding, kFinished };

/// Simulation-side state of one request (its RequestRecord holds the reported fields).
///
/// A decoding sequence is not touched by the steps it takes part in: all decoding sequences of
/// a replica advance together, so its emitted tokens are num_emitted + (the replica's decode
/// counter - join_step) and its context (prompt + emitted) is offset + counter, where offset =
/// prompt + num_emitted - join_step is fixed while it decodes. Hence a step costs O(1), not
/// O(batch).
struct Sequence {
  int64_t num_prompt_tokens = 0;
  int64_t num_output_tokens = 0;
  /// Output tokens emitted; while decoding, those emitted when it joined at join_step.
  int64_t num_emitted = 0;
  int64_t prefill_target = 0;  ///< tokens of its current prefill (prompt + emitted at admission)
  int64_t num_prefilled = 0;   ///< of prefill_target, those scheduled so far
  int64_t join_step = 0;       ///< replica decode counter when it started decoding
  int64_t admit_order = -1;    ///< replica admission counter at its (last) admission
  int64_t prev = -1;           ///< running list (admission order) links
  int64_t next = -1;
  int64_t user = -1;   ///< closed-loop user, or -1
  SimTime last_token;  ///< time of its last token (while decoding: as of join_step)
  int32_t replica = -1;
  SeqState state = SeqState::kWaiting;
  bool scheduled = false;
  bool in_step = false;  ///< has a prefill chunk in the step in flight

  int64_t offset() const { return num_prompt_tokens + num_emitted - join_step; }
};

/// A heap entry: the decoding sequence `id` admitted as `admit_order` emits its last token at
/// the end of the decode step that brings the counter to finish_step. Stale once the sequence
/// is preempted (its admit_order changes or it stops decoding).
struct Finish {
  int64_t finish_step;
  int64_t admit_order;
  int64_t id;
  bool operator>(const Finish& o) const {
    return finish_step != o.finish_step ? finish_step > o.finish_step : admit_order > o.admit_order;
  }
};

/// Sliding maximum of the decode-step gaps g_k = D_k - D_{k-1} (D_k: end of the replica's k-th
/// decode step), for queries over [l, current k]: a deque of (k, g_k) with decreasing g, so
/// the answer is the first entry with index >= l. Entries below every live query are dropped.
class GapMax {
 public:
  void push(int64_t k, int64_t gap_ns) {
    while (!entries_.empty() && entries_.back().second <= gap_ns) entries_.pop_back();
    entries_.emplace_back(k, gap_ns);
  }
  /// Largest g_k with k >= l (pushed so far); 0 when none.
  int64_t max_from(int64_t l) const {
    const auto it = std::lower_bound(
        entries_.begin(), entries_.end(), l,
        [](const std::pair<int64_t, int64_t>& e, int64_t value) { return e.first < value; });
    return it == entries_.end() ? 0 : it->second;
  }
  void drop_below(int64_t l) {
    while (!entries_.empty() && entries_.front().first < l) entries_.pop_front();
  }
  void clear() { entries_.clear(); }

 private:
  std::deque<std::pair<int64_t, int64_t>> entries_;
};

/// Time averages of piecewise-constant signals over fixed windows (one replica).
class WindowRecorder {
 public:
  enum Signal { kWaiting = 0, kBatch = 1, kKvUsed = 2, kBusy = 3, kNumSignals = 4 };
  struct Window {
    double area[kNumSignals] = {0, 0, 0, 0};  ///< value x ns
    int64_t max_waiting = 0;
    int64_t num_steps = 0;
  };

  void set(Signal s, SimTime now, int64_t value, int64_t interval_ns) {
    integrate(s, now, interval_ns);
    value_[s] = value;
  }
  void count_step(SimTime now, int64_t interval_ns) {
    window(now.ns() / interval_ns).num_steps += 1;
  }
  /// Brings every signal up to `end` and returns the windows [0, end) (at least one).
  std::vector<InstanceWindow> finish(SimTime end, int64_t interval_ns, int64_t num_kv_blocks) {
    for (int s = 0; s < kNumSignals; ++s) integrate(static_cast<Signal>(s), end, interval_ns);
    const int64_t num_windows = std::max<int64_t>(1, ceil_div(end.ns(), interval_ns));
    window(num_windows - 1);
    std::vector<InstanceWindow> out(static_cast<size_t>(num_windows));
    for (int64_t w = 0; w < num_windows; ++w) {
      const Window& acc = windows_[w];
      InstanceWindow& o = out[w];
      o.start = SimTime::Nanoseconds(w * interval_ns);
      o.end = w + 1 < num_windows ? SimTime::Nanoseconds((w + 1) * interval_ns) : end;
      o.num_steps = acc.num_steps;
      o.max_num_waiting = acc.max_waiting;
      if (o.end <= o.start) continue;  // a run that ends at 0 (no requests): all zeros
      const double span = static_cast<double>((o.end - o.start).ns());
      o.mean_num_waiting = acc.area[kWaiting] / span;
      o.mean_batch_size = acc.area[kBatch] / span;
      o.mean_kv_utilization = acc.area[kKvUsed] / span / static_cast<double>(num_kv_blocks);
      o.busy_fraction = acc.area[kBusy] / span;
    }
    return out;
  }

 private:
  Window& window(int64_t w) {
    if (static_cast<int64_t>(windows_.size()) <= w) windows_.resize(static_cast<size_t>(w + 1));
    return windows_[w];
  }
  /// Adds value x [since, now) to the windows it covers.
  void integrate(Signal s, SimTime now, int64_t interval_ns) {
    int64_t t = since_[s];
    const int64_t end = now.ns();
    since_[s] = end;
    if (end <= t) return;
    const int64_t value = value_[s];
    while (t < end) {
      const int64_t w = t / interval_ns;
      const int64_t stop = std::min(end, (w + 1) * interval_ns);
      Window& acc = window(w);
      acc.area[s] += static_cast<double>(value) * static_cast<double>(stop - t);
      if (s == kWaiting) acc.max_waiting = std::max(acc.max_waiting, value);
      t = stop;
    }
  }
  int64_t value_[kNumSignals] = {0, 0, 0, 0};
  int64_t since_[kNumSignals] = {0, 0, 0, 0};
  std::vector<Window> windows_;
};

struct Replica {
  explicit Replica(int64_t block_size_tokens) : phase_counts(block_size_tokens) {}

  IdDeque waiting;             ///< FCFS; preempted sequences rejoin at the front
  int64_t waiting_blocks = 0;  ///< sum over `waiting` of ceil(prefill tokens / block)
  // Running sequences (admitted, holding KV), a linked list in admission order.
  int64_t running_head = -1;
  int64_t running_tail = -1;
  int64_t num_running = 0;
  int64_t next_admit_order = 0;
  std::vector<int64_t> prefilling;     ///< partially prefilled (chunked), admission order
  std::vector<int64_t> step_prefills;  ///< prefill chunks of the step in flight, admission order
  bool step_has_decodes = false;       ///< the step in flight advances every decoding sequence
  // Decoding sequences, in aggregate.
  int64_t num_decoders = 0;
  int64_t decode_context_tokens = 0;  ///< sum of their prompt + emitted tokens
  int64_t num_decode_steps = 0;       ///< decode counter
  SimTime last_decode_end;            ///< end of the last decode step
  PhaseCounts phase_counts;           ///< decoders by floor_mod(offset, block)
  std::priority_queue<Finish, std::vector<Finish>, std::greater<>> finishes;
  std::vector<std::pair<int64_t, int64_t>> new_decoders;  ///< (id, admit_order) before 1st decode
  GapMax gaps;
  std::vector<std::pair<int64_t, int64_t>> finishing;  ///< scratch: (admit_order, id)
  std::vector<int64_t> first_gaps;                     ///< scratch: gaps of new decoders (ns)

  bool busy = false;  ///< a step is in flight
  bool schedule_pending = false;
  int64_t num_free_blocks = 0;
  int64_t num_outstanding = 0;  ///< routed here and not finished
  WindowRecorder series;
  bool has_work() const { return !waiting.empty() || num_running > 0; }
};

struct User {
  LengthSample next;  ///< lengths of the request it will send at its pending arrival
};

std::string describe(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

void validate(const Workload& workload, const FleetConfig& fleet, const SimOptions& options) {
  auto positive = [](const char* name, int64_t value) {
    if (value <= 0) {
      throw InputError(std::string(name) + ": expected a positive integer, got " +
                       std::to_string(value));
    }
  };
  const ServingConfig& serving = fleet.serving;
  const auto policy = static_cast<int>(serving.policy);
  if (policy < static_cast<int>(BatchingPolicy::kStatic) ||
      policy > static_cast<int>(BatchingPolicy::kChunkedPrefill)) {
    throw InputError("serving.policy: expected static, continuous or chunked_prefill, got value " +
                     std::to_string(policy));
  }
  const auto router = static_cast<int>(fleet.router);
  if (router < static_cast<int>(RouterKind::kRoundRobin) ||
      router > static_cast<int>(RouterKind::kPowerOfTwo)) {
    throw InputError(
        "fleet.router: expected round_robin, least_outstanding, least_kv_load or power_of_two, "
        "got value " +
        std::to_string(router));
  }
  positive("fleet.num_replicas", fleet.num_replicas);
  positive("serving.max_num_seqs", serving.max_num_seqs);
  if (serving.policy == BatchingPolicy::kChunkedPrefill) {
    if (serving.max_num_batched_tokens < 1) {
      throw InputError(
          "serving.max_num_batched_tokens: chunked_prefill needs a chunk budget of at least 1 "
          "token per step, got " +
          std::to_string(serving.max_num_batched_tokens));
    }
    if (serving.max_num_batched_tokens < serving.max_num_seqs) {
      throw InputError(
          "serving.max_num_batched_tokens: chunked_prefill gives every running decode one token "
          "of the step's budget, so it must be >= serving.max_num_seqs (" +
          std::to_string(serving.max_num_seqs) + "), got " +
          std::to_string(serving.max_num_batched_tokens));
    }
  }
  positive("serving.max_num_batched_tokens", serving.max_num_batched_tokens);
  positive("serving.block_size_tokens", serving.block_size_tokens);
  positive("serving.num_kv_blocks", serving.num_kv_blocks);
  if (options.time_series_interval < SimTime::Zero()) {
    throw InputError("options.time_series_interval: expected >= 0 ns (0: no time series), got " +
                     std::to_string(options.time_series_interval.ns()) + " ns");
  }
  if (workload.closed_loop) {
    const ClosedLoopWorkload& closed = *workload.closed_loop;
    if (closed.num_users < 0) {
      throw InputError("closed_loop.num_users: expected a non-negative integer, got " +
                       std::to_string(closed.num_users));
    }
    if (!(closed.think_time_s >= 0) || !std::isfinite(closed.think_time_s)) {
      throw InputError("closed_loop.think_time_s: expected a non-negative number, got " +
                       describe(closed.think_time_s));
    }
    if (!(closed.duration_s > 0) || !std::isfinite(closed.duration_s)) {
      throw InputError("closed_loop.duration_s: expected a positive number, got " +
                       describe(closed.duration_s));
    }
    if (closed.num_users > 0 && closed.lengths.empty()) {
      throw InputError("closed_loop.lengths: expected at least one sample, got none");
    }
    for (size_t i = 0; i < closed.lengths.size(); ++i) {
      const LengthSample& s = closed.lengths[i];
      if (s.num_prompt_tokens < 1 || s.num_output_tokens < 1) {
        throw InputError("closed_loop.lengths[" + std::to_string(i) +
                         "]: expected prompt and output tokens >= 1, got " +
                         std::to_string(s.num_prompt_tokens) + " and " +
                         std::to_string(s.num_output_tokens));
      }
    }
    if (closed.think_time_s == 0 && closed.num_users > 0) {
      // With no think time, users whose requests are all rejected would loop forever at t=0.
      const int64_t capacity_tokens = serving.num_kv_blocks * serving.block_size_tokens;
      const bool any_fits =
          std::any_of(closed.lengths.begin(), closed.lengths.end(), [&](const LengthSample& s) {
            return s.num_prompt_tokens + s.num_output_tokens <= capacity_tokens;
          });
      if (!any_fits) {
        throw InputError("closed_loop.lengths: no request fits in a replica's KV cache (" +
                         std::to_string(capacity_tokens) + " tokens) and think_time_s is 0");
      }
    }
  } else {
    for (size_t i = 0; i < workload.open_loop.size(); ++i) {
      const RequestSpec& r = workload.open_loop[i];
      if (r.arrival < SimTime::Zero() || r.num_prompt_tokens < 1 || r.num_output_tokens < 1) {
        throw InputError("open_loop[" + std::to_string(i) +
                         "]: expected arrival >= 0 and prompt and output tokens >= 1, got " +
                         "arrival " + std::to_string(r.arrival.ns()) + " ns, " +
                         std::to_string(r.num_prompt_tokens) + " and " +
                         std::to_string(r.num_output_tokens) + " tokens");
      }
    }
  }
}

/// One run. All state lives here: simulations on different threads share nothing.
class Simulation {
 public:
  Simulation(const Workload& workload, const FleetConfig& fleet,
             const model::StepTimePredictor& predictor, uint64_t seed, const SimOptions& options)
      : workload_(workload),
        fleet_(fleet),
        serving_(fleet.serving),
        predictor_(predictor),
        options_(options),
        block_(fleet.serving.block_size_tokens),
        series_interval_ns_(options.time_series_interval.ns()),
        start_stream_(seed, Stream::kClosedLoopStart),
        think_stream_(seed, Stream::kClosedLoopThink),
        lengths_stream_(seed, Stream::kClosedLoopLengths),
        router_stream_(seed, Stream::kRouter) {
    replicas_.reserve(static_cast<size_t>(fleet.num_replicas));
    outstanding_.assign(static_cast<size_t>(fleet.num_replicas), 0);
    for (int64_t r = 0; r < fleet.num_replicas; ++r) {
      replicas_.emplace_back(block_).num_free_blocks = serving_.num_kv_blocks;
    }
  }

  SimResult run() {
    if (workload_.closed_loop) {
      start_closed_loop();
    } else {
      start_open_loop();
    }
    SimTime now = SimTime::Zero();
    while (!events_.empty()) {
      const Event event = events_.pop();
      LLMCAP_SIM_CHECK(event.time >= now);  // time never runs backwards
      now = event.time;
      switch (event.kind) {
        case kArrive:
          on_arrival(now, event.target);
          break;
        case kScheduleStep:
          on_schedule(now, event.target);
          break;
        case kStepDone:
          on_step_done(now, event.target);
          break;
        default:
          LLMCAP_SIM_CHECK(false);
      }
    }
    result_.end_time = now;
    check_conservation();
    if (series_interval_ns_ > 0) {
      result_.time_series.reserve(replicas_.size());
      for (Replica& replica : replicas_) {
        result_.time_series.push_back(
            replica.series.finish(now, series_interval_ns_, serving_.num_kv_blocks));
      }
    }
    return std::move(result_);
  }

 private:
  // ---- workload ----------------------------------------------------------------------------

  void start_open_loop() {
    const std::vector<RequestSpec>& specs = workload_.open_loop;
    open_order_.resize(specs.size());
    for (size_t i = 0; i < specs.size(); ++i) open_order_[i] = static_cast<int64_t>(i);
    std::stable_sort(open_order_.begin(), open_order_.end(),
                     [&](int64_t a, int64_t b) { return specs[a].arrival < specs[b].arrival; });
    result_.requests.reserve(specs.size());
    sequences_.reserve(specs.size());
    if (options_.record_itl_ns) {
      int64_t num_gaps = 0;
      for (const RequestSpec& spec : specs) num_gaps += spec.num_output_tokens - 1;
      result_.itl_ns.reserve(static_cast<size_t>(num_gaps));
    }
    if (!specs.empty()) schedule_open_arrival(0);
  }

  /// Open-loop arrivals are fed one at a time (the next is scheduled when one arrives), so the
  /// event heap stays small.
  void schedule_open_arrival(size_t position) {
    const RequestSpec& spec = workload_.open_loop[open_order_[position]];
    events_.schedule(spec.arrival, Phase::kArrival, kArrive, static_cast<int64_t>(position));
  }

  void start_closed_loop() {
    const ClosedLoopWorkload& closed = *workload_.closed_loop;
    users_.resize(static_cast<size_t>(closed.num_users));
    for (int64_t user = 0; user < closed.num_users; ++user) {
      const SimTime start = SimTime::Seconds(start_stream_.uniform01() * closed.think_time_s);
      schedule_user_request(user, start);
    }
  }

  /// The user's next request arrives at `time` unless that is at or after the duration.
  void schedule_user_request(int64_t user, SimTime time) {
    const ClosedLoopWorkload& closed = *workload_.closed_loop;
    if (time >= SimTime::Seconds(closed.duration_s)) return;
    users_[user].next = closed.lengths[lengths_stream_.index(closed.lengths.size())];
    events_.schedule(time, Phase::kArrival, kArrive, user);
  }

  // ---- events ------------------------------------------------------------------------------

  void on_arrival(SimTime now, int64_t target) {
    RequestSpec spec;
    int64_t user = -1;
    if (workload_.closed_loop) {
      user = target;
      spec.arrival = now;
      spec.num_prompt_tokens = users_[user].next.num_prompt_tokens;
      spec.num_output_tokens = users_[user].next.num_output_tokens;
    } else {
      const auto position = static_cast<size_t>(target);
      spec = workload_.open_loop[open_order_[position]];
      if (position + 1 < open_order_.size()) schedule_open_arrival(position + 1);
    }
    const auto id = static_cast<int64_t>(result_.requests.size());
    RequestRecord& record = result_.requests.emplace_back();
    record.id = id;
    record.client_class = spec.client_class;
    record.arrival = now;
    record.num_prompt_tokens = spec.num_prompt_tokens;
    record.num_output_tokens = spec.num_output_tokens;
    Sequence& seq = sequences_.emplace_back();
    seq.user = user;
    seq.num_prompt_tokens = spec.num_prompt_tokens;
    seq.num_output_tokens = spec.num_output_tokens;

    const int64_t blocks_needed = ceil_div(spec.num_prompt_tokens + spec.num_output_tokens, block_);
    if (blocks_needed > serving_.num_kv_blocks) {
      // Homogeneous replicas: if it fits nowhere the router is not consulted.
      record.rejected = true;
      record.first_scheduled = record.first_token = record.completion = now;
      seq.state = SeqState::kFinished;
      ++result_.num_rejected;
      if (user >= 0) user_done(user, now);
      return;
    }
    const int64_t r = route();
    record.replica = r;
    seq.replica = static_cast<int32_t>(r);
    Replica& replica = replicas_[r];
    ++replica.num_outstanding;
    ++outstanding_[r];
    push_waiting(replica, id, now, /*front=*/false);
    maybe_schedule(r, now);
  }

  int64_t route() {
    const auto n = static_cast<int64_t>(replicas_.size());
    switch (fleet_.router) {
      case RouterKind::kRoundRobin: {
        const int64_t r = next_round_robin_;
        next_round_robin_ = (next_round_robin_ + 1) % n;
        return r;
      }
      case RouterKind::kLeastOutstanding:
        // The first minimum: ties go to the lowest index.
        return std::min_element(outstanding_.begin(), outstanding_.end()) - outstanding_.begin();
      case RouterKind::kLeastKvLoad: {
        int64_t best = 0;
        int64_t best_room = replicas_[0].num_free_blocks - replicas_[0].waiting_blocks;
        for (int64_t r = 1; r < n; ++r) {
          const int64_t room = replicas_[r].num_free_blocks - replicas_[r].waiting_blocks;
          if (room > best_room) {
            best = r;
            best_room = room;
          }
        }
        return best;
      }
      case RouterKind::kPowerOfTwo: {
        if (n == 1) return 0;
        const auto a = static_cast<int64_t>(router_stream_.index(static_cast<uint64_t>(n)));
        auto b = static_cast<int64_t>(router_stream_.index(static_cast<uint64_t>(n - 1)));
        if (b >= a) ++b;
        const int64_t lo = std::min(a, b);
        const int64_t hi = std::max(a, b);
        return outstanding_[hi] < outstanding_[lo] ? hi : lo;
      }
    }
    LLMCAP_SIM_CHECK(false);
    return 0;
  }

  /// An idle replica with work gets a kSchedule event at `now`: it runs after every arrival of
  /// this instant, so one step decision sees them all. When no other event is due at `now`,
  /// that event would be the next one popped, so the decision runs at once (same result,
  /// half the event-queue traffic).
  void maybe_schedule(int64_t r, SimTime now) {
    Replica& replica = replicas_[r];
    if (replica.busy || replica.schedule_pending || !replica.has_work()) return;
    replica.schedule_pending = true;
    if (events_.empty() || events_.top().time > now) {
      on_schedule(now, r);
      return;
    }
    events_.schedule(now, Phase::kSchedule, kScheduleStep, r);
  }

  void on_schedule(SimTime now, int64_t r) {
    Replica& replica = replicas_[r];
    replica.schedule_pending = false;
    LLMCAP_SIM_CHECK(!replica.busy);
    const model::BatchShape shape = compose_step(now, replica);
    LLMCAP_SIM_CHECK(!shape.empty());  // an idle replica with work can always run a step
    LLMCAP_SIM_CHECK(replica.num_free_blocks >= 0);
    const double step_s = predictor_.step_time_s(shape);
    LLMCAP_SIM_CHECK(std::isfinite(step_s) && step_s > 0);
    replica.busy = true;
    ++result_.num_steps;
    if (series_interval_ns_ > 0) {
      WindowRecorder& series = replica.series;
      series.count_step(now, series_interval_ns_);
      series.set(WindowRecorder::kBusy, now, 1, series_interval_ns_);
      series.set(WindowRecorder::kBatch, now, shape.num_prefill_seqs + shape.num_decode_seqs,
                 series_interval_ns_);
      series.set(WindowRecorder::kKvUsed, now, serving_.num_kv_blocks - replica.num_free_blocks,
                 series_interval_ns_);
    }
    events_.schedule(now + SimTime::Seconds(step_s), Phase::kStepComplete, kStepDone, r);
  }

  // ---- queues ------------------------------------------------------------------------------

  int64_t prefill_tokens(const Sequence& seq) const {
    return seq.num_prompt_tokens + seq.num_emitted;  // recompute after preemption
  }

  void push_waiting(Replica& replica, int64_t id, SimTime now, bool front) {
    Sequence& seq = sequences_[id];
    seq.state = SeqState::kWaiting;
    if (front) {
      replica.waiting.push_front(id);
    } else {
      replica.waiting.push_back(id);
    }
    replica.waiting_blocks += ceil_div(prefill_tokens(seq), block_);
    if (series_interval_ns_ > 0) {
      replica.series.set(WindowRecorder::kWaiting, now,
                         static_cast<int64_t>(replica.waiting.size()), series_interval_ns_);
    }
  }

  /// Moves the front waiting sequence to the back of the running list as a prefill of
  /// prefill_tokens (its first chunk `num_tokens`), taking `num_blocks` free blocks (those of
  /// the whole prefill).
  void admit_front(Replica& replica, SimTime now, int64_t num_tokens, int64_t num_blocks) {
    const int64_t id = replica.waiting.front();
    replica.waiting.pop_front();
    Sequence& seq = sequences_[id];
    replica.waiting_blocks -= ceil_div(prefill_tokens(seq), block_);
    if (series_interval_ns_ > 0) {
      replica.series.set(WindowRecorder::kWaiting, now,
                         static_cast<int64_t>(replica.waiting.size()), series_interval_ns_);
    }
    replica.num_free_blocks -= num_blocks;
    seq.state = SeqState::kPrefilling;
    seq.prefill_target = prefill_tokens(seq);
    seq.num_prefilled = num_tokens;
    seq.admit_order = replica.next_admit_order++;
    if (!seq.scheduled) {
      seq.scheduled = true;
      result_.requests[id].first_scheduled = now;
    }
    link_running(replica, id);
  }

  void link_running(Replica& replica, int64_t id) {
    Sequence& seq = sequences_[id];
    seq.prev = replica.running_tail;
    seq.next = -1;
    if (replica.running_tail >= 0) {
      sequences_[replica.running_tail].next = id;
    } else {
      replica.running_head = id;
    }
    replica.running_tail = id;
    ++replica.num_running;
  }

  void unlink_running(Replica& replica, int64_t id) {
    Sequence& seq = sequences_[id];
    if (seq.prev >= 0) {
      sequences_[seq.prev].next = seq.next;
    } else {
      replica.running_head = seq.next;
    }
    if (seq.next >= 0) {
      sequences_[seq.next].prev = seq.prev;
    } else {
      replica.running_tail = seq.prev;
    }
    seq.prev = seq.next = -1;
    --replica.num_running;
  }

  // ---- decoding sequences (aggregate) ------------------------------------------------------

  int64_t phase_of(const Sequence& seq) const { return floor_mod(seq.offset(), block_); }
  /// Phase of the decoders that need a new block in the decode step taking the counter from
  /// k to k + 1 (their context c = offset + k has c mod block == 1).
  int64_t needing_phase(int64_t k) const { return floor_mod(1 - k, block_); }
  int64_t decoder_emitted(const Replica& replica, const Sequence& seq) const {
    return seq.num_emitted + (replica.num_decode_steps - seq.join_step);
  }

  /// A sequence whose prefill has just finished (and which has output left) starts decoding.
  void join_decoders(Replica& replica, int64_t id) {
    Sequence& seq = sequences_[id];
    seq.state = SeqState::kDecoding;
    seq.join_step = replica.num_decode_steps;
    replica.phase_counts.add(phase_of(seq), 1);
    replica.decode_context_tokens += seq.num_prompt_tokens + seq.num_emitted;
    ++replica.num_decoders;
    replica.finishes.push(
        Finish{seq.join_step + seq.num_output_tokens - seq.num_emitted, seq.admit_order, id});
    replica.new_decoders.emplace_back(id, seq.admit_order);
  }

  /// Takes a decoding sequence out of the aggregate (finish or preemption at the current
  /// counter): fixes its num_emitted and last_token, folds the gaps since it joined into
  /// max_itl, and returns the KV blocks it holds.
  int64_t leave_decoders(Replica& replica, int64_t id) {
    Sequence& seq = sequences_[id];
    const int64_t k = replica.num_decode_steps;
    const int64_t emitted = decoder_emitted(replica, seq);
    const int64_t context = seq.num_prompt_tokens + emitted;
    replica.phase_counts.add(phase_of(seq), -1);
    replica.decode_context_tokens -= context;
    --replica.num_decoders;
    if (k >= seq.join_step + 2) {
      RequestRecord& record = result_.requests[id];
      const SimTime gap = SimTime::Nanoseconds(replica.gaps.max_from(seq.join_step + 2));
      record.max_itl = std::max(record.max_itl, gap);
    }
    if (k > seq.join_step) seq.last_token = replica.last_decode_end;
    seq.num_emitted = emitted;
    return ceil_div(context - 1, block_);
  }

  /// Preempts the most recently admitted running sequence (vLLM's recompute preemption): all
  /// its blocks are freed and it goes back to the front of the waiting queue. Returns its id.
  int64_t preempt_last(Replica& replica, SimTime now) {
    const int64_t id = replica.running_tail;
    LLMCAP_SIM_CHECK(id >= 0);
    Sequence& seq = sequences_[id];
    int64_t blocks = 0;
    if (seq.state == SeqState::kDecoding) {
      blocks = leave_decoders(replica, id);
    } else {  // a partial prefill holds the blocks of its whole prefill
      LLMCAP_SIM_CHECK(seq.state == SeqState::kPrefilling && !seq.in_step);
      blocks = ceil_div(seq.prefill_target, block_);
      std::erase(replica.prefilling, id);
      seq.num_prefilled = 0;
    }
    unlink_running(replica, id);
    replica.num_free_blocks += blocks;
    ++result_.requests[id].num_preemptions;
    ++result_.num_preemptions;
    push_waiting(replica, id, now, /*front=*/true);
    return id;
  }

  // ---- step composition --------------------------------------------------------------------

  /// Builds the next step of `replica` per the batching policy and returns its shape.
  model::BatchShape compose_step(SimTime now, Replica& replica) {
    model::BatchShape shape;
    replica.step_prefills.clear();
    replica.step_has_decodes = false;
    switch (serving_.policy) {
      case BatchingPolicy::kContinuous:
        admit_whole_prefills(now, replica, shape);
        if (shape.num_prefill_seqs == 0) schedule_decodes(now, replica, shape);
        break;
      case BatchingPolicy::kStatic:
        if (replica.num_running == 0) admit_whole_prefills(now, replica, shape);
        if (shape.num_prefill_seqs == 0) schedule_decodes(now, replica, shape);
        break;
      case BatchingPolicy::kChunkedPrefill:
        compose_chunked(now, replica, shape);
        break;
    }
    return shape;
  }

  void add_chunk(Replica& replica, model::BatchShape& shape, int64_t id, int64_t num_cached,
                 int64_t num_tokens) {
    Sequence& seq = sequences_[id];
    seq.in_step = true;
    replica.step_prefills.push_back(id);
    ++shape.num_prefill_seqs;
    shape.num_prefill_tokens += num_tokens;
    shape.num_prefill_attention_pairs +=
        num_tokens * num_cached + num_tokens * (num_tokens + 1) / 2;
    shape.num_prefill_cached_tokens += num_cached;
    if (num_cached + num_tokens == seq.prefill_target) ++shape.num_prefill_seqs_completing;
  }

  /// vLLM v0 admission (kContinuous, kStatic): whole prefills, FCFS, stop at the first that
  /// does not fit.
  void admit_whole_prefills(SimTime now, Replica& replica, model::BatchShape& shape) {
    while (!replica.waiting.empty()) {
      if (replica.num_running >= serving_.max_num_seqs) break;
      const int64_t num_tokens = prefill_tokens(sequences_[replica.waiting.front()]);
      if (shape.num_prefill_seqs > 0 &&
          shape.num_prefill_tokens + num_tokens > serving_.max_num_batched_tokens) {
        break;
      }
      const int64_t num_blocks = ceil_div(num_tokens, block_);
      if (num_blocks > replica.num_free_blocks) break;
      const int64_t id = replica.waiting.front();
      admit_front(replica, now, num_tokens, num_blocks);
      add_chunk(replica, shape, id, 0, num_tokens);
    }
  }

  /// Every decoding sequence takes one token; those whose context crosses a block boundary
  /// take a new block, the most recently admitted running sequences being preempted until the
  /// blocks suffice. Equivalent to vLLM's oldest-first walk (each sequence short of a block
  /// preempts from the back, possibly itself): both keep the longest prefix of the running
  /// list whose new blocks fit in the free blocks plus those of the preempted suffix.
  void schedule_decodes(SimTime now, Replica& replica, model::BatchShape& shape) {
    if (replica.num_decoders == 0) return;
    const int64_t k = replica.num_decode_steps;
    const int64_t phase = needing_phase(k);
    int64_t needed = replica.phase_counts.get(phase);
    while (needed > replica.num_free_blocks) {
      const Sequence& victim = sequences_[replica.running_tail];
      if (victim.state == SeqState::kDecoding && phase_of(victim) == phase) --needed;
      preempt_last(replica, now);
    }
    replica.num_free_blocks -= needed;
    if (replica.num_decoders == 0) return;
    replica.step_has_decodes = true;
    shape.num_decode_seqs = replica.num_decoders;
    shape.num_decode_context_tokens = replica.decode_context_tokens;
  }

  /// Sarathi-Serve / vLLM chunked prefill: decodes first, then chunks of partial prefills
  /// (oldest first), then new admissions, all within max_num_batched_tokens. An admission
  /// reserves the blocks of its whole prefill (vLLM v0's block manager, on which Sarathi-Serve
  /// is built; Vidur's Sarathi scheduler does the same), so later chunks need no new blocks.
  void compose_chunked(SimTime now, Replica& replica, model::BatchShape& shape) {
    const int64_t preemptions_before = result_.num_preemptions;
    schedule_decodes(now, replica, shape);
    int64_t budget = serving_.max_num_batched_tokens - shape.num_decode_seqs;
    LLMCAP_SIM_CHECK(budget >= 1 || replica.prefilling.empty());
    for (const int64_t id : replica.prefilling) {
      if (budget == 0) break;
      Sequence& seq = sequences_[id];
      const int64_t cached = seq.num_prefilled;
      const int64_t chunk = std::min(seq.prefill_target - cached, budget);
      seq.num_prefilled += chunk;
      add_chunk(replica, shape, id, cached, chunk);
      budget -= chunk;
    }
    if (result_.num_preemptions != preemptions_before) return;  // as vLLM v1: no admissions
    while (!replica.waiting.empty() && budget > 0 && replica.num_running < serving_.max_num_seqs) {
      const int64_t id = replica.waiting.front();
      const int64_t target = prefill_tokens(sequences_[id]);
      const int64_t num_blocks = ceil_div(target, block_);
      if (num_blocks > replica.num_free_blocks) break;
      const int64_t chunk = std::min(target, budget);
      admit_front(replica, now, chunk, num_blocks);
      add_chunk(replica, shape, id, 0, chunk);
      if (chunk < target) replica.prefilling.push_back(id);
      budget -= chunk;
    }
  }

  // ---- step end ----------------------------------------------------------------------------

  void on_step_done(SimTime now, int64_t r) {
    Replica& replica = replicas_[r];
    LLMCAP_SIM_CHECK(replica.busy);
    replica.busy = false;

    replica.finishing.clear();
    if (replica.step_has_decodes) {
      // Every decoding sequence emits its next token. Those that decoded in the previous decode
      // step see the gap since its end; those that joined since (the most recently admitted
      // decoders, so the end of the running order) see the gap since their prefill's token.
      const int64_t k = replica.num_decode_steps + 1;
      const SimTime common_gap = now - replica.last_decode_end;
      replica.first_gaps.clear();
      for (const auto& [id, admit_order] : replica.new_decoders) {
        Sequence& seq = sequences_[id];
        if (seq.state != SeqState::kDecoding || seq.admit_order != admit_order) continue;
        LLMCAP_SIM_CHECK(seq.join_step == k - 1);
        const SimTime gap = now - seq.last_token;
        replica.first_gaps.push_back(gap.ns());
        RequestRecord& record = result_.requests[id];
        record.max_itl = std::max(record.max_itl, gap);
      }
      replica.new_decoders.clear();
      if (options_.record_itl_ns) {
        const auto num_old = replica.num_decoders - static_cast<int64_t>(replica.first_gaps.size());
        result_.itl_ns.insert(result_.itl_ns.end(), static_cast<size_t>(num_old), common_gap.ns());
        result_.itl_ns.insert(result_.itl_ns.end(), replica.first_gaps.begin(),
                              replica.first_gaps.end());
      }
      replica.num_decode_steps = k;
      if (k >= 2) replica.gaps.push(k, common_gap.ns());
      replica.last_decode_end = now;
      replica.decode_context_tokens += replica.num_decoders;
      num_emitted_tokens_ += replica.num_decoders;
      while (!replica.finishes.empty() && replica.finishes.top().finish_step <= k) {
        const Finish f = replica.finishes.top();
        replica.finishes.pop();
        const Sequence& seq = sequences_[f.id];
        if (seq.state != SeqState::kDecoding || seq.admit_order != f.admit_order) continue;
        LLMCAP_SIM_CHECK(f.finish_step == k);
        replica.finishing.emplace_back(f.admit_order, f.id);
      }
    }
    // Sequences whose prefill finished emit a token (their first, or the next after a
    // preemption); the others of the step keep prefilling.
    const size_t num_decoders_finishing = replica.finishing.size();
    for (const int64_t id : replica.step_prefills) {
      Sequence& seq = sequences_[id];
      seq.in_step = false;
      if (seq.state != SeqState::kPrefilling || seq.num_prefilled < seq.prefill_target) continue;
      if (serving_.policy == BatchingPolicy::kChunkedPrefill) std::erase(replica.prefilling, id);
      RequestRecord& record = result_.requests[id];
      ++num_emitted_tokens_;
      if (seq.num_emitted == 0) {
        record.first_token = now;
      } else {  // a recompute: the gap since the token before its preemption
        const SimTime gap = now - seq.last_token;
        record.max_itl = std::max(record.max_itl, gap);
        if (options_.record_itl_ns) result_.itl_ns.push_back(gap.ns());
      }
      ++seq.num_emitted;
      seq.last_token = now;
      if (seq.num_emitted == seq.num_output_tokens) {
        replica.finishing.emplace_back(seq.admit_order, id);
      } else {
        join_decoders(replica, id);
      }
    }
    if (num_decoders_finishing > 0 && replica.finishing.size() > num_decoders_finishing) {
      std::sort(replica.finishing.begin(), replica.finishing.end());
    }
    for (const auto& [admit_order, id] : replica.finishing) finish(replica, id, now);
    replica.step_prefills.clear();
    drop_stale_gaps(replica);
    if (series_interval_ns_ > 0) {
      WindowRecorder& series = replica.series;
      series.set(WindowRecorder::kBusy, now, 0, series_interval_ns_);
      series.set(WindowRecorder::kBatch, now, 0, series_interval_ns_);
      series.set(WindowRecorder::kKvUsed, now, serving_.num_kv_blocks - replica.num_free_blocks,
                 series_interval_ns_);
    }
    maybe_schedule(r, now);
  }

  /// Drops decode gaps that no running sequence can ask about any more.
  void drop_stale_gaps(Replica& replica) {
    for (int64_t id = replica.running_head; id >= 0; id = sequences_[id].next) {
      const Sequence& seq = sequences_[id];
      if (seq.state == SeqState::kDecoding) {
        replica.gaps.drop_below(seq.join_step + 2);  // the oldest decoder joined first
        return;
      }
    }
    replica.gaps.clear();
  }

  /// A sequence that has emitted its last token: blocks freed, completion recorded.
  void finish(Replica& replica, int64_t id, SimTime now) {
    Sequence& seq = sequences_[id];
    int64_t blocks = 0;
    if (seq.state == SeqState::kDecoding) {
      blocks = leave_decoders(replica, id);
      seq.last_token = now;
    } else {
      blocks = ceil_div(seq.prefill_target, block_);
    }
    LLMCAP_SIM_CHECK(seq.num_emitted == seq.num_output_tokens);
    unlink_running(replica, id);
    seq.state = SeqState::kFinished;
    seq.num_prefilled = 0;
    result_.requests[id].completion = now;
    replica.num_free_blocks += blocks;
    --replica.num_outstanding;
    --outstanding_[seq.replica];
    if (seq.user >= 0) user_done(seq.user, now);
  }

  void user_done(int64_t user, SimTime now) {
    const double think_s = think_stream_.exponential(workload_.closed_loop->think_time_s);
    schedule_user_request(user, now + SimTime::Seconds(think_s));
  }

  // ---- end-of-run checks -------------------------------------------------------------------

  void check_conservation() const {
    int64_t num_rejected = 0;
    int64_t num_expected_tokens = 0;
    for (size_t id = 0; id < result_.requests.size(); ++id) {
      const RequestRecord& record = result_.requests[id];
      const Sequence& seq = sequences_[id];
      LLMCAP_SIM_CHECK(record.id == static_cast<int64_t>(id));
      LLMCAP_SIM_CHECK(seq.state == SeqState::kFinished);
      if (record.rejected) {
        ++num_rejected;
        LLMCAP_SIM_CHECK(seq.num_emitted == 0);
        continue;
      }
      LLMCAP_SIM_CHECK(seq.num_emitted == record.num_output_tokens);
      LLMCAP_SIM_CHECK(seq.num_prefilled == 0);
      LLMCAP_SIM_CHECK(record.arrival <= record.first_scheduled);
      LLMCAP_SIM_CHECK(record.first_scheduled < record.first_token);
      LLMCAP_SIM_CHECK(record.first_token <= record.completion);
      num_expected_tokens += record.num_output_tokens;
    }
    LLMCAP_SIM_CHECK(num_rejected == result_.num_rejected);
    LLMCAP_SIM_CHECK(num_emitted_tokens_ == num_expected_tokens);
    if (options_.record_itl_ns) {
      LLMCAP_SIM_CHECK(static_cast<int64_t>(result_.itl_ns.size()) ==
                       num_expected_tokens -
                           (static_cast<int64_t>(result_.requests.size()) - num_rejected));
    }
    if (!workload_.closed_loop) {
      LLMCAP_SIM_CHECK(result_.requests.size() == workload_.open_loop.size());
    }
    for (const Replica& replica : replicas_) {
      LLMCAP_SIM_CHECK(replica.num_free_blocks == serving_.num_kv_blocks);
      LLMCAP_SIM_CHECK(replica.waiting.empty() && replica.num_running == 0);
      LLMCAP_SIM_CHECK(replica.running_head == -1 && replica.running_tail == -1);
      LLMCAP_SIM_CHECK(replica.waiting_blocks == 0 && replica.prefilling.empty());
      LLMCAP_SIM_CHECK(replica.num_decoders == 0 && replica.decode_context_tokens == 0);
      LLMCAP_SIM_CHECK(!replica.busy && !replica.schedule_pending);
      LLMCAP_SIM_CHECK(replica.num_outstanding == 0);
    }
    for (const int64_t n : outstanding_) LLMCAP_SIM_CHECK(n == 0);
  }

  const Workload& workload_;
  const FleetConfig& fleet_;
  const ServingConfig& serving_;
  const model::StepTimePredictor& predictor_;
  const SimOptions& options_;
  const int64_t block_;               ///< block_size_tokens
  const int64_t series_interval_ns_;  ///< 0: no time series
  RandomStream start_stream_;
  RandomStream think_stream_;
  RandomStream lengths_stream_;
  RandomStream router_stream_;
  EventQueue events_;
  std::vector<Replica> replicas_;
  std::vector<User> users_;
  std::vector<int64_t> open_order_;   ///< open-loop request indices in arrival order
  std::vector<Sequence> sequences_;   ///< by request id, parallel to result_.requests
  std::vector<int64_t> outstanding_;  ///< Replica::num_outstanding, packed for the routers' scans
  int64_t next_round_robin_ = 0;
  int64_t num_emitted_tokens_ = 0;  ///< counted step by step, checked against the requests
  SimResult result_;
};

}  // namespace

SimResult simulate(const Workload& workload, const FleetConfig& fleet,
                   const model::StepTimePredictor& predictor, uint64_t seed,
                   const SimOptions& options) {
  validate(workload, fleet, options);
  Simulation simulation(workload, fleet, predictor, seed, options);
  return simulation.run();
}

}  // namespace llmcap::sim
