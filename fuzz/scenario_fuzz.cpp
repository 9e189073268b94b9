// Fuzzes plan::load_scenario_text (the reader behind load_scenario): any input must either
// load or throw plan::InputError.
#include "fuzz/fuzz_util.h"
#include "plan/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    llmcap::plan::load_scenario_text(llmcap::fuzz::as_text(data, size),
                                     llmcap::fuzz::temp_dir() / "scenario.json");
  } catch (const llmcap::plan::InputError&) {
  }
  return 0;
}
