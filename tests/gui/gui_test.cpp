// GUI tests, offscreen: scenario editing, the results model and its charts, what-if runs, the
// error paths of bad input, export, runs, calibration, audit and languages.
#include <gtest/gtest.h>

#include <QAbstractButton>
#include <QApplication>
#include <QBarSet>
#include <QChart>
#include <QComboBox>
#include <QEventLoop>
#include <QHorizontalBarSeries>
#include <QLineSeries>
#include <QSlider>
#include <QSortFilterProxyModel>
#include <QTabWidget>
#include <QTimer>
#include <atomic>
#include <cmath>
#include <fstream>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>

#include "base/text.h"
#include "gui/app.h"
#include "gui/audit_view.h"
#include "gui/calibration_view.h"
#include "gui/chart_models.h"
#include "gui/charts_view.h"
#include "gui/language.h"
#include "gui/main_window.h"
#include "gui/plan_worker.h"
#include "gui/results_model.h"
#include "gui/runs_view.h"
#include "gui/scenario_draft.h"
#include "gui/scenario_panel.h"
#include "model/formats.h"
#include "plan/analysis.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "store/results_store.h"
#include "test_util.h"

namespace llmcap::gui {
namespace {

using llmcap::testing::data_dir;
using llmcap::testing::error_message;
using llmcap::testing::read_text;
using llmcap::testing::test_data;

constexpr double kTolerance = 1e-12;
constexpr int kSmallRunTimeoutMs = 120000;
constexpr int kDefaultRunTimeoutMs = 300000;

/// Waits (running the event loop) until `window` reports the end of a run; false on timeout.
bool wait_for_run(MainWindow& window, int timeout_ms, bool* ok = nullptr) {
  QEventLoop loop;
  bool finished = false;
  bool result = false;
  const auto c = QObject::connect(&window, &MainWindow::runFinished, &loop, [&](bool run_ok, bool) {
    finished = true;
    result = run_ok;
    loop.quit();
  });
  QTimer::singleShot(timeout_ms, &loop, &QEventLoop::quit);
  loop.exec();
  QObject::disconnect(c);
  if (ok != nullptr) *ok = result;
  return finished;
}

std::unique_ptr<MainWindow> make_window(Language* language,
                                        int64_t max_requests = plan::kDefaultMaxRequests) {
  MainWindow::Options o;
  o.data_dir = data_dir();
  o.num_threads = 2;
  o.max_requests = max_requests;
  o.store_runs = true;  // $LLMCAP_DB points at a scratch file (gui_test_main.cpp)
  auto w = std::make_unique<MainWindow>(o, language);
  w->resize(1400, 900);
  w->show();
  return w;
}

QString small_scenario() { return QString::fromStdString(test_data("small.json").string()); }

/// The model's figure of `type` in `column` (Qt::DisplayRole), or an invalid QVariant.
QVariant figure(ResultsModel* m, const std::string& type, int column) {
  const int row = m->find(type);
  if (row < 0) return {};
  return m->index(row, column).data();
}

TEST(ScenarioDraft, LoadMultiplierScalesTheTraceRate) {
  const ScenarioDraft d = [] {
    ScenarioDraft x = ScenarioDraft::from_file(test_data("small.json"));
    x.set_load_multiplier(2.5);
    return x;
  }();
  EXPECT_NEAR(d.effective_json()["workload"]["rate_multiplier"].get<double>(), 2.5, kTolerance);
  EXPECT_NEAR(d.json()["workload"]["rate_multiplier"].get<double>(), 1.0, kTolerance);
  EXPECT_NEAR(d.scenario().workload.rate_multiplier, 2.5, kTolerance);
}

TEST(ScenarioDraft, LoadMultiplierScalesAnArrivalRate) {
  ScenarioDraft d = ScenarioDraft::from_text(
      R"({"name": "p", "model": "m.json", "slo": {"ttft_p99_s": 1, "tpot_p99_s": 0.1},
          "workload": {"kind": "poisson", "rate_per_s": 4, "duration_s": 60,
                       "lengths_path": "l.csv"}})",
      "/tmp/p.json");
  d.set_load_multiplier(1.5);
  EXPECT_NEAR(d.scenario().workload.rate_per_s, 6.0, kTolerance);
}

TEST(ScenarioDraft, BrokenScenarioNamesTheFileAndField) {
  const std::string path = test_data("broken.json").string();
  const std::string message =
      error_message<plan::InputError>([&] { ScenarioDraft::from_file(path); });
  EXPECT_NE(message.find(path), std::string::npos) << message;
  EXPECT_NE(message.find("slo.ttft_p99_s"), std::string::npos) << message;
}

TEST(ScenarioDraft, PriceTextMustBeAPositiveNumber) {
  EXPECT_EQ(error_message<plan::InputError>(
                [] { parse_price_text("1,5x", "s.json", "aws-g6e.xlarge", "on_demand"); }),
            "s.json: field \"price_overrides.aws-g6e.xlarge.on_demand\": expected a positive "
            "number of USD per hour, got \"1,5x\"");
  EXPECT_NEAR(parse_price_text(" 2.25 ", "s.json", "a", "on_demand"), 2.25, kTolerance);
}

TEST(ScenarioDraft, PriceOverridesAreSavedAndApplied) {
  ScenarioDraft d = ScenarioDraft::from_file(test_data("small.json"));
  d.set_price_override({"aws-g6e.xlarge", "on_demand", 1.25, "2026-11-30"});
  const ScenarioDraft reread = ScenarioDraft::from_text(d.text(), d.path());
  ASSERT_EQ(reread.price_overrides().size(), 1u);
  EXPECT_NEAR(reread.price_overrides()[0].usd_per_hour, 1.25, kTolerance);
  const model::Catalog base = model::Catalog::load(data_dir());
  const model::Catalog priced =
      catalog_with_prices(base, reread.price_overrides(), reread.path().string());
  const model::PriceOffer* offer = priced.find_instance("aws-g6e.xlarge")->find_price("on_demand");
  ASSERT_NE(offer, nullptr);
  EXPECT_NEAR(offer->usd_per_hour, 1.25, kTolerance);
  EXPECT_EQ(offer->source, "edited in llmcap-gui");
  EXPECT_EQ(priced.instances().size(), base.instances().size());
}

TEST(ScenarioDraft, UnknownInstanceInPriceOverridesIsRefused) {
  const model::Catalog base = model::Catalog::load(data_dir());
  EXPECT_EQ(
      error_message<plan::InputError>([&] {
        catalog_with_prices(base, {{"no-such-type", "on_demand", 1.0, "2026-11-30"}}, "s.json");
      }),
      "s.json: field \"price_overrides[0].instance\": unknown instance type "
      "\"no-such-type\"");
}

