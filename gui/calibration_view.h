// Calibration view: runs the kernel sweep of `llmcap calibrate` (kernels::run_calibration and
// app::to_profile) on a worker thread, or opens a saved profile, and shows each kernel's
// bandwidth beside the machine's measured read bandwidth (table and bar chart read one model).
#pragma once

#include <QStandardItemModel>
#include <QWidget>
#include <filesystem>
#include <memory>

#include "kernels/calibrate.h"
#include "model/calibration.h"

class QCheckBox;
class QChartView;
class QComboBox;
class QLabel;
class QPushButton;
class QTableView;

namespace llmcap::gui {

class CalibrationView : public QWidget {
  Q_OBJECT

 public:
  /// Columns of model(): one row per kernel sample at the fitted thread count.
  enum Column {
    kOp,
    kFormat,
    kShape,
    kBatch,
    kThreads,
    kGbPerS,
    kMachineGbPerS,
    kFraction,
    kNumColumns
  };

  explicit CalibrationView(QWidget* parent);

  /// Lists the model configs (*.json) of `dir` in the "also time the shapes of" box, after its
  /// first entry (the sweep's shapes only), sorted by file name.
  void set_models_dir(const std::filesystem::path& dir);
  /// Selects the model config at `path` in that box (it must be listed); an empty path selects
  /// the sweep's shapes only. Returns whether it was found.
  bool select_model(const QString& path);
  /// The model config whose shapes the next calibration also times (empty: none).
  QString selected_model() const;

  /// Starts a sweep of `size` on a worker thread (calibrationFinished when done). With a
  /// selected model, the sweep also times that model's own matrix shapes in every format and
  /// its attention layout (as `llmcap calibrate --model`); a model config that cannot be read
  /// fails the run with its message shown in place.
  void start_calibration(kernels::SweepSize size);
  /// Shows a profile (from a sweep or a file).
  void show_profile(const model::CalibrationProfile& profile);
  /// Opens a profile JSON (llmcap calibrate --out); an error is shown in place.
  bool open_profile(const QString& path);
  QStandardItemModel* model() { return &model_; }
  QString error_text() const;
  /// The profile shown (null before any).
  std::shared_ptr<const model::CalibrationProfile> profile() const { return profile_; }
  bool use_for_plans() const;

 signals:
  void calibrationFinished(bool ok);
  /// The profile plans should use changed (null: datasheet defaults).
  void planProfileChanged(std::shared_ptr<const model::CalibrationProfile> profile);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void retranslateUi();
  void show_error(const QString& message);

  QPushButton* quick_button_;
  QLabel* model_label_;
  QComboBox* model_combo_;
  QPushButton* open_button_;
  QCheckBox* use_check_;
  QLabel* machine_label_;
  QLabel* error_label_;
  QTableView* table_;
  QChartView* chart_view_;
  QStandardItemModel model_;
  std::shared_ptr<const model::CalibrationProfile> profile_;
  bool running_ = false;
};

}  // namespace llmcap::gui
