#include "gui/charts_view.h"

#include <QBarCategoryAxis>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QEvent>
#include <QGridLayout>
#include <QHBarModelMapper>
#include <QHorizontalBarSeries>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QPen>
#include <QSortFilterProxyModel>
#include <QToolTip>
#include <QVBarModelMapper>
#include <QVBoxLayout>
#include <QVXYModelMapper>
#include <QValueAxis>
#include <algorithm>
#include <cmath>

namespace llmcap::gui {
namespace {

constexpr int kCostByType = 0;
constexpr int kCostVsLoad = 1;
constexpr int kLatencyCdf = 2;
constexpr int kFleetOverDay = 3;

QValueAxis* value_axis(QChart* chart, Qt::Orientation o) {
  const auto axes = chart->axes(o);
  for (QAbstractAxis* a : axes) {
    if (auto* v = qobject_cast<QValueAxis*>(a)) return v;
  }
  return nullptr;
}

}  // namespace

ChartsView::ChartsView(ResultsModel* results, QWidget* parent)
    : QWidget(parent),
      results_(results),
      cost_vs_load_(this),
      latency_cdf_(this),
      fleet_over_day_(this) {
  auto* grid = new QGridLayout(this);
  grid->setContentsMargins(0, 0, 0, 0);
  for (int i = 0; i < 4; ++i) {
    auto* chart = new QChart;
    chart->legend()->setVisible(i != kCostByType);
    chart->legend()->setAlignment(Qt::AlignRight);
    QFont legend_font = chart->legend()->font();
    legend_font.setPointSizeF(std::max(6.0, legend_font.pointSizeF() * 0.85));
    chart->legend()->setFont(legend_font);
    chart->setMargins(QMargins(4, 4, 4, 4));
    views_[i] = new QChartView(chart, this);  // the view owns the chart
    views_[i]->setRenderHint(QPainter::Antialiasing);
    views_[i]->setMinimumSize(180, 170);
  }
  // Cost by instance type: bars read the results model's USD/hour column.
  {
    QChart* chart = views_[kCostByType]->chart();
    auto* series = new QHorizontalBarSeries(chart);
    // Read top down: cheapest first, infeasible last (their sort value is +infinity), as the
    // table sorts. A horizontal bar chart draws its first row at the bottom, so the rows are
    // in descending order.
    bar_order_ = new QSortFilterProxyModel(this);
    bar_order_->setSourceModel(results_);
    bar_order_->setSortRole(ResultsModel::kSortRole);
    bar_order_->setDynamicSortFilter(true);
    bar_order_->sort(ResultsModel::kUsdPerHour, Qt::DescendingOrder);
    auto* columns = new ColumnsProxy(bar_order_, {ResultsModel::kUsdPerHour}, series);
    auto* mapper = new QVBarModelMapper(series);
    mapper->setFirstBarSetColumn(0);  // the USD/hour column
    mapper->setLastBarSetColumn(0);
    mapper->setFirstRow(0);
    mapper->setSeries(series);
    mapper->setModel(columns);
    chart->addSeries(series);
    auto* categories = new QBarCategoryAxis(chart);
    QFont small = categories->labelsFont();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() * 0.8));
    categories->setLabelsFont(small);
    categories->setTruncateLabels(false);  // instance ids are the point of this chart
    // No line between two types' bars: with every catalog type (89) they were a grey fill
    // of their own, and drawing them took most of a repaint's time (docs/gui.md).
    categories->setGridLineVisible(false);
    auto* values = new QValueAxis(chart);
    values->setLabelFormat("%.0f");
    chart->addAxis(categories, Qt::AlignLeft);
    chart->addAxis(values, Qt::AlignBottom);
    series->attachAxis(categories);
    series->attachAxis(values);
    connect(series, &QHorizontalBarSeries::hovered, this, [this](bool on, int index, QBarSet*) {
      if (!on || index < 0 || index >= bar_order_->rowCount()) return;
      const int source_row = bar_order_->mapToSource(bar_order_->index(index, 0)).row();
      if (source_row < 0) return;
      const ResultRow& r = results_->rows()[static_cast<size_t>(source_row)];
      QToolTip::showText(QCursor::pos(),
                         r.feasible ? tr("%1: %2 instances, %3 USD/hour")
                                          .arg(QString::fromStdString(r.instance_type))
                                          .arg(r.num_instances)
                                          .arg(r.usd_per_hour, 0, 'f', 2)
                                    : tr("%1: infeasible: %2")
                                          .arg(QString::fromStdString(r.instance_type),
                                               QString::fromStdString(r.infeasible_reason)));
    });
  }
  for (int i : {kCostVsLoad, kLatencyCdf, kFleetOverDay}) {
    QChart* chart = views_[i]->chart();
    auto* x = new QValueAxis(chart);
    auto* y = new QValueAxis(chart);
    chart->addAxis(x, Qt::AlignBottom);
    chart->addAxis(y, Qt::AlignLeft);
  }
  {
    QChart* chart = views_[kLatencyCdf]->chart();
    slo_line_ = new QLineSeries(chart);
    QPen pen(QColor(200, 30, 30));
    pen.setStyle(Qt::DashLine);
    pen.setWidthF(1.5);
    slo_line_->setPen(pen);
    chart->addSeries(slo_line_);
    slo_line_->attachAxis(value_axis(chart, Qt::Horizontal));
    slo_line_->attachAxis(value_axis(chart, Qt::Vertical));
  }
  cdf_metric_ = new QComboBox(this);
  cdf_metric_->addItem(QString(), "ttft");
  cdf_metric_->addItem(QString(), "tpot");
  auto* cdf_box = new QWidget(this);
  auto* cdf_layout = new QVBoxLayout(cdf_box);
  cdf_layout->setContentsMargins(0, 0, 0, 0);
  cdf_layout->addWidget(cdf_metric_);
  cdf_layout->addWidget(views_[kLatencyCdf], 1);
  // The bars get the full height (one label per instance type); the CDF too (one legend
  // entry per feasible type); the two smaller line charts share the middle column.
  grid->addWidget(views_[kCostByType], 0, 0, 2, 1);
  grid->addWidget(views_[kCostVsLoad], 0, 1);
  grid->addWidget(views_[kFleetOverDay], 1, 1);
  grid->addWidget(cdf_box, 0, 2, 2, 1);
  grid->setColumnStretch(0, 5);
  grid->setColumnStretch(1, 4);
  grid->setColumnStretch(2, 5);

  connect(results_, &QAbstractItemModel::modelReset, this, [this] {
    rebuild_bar_axis();
    rebuild_cdf_from_table();
  });
  connect(results_, &QAbstractItemModel::rowsInserted, this, [this] {
    rebuild_bar_axis();
    rebuild_cdf_from_table();
  });
  connect(results_, &QAbstractItemModel::dataChanged, this, [this] {
    rebuild_bar_axis();
    rebuild_cdf_from_table();
  });
  connect(&cost_vs_load_, &PointsModel::seriesChanged, this,
          [this] { sync_series(kCostVsLoad, &cost_vs_load_); });
  connect(&latency_cdf_, &PointsModel::seriesChanged, this,
          [this] { sync_series(kLatencyCdf, &latency_cdf_); });
  connect(&fleet_over_day_, &PointsModel::seriesChanged, this,
          [this] { sync_series(kFleetOverDay, &fleet_over_day_); });
  connect(&cost_vs_load_, &QAbstractItemModel::modelReset, this,
          [this] { fit_axes(kCostVsLoad, &cost_vs_load_); });
  connect(&latency_cdf_, &QAbstractItemModel::modelReset, this,
          [this] { fit_axes(kLatencyCdf, &latency_cdf_); });
  connect(&fleet_over_day_, &QAbstractItemModel::modelReset, this,
          [this] { fit_axes(kFleetOverDay, &fleet_over_day_); });
  connect(cdf_metric_, &QComboBox::activated, this, [this] {
    analysis_cdf_ = false;
    rebuild_cdf_from_table();
    update_slo_line();
  });
  connect(bar_order_, &QAbstractItemModel::layoutChanged, this, [this] { rebuild_bar_axis(); });
  connect(bar_order_, &QAbstractItemModel::modelReset, this, [this] { rebuild_bar_axis(); });
  retranslateUi();
}

