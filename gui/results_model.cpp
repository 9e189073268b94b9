#include "gui/results_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>
#include <limits>
#include <set>

namespace llmcap::gui {

std::string engines_summary(const std::vector<ResultRow>& rows) {
  std::set<std::string> gpu, cpu;
  for (const ResultRow& r : rows) {
    if (r.predictor.empty()) continue;  // no deployment: nothing was priced
    (r.device_kind == "gpu" ? gpu : cpu).insert(r.engine.empty() ? "none" : r.engine);
  }
  const auto names = [](const std::set<std::string>& ids) {
    std::string s;
    for (const std::string& id : ids) s += (s.empty() ? "" : " + ") + id;
    return s;
  };
  std::string out;
  if (!gpu.empty()) out += "GPU " + names(gpu);
  if (!cpu.empty()) out += (out.empty() ? "" : ", ") + ("CPU " + names(cpu));
  return out;
}

ResultRow to_result_row(const plan::PlanRow& row, const plan::TcoRow* tco) {
  ResultRow r;
  r.instance_type = row.instance_type;
  r.device_kind = plan::row_kind_name(row);
  r.state = ResultRow::State::kDone;
  r.feasible = row.feasible;
  r.num_instances = row.num_instances;
  r.predictor = row.predictor;
  r.engine = row.engine;
  r.price_model = tco != nullptr ? tco->price_model : row.price_model;
  r.usd_per_hour = tco != nullptr ? tco->usd_per_hour : row.usd_per_hour;
  r.usd_per_million_output_tokens =
      tco != nullptr ? tco->usd_per_million_output_tokens : row.usd_per_million_output_tokens;
  const sim::Metrics& m = row.metrics;
  r.ttft_p50_s = m.ttft.p50_s;
  r.ttft_p90_s = m.ttft.p90_s;
  r.ttft_p99_s = m.ttft.p99_s;
  r.ttft_max_s = m.ttft.max_s;
  r.tpot_p50_s = m.tpot.p50_s;
  r.tpot_p90_s = m.tpot.p90_s;
  r.tpot_p99_s = m.tpot.p99_s;
  r.tpot_max_s = m.tpot.max_s;
  r.infeasible_reason = row.infeasible_reason;
  r.num_simulations = row.num_simulations;
  return r;
}

ResultsModel::ResultsModel(QObject* parent) : QAbstractTableModel(parent) {}

int ResultsModel::rowCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : static_cast<int>(rows_.size());
}

int ResultsModel::columnCount(const QModelIndex& parent) const {
  return parent.isValid() ? 0 : kNumColumns;
}

QVariant ResultsModel::number(const ResultRow& r, int column) const {
  if (r.state == ResultRow::State::kPending || !r.feasible) return {};
  switch (column) {
    case kFleetSize:
      return QVariant::fromValue<qlonglong>(r.num_instances);
    case kUsdPerHour:
      return r.usd_per_hour;
    case kUsdPerMillionOutputTokens:
      return r.usd_per_million_output_tokens;
    case kTtftP50:
      return r.ttft_p50_s;
    case kTtftP99:
      return r.ttft_p99_s;
    case kTpotP50:
      return r.tpot_p50_s;
    case kTpotP99:
      return r.tpot_p99_s;
    case kTtftP90:
      return r.ttft_p90_s;
    case kTtftMax:
      return r.ttft_max_s;
    case kTpotP90:
      return r.tpot_p90_s;
    case kTpotMax:
      return r.tpot_max_s;
    default:
      return {};
  }
}

QVariant ResultsModel::data(const QModelIndex& index, int role) const {
  if (!index.isValid() || index.row() >= rowCount() || index.column() >= kNumColumns) return {};
  const ResultRow& r = rows_[static_cast<size_t>(index.row())];
  const int c = index.column();
  if (role == kStateRole) return static_cast<int>(r.state);
  if (role == Qt::DisplayRole || role == kSortRole || role == Qt::ToolTipRole) {
    switch (c) {
      case kInstance:
        return QString::fromStdString(r.instance_type);
      case kDevice:
        if (role == Qt::ToolTipRole) {
          return r.predictor.empty() ? QVariant() : QString::fromStdString(r.predictor);
        }
        return QString::fromStdString(r.device_kind).toUpper();
      case kStatus:
        if (role == kSortRole) {
          return r.state == ResultRow::State::kPending ? 2 : (r.feasible ? 0 : 1);
        }
        if (r.state == ResultRow::State::kPending) return tr("running…");
        return r.feasible ? tr("feasible") : tr("infeasible");
      case kReason:
        if (r.state == ResultRow::State::kPending) return {};
        return QString::fromStdString(r.infeasible_reason);
      default: {
        const QVariant v = number(r, c);
        if (role == kSortRole && !v.isValid()) return std::numeric_limits<double>::infinity();
        if (role == Qt::ToolTipRole) {
          return r.feasible ? QVariant() : QString::fromStdString(r.infeasible_reason);
        }
        return v;
      }
    }
  }
  if (role == Qt::ForegroundRole) {
    if (r.state == ResultRow::State::kStale) return QBrush(QColor(0x88, 0x88, 0x88));
    if (r.state == ResultRow::State::kDone && !r.feasible) return QBrush(QColor(0xa0, 0x30, 0x30));
  }
  if (role == Qt::FontRole && r.state == ResultRow::State::kStale) {
    QFont f;
    f.setItalic(true);
    return f;
  }
  if (role == Qt::TextAlignmentRole && c >= kFleetSize && c != kReason) {
    return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
  }
  return {};
}

