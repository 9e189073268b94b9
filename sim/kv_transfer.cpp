// Disaggregated prefill and decode: a prefilled sequence migrates to a decode replica, which
// pulls its KV cache over the network when it has room (docs/simulator.md).
#include <algorithm>

#include "sim/check.h"
#include "sim/engine.h"

namespace llmcap::sim {

/// A sequence prefilled on the prefill replica `prefill` (first token emitted, output left):
/// it leaves the prefill replica's running set, its KV blocks stay held there, and it joins
/// the back of a decode replica's queue (decode router) to be pulled.
void Engine::migrate(Replica& prefill, int64_t id, SimTime now) {
  Sequence& seq = sequences_[id];
  unlink_running(prefill, id);
  prefill.kv.num_held_blocks += prefill.kv.blocks_for(seq.prefill_target);
  add_outstanding(prefill, -1);
  seq.prefill_replica = seq.replica;
  const int64_t d = route(pools_[1], seq.num_prompt_tokens + seq.num_output_tokens, id);
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
void Engine::pull_transfers(Replica& replica, SimTime now) {
  while (!replica.waiting.empty() &&
         sequences_[replica.waiting.front()].state == SeqState::kMigrating) {
    if (!try_pull_front(replica, now)) return;
  }
}

bool Engine::try_pull_front(Replica& decode, SimTime now) {
  const int64_t id = decode.waiting.front();
  Sequence& seq = sequences_[id];
  LLMCAP_SIM_CHECK(seq.state == SeqState::kMigrating);
  if (decode.num_running + decode.num_incoming >= decode.serving.max_num_seqs) return false;
  const int64_t kv_tokens = waiting_kv_tokens(seq);
  const int64_t num_blocks = decode.kv.blocks_for(kv_tokens);
  if (num_blocks > decode.kv.num_free_blocks) return false;
  decode.waiting.pop_front();
  decode.waiting_blocks -= num_blocks;
  decode.series.set(WindowRecorder::kWaiting, now, static_cast<int64_t>(decode.waiting.size()));
  decode.kv.num_free_blocks -= num_blocks;
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
  events_.schedule(landing, Phase::kStepComplete, EventKind::kTransferDone, id);
  decode.series.set(WindowRecorder::kKvUsed, now, decode.kv.num_used_blocks());
  return true;
}

/// A KV transfer landed: the prefill replica frees the blocks it held, and the sequence
/// starts decoding on its decode replica (at once if idle, else when its step ends).
void Engine::on_transfer_done(SimTime now, int64_t id) {
  Sequence& seq = sequences_[id];
  LLMCAP_SIM_CHECK(seq.state == SeqState::kTransferring);
  Replica& prefill = replicas_[seq.prefill_replica];
  const int64_t held = prefill.kv.blocks_for(seq.prefill_target);
  prefill.kv.num_held_blocks -= held;
  prefill.kv.num_free_blocks += held;
  prefill.series.set(WindowRecorder::kKvUsed, now, prefill.kv.num_used_blocks());
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
void Engine::land(Replica& decode, int64_t id) {
  Sequence& seq = sequences_[id];
  seq.admit_order = decode.next_admit_order++;
  link_running(decode, id);
  join_decoders(decode, id);
}

}  // namespace llmcap::sim