TEST(ScenarioDraft, SaveAsElsewhereKeepsRelativePathsPointingAtTheSameFiles) {
  ScenarioDraft d = ScenarioDraft::from_file(test_data("small.json"));
  d.set_load_multiplier(2.0);
  d.commit_load_multiplier();
  const auto dir = llmcap::testing::fresh_temp_dir();
  d.rebase(dir / "sub" / "moved.json");
  std::filesystem::create_directories(dir / "sub");
  llmcap::testing::write_text(dir / "sub" / "moved.json", d.text());
  const plan::Scenario moved = plan::load_scenario(dir / "sub" / "moved.json");
  const plan::Scenario original = plan::load_scenario(test_data("small.json"));
  EXPECT_EQ(std::filesystem::weakly_canonical(moved.model_config),
            std::filesystem::weakly_canonical(original.model_config));
  EXPECT_EQ(std::filesystem::weakly_canonical(moved.workload.path),
            std::filesystem::weakly_canonical(original.workload.path));
  EXPECT_NEAR(moved.workload.rate_multiplier, 2.0, kTolerance);
}

/// A finished, feasible row of `instance_type`: `num_instances` instances at `usd_per_hour`.
ResultRow done_row(const std::string& instance_type, int64_t num_instances, double usd_per_hour) {
  ResultRow r;
  r.instance_type = instance_type;
  r.state = ResultRow::State::kDone;
  r.feasible = true;
  r.num_instances = num_instances;
  r.usd_per_hour = usd_per_hour;
  return r;
}

TEST(ResultsModel, SortsInfeasibleRowsAfterFeasibleOnes) {
  ResultsModel model(nullptr);
  model.begin({"a", "b", "c"}, {"gpu", "cpu", "gpu"});
  const ResultRow a = done_row("a", 3, 9);
  ResultRow b = a;
  b.instance_type = "b";
  b.feasible = false;
  b.infeasible_reason = "weights do not fit";
  ResultRow c = a;
  c.instance_type = "c";
  c.usd_per_hour = 4;
  for (const ResultRow& r : {a, b, c}) model.set_row(r);
  QSortFilterProxyModel proxy;
  proxy.setSourceModel(&model);
  proxy.setSortRole(ResultsModel::kSortRole);
  proxy.sort(ResultsModel::kUsdPerHour, Qt::AscendingOrder);
  EXPECT_EQ(proxy.index(0, ResultsModel::kInstance).data().toString(), "c");
  EXPECT_EQ(proxy.index(1, ResultsModel::kInstance).data().toString(), "a");
  EXPECT_EQ(proxy.index(2, ResultsModel::kInstance).data().toString(), "b");
  EXPECT_FALSE(proxy.index(2, ResultsModel::kUsdPerHour).data().isValid());
  EXPECT_EQ(proxy.index(2, ResultsModel::kReason).data().toString(), "weights do not fit");
}

TEST(ResultsModel, SetRowsReplacesEachRowWithOneChangeSignal) {
  ResultsModel model(nullptr);
  model.begin({"a", "b", "c", "d"}, {"gpu", "cpu", "gpu", "cpu"});
  int changes = 0;
  int first_row = -1, last_row = -1;
  QObject::connect(&model, &QAbstractItemModel::dataChanged,
                   [&](const QModelIndex& top_left, const QModelIndex& bottom_right) {
                     ++changes;
                     first_row = top_left.row();
                     last_row = bottom_right.row();
                   });
  const ResultRow b = done_row("b", 2, 7);
  const ResultRow c = done_row("c", 5, 7);
  model.set_rows({c, b});
  EXPECT_EQ(changes, 1);
  EXPECT_EQ(first_row, 1);
  EXPECT_EQ(last_row, 2);
  EXPECT_EQ(model.rows()[1].num_instances, 2);
  EXPECT_EQ(model.rows()[2].num_instances, 5);
  EXPECT_EQ(model.rows()[0].state, ResultRow::State::kPending);
  // A type the model lacks is appended, as set_row does.
  model.set_rows({done_row("e", 2, 7)});
  ASSERT_EQ(model.rowCount(), 5);
  EXPECT_EQ(model.rows()[4].instance_type, "e");
  model.set_rows({});
  EXPECT_EQ(changes, 1);
}

TEST(ResultsModel, TheDeviceTooltipSaysWhichPredictorTheFiguresAssume) {
  plan::PlanRow row;
  row.instance_type = "a";
  row.device_kind = model::DeviceKind::kGpu;
  row.feasible = true;
  row.predictor = "engine vllm (vLLM (V1 engine), docs/engines.md)";
  ResultsModel model(nullptr);
  model.begin({"a"}, {"gpu"});
  model.set_row(to_result_row(row, nullptr));
  EXPECT_EQ(model.index(0, ResultsModel::kDevice).data().toString(), "GPU");
  EXPECT_EQ(model.index(0, ResultsModel::kDevice).data(Qt::ToolTipRole).toString().toStdString(),
            row.predictor);
}

TEST(PointsModel, SetPointKeepsEachSeriesSortedAndTogether) {
  PointsModel m(nullptr);
  m.set_point("x", 2.0, 20);
  m.set_point("y", 1.0, 5);
  m.set_point("x", 1.0, 10);
  m.set_point("x", 2.0, 21);
  const std::vector<std::pair<double, double>> expected = {{1.0, 10}, {2.0, 21}};
  EXPECT_EQ(m.points("x"), expected);
  EXPECT_EQ(m.series(), QStringList({"x", "y"}));
}

TEST(ChartsView, LineChartsReadTheRunDocumentsAnalysis) {
  ResultsModel results(nullptr);
  ChartsView charts(&results, nullptr);
  const nlohmann::json doc = nlohmann::json::parse(R"({
    "analysis": {
      "cost_vs_load": [{"instance_type": "a", "points": [
          {"load_multiplier": 0.5, "feasible": true, "num_instances": 1, "usd_per_hour": 2.0},
          {"load_multiplier": 1.0, "feasible": true, "num_instances": 2, "usd_per_hour": 4.0},
          {"load_multiplier": 2.0, "feasible": false, "num_instances": 0, "usd_per_hour": 0}]}],
      "latency_cdf": [
          {"instance_type": "a", "num_instances": 2, "metric": "ttft",
           "points": [{"latency_s": 0.1, "fraction": 0.5}, {"latency_s": 0.3, "fraction": 1.0}]},
          {"instance_type": "a", "num_instances": 2, "metric": "tpot",
           "points": [{"latency_s": 0.02, "fraction": 1.0}]}],
      "fleet_over_day": [{"instance_type": "a", "hourly_load_multiplier": [],
                          "hourly_instances": [1, 2, 3], "usd_per_day": 10}]}})");
  EXPECT_TRUE(charts.show_analysis(doc));
  const auto series_points = [&](int chart, const QString& name) {
    for (QAbstractSeries* a : charts.chart(chart)->series()) {
      if (a->name() == name) return qobject_cast<QLineSeries*>(a)->points();
    }
    return QList<QPointF>();
  };
  // Infeasible load points are left out; the TTFT CDF is shown (the default metric).
  EXPECT_EQ(series_points(1, "a"), QList<QPointF>({{0.5, 2.0}, {1.0, 4.0}}));
  EXPECT_EQ(series_points(2, "a"), QList<QPointF>({{0.1, 0.5}, {0.3, 1.0}}));
  EXPECT_EQ(series_points(3, "a"), QList<QPointF>({{0, 1}, {1, 2}, {2, 3}}));
}

