// `llmcap catalog check`'s rules (app/catalog_check.h): each flag on a record written for it,
// and the shipped catalog clean (issue 30, item 4: no unsourced or undated price, >= 80 types).
#include "app/catalog_check.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "base/error.h"
#include "base/json_reader.h"
#include "model/hardware.h"
#include "test_util.h"

namespace llmcap::app {
namespace {

using nlohmann::json;

json record(const std::string& id, const std::string& source, const std::string& as_of) {
  return {{"id", id},         {"provider", "AWS"}, {"name", id}, {"usd_per_hour", 1.0},
          {"source", source}, {"as_of", as_of}};
}

const std::string kOfficial = "AWS: EC2 pricing, https://aws.amazon.com/ec2/pricing/on-demand/";

CatalogCheck check(const json& records, const std::string& today = "2026-12-01") {
  return check_catalog({{"instances", records}}, "i.json", {today, 180});
}

std::string flags_text(const CatalogCheck& c) {
  std::string out;
  for (const CatalogFlag& f : c.flags) {
    out += f.instance + " " + f.price_model + " " + f.kind + ": " + f.detail + "\n";
  }
  return out;
}

TEST(CatalogCheck, AnOfficialDatedRecentPriceIsClean) {
  const CatalogCheck c = check(json::array({record("a", kOfficial, "2026-11-01")}));
  EXPECT_EQ(c.num_types, 1U);
  EXPECT_EQ(c.num_prices, 1U);
  EXPECT_EQ(flags_text(c), "");
}

TEST(CatalogCheck, FlagsUnsourcedUndatedStaleAndUnofficialPrices) {
  json r = json::array({record("nosrc", "", "2026-11-01"), record("nodate", kOfficial, ""),
                        record("baddate", kOfficial, "June 2026"),
                        record("old", kOfficial, "2026-01-01"),
                        record("blog", "a blog, https://example.com/aws-prices", "2026-11-01"),
                        record("mirror", "https://aws.amazon.com.evil.example/ec2", "2026-11-01")});
  EXPECT_EQ(flags_text(check(r)),
            "nosrc on_demand unsourced: no source\n"
            "nodate on_demand undated: no as_of\n"
            "baddate on_demand undated: as_of \"June 2026\" is not a date YYYY-MM-DD\n"
            "old on_demand stale: as_of 2026-01-01 is 334 days old (> 180)\n"
            "blog on_demand unofficial: source names no official price page or file of AWS "
            "(expected a URL on aws.amazon.com, pricing.us-east-1.amazonaws.com, "
            "spot-bid-advisor.s3.amazonaws.com, b0.p.awsstatic.com, "
            "github.com/aws/karpenter-provider-aws, "
            "raw.githubusercontent.com/aws/karpenter-provider-aws)\n"
            "mirror on_demand unofficial: source names no official price page or file of AWS "
            "(expected a URL on aws.amazon.com, pricing.us-east-1.amazonaws.com, "
            "spot-bid-advisor.s3.amazonaws.com, b0.p.awsstatic.com, "
            "github.com/aws/karpenter-provider-aws, "
            "raw.githubusercontent.com/aws/karpenter-provider-aws)\n");
}

TEST(CatalogCheck, FlagsEveryOfferAndUnverifiedFigures) {
  json r = record("a", kOfficial, "2026-11-01");
  r["confidence"] = "unverified";
  r["note"] = "Unconfirmed: price is from knowledge.";
  r["network"] = {{"note", "the bandwidth was not re-read this session"}};
  r["prices"] = {{"reserved_1y", {{"source", kOfficial}, {"as_of", "2026-11-02"}}},
                 {"spot",
                  {{"source", kOfficial},
                   {"as_of", "2026-11-02"},
                   {"interruption_rate_per_hour", 0.001},
                   {"interruption_source", "a forum post"},
                   {"interruption_as_of", "2026-11-02"},
                   {"note", "Not read from the advisor itself"}}}};
  const CatalogCheck c = check(json::array({r}));
  EXPECT_EQ(c.num_prices, 3U);
  EXPECT_EQ(flags_text(c),
            "a on_demand unverified: \"confidence\": \"unverified\"\n"
            "a record unverified: note says \"from knowledge\"\n"
            "a network unverified: network note says \"not re-read\"\n"
            "a spot unofficial: interruption rate: source names no official price page or file "
            "of AWS (expected a URL on aws.amazon.com, pricing.us-east-1.amazonaws.com, "
            "spot-bid-advisor.s3.amazonaws.com, b0.p.awsstatic.com, "
            "github.com/aws/karpenter-provider-aws, "
            "raw.githubusercontent.com/aws/karpenter-provider-aws)\n"
            "a spot unverified: note says \"not read from\"\n");
}

TEST(CatalogCheck, OfficialDomainsArePerProvider) {
  EXPECT_TRUE(is_official_source("Azure", "x https://prices.azure.com/api/retail/prices y"));
  EXPECT_FALSE(is_official_source("Azure", "https://aws.amazon.com/ec2/pricing/"));
  EXPECT_TRUE(is_official_source("AWS",
                                 "(https://pricing.us-east-1.amazonaws.com/offers/v1.0/"
                                 "aws/AmazonEC2/current/us-east-1/index.json)"));
  EXPECT_TRUE(
      is_official_source("AWS", "https://github.com/aws/karpenter-provider-aws/blob/x/pricing.go"));
  EXPECT_FALSE(is_official_source("AWS", "https://github.com/someone/aws-prices"));
  // Anyone's S3 bucket is on amazonaws.com: only AWS's own price hosts count.
  EXPECT_FALSE(is_official_source("AWS", "https://someones-blog.s3.amazonaws.com/prices.html"));
  EXPECT_TRUE(is_official_source("AWS", "https://spot-bid-advisor.s3.amazonaws.com/x.json"));
  EXPECT_FALSE(is_official_source("AWS", "aws.amazon.com/ec2/pricing (no scheme: not a URL)"));
  EXPECT_FALSE(is_official_source("Nobody Cloud", "https://nobody.example/pricing"));
}

TEST(CatalogCheck, Dates) {
  EXPECT_EQ(date_days("1970-01-02"), 1);
  EXPECT_FALSE(date_days("2026-02-30"));
  EXPECT_FALSE(date_days("2026-1-01"));
  EXPECT_EQ(today_utc().size(), 10U);
  EXPECT_TRUE(date_days(today_utc()));
}

TEST(CatalogCheckErrors, BadTodayAndBadDocument) {
  EXPECT_EQ(
      llmcap::testing::error_message<base::InputError>([] { check(json::array(), "yesterday"); }),
      "i.json: --today \"yesterday\": expected a date YYYY-MM-DD");
  EXPECT_EQ(llmcap::testing::error_message<base::InputError>([] {
              check_catalog(json::object(), "i.json", {"2026-12-01", 180});
            }),
            "i.json: field \"instances\": expected an array of instance records, got nothing");
  EXPECT_EQ(llmcap::testing::error_message<base::InputError>([] {
              check(json::array({{{"id", 3}}}));
            }),
            "i.json: record 0: field \"id\": expected a string id, got 3");
}

// Issue 30, item 4, "done when": the shipped catalog has no unsourced, undated, unofficial or
// unverified price, and at least 80 types (ages counted to a fixed day, 2026-12-02).
TEST(ShippedCatalog, EveryPriceIsOfficialDatedAndThereAreAtLeast80Types) {
  const auto file = llmcap::testing::data_dir() / "instances/instances.json";
  const CatalogCheck c =
      check_catalog(base::read_json_file(file), file.string(), {"2026-12-02", 180});
  EXPECT_GE(c.num_types, 80U);
  EXPECT_EQ(flags_text(c), "");
  // And it loads, every type naming hardware records that exist.
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  EXPECT_EQ(catalog.instances().size(), c.num_types);
  std::set<std::string> providers;
  for (const model::InstanceType& i : catalog.instances()) providers.insert(i.provider);
  EXPECT_GE(providers.size(), 2U);
}

}  // namespace
}  // namespace llmcap::app
