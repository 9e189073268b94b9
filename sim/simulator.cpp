#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "sim/check.h"
#include "sim/event_queue.h"
#include "sim/input_error.h"
#include "sim/random.h"

namespace llmcap::sim {

RouterKind parse_router(const std::string& name, const std::string& context) {
  if (name == "round_robin") return RouterKind::kRoundRobin;
  if (name == "least_outstanding") return RouterKind::kLeastOutstanding;
  throw InputError(context + ": unknown router \"" + name +
                   "\"; known: round_robin, least_outstanding");
}

namespace {

enum EventKind : int32_t { kArrive = 0, kStepDone = 1, kScheduleStep = 2 };

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

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

/// Simulation-side state of one request (its RequestRecord holds the reported fields).
struct Sequence {
  int64_t num_emitted_tokens = 0;  ///< output tokens emitted so far
  int64_t num_blocks = 0;          ///< KV blocks held now
  int64_t user = -1;               ///< closed-loop user, or -1
  SimTime last_token;
  bool scheduled = false;
  bool finished = false;
};

struct Replica {
  IdDeque waiting;               ///< FCFS; preempted sequences rejoin at the front
  std::vector<int64_t> running;  ///< admitted and holding KV, in admission order
  std::vector<int64_t> step;     ///< sequences of the step in flight (reused buffer)
  bool busy = false;             ///< a step is in flight
  bool schedule_pending = false;
  int64_t num_free_blocks = 0;
  int64_t num_outstanding = 0;  ///< routed here and not finished
  bool has_work() const { return !waiting.empty() || !running.empty(); }
};

struct User {
  LengthSample next;  ///< lengths of the request it will send at its pending arrival
};

std::string describe(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

void validate(const Workload& workload, const FleetConfig& fleet) {
  auto positive = [](const char* name, int64_t value) {
    if (value <= 0) {
      throw InputError(std::string(name) + ": expected a positive integer, got " +
                       std::to_string(value));
    }
  };
  positive("fleet.num_replicas", fleet.num_replicas);
  positive("serving.max_num_seqs", fleet.serving.max_num_seqs);
  positive("serving.max_num_batched_tokens", fleet.serving.max_num_batched_tokens);
  positive("serving.block_size_tokens", fleet.serving.block_size_tokens);
  positive("serving.num_kv_blocks", fleet.serving.num_kv_blocks);
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
      const int64_t capacity_tokens = fleet.serving.num_kv_blocks * fleet.serving.block_size_tokens;
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
             const model::StepTimePredictor& predictor, uint64_t seed)
      : workload_(workload),
        fleet_(fleet),
        serving_(fleet.serving),
        predictor_(predictor),
        start_stream_(seed, Stream::kClosedLoopStart),
        think_stream_(seed, Stream::kClosedLoopThink),
        lengths_stream_(seed, Stream::kClosedLoopLengths),
        replicas_(static_cast<size_t>(fleet.num_replicas)) {
    for (Replica& replica : replicas_) replica.num_free_blocks = serving_.num_kv_blocks;
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
    int64_t num_gaps = 0;
    for (const RequestSpec& spec : specs) num_gaps += spec.num_output_tokens - 1;
    result_.itl_ns.reserve(static_cast<size_t>(num_gaps));
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
      spec = {now, users_[user].next.num_prompt_tokens, users_[user].next.num_output_tokens};
    } else {
      const auto position = static_cast<size_t>(target);
      spec = workload_.open_loop[open_order_[position]];
      if (position + 1 < open_order_.size()) schedule_open_arrival(position + 1);
    }
    const auto id = static_cast<int64_t>(result_.requests.size());
    RequestRecord& record = result_.requests.emplace_back();
    record.id = id;
    record.arrival = now;
    record.num_prompt_tokens = spec.num_prompt_tokens;
    record.num_output_tokens = spec.num_output_tokens;
    Sequence& seq = sequences_.emplace_back();
    seq.user = user;

    const int64_t blocks_needed =
        ceil_div(spec.num_prompt_tokens + spec.num_output_tokens, serving_.block_size_tokens);
    if (blocks_needed > serving_.num_kv_blocks) {
      // Homogeneous replicas: if it fits nowhere the router is not consulted.
      record.rejected = true;
      record.first_scheduled = record.first_token = record.completion = now;
      seq.finished = true;
      ++result_.num_rejected;
      if (user >= 0) user_done(user, now);
      return;
    }
    const int64_t r = route();
    record.replica = r;
    Replica& replica = replicas_[r];
    ++replica.num_outstanding;
    replica.waiting.push_back(id);
    maybe_schedule(r, now);
  }

