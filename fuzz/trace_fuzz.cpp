// Fuzzes sim::load_trace and sim::load_lengths on trace and length CSV files, and
// sim::load_lengths on the same bytes as a length model (`.json`, sim/length_model.h): load or
// sim::InputError.
#include "fuzz/fuzz_util.h"
#include "sim/input_error.h"
#include "sim/workload.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::filesystem::path path = llmcap::fuzz::write_input(data, size, "trace.csv");
  try {
    llmcap::sim::load_trace(path);
  } catch (const llmcap::sim::InputError&) {
  }
  try {
    llmcap::sim::load_lengths(path);
  } catch (const llmcap::sim::InputError&) {
  }
  try {
    llmcap::sim::load_lengths(llmcap::fuzz::write_input(data, size, "lengths.json"));
  } catch (const llmcap::sim::InputError&) {
  }
  return 0;
}