class GuiWindow : public ::testing::Test {
 protected:
  void SetUp() override {
    language_ = std::make_unique<Language>(nullptr);
    window_ = make_window(language_.get());
  }
  void TearDown() override {
    window_.reset();
    language_.reset();
  }
  std::unique_ptr<Language> language_;
  std::unique_ptr<MainWindow> window_;
};

TEST_F(GuiWindow, DefaultScenarioRunFillsTheTableAndTheCharts) {
  const QString path =
      QString::fromStdString((data_dir() / "scenarios" / "chat-llama3.1-8b.json").string());
  ASSERT_TRUE(window_->open_scenario(path)) << window_->status_text().toStdString();
  window_->set_load_multiplier(1.0);  // a what-if run of the scenario as it is
  bool ok = false;
  ASSERT_TRUE(wait_for_run(*window_, kDefaultRunTimeoutMs, &ok));
  ASSERT_TRUE(ok) << window_->status_text().toStdString();
  // The scenario names no engine: each kind's default, said in the status line.
  EXPECT_TRUE(window_->status_text().endsWith("; engines: GPU vllm, CPU llama.cpp"))
      << window_->status_text().toStdString();
  ResultsModel* m = window_->results();
  const model::Catalog catalog = model::Catalog::load(data_dir());
  ASSERT_EQ(m->rowCount(), static_cast<int>(catalog.instances().size()));
  int feasible = 0;
  for (const ResultRow& r : m->rows()) {
    EXPECT_EQ(r.state, ResultRow::State::kDone) << r.instance_type;
    if (r.feasible) {
      ++feasible;
      EXPECT_GE(r.num_instances, 1) << r.instance_type;
      EXPECT_GT(r.usd_per_hour, 0) << r.instance_type;
      EXPECT_LE(r.ttft_p99_s, 2.0) << r.instance_type;  // the scenario's SLO
      EXPECT_LE(r.tpot_p99_s, 0.05) << r.instance_type;
    } else {
      EXPECT_FALSE(r.infeasible_reason.empty()) << r.instance_type;
    }
  }
  EXPECT_GT(feasible, 0);
  // The bar chart holds the table's USD/hour, row by row.
  QChart* bars = window_->charts()->chart(0);
  auto* series = qobject_cast<QHorizontalBarSeries*>(bars->series().value(0));
  ASSERT_NE(series, nullptr);
  ASSERT_EQ(series->barSets().size(), 1);
  QBarSet* set = series->barSets()[0];
  ASSERT_EQ(set->count(), m->rowCount());
  // In the bars' order: cheapest first, infeasible last (0 USD/hour shown).
  QAbstractItemModel* order = window_->charts()->bar_order();
  double previous = 0;
  bool seen_infeasible = false;
  for (int i = order->rowCount() - 1; i >= 0; --i) {  // top down
    const int row =
        m->find(order->index(i, ResultsModel::kInstance).data().toString().toStdString());
    ASSERT_GE(row, 0);
    const QVariant v = m->index(row, ResultsModel::kUsdPerHour).data();
    EXPECT_NEAR(set->at(i), v.isValid() ? v.toDouble() : 0.0, kTolerance) << row;
    if (!m->rows()[static_cast<size_t>(row)].feasible) {
      seen_infeasible = true;
      continue;
    }
    EXPECT_FALSE(seen_infeasible) << row;
    EXPECT_GE(set->at(i), previous) << row;
    previous = set->at(i);
  }
}

TEST_F(GuiWindow, ChartSeriesHoldTheTableNumbers) {
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  window_->set_load_multiplier(1.0);
  bool ok = false;
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs, &ok));
  ASSERT_TRUE(ok) << window_->status_text().toStdString();
  ResultsModel* m = window_->results();
  ASSERT_EQ(m->rowCount(), 3);
  // Latency CDF: one series per feasible type, its points the table's TTFT quantiles.
  QChart* cdf = window_->charts()->chart(2);
  int checked = 0;
  for (const ResultRow& r : m->rows()) {
    if (!r.feasible) continue;
    QLineSeries* s = nullptr;
    for (QAbstractSeries* a : cdf->series()) {
      if (a->name() == QString::fromStdString(r.instance_type)) s = qobject_cast<QLineSeries*>(a);
    }
    ASSERT_NE(s, nullptr) << r.instance_type;
    const QList<QPointF> pts = s->points();
    ASSERT_EQ(pts.size(), 4);
    EXPECT_NEAR(pts[0].x(), figure(m, r.instance_type, ResultsModel::kTtftP50).toDouble(),
                kTolerance);
    EXPECT_NEAR(pts[2].x(), figure(m, r.instance_type, ResultsModel::kTtftP99).toDouble(),
                kTolerance);
    EXPECT_NEAR(pts[2].y(), 0.99, kTolerance);
    ++checked;
  }
  EXPECT_GT(checked, 0);
  // Cost against load: the what-if answer is one point per feasible type at load 1.
  QChart* load = window_->charts()->chart(1);
  for (const ResultRow& r : m->rows()) {
    if (!r.feasible) continue;
    for (QAbstractSeries* a : load->series()) {
      if (a->name() != QString::fromStdString(r.instance_type)) continue;
      const QList<QPointF> pts = qobject_cast<QLineSeries*>(a)->points();
      ASSERT_EQ(pts.size(), 1);
      EXPECT_NEAR(pts[0].x(), 1.0, kTolerance);
      EXPECT_NEAR(pts[0].y(), r.usd_per_hour, kTolerance);
    }
  }
}

TEST_F(GuiWindow, LoadSliderChangesFleetSizes) {
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  window_->set_load_multiplier(1.0);
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs));
  std::map<std::string, int64_t> before;
  for (const ResultRow& r : window_->results()->rows()) {
    if (r.feasible) before[r.instance_type] = r.num_instances;
  }
  ASSERT_FALSE(before.empty());
  // As the user does: move the slider and release it.
  QSlider* slider = window_->load_slider();
  slider->setSliderDown(true);
  slider->setValue(400);
  slider->setSliderDown(false);  // emits sliderReleased
  bool ok = false;
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs, &ok));
  ASSERT_TRUE(ok) << window_->status_text().toStdString();
  EXPECT_NEAR(window_->draft().load_multiplier(), 4.0, kTolerance);
  int grew = 0;
  for (const ResultRow& r : window_->results()->rows()) {
    if (before.count(r.instance_type) == 0) continue;
    ASSERT_TRUE(r.feasible) << r.instance_type << ": " << r.infeasible_reason;
    EXPECT_GE(r.num_instances, before[r.instance_type]) << r.instance_type;
    if (r.num_instances > before[r.instance_type]) ++grew;
  }
  EXPECT_GT(grew, 0);
  ASSERT_TRUE(window_->last_timing().has_value());
  EXPECT_LE(window_->last_timing()->first_row_s, window_->last_timing()->last_row_s);
}

