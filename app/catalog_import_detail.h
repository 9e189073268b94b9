// Parts of app/catalog_import.cpp shared with app/catalog_import_gcp.cpp; not a public API.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "app/catalog_import.h"

namespace llmcap::app::detail {

/// The GCP Cloud Billing Catalog API reader of read_price_list (its contract).
PriceList read_gcp(const nlohmann::json& doc, const std::string& file,
                   const PriceListOptions& options);

/// Sets `record`'s offer under `model` (its own price or an entry of "prices") to `usd` with
/// the list's source and as_of, recording the change, an unchanged price, or a spot offer it
/// cannot add, in `out` (merge_prices' rules).
void apply_price(nlohmann::ordered_json& record, const std::string& model, double usd,
                 const PriceList& list, MergeResult& out);

/// Prices the GCP records of `records` from list.components (merge_prices' contract).
void merge_gcp(nlohmann::ordered_json& records, const PriceList& list, MergeResult& out);

}  // namespace llmcap::app::detail
