// Fuzzes sim::load_trace and sim::load_lengths on trace and length CSV files,
// sim::load_lengths on the same bytes as a length model (`.json`, sim/length_model.h), and
// sim::load_trace on them as a JSON Lines trace (`.jsonl`, sim/trace_jsonl.h, whose requests'
// hash slices must lie in the shared pool): load or sim::InputError.
#include <cstdlib>

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
  try {
    for (const llmcap::sim::RequestSpec& r :
         llmcap::sim::load_trace(llmcap::fuzz::write_input(data, size, "trace.jsonl"))) {
      const auto& p = r.prefix;
      if (p.hashes == nullptr || p.begin < 0 || p.count < 0 ||
          static_cast<size_t>(p.begin + p.count) > p.hashes->size()) {
        std::abort();
      }
    }
  } catch (const llmcap::sim::InputError&) {
  }
  return 0;
}
