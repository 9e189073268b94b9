#include "app/plan_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "app/published.h"
#include "model/hardware.h"
#include "plan/scenario.h"

namespace llmcap::app {
namespace {

const std::string kScenario = std::string(LLMCAP_CLI_TEST_DATA_DIR) + "/small.json";

TEST(PlanRun, DocumentHasTheFormatKeysAndEverySourceWithItsDate) {
  const plan::Scenario scenario = plan::load_scenario(kScenario);
  const model::Catalog catalog = model::Catalog::load(LLMCAP_DATA_DIR);
  PlanRunOptions options;
  options.plan.num_threads = 1;
  const PlanRun run = make_plan_run(scenario, catalog, options);
  const nlohmann::json& doc = run.document;
  EXPECT_EQ(doc.at("format"), "llmcap-run");
  EXPECT_EQ(doc.at("schema_version"), kRunDocumentVersion);
  EXPECT_EQ(doc.at("kind"), "plan");
  EXPECT_TRUE(doc.at("calibration").is_null());  // no profile given
  ASSERT_EQ(doc.at("results").size(), run.result.rows.size());
  // Every instance type of the plan, and its hardware, is listed once with source and date.
  std::set<std::string> listed;
  for (const auto& s : doc.at("sources")) {
    EXPECT_FALSE(s.at("source").get<std::string>().empty()) << s.dump();
    EXPECT_FALSE(s.at("as_of").get<std::string>().empty()) << s.dump();
    EXPECT_FALSE(s.at("figures").get<std::string>().empty()) << s.dump();
    if (s.at("kind") == "instance") {
      EXPECT_TRUE(listed.insert(s.at("id").get<std::string>()).second) << "twice: " << s.dump();
    }
  }
  for (const plan::PlanRow& row : run.result.rows) {
    EXPECT_EQ(listed.count(row.instance_type), 1u) << row.instance_type;
    const model::InstanceType& inst = catalog.instance(row.instance_type, "test");
    for (const std::string& hw : {inst.cpu_id, inst.gpu_id}) {
      if (hw.empty()) continue;
      bool found = false;
      for (const auto& s : doc.at("sources")) found = found || s.at("id") == hw;
      EXPECT_TRUE(found) << hw;
    }
  }
}

TEST(PlanRun, AnEnginesMeasuredErrorWidensTheUncertaintyAndIsNamed) {
  plan::Scenario scenario = plan::load_scenario(kScenario);
  scenario.gpu_engine = "vllm";
  scenario.cpu_engine = "vllm-cpu";
  const model::Catalog catalog = model::Catalog::load(LLMCAP_DATA_DIR);
  PlanRunOptions options;
  options.plan.num_threads = 1;
  const PlanRun run = make_plan_run(scenario, catalog, options);
  const nlohmann::json& u = run.document.at("analysis").at("uncertainty");
  ASSERT_FALSE(u.empty());
  const plan::MeasuredStepTimeErrors measured =
      published_step_time_errors(catalog, LLMCAP_DATA_DIR);
  for (const auto& row : u) {
    const std::string source = row.at("step_time_error_source");
    EXPECT_THAT(source, ::testing::HasSubstr("held-out TPOT and TTFT rows of the published"))
        << row.dump();
    const bool gpu = row.at("instance_type") == "aws-g6e.xlarge";
    const auto& m = measured.at({gpu ? "gpu" : "cpu", gpu ? "vllm" : "vllm-cpu"});
    EXPECT_DOUBLE_EQ(row.at("step_time_error_fraction").get<double>(),
                     std::min(0.9, m.p95_abs_error));
  }
}

}  // namespace
}  // namespace llmcap::app
