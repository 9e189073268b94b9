// `llmcap catalog import`'s readers and merge (app/catalog_import.h) on hand-written fixtures in
// the shapes of the public price lists (tests/app/data/price_lists/README.md).
#include "app/catalog_import.h"

#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "base/error.h"
#include "test_util.h"

namespace llmcap::app {
namespace {

using llmcap::testing::error_message;
using nlohmann::ordered_json;

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(LLMCAP_APP_TEST_DATA_DIR) + "/price_lists/" + name);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string prices_text(const PriceList& l) {
  std::string out;
  for (const ImportedPrice& p : l.prices) {
    std::ostringstream line;
    line << p.provider << " " << p.name << " " << p.region << " " << p.price_model << " "
         << p.usd_per_hour << "\n";
    out += line.str();
  }
  return out;
}

TEST(CatalogImport, AwsOfferFileLinuxOnDemandAndStandardNoUpfrontReservations) {
  const PriceList l = read_price_list(fixture("aws-offer-file.json"), "index.json", {});
  EXPECT_EQ(l.format, "aws-offer-file");
  EXPECT_EQ(l.as_of, "2026-07-20");
  EXPECT_EQ(l.source,
            "AWS Price List offer file, https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/"
            "AmazonEC2/20260720134430/us-east-1/index.json (publicationDate 2026-07-20T13:44:30Z;"
            " Linux, shared tenancy)");
  EXPECT_EQ(l.num_skipped, 1U);  // the Windows product
  // By SKU, on-demand terms first; the all-upfront and convertible terms are left out.
  EXPECT_EQ(prices_text(l),
            "AWS t.xlarge us-east-1 on_demand 2.5\n"
            "AWS new.48xlarge us-east-1 on_demand 9\n"
            "AWS t.xlarge us-east-1 reserved_1y 1.6\n"
            "AWS t.xlarge us-east-1 reserved_3y 1.1\n");
}

TEST(CatalogImport, AzureRetailPricesConsumptionSpotAndReservationPerHour) {
  const PriceList l = read_price_list(fixture("azure-retail-prices.json"), "prices.json",
                                      {"", "", "2026-12-01", ""});
  EXPECT_EQ(l.format, "azure-retail-prices");
  EXPECT_EQ(l.as_of, "2026-12-01");
  EXPECT_EQ(l.num_skipped, 2U);  // Windows, Low Priority
  // The reservation's retailPrice is its whole year: 17520 / 8760 h.
  EXPECT_EQ(prices_text(l),
            "Azure Standard_NC1_v9 eastus on_demand 3\n"
            "Azure Standard_NC1_v9 eastus spot 0.9\n"
            "Azure Standard_NC1_v9 eastus reserved_1y 2\n"
            "Azure Standard_NC1_v9 westus on_demand 1\n");
}

TEST(CatalogImport, CsvAggregateOnDemandColumnOnly) {
  const PriceList l =
      read_price_list(fixture("aggregate.csv"), "a.csv",
                      {"AWS", "us-east-1", "2026-12-01", "https://instances.vantage.sh/"});
  EXPECT_EQ(l.format, "csv-aggregate");
  EXPECT_EQ(l.num_skipped, 1U);  // "unavailable"
  EXPECT_EQ(prices_text(l),
            "AWS t.xlarge us-east-1 on_demand 2.25\n"
            "AWS other.large us-east-1 on_demand 0.1\n");  // $73.00 monthly / 730 h
}

ordered_json catalog() {
  return ordered_json::parse(R"({"instances": [
    {"id": "aws-t.xlarge", "provider": "AWS", "name": "t.xlarge", "region": "us-east-1",
     "usd_per_hour": 2.0, "price_model": "on_demand", "source": "old", "as_of": "2025-01-01",
     "confidence": "unverified",
     "prices": {"spot": {"usd_per_hour": 0.5, "source": "s", "as_of": "2025-01-01",
                         "interruption_rate_per_hour": 0.01, "interruption_source": "a",
                         "interruption_as_of": "2025-01-01"}}},
    {"id": "azure-nc1", "provider": "Azure", "name": "Standard_NC1_v9", "region": "eastus",
     "usd_per_hour": 3.0, "price_model": "on_demand", "source": "x", "as_of": "2025-01-01"}]})");
}

