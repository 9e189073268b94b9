// `llmcap catalog import FILE` (issue 30, item 4; docs/catalog.md): prices read from a public
// price list, merged into the instance catalog (data/instances/instances.json) by provider,
// instance name and region. Only prices change: a type the catalog lacks is listed, never
// invented (its hardware must come from a record).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace llmcap::app {

/// One price of one instance type read from a price list.
struct ImportedPrice {
  std::string provider;  ///< as instances.json writes it: "AWS", "Azure"
  std::string name;      ///< the provider's instance name: "g6e.xlarge", "Standard_NC40ads_H100_v5"
  std::string region;    ///< "us-east-1", "eastus"
  std::string price_model;  ///< "on_demand", "reserved_1y", "reserved_3y", "spot"
  double usd_per_hour = 0;  ///< effective USD per instance-hour (a reservation over its term)
};

/// A per-resource price of a GCP price list (a Cloud Billing Catalog API SKU): one vCPU, one
/// GiB of memory or one GPU for an hour. GCP prices a predefined machine type as the sum of
/// its resources, so these become instance prices only in merge_prices, against the catalog
/// record's vCPUs, memory and GPUs.
struct ComponentPrice {
  std::string resource;              ///< "CPU", "RAM" or "GPU" (the SKU's category.resourceGroup)
  std::string description;           ///< e.g. "A2 Instance Core running in Americas"
  std::vector<std::string> regions;  ///< serviceRegions, e.g. {"us-central1"}
  std::string price_model;           ///< from usageType: OnDemand, Preemptible, Commit1Yr/3Yr
  double usd_per_unit_hour = 0;      ///< per vCPU-, GiB- or GPU-hour
};

/// What the list says of itself, and its prices.
struct PriceList {
  std::string format;  ///< "aws-offer-file", "azure-retail-prices", "gcp-billing-catalog",
                       ///< "csv-aggregate"
  std::string source;  ///< the list's own URL or name, written into each imported offer
  std::string as_of;   ///< YYYY-MM-DD: its publication date (or the --as-of given)
  std::vector<ImportedPrice> prices;
  std::vector<ComponentPrice> components;  ///< GCP only
  size_t num_skipped = 0;  ///< rows of the list that are no Linux, shared-tenancy instance price
};

/// What the list itself cannot say (a CSV aggregate names no provider, region or date; an
/// Azure Retail Prices response carries no date).
struct PriceListOptions {
  std::string provider;  ///< --provider (CSV aggregate)
  std::string region;    ///< --region (CSV aggregate)
  std::string as_of;     ///< --as-of YYYY-MM-DD (CSV aggregate, Azure; else the list's own date)
  std::string source;    ///< --source: URL the file was downloaded from (CSV aggregate, Azure)
};