  int64_t route() {
    const auto num_replicas = static_cast<int64_t>(replicas_.size());
    if (fleet_.router == RouterKind::kRoundRobin) {
      const int64_t r = next_round_robin_;
      next_round_robin_ = (next_round_robin_ + 1) % num_replicas;
      return r;
    }
    int64_t best = 0;
    for (int64_t r = 1; r < num_replicas; ++r) {
      if (replicas_[r].num_outstanding < replicas_[best].num_outstanding) best = r;
    }
    return best;
  }

  /// An idle replica with work gets a kSchedule event at `now`: it runs after every arrival of
  /// this instant, so one step decision sees them all.
  void maybe_schedule(int64_t r, SimTime now) {
    Replica& replica = replicas_[r];
    if (replica.busy || replica.schedule_pending || !replica.has_work()) return;
    replica.schedule_pending = true;
    events_.schedule(now, Phase::kSchedule, kScheduleStep, r);
  }

  void on_schedule(SimTime now, int64_t r) {
    Replica& replica = replicas_[r];
    replica.schedule_pending = false;
    LLMCAP_SIM_CHECK(!replica.busy);
    const model::BatchShape shape = compose_step(now, replica);
    LLMCAP_SIM_CHECK(!shape.empty());  // an idle replica with work can always run a step
    const double step_s = predictor_.step_time_s(shape);
    LLMCAP_SIM_CHECK(std::isfinite(step_s) && step_s > 0);
    replica.busy = true;
    ++result_.num_steps;
    events_.schedule(now + SimTime::Seconds(step_s), Phase::kStepComplete, kStepDone, r);
  }

  /// Builds the next step of `replica` (vLLM v0 default scheduler, prefill first) into
  /// replica.step and returns its shape.
  model::BatchShape compose_step(SimTime now, Replica& replica) {
    model::BatchShape shape;
    replica.step.clear();
    // 1. Admit waiting sequences FCFS (stop at the first that does not fit).
    while (!replica.waiting.empty()) {
      const int64_t id = replica.waiting.front();
      if (static_cast<int64_t>(replica.running.size()) >= serving_.max_num_seqs) break;
      const int64_t num_tokens = result_.requests[id].num_prompt_tokens +
                                 sequences_[id].num_emitted_tokens;  // recompute after preemption
      if (shape.num_prefill_seqs > 0 &&
          shape.num_prefill_tokens + num_tokens > serving_.max_num_batched_tokens) {
        break;
      }
      const int64_t num_blocks = ceil_div(num_tokens, serving_.block_size_tokens);
      if (num_blocks > replica.num_free_blocks) break;
      replica.waiting.pop_front();
      replica.num_free_blocks -= num_blocks;
      Sequence& seq = sequences_[id];
      seq.num_blocks = num_blocks;
      if (!seq.scheduled) {
        seq.scheduled = true;
        result_.requests[id].first_scheduled = now;
      }
      replica.running.push_back(id);
      replica.step.push_back(id);
      ++shape.num_prefill_seqs;
      shape.num_prefill_tokens += num_tokens;
      shape.num_prefill_attention_pairs += num_tokens * (num_tokens + 1) / 2;
    }
    if (shape.num_prefill_seqs > 0) {
      shape.num_prefill_seqs_completing = shape.num_prefill_seqs;
      return shape;
    }
    // 2. Decode every running sequence; grow KV by a block where needed, preempting the most
    //    recently admitted sequences when no block is free.
    size_t i = 0;
    while (i < replica.running.size()) {
      const int64_t id = replica.running[i];
      Sequence& seq = sequences_[id];
      // This step writes the KV of the last emitted token: prompt + emitted tokens in total.
      const int64_t context = result_.requests[id].num_prompt_tokens + seq.num_emitted_tokens;
      const int64_t num_new_blocks = ceil_div(context, serving_.block_size_tokens) - seq.num_blocks;
      bool preempted_self = false;
      while (num_new_blocks > replica.num_free_blocks) {
        const int64_t victim = replica.running.back();
        replica.running.pop_back();
        preempt(replica, victim);
        if (victim == id) {
          preempted_self = true;
          break;
        }
      }
      if (preempted_self) break;  // it was the last running sequence
      replica.num_free_blocks -= num_new_blocks;
      seq.num_blocks += num_new_blocks;
      ++i;
    }
    replica.step.assign(replica.running.begin(), replica.running.end());
    shape.num_decode_seqs = static_cast<int64_t>(replica.step.size());
    for (const int64_t id : replica.step) {
      shape.num_decode_context_tokens +=
          result_.requests[id].num_prompt_tokens + sequences_[id].num_emitted_tokens;
    }
    return shape;
  }

