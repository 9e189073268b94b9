#include "gui/audit_view.h"

#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTextBrowser>
#include <QVBoxLayout>
#include <exception>

#include "model/hardware.h"

namespace llmcap::gui {
namespace {

QStandardItem* seconds_item(const std::optional<double>& s) {
  auto* item = new QStandardItem;
  if (s) item->setData(*s * 1e3, Qt::DisplayRole);  // shown in ms (header says so)
  item->setEditable(false);
  return item;
}

}  // namespace

AuditView::AuditView(const std::filesystem::path& data_dir, QWidget* parent)
    : QWidget(parent), data_dir_(data_dir), model_(this) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  open_button_ = new QPushButton(this);
  file_label_ = new QLabel(this);
  top->addWidget(open_button_);
  top->addWidget(file_label_, 1);
  layout->addLayout(top);
  error_label_ = new QLabel(this);
  error_label_->setStyleSheet("color: #b00020;");
  error_label_->setWordWrap(true);
  error_label_->hide();
  layout->addWidget(error_label_);
  auto* split = new QSplitter(Qt::Vertical, this);
  table_ = new QTableView(split);
  table_->setModel(&model_);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setSelectionMode(QAbstractItemView::SingleSelection);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  explanation_ = new QTextBrowser(split);
  split->addWidget(table_);
  split->addWidget(explanation_);
  layout->addWidget(split, 1);
  connect(open_button_, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(
        this, tr("Open a claims file"), QString::fromStdString((data_dir_ / "claims").string()),
        tr("JSON files (*.json)"));
    if (!f.isEmpty()) open_claims(f);
  });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& current) {
            explanation_->setPlainText(current.isValid() ? explanation(current.row()) : QString());
          });
  retranslateUi();
}

void AuditView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslateUi();
  QWidget::changeEvent(event);
}

void AuditView::retranslateUi() {
  open_button_->setText(tr("Open a claims file…"));
  if (file_.isEmpty()) {
    file_label_->setText(
        tr("Each claim is checked against the roofline lower bound and the "
           "predictor (docs/audit.md)."));
  } else {
    file_label_->setText(tr("Claims: %1").arg(file_));
  }
  model_.setHorizontalHeaderLabels({tr("Claim"), tr("Verdict"), tr("Claimed (ms)"),
                                    tr("Lower bound (ms)"), tr("Predicted (ms)"),
                                    tr("Factor (predicted / claimed)")});
  for (int r = 0; r < model_.rowCount() && r < static_cast<int>(audits_.size()); ++r) {
    const model::Verdict v = audits_[static_cast<size_t>(r)].verdict;
    model_.item(r, kVerdict)
        ->setText(v == model::Verdict::kPlausible    ? tr("plausible")
                  : v == model::Verdict::kOptimistic ? tr("optimistic")
                                                     : tr("impossible"));
  }
}

void AuditView::show_error(const QString& message) {
  error_label_->setText(message);
  error_label_->setVisible(!message.isEmpty());
}

QString AuditView::error_text() const {
  return error_label_->isHidden() ? QString() : error_label_->text();
}

void AuditView::set_profile(std::shared_ptr<const model::CalibrationProfile> profile) {
  profile_ = std::move(profile);
  if (!file_.isEmpty()) open_claims(file_);
}

QString AuditView::explanation(int row) const {
  if (row < 0 || row >= static_cast<int>(audits_.size())) return {};
  return QString::fromStdString(audits_[static_cast<size_t>(row)].explanation);
}

bool AuditView::open_claims(const QString& path) {
  std::vector<model::ClaimAudit> audits;
  try {
    const model::Catalog catalog = model::Catalog::load(data_dir_);
    const std::vector<model::ModelSpec> models = model::load_models(data_dir_ / "models");
    const std::vector<model::Claim> claims =
        model::read_claims(path.toStdString(), catalog, models);
    model::AuditOptions options;
    options.profile = profile_.get();
    for (const model::Claim& c : claims) {
      audits.push_back(model::audit_claim(c, catalog, models, options));
    }
  } catch (const std::exception& e) {
    show_error(QString::fromStdString(e.what()));  // the last good audit stays shown
    return false;
  }
  show_error({});
  file_ = path;
  audits_ = std::move(audits);
  model_.removeRows(0, model_.rowCount());
  for (const model::ClaimAudit& a : audits_) {
    QList<QStandardItem*> row;
    auto* id = new QStandardItem(QString::fromStdString(a.id));
    id->setEditable(false);
    auto* verdict = new QStandardItem;
    verdict->setEditable(false);
    verdict->setForeground(a.verdict == model::Verdict::kPlausible    ? QColor(0x1b, 0x7f, 0x3b)
                           : a.verdict == model::Verdict::kOptimistic ? QColor(0xb3, 0x6b, 0x00)
                                                                      : QColor(0xb0, 0x00, 0x20));
    row << id << verdict << seconds_item(a.claimed_s) << seconds_item(a.lower_bound_s)
        << seconds_item(a.predicted_s);
    auto* factor = new QStandardItem;
    if (a.factor) factor->setData(*a.factor, Qt::DisplayRole);
    factor->setEditable(false);
    row << factor;
    model_.appendRow(row);
  }
  retranslateUi();
  table_->resizeColumnsToContents();
  if (model_.rowCount() > 0) table_->selectRow(0);
  return true;
}

}  // namespace llmcap::gui
