// The one table model of a plan's answer: one row per candidate instance type. The results
// table (through a QSortFilterProxyModel) and the charts (through model mappers) read it; views
// hold no numbers (STYLE.md, habit 12).
#pragma once

#include <QAbstractTableModel>
#include <QString>
#include <cstdint>
#include <string>
#include <vector>

#include "plan/planner.h"
#include "plan/tco.h"

namespace llmcap::gui {

/// The figures of one instance type, copied from the planner's PlanRow and the TCO of its
/// fleet (plan::compute_tco, or the run document's "tco" object); nothing is computed here.
struct ResultRow {
  enum class State {
    kPending,  ///< queued or running, no figures yet
    kStale,    ///< figures of the previous input, being recomputed
    kDone,     ///< figures of the current input
  };
  std::string instance_type;
  std::string device_kind;  ///< "cpu" | "gpu"
  State state = State::kPending;
  bool feasible = false;
  int64_t num_instances = 0;
  std::string price_model;  ///< the TCO's price model ("" when no TCO was computed)
  double usd_per_hour = 0;  ///< fleet, under price_model (TCO) or the catalog price
  double usd_per_million_output_tokens = 0;
  double ttft_p50_s = 0, ttft_p90_s = 0, ttft_p99_s = 0, ttft_max_s = 0;
  double tpot_p50_s = 0, tpot_p90_s = 0, tpot_p99_s = 0, tpot_max_s = 0;
  std::string infeasible_reason;
  int64_t num_simulations = 0;
  /// Which predictor the figures assume (plan::PlanRow::predictor: the engine profile, a
  /// calibration, or the datasheet roofline); the Device column's tooltip.
  std::string predictor;
  /// The engine profile the row was priced with (plan::PlanRow::engine; "" for none).
  std::string engine;
};

/// "GPU vllm, CPU llama.cpp": the engines `rows` were priced with, per device kind ("none":
/// the datasheet roofline or a calibration), for the status line; "" without rows.
std::string engines_summary(const std::vector<ResultRow>& rows);

/// The row of `row` and, when given (feasible rows), its TCO: USD per hour and per million
/// output tokens are the TCO's, else the planner's catalog-price figures.
ResultRow to_result_row(const plan::PlanRow& row, const plan::TcoRow* tco);

class ResultsModel : public QAbstractTableModel {
  Q_OBJECT

 public:
  /// Columns. Numbers are returned under Qt::DisplayRole as doubles in SI units (seconds, USD),
  /// formatted by the view's delegate, so that model mappers read them directly; an infeasible
  /// or pending row returns no number. Columns after kReason are hidden in the table and used
  /// by the latency CDF chart.
  enum Column {
    kInstance,
    kDevice,
    kStatus,
    kFleetSize,
    kUsdPerHour,
    kUsdPerMillionOutputTokens,
    kTtftP50,
    kTtftP99,
    kTpotP50,
    kTpotP99,
    kReason,
    kTtftP90,
    kTtftMax,
    kTpotP90,
    kTpotMax,
    kNumColumns
  };
  /// A sortable value: the number, +infinity for infeasible rows, NaN-free; text for text.
  static constexpr int kSortRole = Qt::UserRole + 1;
  /// ResultRow::State as int.
  static constexpr int kStateRole = Qt::UserRole + 2;

  explicit ResultsModel(QObject* parent);

  int rowCount(const QModelIndex& parent = {}) const override;
  int columnCount(const QModelIndex& parent = {}) const override;
  QVariant data(const QModelIndex& index, int role) const override;
  QVariant headerData(int section, Qt::Orientation orientation, int role) const override;

  /// Starts a new answer for `instance_types` (in candidate order). Rows of types already
  /// shown keep their figures as kStale until replaced; new types are kPending.
  void begin(const std::vector<std::string>& instance_types,
             const std::vector<std::string>& device_kinds);
  /// Replaces the row of row.instance_type (appends it when unknown).
  void set_row(const ResultRow& row);
  /// set_row for each of `rows`, with one dataChanged over the rows replaced (so views, sort
  /// proxies and charts update once rather than once per row).
  void set_rows(const std::vector<ResultRow>& rows);
  /// Removes every row.
  void clear();
  /// Stale rows become done again: a run that failed leaves the last good answer shown.
  void restore_stale();

  const std::vector<ResultRow>& rows() const { return rows_; }
  /// Row index of `instance_type`, or -1.
  int find(const std::string& instance_type) const;
  /// Header texts change with the language.
  void retranslate();

 private:
  QVariant number(const ResultRow& r, int column) const;
  std::vector<ResultRow> rows_;
};

}  // namespace llmcap::gui
