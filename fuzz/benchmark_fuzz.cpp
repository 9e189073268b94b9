// Fuzzes app::read_benchmark_file (vLLM, SGLang, llama-bench, genai-perf, AIPerf, trtllm-bench
// result files): load or base::InputError.
#include "app/benchmark_files.h"
#include "base/error.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    llmcap::app::read_benchmark_file(llmcap::fuzz::write_input(data, size, "result.json"));
  } catch (const llmcap::base::InputError&) {
  }
  return 0;
}
