// Runs view: the run history of the results database (store/), opening a run into the results
// table and charts, and comparing two runs side by side (instance type by instance type).
#pragma once

#include <QStandardItemModel>
#include <QWidget>
#include <cstdint>
#include <nlohmann/json.hpp>

class QLabel;
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
  /// Fills the comparison table with runs `a` and `b`; false (error shown) when one cannot be
  /// read.
  bool compare(int64_t a, int64_t b);
  QStandardItemModel* runs_model() { return &runs_; }
  QStandardItemModel* compare_model() { return &compare_; }
  QString error_text() const;
  /// Opens stored run `id` into the table and charts (openRequested); false, with the error
  /// shown, for a run that is not a plan run or cannot be read.
  bool open(int64_t id);

 signals:
  /// The user opened a stored plan run.
  void openRequested(int64_t id, const nlohmann::json& document);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void retranslateUi();
  void show_error(const QString& message);
  std::vector<int64_t> selected_ids() const;

  QLabel* db_label_;
  QLabel* error_label_;
  QPushButton* refresh_button_;
  QPushButton* open_button_;
  QPushButton* compare_button_;
  QTableView* runs_view_;
  QTableView* compare_view_;
  QStandardItemModel runs_;
  QStandardItemModel compare_;
  int64_t compare_a_ = 0;
  int64_t compare_b_ = 0;
};

}  // namespace llmcap::gui