QChart* ChartsView::chart(int i) const { return views_[i]->chart(); }

void ChartsView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslateUi();
  QWidget::changeEvent(event);
}

void ChartsView::update_titles() {
  views_[kCostByType]->chart()->setTitle(tr("Fleet cost (USD/hour; ✗ infeasible)"));
  views_[kCostVsLoad]->chart()->setTitle(
      cost_vs_load_.rowCount() > 0
          ? tr("Fleet cost against load (USD/hour)")
          : tr("Fleet cost against load (USD/hour): each load planned adds a point"));
  views_[kLatencyCdf]->chart()->setTitle(tr("Latency CDF (fraction of requests)"));
  views_[kFleetOverDay]->chart()->setTitle(
      fleet_over_day_.rowCount() > 0
          ? tr("Fleet size over the day (%n cheapest types)", "", kFleetSeriesShown)
          : tr("Fleet size over the day: shown after a run"));
}

void ChartsView::retranslateUi() {
  update_titles();
  cdf_metric_->setItemText(0, tr("TTFT (s)"));
  cdf_metric_->setItemText(1, tr("TPOT (s)"));
  if (auto* x = value_axis(views_[kCostVsLoad]->chart(), Qt::Horizontal))
    x->setTitleText(tr("load multiplier"));
  if (auto* x = value_axis(views_[kLatencyCdf]->chart(), Qt::Horizontal)) {
    x->setTitleText(cdf_metric_->currentIndex() == 0 ? tr("TTFT (s)") : tr("TPOT (s)"));
  }
  if (auto* x = value_axis(views_[kFleetOverDay]->chart(), Qt::Horizontal))
    x->setTitleText(tr("hour of day"));
  rebuild_bar_axis();
  update_slo_line();
}

