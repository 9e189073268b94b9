// kContinuous, the reference version: vLLM v0's default scheduler (Kwon et al., SOSP 2023),
// prefill first. Admit whole prefills while the limits allow; if none was admitted, every
// running sequence decodes one token (preempting when the KV cache is full).
#include "serve/scheduler.h"

namespace llmcap::serve {

void admit_whole_prefills(Scheduler& s, sim::SimTime now, ServeStep& step) {
  const ServeConfig& c = s.config();
  while (!s.waiting().empty() && static_cast<int64_t>(s.running().size()) < c.max_num_seqs) {
    const int64_t id = s.waiting().front();
    // The tokens it computes: its prefill less what the prefix cache holds.
    const int64_t tokens = s.seq(id).prefill_tokens() - s.num_cached_tokens(id);
    const bool first = step.shape.num_prefill_seqs == 0;  // may exceed the budget alone
    if (!first && step.shape.num_prefill_tokens + tokens > c.max_num_batched_tokens) break;
    if (!s.fits(id)) break;
    s.add_prefill_chunk(step, s.admit_front(now), tokens);
  }
}

ServeStep compose_continuous(Scheduler& s, sim::SimTime now) {
  ServeStep step;
  admit_whole_prefills(s, now, step);
  if (step.items.empty()) s.decode_running(step);
  return step;
}

}  // namespace llmcap::serve
