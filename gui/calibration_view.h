// Calibration view: runs the kernel sweep of `llmcap calibrate` (kernels::run_calibration and
// cli::to_profile) on a worker thread, or opens a saved profile, and shows each kernel's
// bandwidth beside the machine's measured read bandwidth (table and bar chart read one model).
#pragma once

#include <QStandardItemModel>
#include <QWidget>
#include <memory>

#include "kernels/calibrate.h"
#include "model/calibration.h"

class QCheckBox;
class QChartView;
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

  /// Starts a sweep of `size` on a worker thread (calibrationFinished when done).
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
