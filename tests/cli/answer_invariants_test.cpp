// Invariants of a plan run over every shipped scenario (issue 30, item 2): the figures the CLI,
// the run document, the answer and the report print agree with each other.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "app/plan_run.h"
#include "base/text.h"
#include "cli/plan_output.h"
#include "plan/scenario.h"
#include "report/report.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using ::testing::HasSubstr;

constexpr double kCent = 0.005;               // "agree to the cent"
constexpr double kRelativeEqual = 1e-9;       // one figure computed once, copied
constexpr double kRateBisectionSlack = 1e-9;  // rate x count >= load, exactly by construction

std::vector<std::string> shipped_scenarios() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(testing::data_dir() / "scenarios")) {
    if (e.path().extension() == ".json") names.push_back(e.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

class ShippedScenario : public ::testing::TestWithParam<std::string> {
 protected:
  static void SetUpTestSuite() {
    catalog_ = new model::Catalog(model::Catalog::load(testing::data_dir()));
  }
  static void TearDownTestSuite() {
    delete catalog_;
    catalog_ = nullptr;
  }
  static model::Catalog* catalog_;
};
model::Catalog* ShippedScenario::catalog_ = nullptr;

TEST_P(ShippedScenario, PlanFiguresAgreeEverywhere) {
  const plan::Scenario scenario =
      plan::load_scenario(testing::data_dir() / "scenarios" / GetParam(), testing::data_dir());
  app::PlanRunOptions options;
  options.plan.num_threads = 2;
  const app::PlanRun run = app::make_plan_run(scenario, *catalog_, options);
  const plan::PlanResult& result = run.result;
  const plan::WorkloadSummary& w = result.workload;
  const bool open_loop = w.num_requests > 0 && w.span_s > 0;
  const double offered_requests_per_s =
      open_loop ? static_cast<double>(w.num_requests) / w.span_s : 0;

  // Rate x count covers the load: what one instance of the planned fleet sustains, times its
  // size, is at least the offered rate.
  ASSERT_TRUE(run.analysis.has_value());
  for (const plan::SearchRow& s : run.analysis->search) {
    if (!open_loop || s.max_requests_per_s_per_instance <= 0) continue;
    EXPECT_GE(s.max_requests_per_s_per_instance * static_cast<double>(s.num_instances),
              offered_requests_per_s * (1 - kRateBisectionSlack))
        << s.instance_type << ": " << s.max_requests_per_s_per_instance << " x " << s.num_instances;
  }

  for (size_t i = 0; i < result.rows.size(); ++i) {
    const plan::PlanRow& row = result.rows[i];
    if (!row.feasible) continue;
    const plan::TcoRow& t = run.tco[i];
    // Billed instances equal planned ones when the load is flat (no autoscaling, no spares).
    if (!t.autoscaled && !t.spot) {
      EXPECT_EQ(t.num_instances_billed, row.num_instances) << row.instance_type;
    }
    // One cost per row: the table's, the document's and the TCO's are the same figures.
    EXPECT_NEAR(row.usd_per_million_output_tokens, t.usd_per_million_output_tokens,
                kRelativeEqual * t.usd_per_million_output_tokens)
        << row.instance_type;
    EXPECT_NEAR(row.usd_per_hour, t.usd_per_hour, kRelativeEqual * t.usd_per_hour);
    const nlohmann::json& doc_row = run.document["results"][i];
    EXPECT_NEAR(doc_row["usd_per_million_output_tokens"].get<double>(),
                doc_row["tco"]["usd_per_million_output_tokens"].get<double>(),
                kRelativeEqual * t.usd_per_million_output_tokens);
  }

  // The answer is the cheapest option under the scenario's price model, quoted to the cent as
  // its TCO row says, and the table, TCO lines and report print the same amount.
  const plan::Answer& a = run.answer;
  std::ostringstream text;
  print_answer(a, text);
  print_plan_table(scenario, result, text);
  print_run_summary(run, text);
  const std::string cli = text.str();
  const nlohmann::json rep =
      nlohmann::json::parse(report::render(run.document, report::Format::kJson));
  const nlohmann::json& page_one = rep.at("sections").at(0);
  if (a.feasible) {
    const bool searched = a.recommended.from_search;
    const std::vector<plan::PlanRow>& rows = searched ? run.analysis->search_best : result.rows;
    const std::vector<plan::TcoRow>& tcos = searched ? run.search_tco : run.tco;
    const plan::TcoRow* source = nullptr;
    double cheapest_annual_usd = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!rows[i].feasible || tcos[i].num_instances == 0) continue;
      if (source == nullptr || tcos[i].annual_usd < cheapest_annual_usd) {
        cheapest_annual_usd = tcos[i].annual_usd;
      }
      if (rows[i].instance_type == a.recommended.instance_type &&
          rows[i].configuration == a.recommended.configuration) {
        source = &tcos[i];
      }
    }
    ASSERT_NE(source, nullptr) << a.headline;
    EXPECT_NEAR(source->annual_usd, cheapest_annual_usd, kCent);
    const double per_hour = source->converted ? source->in_currency.per_hour : source->usd_per_hour;
    const double per_year = source->converted ? source->in_currency.per_year : source->annual_usd;
    EXPECT_NEAR(a.recommended.cost_per_hour, per_hour, kCent);
    EXPECT_NEAR(a.recommended.cost_per_year, per_year, kCent);
    EXPECT_EQ(a.currency, scenario.tco.currency);
    const std::string hourly = base::money(a.currency, a.recommended.cost_per_hour);
    EXPECT_THAT(cli, HasSubstr("cost         " + hourly + "/hour"));
    EXPECT_THAT(a.headline, HasSubstr(hourly + "/hour"));
    EXPECT_EQ(page_one.at("id"), "answer");
    bool found = false;
    for (const nlohmann::json& row : page_one.at("blocks").at(1).at("rows")) {
      if (row.at("item") == "Cost per hour") {
        EXPECT_EQ(row.at("value").get<std::string>(), hourly);
        found = true;
      }
    }
    EXPECT_TRUE(found);
    if (!searched && a.currency == "USD") {
      // The TCO line of the recommended row prints the same hourly amount.
      EXPECT_THAT(cli, HasSubstr(a.recommended.instance_type + " (" + source->price_model +
                                 "): " + std::to_string(source->num_instances_billed) +
                                 " billed, " + hourly + "/hour"));
    }
  }

  // Statements about a device kind only about kinds that were candidates.
  const auto has_kind = [&](model::DeviceKind kind) {
    return std::any_of(result.rows.begin(), result.rows.end(), [&](const plan::PlanRow& r) {
      return r.groups.empty() && r.device_kind == kind;
    });
  };
  for (const auto& [kind, word] : {std::pair{model::DeviceKind::kCpu, std::string("CPU")},
                                   std::pair{model::DeviceKind::kGpu, std::string("GPU")}}) {
    if (has_kind(kind)) continue;
    EXPECT_THAT(cli, ::testing::Not(HasSubstr("No " + word + " instance type")));
    EXPECT_THAT(cli, ::testing::Not(HasSubstr("cheapest " + word)));
    const std::string lower = word == "CPU" ? "cpu" : "gpu";
    EXPECT_NE(a.other_kind, lower);
  }
}

INSTANTIATE_TEST_SUITE_P(Every, ShippedScenario, ::testing::ValuesIn(shipped_scenarios()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.size() - 5);
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace llmcap::cli
