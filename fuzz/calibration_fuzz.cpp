// Fuzzes model::profile_from_json (calibration profile JSON): load or model::InputError.
#include "fuzz/fuzz_util.h"
#include "model/calibration.h"
#include "model/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    llmcap::model::profile_from_json(llmcap::fuzz::as_text(data, size), "profile.json");
  } catch (const llmcap::model::InputError&) {
  }
  return 0;
}
