// Price offers, exchange rates, owned hardware and TCO defaults of the catalog
// (instances.json "prices", data/tco/; docs/tco.md), and every error path of their readers.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "model/hardware.h"
#include "model/input_error.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using llmcap::testing::fresh_temp_dir;
using llmcap::testing::read_text;
using llmcap::testing::test_data;
using llmcap::testing::write_text;
using nlohmann::json;

constexpr double kTolerance = 1e-12;

/// The fixture catalog copied to a temporary folder, with instance 0 ("test-cpu-slice") and
/// the tco/ files edited by each test.
class Prices : public ::testing::Test {
 protected:
  json instances = json::parse(read_text(test_data("catalog/instances/instances.json")));
  json rates = {{"exchange_rates",
                 {{{"id", "usd-cny"},
                   {"from", "USD"},
                   {"to", "CNY"},
                   {"rate", 7.0},
                   {"source", "test"},
                   {"as_of", "2026-01-27"}}}}};
  json owned = {{"owned_hardware",
                 {{{"id", "srv"},
                   {"name", "a server"},
                   {"equivalent_instance", "test-cpu-slice"},
                   {"purchase_amount", 70000},
                   {"currency", "CNY"},
                   {"power_watts", 800},
                   {"source", "test quote"},
                   {"as_of", "2026-01-01"}}}}};
  json defaults = {
      {"pue", {{"value", 1.4}, {"source", "s"}, {"as_of", "2026-01-01"}}},
      {"usd_per_kwh", {{"value", 0.08}, {"source", "s"}, {"as_of", "2026-01-01"}}},
      {"spot_replacement_s", {{"value", 300}, {"source", "s"}, {"as_of", "2026-01-01"}}}};
  std::filesystem::path dir = fresh_temp_dir();

  json& first() { return instances["instances"][0]; }
  std::string instances_path() const { return (dir / "instances/instances.json").string(); }

  Catalog load() {
    write_text(dir / "hardware/cpus.json", read_text(test_data("catalog/hardware/cpus.json")));
    write_text(dir / "hardware/gpus.json", read_text(test_data("catalog/hardware/gpus.json")));
    write_text(dir / "instances/instances.json", instances.dump(2));
    write_text(dir / "tco/exchange_rates.json", rates.dump(2));
    write_text(dir / "tco/owned_hardware.json", owned.dump(2));
    write_text(dir / "tco/defaults.json", defaults.dump(2));
    return Catalog::load(dir);
  }
  std::string load_error() {
    return llmcap::testing::error_message<InputError>([this] { load(); });
  }
};

json offer(double usd) {
  return {{"usd_per_hour", usd}, {"source", "src"}, {"as_of", "2026-02-01"}};
}

TEST_F(Prices, OwnOfferFirstThenPricesInModelOrder) {
  json spot = offer(0.5);
  spot["interruption_rate_per_hour"] = 0.001;
  spot["interruption_source"] = "advisor";
  spot["interruption_as_of"] = "2026-02-02";
  first()["prices"] = {{"spot", spot}, {"reserved_1y", offer(1.5)}};
  const Catalog c = load();
  const InstanceType& i = c.instances()[0];
  EXPECT_EQ(i.offered_price_models(), "on_demand, reserved_1y, spot");
  EXPECT_DOUBLE_EQ(i.find_price("on_demand")->usd_per_hour, i.usd_per_hour);
  EXPECT_EQ(i.find_price("on_demand")->source, "test fixture");
  EXPECT_DOUBLE_EQ(i.find_price("reserved_1y")->usd_per_hour, 1.5);
  EXPECT_EQ(i.find_price("reserved_1y")->as_of, "2026-02-01");
  EXPECT_DOUBLE_EQ(i.find_price("spot")->interruption_rate_per_hour, 0.001);
  EXPECT_EQ(i.find_price("spot")->interruption_source, "advisor");
  EXPECT_EQ(i.find_price("reserved_3y"), nullptr);
  // Instances without "prices" offer their own price only.
  EXPECT_EQ(c.instances()[1].offered_price_models(), "on_demand");
}

TEST_F(Prices, OtherCurrencyConvertedAtTheDatedRate) {
  first()["prices"] = {{"reserved_3y",
                        {{"amount_per_hour", 7.7},
                         {"currency", "CNY"},
                         {"source", "aliyun"},
                         {"as_of", "2026-02-01"}}}};
  const Catalog c = load();
  const PriceOffer* o = c.instances()[0].find_price("reserved_3y");
  ASSERT_NE(o, nullptr);
  EXPECT_NEAR(o->usd_per_hour, 1.1, kTolerance);  // 7.7 CNY / 7.0 CNY per USD
  EXPECT_DOUBLE_EQ(o->amount_per_hour, 7.7);
  EXPECT_EQ(o->currency, "CNY");
  ASSERT_NE(c.find_exchange_rate("CNY"), nullptr);
  EXPECT_EQ(c.find_exchange_rate("CNY")->as_of, "2026-01-27");
  const OwnedHardware* srv = c.find_owned_hardware("srv");
  ASSERT_NE(srv, nullptr);
  EXPECT_NEAR(srv->purchase_usd, 10000, 1e-9);  // 70,000 CNY / 7.0
  EXPECT_DOUBLE_EQ(c.tco_defaults().pue.value, 1.4);
  EXPECT_DOUBLE_EQ(c.tco_defaults().spot_replacement_s.value, 300);
}

