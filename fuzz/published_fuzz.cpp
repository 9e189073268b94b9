// Fuzzes app::read_published (data/validation/published.json) against the shipped catalog:
// load or base::InputError.
#include "app/published.h"
#include "base/error.h"
#include "fuzz/fuzz_util.h"
#include "model/hardware.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const llmcap::model::Catalog catalog =
      llmcap::model::Catalog::load(llmcap::fuzz::data_dir());
  try {
    llmcap::app::read_published(llmcap::fuzz::write_input(data, size, "published.json"), catalog);
  } catch (const llmcap::base::InputError&) {
  }
  return 0;
}
