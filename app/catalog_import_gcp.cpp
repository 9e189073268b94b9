// GCP price lists for `llmcap catalog import` (app/catalog_import.h): the Cloud Billing Catalog
// API's Compute Engine SKUs, priced per vCPU-, GiB- and GPU-hour, summed per machine type.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <sstream>

#include "app/catalog_check.h"
#include "app/catalog_import_detail.h"
#include "base/error.h"

namespace llmcap::app {

std::string gcp_gpu_sku_name(const std::string& gpu_id) {
  static const std::map<std::string, std::string> names = {
      {"l4", "Nvidia L4 GPU"},
      {"a100-40gb-sxm", "Nvidia Tesla A100 GPU"},
      {"a100-80gb-sxm", "Nvidia A100 80GB GPU"},
      {"h100-sxm", "Nvidia H100 80GB GPU"},
      {"h200", "Nvidia H200 141GB GPU"},
  };
  const auto it = names.find(gpu_id);
  return it == names.end() ? "" : it->second;
}

namespace detail {
namespace {

using base::InputError;
using nlohmann::json;

std::string text(const json& o, const std::string& key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

template <typename Json>
std::string otext(const Json& o, const std::string& key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->template get<std::string>() : std::string();
}

/// "OnDemand" -> "on_demand", ...; "" for another usage type.
std::string price_model_of(const std::string& usage_type) {
  if (usage_type == "OnDemand") return "on_demand";
  if (usage_type == "Preemptible") return "spot";
  if (usage_type == "Commit1Yr") return "reserved_1y";
  if (usage_type == "Commit3Yr") return "reserved_3y";
  return "";
}

/// The SKU's USD price per unit-hour (units + nanos of its first tier), from its first
/// pricingInfo; throws naming the field when it is not a price.
double unit_price(const json& pricing, const std::string& file, const std::string& field) {
  const json& rate = pricing.at("pricingExpression").at("tieredRates").at(0).at("unitPrice");
  if (text(rate, "currencyCode") != "USD") return -1;
  const json& units = rate.contains("units") ? rate.at("units") : json("0");
  double whole = 0;
  if (units.is_string()) {
    try {
      size_t used = 0;
      whole = std::stod(units.get<std::string>(), &used);
      if (used != units.get<std::string>().size()) throw std::invalid_argument("trailing text");
    } catch (const std::exception&) {
      throw InputError::bad_field(file, field + ".units", units.dump(),
                                  "a whole number of USD as a string, e.g. \"2\"");
    }
  } else if (units.is_number()) {
    whole = units.get<double>();
  } else {
    throw InputError::bad_field(file, field + ".units", units.dump(), "a whole number of USD");
  }
  const json& nanos = rate.contains("nanos") ? rate.at("nanos") : json(0);
  if (!nanos.is_number()) {
    throw InputError::bad_field(file, field + ".nanos", nanos.dump(), "a number of nano-USD");
  }
  const double usd = whole + nanos.get<double>() / 1e9;
  if (!std::isfinite(usd) || usd < 0) {
    throw InputError::bad_field(file, field, rate.dump(), "a non-negative price");
  }
  return usd;
}

/// The words of a description, split at spaces.
std::vector<std::string> words(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

std::string upper(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return s;
}

}  // namespace

PriceList read_gcp(const json& doc, const std::string& file, const PriceListOptions& o) {
  PriceList list;
  list.format = "gcp-billing-catalog";
  const json& skus = doc.at("skus");
  if (!skus.is_array()) {
    throw InputError::bad_field(file, "skus", skus.type_name(), "an array of SKUs");
  }
  std::string latest;
  for (size_t i = 0; i < skus.size(); ++i) {
    const json& sku = skus[i];
    const std::string field = "skus[" + std::to_string(i) + "]";
    if (!sku.is_object()) throw InputError::bad_field(file, field, sku.dump(), "an object");
    const json& category = sku.contains("category") ? sku.at("category") : json::object();
    const std::string resource = text(category, "resourceGroup");
    const std::string model = price_model_of(text(category, "usageType"));
    const std::string description = text(sku, "description");
    bool excluded = false;
    for (const char* w : {"Custom", "Sole Tenancy", "Extended", "Premium"}) {
      excluded = excluded || description.find(w) != std::string::npos;
    }
    const bool priced = sku.contains("pricingInfo") && sku.at("pricingInfo").is_array() &&
                        !sku.at("pricingInfo").empty();
    if ((resource != "CPU" && resource != "RAM" && resource != "GPU") || model.empty() ||
        excluded || !priced) {
      ++list.num_skipped;
      continue;
    }
    const json& pricing = sku.at("pricingInfo").at(0);
    const std::string unit = text(pricing.at("pricingExpression"), "usageUnit");
    if (unit != (resource == "RAM" ? "GiBy.h" : "h")) {
      ++list.num_skipped;
      continue;
    }
    const double usd = unit_price(
        pricing, file, field + ".pricingInfo[0].pricingExpression." + "tieredRates[0].unitPrice");
    if (usd < 0) {  // another currency
      ++list.num_skipped;
      continue;
    }
    ComponentPrice c{resource, description, {}, model, usd};
    if (sku.contains("serviceRegions") && sku.at("serviceRegions").is_array()) {
      for (const json& r : sku.at("serviceRegions")) {
        if (r.is_string()) c.regions.push_back(r.get<std::string>());
      }
    }
    const std::string when = text(pricing, "effectiveTime");
    if (when.size() >= 10 && date_days(when.substr(0, 10)) && when.substr(0, 10) > latest) {
      latest = when.substr(0, 10);
    }
    list.components.push_back(std::move(c));
  }
  if (!o.as_of.empty()) {
    if (!date_days(o.as_of)) {
      throw InputError(file + ": --as-of \"" + o.as_of + "\": expected a date YYYY-MM-DD");
    }
    list.as_of = o.as_of;
  } else if (!latest.empty()) {
    list.as_of = latest;
  } else {
    throw InputError(file + ": no SKU has a pricingInfo effectiveTime: expected --as-of " +
                     "YYYY-MM-DD (the day the list was downloaded), got nothing");
  }
  list.source = "Cloud Billing Catalog API, " +
                (o.source.empty() ? std::string("https://cloudbilling.googleapis.com/v1/services/"
                                                "6F81-5844-456A/skus (Compute Engine)")
                                  : o.source) +
                ", response saved as " + file +
                "; machine price = vCPUs x CPU SKU + GiB x RAM SKU + GPUs x GPU SKU";
  return list;
}

void merge_gcp(nlohmann::ordered_json& records, const PriceList& list, MergeResult& out) {
  for (auto& record : records) {
    if (upper(otext(record, "provider")) != "GCP") continue;
    const std::string id = otext(record, "id");
    const std::string name = otext(record, "name");
    const std::string region = otext(record, "region");
    const std::string series = upper(name.substr(0, name.find('-')));
    const std::string gpu = otext(record, "gpu");
    const std::string gpu_words = gcp_gpu_sku_name(gpu);
    auto find = [&](const std::string& resource,
                    const std::string& model) -> const ComponentPrice* {
      for (const ComponentPrice& c : list.components) {
        if (c.resource != resource || c.price_model != model) continue;
        if (std::find(c.regions.begin(), c.regions.end(), region) == c.regions.end()) continue;
        if (resource == "GPU") {
          if (!gpu_words.empty() && c.description.find(gpu_words) != std::string::npos) return &c;
          continue;
        }
        const std::vector<std::string> w = words(c.description);
        if (std::find(w.begin(), w.end(), series) != w.end()) return &c;
      }
      return nullptr;
    };
    for (const char* model : {"on_demand", "reserved_1y", "reserved_3y", "spot"}) {
      const ComponentPrice* cpu = find("CPU", model);
      const ComponentPrice* ram = find("RAM", model);
      const bool needs_gpu = !gpu.empty();
      const ComponentPrice* g = needs_gpu ? find("GPU", model) : nullptr;
      if (cpu == nullptr && ram == nullptr && g == nullptr) continue;
      if (cpu == nullptr || ram == nullptr || (needs_gpu && g == nullptr)) {
        std::string missing;
        if (cpu == nullptr) missing += " CPU";
        if (ram == nullptr) missing += " RAM";
        if (needs_gpu && g == nullptr) {
          missing += gpu_words.empty() ? " GPU (no SKU name known for \"" + gpu + "\")" : " GPU";
        }
        out.skipped.push_back(id + " " + model + ": the list has no " + series + missing +
                              " SKU for " + region);
        continue;
      }
      const double vcpus = record.contains("vcpus") ? record["vcpus"].get<double>() : 0;
      const double gib = record.contains("memory_bytes")
                             ? record["memory_bytes"].get<double>() / (1024.0 * 1024 * 1024)
                             : 0;
      const double gpus =
          needs_gpu && record.contains("num_gpus") ? record["num_gpus"].get<double>() : 0;
      const double usd = vcpus * cpu->usd_per_unit_hour + gib * ram->usd_per_unit_hour +
                         (g != nullptr ? gpus * g->usd_per_unit_hour : 0.0);
      apply_price(record, model, usd, list, out);
    }
  }
}

}  // namespace detail
}  // namespace llmcap::app