TEST_F(Prices, TcoFolderIsOptional) {
  const Catalog c = Catalog::load(test_data("catalog"));
  EXPECT_TRUE(c.exchange_rates().empty());
  EXPECT_TRUE(c.owned_hardware().empty());
  EXPECT_EQ(c.tco_defaults().pue.value, 0);
}

TEST_F(Prices, PriceWithoutCurrency) {
  first()["prices"] = {{"reserved_1y", {{"amount_per_hour", 9}, {"source", "s"}, {"as_of", "d"}}}};
  EXPECT_EQ(load_error(),
            instances_path() +
                ": instance \"test-cpu-slice\": field \"prices.reserved_1y.currency\": "
                "expected a currency code for \"amount_per_hour\" (one of \"USD\", "
                "\"CNY\"), got nothing (field missing)");
}

TEST_F(Prices, PriceWithoutDate) {
  first()["prices"] = {{"reserved_1y", {{"usd_per_hour", 1}, {"source", "s"}}}};
  EXPECT_EQ(load_error(), instances_path() +
                              ": instance \"test-cpu-slice\": field \"prices.reserved_1y.as_of\": "
                              "expected a non-empty string, got nothing (field missing)");
}

TEST_F(Prices, PriceWithoutAmount) {
  first()["prices"] = {{"reserved_1y", {{"source", "s"}, {"as_of", "d"}}}};
  EXPECT_EQ(load_error(),
            instances_path() +
                ": instance \"test-cpu-slice\": field \"prices.reserved_1y.usd_per_hour\": "
                "expected a positive number (or \"amount_per_hour\" with \"currency\"), got "
                "nothing (field missing)");
}

TEST_F(Prices, CurrencyWithoutRate) {
  first()["prices"] = {
      {"reserved_1y",
       {{"amount_per_hour", 9}, {"currency", "EUR"}, {"source", "s"}, {"as_of", "d"}}}};
  EXPECT_EQ(load_error(),
            instances_path() +
                ": instance \"test-cpu-slice\": field \"prices.reserved_1y.currency\": "
                "expected a currency with a rate in tco/exchange_rates.json (one of "
                "\"USD\", \"CNY\"), got \"EUR\"");
}

TEST_F(Prices, UnknownPriceModel) {
  first()["prices"] = {{"reserved_5y", offer(1)}};
  EXPECT_EQ(load_error(),
            instances_path() +
                ": instance \"test-cpu-slice\": field \"prices.reserved_5y\": expected "
                "a price model (one of \"on_demand\", \"reserved_1y\", "
                "\"reserved_3y\", \"spot\", \"capacity_block\"), got \"reserved_5y\"");
  first().erase("prices");
  first()["price_model"] = "savings_plan";
  EXPECT_EQ(load_error(),
            instances_path() +
                ": instance \"test-cpu-slice\": field \"price_model\": expected a "
                "price model (one of \"on_demand\", \"reserved_1y\", \"reserved_3y\", "
                "\"spot\", \"capacity_block\"), got \"savings_plan\"");
}

TEST_F(Prices, OwnPriceModelRepeated) {
  first()["prices"] = {{"on_demand", offer(1)}};
  EXPECT_EQ(load_error(), instances_path() +
                              ": instance \"test-cpu-slice\": field \"prices.on_demand\": expected "
                              "no offer for the record's own price_model \"on_demand\" (its price "
                              "is \"usd_per_hour\"), got {\"as_of\":\"2026-02-01\",\"source\":"
                              "\"src\",\"usd_per_hour\":1.0}");
}

TEST_F(Prices, SpotNeedsAnInterruptionRate) {
  first()["prices"] = {{"spot", offer(0.4)}};
  EXPECT_EQ(load_error(),
            instances_path() +
                ": instance \"test-cpu-slice\": field \"prices.spot.interruption_rate_per_hour\": "
                "expected a positive number, got nothing (field missing)");
  json spot = offer(0.4);
  spot["interruption_rate_per_hour"] = 2;
  first()["prices"] = {{"spot", spot}};
  EXPECT_EQ(load_error(),
            instances_path() +
                ": instance \"test-cpu-slice\": field \"prices.spot.interruption_rate_per_hour\": "
                "expected a fraction of instances per hour in (0, 1], got 2");
}