  void preempt(Replica& replica, int64_t id) {
    Sequence& seq = sequences_[id];
    replica.num_free_blocks += seq.num_blocks;
    seq.num_blocks = 0;
    ++result_.requests[id].num_preemptions;
    ++result_.num_preemptions;
    replica.waiting.push_front(id);
  }

  void on_step_done(SimTime now, int64_t r) {
    Replica& replica = replicas_[r];
    LLMCAP_SIM_CHECK(replica.busy);
    replica.busy = false;
    // Every sequence of the step emits one token: a decode its next one, a prefill its first
    // one, or (a recompute after preemption) the next one after those it had already emitted.
    bool any_finished = false;
    for (const int64_t id : replica.step) {
      Sequence& seq = sequences_[id];
      RequestRecord& record = result_.requests[id];
      LLMCAP_SIM_CHECK(!seq.finished && seq.num_emitted_tokens < record.num_output_tokens);
      ++seq.num_emitted_tokens;
      ++num_emitted_tokens_;
      if (seq.num_emitted_tokens == 1) {
        record.first_token = now;
      } else {
        const SimTime gap = now - seq.last_token;
        result_.itl_ns.push_back(gap.ns());
        record.max_itl = std::max(record.max_itl, gap);
      }
      seq.last_token = now;
      if (seq.num_emitted_tokens == record.num_output_tokens) {
        seq.finished = true;
        any_finished = true;
        record.completion = now;
        replica.num_free_blocks += seq.num_blocks;
        seq.num_blocks = 0;
        --replica.num_outstanding;
        if (seq.user >= 0) user_done(seq.user, now);
      }
    }
    if (any_finished) {
      std::erase_if(replica.running, [&](int64_t id) { return sequences_[id].finished; });
    }
    replica.step.clear();
    maybe_schedule(r, now);
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
      LLMCAP_SIM_CHECK(seq.finished);
      if (record.rejected) {
        ++num_rejected;
        LLMCAP_SIM_CHECK(seq.num_emitted_tokens == 0);
        continue;
      }
      LLMCAP_SIM_CHECK(seq.num_emitted_tokens == record.num_output_tokens);
      LLMCAP_SIM_CHECK(seq.num_blocks == 0);
      LLMCAP_SIM_CHECK(record.arrival <= record.first_scheduled);
      LLMCAP_SIM_CHECK(record.first_scheduled < record.first_token);
      LLMCAP_SIM_CHECK(record.first_token <= record.completion);
      num_expected_tokens += record.num_output_tokens;
    }
    LLMCAP_SIM_CHECK(num_rejected == result_.num_rejected);
    LLMCAP_SIM_CHECK(num_emitted_tokens_ == num_expected_tokens);
    LLMCAP_SIM_CHECK(static_cast<int64_t>(result_.itl_ns.size()) ==
                     num_expected_tokens -
                         (static_cast<int64_t>(result_.requests.size()) - num_rejected));
    if (!workload_.closed_loop) {
      LLMCAP_SIM_CHECK(result_.requests.size() == workload_.open_loop.size());
    }
    for (const Replica& replica : replicas_) {
      LLMCAP_SIM_CHECK(replica.num_free_blocks == serving_.num_kv_blocks);
      LLMCAP_SIM_CHECK(replica.waiting.empty() && replica.running.empty());
      LLMCAP_SIM_CHECK(!replica.busy && !replica.schedule_pending);
      LLMCAP_SIM_CHECK(replica.num_outstanding == 0);
    }
  }

  const Workload& workload_;
  const FleetConfig& fleet_;
  const ServingConfig& serving_;
  const model::StepTimePredictor& predictor_;
  RandomStream start_stream_;
  RandomStream think_stream_;
  RandomStream lengths_stream_;
  EventQueue events_;
  std::vector<Replica> replicas_;
  std::vector<User> users_;
  std::vector<int64_t> open_order_;  ///< open-loop request indices in arrival order
  std::vector<Sequence> sequences_;  ///< by request id, parallel to result_.requests
  int64_t next_round_robin_ = 0;
  int64_t num_emitted_tokens_ = 0;
  SimResult result_;
};

}  // namespace

SimResult simulate(const Workload& workload, const FleetConfig& fleet,
                   const model::StepTimePredictor& predictor, uint64_t seed) {
  validate(workload, fleet);
  Simulation simulation(workload, fleet, predictor, seed);
  return simulation.run();
}

}  // namespace llmcap::sim