QVariant ResultsModel::headerData(int section, Qt::Orientation orientation, int role) const {
  if (orientation != Qt::Horizontal)
    return QAbstractTableModel::headerData(section, orientation, role);
  if (role != Qt::DisplayRole) return {};
  switch (section) {
    case kInstance:
      return tr("Instance type");
    case kDevice:
      return tr("Device");
    case kStatus:
      return tr("Status");
    case kFleetSize:
      return tr("Fleet size");
    case kUsdPerHour:
      return tr("USD/hour");
    case kUsdPerMillionOutputTokens:
      return tr("USD per M output tokens");
    case kTtftP50:
      return tr("TTFT p50");
    case kTtftP99:
      return tr("TTFT p99");
    case kTpotP50:
      return tr("TPOT p50");
    case kTpotP99:
      return tr("TPOT p99");
    case kReason:
      return tr("Reason (infeasible)");
    case kTtftP90:
      return tr("TTFT p90");
    case kTtftMax:
      return tr("TTFT max");
    case kTpotP90:
      return tr("TPOT p90");
    case kTpotMax:
      return tr("TPOT max");
    default:
      return {};
  }
}

void ResultsModel::begin(const std::vector<std::string>& instance_types,
                         const std::vector<std::string>& device_kinds) {
  std::vector<ResultRow> next;
  next.reserve(instance_types.size());
  for (size_t i = 0; i < instance_types.size(); ++i) {
    const int old = find(instance_types[i]);
    ResultRow r;
    if (old >= 0) {
      r = rows_[static_cast<size_t>(old)];
      if (r.state != ResultRow::State::kPending) r.state = ResultRow::State::kStale;
    } else {
      r.instance_type = instance_types[i];
      r.device_kind = i < device_kinds.size() ? device_kinds[i] : "";
      r.state = ResultRow::State::kPending;
    }
    next.push_back(std::move(r));
  }
  beginResetModel();
  rows_ = std::move(next);
  endResetModel();
}

void ResultsModel::set_row(const ResultRow& row) {
  const int i = find(row.instance_type);
  if (i < 0) {
    const int n = rowCount();
    beginInsertRows({}, n, n);
    rows_.push_back(row);
    endInsertRows();
    return;
  }
  rows_[static_cast<size_t>(i)] = row;
  emit dataChanged(index(i, 0), index(i, kNumColumns - 1));
}

void ResultsModel::set_rows(const std::vector<ResultRow>& rows) {
  int first = -1;
  int last = -1;
  for (const ResultRow& row : rows) {
    const int i = find(row.instance_type);
    if (i < 0) {
      set_row(row);
      continue;
    }
    rows_[static_cast<size_t>(i)] = row;
    first = first < 0 ? i : std::min(first, i);
    last = std::max(last, i);
  }
  if (first >= 0) emit dataChanged(index(first, 0), index(last, kNumColumns - 1));
}

void ResultsModel::clear() {
  beginResetModel();
  rows_.clear();
  endResetModel();
}

void ResultsModel::restore_stale() {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].state != ResultRow::State::kStale) continue;
    rows_[i].state = ResultRow::State::kDone;
    emit dataChanged(index(static_cast<int>(i), 0), index(static_cast<int>(i), kNumColumns - 1));
  }
}

int ResultsModel::find(const std::string& instance_type) const {
  for (size_t i = 0; i < rows_.size(); ++i) {
    if (rows_[i].instance_type == instance_type) return static_cast<int>(i);
  }
  return -1;
}

void ResultsModel::retranslate() {
  emit headerDataChanged(Qt::Horizontal, 0, kNumColumns - 1);
  if (!rows_.empty()) emit dataChanged(index(0, 0), index(rowCount() - 1, kNumColumns - 1));
}

}  // namespace llmcap::gui