void ChartsView::rebuild_bar_axis() {
  QChart* chart = views_[kCostByType]->chart();
  QStringList labels;
  double max_cost = 0;
  for (int i = 0; i < bar_order_->rowCount(); ++i) {
    const int source_row = bar_order_->mapToSource(bar_order_->index(i, 0)).row();
    const ResultRow& r = results_->rows()[static_cast<size_t>(source_row)];
    QString label = QString::fromStdString(r.instance_type);
    if (r.state != ResultRow::State::kPending && !r.feasible) label += QStringLiteral(" ✗");
    labels << label;
    if (r.feasible) max_cost = std::max(max_cost, r.usd_per_hour);
  }
  for (QAbstractAxis* a : chart->axes(Qt::Vertical)) {
    if (auto* c = qobject_cast<QBarCategoryAxis*>(a)) {
      if (c->categories() != labels) {
        c->clear();
        c->append(labels);
      }
    }
  }
  if (auto* v = value_axis(chart, Qt::Horizontal)) {
    v->setRange(0, max_cost > 0 ? max_cost * 1.05 : 1.0);
    v->applyNiceNumbers();
  }
}

void ChartsView::rebuild_cdf_from_table() {
  if (analysis_cdf_) return;
  const bool ttft = cdf_metric_->currentData().toString() == "ttft";
  // The table's quantiles as CDF points: (p50, 0.5), (p90, 0.9), (p99, 0.99), (max, 1).
  QStringList keep;
  for (int row = 0; row < results_->rowCount(); ++row) {
    const ResultRow& r = results_->rows()[static_cast<size_t>(row)];
    if (r.state != ResultRow::State::kDone || !r.feasible) continue;
    const int c50 = ttft ? ResultsModel::kTtftP50 : ResultsModel::kTpotP50;
    const int c90 = ttft ? ResultsModel::kTtftP90 : ResultsModel::kTpotP90;
    const int c99 = ttft ? ResultsModel::kTtftP99 : ResultsModel::kTpotP99;
    const int cmax = ttft ? ResultsModel::kTtftMax : ResultsModel::kTpotMax;
    auto at = [&](int c) { return results_->index(row, c).data().toDouble(); };
    const QString name = QString::fromStdString(r.instance_type);
    keep << name;
    const std::vector<std::pair<double, double>> pts = {
        {at(c50), 0.5}, {at(c90), 0.9}, {at(c99), 0.99}, {at(cmax), 1.0}};
    if (latency_cdf_.points(name) != pts) latency_cdf_.set_series(name, pts);
  }
  for (const QString& s : latency_cdf_.series()) {
    if (!keep.contains(s)) latency_cdf_.set_series(s, {});
  }
}