TEST_F(Prices, InterruptionRateOnlyOnSpot) {
  json reserved = offer(1);
  reserved["interruption_rate_per_hour"] = 0.01;
  first()["prices"] = {{"reserved_1y", reserved}};
  EXPECT_EQ(load_error(),
            instances_path() +
                ": instance \"test-cpu-slice\": field "
                "\"prices.reserved_1y.interruption_rate_per_hour\": expected no interruption "
                "figures on a \"reserved_1y\" offer, got 0.01");
}

TEST_F(Prices, RecordCurrencyMustBeUsd) {
  first()["currency"] = "CNY";
  EXPECT_EQ(load_error(), instances_path() +
                              ": instance \"test-cpu-slice\": field \"currency\": expected \"USD\" "
                              "(\"usd_per_hour\" is in USD; other currencies go in \"prices\"), "
                              "got \"CNY\"");
}

TEST_F(Prices, OwnedHardwareErrors) {
  owned["owned_hardware"][0]["equivalent_instance"] = "aws-x";
  std::string e = load_error();
  EXPECT_NE(e.find((dir / "tco/owned_hardware.json").string() +
                   ": owned hardware \"srv\": field \"equivalent_instance\": expected an instance "
                   "id of instances/instances.json (known: test-cpu-slice, "),
            std::string::npos)
      << e;
  owned["owned_hardware"][0]["equivalent_instance"] = "test-cpu-slice";
  owned["owned_hardware"][0].erase("currency");
  EXPECT_EQ(load_error(), (dir / "tco/owned_hardware.json").string() +
                              ": owned hardware \"srv\": field \"currency\": expected a currency "
                              "code for \"purchase_amount\" (one of \"USD\", \"CNY\"), got nothing "
                              "(field missing)");
}

TEST_F(Prices, ExchangeRateAndDefaultsErrors) {
  rates["exchange_rates"][0].erase("as_of");
  EXPECT_EQ(load_error(), (dir / "tco/exchange_rates.json").string() +
                              ": exchange rate \"usd-cny\": field \"as_of\": expected a non-empty "
                              "string, got nothing (field missing)");
  rates["exchange_rates"][0]["as_of"] = "2026-01-27";
  rates["exchange_rates"][0]["from"] = "EUR";
  EXPECT_EQ(load_error(), (dir / "tco/exchange_rates.json").string() +
                              ": exchange rate \"usd-cny\": field \"from\": expected \"USD\", got "
                              "\"EUR\"");
  rates["exchange_rates"][0]["from"] = "USD";
  defaults["pue"]["value"] = 0.8;
  EXPECT_EQ(load_error(), (dir / "tco/defaults.json").string() +
                              ": defaults: field \"pue.value\": expected a number >= 1, got 0.8");
}

TEST(ShippedPrices, EveryOfferHasSourceAndDate) {
  const Catalog c = Catalog::load(llmcap::testing::data_dir());
  int num_offers = 0;
  for (const InstanceType& i : c.instances()) {
    ASSERT_FALSE(i.prices.empty()) << i.id;
    EXPECT_EQ(i.prices.front().price_model, i.price_model) << i.id;
    for (const PriceOffer& o : i.prices) {
      ++num_offers;
      EXPECT_GT(o.usd_per_hour, 0) << i.id << " " << o.price_model;
      EXPECT_FALSE(o.source.empty()) << i.id << " " << o.price_model;
      EXPECT_FALSE(o.as_of.empty()) << i.id << " " << o.price_model;
      if (o.price_model == "spot") {
        EXPECT_GT(o.interruption_rate_per_hour, 0) << i.id;
        EXPECT_FALSE(o.interruption_source.empty()) << i.id;
      }
    }
  }
  // Every type has its own offer; the shipped catalog holds only prices read from a provider's
  // own price list (on-demand today: docs/catalog.md).
  EXPECT_GE(num_offers, static_cast<int>(c.instances().size()));
  const InstanceType& g6e = c.instance("aws-g6e.xlarge", "test");
  EXPECT_EQ(g6e.offered_price_models(), "on_demand");
  ASSERT_NE(c.find_exchange_rate("CNY"), nullptr);
  for (const OwnedHardware& h : c.owned_hardware()) {
    EXPECT_NE(c.find_instance(h.equivalent_instance), nullptr) << h.id;
    EXPECT_FALSE(h.source.empty()) << h.id;
  }
  EXPECT_GE(c.tco_defaults().pue.value, 1.0);
  EXPECT_GT(c.tco_defaults().usd_per_kwh.value, 0);
  EXPECT_GT(c.tco_defaults().spot_replacement_s.value, 0);
}

}  // namespace
}  // namespace llmcap::model
