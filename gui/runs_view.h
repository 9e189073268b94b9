// Runs view: the run history of the results database (store/), kept live; the what-ifs of this
// session, each kept under a name ("load 2.00x, int4"); opening a run or a what-if into the
// results table and charts, and comparing any two side by side (instance type by instance
// type). What-ifs are kept in the session only, not in the database (docs/gui.md, "Runs").
#pragma once

#include <QStandardItemModel>
#include <QWidget>
#include <cstdint>
#include <nlohmann/json.hpp>

class QFileSystemWatcher;
class QLabel;
class QTimer;
class QPushButton;
class QTableView;

namespace llmcap::gui {

class RunsView : public QWidget {
  Q_OBJECT

 public:
  enum Column { kId, kKind, kName, kCreated, kSummary, kNumColumns };

  explicit RunsView(QWidget* parent);

  /// Reloads the list from the database (errors shown in place).
  void refresh();
  /// Refreshes when the database file changed since the last refresh (its and its WAL's
  /// size and modification time): a run stored by this window or by another process (an
  /// `llmcap plan` run). Called on a file watch and every kPollMs; returns whether it
  /// refreshed.
  bool check_for_changes();
  static constexpr int kPollMs = 3000;
  /// Fills the comparison table with runs `a` and `b`; false (error shown) when one cannot be
  /// read.
  bool compare(int64_t a, int64_t b);
  QStandardItemModel* runs_model() { return &runs_; }

  /// What-if columns.
  enum WhatIfColumn { kWhatIfName, kWhatIfAnswer, kWhatIfUsdPerHour, kNumWhatIfColumns };
  /// Keeps a what-if answer under `name` for this session. `document` has the shape of a run
  /// document's "results" (one object per instance type: instance_type, feasible,
  /// num_instances, usd_per_hour, infeasible_reason, ...), "answer" and, optionally,
  /// "analysis.fleet_over_day". A what-if of the same name is replaced; the newest is first.
  void keep_what_if(const QString& name, nlohmann::json document);
  QStandardItemModel* what_ifs_model() { return &what_ifs_; }
  /// Opens what-if `row` (whatIfOpenRequested); false when there is none.
  bool open_what_if(int row);
  /// Compares what-ifs `a` and `b` (rows of what_ifs_model) as compare() does two runs.
  bool compare_what_ifs(int a, int b);
  QStandardItemModel* compare_model() { return &compare_; }
  QString error_text() const;
  /// Opens stored run `id` into the table and charts (openRequested); false, with the error
  /// shown, for a run that is not a plan run or cannot be read.
  bool open(int64_t id);

 signals:
  /// The user opened a stored plan run.
  void openRequested(int64_t id, const nlohmann::json& document);
  /// The user opened a kept what-if.
  void whatIfOpenRequested(const QString& name, const nlohmann::json& document);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void retranslateUi();
  void show_error(const QString& message);
  std::vector<int64_t> selected_ids() const;
  std::vector<int> selected_what_ifs() const;
  /// Fills the comparison table with the results of `a` and `b`, labelled.
  bool compare_documents(const QString& label_a, const nlohmann::json& a, const QString& label_b,
                         const nlohmann::json& b);

  QLabel* db_label_;
  QLabel* error_label_;
  QPushButton* refresh_button_;
  QPushButton* open_button_;
  QPushButton* compare_button_;
  QTableView* runs_view_;
  QTableView* compare_view_;
  QString database_signature() const;
  QString last_signature_;
  QFileSystemWatcher* watcher_;
  QTimer* poll_timer_;
  QStandardItemModel runs_;
  QStandardItemModel compare_;
  QString compare_a_;  ///< label of the left-hand run or what-if ("run 4", "load 2.00x")
  QString compare_b_;
  QLabel* what_ifs_label_;
  QTableView* what_ifs_view_;
  QStandardItemModel what_ifs_;
  /// Kept what-ifs, newest first, parallel to what_ifs_'s rows.
  std::vector<std::pair<QString, nlohmann::json>> kept_;
};

}  // namespace llmcap::gui