void ChartsView::sync_series(int chart_index, PointsModel* points) {
  QChart* chart = views_[chart_index]->chart();
  std::map<QString, QSortFilterProxyModel*>& proxies = proxies_[chart_index];
  const QStringList names = points->series();
  // Remove series that are gone.
  for (auto it = proxies.begin(); it != proxies.end();) {
    if (names.contains(it->first)) {
      ++it;
      continue;
    }
    for (QAbstractSeries* s : chart->series()) {
      if (s->name() == it->first) {
        chart->removeSeries(s);
        s->deleteLater();
      }
    }
    it->second->deleteLater();
    it = proxies.erase(it);
  }
  QValueAxis* x = value_axis(chart, Qt::Horizontal);
  QValueAxis* y = value_axis(chart, Qt::Vertical);
  for (const QString& name : names) {
    if (proxies.count(name) != 0) continue;
    auto* proxy = new QSortFilterProxyModel(views_[chart_index]);
    proxy->setSourceModel(points);
    proxy->setFilterKeyColumn(PointsModel::kSeries);
    proxy->setFilterFixedString(name);
    auto* series = new QLineSeries(chart);
    series->setName(name);
    series->setPointsVisible(true);
    auto* mapper = new QVXYModelMapper(series);
    mapper->setXColumn(PointsModel::kX);
    mapper->setYColumn(PointsModel::kY);
    mapper->setSeries(series);
    mapper->setModel(proxy);
    chart->addSeries(series);
    series->attachAxis(x);
    series->attachAxis(y);
    proxies[name] = proxy;
  }
  fit_axes(chart_index, points);
}

void ChartsView::fit_axes(int chart_index, PointsModel* points) {
  update_titles();
  QChart* chart = views_[chart_index]->chart();
  QValueAxis* x = value_axis(chart, Qt::Horizontal);
  QValueAxis* y = value_axis(chart, Qt::Vertical);
  if (x == nullptr || y == nullptr) return;
  double x0 = INFINITY, x1 = -INFINITY, y0 = INFINITY, y1 = -INFINITY;
  for (int r = 0; r < points->rowCount(); ++r) {
    const double px = points->index(r, PointsModel::kX).data().toDouble();
    const double py = points->index(r, PointsModel::kY).data().toDouble();
    x0 = std::min(x0, px);
    x1 = std::max(x1, px);
    y0 = std::min(y0, py);
    y1 = std::max(y1, py);
  }
  if (!(x1 >= x0)) {
    x->setRange(0, 1);
    y->setRange(0, 1);
    return;
  }
  if (chart_index == kLatencyCdf) {
    x1 = std::max(x1, slo_line_s());  // the SLO line stays in view
    x->setRange(0, x1 > 0 ? x1 * 1.05 : 1);
    y->setRange(0, 1);
  } else {
    x->setRange(chart_index == kFleetOverDay ? 0 : x0 * 0.9,
                chart_index == kFleetOverDay ? 24 : x1 * 1.05 + (x1 == x0 ? 0.1 : 0));
    if (chart_index == kCostVsLoad) {
      x->setLabelFormat("%.1f");
      x->setTickCount(x1 > x0 ? 4 : 3);
    }
    y->setRange(0, y1 > 0 ? y1 * 1.1 : 1);
  }
  y->applyNiceNumbers();
  if (chart_index == kFleetOverDay) {
    x->setLabelFormat("%.0f");
    x->setTickCount(5);  // 0, 6, 12, 18, 24 h
    y->setLabelFormat("%.0f");
  }
}

bool ChartsView::show_analysis(const nlohmann::json& document) {
  if (!document.contains("analysis") || !document["analysis"].is_object()) return false;
  const nlohmann::json& a = document["analysis"];
  if (a.contains("cost_vs_load") && a["cost_vs_load"].is_array() && !a["cost_vs_load"].empty()) {
    analysis_load_ = true;
    cost_vs_load_.clear();
    for (const nlohmann::json& s : a["cost_vs_load"]) {
      std::vector<std::pair<double, double>> pts;
      for (const nlohmann::json& p : s.value("points", nlohmann::json::array())) {
        if (p.value("feasible", false)) {
          pts.emplace_back(p.value("load_multiplier", 0.0), p.value("usd_per_hour", 0.0));
        }
      }
      cost_vs_load_.set_series(QString::fromStdString(s.value("instance_type", std::string())),
                               pts);
    }
  }
  if (a.contains("latency_cdf") && a["latency_cdf"].is_array() && !a["latency_cdf"].empty()) {
    analysis_cdf_ = true;
    const std::string metric = cdf_metric_->currentData().toString().toStdString();
    latency_cdf_.clear();
    for (const nlohmann::json& s : a["latency_cdf"]) {
      if (s.value("metric", std::string()) != metric) continue;
      std::vector<std::pair<double, double>> pts;
      for (const nlohmann::json& p : s.value("points", nlohmann::json::array())) {
        pts.emplace_back(p.value("latency_s", 0.0), p.value("fraction", 0.0));
      }
      latency_cdf_.set_series(QString::fromStdString(s.value("instance_type", std::string())), pts);
    }
  }
  if (a.contains("fleet_over_day") && a["fleet_over_day"].is_array()) {
    fleet_over_day_.clear();
    analysis_fleet_ = true;
    for (const nlohmann::json& s : a["fleet_over_day"]) {
      if (!fleet_shown(s.value("instance_type", std::string()))) continue;
      std::vector<std::pair<double, double>> pts;
      const nlohmann::json& h = s.value("hourly_instances", nlohmann::json::array());
      for (size_t i = 0; i < h.size(); ++i) {
        pts.emplace_back(static_cast<double>(i), h[i].is_number() ? h[i].get<double>() : 0.0);
      }
      fleet_over_day_.set_series(QString::fromStdString(s.value("instance_type", std::string())),
                                 pts);
    }
  }
  return analysis_load_;
}

