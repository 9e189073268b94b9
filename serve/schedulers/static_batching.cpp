// kStatic, the reference version: request-level batching. A batch is admitted (as kContinuous
// admits) only when nothing is running; it then decodes until every member has finished.
// Members that finish leave the batch; a preempted member waits for the next batch.
#include "serve/scheduler.h"

namespace llmcap::serve {

ServeStep compose_static(Scheduler& s, sim::SimTime now) {
  ServeStep step;
  if (s.running().empty()) admit_whole_prefills(s, now, step);
  if (step.items.empty()) s.decode_running(step);
  return step;
}

}  // namespace llmcap::serve