/// Reads a price list, recognising its format by its shape:
/// - AWS Price List offer file (JSON with "offerCode", "publicationDate", "products",
///   "terms"): Linux, shared tenancy, no pre-installed software, capacity status "Used"
///   products; "terms.OnDemand" gives on_demand, "terms.Reserved" standard No Upfront
///   reservations of 1yr / 3yr give reserved_1y / reserved_3y (USD per hour, plus any upfront
///   fee spread over the term's 8,760 h a year). Source: the offer file's URL
///   (pricing.us-east-1.amazonaws.com/offers/v1.0/aws/<offerCode>/<version>/<region>/index.json);
///   as_of: publicationDate.
/// - Azure Retail Prices API response (JSON with "Items" of {"armSkuName", "armRegionName",
///   "retailPrice", "unitOfMeasure", "type", "reservationTerm", "skuName", "productName",
///   "meterName", "serviceName", "currencyCode"}): Virtual Machines, USD, not Windows, not Low
///   Priority; "Consumption" gives on_demand (a skuName ending " Spot": spot), "Reservation"
///   with reservationTerm "1 Year" / "3 Years" gives reserved_1y / reserved_3y (retailPrice is
///   the whole term: divided by its hours). Needs options.as_of (the response has no date).
/// - GCP Cloud Billing Catalog API response for Compute Engine (JSON with "skus": [{
///   "description", "category": {"resourceGroup", "usageType"}, "serviceRegions",
///   "pricingInfo": [{"effectiveTime", "pricingExpression": {"usageUnit", "tieredRates":
///   [{"unitPrice": {"currencyCode", "units", "nanos"}}]}}]}]): the CPU, RAM and GPU SKUs
///   priced per hour ("h") or GiB-hour ("GiBy.h") in USD, without "Custom", "Sole Tenancy",
///   "Extended" or "Premium" in their description; usageType OnDemand, Preemptible (spot),
///   Commit1Yr, Commit3Yr. as_of: options.as_of, else the latest effectiveTime.
/// - CSV aggregate in the shape of the instances.vantage.sh / ec2instances.info export (a
///   header with "API Name" and "On Demand" or "Linux On Demand cost"; cells like "$1.006
///   hourly", "$734.38 monthly" (/ 730 h), "unavailable"): on_demand only (its reserved and
///   spot columns do not say which term or zone). Needs options.provider, region and as_of.
/// Throws base::InputError naming `file`, the field (or line) and the value for: malformed
/// JSON, a shape none of these, a price that is not a number, a missing option, an as_of that
/// is not a date.
PriceList read_price_list(const std::string& text, const std::string& file,
                          const PriceListOptions& options);

/// One price the merge changed or added.
struct PriceChange {
  std::string instance;  ///< catalog id
  std::string price_model;
  double old_usd_per_hour = 0;  ///< 0: a new offer
  double usd_per_hour = 0;
};

/// The merged catalog and what changed.
struct MergeResult {
  nlohmann::ordered_json catalog;  ///< instances.json with the new prices (key order kept)
  std::vector<PriceChange> changes;
  size_t num_unchanged = 0;  ///< prices matched whose figure was already the list's
  /// "<name> (<region>)" of the list's instance types the catalog lacks, sorted, each once.
  std::vector<std::string> unknown;
  /// Prices matched but not merged, with why (e.g. a spot offer without an interruption rate).
  std::vector<std::string> skipped;
};

/// Merges `list` into `catalog_doc` (parsed instances.json): a record matches a price when its
/// "provider" (case-insensitive), "name" and "region" equal the price's. A GCP list's
/// components price each "GCP" record whose region they serve: vcpus x the series' CPU SKU +
/// memory GiB x its RAM SKU (+ num_gpus x the GPU's SKU), the series being the machine name's
/// first part upper-cased ("a2-highgpu-1g": a SKU whose description has the word "A2"), the GPU
/// SKU the one naming the record's GPU (gcp_gpu_sku_name); a record with some but not all of
/// its SKUs in the list is listed in `skipped`. Its own price (under
/// its "price_model") or the offer under "prices" of that model gets usd_per_hour, "source"
/// (list.source) and "as_of" (list.as_of); a "confidence" field on the record is removed when
/// its own price is replaced. A model the record lacks is added to "prices", but for "spot"
/// (a spot offer needs an interruption rate from another source: skipped). Nothing else of the
/// records changes. Deterministic.
MergeResult merge_prices(const nlohmann::ordered_json& catalog_doc, const PriceList& list);

/// The words a GCP SKU description uses for a catalog GPU id ("l4": "Nvidia L4 GPU",
/// "a100-40gb-sxm": "Nvidia Tesla A100 GPU", "a100-80gb-sxm": "Nvidia A100 80GB GPU",
/// "h100-sxm": "Nvidia H100 80GB GPU", "h200": "Nvidia H200 141GB GPU"); "" for another id.
std::string gcp_gpu_sku_name(const std::string& gpu_id);

}  // namespace llmcap::app
