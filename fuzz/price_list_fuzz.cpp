// Fuzzes `llmcap catalog`'s readers: app::read_price_list (AWS offer files, Azure Retail Prices
// and GCP Cloud Billing Catalog responses, CSV aggregates) with app::merge_prices into a
// two-record catalog, and app::check_catalog on the input as an instances document: a result
// or base::InputError.
#include <nlohmann/json.hpp>

#include "app/catalog_check.h"
#include "app/catalog_import.h"
#include "base/error.h"
#include "base/json_reader.h"
#include "fuzz/fuzz_util.h"

namespace {

const nlohmann::ordered_json& small_catalog() {
  static const nlohmann::ordered_json catalog = nlohmann::ordered_json::parse(R"({"instances": [
    {"id": "aws-t.xlarge", "provider": "AWS", "name": "t.xlarge", "region": "us-east-1",
     "usd_per_hour": 1.0, "price_model": "on_demand", "source": "s", "as_of": "2026-01-01"},
    {"id": "gcp-a2-highgpu-1g", "provider": "GCP", "name": "a2-highgpu-1g",
     "region": "us-central1", "gpu": "a100-40gb-sxm", "num_gpus": 1, "vcpus": 12,
     "memory_bytes": 91268055040, "usd_per_hour": 3.0, "source": "s", "as_of": "2026-01-01"}]})");
  return catalog;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = llmcap::fuzz::as_text(data, size);
  try {
    const llmcap::app::PriceList list =
        llmcap::app::read_price_list(text, "list", {"AWS", "us-east-1", "2026-12-01", ""});
    (void)llmcap::app::merge_prices(small_catalog(), list);
  } catch (const llmcap::base::InputError&) {
  }
  try {
    const nlohmann::json doc = llmcap::base::parse_json_text(text, "instances.json");
    (void)llmcap::app::check_catalog(doc, "instances.json", {"2026-12-01", 180});
  } catch (const llmcap::base::InputError&) {
  }
  return 0;
}
