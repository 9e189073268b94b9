#include "cli/plan_output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "test_util.h"

namespace llmcap::cli {
namespace {

using ::testing::HasSubstr;

plan::PlanResult two_rows() {
  plan::PlanResult r;
  r.model_id = "m";
  plan::PlanRow ok;
  ok.instance_type = "gpu-a";
  ok.device_kind = model::DeviceKind::kGpu;
  ok.feasible = true;
  ok.num_instances = 3;
  ok.usd_per_hour = 6.0;
  ok.annual_usd = 52560.0;
  ok.usd_per_million_output_tokens = 1.25;
  ok.metrics.ttft.p50_s = 0.1;
  ok.metrics.ttft.p99_s = 0.9;
  ok.metrics.tpot.p50_s = 0.02;
  ok.metrics.tpot.p99_s = 0.04;
  plan::PlanRow bad;
  bad.instance_type = "cpu-b";
  bad.device_kind = model::DeviceKind::kCpu;
  bad.infeasible_reason = "TPOT floor at batch 1 is 0.21 s > SLO 0.05 s, \"quoted\"";
  r.rows = {bad, ok};
  return r;
}

TEST(PlanToJson, HasTheDocumentedKeysAndNullsForInfeasibleRows) {
  plan::Scenario s;
  s.name = "x";
  const auto doc = nlohmann::json::parse(plan_to_json(s, two_rows()));
  const auto& bad = doc.at("results").at(0);
  EXPECT_FALSE(bad.at("feasible").get<bool>());
  EXPECT_TRUE(bad.at("num_instances").is_null());
  EXPECT_THAT(bad.at("infeasible_reason").get<std::string>(), HasSubstr("0.21 s"));
  const auto& ok = doc.at("results").at(1);
  EXPECT_EQ(ok.at("num_instances").get<int64_t>(), 3);
  EXPECT_DOUBLE_EQ(ok.at("usd_per_hour").get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(ok.at("ttft_p99_s").get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(ok.at("tpot_p50_s").get<double>(), 0.02);
  EXPECT_TRUE(ok.at("infeasible_reason").is_null());
}

TEST(PlanToCsv, QuotesReasonsAndKeepsOneLinePerRow) {
  const std::string csv = plan_to_csv(two_rows());
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_THAT(csv, HasSubstr("\"TPOT floor at batch 1 is 0.21 s > SLO 0.05 s, \"\"quoted\"\"\""));
  EXPECT_THAT(csv, HasSubstr("gpu-a,gpu,true,3,6,1.25,52560,0.1,0.9,0.02,0.04,"));
}

TEST(PrintPlanTable, ListsFeasibleRowsFirstAndNamesTheCheapest) {
  plan::Scenario s;
  s.name = "x";
  std::ostringstream out;
  print_plan_table(s, two_rows(), out);
  const std::string text = out.str();
  EXPECT_LT(text.find("gpu-a"), text.find("cpu-b"));
  EXPECT_THAT(text, HasSubstr("infeasible: TPOT floor at batch 1 is 0.21 s"));
  EXPECT_THAT(text, HasSubstr("Cheapest gpu fleet: 3 x gpu-a"));
  EXPECT_THAT(text, HasSubstr("52,560"));
  EXPECT_THAT(text, HasSubstr("No CPU instance type meets the SLO"));
}

TEST(WriteFileAtomically, WritesTheContentsAndLeavesNoTemporaryFile) {
  llmcap::testing::TempDir dir;
  const auto path = dir.path() / "out.txt";
  write_file_atomically(path, "hello\n");
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line, "hello");
  int num_files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path()))
    ++num_files;
  EXPECT_EQ(num_files, 1);
}

}  // namespace
}  // namespace llmcap::cli
