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

const char* replica_role_name(ReplicaRole role) {
  switch (role) {
    case ReplicaRole::kUnified:
      return "unified";
    case ReplicaRole::kPrefill:
      return "prefill";
    case ReplicaRole::kDecode:
      return "decode";
  }
  return "?";
}

namespace {

enum EventKind : int32_t { kArrive = 0, kStepDone = 1, kScheduleStep = 2, kTransferDone = 3 };

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

/// kMigrating: prefilled on a prefill replica (which still holds its KV), waiting in a decode
/// replica's queue to be pulled; kTransferring: pulled, its KV on the wire.
enum class SeqState : uint8_t {
  kWaiting,
  kPrefilling,
  kDecoding,
  kFinished,
  kMigrating,
  kTransferring
};

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
  int64_t user = -1;             ///< closed-loop user, or -1
  SimTime last_token;            ///< time of its last token (while decoding: as of join_step)
  int32_t replica = -1;          ///< where it is served now (a decode replica once migrated)
  int32_t prefill_replica = -1;  ///< disaggregated: the prefill replica holding its KV in transit
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
  Replica(const ReplicaGroup& group, const model::StepTimePredictor& step_predictor)
      : serving(group.serving),
        predictor(&step_predictor),
        block(group.serving.block_size_tokens),
        role(group.role),
        network_bandwidth_bytes_per_s(group.network_bandwidth_bytes_per_s),
        network_latency(SimTime::Seconds(group.network_latency_s)),
        phase_counts(group.serving.block_size_tokens) {}

  ServingConfig serving;
  const model::StepTimePredictor* predictor;
  int64_t block;  ///< serving.block_size_tokens
  ReplicaRole role;
  double network_bandwidth_bytes_per_s;
  SimTime network_latency;
  int32_t pool = 0;        ///< index of its pool (Simulation::pools_)
  int32_t pool_index = 0;  ///< its position in that pool
  // Disaggregation.
  SimTime link_free;               ///< its network link is busy until then (FIFO transfers)
  int64_t num_incoming = 0;        ///< pulled KV transfers on their way here (blocks reserved)
  int64_t num_held_blocks = 0;     ///< prefill replica: blocks of prefilled KV not yet moved
  std::vector<int64_t> landed;     ///< transfers that landed while a step was in flight
  std::vector<int64_t> migrating;  ///< scratch: prefilled in the step that just ended

  IdDeque waiting;  ///< FCFS; preempted sequences rejoin at the front
  /// Sum over `waiting` of ceil(KV tokens / block): a prefill's tokens, or the KV a migrating
  /// sequence brings.
  int64_t waiting_blocks = 0;
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
};

struct User {
  LengthSample next;  ///< lengths of the request it will send at its pending arrival
};

