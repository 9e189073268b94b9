// The end-of-run conservation checks: a violation is a simulator bug and aborts with
// file:line (sim/check.h).
#include "sim/check.h"
#include "sim/engine.h"

namespace llmcap::sim {

/// KV offload: the host tier within its capacity, every entry evictable and in no other tier,
/// and every block copied out accounted for (loaded back, dropped, or still there).
void Engine::check_host_tier(const Replica& replica) const {
  const PrefixCache& host = *replica.host_cache;
  const PrefixCacheStats& stats = replica.prefix_stats;
  int64_t blocks = 0;
  host.for_each([&](const PrefixCache::Entry& entry) {
    LLMCAP_SIM_CHECK(entry.refcount == 0);
    LLMCAP_SIM_CHECK(replica.prefix_cache->find(entry.key) < 0);
    blocks += entry.num_blocks;
  });
  LLMCAP_SIM_CHECK(blocks == host.evictable_blocks());
  LLMCAP_SIM_CHECK(blocks <= replica.serving.kv_offload.num_host_blocks);
  LLMCAP_SIM_CHECK(stats.num_offloaded_blocks == stats.num_loaded_blocks +
                                                     stats.num_host_evicted_blocks +
                                                     stats.num_host_dropped_blocks + blocks);
}

void Engine::check_conservation() const {
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
  // One gap per chunk after a request's first: a speculative step's tokens arrive together.
  const int64_t num_expected_gaps = num_expected_tokens -
                                    (static_cast<int64_t>(result_.requests.size()) - num_rejected) -
                                    num_tokens_in_chunks_;
  if (options_.record_itl_ns) {
    LLMCAP_SIM_CHECK(static_cast<int64_t>(result_.itl_ns.size()) == num_expected_gaps);
  }
  if (options_.record_itl_runs) {
    int64_t num_gaps = 0;
    for (const GapRun& run : result_.itl_runs) num_gaps += run.count;
    LLMCAP_SIM_CHECK(num_gaps == num_expected_gaps);
  }
  if (!workload_.closed_loop) {
    LLMCAP_SIM_CHECK(result_.requests.size() == workload_.open_loop.size());
  }
  for (const Replica& replica : replicas_) {
    LLMCAP_SIM_CHECK(replica.kv.num_free_blocks == replica.serving.num_kv_blocks);
    LLMCAP_SIM_CHECK(replica.waiting.empty() && replica.num_running == 0);
    LLMCAP_SIM_CHECK(replica.running_head == -1 && replica.running_tail == -1);
    LLMCAP_SIM_CHECK(replica.waiting_blocks == 0 && replica.prefilling.empty());
    LLMCAP_SIM_CHECK(replica.num_decoders == 0 && replica.decode_context_tokens == 0);
    LLMCAP_SIM_CHECK(!replica.busy && !replica.schedule_pending);
    LLMCAP_SIM_CHECK(replica.num_outstanding == 0);
    LLMCAP_SIM_CHECK(replica.num_incoming == 0 && replica.kv.num_held_blocks == 0);
    LLMCAP_SIM_CHECK(replica.landed.empty() && replica.migrating.empty());
    if (replica.host_cache) check_host_tier(replica);
  }
  for (const Pool& pool : pools_) {
    for (const int64_t n : pool.outstanding) LLMCAP_SIM_CHECK(n == 0);
  }
}

}  // namespace llmcap::sim