void ChartsView::clear_analysis() {
  if (analysis_load_) cost_vs_load_.clear();
  analysis_load_ = false;
  analysis_cdf_ = false;
  analysis_fleet_ = false;
  fleet_over_day_.clear();
  rebuild_cdf_from_table();
}

bool ChartsView::fleet_shown(const std::string& instance_type) const {
  int num_feasible = 0;
  for (int i = bar_order_->rowCount() - 1; i >= 0 && num_feasible < kFleetSeriesShown; --i) {
    const int source_row = bar_order_->mapToSource(bar_order_->index(i, 0)).row();
    const ResultRow& r = results_->rows()[static_cast<size_t>(source_row)];
    if (!r.feasible) continue;
    ++num_feasible;
    if (r.instance_type == instance_type) return true;
  }
  return num_feasible == 0;  // nothing to rank by (no rows yet): every series shows
}

void ChartsView::show_fleet_over_day(const std::vector<plan::FleetOverDay>& fleets) {
  fleet_over_day_.clear();  // a newer answer than any document shown
  analysis_fleet_ = false;
  for (const plan::FleetOverDay& f : fleets) {
    if (!fleet_shown(f.instance_type)) continue;
    std::vector<std::pair<double, double>> pts;
    for (size_t h = 0; h < f.hourly_instances.size(); ++h) {
      pts.emplace_back(static_cast<double>(h), static_cast<double>(f.hourly_instances[h]));
    }
    fleet_over_day_.set_series(QString::fromStdString(f.instance_type), pts);
  }
}

void ChartsView::set_slo(double ttft_p99_s, double tpot_p99_s) {
  slo_ttft_p99_s_ = ttft_p99_s;
  slo_tpot_p99_s_ = tpot_p99_s;
  update_slo_line();
}

double ChartsView::slo_line_s() const {
  return slo_line_->count() > 0 ? slo_line_->at(0).x() : 0.0;
}

QAbstractItemModel* ChartsView::bar_order() const { return bar_order_; }

void ChartsView::update_slo_line() {
  const double bound =
      cdf_metric_->currentData().toString() == "ttft" ? slo_ttft_p99_s_ : slo_tpot_p99_s_;
  slo_line_->clear();
  if (bound > 0) {
    slo_line_->append(bound, 0.0);
    slo_line_->append(bound, 1.0);
  }
  slo_line_->setName(bound > 0 ? tr("p99 SLO %1 s").arg(bound, 0, 'g', 3) : QString());
  if (QLegend* legend = views_[kLatencyCdf]->chart()->legend()) {
    for (QLegendMarker* m : legend->markers(slo_line_)) m->setVisible(bound > 0);
  }
  fit_axes(kLatencyCdf, &latency_cdf_);
}

void ChartsView::add_load_point(double load_multiplier) {
  if (analysis_load_) {
    cost_vs_load_.clear();
    analysis_load_ = false;
  }
  for (int row = 0; row < results_->rowCount(); ++row) {
    const ResultRow& r = results_->rows()[static_cast<size_t>(row)];
    if (r.state != ResultRow::State::kDone) continue;
    const QString name = QString::fromStdString(r.instance_type);
    if (r.feasible) {
      cost_vs_load_.set_point(name, load_multiplier,
                              results_->index(row, ResultsModel::kUsdPerHour).data().toDouble());
    } else {
      cost_vs_load_.remove_point(name, load_multiplier);
    }
  }
}

}  // namespace llmcap::gui
