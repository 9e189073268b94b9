// The scenario panel: model, workload, SLO, candidate instance types and their (editable)
// prices. It shows a ScenarioDraft and reports edits as signals; the main window applies them
// to the draft, validates, and calls show_error() next to the field when the edit is refused.
#pragma once

#include <QStandardItemModel>
#include <QWidget>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "gui/scenario_draft.h"
#include "model/hardware.h"

class QComboBox;
class QDoubleSpinBox;
class QFormLayout;
class QGroupBox;
class QLabel;
class QLineEdit;
class QPushButton;
class QSpinBox;
class QTableView;

namespace llmcap::gui {

class ScenarioPanel : public QWidget {
  Q_OBJECT

 public:
  /// Where an error is shown.
  enum class Field { kFile, kModel, kWorkload, kSlo, kPrices };

  ScenarioPanel(const std::filesystem::path& models_dir, QWidget* parent);

  /// Shows `draft` (its values; the catalog gives the candidates' devices and prices).
  void show_draft(const ScenarioDraft& draft, const model::Catalog& catalog);
  /// Shows `message` in red next to `field` ("" clears it).
  void show_error(Field field, const QString& message);
  void clear_errors();
  /// The text of the error shown at `field` ("" when none), for tests.
  QString error_text(Field field) const;
  /// The candidates-and-prices model (column kPriceColumn holds USD per hour), for tests.
  QStandardItemModel* prices_model() { return &prices_; }
  static constexpr int kUseColumn = 0;
  static constexpr int kIdColumn = 1;
  static constexpr int kDeviceColumn = 2;
  static constexpr int kPriceModelColumn = 3;
  static constexpr int kPriceColumn = 4;

 signals:
  void modelChosen(const QString& config_json);
  void workloadEdited(const nlohmann::json& workload);
  void sloEdited(double ttft_p99_s, double tpot_p99_s);
  void candidatesEdited(const std::vector<std::string>& ids);
  /// A price typed in the table: `text` as typed (the window parses and validates it).
  void priceEdited(const QString& instance, const QString& price_model, const QString& text);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void retranslateUi();
  void emit_workload();
  void on_price_item_changed(QStandardItem* item);
  void update_workload_visibility();
  QLabel* error_label(Field field) const;

  std::filesystem::path models_dir_;
  bool loading_ = false;
  nlohmann::json workload_;  ///< the workload object shown (edits start from it)

  QLabel* file_label_;
  QGroupBox* model_box_;
  QComboBox* model_combo_;
  QPushButton* model_browse_;
  QLabel* model_error_;
  QGroupBox* workload_box_;
  QFormLayout* workload_form_;
  QLabel* kind_label_;
  QComboBox* kind_combo_;
  QLabel* path_label_;
  QLineEdit* path_edit_;
  QPushButton* path_browse_;
  QLabel* rate_label_;
  QDoubleSpinBox* rate_spin_;
  QLabel* duration_label_;
  QDoubleSpinBox* duration_spin_;
  QLabel* cv_label_;
  QDoubleSpinBox* cv_spin_;
  QLabel* users_label_;
  QSpinBox* users_spin_;
  QLabel* think_label_;
  QDoubleSpinBox* think_spin_;
  QLabel* workload_error_;
  QGroupBox* slo_box_;
  QLabel* ttft_label_;
  QDoubleSpinBox* ttft_spin_;
  QLabel* tpot_label_;
  QDoubleSpinBox* tpot_spin_;
  QLabel* slo_error_;
  QGroupBox* prices_box_;
  QTableView* prices_view_;
  QStandardItemModel prices_;
  QLabel* prices_error_;
  QLabel* file_error_;
};

}  // namespace llmcap::gui
