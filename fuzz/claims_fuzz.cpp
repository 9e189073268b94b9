// Fuzzes model::parse_claims (the claims file of `llmcap audit`) against the shipped catalog and
// models: load or model::InputError.
#include "fuzz/fuzz_util.h"
#include "model/audit.h"
#include "model/hardware.h"
#include "model/input_error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const llmcap::model::Catalog catalog =
      llmcap::model::Catalog::load(llmcap::fuzz::data_dir());
  static const std::vector<llmcap::model::ModelSpec> models =
      llmcap::model::load_models(llmcap::fuzz::data_dir() / "models");
  try {
    llmcap::model::parse_claims(llmcap::fuzz::as_text(data, size), "claims.json", catalog, models);
  } catch (const llmcap::model::InputError&) {
  }
  return 0;
}