TEST_F(GuiWindow, TheAnswerCardShowsTheCheapestFleetAndWhatAWhatIfChanged) {
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  EXPECT_TRUE(window_->answer_text().contains("run a plan"));
  window_->set_load_multiplier(1.0);
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs));
  // The cheapest feasible row of the table is the card's answer, at the table's cost.
  const ResultRow* cheapest = nullptr;
  for (const ResultRow& r : window_->results()->rows()) {
    if (r.feasible && (cheapest == nullptr || r.usd_per_hour < cheapest->usd_per_hour)) {
      cheapest = &r;
    }
  }
  ASSERT_NE(cheapest, nullptr);
  const int64_t count = cheapest->num_instances;
  const QString id = QString::fromStdString(cheapest->instance_type);
  const QString before = window_->answer_text();
  EXPECT_TRUE(before.contains(QStringLiteral("Answer: %1 × %2").arg(count).arg(id)))
      << before.toStdString();
  EXPECT_TRUE(before.contains(QString::fromStdString(base::money("USD", cheapest->usd_per_hour))))
      << before.toStdString();
  EXPECT_FALSE(before.contains("Before:"));
  // Four times the load needs a larger fleet: the card says what it was before.
  window_->set_load_multiplier(4.0);
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs));
  const QString after = window_->answer_text();
  EXPECT_TRUE(after.contains(QStringLiteral("Before: %1 × %2").arg(count).arg(id)))
      << after.toStdString();
}

TEST_F(GuiWindow, StaleRunIsDroppedWhenTheInputChangesAgain) {
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  window_->set_load_multiplier(1.0);
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs));
  // Two releases in a row: the first run is stale before it is done.
  int finished = 0;
  double last_load = 0;
  QObject::connect(window_.get(), &MainWindow::runFinished, window_.get(), [&](bool, bool) {
    ++finished;
    last_load = window_->last_timing()->load_multiplier;
  });
  window_->set_load_multiplier(2.0);
  window_->set_load_multiplier(4.0);
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs));
  // Let any late signal of the stale run arrive: none may.
  QEventLoop settle;
  QTimer::singleShot(500, &settle, &QEventLoop::quit);
  settle.exec();
  EXPECT_EQ(finished, 1);
  EXPECT_NEAR(last_load, 4.0, kTolerance);
  for (const ResultRow& r : window_->results()->rows()) {
    EXPECT_EQ(r.state, ResultRow::State::kDone) << r.instance_type;
  }
}

/// Runs `input` (generation 1) on a PlanWorker on this thread; `on_row` sees each row as it is
/// emitted and may bump the generation (as a newer input would).
PlanOutcome run_worker(PlanInput input,
                       const std::function<void(size_t, std::atomic<uint64_t>&)>& on_row) {
  std::atomic<uint64_t> latest{1};
  input.generation = 1;
  PlanWorker worker(&latest);
  size_t rows = 0;
  PlanOutcome outcome;
  QObject::connect(
      &worker, &PlanWorker::rowReady, &worker, [&](const RowUpdate&) { on_row(++rows, latest); },
      Qt::DirectConnection);
  QObject::connect(
      &worker, &PlanWorker::finished, &worker, [&](const PlanOutcome& o) { outcome = o; },
      Qt::DirectConnection);
  worker.run(input);
  return outcome;
}

PlanInput small_input(bool full_run) {
  PlanInput input;
  input.scenario = ScenarioDraft::from_file(test_data("small.json")).scenario();
  input.catalog = std::make_shared<const model::Catalog>(model::Catalog::load(data_dir()));
  input.full_run = full_run;
  input.analysis = false;
  input.num_threads = 1;  // candidates in order: the first row comes before the second starts
  return input;
}

TEST(PlanWorker, FullRunStopsOnceANewerInputArrives) {
  size_t rows_seen = 0;
  const PlanOutcome cancelled = run_worker(small_input(true), [&](size_t n, auto& latest) {
    rows_seen = n;
    latest = 2;  // a newer input: the planner stops before its next candidate
  });
  EXPECT_TRUE(cancelled.cancelled);
  EXPECT_FALSE(cancelled.ok);
  EXPECT_TRUE(cancelled.error.isEmpty()) << cancelled.error.toStdString();
  EXPECT_EQ(rows_seen, 1u);  // of 3 candidates
  const PlanOutcome done = run_worker(small_input(true), [](size_t, auto&) {});
  EXPECT_TRUE(done.ok);
  EXPECT_FALSE(done.cancelled);
  EXPECT_EQ(done.rows.size(), 3u);
}

TEST(PlanWorker, WhatIfRunStopsOnceANewerInputArrives) {
  size_t rows_seen = 0;
  const PlanOutcome cancelled = run_worker(small_input(false), [&](size_t n, auto& latest) {
    rows_seen = n;
    if (n == 2) latest = 2;  // the CPU type is ruled out first, then one GPU type is done
  });
  EXPECT_TRUE(cancelled.cancelled);
  EXPECT_EQ(rows_seen, 2u);
}

TEST(PlanWorker, FailuresCarryOverOnlyToHarderInputsOfTheSameScenario) {
  VerdictBasis before{"{scenario}", nullptr, 1.0, 2.0, 0.05};
  VerdictBasis after = before;
  EXPECT_TRUE(failures_carry_over(before, after));  // the same inputs (e.g. a price edit)
  after.load_multiplier = 1.5;
  EXPECT_TRUE(failures_carry_over(before, after));
  after.ttft_p99_s = 1.0;  // and a tighter SLO
  EXPECT_TRUE(failures_carry_over(before, after));
  EXPECT_FALSE(failures_carry_over(after, before));  // easier: a smaller fleet may now pass
  VerdictBasis looser_tpot = before;
  looser_tpot.tpot_p99_s = 0.06;
  EXPECT_FALSE(failures_carry_over(before, looser_tpot));
  VerdictBasis other = before;
  other.context = "{another scenario}";
  EXPECT_FALSE(failures_carry_over(before, other));
  static const int profile = 0;
  VerdictBasis calibrated = before;
  calibrated.calibration = &profile;
  EXPECT_FALSE(failures_carry_over(before, calibrated));
}

