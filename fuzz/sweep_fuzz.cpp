// Fuzzes app::load_sweep (sweep files). The input is written beside a copy of
// tests/cli/data/small.json and its trace, so that "scenario": "small.json" resolves: load or
// plan::InputError.
#include "app/sweep_spec.h"
#include "fuzz/fuzz_util.h"
#include "plan/scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool copied = [] {
    const std::filesystem::path from = llmcap::fuzz::data_dir() / ".." / "tests" / "cli" / "data";
    for (const char* name : {"small.json", "conv_model300.csv"})
      std::filesystem::copy_file(from / name, llmcap::fuzz::temp_dir() / name,
                                 std::filesystem::copy_options::overwrite_existing);
    return true;
  }();
  (void)copied;
  try {
    llmcap::app::load_sweep(llmcap::fuzz::write_input(data, size, "sweep.json"));
  } catch (const llmcap::plan::InputError&) {
  }
  return 0;
}
