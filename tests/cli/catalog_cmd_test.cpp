// `llmcap catalog list|check|import` (cli/catalog_cmd.h): output, exit codes, and the
// import's file handling (never over its input unless --in-place, nothing half-written).
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

const std::string kData = LLMCAP_DATA_DIR;
const std::string kOffer =
    std::string(LLMCAP_SOURCE_DIR) + "/tests/app/data/price_lists/aws-offer-file.json";

TEST(CliCatalog, ListFiltersByProviderAndKind) {
  const CliRun r =
      run_cli({"catalog", "list", "--provider", "aws", "--kind", "gpu", "--data-dir", kData});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("aws-g6e.xlarge"));
  EXPECT_THAT(r.out, HasSubstr("1x L40S"));  // the hardware in its essentials
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("aws-m7i.8xlarge")));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("azure-")));
}

TEST(CliCatalog, CheckOfTheShippedCatalogFlagsNothing) {
  const CliRun r = run_cli({"catalog", "check", "--today", "2026-12-02", "--data-dir", kData});
  EXPECT_EQ(r.code, kExitOk) << r.out;
  EXPECT_THAT(r.out, HasSubstr("prices checked (today 2026-12-02, stale after 180 days): "
                               "nothing flagged"));
}

TEST(CliCatalog, CheckExitsOneWhenAnythingIsFlagged) {
  const CliRun r = run_cli({"catalog", "check", "--today", "2028-01-01", "--data-dir", kData});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.out, HasSubstr("aws-g6e.xlarge on_demand: stale: as_of 2026-07-20 is "));
}

TEST(CliCatalogBadInput, BadOptionsExitTwo) {
  CliRun r = run_cli({"catalog", "check", "--today", "soon", "--data-dir", kData});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("--today \"soon\": expected a date YYYY-MM-DD"));
  r = run_cli({"catalog", "list", "--kind", "tpu", "--data-dir", kData});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: --kind \"tpu\": expected \"cpu\" or \"gpu\"\n");
  r = run_cli({"catalog", "import", kOffer, "--data-dir", kData});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("expected exactly one of --output FILE and --in-place"));
  r = run_cli({"catalog", "check", "--max-age-days", "-1", "--data-dir", kData});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: --max-age-days -1: expected a number of days >= 0\n");
}

/// A catalog folder in `dir` whose only AWS type is t.xlarge (the fixture's).
std::filesystem::path small_catalog(const TempDir& dir) {
  const auto data = dir.path() / "data";
  std::filesystem::copy(kData, data, std::filesystem::copy_options::recursive);
  const auto file = data / "instances/instances.json";
  nlohmann::ordered_json doc = nlohmann::ordered_json::parse(std::ifstream(file));
  nlohmann::ordered_json one = doc["instances"][0];
  one["id"] = "aws-t.xlarge";
  one["name"] = "t.xlarge";
  doc["instances"] = nlohmann::ordered_json::array({one});
  std::ofstream(file) << doc.dump(2);
  std::filesystem::remove(data / "tco/owned_hardware.json");  // it names shipped types
  return data;
}

TEST(CliCatalog, ImportWritesTheMergedCatalogAndReportsWhatChanged) {
  TempDir dir;
  const auto data = small_catalog(dir);
  const auto out_path = dir.path() / "merged.json";
  const CliRun r = run_cli(
      {"catalog", "import", kOffer, "--output", out_path.string(), "--data-dir", data.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("aws-offer-file, 4 prices (as of 2026-07-20)"));
  EXPECT_THAT(r.out, HasSubstr("  aws-t.xlarge on_demand: USD 1.0060 -> USD 2.5000\n"));
  EXPECT_THAT(r.out, HasSubstr("  aws-t.xlarge reserved_1y: new -> USD 1.6000\n"));
  EXPECT_THAT(r.out, HasSubstr("1 instance types of the list are not in the catalog"));
  EXPECT_THAT(r.out, HasSubstr("new.48xlarge (us-east-1)"));
  const json merged = json::parse(std::ifstream(out_path));
  EXPECT_DOUBLE_EQ(merged["instances"][0]["usd_per_hour"].get<double>(), 2.5);
  // The catalog itself is untouched.
  const json before = json::parse(std::ifstream(data / "instances/instances.json"));
  EXPECT_DOUBLE_EQ(before["instances"][0]["usd_per_hour"].get<double>(), 1.006);
}

TEST(CliCatalogBadInput, ImportRefusesToWriteOverItsInputOrACatalogFile) {
  TempDir dir;
  const auto data = small_catalog(dir);
  const std::string catalog_file = (data / "instances/instances.json").string();
  const CliRun r =
      run_cli({"catalog", "import", kOffer, "--output", catalog_file, "--data-dir", data.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("--output " + catalog_file + ": is the input file of --data-dir"));
}

TEST(CliCatalogBadInput, UnreadablePriceListWritesNothing) {
  TempDir dir;
  const auto data = small_catalog(dir);
  const auto out_path = dir.path() / "merged.json";
  const CliRun r = run_cli({"catalog", "import", (dir.path() / "none.json").string(), "--output",
                            out_path.string(), "--data-dir", data.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("none.json: cannot open file"));
  EXPECT_FALSE(std::filesystem::exists(out_path));
}

TEST(CliCatalog, ImportInPlaceRewritesTheCatalogWhichStillLoads) {
  TempDir dir;
  const auto data = small_catalog(dir);
  const CliRun r =
      run_cli({"catalog", "import", kOffer, "--in-place", "--data-dir", data.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const json after = json::parse(std::ifstream(data / "instances/instances.json"));
  EXPECT_DOUBLE_EQ(after["instances"][0]["usd_per_hour"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ(after["instances"][0]["prices"]["reserved_3y"]["usd_per_hour"].get<double>(),
                   1.1);
  // The rewritten catalog is checked like the shipped one: its new prices are AWS's own.
  const CliRun check =
      run_cli({"catalog", "check", "--today", "2026-08-01", "--data-dir", data.string()});
  EXPECT_EQ(check.code, kExitOk) << check.out;
}

}  // namespace
}  // namespace llmcap::cli
