// A scenario's price model that some candidate types do not offer (issue 30, item 4): those
// types are listed, each with what it offers, and left out of the TCO; the run goes on.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/cli.h"
#include "run_cli.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using llmcap::cli::testing::CliRun;
using llmcap::cli::testing::run_cli;
using llmcap::testing::TempDir;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

/// A copy of the shipped catalog in `dir`/data where aws-g6e.xlarge offers on_demand and
/// reserved_1y and aws-g6.xlarge on_demand only (whatever the shipped catalog says).
std::filesystem::path catalog_with_controlled_offers(const TempDir& dir) {
  const std::filesystem::path data = dir.path() / "data";
  std::filesystem::copy(LLMCAP_DATA_DIR, data, std::filesystem::copy_options::recursive);
  const std::filesystem::path file = data / "instances/instances.json";
  json doc = json::parse(std::ifstream(file));
  for (json& inst : doc.at("instances")) {
    if (inst.at("id") == "aws-g6e.xlarge") {
      inst["prices"] = {
          {"reserved_1y", {{"usd_per_hour", 1.0}, {"source", "test"}, {"as_of", "2026-01-01"}}}};
    } else if (inst.at("id") == "aws-g6.xlarge") {
      inst.erase("prices");
    }
  }
  std::ofstream(file) << doc.dump(2);
  return data;
}

std::string scenario(const TempDir& dir, const std::string& price_model,
                     const std::string& candidates) {
  const std::string test_data = LLMCAP_TEST_DATA_DIR;
  return dir
      .write("s.json", R"({"name": "price-model", "model": ")" + std::string(LLMCAP_DATA_DIR) +
                           R"(/models/llama-3.1-8b.json",
          "workload": {"kind": "trace", "path": ")" +
                           test_data +
                           R"(/conv_model300.csv"},
          "slo": {"ttft_p99_s": 2.0, "tpot_p99_s": 0.08},
          "candidates": )" +
                           candidates + R"(, "seed": 1, "tco": {"price_model": ")" + price_model +
                           R"("}})")
      .string();
}

TEST(CliPlanPriceModel, TypesWithoutItAreListedAndLeftOutOfTheTco) {
  TempDir dir;
  const auto data = catalog_with_controlled_offers(dir);
  const auto json_path = dir.path() / "plan.json";
  const CliRun r = run_cli(
      {"plan", scenario(dir, "reserved_1y", R"(["aws-g6e.xlarge", "aws-g6.xlarge"])"), "--data-dir",
       data.string(), "--json", json_path.string(), "--no-analysis", "--quiet"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Not offered under reserved_1y (no TCO; left out of the "
                               "cheapest):\n  aws-g6.xlarge (offers: on_demand)\n"));
  EXPECT_THAT(r.out, HasSubstr("Cheapest under reserved_1y: "));
  EXPECT_THAT(r.out, HasSubstr(" x aws-g6e.xlarge, USD "));
  EXPECT_THAT(r.out, Not(HasSubstr("aws-g6.xlarge (reserved_1y)")));

  const json doc = json::parse(std::ifstream(json_path));
  EXPECT_EQ(doc.at("tco").at("price_model_not_offered"),
            json::parse(R"([{"instance_type": "aws-g6.xlarge", "offers": "on_demand"}])"));
  for (const json& row : doc.at("results")) {
    if (row.at("instance_type") == "aws-g6.xlarge") {
      EXPECT_TRUE(row.at("tco").is_null());
      EXPECT_EQ(row.at("tco_not_offered"),
                "\"aws-g6.xlarge\" offers no \"reserved_1y\" price (it offers: on_demand)");
    } else {
      EXPECT_EQ(row.at("tco").at("price_model"), "reserved_1y");
    }
  }
}

TEST(CliPlanPriceModel, NoCandidateOfferingItIsRefusedNamingEach) {
  TempDir dir;
  const auto data = catalog_with_controlled_offers(dir);
  const std::string s = scenario(dir, "reserved_3y", R"(["aws-g6.xlarge"])");
  const CliRun r = run_cli({"plan", s, "--data-dir", data.string(), "--quiet"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr(s + ": field \"tco.price_model\": no instance type the scenario "
                                   "costs offers a \"reserved_3y\" price in "
                                   "instances/instances.json: \"aws-g6.xlarge\" offers on_demand"));
}

}  // namespace
}  // namespace llmcap::cli