TEST_F(GuiWindow, WarmStartGivesTheColdAnswer) {
  // A what-if run at 3x after one at 1x starts from the scaled sizes; a fresh window at 3x
  // searches from scratch.
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  window_->set_load_multiplier(1.0);
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs));
  window_->set_load_multiplier(3.0);
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs));
  std::map<std::string, int64_t> warm;
  for (const ResultRow& r : window_->results()->rows()) warm[r.instance_type] = r.num_instances;
  const int64_t warm_simulations = window_->last_timing()->num_simulations;
  auto cold_window = make_window(language_.get());
  ASSERT_TRUE(cold_window->open_scenario(small_scenario()));
  cold_window->set_load_multiplier(3.0);
  ASSERT_TRUE(wait_for_run(*cold_window, kSmallRunTimeoutMs));
  // Each warm size is an answer the cold search could give: it meets the SLO at 3x and one
  // instance fewer does not. (The sizes can differ from the cold run's: on 300 requests a p99
  // is the 3rd-worst request and the verdict is not monotone in fleet size, so searches from
  // different starts may stop at different such sizes.)
  const plan::Scenario at_3x =
      plan::with_load_multiplier(plan::load_scenario(test_data("small.json"), data_dir()), 3.0);
  const model::Catalog catalog = model::Catalog::load(data_dir());
  for (const ResultRow& r : cold_window->results()->rows()) {
    if (!r.feasible) continue;
    const int64_t n = warm[r.instance_type];
    ASSERT_GE(n, 1) << r.instance_type;
    EXPECT_TRUE(plan::meets_slo(plan::evaluate_fleet(at_3x, catalog, r.instance_type, n).metrics,
                                at_3x.slo))
        << r.instance_type << " at " << n;
    if (n > 1) {
      EXPECT_FALSE(plan::meets_slo(
          plan::evaluate_fleet(at_3x, catalog, r.instance_type, n - 1).metrics, at_3x.slo))
          << r.instance_type << " at " << n - 1;
    }
  }
  // The warm run skipped the sizes below the 1x answers (they fail at 3x too).
  EXPECT_LE(warm_simulations, cold_window->last_timing()->num_simulations);
}

TEST_F(GuiWindow, FullRunExportsANonEmptyPdfAndIsStored) {
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  window_->run_full(/*analysis=*/false);
  bool ok = false;
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs, &ok));
  ASSERT_TRUE(ok) << window_->status_text().toStdString();
  ASSERT_NE(window_->last_document(), nullptr);
  const auto dir = llmcap::testing::fresh_temp_dir();
  const QString pdf = QString::fromStdString((dir / "report.pdf").string());
  ASSERT_TRUE(window_->export_report(pdf, "pdf")) << window_->status_text().toStdString();
  const std::string bytes = read_text(pdf.toStdString());
  ASSERT_GT(bytes.size(), 1000u);
  EXPECT_EQ(bytes.substr(0, 5), "%PDF-");
  const QString csv = QString::fromStdString((dir / "report.csv").string());
  ASSERT_TRUE(window_->export_report(csv, "csv"));
  EXPECT_NE(read_text(csv.toStdString()).find("aws-g6e.xlarge"), std::string::npos);
  // The run went into the (scratch) results database and the runs view lists it.
  ASSERT_GT(window_->last_stored_run(), 0);
  window_->runs()->refresh();
  ASSERT_GE(window_->runs()->runs_model()->rowCount(), 1);
  EXPECT_TRUE(window_->runs()->compare(window_->last_stored_run(), window_->last_stored_run()));
  EXPECT_EQ(window_->runs()->compare_model()->rowCount(), 3);
}

TEST_F(GuiWindow, ABenchmarkRunDoesNotOpenInTheTable) {
  // llmcap bench-sim, serve-bench and validate runs share the database with plan runs.
  store::RunRecord record;
  record.kind = "bench-sim";
  record.name = "2000 requests, 2 replicas";
  record.document_json = R"({"requests": 2000, "wall_s": 0.01})";
  const int64_t id = store::ResultsStore::open(store::default_db_path("")).add_run(record);
  window_->runs()->refresh();
  EXPECT_FALSE(window_->runs()->open(id));
  EXPECT_NE(window_->runs()->error_text().indexOf("is a bench-sim run; only plan runs"), -1)
      << window_->runs()->error_text().toStdString();
}

TEST_F(GuiWindow, ExportBeforeAnyFullRunSaysSo) {
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  const auto dir = llmcap::testing::fresh_temp_dir();
  EXPECT_FALSE(window_->export_report(QString::fromStdString((dir / "r.pdf").string()), "pdf"));
  EXPECT_EQ(window_->status_text(),
            "Nothing to export yet: run a full plan first (Run ▸ Run full plan).");
  EXPECT_FALSE(std::filesystem::exists(dir / "r.pdf"));
}

TEST_F(GuiWindow, ExportRunsAFullPlanOfTheCurrentInputsFirst) {
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  window_->run_full(/*analysis=*/false);
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs));
  const auto first_document = window_->last_document();
  ASSERT_NE(first_document, nullptr);
  // A what-if at twice the load: the last full run no longer matches the inputs.
  window_->set_load_multiplier(2.0);
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs));
  const auto dir = llmcap::testing::fresh_temp_dir();
  const QString csv = QString::fromStdString((dir / "now.csv").string());
  ASSERT_TRUE(window_->export_current(csv, "csv")) << window_->status_text().toStdString();
  EXPECT_TRUE(window_->export_pending());
  EXPECT_FALSE(std::filesystem::exists(csv.toStdString()));  // not before its run is done
  bool ok = false;
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs, &ok));
  ASSERT_TRUE(ok) << window_->status_text().toStdString();
  EXPECT_FALSE(window_->export_pending());
  ASSERT_NE(window_->last_document(), first_document);
  ASSERT_TRUE(std::filesystem::exists(csv.toStdString())) << window_->status_text().toStdString();
  const std::string text = read_text(csv.toStdString());
  EXPECT_NE(text.find("aws-g6e.xlarge"), std::string::npos);
  // The exported run is the one at load 2: its fleets are those the what-if showed.
  const nlohmann::json& rows = (*window_->last_document())["results"];
  for (const ResultRow& r : window_->results()->rows()) {
    for (const nlohmann::json& row : rows) {
      if (row.value("instance_type", "") == r.instance_type && r.feasible) {
        EXPECT_EQ(row.value("num_instances", int64_t{0}), r.num_instances) << r.instance_type;
      }
    }
  }
  // The same inputs again: written at once from that run, no new run.
  const QString again = QString::fromStdString((dir / "again.csv").string());
  ASSERT_TRUE(window_->export_current(again, "csv"));
  EXPECT_FALSE(window_->export_pending());
  EXPECT_EQ(read_text(again.toStdString()), text);
}

TEST_F(GuiWindow, ANewInputCancelsAPendingExport) {
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  const auto dir = llmcap::testing::fresh_temp_dir();
  const QString pdf = QString::fromStdString((dir / "r.pdf").string());
  ASSERT_TRUE(window_->export_current(pdf, "pdf"));
  window_->set_load_multiplier(3.0);  // before the export's run is done
  EXPECT_FALSE(window_->export_pending());
  EXPECT_NE(window_->status_text().indexOf("cancelled: the inputs changed"), -1)
      << window_->status_text().toStdString();
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs));
  EXPECT_FALSE(std::filesystem::exists(dir / "r.pdf"));
}

