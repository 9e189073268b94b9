#include "gui/chart_models.h"

#include <algorithm>

namespace llmcap::gui {

PointsModel::PointsModel(QObject* parent) : QAbstractTableModel(parent) {}

int PointsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int PointsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kNumColumns;
}

QVariant PointsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || role != Qt::DisplayRole || index.row() >= rowCount()) return {};
  const Point& p = rows_[static_cast<size_t>(index.row())];
  switch (index.column()) {
    case kSeries:
      return p.series;
    case kX:
      return p.x;
    case kY:
      return p.y;
    default:
      return {};
  }
}

void PointsModel::set_series(const QString& series,
                             const std::vector<std::pair<double, double>>& points) {
  const QStringList before = this->series();
  beginResetModel();
  rows_.erase(std::remove_if(rows_.begin(), rows_.end(),
                             [&](const Point& p) { return p.series == series; }),
              rows_.end());
  for (const auto& [x, y] : points) rows_.push_back({series, x, y});
  endResetModel();
  if (this->series() != before) emit seriesChanged();
}

void PointsModel::set_point(const QString& series, double x, double y) {
  const QStringList before = this->series();
  auto pts = points(series);
  auto it = std::find_if(pts.begin(), pts.end(), [x](const auto& p) { return p.first == x; });
  if (it != pts.end()) {
    it->second = y;
  } else {
    pts.emplace_back(x, y);
    std::sort(pts.begin(), pts.end());
  }
  beginResetModel();
  // Keep the series' rows together, where they were (or at the end for a new series).
  std::vector<Point> next;
  bool placed = false;
  for (const Point& p : rows_) {
    if (p.series == series) {
      if (!placed) {
        for (const auto& [px, py] : pts) next.push_back({series, px, py});
        placed = true;
      }
      continue;
    }
    next.push_back(p);
  }
  if (!placed) {
    for (const auto& [px, py] : pts) next.push_back({series, px, py});
  }
  rows_ = std::move(next);
  endResetModel();
  if (this->series() != before) emit seriesChanged();
}

void PointsModel::remove_point(const QString& series, double x) {
  const QStringList before = this->series();
  const auto it = std::find_if(rows_.begin(), rows_.end(),
                               [&](const Point& p) { return p.series == series && p.x == x; });
  if (it == rows_.end()) return;
  const int row = static_cast<int>(it - rows_.begin());
  beginRemoveRows({}, row, row);
  rows_.erase(it);
  endRemoveRows();
  if (this->series() != before) emit seriesChanged();
}

void PointsModel::clear() {
  if (rows_.empty()) return;
  beginResetModel();
  rows_.clear();
  endResetModel();
  emit seriesChanged();
}

QStringList PointsModel::series() const {
  QStringList names;
  for (const Point& p : rows_) {
    if (!names.contains(p.series)) names.push_back(p.series);
  }
  return names;
}

std::vector<std::pair<double, double>> PointsModel::points(const QString& series) const {
  std::vector<std::pair<double, double>> out;
  for (const Point& p : rows_) {
    if (p.series == series) out.emplace_back(p.x, p.y);
  }
  return out;
}

ColumnsProxy::ColumnsProxy(QAbstractItemModel* source, QList<int> columns, QObject* parent)
    : QAbstractTableModel(parent), source_(source), columns_(std::move(columns)) {
  connect(source_, &QAbstractItemModel::modelAboutToBeReset, this, [this] { beginResetModel(); });
  connect(source_, &QAbstractItemModel::modelReset, this, [this] { endResetModel(); });
  connect(source_, &QAbstractItemModel::rowsAboutToBeInserted, this,
          [this](const QModelIndex&, int first, int last) { beginInsertRows({}, first, last); });
  connect(source_, &QAbstractItemModel::rowsInserted, this, [this] { endInsertRows(); });
  connect(source_, &QAbstractItemModel::rowsAboutToBeRemoved, this,
          [this](const QModelIndex&, int first, int last) { beginRemoveRows({}, first, last); });
  connect(source_, &QAbstractItemModel::rowsRemoved, this, [this] { endRemoveRows(); });
  connect(source_, &QAbstractItemModel::layoutAboutToBeChanged, this,
          [this] { beginResetModel(); });
  connect(source_, &QAbstractItemModel::layoutChanged, this, [this] { endResetModel(); });
  connect(source_, &QAbstractItemModel::dataChanged, this,
          [this](const QModelIndex& top_left, const QModelIndex& bottom_right) {
            if (columns_.isEmpty()) return;
            emit dataChanged(index(top_left.row(), 0),
                             index(bottom_right.row(), static_cast<int>(columns_.size()) - 1));
          });
}

int ColumnsProxy::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : source_->rowCount();
}

int ColumnsProxy::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(columns_.size());
}

QVariant ColumnsProxy::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.column() >= columns_.size()) return {};
  return source_->index(index.row(), columns_[index.column()]).data(role);
}

QVariant ColumnsProxy::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal || section < 0 || section >= columns_.size()) return {};
  return source_->headerData(columns_[section], orientation, role);
}

}  // namespace llmcap::gui