TEST(CatalogImport, MergeUpdatesMatchingPricesAddsOffersAndListsUnknownTypes) {
  const PriceList aws = read_price_list(fixture("aws-offer-file.json"), "index.json", {});
  const MergeResult m = merge_prices(catalog(), aws);
  ASSERT_EQ(m.changes.size(), 3U);
  EXPECT_EQ(m.changes[0].instance, "aws-t.xlarge");
  EXPECT_EQ(m.changes[0].price_model, "on_demand");
  EXPECT_DOUBLE_EQ(m.changes[0].old_usd_per_hour, 2.0);
  EXPECT_DOUBLE_EQ(m.changes[0].usd_per_hour, 2.5);
  EXPECT_EQ(m.changes[1].price_model, "reserved_1y");
  EXPECT_DOUBLE_EQ(m.changes[1].old_usd_per_hour, 0);  // a new offer
  const ordered_json& t = m.catalog["instances"][0];
  EXPECT_DOUBLE_EQ(t["usd_per_hour"].get<double>(), 2.5);
  EXPECT_EQ(t["as_of"], "2026-07-20");
  EXPECT_EQ(t["source"], aws.source);
  EXPECT_FALSE(t.contains("confidence"));
  EXPECT_DOUBLE_EQ(t["prices"]["reserved_3y"]["usd_per_hour"].get<double>(), 1.1);
  EXPECT_DOUBLE_EQ(t["prices"]["spot"]["usd_per_hour"].get<double>(), 0.5);  // untouched
  EXPECT_EQ(m.unknown, std::vector<std::string>{"new.48xlarge (us-east-1)"});
  // Key order is kept: "id" stays first.
  EXPECT_EQ(t.begin().key(), "id");
  // The same list again changes nothing.
  const MergeResult again = merge_prices(m.catalog, aws);
  EXPECT_TRUE(again.changes.empty());
  EXPECT_EQ(again.num_unchanged, 3U);
}

TEST(CatalogImport, MergeUpdatesAnExistingSpotOfferButAddsNoNewOne) {
  const PriceList az =
      read_price_list(fixture("azure-retail-prices.json"), "p.json", {"", "", "2026-12-01", ""});
  const MergeResult m = merge_prices(catalog(), az);
  EXPECT_EQ(m.skipped,
            std::vector<std::string>{"azure-nc1 spot: no spot offer to update (a new one needs an "
                                     "interruption rate from another source)"});
  EXPECT_EQ(m.unknown, std::vector<std::string>{"Standard_NC1_v9 (westus)"});
  EXPECT_DOUBLE_EQ(m.catalog["instances"][1]["prices"]["reserved_1y"]["usd_per_hour"].get<double>(),
                   2.0);
}

TEST(CatalogImport, GcpBillingCatalogSkusPriceEachMachineByItsResources) {
  const PriceList l = read_price_list(fixture("gcp-billing-catalog.json"), "skus.json", {});
  EXPECT_EQ(l.format, "gcp-billing-catalog");
  EXPECT_EQ(l.as_of, "2026-11-30");  // the latest effectiveTime
  EXPECT_EQ(l.num_skipped, 2U);      // the custom core and the egress SKU
  ASSERT_EQ(l.components.size(), 5U);
  EXPECT_EQ(l.components[0].resource, "CPU");
  EXPECT_DOUBLE_EQ(l.components[2].usd_per_unit_hour, 2.9);
  EXPECT_EQ(l.components[3].price_model, "reserved_1y");

  const ordered_json doc = ordered_json::parse(R"({"instances": [
    {"id": "gcp-a2-highgpu-1g", "provider": "GCP", "name": "a2-highgpu-1g",
     "region": "us-central1", "device_kind": "gpu", "gpu": "a100-40gb-sxm", "num_gpus": 1,
     "vcpus": 12, "memory_bytes": 91268055040, "usd_per_hour": 3.0,
     "price_model": "on_demand", "source": "x", "as_of": "2025-01-01"},
    {"id": "gcp-a2-highgpu-1g-east", "provider": "GCP", "name": "a2-highgpu-1g",
     "region": "us-east1", "device_kind": "gpu", "gpu": "a100-40gb-sxm", "num_gpus": 1,
     "vcpus": 12, "memory_bytes": 91268055040, "usd_per_hour": 3.0,
     "price_model": "on_demand", "source": "x", "as_of": "2025-01-01"}]})");
  const MergeResult m = merge_prices(doc, l);
  // 12 x 0.03 + 85 GiB x 0.004 + 1 x 2.9 = 3.6 USD/h.
  ASSERT_EQ(m.changes.size(), 1U);
  EXPECT_EQ(m.changes[0].instance, "gcp-a2-highgpu-1g");
  EXPECT_NEAR(m.changes[0].usd_per_hour, 3.6, 1e-12);
  EXPECT_EQ(m.catalog["instances"][0]["as_of"], "2026-11-30");
  // The 1-year commitment lacks the GPU SKU; us-east1 lacks it on demand.
  EXPECT_EQ(m.skipped, (std::vector<std::string>{
                           "gcp-a2-highgpu-1g reserved_1y: the list has no A2 GPU SKU for "
                           "us-central1",
                           "gcp-a2-highgpu-1g-east on_demand: the list has no A2 GPU SKU for "
                           "us-east1"}));
  EXPECT_EQ(gcp_gpu_sku_name("h100-sxm"), "Nvidia H100 80GB GPU");
  EXPECT_EQ(gcp_gpu_sku_name("a10g"), "");
}