TEST_F(GuiWindow, BrokenScenarioShowsTheErrorAndKeepsTheLastGoodOne) {
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  const std::string broken = test_data("broken.json").string();
  EXPECT_FALSE(window_->open_scenario(QString::fromStdString(broken)));
  const std::string status = window_->status_text().toStdString();
  EXPECT_NE(status.find(broken), std::string::npos) << status;
  EXPECT_NE(status.find("slo.ttft_p99_s"), std::string::npos) << status;
  EXPECT_EQ(window_->panel()->error_text(ScenarioPanel::Field::kSlo).toStdString(), status);
  EXPECT_EQ(window_->draft().path(), test_data("small.json"));
}

TEST_F(GuiWindow, ErrorIsShownAtTheFieldOfItsFieldPath) {
  // The bad value is the text "workload": matched by text, the error would land next to the
  // workload; its field path ("slo.ttft_p99_s") puts it next to the SLO.
  nlohmann::json s = nlohmann::json::parse(read_text(test_data("small.json").string()));
  s["model"] = (data_dir() / "models" / "llama-3.1-8b.json").string();
  s["workload"]["path"] =
      (test_data("small.json").parent_path() / ".." / ".." / "cli" / "data" / "conv_model300.csv")
          .string();
  s["slo"]["ttft_p99_s"] = "workload";
  const auto dir = llmcap::testing::fresh_temp_dir();
  llmcap::testing::write_text(dir / "misleading.json", s.dump(2));
  EXPECT_FALSE(window_->open_scenario(QString::fromStdString((dir / "misleading.json").string())));
  const std::string status = window_->status_text().toStdString();
  EXPECT_NE(status.find("field \"slo.ttft_p99_s\""), std::string::npos) << status;
  EXPECT_NE(status.find("\"workload\""), std::string::npos) << status;
  EXPECT_EQ(window_->panel()->error_text(ScenarioPanel::Field::kSlo).toStdString(), status);
  EXPECT_EQ(window_->panel()->error_text(ScenarioPanel::Field::kWorkload).toStdString(), "");
}

TEST_F(GuiWindow, PriceModelNoCandidateOffersKeepsTheLastAnswer) {
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  window_->set_load_multiplier(1.0);
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs));
  const std::vector<ResultRow> before = window_->results()->rows();
  // Neither aws-g6e.xlarge nor aws-m7i.8xlarge offers a capacity block (a price model only
  // some candidates lack is not an error: those rows get no TCO, docs/tco.md).
  window_->set_price_model("capacity_block");
  bool ok = true;
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs, &ok));
  EXPECT_FALSE(ok);
  const std::string status = window_->status_text().toStdString();
  EXPECT_NE(status.find("field \"tco.price_model\""), std::string::npos) << status;
  EXPECT_NE(status.find("aws-m7i.8xlarge"), std::string::npos) << status;
  EXPECT_NE(status.find("aws-g6e.xlarge"), std::string::npos) << status;
  EXPECT_EQ(window_->panel()->error_text(ScenarioPanel::Field::kPrices).toStdString(), status);
  EXPECT_EQ(window_->draft().price_model(), "");
  ASSERT_EQ(window_->results()->rows().size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(window_->results()->rows()[i].state, ResultRow::State::kDone);
    EXPECT_EQ(window_->results()->rows()[i].num_instances, before[i].num_instances);
  }
}

TEST_F(GuiWindow, PriceModelSomeCandidatesLackIsNamedInTheStatus) {
  // aws-g6e.xlarge offers reserved_1y through the scenario's own quote; aws-m7i.8xlarge offers
  // on_demand only: it is planned, gets no TCO, and the status says so (docs/tco.md).
  llmcap::testing::TempDir dir;
  const std::filesystem::path here = test_data("small.json").parent_path();
  nlohmann::json s = nlohmann::json::parse(read_text(test_data("small.json")));
  s["model"] = (data_dir() / "models/llama-3.1-8b.json").string();
  s["workload"]["path"] = (here / "../../cli/data/conv_model300.csv").string();
  s["candidates"] = {"aws-g6e.xlarge", "aws-m7i.8xlarge"};
  s["tco"] = {{"price_model", "reserved_1y"}};
  s["price_overrides"] = {{{"instance", "aws-g6e.xlarge"},
                           {"price_model", "reserved_1y"},
                           {"usd_per_hour", 1.0},
                           {"source", "test quote"},
                           {"as_of", "2026-12-01"}}};
  const auto path = dir.write("reserved.json", s.dump());
  ASSERT_TRUE(window_->open_scenario(QString::fromStdString(path.string())));
  window_->set_load_multiplier(1.0);
  bool ok = false;
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs, &ok));
  EXPECT_TRUE(ok) << window_->status_text().toStdString();
  const std::string status = window_->status_text().toStdString();
  EXPECT_NE(status.find("; not offered under reserved_1y (no TCO): aws-m7i.8xlarge (offers: "
                        "on_demand)"),
            std::string::npos)
      << status;
}

TEST_F(GuiWindow, TheWeightFormatListShowsEveryFormatAndTheScenariosOwn) {
  auto* combo = window_->findChild<QComboBox*>("weight_format");
  ASSERT_NE(combo, nullptr);
  EXPECT_EQ(combo->count(), static_cast<int>(std::size(model::kAllWeightFormats)));
  EXPECT_GE(combo->findData(QStringLiteral("q4_k_m")), 0);
  EXPECT_GE(combo->findData(QStringLiteral("mxfp4-experts")), 0);
  // The tooltip says what the format stores.
  const QString tip =
      combo->itemData(combo->findData(QStringLiteral("q4_k_m")), Qt::ToolTipRole).toString();
  EXPECT_TRUE(tip.contains(QStringLiteral("Q6_K"))) << tip.toStdString();
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  EXPECT_EQ(combo->currentData().toString().toStdString(), window_->draft().weight_format());
  const QString moe = QString::fromStdString(
      (llmcap::testing::data_dir() / "scenarios" / "deepseek-v3-8gpu.json").string());
  ASSERT_TRUE(window_->open_scenario(moe));
  EXPECT_EQ(combo->currentData().toString(), QStringLiteral("fp8-block"));
}

