// GUI tests of issue 30, item 8, offscreen: the fleet over the day, the SLO line on the latency
// CDF, bars sorted by cost, XLSX export, the live Runs tab and the Chinese translation.
#include <gtest/gtest.h>

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QComboBox>
#include <QCoreApplication>
#include <QEventLoop>
#include <QHorizontalBarSeries>
#include <QStandardItemModel>
#include <QTimer>
#include <cmath>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>

#include "gui/charts_view.h"
#include "gui/language.h"
#include "gui/main_window.h"
#include "gui/results_model.h"
#include "gui/runs_view.h"
#include "gui/seams.h"
#include "test_util.h"

namespace llmcap::gui {
namespace {

using llmcap::testing::data_dir;
using llmcap::testing::read_text;
using llmcap::testing::test_data;

constexpr int kRunTimeoutMs = 120000;
constexpr size_t kHoursPerDay = 24;

bool wait_for_run(MainWindow& window, bool* ok) {
  QEventLoop loop;
  bool finished = false;
  const auto c = QObject::connect(&window, &MainWindow::runFinished, &loop, [&](bool run_ok, bool) {
    finished = true;
    *ok = run_ok;
    loop.quit();
  });
  QTimer::singleShot(kRunTimeoutMs, &loop, &QEventLoop::quit);
  loop.exec();
  QObject::disconnect(c);
  return finished;
}

class GuiItems : public ::testing::Test {
 protected:
  void SetUp() override {
    language_ = std::make_unique<Language>(nullptr);
    MainWindow::Options o;
    o.data_dir = data_dir();
    o.num_threads = 2;
    o.store_runs = true;  // $LLMCAP_DB points at a scratch file (gui_test_main.cpp)
    window_ = std::make_unique<MainWindow>(o, language_.get());
    window_->resize(1366, 768);
    window_->show();
    ASSERT_TRUE(window_->open_scenario(QString::fromStdString(test_data("small.json").string())));
  }
  void TearDown() override {
    window_.reset();
    language_.reset();
  }
  void what_if() {
    window_->set_load_multiplier(1.0);
    bool ok = false;
    ASSERT_TRUE(wait_for_run(*window_, &ok));
    ASSERT_TRUE(ok) << window_->status_text().toStdString();
  }
  void full_run() {
    window_->run_full(/*analysis=*/false);
    bool ok = false;
    ASSERT_TRUE(wait_for_run(*window_, &ok));
    ASSERT_TRUE(ok) << window_->status_text().toStdString();
  }
  /// The feasible rows' fleet sizes by type.
  std::map<std::string, int64_t> feasible_sizes() const {
    std::map<std::string, int64_t> out;
    for (const ResultRow& r : window_->results()->rows()) {
      if (r.feasible) out[r.instance_type] = r.num_instances;
    }
    return out;
  }
  void expect_fleet_over_day_of_every_feasible_type() {
    PointsModel* fleet = window_->charts()->fleet_over_day();
    const std::map<std::string, int64_t> sizes = feasible_sizes();
    ASSERT_FALSE(sizes.empty());
    EXPECT_EQ(fleet->series().size(), static_cast<int>(sizes.size()));
    for (const auto& [type, n] : sizes) {
      const auto points = fleet->points(QString::fromStdString(type));
      ASSERT_EQ(points.size(), kHoursPerDay) << type;
      // A replay shorter than two hours is one load all day: the planned fleet every hour.
      for (const auto& [hour, count] : points) EXPECT_EQ(count, static_cast<double>(n)) << type;
    }
  }
  std::unique_ptr<Language> language_;
  std::unique_ptr<MainWindow> window_;
};

TEST_F(GuiItems, AWhatIfFillsTheFleetOverTheDay) {
  what_if();
  expect_fleet_over_day_of_every_feasible_type();
}

TEST_F(GuiItems, AFullRunFillsTheFleetOverTheDayFromItsDocument) {
  full_run();
  const nlohmann::json& doc = *window_->last_document();
  ASSERT_TRUE(doc["analysis"].contains("fleet_over_day"));
  for (const nlohmann::json& f : doc["analysis"]["fleet_over_day"]) {
    EXPECT_EQ(f["origin"], "flat");
    EXPECT_EQ(f["hourly_instances"].size(), kHoursPerDay);
  }
  expect_fleet_over_day_of_every_feasible_type();
}

TEST_F(GuiItems, TheLatencyCdfDrawsTheP99SloOfTheMetricShown) {
  what_if();
  // The scenario's SLO: p99 TTFT 2 s (the CDF shows TTFT first), p99 TPOT 0.05 s.
  EXPECT_EQ(window_->charts()->slo_line_s(), 2.0);
  window_->charts()->set_slo(0.0, 0.0);  // per-class SLOs: no line
  EXPECT_EQ(window_->charts()->slo_line_s(), 0.0);
}

TEST_F(GuiItems, BarsAreSortedCheapestFirstAndInfeasibleLast) {
  what_if();
  auto* series =
      qobject_cast<QHorizontalBarSeries*>(window_->charts()->chart(0)->series().value(0));
  ASSERT_NE(series, nullptr);
  QBarSet* set = series->barSets().value(0);
  ASSERT_NE(set, nullptr);
  QAbstractItemModel* order = window_->charts()->bar_order();
  ASSERT_EQ(set->count(), 3);
  double previous = 0;
  bool seen_infeasible = false;
  int num_infeasible = 0;
  for (int i = order->rowCount() - 1; i >= 0; --i) {  // top down
    const std::string type =
        order->index(i, ResultsModel::kInstance).data().toString().toStdString();
    const ResultRow& r = window_->results()->rows()[window_->results()->find(type)];
    if (!r.feasible) {
      seen_infeasible = true;
      ++num_infeasible;
      continue;
    }
    EXPECT_FALSE(seen_infeasible) << type << " comes after an infeasible type";
    EXPECT_GE(set->at(i), previous) << type;
    EXPECT_DOUBLE_EQ(set->at(i), r.usd_per_hour) << type;
    previous = set->at(i);
  }
  EXPECT_EQ(num_infeasible, 1);  // aws-m7i.8xlarge, ruled out by its floors
  // The category labels follow the bars.
  auto* axis =
      qobject_cast<QBarCategoryAxis*>(window_->charts()->chart(0)->axes(Qt::Vertical).value(0));
  ASSERT_NE(axis, nullptr);
  EXPECT_EQ(axis->categories().first(), QStringLiteral("aws-m7i.8xlarge ✗"));  // at the bottom
}

TEST_F(GuiItems, ExportWritesAValidXlsxWorkbook) {
  full_run();
  const auto dir = llmcap::testing::fresh_temp_dir();
  const QString path = QString::fromStdString((dir / "report.xlsx").string());
  ASSERT_TRUE(window_->export_report(path, "xlsx")) << window_->status_text().toStdString();
  const std::string bytes = read_text(path.toStdString());
  ASSERT_GT(bytes.size(), 1000u);
  EXPECT_EQ(bytes.substr(0, 4), std::string("PK\x03\x04", 4));  // a ZIP container
  // The parts an Office Open XML workbook needs (names are stored uncompressed).
  for (const char* part : {"[Content_Types].xml", "xl/workbook.xml", "xl/worksheets/sheet1.xml"}) {
    EXPECT_NE(bytes.find(part), std::string::npos) << part;
  }
}

TEST_F(GuiItems, TheRunsListGrowsWhenAnotherProcessStoresARun) {
  window_->runs()->refresh();
  const int before = window_->runs()->runs_model()->rowCount();
  EXPECT_FALSE(window_->runs()->check_for_changes());  // nothing new
  // As `llmcap plan` would, through the store, not through this window.
  const nlohmann::json doc = {
      {"schema_version", 1}, {"kind", "plan"}, {"results", nlohmann::json::array()}};
  store_plan_document(doc, "{}", "stored elsewhere", "llmcap plan");
  EXPECT_TRUE(window_->runs()->check_for_changes());
  ASSERT_EQ(window_->runs()->runs_model()->rowCount(), before + 1);
  EXPECT_EQ(window_->runs()->runs_model()->index(0, RunsView::kName).data().toString(),
            QStringLiteral("stored elsewhere"));
}

TEST_F(GuiItems, TheRunsListGrowsAfterAFullRunOfThisWindow) {
  window_->runs()->refresh();
  const int before = window_->runs()->runs_model()->rowCount();
  full_run();
  EXPECT_EQ(window_->runs()->runs_model()->rowCount(), before + 1);
}

TEST_F(GuiItems, EachWhatIfIsKeptUnderANameAndReopens) {
  what_if();
  const std::map<std::string, int64_t> at_one = feasible_sizes();
  window_->set_load_multiplier(3.0);
  bool ok = false;
  ASSERT_TRUE(wait_for_run(*window_, &ok));
  ASSERT_TRUE(ok) << window_->status_text().toStdString();
  const std::map<std::string, int64_t> at_three = feasible_sizes();
  ASSERT_NE(at_one, at_three);  // the load changed some fleet
  QStandardItemModel* kept = window_->runs()->what_ifs_model();
  ASSERT_EQ(kept->rowCount(), 2);
  EXPECT_EQ(kept->index(0, RunsView::kWhatIfName).data().toString(), QStringLiteral("load 3.00×"));
  EXPECT_EQ(kept->index(1, RunsView::kWhatIfName).data().toString(), QStringLiteral("as opened"));
  EXPECT_FALSE(kept->index(0, RunsView::kWhatIfAnswer).data().toString().isEmpty());
  // Reopening the first what-if puts its fleets back in the table; the export still needs a
  // full run (a what-if is not a run document).
  ASSERT_TRUE(window_->runs()->open_what_if(1));
  EXPECT_EQ(feasible_sizes(), at_one);
  EXPECT_EQ(window_->last_document(), nullptr);
  // Side by side: one row per instance type, each what-if's fleet.
  ASSERT_TRUE(window_->runs()->compare_what_ifs(1, 0));
  QStandardItemModel* cmp = window_->runs()->compare_model();
  ASSERT_EQ(cmp->rowCount(), 3);
  for (int r = 0; r < cmp->rowCount(); ++r) {
    const std::string type = cmp->index(r, 0).data().toString().toStdString();
    if (at_one.count(type) == 0) continue;
    EXPECT_EQ(cmp->index(r, 1).data().toLongLong(), at_one.at(type)) << type;
    EXPECT_EQ(cmp->index(r, 3).data().toLongLong(), at_three.at(type)) << type;
  }
  EXPECT_EQ(cmp->headerData(1, Qt::Horizontal).toString(), QStringLiteral("as opened: fleet"));
}

TEST_F(GuiItems, TheAnswerCardInChineseComposesThePlannersSentences) {
  what_if();
  const QString english = window_->answer_text();
  ASSERT_TRUE(language_->set("zh_CN"));
  QCoreApplication::processEvents();
  const QString chinese = window_->answer_text();
  ASSERT_TRUE(language_->set("en"));
  QCoreApplication::processEvents();
  EXPECT_EQ(window_->answer_text(), english);  // English keeps the planner's sentences
  // The binding line and the other device kind's line, from the answer's fields.
  EXPECT_NE(chinese.indexOf(QString::fromUtf8("约束：")), -1) << chinese.toStdString();
  for (const char* planner_english : {"the smallest fleet meeting the SLO", "one instance suffices",
                                      "preemption", "instance type meets the SLO", "costs"}) {
    EXPECT_EQ(chinese.indexOf(QLatin1String(planner_english)), -1)
        << planner_english << " in " << chinese.toStdString();
  }
}

TEST(GuiTranslations, SimplifiedChineseHasNoUnfinishedEntry) {
  const std::string ts =
      read_text(std::filesystem::path(LLMCAP_SOURCE_DIR) / "gui/translations/llmcap_gui_zh_CN.ts");
  ASSERT_NE(ts.find("<message"), std::string::npos);
  EXPECT_EQ(ts.find("type=\"unfinished\""), std::string::npos);
  EXPECT_EQ(ts.find("<translation></translation>"), std::string::npos);
  EXPECT_EQ(ts.find("type=\"vanished\""), std::string::npos);
}

}  // namespace
}  // namespace llmcap::gui

