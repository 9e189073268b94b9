// kChunkedPrefill, the reference version: Sarathi-Serve (Agrawal et al., OSDI 2024) / vLLM's
// chunked-prefill scheduler. A step's budget of max_num_batched_tokens new tokens goes
// (1) one token to every decoding sequence (preempting when the KV cache is full),
// (2) then chunks to the partially prefilled sequences, oldest first,
// (3) then, only if nothing was preempted in this step (as vLLM v1), first chunks to waiting
//     sequences admitted FCFS while running < max_num_seqs and the blocks of their whole
//     prefill are free (with prefix caching: the new blocks fit, Scheduler::fits, and the
//     chunk counts only uncached tokens).
#include <algorithm>

#include "serve/scheduler.h"

namespace llmcap::serve {

ServeStep compose_chunked_prefill(Scheduler& s, sim::SimTime now) {
  const ServeConfig& c = s.config();
  const int64_t preemptions_before = s.num_preemptions();
  ServeStep step;
  s.decode_running(step);  // (1)
  int64_t budget = c.max_num_batched_tokens - step.shape.num_decode_seqs;
  for (const int64_t id : s.running()) {  // (2)
    const Sequence& q = s.seq(id);
    if (budget == 0) break;
    if (q.state != Sequence::State::kPrefilling) continue;
    const int64_t chunk = std::min(q.prefill_tokens() - q.num_prefilled, budget);
    s.add_prefill_chunk(step, id, chunk);
    budget -= chunk;
  }
  if (s.num_preemptions() != preemptions_before) return step;
  while (!s.waiting().empty() && budget > 0 &&  // (3)
         static_cast<int64_t>(s.running().size()) < c.max_num_seqs) {
    const int64_t id = s.waiting().front();
    if (!s.fits(id)) break;
    // Only the tokens the prefix cache does not hold are computed.
    const int64_t tokens = s.seq(id).prefill_tokens() - s.num_cached_tokens(id);
    const int64_t chunk = std::min(tokens, budget);
    s.add_prefill_chunk(step, s.admit_front(now), chunk);
    budget -= chunk;
  }
  return step;
}

}  // namespace llmcap::serve