TEST_F(GuiWindow, UnknownCandidateFailsTheRunWithTheCandidatesError) {
  // The rows to expect come from plan::resolve_candidates, as the planner's do: a candidate
  // the catalog lacks expects no rows, and the run fails with the planner's error.
  nlohmann::json s = nlohmann::json::parse(read_text(test_data("small.json").string()));
  s["model"] = (data_dir() / "models" / "llama-3.1-8b.json").string();
  s["workload"]["path"] =
      (test_data("small.json").parent_path() / ".." / ".." / "cli" / "data" / "conv_model300.csv")
          .string();
  s["candidates"] = {"aws-g5.xlarge", "no-such-type"};
  const auto dir = llmcap::testing::fresh_temp_dir();
  llmcap::testing::write_text(dir / "unknown.json", s.dump(2));
  ASSERT_TRUE(window_->open_scenario(QString::fromStdString((dir / "unknown.json").string())))
      << window_->status_text().toStdString();
  window_->set_load_multiplier(1.0);
  bool ok = true;
  ASSERT_TRUE(wait_for_run(*window_, kSmallRunTimeoutMs, &ok));
  EXPECT_FALSE(ok);
  const std::string status = window_->status_text().toStdString();
  EXPECT_NE(status.find("field \"candidates\": unknown instance type \"no-such-type\""),
            std::string::npos)
      << status;
  for (const ResultRow& r : window_->results()->rows()) {
    EXPECT_NE(r.state, ResultRow::State::kPending) << r.instance_type;
  }
}

TEST(GuiMaxRequests, AWorkloadAboveTheLimitIsShownAsAnErrorBeforeAnySimulation) {
  Language language(nullptr);
  const auto window = make_window(&language, /*max_requests=*/10);
  ASSERT_TRUE(window->open_scenario(small_scenario())) << window->status_text().toStdString();
  window->set_load_multiplier(1.0);
  bool ok = true;
  ASSERT_TRUE(wait_for_run(*window, kSmallRunTimeoutMs, &ok));
  EXPECT_FALSE(ok);
  const std::string status = window->status_text().toStdString();
  EXPECT_NE(status.find("expected at most 10 requests (raise the limit with --max-requests)"),
            std::string::npos)
      << status;
}

TEST(GuiArgs, MaxRequestsIsAPositiveIntegerUpTo1e12) {
  QString error;
  const auto a = parse_app_args({"llmcap-gui", "--max-requests", "5000000"}, &error);
  ASSERT_TRUE(a.has_value()) << error.toStdString();
  EXPECT_EQ(a->max_requests, 5'000'000);
  EXPECT_EQ(parse_app_args({"llmcap-gui"}, &error)->max_requests, plan::kDefaultMaxRequests);
  EXPECT_FALSE(parse_app_args({"llmcap-gui", "--max-requests", "0"}, &error).has_value());
  EXPECT_EQ(error.toStdString(),
            "option --max-requests: expected an integer in [1, 1e12], got \"0\"");
  EXPECT_FALSE(parse_app_args({"llmcap-gui", "--max-requests", "lots"}, &error).has_value());
  EXPECT_EQ(error.toStdString(),
            "option --max-requests: expected an integer in [1, 1e12], got \"lots\"");
}

TEST(GuiArgs, WhatIfsAreKeyValuePairsInOrder) {
  QString error;
  const auto a = parse_app_args({"llmcap-gui", "--what-if", "load=2", "--what-if",
                                 "cpu-weights=int4", "--what-if", "currency=CNY"},
                                &error);
  ASSERT_TRUE(a.has_value()) << error.toStdString();
  ASSERT_EQ(a->what_ifs.size(), 3u);
  EXPECT_EQ(a->what_ifs[0], std::make_pair(QStringLiteral("load"), QStringLiteral("2")));
  EXPECT_EQ(a->what_ifs[1], std::make_pair(QStringLiteral("cpu-weights"), QStringLiteral("int4")));
  EXPECT_EQ(a->what_ifs[2], std::make_pair(QStringLiteral("currency"), QStringLiteral("CNY")));
  for (const char* bad : {"speed=2", "load=0", "load=", "cpu-weights"}) {
    EXPECT_FALSE(parse_app_args({"llmcap-gui", "--what-if", bad}, &error).has_value()) << bad;
    EXPECT_EQ(error.toStdString(),
              std::string("option --what-if: expected load=X (X > 0), gpu-weights=FORMAT, "
                          "cpu-weights=FORMAT, price-model=NAME or currency=CODE, got \"") +
                  bad + "\"");
  }
}

TEST_F(GuiWindow, MissingScenarioFileIsNamed) {
  EXPECT_FALSE(window_->open_scenario("/nonexistent/s.json"));
  EXPECT_EQ(window_->status_text(), "/nonexistent/s.json: cannot open file");
}

TEST_F(GuiWindow, NonNumericPriceIsShownNextToThePrices) {
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  QStandardItemModel* prices = window_->panel()->prices_model();
  int row = -1;
  for (int r = 0; r < prices->rowCount(); ++r) {
    if (prices->item(r, ScenarioPanel::kIdColumn)->text() == "aws-g6e.xlarge") row = r;
  }
  ASSERT_GE(row, 0);
  const QString before = prices->item(row, ScenarioPanel::kPriceColumn)->text();
  prices->item(row, ScenarioPanel::kPriceColumn)->setText("abc");
  const std::string expected = test_data("small.json").string() +
                               ": field \"price_overrides.aws-g6e.xlarge.on_demand\": expected a "
                               "positive number of USD per hour, got \"abc\"";
  EXPECT_EQ(window_->panel()->error_text(ScenarioPanel::Field::kPrices).toStdString(), expected);
  EXPECT_EQ(window_->status_text().toStdString(), expected);
  EXPECT_TRUE(window_->draft().price_overrides().empty());
  // The panel shows the last good price again.
  int again = -1;
  for (int r = 0; r < prices->rowCount(); ++r) {
    if (prices->item(r, ScenarioPanel::kIdColumn)->text() == "aws-g6e.xlarge") again = r;
  }
  ASSERT_GE(again, 0);
  EXPECT_EQ(prices->item(again, ScenarioPanel::kPriceColumn)->text(), before);
}

TEST_F(GuiWindow, UnreadableModelConfigIsShownNextToTheModel) {
  ASSERT_TRUE(window_->open_scenario(small_scenario()));
  const auto dir = llmcap::testing::fresh_temp_dir();
  const auto config = dir / "config.json";
  llmcap::testing::write_text(config, R"({"model_type": "llama", "hidden_size": "big"})");
  emit window_->panel()->modelChosen(QString::fromStdString(config.string()));
  const std::string shown =
      window_->panel()->error_text(ScenarioPanel::Field::kModel).toStdString();
  EXPECT_NE(shown.find(config.string()), std::string::npos) << shown;
  EXPECT_EQ(window_->status_text().toStdString(), shown);
  EXPECT_EQ(window_->draft().model_path(), data_dir() / "models" / "llama-3.1-8b.json");
}

