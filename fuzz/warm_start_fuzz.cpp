// Fuzzes plan::read_warm_start (the plan JSON of `llmcap plan --warm-start`): load or
// plan::InputError.
#include "fuzz/fuzz_util.h"
#include "plan/scenario.h"
#include "plan/what_if.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    llmcap::plan::read_warm_start(llmcap::fuzz::write_input(data, size, "plan.json"));
  } catch (const llmcap::plan::InputError&) {
  }
  return 0;
}
