// Points of the XY charts (cost against load, latency CDF, fleet size over the day) in long
// form: one row per point, (series, x, y). Each chart series reads its own rows through a
// QSortFilterProxyModel on the series column and a QVXYModelMapper (gui/charts_view.h).
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <QStringList>
#include <utility>
#include <vector>

namespace llmcap::gui {

class PointsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  enum Column { kSeries, kX, kY, kNumColumns };

  explicit PointsModel(QObject* parent);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;

  /// Replaces the points of `series` (x ascending as given).
  void set_series(const QString& series, const std::vector<std::pair<double, double>>& points);
  /// Sets one point of `series` at `x` (replacing a point at the same x; keeps x ascending).
  void set_point(const QString& series, double x, double y);
  /// Removes the point of `series` at `x`, if any.
  void remove_point(const QString& series, double x);
  void clear();
  /// Series names, in order of first appearance.
  QStringList series() const;
  /// The points of `series`, in row order.
  std::vector<std::pair<double, double>> points(const QString& series) const;

 signals:
  /// The set of series names changed (charts add or remove series).
  void seriesChanged();

 private:
  struct Point {
    QString series;
    double x = 0;
    double y = 0;
  };
  std::vector<Point> rows_;
};

/// A read-only view of some columns of a model, for bar model mappers. Qt Charts 6.4's
/// QBarModelMapper crashes on a headerDataChanged while the model has no rows (it indexes bar
/// sets that do not exist yet); this view forwards rows and data but never header changes.
class ColumnsProxy : public QAbstractTableModel {
  Q_OBJECT

 public:
  /// Shows `columns` of `source` (not owned), in that order.
  ColumnsProxy(QAbstractItemModel* source, QList<int> columns, QObject* parent);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  /// The source's header of the column (bar set labels); changes are not forwarded.
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

 private:
  QAbstractItemModel* source_;
  QList<int> columns_;
};

}  // namespace llmcap::gui