TEST_F(GuiWindow, LanguageSwitchesAtRunTime) {
  EXPECT_EQ(window_->tabs()->tabText(0), "What-if");
  ASSERT_TRUE(language_->set("zh_CN"));
  QCoreApplication::processEvents();
  EXPECT_EQ(window_->tabs()->tabText(0), QString::fromUtf8("假设分析"));
  EXPECT_EQ(window_->results()
                ->headerData(ResultsModel::kFleetSize, Qt::Horizontal, Qt::DisplayRole)
                .toString(),
            QString::fromUtf8("实例数"));
  ASSERT_TRUE(language_->set("en"));
  QCoreApplication::processEvents();
  EXPECT_EQ(window_->tabs()->tabText(0), "What-if");
}

TEST(AuditView, SeedArticleClaimsGetVerdictsWithArithmetic) {
  AuditView view(data_dir(), nullptr);
  ASSERT_TRUE(view.open_claims(
      QString::fromStdString((data_dir() / "claims" / "seed-article.json").string())))
      << view.error_text().toStdString();
  ASSERT_GT(view.model()->rowCount(), 0);
  for (int r = 0; r < view.model()->rowCount(); ++r) {
    const QString verdict = view.model()->item(r, AuditView::kVerdict)->text();
    EXPECT_TRUE(verdict == "plausible" || verdict == "optimistic" || verdict == "impossible")
        << verdict.toStdString();
    EXPECT_FALSE(view.explanation(r).isEmpty());
  }
}

TEST(AuditView, BadClaimsFileIsShownInPlace) {
  AuditView view(data_dir(), nullptr);
  EXPECT_FALSE(view.open_claims("/nonexistent/claims.json"));
  EXPECT_EQ(view.error_text(), "/nonexistent/claims.json: cannot open file");
}

/// Runs a test sweep in `view` and waits for it; returns whether it succeeded.
bool run_test_sweep(CalibrationView& view) {
  QEventLoop loop;
  bool ok = false;
  QObject::connect(&view, &CalibrationView::calibrationFinished, &loop, [&](bool done) {
    ok = done;
    loop.quit();
  });
  QTimer::singleShot(120000, &loop, &QEventLoop::quit);
  view.start_calibration(kernels::SweepSize::kTest);
  loop.exec();
  return ok;
}

TEST(CalibrationView, TestSweepShowsEachKernelAgainstTheMachine) {
  CalibrationView view(nullptr);
  ASSERT_TRUE(run_test_sweep(view)) << view.error_text().toStdString();
  ASSERT_NE(view.profile(), nullptr);
  EXPECT_FALSE(view.profile()->machine.read_bandwidth_bytes_per_s.empty());
  EXPECT_FALSE(view.profile()->kernels.empty());
}

TEST(CalibrationView, ASelectedModelsShapesAreTimedInEveryFormat) {
  const auto dir = llmcap::testing::fresh_temp_dir();
  // Two layers, hidden 128, 4 query heads and 2 KV heads of 32, MLP 256, vocab 512.
  llmcap::testing::write_text(dir / "models" / "tiny.json",
                              R"({"model_type": "llama", "hidden_size": 128,
    "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "vocab_size": 512, "max_position_embeddings": 2048,
    "tie_word_embeddings": true})");
  llmcap::testing::write_text(dir / "models" / "notes.txt", "not a model");
  CalibrationView view(nullptr);
  view.set_models_dir(dir / "models");
  EXPECT_TRUE(view.selected_model().isEmpty());  // the sweep's shapes by default
  const QString tiny = QString::fromStdString((dir / "models" / "tiny.json").string());
  ASSERT_TRUE(view.select_model(tiny));
  EXPECT_FALSE(view.select_model(QString::fromStdString((dir / "models" / "notes.txt").string())));
  EXPECT_EQ(view.selected_model(), tiny);
  ASSERT_TRUE(run_test_sweep(view)) << view.error_text().toStdString();
  ASSERT_NE(view.profile(), nullptr);
  // The fused QKV call (4 x 32 + 2 x 2 x 32 = 256 rows x 128) in all four formats, and the
  // attention layout 4/2x32 (rows = KV heads x head_dim = 64, batch = query heads).
  std::set<std::string> qkv_formats;
  bool layout = false;
  for (const model::KernelSample& k : view.profile()->kernels) {
    if (k.op == "matmul" && k.rows == 256 && k.cols == 128) qkv_formats.insert(k.format);
    if (k.op == "attention" && k.rows == 64 && k.batch == 4) layout = true;
  }
  EXPECT_EQ(qkv_formats, (std::set<std::string>{"f32", "bf16", "int8", "int4"}));
  EXPECT_TRUE(layout);
}

TEST(CalibrationView, AnUnreadableModelFailsTheRunInPlace) {
  const auto dir = llmcap::testing::fresh_temp_dir();
  const auto bad = dir / "models" / "broken.json";
  llmcap::testing::write_text(bad, R"({"model_type": "llama", "hidden_size": "big"})");
  CalibrationView view(nullptr);
  view.set_models_dir(dir / "models");
  ASSERT_TRUE(view.select_model(QString::fromStdString(bad.string())));
  EXPECT_FALSE(run_test_sweep(view));
  const std::string shown = view.error_text().toStdString();
  EXPECT_NE(shown.find(bad.string()), std::string::npos) << shown;
  EXPECT_NE(shown.find("hidden_size"), std::string::npos) << shown;
  EXPECT_EQ(view.profile(), nullptr);
}

TEST(CalibrationView, ShowsEachKernelBesideTheMachineBandwidth) {
  model::CalibrationProfile p;
  p.machine.cpu_model = "test CPU";
  p.machine.num_cores = 2;
  p.machine.read_bandwidth_bytes_per_s = {{1, 10e9}, {2, 20e9}};
  p.fit.threads = 2;
  model::KernelSample a;
  a.op = "matmul";
  a.format = "int8";
  a.rows = 4096;
  a.cols = 4096;
  a.batch = 1;
  a.threads = 2;
  a.bytes_per_s = 15e9;
  model::KernelSample cached = a;
  cached.cache_resident = true;  // not a memory figure: left out
  model::KernelSample one_thread = a;
  one_thread.threads = 1;  // not the fitted thread count: left out
  p.kernels = {a, cached, one_thread};
  CalibrationView view(nullptr);
  view.show_profile(p);
  ASSERT_EQ(view.model()->rowCount(), 1);
  const auto at = [&](int c) { return view.model()->item(0, c)->data(Qt::DisplayRole).toDouble(); };
  EXPECT_NEAR(at(CalibrationView::kGbPerS), 15.0, kTolerance);
  EXPECT_NEAR(at(CalibrationView::kMachineGbPerS), 20.0, kTolerance);
  EXPECT_NEAR(at(CalibrationView::kFraction), 0.75, kTolerance);
}

TEST(CalibrationView, BadProfileIsShownInPlace) {
  CalibrationView view(nullptr);
  EXPECT_FALSE(view.open_profile("/nonexistent/profile.json"));
  EXPECT_NE(view.error_text().toStdString().find("/nonexistent/profile.json"), std::string::npos);
}

}  // namespace
}  // namespace llmcap::gui
