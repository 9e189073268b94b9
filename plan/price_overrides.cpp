#include "plan/price_overrides.h"

#include <algorithm>
#include <cmath>

#include "plan/scenario.h"

namespace llmcap::plan {

model::Catalog catalog_with_price_overrides(const model::Catalog& catalog,
                                            const std::vector<PriceOverride>& overrides,
                                            const std::string& file) {
  const std::vector<std::string>& names = model::price_model_names();
  for (size_t i = 0; i < overrides.size(); ++i) {
    const PriceOverride& o = overrides[i];
    const std::string field = "price_overrides[" + std::to_string(i) + "]";
    if (catalog.find_instance(o.instance) == nullptr) {
      throw InputError::refused_field(file, field + ".instance",
                                      "unknown instance type \"" + o.instance + "\"");
    }
    if (std::find(names.begin(), names.end(), o.price_model) == names.end()) {
      throw InputError::refused_field(file, field + ".price_model",
                                      "unknown price model \"" + o.price_model + "\"");
    }
    if (o.as_of.empty()) {
      throw InputError::missing_field(file, field + ".as_of",
                                      "a price needs the date it was quoted (YYYY-MM-DD)");
    }
    if (!(o.usd_per_hour > 0) || !std::isfinite(o.usd_per_hour)) {
      throw InputError::bad_field(file, field + ".usd_per_hour", std::to_string(o.usd_per_hour),
                                  "a positive number");
    }
  }
  // The catalog as it is (hardware, engines, rates, owned hardware, defaults, its folder), with
  // the overridden instances replaced.
  model::Catalog out = catalog;
  for (model::InstanceType inst : catalog.instances()) {
    bool changed = false;
    for (const PriceOverride& o : overrides) {
      if (o.instance != inst.id) continue;
      changed = true;
      model::PriceOffer* offer = nullptr;
      for (model::PriceOffer& p : inst.prices) {
        if (p.price_model == o.price_model) offer = &p;
      }
      if (offer == nullptr) {
        inst.prices.emplace_back();
        offer = &inst.prices.back();
        offer->price_model = o.price_model;
      }
      offer->usd_per_hour = o.usd_per_hour;
      offer->amount_per_hour = o.usd_per_hour;
      offer->currency = "USD";
      offer->source = o.source;
      offer->as_of = o.as_of;
      if (o.price_model == inst.price_model) {
        inst.usd_per_hour = o.usd_per_hour;
        inst.source = offer->source;
        inst.as_of = o.as_of;
      }
    }
    if (changed) out.replace_instance(std::move(inst));
  }
  return out;
}

}  // namespace llmcap::plan
