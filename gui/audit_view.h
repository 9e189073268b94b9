// Audit view: opens a claims file (docs/audit.md) and shows model::audit_claim's verdict for
// each claim, with its arithmetic (the explanation) for the selected claim.
#pragma once

#include <QStandardItemModel>
#include <QWidget>
#include <filesystem>
#include <vector>

#include "model/audit.h"
#include "model/calibration.h"

class QLabel;
class QPushButton;
class QTableView;
class QTextBrowser;

namespace llmcap::gui {

class AuditView : public QWidget {
  Q_OBJECT

 public:
  enum Column { kId, kVerdict, kClaimed, kLowerBound, kPredicted, kFactor, kNumColumns };

  AuditView(const std::filesystem::path& data_dir, QWidget* parent);

  /// Reads and audits the claims of `path`; bad input is shown in place (returns false).
  bool open_claims(const QString& path);
  /// Calibration profile for CPU predictions (null: datasheet defaults). Not owned.
  void set_profile(std::shared_ptr<const model::CalibrationProfile> profile);
  QStandardItemModel* model() { return &model_; }
  QString error_text() const;
  /// The explanation of claim `row`.
  QString explanation(int row) const;

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void retranslateUi();
  void show_error(const QString& message);

  std::filesystem::path data_dir_;
  std::shared_ptr<const model::CalibrationProfile> profile_;
  std::vector<model::ClaimAudit> audits_;
  QString file_;
  QPushButton* open_button_;
  QLabel* file_label_;
  QLabel* error_label_;
  QTableView* table_;
  QTextBrowser* explanation_;
  QStandardItemModel model_;
};

}  // namespace llmcap::gui
