// The simulator's event loop: simulate() validates its inputs, then one Engine (sim/engine.h)
// runs the events of the run in (time, phase, sequence) order: arrivals (routed by the pool's
// router), step decisions (composed by the replica's batching policy), step ends (tokens
// emitted, sequences finished) and KV transfers landing (sim/kv_transfer.cpp).
#include "sim/simulator.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "sim/batch_policy.h"
#include "sim/check.h"
#include "sim/engine.h"
#include "sim/input_error.h"

namespace llmcap::sim {

namespace {

std::string seconds_text(SimTime t) {
  std::ostringstream out;
  out << "simulated time " << t.seconds() << " s";
  return out.str();
}

}  // namespace

Engine::Engine(const Workload& workload, const FleetConfig& fleet,
               const std::vector<ReplicaGroup>& groups, uint64_t seed, const SimOptions& options)
    : workload_(workload),
      fleet_(fleet),
      options_(options),
      disaggregated_(is_disaggregated(groups)),
      start_stream_(seed, Stream::kClosedLoopStart),
      think_stream_(seed, Stream::kClosedLoopThink),
      lengths_stream_(seed, Stream::kClosedLoopLengths) {
  run_ahead_ = options.decode_run_ahead && !disaggregated_ && !workload.closed_loop &&
               fleet.frontend_latency == SimTime::Zero() &&
               options.time_series_interval == SimTime::Zero();
  if (workload.closed_loop && workload.closed_loop->sessions) {
    session_turns_.emplace(*workload.closed_loop->sessions, seed);
  }
  // Pool 0 takes arrivals (every replica, or the prefill pool); pool 1 is the decode pool.
  // The decode router draws from a substream so that adding it shifts no other stream.
  pools_.emplace_back().router = find_router(fleet.router)->make(seed);
  if (disaggregated_) {
    pools_.emplace_back().router = find_router(fleet.decode_router)->make(substream_seed(seed, 1));
  }
  int64_t num_replicas = 0;
  for (const ReplicaGroup& g : groups) num_replicas += g.num_replicas;
  replicas_.reserve(static_cast<size_t>(num_replicas));
  const int64_t series_interval_ns = options.time_series_interval.ns();
  for (const ReplicaGroup& g : groups) {
    const int32_t pool = g.role == ReplicaRole::kDecode ? 1 : 0;
    const BatchPolicy& policy = find_batch_policy(g.serving.policy)->get();
    for (int64_t k = 0; k < g.num_replicas; ++k) {
      Replica& replica = replicas_.emplace_back(g, policy, series_interval_ns);
      if (run_ahead_) replica.run_pricer = replica.predictor->decode_run_pricer();
      Pool& p = pools_[pool];
      replica.pool = pool;
      replica.pool_index = static_cast<int32_t>(p.replicas.size());
      p.replicas.push_back(static_cast<int64_t>(replicas_.size()) - 1);
      p.outstanding.push_back(0);
      p.capacity_tokens.push_back(kv_capacity_tokens(g.serving.kv_layout, g.serving.num_kv_blocks,
                                                     g.serving.block_size_tokens));
    }
  }
  for (Pool& p : pools_) {
    p.min_capacity_tokens = *std::min_element(p.capacity_tokens.begin(), p.capacity_tokens.end());
    p.max_capacity_tokens = *std::max_element(p.capacity_tokens.begin(), p.capacity_tokens.end());
  }
}

SimResult Engine::run() {
  if (workload_.closed_loop) {
    start_closed_loop();
  } else {
    start_open_loop();
  }
  SimTime now = SimTime::Zero();
  while (!events_.empty()) {
    if (options_.cancel && ++work_since_poll_ >= kCancelPollEvents) {
      work_since_poll_ = 0;
      if (options_.cancel()) {
        result_.cancelled = true;
        return stop(now, "cancelled at " + seconds_text(now));
      }
    }
    const Event event = events_.pop();
    LLMCAP_SIM_CHECK(event.time >= now);  // time never runs backwards
    now = event.time;
    switch (event.kind) {
      case EventKind::kArrival:
        on_arrival(now, event.target);
        break;
      case EventKind::kSchedule:
        on_schedule(now, event.target);
        break;
      case EventKind::kStepDone:
        on_step_done(now, event.target);
        break;
      case EventKind::kTransferDone:
        on_transfer_done(now, event.target);
        break;
      case EventKind::kAdmit:
        admit(now, event.target);
        break;
    }
    if (!early_stop_.stop_reason().empty()) {  // SimOptions::stop_at_certain_p99_miss
      return stop(now, "stopped at " + seconds_text(now) + ": " + early_stop_.stop_reason());
    }
  }
  result_.end_time = now;
  check_conservation();
  collect_prefix_stats();
  if (options_.time_series_interval > SimTime::Zero()) {
    result_.time_series.reserve(replicas_.size());
    for (Replica& replica : replicas_) {
      result_.time_series.push_back(replica.series.finish(now, replica.serving.num_kv_blocks));
    }
  }
  return std::move(result_);
}

/// Ends the run early at `now` (SimResult::stopped_early): what happened so far, and why.
SimResult Engine::stop(SimTime now, std::string reason) {
  result_.end_time = now;
  collect_prefix_stats();
  result_.stopped_early = true;
  result_.stop_reason = std::move(reason);
  return std::move(result_);
}

/// SimResult::prefix_cache, when any replica caches prefixes.
void Engine::collect_prefix_stats() {
  const bool any = std::any_of(replicas_.begin(), replicas_.end(),
                               [](const Replica& r) { return r.prefix_cache.has_value(); });
  if (!any) return;
  result_.prefix_cache.reserve(replicas_.size());
  for (const Replica& replica : replicas_) {
    result_.prefix_cache.push_back(replica.prefix_stats);
    if (replica.host_cache) {
      result_.prefix_cache.back().num_host_blocks = replica.host_cache->evictable_blocks();
    }
  }
}

// ---- workload ----------------------------------------------------------------------------

void Engine::start_open_loop() {
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
  if (options_.stop_at_certain_p99_miss) {
    early_stop_.watch(*options_.stop_at_certain_p99_miss, workload_.open_loop);
  }
  if (!specs.empty()) schedule_open_arrival(0);
}

/// Open-loop arrivals are fed one at a time (the next is scheduled when one arrives), so the
/// event heap stays small.
void Engine::schedule_open_arrival(size_t position) {
  const RequestSpec& spec = workload_.open_loop[open_order_[position]];
  next_arrival_ = spec.arrival;
  events_.schedule(spec.arrival, Phase::kArrival, EventKind::kArrival,
                   static_cast<int64_t>(position));
}

void Engine::start_closed_loop() {
  const ClosedLoopWorkload& closed = *workload_.closed_loop;
  users_.resize(static_cast<size_t>(closed.num_users));
  for (int64_t user = 0; user < closed.num_users; ++user) {
    const SimTime start = SimTime::Seconds(start_stream_.uniform01() * closed.think_time_s);
    schedule_user_request(user, start);
  }
}

/// The user's next request arrives at `time` unless that is at or after the duration.
void Engine::schedule_user_request(int64_t user, SimTime time) {
  const ClosedLoopWorkload& closed = *workload_.closed_loop;
  if (time >= SimTime::Seconds(closed.duration_s)) return;
  const LengthSample& sample = closed.lengths[lengths_stream_.index(closed.lengths.size())];
  User& u = users_[user];
  if (session_turns_) {  // the next turn of its conversation, or the first of a new one
    if (u.session.done()) session_turns_->start(u.session);
    std::optional<RequestSpec> turn = session_turns_->next_turn(u.session, sample);
    if (!turn) {  // the conversation outgrew the model's context: this request starts a new one
      session_turns_->start(u.session);
      turn = session_turns_->next_turn(u.session, sample);
    }
    u.next = *turn;
  } else {
    u.next = {SimTime::Zero(), sample.num_prompt_tokens, sample.num_output_tokens};
  }
  events_.schedule(time, Phase::kArrival, EventKind::kArrival, user);
}

/// Throws the InputError of ClosedLoopWorkload::max_requests when one more request would
/// exceed it.
void Engine::check_closed_loop_requests(SimTime now) const {
  const ClosedLoopWorkload& closed = *workload_.closed_loop;
  if (static_cast<int64_t>(result_.requests.size()) < closed.max_requests) return;
  std::ostringstream reason;
  reason << "the closed loop of " << closed.num_users << " users issued more than "
         << closed.max_requests << " requests before " << std::setprecision(4) << now.seconds()
         << " s of " << closed.duration_s << " s; expected at most " << closed.max_requests
         << " requests (raise the limit with --max-requests)";
  throw InputError::refused_field(closed.source_file, closed.duration_field, reason.str());
}

void Engine::user_done(int64_t user, SimTime now) {
  // Between the turns of a session its own think time; before a new session the loop's.
  const bool mid_session = session_turns_ && !users_[user].session.done();
  const double think_s = think_stream_.exponential(
      mid_session ? session_turns_->options().think_time_s : workload_.closed_loop->think_time_s);
  schedule_user_request(user, now + SimTime::Seconds(think_s));
}

// ---- arrivals and routing ----------------------------------------------------------------

void Engine::on_arrival(SimTime now, int64_t target) {
  RequestSpec spec;
  int64_t user = -1;
  if (workload_.closed_loop) {
    user = target;
    check_closed_loop_requests(now);
    spec = users_[user].next;
    spec.arrival = now;
  } else {
    const auto position = static_cast<size_t>(target);
    spec = workload_.open_loop[open_order_[position]];
    if (position + 1 < open_order_.size()) {
      schedule_open_arrival(position + 1);
    } else {
      next_arrival_ = SimTime::Max();
    }
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
  seq.prefix = spec.prefix;
  if (fleet_.frontend_latency > SimTime::Zero()) {
    events_.schedule(now + fleet_.frontend_latency, Phase::kArrival, EventKind::kAdmit, id);
  } else {
    admit(now, id);
  }
}

void Engine::admit(SimTime now, int64_t id) {
  RequestRecord& record = result_.requests[static_cast<size_t>(id)];
  Sequence& seq = sequences_[static_cast<size_t>(id)];
  const int64_t user = seq.user;
  // KV the request needs where it arrives: its whole length, or (prefill pool) its prompt.
  const int64_t entry_tokens = seq.num_prompt_tokens + (disaggregated_ ? 0 : seq.num_output_tokens);
  if (entry_tokens > pools_[0].max_capacity_tokens ||
      (disaggregated_ &&
       seq.num_prompt_tokens + seq.num_output_tokens > pools_[1].max_capacity_tokens)) {
    // It fits nowhere: the router is not consulted.
    record.rejected = true;
    record.first_scheduled = record.first_token = record.completion = now;
    seq.state = SeqState::kFinished;
    ++result_.num_rejected;
    early_stop_.reject(id);
    if (user >= 0) user_done(user, now);
    return;
  }
  const int64_t r = route(pools_[0], entry_tokens, id);
  record.replica = r;
  seq.replica = static_cast<int32_t>(r);
  Replica& replica = replicas_[r];
  add_outstanding(replica, 1);
  push_waiting(replica, id, now, /*front=*/false, SeqState::kWaiting);
  maybe_schedule(r, now);
}

void Engine::add_outstanding(Replica& replica, int64_t delta) {
  replica.num_outstanding += delta;
  pools_[replica.pool].outstanding[replica.pool_index] += delta;
}

/// The replica of `pool` for a request that needs `tokens` tokens of KV cache there
/// (<= pool.max_capacity_tokens), chosen by the pool's router (sim/routers/).
int64_t Engine::route(Pool& pool, int64_t tokens, int64_t id) {
  if (pool.router->needs_cached_tokens()) {
    const Sequence& seq = sequences_[id];
    pool.prompt_tokens = seq.num_prompt_tokens;
    pool.cached_tokens.resize(pool.replicas.size());
    for (size_t p = 0; p < pool.replicas.size(); ++p) {
      pool.cached_tokens[p] = cached_prefix_tokens(replicas_[pool.replicas[p]], seq);
    }
  }
  const int64_t chosen = pool.router->choose(pool, replicas_, tokens);
  LLMCAP_SIM_CHECK(chosen >= 0 && chosen < static_cast<int64_t>(pool.replicas.size()) &&
                   (pool.all_fit(tokens) || pool.fits(chosen, tokens)));
  return pool.replicas[chosen];
}

// ---- steps -------------------------------------------------------------------------------

/// An idle replica with step work gets a kSchedule event at `now`: it runs after every
/// arrival of this instant, so one step decision sees them all. When no other event is due
/// at `now`, that event would be the next one popped, so the decision runs at once (same
/// result, half the event-queue traffic).
void Engine::maybe_schedule(int64_t r, SimTime now) {
  Replica& replica = replicas_[r];
  if (replica.busy || replica.schedule_pending || !has_step_work(replica)) return;
  replica.schedule_pending = true;
  if (events_.empty() || events_.top().time > now) {
    on_schedule(now, r);
    return;
  }
  events_.schedule(now, Phase::kSchedule, EventKind::kSchedule, r);
}

/// Whether a step can run: something is running, or the queue's front needs a prefill (a
/// migrating front is pulled without a step, see pull_transfers()).
bool Engine::has_step_work(const Replica& replica) const {
  return replica.num_running > 0 ||
         (!replica.waiting.empty() &&
          sequences_[replica.waiting.front()].state == SeqState::kWaiting);
}

void Engine::on_schedule(SimTime now, int64_t r) {
  Replica& replica = replicas_[r];
  replica.schedule_pending = false;
  LLMCAP_SIM_CHECK(!replica.busy);
  model::BatchShape shape;
  replica.step_prefills.clear();
  replica.step_has_decodes = false;
  replica.step_load_s = 0;
  if (replica.serving.longest_prefix_first && replica.prefix_cache) order_by_prefix(replica);
  replica.policy->compose_step(*this, replica, now, shape);
  if (shape.empty()) {
    // An idle replica with work can always run a step, unless KV in transit holds its
    // blocks (a prefill replica's prefilled prompts not yet pulled, a decode replica's
    // pulled transfers): it waits for a transfer to land, which schedules it again.
    LLMCAP_SIM_CHECK(replica.num_running == 0 &&
                     (replica.kv.num_held_blocks > 0 || replica.num_incoming > 0));
    return;
  }
  LLMCAP_SIM_CHECK(replica.kv.num_free_blocks >= 0);
  // KV offload: host loads of the step's admissions hold it up (synchronous loads).
  const double step_s = replica.predictor->step_time_s(shape) + replica.step_load_s;
  LLMCAP_SIM_CHECK(std::isfinite(step_s) && step_s > 0);
  replica.busy = true;
  ++result_.num_steps;
  if (replica.series.enabled()) {
    WindowRecorder& series = replica.series;
    series.count_step(now);
    series.set(WindowRecorder::kBusy, now, 1);
    series.set(WindowRecorder::kBatch, now, shape.num_prefill_seqs + shape.num_decode_seqs);
    series.set(WindowRecorder::kKvUsed, now, replica.kv.num_used_blocks());
  }
  SimTime end = now + SimTime::Seconds(step_s);
  if (can_run_ahead(replica, shape)) end = run_decodes_ahead(replica, shape, end);
  events_.schedule(end, Phase::kStepComplete, EventKind::kStepDone, r);
}

void Engine::on_step_done(SimTime now, int64_t r) {
  Replica& replica = replicas_[r];
  LLMCAP_SIM_CHECK(replica.busy);
  replica.busy = false;

  replica.finishing.clear();
  if (replica.step_has_decodes) emit_decode_tokens(replica, now);
  const size_t num_decoders_finishing = replica.finishing.size();
  emit_prefill_tokens(replica, now);
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
  if (replica.series.enabled()) {
    replica.series.set(WindowRecorder::kBusy, now, 0);
    replica.series.set(WindowRecorder::kBatch, now, 0);
    replica.series.set(WindowRecorder::kKvUsed, now, replica.kv.num_used_blocks());
  }
  if (!replica.migrating.empty()) {
    // Routed to decode replicas in admission order, after this replica's finishes.
    for (const int64_t id : replica.migrating) migrate(replica, id, now);
    replica.migrating.clear();
  }
  maybe_schedule(r, now);
}

/// The end of a step's prefill chunks: sequences whose prefill finished emit a token (their
/// first, or the next after a preemption) and finish, migrate (a prefill replica) or start
/// decoding; the others of the step keep prefilling.
void Engine::emit_prefill_tokens(Replica& replica, SimTime now) {
  for (const int64_t id : replica.step_prefills) {
    Sequence& seq = sequences_[id];
    seq.in_step = false;
    if (seq.state == SeqState::kPrefilling) insert_prefilled_units(replica, seq);
    if (seq.state != SeqState::kPrefilling || seq.num_prefilled < seq.prefill_target) continue;
    if (!replica.prefilling.empty()) std::erase(replica.prefilling, id);  // chunked prefill
    RequestRecord& record = result_.requests[id];
    ++num_emitted_tokens_;
    if (seq.num_emitted == 0) {
      record.first_token = now;
      if (early_stop_.watching()) {
        early_stop_.observe_ttft(record.client_class, (now - record.arrival).seconds());
      }
    } else {  // a recompute: the gap since the token before its preemption
      const SimTime gap = now - seq.last_token;
      record.max_itl = std::max(record.max_itl, gap);
      if (options_.record_itl_ns) result_.itl_ns.push_back(gap.ns());
      if (options_.record_itl_runs) add_gap_run(gap.ns(), 1);
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
}

/// A sequence that has emitted its last token: blocks freed, completion recorded.
void Engine::finish(Replica& replica, int64_t id, SimTime now) {
  Sequence& seq = sequences_[id];
  int64_t blocks = 0;
  int64_t kv_tokens = 0;
  if (seq.state == SeqState::kDecoding) {
    blocks = leave_decoders(replica, id);
    kv_tokens = seq.num_prompt_tokens + seq.num_emitted - 1;
    seq.last_token = now;
  } else {
    blocks = replica.kv.blocks_for(seq.prefill_target);
  }
  LLMCAP_SIM_CHECK(seq.num_emitted == seq.num_output_tokens);
  unlink_running(replica, id);
  seq.state = SeqState::kFinished;
  seq.num_prefilled = 0;
  std::vector<uint64_t>().swap(seq.unit_keys);
  RequestRecord& record = result_.requests[id];
  record.completion = now;
  if (early_stop_.watching() && record.num_output_tokens >= 2) {
    early_stop_.observe_tpot(record.client_class,
                             (record.completion - record.first_token).seconds() /
                                 static_cast<double>(record.num_output_tokens - 1));
  }
  release_blocks(replica, seq, blocks, kv_tokens);
  add_outstanding(replica, -1);
  if (seq.user >= 0) user_done(seq.user, now);
}

// ---- the door ---------------------------------------------------------------------------------

namespace {

SimResult validate_and_run(const Workload& workload, const FleetConfig& fleet,
                           const model::StepTimePredictor* predictor, uint64_t seed,
                           const SimOptions& options) {
  const std::vector<ReplicaGroup> groups = resolve_groups(fleet, predictor);
  validate_fleet(fleet, groups);
  if (options.time_series_interval < SimTime::Zero()) {
    throw InputError("options.time_series_interval: expected >= 0 ns (0: no time series), got " +
                     std::to_string(options.time_series_interval.ns()) + " ns");
  }
  validate_workload(workload, groups);
  Engine engine(workload, fleet, groups, seed, options);
  return engine.run();
}

}  // namespace

SimResult simulate(const Workload& workload, const FleetConfig& fleet,
                   const model::StepTimePredictor& predictor, uint64_t seed,
                   const SimOptions& options) {
  return validate_and_run(workload, fleet, &predictor, seed, options);
}

SimResult simulate(const Workload& workload, const FleetConfig& fleet, uint64_t seed,
                   const SimOptions& options) {
  return validate_and_run(workload, fleet, nullptr, seed, options);
}

}  // namespace llmcap::sim