std::string describe(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

/// The fleet as groups: `fleet.groups`, or one group of fleet.num_replicas x fleet.serving.
/// Groups without a predictor get `default_predictor` (which may be null).
std::vector<ReplicaGroup> resolve_groups(const FleetConfig& fleet,
                                         const model::StepTimePredictor* default_predictor) {
  std::vector<ReplicaGroup> groups = fleet.groups;
  if (groups.empty()) {
    ReplicaGroup g;
    g.num_replicas = fleet.num_replicas;
    g.serving = fleet.serving;
    groups.push_back(std::move(g));
  }
  for (ReplicaGroup& g : groups) {
    if (g.predictor == nullptr) g.predictor = default_predictor;
  }
  return groups;
}

bool is_disaggregated(const std::vector<ReplicaGroup>& groups) {
  return std::any_of(groups.begin(), groups.end(),
                     [](const ReplicaGroup& g) { return g.role != ReplicaRole::kUnified; });
}

/// Largest KV capacity, in tokens, of the replicas of `role` (ceil(t / block) <= blocks
/// exactly when t <= blocks x block).
int64_t max_capacity_tokens(const std::vector<ReplicaGroup>& groups, ReplicaRole role) {
  int64_t best = 0;
  for (const ReplicaGroup& g : groups) {
    if (g.role == role) {
      best = std::max(best, g.serving.num_kv_blocks * g.serving.block_size_tokens);
    }
  }
  return best;
}

/// Whether a request of these lengths can be served somewhere (otherwise it is rejected).
bool request_fits(const std::vector<ReplicaGroup>& groups, bool disaggregated,
                  int64_t num_prompt_tokens, int64_t num_output_tokens) {
  if (!disaggregated) {
    return num_prompt_tokens + num_output_tokens <=
           max_capacity_tokens(groups, ReplicaRole::kUnified);
  }
  return num_prompt_tokens <= max_capacity_tokens(groups, ReplicaRole::kPrefill) &&
         num_prompt_tokens + num_output_tokens <= max_capacity_tokens(groups, ReplicaRole::kDecode);
}

void validate_serving(const ServingConfig& serving, const std::string& prefix) {
  auto positive = [&prefix](const char* name, int64_t value) {
    if (value <= 0) {
      throw InputError(prefix + name + ": expected a positive integer, got " +
                       std::to_string(value));
    }
  };
  const auto policy = static_cast<int>(serving.policy);
  if (policy < static_cast<int>(BatchingPolicy::kStatic) ||
      policy > static_cast<int>(BatchingPolicy::kChunkedPrefill)) {
    throw InputError(prefix +
                     "serving.policy: expected static, continuous or chunked_prefill, got value " +
                     std::to_string(policy));
  }
  positive("serving.max_num_seqs", serving.max_num_seqs);
  if (serving.policy == BatchingPolicy::kChunkedPrefill) {
    if (serving.max_num_batched_tokens < 1) {
      throw InputError(
          prefix +
          "serving.max_num_batched_tokens: chunked_prefill needs a chunk budget of at least 1 "
          "token per step, got " +
          std::to_string(serving.max_num_batched_tokens));
    }
    if (serving.max_num_batched_tokens < serving.max_num_seqs) {
      throw InputError(
          prefix +
          "serving.max_num_batched_tokens: chunked_prefill gives every running decode one token "
          "of the step's budget, so it must be >= serving.max_num_seqs (" +
          std::to_string(serving.max_num_seqs) + "), got " +
          std::to_string(serving.max_num_batched_tokens));
    }
  }
  positive("serving.max_num_batched_tokens", serving.max_num_batched_tokens);
  positive("serving.block_size_tokens", serving.block_size_tokens);
  positive("serving.num_kv_blocks", serving.num_kv_blocks);
}

void validate_router(RouterKind kind, const char* field) {
  const auto router = static_cast<int>(kind);
  if (router < static_cast<int>(RouterKind::kRoundRobin) ||
      router > static_cast<int>(RouterKind::kPowerOfTwo)) {
    throw InputError(std::string(field) +
                     ": expected round_robin, least_outstanding, least_kv_load or power_of_two, "
                     "got value " +
                     std::to_string(router));
  }
}

void validate(const Workload& workload, const FleetConfig& fleet,
              const std::vector<ReplicaGroup>& groups, const SimOptions& options) {
  validate_router(fleet.router, "fleet.router");
  const bool disaggregated = is_disaggregated(groups);
  if (fleet.groups.empty()) {
    if (fleet.num_replicas <= 0) {
      throw InputError("fleet.num_replicas: expected a positive integer, got " +
                       std::to_string(fleet.num_replicas));
    }
    validate_serving(fleet.serving, "");
    if (groups.front().predictor == nullptr) {
      throw InputError("fleet: expected a step-time predictor, got none");
    }
  } else {
    int64_t num_replicas = 0;
    bool any_unified = false;
    bool any_prefill = false;
    bool any_decode = false;
    for (size_t i = 0; i < groups.size(); ++i) {
      const ReplicaGroup& g = groups[i];
      const std::string prefix = "fleet.groups[" + std::to_string(i) + "] (\"" + g.name + "\"): ";
      if (g.num_replicas <= 0) {
        throw InputError(prefix + "num_replicas: expected a positive integer, got " +
                         std::to_string(g.num_replicas));
      }
      validate_serving(g.serving, prefix);
      if (g.predictor == nullptr) {
        throw InputError(prefix + "predictor: expected a step-time predictor, got none");
      }
      const auto role = static_cast<int>(g.role);
      if (role < static_cast<int>(ReplicaRole::kUnified) ||
          role > static_cast<int>(ReplicaRole::kDecode)) {
        throw InputError(prefix + "role: expected unified, prefill or decode, got value " +
                         std::to_string(role));
      }
      any_unified = any_unified || g.role == ReplicaRole::kUnified;
      any_prefill = any_prefill || g.role == ReplicaRole::kPrefill;
      any_decode = any_decode || g.role == ReplicaRole::kDecode;
      if (disaggregated) {
        if (!(g.network_bandwidth_bytes_per_s > 0) ||
            !std::isfinite(g.network_bandwidth_bytes_per_s)) {
          throw InputError(prefix +
                           "network_bandwidth_bytes_per_s: a disaggregated fleet moves KV caches "
                           "over the network, expected a positive number, got " +
                           describe(g.network_bandwidth_bytes_per_s));
        }
        if (!(g.network_latency_s >= 0) || !std::isfinite(g.network_latency_s)) {
          throw InputError(prefix + "network_latency_s: expected a non-negative number, got " +
                           describe(g.network_latency_s));
        }
        if (g.role == ReplicaRole::kDecode && g.serving.policy == BatchingPolicy::kStatic) {
          throw InputError(prefix +
                           "serving.policy: static batching cannot serve a decode pool (requests "
                           "arrive there one by one, prefilled, and would join a batch in "
                           "progress); expected continuous or chunked_prefill");
        }
      }
      num_replicas += g.num_replicas;
      if (num_replicas > (int64_t{1} << 30)) {
        throw InputError("fleet.groups: expected at most 2^30 replicas in all, got more");
      }
    }
    if (disaggregated) {
      if (any_unified) {
        throw InputError(
            "fleet.groups: a fleet is either all unified replicas or prefill and decode pools; "
            "got unified groups beside prefill or decode ones");
      }
      if (!any_prefill || !any_decode) {
        throw InputError(std::string("fleet.groups: a disaggregated fleet needs at least one "
                                     "prefill and one decode group, got no ") +
                         (any_prefill ? "decode" : "prefill") + " group");
      }
      validate_router(fleet.decode_router, "fleet.decode_router");
      if (fleet.kv_bytes_per_token <= 0) {
        throw InputError(
            "fleet.kv_bytes_per_token: a disaggregated fleet moves each prompt's KV cache, "
            "expected a positive integer, got " +
            std::to_string(fleet.kv_bytes_per_token));
      }
    }
  }
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
      const bool any_fits =
          std::any_of(closed.lengths.begin(), closed.lengths.end(), [&](const LengthSample& s) {
            return request_fits(groups, disaggregated, s.num_prompt_tokens, s.num_output_tokens);
          });
      if (!any_fits) {
        const int64_t capacity_tokens = max_capacity_tokens(
            groups, disaggregated ? ReplicaRole::kDecode : ReplicaRole::kUnified);
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

/// The replicas one router chooses among: every replica, or the prefill or decode pool of a
/// disaggregated fleet. Outstanding counts and KV capacities are packed here for the scans.
struct Pool {
  Pool(RouterKind router_kind, uint64_t stream_seed)
      : router(router_kind), stream(stream_seed, Stream::kRouter) {}
  RouterKind router;
  RandomStream stream;                   ///< power_of_two's draws
  std::vector<int64_t> replicas;         ///< replica indices, ascending
  std::vector<int64_t> outstanding;      ///< Replica::num_outstanding, parallel to replicas
  std::vector<int64_t> capacity_tokens;  ///< num_kv_blocks x block_size_tokens, parallel
  int64_t min_capacity_tokens = 0;
  int64_t max_capacity_tokens = 0;
  int64_t next_round_robin = 0;   ///< position in `replicas`
  std::vector<int64_t> eligible;  ///< scratch of power_of_two: positions that fit a request
};

/// One run. All state lives here: simulations on different threads share nothing.
class Simulation {
 public:
  Simulation(const Workload& workload, const FleetConfig& fleet,
             const std::vector<ReplicaGroup>& groups, uint64_t seed, const SimOptions& options)
      : workload_(workload),
        fleet_(fleet),
        options_(options),
        disaggregated_(is_disaggregated(groups)),
        series_interval_ns_(options.time_series_interval.ns()),
        start_stream_(seed, Stream::kClosedLoopStart),
        think_stream_(seed, Stream::kClosedLoopThink),
        lengths_stream_(seed, Stream::kClosedLoopLengths) {
    // Pool 0 takes arrivals (every replica, or the prefill pool); pool 1 is the decode pool.
    // The decode router draws from a substream so that adding it shifts no other stream.
    pools_.emplace_back(fleet.router, seed);
    if (disaggregated_) pools_.emplace_back(fleet.decode_router, substream_seed(seed, 1));
    int64_t num_replicas = 0;
    for (const ReplicaGroup& g : groups) num_replicas += g.num_replicas;
    replicas_.reserve(static_cast<size_t>(num_replicas));
    for (const ReplicaGroup& g : groups) {
      const int32_t pool = g.role == ReplicaRole::kDecode ? 1 : 0;
      for (int64_t k = 0; k < g.num_replicas; ++k) {
        Replica& replica = replicas_.emplace_back(g, *g.predictor);
        replica.num_free_blocks = g.serving.num_kv_blocks;
        Pool& p = pools_[pool];
        replica.pool = pool;
        replica.pool_index = static_cast<int32_t>(p.replicas.size());
        p.replicas.push_back(static_cast<int64_t>(replicas_.size()) - 1);
        p.outstanding.push_back(0);
        p.capacity_tokens.push_back(g.serving.num_kv_blocks * g.serving.block_size_tokens);
      }
    }
    for (Pool& p : pools_) {
      p.min_capacity_tokens = *std::min_element(p.capacity_tokens.begin(), p.capacity_tokens.end());
      p.max_capacity_tokens = *std::max_element(p.capacity_tokens.begin(), p.capacity_tokens.end());
    }
  }

  SimResult run() {
    if (workload_.closed_loop) {
      start_closed_loop();
    } else {
      start_open_loop();
    }
    SimTime now = SimTime::Zero();
    uint32_t events_since_poll = 0;
    while (!events_.empty()) {
      if (options_.cancel && ++events_since_poll == kCancelPollEvents) {
        events_since_poll = 0;
        if (options_.cancel()) {
          result_.end_time = now;
          result_.stopped_early = result_.cancelled = true;
          result_.stop_reason = "cancelled at " + seconds_text(now);
          return std::move(result_);
        }
      }
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
        case kTransferDone:
          on_transfer_done(now, event.target);
          break;
        default:
          LLMCAP_SIM_CHECK(false);
      }
      if (!stop_reason_.empty()) {  // SimOptions::stop_at_certain_p99_miss
        result_.end_time = now;
        result_.stopped_early = true;
        result_.stop_reason = "stopped at " + seconds_text(now) + ": " + stop_reason_;
        return std::move(result_);
      }
    }
    result_.end_time = now;
    check_conservation();
    if (series_interval_ns_ > 0) {
      result_.time_series.reserve(replicas_.size());
      for (Replica& replica : replicas_) {
        result_.time_series.push_back(
            replica.series.finish(now, series_interval_ns_, replica.serving.num_kv_blocks));
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
    if (options_.stop_at_certain_p99_miss) watch_p99(*options_.stop_at_certain_p99_miss);
    if (!specs.empty()) schedule_open_arrival(0);
  }

  // ---- early stop (SimOptions::stop_at_certain_p99_miss) -----------------------------------

  /// Per class and metric: its bound and how many more values above it make the p99 exceed it.
  struct P99Watch {
    double bound_s = 0;
    int64_t num_values = 0;      ///< values the run will produce (if nothing is rejected)
    int64_t misses_to_fail = 0;  ///< n - rank + 1, rank = max(1, ceil(0.99 n))
    int64_t num_misses = 0;
    bool watched = false;
  };

  void watch_p99(const P99Bounds& bounds) {
    const size_t num_classes = std::max(bounds.ttft_s.size(), bounds.tpot_s.size());
    ttft_watch_.assign(num_classes, P99Watch{});
    tpot_watch_.assign(num_classes, P99Watch{});
    for (const RequestSpec& spec : workload_.open_loop) {
      const auto c = static_cast<size_t>(spec.client_class);
      if (c >= num_classes) continue;
      ++ttft_watch_[c].num_values;
      if (spec.num_output_tokens >= 2) ++tpot_watch_[c].num_values;
    }
    const auto arm = [](P99Watch& w, const std::vector<double>& bound_s, size_t c) {
      if (c >= bound_s.size() || w.num_values == 0) return;
      const int64_t rank = std::max<int64_t>(1, (99 * w.num_values + 99) / 100);
      w.bound_s = bound_s[c];
      w.misses_to_fail = w.num_values - rank + 1;
      w.watched = true;
    };
    for (size_t c = 0; c < num_classes; ++c) {
      arm(ttft_watch_[c], bounds.ttft_s, c);
      arm(tpot_watch_[c], bounds.tpot_s, c);
    }
    watching_ = true;
  }

  /// Counts `value_s` of class `c` against its watch; sets stop_reason_ when the p99 is
  /// certain to exceed the bound.
  void observe(std::vector<P99Watch>& watches, int32_t c, double value_s, const char* metric) {
    if (c < 0 || static_cast<size_t>(c) >= watches.size()) return;
    P99Watch& w = watches[static_cast<size_t>(c)];
    if (!w.watched || !(value_s > w.bound_s)) return;
    if (++w.num_misses < w.misses_to_fail) return;
    std::ostringstream out;
    out << w.num_misses << " of the " << w.num_values << " " << metric << " values of client class "
        << c << " exceed its p99 bound of " << w.bound_s << " s, so its p99 " << metric
        << " exceeds the bound whatever the remaining requests do";
    stop_reason_ = out.str();
  }

  static std::string seconds_text(SimTime t) {
    std::ostringstream out;
    out << "simulated time " << t.seconds() << " s";
    return out.str();
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

    // KV the request needs where it arrives: its whole length, or (prefill pool) its prompt.
    const int64_t entry_tokens =
        spec.num_prompt_tokens + (disaggregated_ ? 0 : spec.num_output_tokens);
    if (entry_tokens > pools_[0].max_capacity_tokens ||
        (disaggregated_ &&
         spec.num_prompt_tokens + spec.num_output_tokens > pools_[1].max_capacity_tokens)) {
      // It fits nowhere: the router is not consulted.
      record.rejected = true;
      record.first_scheduled = record.first_token = record.completion = now;
      seq.state = SeqState::kFinished;
      ++result_.num_rejected;
      if (watching_) {
        stop_reason_ = "request " + std::to_string(id) +
                       " was rejected (it fits in no replica's KV cache), and a rejected "
                       "request misses the objective";
      }
      if (user >= 0) user_done(user, now);
      return;
    }
    const int64_t r = route(pools_[0], entry_tokens);
    record.replica = r;
    seq.replica = static_cast<int32_t>(r);
    Replica& replica = replicas_[r];
    add_outstanding(replica, 1);
    push_waiting(replica, id, now, /*front=*/false, SeqState::kWaiting);
    maybe_schedule(r, now);
  }

  void add_outstanding(Replica& replica, int64_t delta) {
    replica.num_outstanding += delta;
    pools_[replica.pool].outstanding[replica.pool_index] += delta;
  }

  /// The replica of `pool` for a request that needs `tokens` tokens of KV cache there
  /// (<= pool.max_capacity_tokens). Replicas whose cache is too small are skipped; when every
  /// replica is large enough (always, in a homogeneous fleet) the choice is the plain router's.
  int64_t route(Pool& pool, int64_t tokens) {
    const auto n = static_cast<int64_t>(pool.replicas.size());
    const bool all_fit = tokens <= pool.min_capacity_tokens;
    const auto fits = [&](int64_t pos) { return all_fit || pool.capacity_tokens[pos] >= tokens; };
    int64_t chosen = -1;
    switch (pool.router) {
      case RouterKind::kRoundRobin: {
        int64_t pos = pool.next_round_robin;
        while (!fits(pos)) pos = (pos + 1) % n;
        pool.next_round_robin = (pos + 1) % n;
        chosen = pos;
        break;
      }
      case RouterKind::kLeastOutstanding:
        if (all_fit) {
          // The first minimum: ties go to the lowest index.
          chosen = std::min_element(pool.outstanding.begin(), pool.outstanding.end()) -
                   pool.outstanding.begin();
        } else {
          for (int64_t pos = 0; pos < n; ++pos) {
            if (fits(pos) && (chosen < 0 || pool.outstanding[pos] < pool.outstanding[chosen])) {
              chosen = pos;
            }
          }
        }
        break;
      case RouterKind::kLeastKvLoad: {
        int64_t best_room = 0;
        for (int64_t pos = 0; pos < n; ++pos) {
          if (!fits(pos)) continue;
          const Replica& replica = replicas_[pool.replicas[pos]];
          const int64_t room = replica.num_free_blocks - replica.waiting_blocks;
          if (chosen < 0 || room > best_room) {
            chosen = pos;
            best_room = room;
          }
        }
        break;
      }
      case RouterKind::kPowerOfTwo: {
        // Two distinct replicas among those that fit (all of them, in a homogeneous fleet).
        int64_t m = n;
        const int64_t* candidates = nullptr;
        if (!all_fit) {
          pool.eligible.clear();
          for (int64_t pos = 0; pos < n; ++pos) {
            if (fits(pos)) pool.eligible.push_back(pos);
          }
          m = static_cast<int64_t>(pool.eligible.size());
          candidates = pool.eligible.data();
        }
        const auto position = [&](int64_t k) { return candidates ? candidates[k] : k; };
        if (m == 1) {
          chosen = position(0);
          break;
        }
        const auto a = static_cast<int64_t>(pool.stream.index(static_cast<uint64_t>(m)));
        auto b = static_cast<int64_t>(pool.stream.index(static_cast<uint64_t>(m - 1)));
        if (b >= a) ++b;
        const int64_t lo = position(std::min(a, b));
        const int64_t hi = position(std::max(a, b));
        chosen = pool.outstanding[hi] < pool.outstanding[lo] ? hi : lo;
        break;
      }
    }
    LLMCAP_SIM_CHECK(chosen >= 0 && fits(chosen));
    return pool.replicas[chosen];
  }

  /// An idle replica with step work gets a kSchedule event at `now`: it runs after every
  /// arrival of this instant, so one step decision sees them all. When no other event is due
  /// at `now`, that event would be the next one popped, so the decision runs at once (same
  /// result, half the event-queue traffic).
  void maybe_schedule(int64_t r, SimTime now) {
    Replica& replica = replicas_[r];
    if (replica.busy || replica.schedule_pending || !has_step_work(replica)) return;
    replica.schedule_pending = true;
    if (events_.empty() || events_.top().time > now) {
      on_schedule(now, r);
      return;
    }
    events_.schedule(now, Phase::kSchedule, kScheduleStep, r);
  }

  /// Whether a step can run: something is running, or the queue's front needs a prefill (a
  /// migrating front is pulled without a step, see pull_transfers()).
  bool has_step_work(const Replica& replica) const {
    return replica.num_running > 0 ||
           (!replica.waiting.empty() &&
            sequences_[replica.waiting.front()].state == SeqState::kWaiting);
  }

  void on_schedule(SimTime now, int64_t r) {
    Replica& replica = replicas_[r];
    replica.schedule_pending = false;
    LLMCAP_SIM_CHECK(!replica.busy);
    const model::BatchShape shape = compose_step(now, replica);
    if (shape.empty()) {
      // An idle replica with work can always run a step, unless KV in transit holds its
      // blocks (a prefill replica's prefilled prompts not yet pulled, a decode replica's
      // pulled transfers): it waits for a transfer to land, which schedules it again.
      LLMCAP_SIM_CHECK(replica.num_running == 0 &&
                       (replica.num_held_blocks > 0 || replica.num_incoming > 0));
      return;
    }
    LLMCAP_SIM_CHECK(replica.num_free_blocks >= 0);
    const double step_s = replica.predictor->step_time_s(shape);
    LLMCAP_SIM_CHECK(std::isfinite(step_s) && step_s > 0);
    replica.busy = true;
    ++result_.num_steps;
    if (series_interval_ns_ > 0) {
      WindowRecorder& series = replica.series;
      series.count_step(now, series_interval_ns_);
      series.set(WindowRecorder::kBusy, now, 1, series_interval_ns_);
      series.set(WindowRecorder::kBatch, now, shape.num_prefill_seqs + shape.num_decode_seqs,
                 series_interval_ns_);
      series.set(WindowRecorder::kKvUsed, now,
                 replica.serving.num_kv_blocks - replica.num_free_blocks, series_interval_ns_);
    }
    events_.schedule(now + SimTime::Seconds(step_s), Phase::kStepComplete, kStepDone, r);
  }

  // ---- disaggregation: KV transfers --------------------------------------------------------

  /// A sequence prefilled on the prefill replica `prefill` (first token emitted, output left):
  /// it leaves the prefill replica's running set, its KV blocks stay held there, and it joins
  /// the back of a decode replica's queue (decode router) to be pulled.
  void migrate(Replica& prefill, int64_t id, SimTime now) {
    Sequence& seq = sequences_[id];
    unlink_running(prefill, id);
    prefill.num_held_blocks += ceil_div(seq.prefill_target, prefill.block);
    add_outstanding(prefill, -1);
    seq.prefill_replica = seq.replica;
    const int64_t d = route(pools_[1], seq.num_prompt_tokens + seq.num_output_tokens);
    seq.replica = static_cast<int32_t>(d);
    result_.requests[id].decode_replica = static_cast<int32_t>(d);
    Replica& decode = replicas_[d];
    add_outstanding(decode, 1);
    push_waiting(decode, id, now, /*front=*/false, SeqState::kMigrating);
    pull_transfers(decode, now);
    maybe_schedule(d, now);
  }

  /// Pulls migrating sequences from the front of the queue while they fit (FCFS: stops at the
  /// first that does not, or at a sequence that needs a prefill).
  void pull_transfers(Replica& replica, SimTime now) {
    while (!replica.waiting.empty() &&
           sequences_[replica.waiting.front()].state == SeqState::kMigrating) {
      if (!try_pull_front(replica, now)) return;
    }
  }

  /// Pulls the migrating sequence at the front of the queue if a sequence slot (max_num_seqs,
  /// counting transfers in flight) and the blocks of its KV are free: reserves the blocks and
  /// starts the transfer of prompt x kv_bytes_per_token bytes. The transfer waits for both
  /// links to be free (each link carries one transfer at a time, FIFO), holds them for bytes /
  /// min(bandwidths) and lands max(latencies) later.
  bool try_pull_front(Replica& decode, SimTime now) {
    const int64_t id = decode.waiting.front();
    Sequence& seq = sequences_[id];
    LLMCAP_SIM_CHECK(seq.state == SeqState::kMigrating);
    if (decode.num_running + decode.num_incoming >= decode.serving.max_num_seqs) return false;
    const int64_t kv_tokens = waiting_kv_tokens(seq);
    const int64_t num_blocks = ceil_div(kv_tokens, decode.block);
    if (num_blocks > decode.num_free_blocks) return false;
    decode.waiting.pop_front();
    decode.waiting_blocks -= num_blocks;
    if (series_interval_ns_ > 0) {
      decode.series.set(WindowRecorder::kWaiting, now, static_cast<int64_t>(decode.waiting.size()),
                        series_interval_ns_);
    }
    decode.num_free_blocks -= num_blocks;
    ++decode.num_incoming;
    seq.state = SeqState::kTransferring;

    Replica& prefill = replicas_[seq.prefill_replica];
    const int64_t bytes = kv_tokens * fleet_.kv_bytes_per_token;
    const double bandwidth =
        std::min(prefill.network_bandwidth_bytes_per_s, decode.network_bandwidth_bytes_per_s);
    const SimTime start = std::max({now, prefill.link_free, decode.link_free});
    const SimTime wire_end = start + SimTime::Seconds(static_cast<double>(bytes) / bandwidth);
    prefill.link_free = decode.link_free = wire_end;
    const SimTime landing = wire_end + std::max(prefill.network_latency, decode.network_latency);
    RequestRecord& record = result_.requests[id];
    record.kv_transfer_start = now;
    record.kv_transfer_end = landing;
    ++result_.num_kv_transfers;
    result_.kv_transfer_bytes += bytes;
    events_.schedule(landing, Phase::kStepComplete, kTransferDone, id);
    if (series_interval_ns_ > 0) {
      decode.series.set(WindowRecorder::kKvUsed, now,
                        decode.serving.num_kv_blocks - decode.num_free_blocks, series_interval_ns_);
    }
    return true;
  }

  /// A KV transfer landed: the prefill replica frees the blocks it held, and the sequence
  /// starts decoding on its decode replica (at once if idle, else when its step ends).
  void on_transfer_done(SimTime now, int64_t id) {
    Sequence& seq = sequences_[id];
    LLMCAP_SIM_CHECK(seq.state == SeqState::kTransferring);
    Replica& prefill = replicas_[seq.prefill_replica];
    const int64_t held = ceil_div(seq.prefill_target, prefill.block);
    prefill.num_held_blocks -= held;
    prefill.num_free_blocks += held;
    if (series_interval_ns_ > 0) {
      prefill.series.set(WindowRecorder::kKvUsed, now,
                         prefill.serving.num_kv_blocks - prefill.num_free_blocks,
                         series_interval_ns_);
    }
    Replica& decode = replicas_[seq.replica];
    --decode.num_incoming;
    if (decode.busy) {
      decode.landed.push_back(id);
    } else {
      land(decode, id);
    }
    maybe_schedule(seq.prefill_replica, now);
    maybe_schedule(seq.replica, now);
  }

  /// A landed sequence joins the decoders of `decode` (its blocks were reserved at the pull),
  /// as the most recently admitted running sequence.
  void land(Replica& decode, int64_t id) {
    Sequence& seq = sequences_[id];
    seq.admit_order = decode.next_admit_order++;
    link_running(decode, id);
    join_decoders(decode, id);
  }

  // ---- queues ------------------------------------------------------------------------------

  int64_t prefill_tokens(const Sequence& seq) const {
    return seq.num_prompt_tokens + seq.num_emitted;  // recompute after preemption
  }
  /// Tokens of KV a waiting sequence needs when admitted: its prefill, or, migrating, the KV
  /// it brings (its prompt and every emitted token but the last).
  int64_t waiting_kv_tokens(const Sequence& seq) const {
    return prefill_tokens(seq) - (seq.state == SeqState::kMigrating ? 1 : 0);
  }

  /// Queues `id` as kWaiting (needs a prefill) or kMigrating (KV to pull).
  void push_waiting(Replica& replica, int64_t id, SimTime now, bool front, SeqState state) {
    Sequence& seq = sequences_[id];
    seq.state = state;
    if (front) {
      replica.waiting.push_front(id);
    } else {
      replica.waiting.push_back(id);
    }
    replica.waiting_blocks += ceil_div(waiting_kv_tokens(seq), replica.block);
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
    replica.waiting_blocks -= ceil_div(prefill_tokens(seq), replica.block);
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

  static int64_t phase_of(const Replica& replica, const Sequence& seq) {
    return floor_mod(seq.offset(), replica.block);
  }
  /// Phase of the decoders that need a new block in the decode step taking the counter from
  /// k to k + 1 (their context c = offset + k has c mod block == 1).
  static int64_t needing_phase(const Replica& replica, int64_t k) {
    return floor_mod(1 - k, replica.block);
  }
  int64_t decoder_emitted(const Replica& replica, const Sequence& seq) const {
    return seq.num_emitted + (replica.num_decode_steps - seq.join_step);
  }

  /// A sequence whose prefill has just finished (and which has output left) starts decoding.
  void join_decoders(Replica& replica, int64_t id) {
    Sequence& seq = sequences_[id];
    seq.state = SeqState::kDecoding;
    seq.join_step = replica.num_decode_steps;
    replica.phase_counts.add(phase_of(replica, seq), 1);
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
    replica.phase_counts.add(phase_of(replica, seq), -1);
    replica.decode_context_tokens -= context;
    --replica.num_decoders;
    if (k >= seq.join_step + 2) {
      RequestRecord& record = result_.requests[id];
      const SimTime gap = SimTime::Nanoseconds(replica.gaps.max_from(seq.join_step + 2));
      record.max_itl = std::max(record.max_itl, gap);
    }
    if (k > seq.join_step) seq.last_token = replica.last_decode_end;
    seq.num_emitted = emitted;
    return ceil_div(context - 1, replica.block);
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
      blocks = ceil_div(seq.prefill_target, replica.block);
      std::erase(replica.prefilling, id);
      seq.num_prefilled = 0;
    }
    unlink_running(replica, id);
    replica.num_free_blocks += blocks;
    ++result_.requests[id].num_preemptions;
    ++result_.num_preemptions;
    push_waiting(replica, id, now, /*front=*/true, SeqState::kWaiting);
    return id;
  }

  // ---- step composition --------------------------------------------------------------------

  /// Builds the next step of `replica` per the batching policy and returns its shape.
  model::BatchShape compose_step(SimTime now, Replica& replica) {
    model::BatchShape shape;
    replica.step_prefills.clear();
    replica.step_has_decodes = false;
    switch (replica.serving.policy) {
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

  /// Whether the front of the queue is a migrating sequence (a decode replica's KV to pull).
  bool front_is_migrating(const Replica& replica) const {
    return sequences_[replica.waiting.front()].state == SeqState::kMigrating;
  }

  /// vLLM v0 admission (kContinuous, kStatic): whole prefills, FCFS, stop at the first that
  /// does not fit. A migrating sequence met on the way is pulled (no prefill) if it fits.
  void admit_whole_prefills(SimTime now, Replica& replica, model::BatchShape& shape) {
    while (!replica.waiting.empty()) {
      if (replica.num_running + replica.num_incoming >= replica.serving.max_num_seqs) break;
      if (front_is_migrating(replica)) {
        if (!try_pull_front(replica, now)) break;
        continue;
      }
      const int64_t num_tokens = prefill_tokens(sequences_[replica.waiting.front()]);
      if (shape.num_prefill_seqs > 0 &&
          shape.num_prefill_tokens + num_tokens > replica.serving.max_num_batched_tokens) {
        break;
      }
      const int64_t num_blocks = ceil_div(num_tokens, replica.block);
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
    const int64_t phase = needing_phase(replica, k);
    int64_t needed = replica.phase_counts.get(phase);
    while (needed > replica.num_free_blocks) {
      const Sequence& victim = sequences_[replica.running_tail];
      if (victim.state == SeqState::kDecoding && phase_of(replica, victim) == phase) --needed;
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
    int64_t budget = replica.serving.max_num_batched_tokens - shape.num_decode_seqs;
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
    while (!replica.waiting.empty() && budget > 0 &&
           replica.num_running + replica.num_incoming < replica.serving.max_num_seqs) {
      if (front_is_migrating(replica)) {
        if (!try_pull_front(replica, now)) break;
        continue;
      }
      const int64_t id = replica.waiting.front();
      const int64_t target = prefill_tokens(sequences_[id]);
      const int64_t num_blocks = ceil_div(target, replica.block);
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
      if (replica.serving.policy == BatchingPolicy::kChunkedPrefill) {
        std::erase(replica.prefilling, id);
      }
      RequestRecord& record = result_.requests[id];
      ++num_emitted_tokens_;
      if (seq.num_emitted == 0) {
        record.first_token = now;
        if (watching_) {
          observe(ttft_watch_, record.client_class, (now - record.arrival).seconds(), "TTFT");
        }
      } else {  // a recompute: the gap since the token before its preemption
        const SimTime gap = now - seq.last_token;
        record.max_itl = std::max(record.max_itl, gap);
        if (options_.record_itl_ns) result_.itl_ns.push_back(gap.ns());
      }
      ++seq.num_emitted;
      seq.last_token = now;
      if (seq.num_emitted == seq.num_output_tokens) {
        replica.finishing.emplace_back(seq.admit_order, id);
      } else if (replica.role == ReplicaRole::kPrefill) {
        replica.migrating.push_back(id);  // moves to a decode replica (after the finishes)
      } else {
        join_decoders(replica, id);
      }
    }
    if (num_decoders_finishing > 0 && replica.finishing.size() > num_decoders_finishing) {
      std::sort(replica.finishing.begin(), replica.finishing.end());
    }
    for (const auto& [admit_order, id] : replica.finishing) finish(replica, id, now);
    replica.step_prefills.clear();
    if (disaggregated_) {
      // Transfers that landed during the step start decoding now; freed blocks pull more.
      for (const int64_t id : replica.landed) land(replica, id);
      replica.landed.clear();
      pull_transfers(replica, now);
    }
    drop_stale_gaps(replica);
    if (series_interval_ns_ > 0) {
      WindowRecorder& series = replica.series;
      series.set(WindowRecorder::kBusy, now, 0, series_interval_ns_);
      series.set(WindowRecorder::kBatch, now, 0, series_interval_ns_);
      series.set(WindowRecorder::kKvUsed, now,
                 replica.serving.num_kv_blocks - replica.num_free_blocks, series_interval_ns_);
    }
    if (!replica.migrating.empty()) {
      // Routed to decode replicas in admission order, after this replica's finishes.
      for (const int64_t id : replica.migrating) migrate(replica, id, now);
      replica.migrating.clear();
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
      blocks = ceil_div(seq.prefill_target, replica.block);
    }
    LLMCAP_SIM_CHECK(seq.num_emitted == seq.num_output_tokens);
    unlink_running(replica, id);
    seq.state = SeqState::kFinished;
    seq.num_prefilled = 0;
    RequestRecord& record = result_.requests[id];
    record.completion = now;
    if (watching_ && record.num_output_tokens >= 2) {
      observe(tpot_watch_, record.client_class,
              (record.completion - record.first_token).seconds() /
                  static_cast<double>(record.num_output_tokens - 1),
              "TPOT");
    }
    replica.num_free_blocks += blocks;
    add_outstanding(replica, -1);
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
    int64_t num_transfers = 0;
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
      if (record.decode_replica >= 0) {
        // Prefilled on a prefill replica, decoded on a decode replica, the KV moved between.
        ++num_transfers;
        LLMCAP_SIM_CHECK(replicas_[record.replica].role == ReplicaRole::kPrefill);
        LLMCAP_SIM_CHECK(replicas_[record.decode_replica].role == ReplicaRole::kDecode);
        LLMCAP_SIM_CHECK(record.num_output_tokens >= 2);
        LLMCAP_SIM_CHECK(record.first_token <= record.kv_transfer_start);
        LLMCAP_SIM_CHECK(record.kv_transfer_start <= record.kv_transfer_end);
        LLMCAP_SIM_CHECK(record.kv_transfer_end < record.completion);
      } else if (disaggregated_) {
        LLMCAP_SIM_CHECK(record.num_output_tokens == 1);  // done at the end of its prefill
      }
      num_expected_tokens += record.num_output_tokens;
    }
    LLMCAP_SIM_CHECK(num_rejected == result_.num_rejected);
    LLMCAP_SIM_CHECK(num_transfers == result_.num_kv_transfers);
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
      LLMCAP_SIM_CHECK(replica.num_free_blocks == replica.serving.num_kv_blocks);
      LLMCAP_SIM_CHECK(replica.waiting.empty() && replica.num_running == 0);
      LLMCAP_SIM_CHECK(replica.running_head == -1 && replica.running_tail == -1);
      LLMCAP_SIM_CHECK(replica.waiting_blocks == 0 && replica.prefilling.empty());
      LLMCAP_SIM_CHECK(replica.num_decoders == 0 && replica.decode_context_tokens == 0);
      LLMCAP_SIM_CHECK(!replica.busy && !replica.schedule_pending);
      LLMCAP_SIM_CHECK(replica.num_outstanding == 0);
      LLMCAP_SIM_CHECK(replica.num_incoming == 0 && replica.num_held_blocks == 0);
      LLMCAP_SIM_CHECK(replica.landed.empty() && replica.migrating.empty());
    }
    for (const Pool& pool : pools_) {
      for (const int64_t n : pool.outstanding) LLMCAP_SIM_CHECK(n == 0);
    }
  }

  const Workload& workload_;
  const FleetConfig& fleet_;
  const SimOptions& options_;
  const bool disaggregated_;          ///< prefill and decode pools
  const int64_t series_interval_ns_;  ///< 0: no time series
  RandomStream start_stream_;
  RandomStream think_stream_;
  RandomStream lengths_stream_;
  EventQueue events_;
  std::vector<Replica> replicas_;
  std::vector<Pool> pools_;  ///< [0]: arrivals (all, or the prefill pool); [1]: decode pool
  std::vector<User> users_;
  std::vector<int64_t> open_order_;  ///< open-loop request indices in arrival order
  std::vector<Sequence> sequences_;  ///< by request id, parallel to result_.requests
  static constexpr uint32_t kCancelPollEvents = 4096;  ///< SimOptions::cancel
  bool watching_ = false;             ///< SimOptions::stop_at_certain_p99_miss is armed
  std::vector<P99Watch> ttft_watch_;  ///< by client class
  std::vector<P99Watch> tpot_watch_;  ///< by client class
  std::string stop_reason_;           ///< set: the run stops after the current event
  int64_t num_emitted_tokens_ = 0;    ///< counted step by step, checked against the requests
  SimResult result_;
};

}  // namespace

SimResult simulate(const Workload& workload, const FleetConfig& fleet,
                   const model::StepTimePredictor& predictor, uint64_t seed,
                   const SimOptions& options) {
  const std::vector<ReplicaGroup> groups = resolve_groups(fleet, &predictor);
  validate(workload, fleet, groups, options);
  Simulation simulation(workload, fleet, groups, seed, options);
  return simulation.run();
}

SimResult simulate(const Workload& workload, const FleetConfig& fleet, uint64_t seed,
                   const SimOptions& options) {
  const std::vector<ReplicaGroup> groups = resolve_groups(fleet, nullptr);
  validate(workload, fleet, groups, options);
  Simulation simulation(workload, fleet, groups, seed, options);
  return simulation.run();
}

}  // namespace llmcap::sim
