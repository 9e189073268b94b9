#include "app/plan_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "app/answer_json.h"
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

namespace llmcap::app {
namespace {

TEST(PlanRun, TheDocumentsAnswerReadsBackAsThePlansAnswer) {
  const plan::Scenario scenario = plan::load_scenario(kScenario, LLMCAP_DATA_DIR);
  const model::Catalog catalog = model::Catalog::load(LLMCAP_DATA_DIR);
  PlanRunOptions options;
  options.plan.num_threads = 1;
  const PlanRun run = make_plan_run(scenario, catalog, options);
  ASSERT_TRUE(run.answer.feasible);
  const plan::Answer back = answer_from_json(run.document.at("answer"));
  EXPECT_EQ(back.headline, run.answer.headline);
  EXPECT_EQ(back.recommended.instance_type, run.answer.recommended.instance_type);
  EXPECT_EQ(back.recommended.num_instances, run.answer.recommended.num_instances);
  EXPECT_EQ(back.recommended.configuration, run.answer.recommended.configuration);
  EXPECT_EQ(back.recommended.price_model, run.answer.recommended.price_model);
  EXPECT_DOUBLE_EQ(back.recommended.cost_per_hour, run.answer.recommended.cost_per_hour);
  EXPECT_DOUBLE_EQ(back.cost_per_month, run.answer.cost_per_month);
  EXPECT_EQ(back.has_range, run.answer.has_range);
  EXPECT_DOUBLE_EQ(back.cost_per_hour_low, run.answer.cost_per_hour_low);
  EXPECT_EQ(back.binding_constraint, run.answer.binding_constraint);
  EXPECT_EQ(back.other_kind_text, run.answer.other_kind_text);
  EXPECT_EQ(back.why_not, run.answer.why_not);
  EXPECT_EQ(back.runner_up.has_value(), run.answer.runner_up.has_value());
  // A document of another shape throws (the GUI then leaves its card empty).
  EXPECT_THROW(answer_from_json(nlohmann::json::object()), nlohmann::json::exception);
}

}  // namespace
}  // namespace llmcap::app

namespace llmcap::app {
namespace {

// With a configuration search, the rows are each type's cheapest searched configuration: the
// table, the document's results and the answer quote the same fleet.
TEST(PlanRun, WithASearchEachRowIsItsTypesCheapestConfiguration) {
  plan::Scenario scenario = plan::load_scenario(kScenario, LLMCAP_DATA_DIR);
  scenario.search.enabled = true;
  scenario.search.weight_formats = {model::WeightFormat::kBf16, model::WeightFormat::kInt8};
  scenario.search.max_rate = false;
  const model::Catalog catalog = model::Catalog::load(LLMCAP_DATA_DIR);
  PlanRunOptions options;
  options.plan.num_threads = 1;
  const PlanRun run = make_plan_run(scenario, catalog, options);
  ASSERT_TRUE(run.analysis.has_value());
  ASSERT_FALSE(run.analysis->search_best.empty());
  for (const plan::PlanRow& best : run.analysis->search_best) {
    bool found = false;
    for (size_t i = 0; i < run.result.rows.size(); ++i) {
      const plan::PlanRow& row = run.result.rows[i];
      if (row.instance_type != best.instance_type) continue;
      found = true;
      EXPECT_EQ(row.configuration, best.configuration);
      EXPECT_EQ(row.num_instances, best.num_instances);
      EXPECT_EQ(run.document.at("results")[i].at("configuration"), best.configuration);
      EXPECT_EQ(run.document.at("results")[i].at("num_instances"), best.num_instances);
    }
    EXPECT_TRUE(found) << best.instance_type;
  }
  // The answer is one of those rows, at its row's cost.
  ASSERT_TRUE(run.answer.feasible);
  bool answered = false;
  for (const plan::PlanRow& row : run.result.rows) {
    if (row.instance_type != run.answer.recommended.instance_type) continue;
    answered = true;
    EXPECT_EQ(row.configuration, run.answer.recommended.configuration);
    EXPECT_EQ(row.num_instances, run.answer.recommended.num_instances);
    EXPECT_NEAR(row.usd_per_hour, run.answer.recommended.cost_per_hour, 0.005);
  }
  EXPECT_TRUE(answered);
}

}  // namespace
}  // namespace llmcap::app
