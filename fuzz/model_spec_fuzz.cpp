// Fuzzes model::load_model_spec (Hugging Face config.json): load or model::InputError.
#include "fuzz/fuzz_util.h"
#include "model/input_error.h"
#include "model/model_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    llmcap::model::load_model_spec(llmcap::fuzz::write_input(data, size, "config.json"));
  } catch (const llmcap::model::InputError&) {
  }
  return 0;
}