namespace llmcap::gui {
namespace {

// The what-ifs, each one GUI action: int4 on the CPU types only (the GPU types keep
// their format), and the answer in another currency.
TEST_F(GuiItems, TheCpuWeightFormatAndTheCurrencyAreWhatIfsOfTheirOwn) {
  what_if();
  window_->set_weight_format(QStringLiteral("cpu"), QStringLiteral("int4"));
  bool ok = false;
  ASSERT_TRUE(wait_for_run(*window_, &ok));
  ASSERT_TRUE(ok) << window_->status_text().toStdString();
  EXPECT_EQ(window_->draft().weight_format("cpu"), "int4");
  EXPECT_EQ(window_->draft().weight_format("gpu"), "bf16");
  auto* cpu_combo = window_->findChild<QComboBox*>("cpu_weight_format");
  ASSERT_NE(cpu_combo, nullptr);
  EXPECT_EQ(cpu_combo->currentData().toString(), QStringLiteral("int4"));
  QStandardItemModel* kept = window_->runs()->what_ifs_model();
  EXPECT_EQ(kept->index(0, RunsView::kWhatIfName).data().toString(),
            QStringLiteral("int4 on CPUs"));

  window_->set_currency(QStringLiteral("CNY"));
  ASSERT_TRUE(wait_for_run(*window_, &ok));
  ASSERT_TRUE(ok) << window_->status_text().toStdString();
  EXPECT_EQ(window_->draft().currency(), "CNY");
  EXPECT_TRUE(window_->answer_text().contains(QStringLiteral("CNY")))
      << window_->answer_text().toStdString();
  EXPECT_EQ(kept->index(0, RunsView::kWhatIfName).data().toString(),
            QStringLiteral("int4 on CPUs, CNY"));
}

// After a full run with a configuration search, a what-if keeps each type's searched
// configuration; changing one device kind's weight format drops that kind's only.
TEST_F(GuiItems, AWhatIfKeepsTheSearchedConfigurationOfTheKindItDoesNotChange) {
  nlohmann::json s = nlohmann::json::parse(read_text(test_data("small.json")));
  s["model"] = (data_dir() / "models" / "llama-3.1-8b.json").string();
  s["workload"]["path"] =
      (test_data("small.json").parent_path() / ".." / ".." / "cli" / "data" / "conv_model300.csv")
          .string();
  // int8 listed first: a tie in cost goes to it, so the GPU winner is int8.
  s["search"] = {{"weight_formats", {"int8", "bf16"}}, {"max_rate", false}};
  const auto dir = llmcap::testing::fresh_temp_dir();
  llmcap::testing::write_text(dir / "searched.json", s.dump(2));
  ASSERT_TRUE(window_->open_scenario(QString::fromStdString((dir / "searched.json").string())));
  window_->run_full(/*analysis=*/true);
  bool ok = false;
  ASSERT_TRUE(wait_for_run(*window_, &ok));
  ASSERT_TRUE(ok) << window_->status_text().toStdString();
  ASSERT_TRUE(window_->answer_text().contains(QStringLiteral(" int8 ")))
      << window_->answer_text().toStdString();
  // Traffic changes: the search's int8 stays.
  window_->set_load_multiplier(1.2);
  ASSERT_TRUE(wait_for_run(*window_, &ok));
  ASSERT_TRUE(ok) << window_->status_text().toStdString();
  EXPECT_TRUE(window_->answer_text().contains(QStringLiteral(" int8 ")))
      << window_->answer_text().toStdString();
  EXPECT_TRUE(window_->answer_text().contains(QStringLiteral("search chose")));
  // int4 on CPUs: the GPU types keep int8.
  window_->set_weight_format(QStringLiteral("cpu"), QStringLiteral("int4"));
  ASSERT_TRUE(wait_for_run(*window_, &ok));
  ASSERT_TRUE(ok) << window_->status_text().toStdString();
  EXPECT_TRUE(window_->answer_text().contains(QStringLiteral(" int8 ")))
      << window_->answer_text().toStdString();
  // bf16 on GPUs: asked for, so planned.
  window_->set_weight_format(QStringLiteral("gpu"), QStringLiteral("bf16"));
  ASSERT_TRUE(wait_for_run(*window_, &ok));
  ASSERT_TRUE(ok) << window_->status_text().toStdString();
  EXPECT_TRUE(window_->answer_text().contains(QStringLiteral(" bf16 ")))
      << window_->answer_text().toStdString();
  EXPECT_FALSE(window_->answer_text().contains(QStringLiteral("search chose")));
}

}  // namespace
}  // namespace llmcap::gui