TEST(CatalogImportErrors, MessagesNameTheFileFieldAndValue) {
  auto error = [](const std::string& text, const PriceListOptions& o = {}) {
    return error_message<base::InputError>([&] { read_price_list(text, "f", o); });
  };
  EXPECT_EQ(error("{\"Items\": []").rfind("f: malformed JSON: ", 0), 0U);
  EXPECT_EQ(error("{\"x\": 1}"),
            "f: expected an AWS Price List offer file (\"offerCode\", \"products\", \"terms\"), "
            "an Azure Retail Prices response (\"Items\") or a Cloud Billing Catalog API "
            "response (\"skus\"), got a JSON object without them");
  EXPECT_EQ(error(R"({"skus": [{"category": {"resourceGroup": "CPU", "usageType": "OnDemand"},
      "pricingInfo": [{"pricingExpression": {"usageUnit": "h", "tieredRates": [{"unitPrice":
        {"currencyCode": "USD", "units": "two", "nanos": 0}}]}}]}]})"),
            "f: field \"skus[0].pricingInfo[0].pricingExpression.tieredRates[0].unitPrice.units\": "
            "expected a whole number of USD as a string, e.g. \"2\", got \"two\"");
  EXPECT_EQ(error(R"({"skus": []})"),
            "f: no SKU has a pricingInfo effectiveTime: expected --as-of YYYY-MM-DD (the day the "
            "list was downloaded), got nothing");
  EXPECT_EQ(error(R"({"offerCode": "AmazonEC2", "publicationDate": "soon", "products": {},
                     "terms": {}})"),
            "f: field \"publicationDate\": expected a date-time such as "
            "\"2026-07-20T13:44:30Z\", got \"soon\"");
  EXPECT_EQ(error(R"({"offerCode": "AmazonEC2", "publicationDate": "2026-07-20T00:00:00Z",
      "products": {"S": {"attributes": {"instanceType": "t", "operatingSystem": "Linux",
                                        "tenancy": "Shared"}}},
      "terms": {"OnDemand": {"S": {"S.T": {"priceDimensions": {"S.T.R": {"unit": "Hrs",
                                           "pricePerUnit": {"USD": "cheap"}}}}}}}})"),
            "f: field \"terms.OnDemand.S.T.priceDimensions.S.T.R\": expected a non-negative "
            "price, got \"cheap\"");
  EXPECT_EQ(error(R"({"offerCode": "AmazonEC2", "publicationDate": "2026-07-20T00:00:00Z",
      "products": {"S": {"attributes": {"instanceType": "t", "operatingSystem": "Linux",
                                        "tenancy": "Shared"}}},
      "terms": {"OnDemand": {"S": {"S.T": {"termAttributes": {}}}}}})"),
            "f: not in the shape of its price list: [json.exception.out_of_range.403] key "
            "'priceDimensions' not found");
  EXPECT_EQ(error(R"({"Items": []})"),
            "f: an Azure Retail Prices response carries no date: expected --as-of YYYY-MM-DD "
            "(the day the list was downloaded), got nothing");
  EXPECT_EQ(error(R"({"Items": [{"serviceName": "Virtual Machines", "armSkuName": "x",
                      "currencyCode": "USD", "unitOfMeasure": "1 Hour", "type": "Consumption",
                      "retailPrice": "free"}]})",
                  {"", "", "2026-12-01", ""}),
            "f: field \"Items[0].retailPrice\": expected a non-negative price, got \"free\"");
  EXPECT_EQ(error("\"API Name\",\"On Demand\"\n\"t\",\"$1 hourly\"\n"),
            "f: a CSV price list names no provider or region; expected --provider and --region "
            "(e.g. --provider AWS --region us-east-1)");
  const PriceListOptions csv{"AWS", "us-east-1", "2026-12-01", ""};
  EXPECT_EQ(error("\"Name\",\"Price\"\n", csv),
            "f: line 1: expected a header with \"API Name\" and \"On Demand\" (or \"Linux On "
            "Demand cost\"), got \"\"Name\",\"Price\"\"");
  EXPECT_EQ(error("\"API Name\",\"On Demand\"\n\"t\",\"one dollar\"\n", csv),
            "f: line 2, column \"On Demand\": expected a price such as \"$1.006 hourly\", got "
            "\"one dollar\"");
  EXPECT_EQ(error("\"API Name\",\"On Demand\"\n\"t\",\"$1 fortnightly\"\n", csv),
            "f: line 2, column \"On Demand\": expected a price per hour, day, week, month or "
            "year (\"$1.006 hourly\"), got \"$1 fortnightly\"");
  EXPECT_EQ(error("\"API Name\",\"On Demand\"\n\"t\",\"$1 hourly\"\n", {"AWS", "r", "soon", ""}),
            "f: --as-of \"soon\": expected a date YYYY-MM-DD");
}

}  // namespace
}  // namespace llmcap::app
