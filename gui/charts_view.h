// The four charts of a plan: cost by instance type (bars read ResultsModel through a
// QVBarModelMapper), cost against load, latency CDFs and fleet size over the day (lines read
// PointsModels through one QSortFilterProxyModel + QVXYModelMapper per series). The charts
// hold no numbers of their own.
#pragma once

#include <QString>
#include <QWidget>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>

#include "gui/chart_models.h"
#include "gui/results_model.h"
#include "plan/fleet_over_day.h"

class QChart;
class QChartView;
class QLabel;
class QSortFilterProxyModel;
class QComboBox;
class QLineSeries;
class QAbstractItemModel;

namespace llmcap::gui {

class ChartsView : public QWidget {
  Q_OBJECT

 public:
  ChartsView(ResultsModel* results, QWidget* parent);

  /// Points of the line charts.
  PointsModel* cost_vs_load() { return &cost_vs_load_; }
  PointsModel* latency_cdf() { return &latency_cdf_; }
  PointsModel* fleet_over_day() { return &fleet_over_day_; }

  /// Fills the line charts from a run document's "analysis" (docs/run-document.md) where it
  /// has the key; the latency CDFs fall back to the results table's quantiles otherwise.
  /// Returns whether the document had cost-against-load points.
  bool show_analysis(const nlohmann::json& document);
  /// Forgets the analysis (the table's quantiles feed the CDF again; cost against load keeps
  /// the points of what-if runs).
  void clear_analysis();
  /// Records one what-if answer at `load_multiplier` (feasible rows of the results model) as
  /// points of the cost-against-load chart, unless a run document's analysis is shown.
  void add_load_point(double load_multiplier);

  /// Shows `fleets` (plan::fleet_over_day of a what-if's rows) in the fleet-over-the-day
  /// chart, unless a run document's analysis is shown.
  void show_fleet_over_day(const std::vector<plan::FleetOverDay>& fleets);
  /// The scenario's p99 SLO bounds, seconds (0: none, e.g. per-class SLOs): the latency CDF
  /// draws a vertical line at the bound of the metric shown.
  void set_slo(double ttft_p99_s, double tpot_p99_s);
  /// The SLO line's x (seconds; 0 when none is drawn), for tests.
  double slo_line_s() const;

  /// The chart objects, for tests: 0 cost by type, 1 cost vs load, 2 latency CDF, 3 fleet.
  QChart* chart(int i) const;
  /// The bars' rows, bottom to top: the results sorted by USD per hour, infeasible first, then
  /// the dearest; read top down, the chart lists the cheapest first and the infeasible last.
  QAbstractItemModel* bar_order() const;
  /// How many of the cheapest feasible types the fleet-over-the-day chart shows.
  static constexpr int kFleetSeriesShown = 5;

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void retranslateUi();
  void update_titles();
  void rebuild_bar_axis();
  void rebuild_cdf_from_table();
  void sync_series(int chart_index, PointsModel* points);
  void fit_axes(int chart_index, PointsModel* points);
  void update_slo_line();
  /// Whether `instance_type` is among the kFleetSeriesShown cheapest feasible rows (true for
  /// every type while the results have no feasible row).
  bool fleet_shown(const std::string& instance_type) const;

  ResultsModel* results_;
  PointsModel cost_vs_load_;
  PointsModel latency_cdf_;
  PointsModel fleet_over_day_;
  bool analysis_cdf_ = false;
  bool analysis_load_ = false;
  bool analysis_fleet_ = false;
  QSortFilterProxyModel* bar_order_ = nullptr;
  double slo_ttft_p99_s_ = 0;
  double slo_tpot_p99_s_ = 0;
  QLineSeries* slo_line_ = nullptr;  ///< owned by the CDF chart
  QChartView* views_[4] = {};
  QLabel* empty_labels_[4] = {};
  QComboBox* cdf_metric_;
  /// Per line chart: series name -> its filter proxy (owned by the chart view's widget tree).
  std::map<QString, QSortFilterProxyModel*> proxies_[4];
};

}  // namespace llmcap::gui
