#include "gui/scenario_panel.h"

#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QEvent>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QGroupBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSpinBox>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

#include "base/json_reader.h"

namespace llmcap::gui {
namespace {

QLabel* make_error_label(QWidget* parent) {
  auto* l = new QLabel(parent);
  l->setWordWrap(true);
  l->setStyleSheet("color: #b00020;");
  l->setTextInteractionFlags(Qt::TextSelectableByMouse);
  l->hide();
  return l;
}

QDoubleSpinBox* make_spin(QWidget* parent, double lo, double hi, int decimals, double step) {
  auto* s = new QDoubleSpinBox(parent);
  s->setRange(lo, hi);
  s->setDecimals(decimals);
  s->setSingleStep(step);
  s->setKeyboardTracking(false);
  return s;
}

using base::number_or;

}  // namespace

ScenarioPanel::ScenarioPanel(const std::filesystem::path& models_dir, QWidget* parent)
    : QWidget(parent), models_dir_(models_dir), prices_(this) {
  auto* layout = new QVBoxLayout(this);
  file_label_ = new QLabel(this);
  file_label_->setWordWrap(true);
  file_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  layout->addWidget(file_label_);
  file_error_ = make_error_label(this);
  layout->addWidget(file_error_);

  // Model.
  model_box_ = new QGroupBox(this);
  auto* model_layout = new QVBoxLayout(model_box_);
  model_combo_ = new QComboBox(model_box_);
  model_combo_->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
  QDir dir(QString::fromStdString(models_dir_.string()));
  for (const QString& f : dir.entryList({"*.json"}, QDir::Files, QDir::Name)) {
    model_combo_->addItem(f, dir.absoluteFilePath(f));
  }
  model_browse_ = new QPushButton(model_box_);
  model_error_ = make_error_label(model_box_);
  model_layout->addWidget(model_combo_);
  model_layout->addWidget(model_browse_);
  model_layout->addWidget(model_error_);
  layout->addWidget(model_box_);
  connect(model_combo_, &QComboBox::activated, this, [this](int i) {
    if (!loading_) emit modelChosen(model_combo_->itemData(i).toString());
  });
  connect(model_browse_, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Open a model config.json"), {},
                                                   tr("JSON files (*.json)"));
    if (!f.isEmpty()) emit modelChosen(f);
  });

  // Workload.
  workload_box_ = new QGroupBox(this);
  workload_form_ = new QFormLayout(workload_box_);
  kind_label_ = new QLabel(workload_box_);
  kind_combo_ = new QComboBox(workload_box_);
  for (const char* k : {"trace", "poisson", "gamma", "weibull", "closed_loop", "classes"}) {
    kind_combo_->addItem(k, k);
  }
  workload_form_->addRow(kind_label_, kind_combo_);
  path_label_ = new QLabel(workload_box_);
  auto* path_row = new QWidget(workload_box_);
  auto* path_layout = new QHBoxLayout(path_row);
  path_layout->setContentsMargins(0, 0, 0, 0);
  path_edit_ = new QLineEdit(path_row);
  path_browse_ = new QPushButton(QStringLiteral("…"), path_row);
  path_browse_->setMaximumWidth(32);
  path_layout->addWidget(path_edit_);
  path_layout->addWidget(path_browse_);
  workload_form_->addRow(path_label_, path_row);
  rate_label_ = new QLabel(workload_box_);
  rate_spin_ = make_spin(workload_box_, 0.001, 1e6, 3, 0.5);
  workload_form_->addRow(rate_label_, rate_spin_);
  duration_label_ = new QLabel(workload_box_);
  duration_spin_ = make_spin(workload_box_, 1, 9.2e9, 0, 60);
  workload_form_->addRow(duration_label_, duration_spin_);
  cv_label_ = new QLabel(workload_box_);
  cv_spin_ = make_spin(workload_box_, 0.006, 100, 3, 0.1);
  workload_form_->addRow(cv_label_, cv_spin_);
  users_label_ = new QLabel(workload_box_);
  users_spin_ = new QSpinBox(workload_box_);
  users_spin_->setRange(1, 10000000);
  users_spin_->setKeyboardTracking(false);
  workload_form_->addRow(users_label_, users_spin_);
  think_label_ = new QLabel(workload_box_);
  think_spin_ = make_spin(workload_box_, 0, 1e6, 2, 1);
  workload_form_->addRow(think_label_, think_spin_);
  workload_error_ = make_error_label(workload_box_);
  workload_form_->addRow(workload_error_);
  layout->addWidget(workload_box_);
  connect(kind_combo_, &QComboBox::activated, this, [this] {
    update_workload_visibility();
    emit_workload();
  });
  connect(path_edit_, &QLineEdit::editingFinished, this, [this] { emit_workload(); });
  connect(path_browse_, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Open a trace or length file"), {},
                                                   tr("CSV files (*.csv);;All files (*)"));
    if (f.isEmpty()) return;
    path_edit_->setText(f);
    emit_workload();
  });
  for (QDoubleSpinBox* s : {rate_spin_, duration_spin_, cv_spin_, think_spin_}) {
    connect(s, &QDoubleSpinBox::valueChanged, this, [this] { emit_workload(); });
  }
  connect(users_spin_, &QSpinBox::valueChanged, this, [this] { emit_workload(); });

  // SLO.
  slo_box_ = new QGroupBox(this);
  auto* slo_form = new QFormLayout(slo_box_);
  ttft_label_ = new QLabel(slo_box_);
  ttft_spin_ = make_spin(slo_box_, 0.001, 3600, 3, 0.1);
  tpot_label_ = new QLabel(slo_box_);
  tpot_spin_ = make_spin(slo_box_, 0.0001, 10, 4, 0.005);
  slo_form->addRow(ttft_label_, ttft_spin_);
  slo_form->addRow(tpot_label_, tpot_spin_);
  slo_error_ = make_error_label(slo_box_);
  slo_form->addRow(slo_error_);
  layout->addWidget(slo_box_);
  for (QDoubleSpinBox* s : {ttft_spin_, tpot_spin_}) {
    connect(s, &QDoubleSpinBox::valueChanged, this, [this] {
      if (!loading_) emit sloEdited(ttft_spin_->value(), tpot_spin_->value());
    });
  }

  // Candidates and prices.
  prices_box_ = new QGroupBox(this);
  auto* prices_layout = new QVBoxLayout(prices_box_);
  prices_view_ = new QTableView(prices_box_);
  prices_view_->setModel(&prices_);
  prices_view_->verticalHeader()->hide();
  prices_view_->setWordWrap(false);  // long ids elide in a narrow panel
  prices_view_->horizontalHeader()->setStretchLastSection(true);
  prices_view_->setMinimumHeight(180);
  prices_layout->addWidget(prices_view_);
  prices_error_ = make_error_label(prices_box_);
  prices_layout->addWidget(prices_error_);
  layout->addWidget(prices_box_, 1);
  connect(&prices_, &QStandardItemModel::itemChanged, this,
          [this](QStandardItem* item) { on_price_item_changed(item); });

  retranslateUi();
}

void ScenarioPanel::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslateUi();
  QWidget::changeEvent(event);
}

void ScenarioPanel::retranslateUi() {
  model_box_->setTitle(tr("Model"));
  model_browse_->setText(tr("Open another config.json…"));
  workload_box_->setTitle(tr("Workload"));
  kind_label_->setText(tr("Kind"));
  const QString kind = kind_combo_->currentData().toString();
  path_label_->setText(kind == "trace" ? tr("Trace file") : tr("Length file"));
  rate_label_->setText(tr("Requests per second"));
  duration_label_->setText(tr("Duration (s)"));
  cv_label_->setText(kind == "weibull" ? tr("Weibull shape") : tr("CV of gaps"));
  users_label_->setText(tr("Users"));
  think_label_->setText(tr("Think time (s)"));
  slo_box_->setTitle(tr("SLO (p99)"));
  ttft_label_->setText(tr("TTFT (s)"));
  tpot_label_->setText(tr("TPOT (s)"));
  prices_box_->setTitle(tr("Candidate instance types and prices"));
  prices_.setHorizontalHeaderLabels(
      {tr("Use"), tr("Instance type"), tr("Device"), tr("Price model"), tr("USD/hour")});
}

QLabel* ScenarioPanel::error_label(Field field) const {
  switch (field) {
    case Field::kFile:
      return file_error_;
    case Field::kModel:
      return model_error_;
    case Field::kWorkload:
      return workload_error_;
    case Field::kSlo:
      return slo_error_;
    case Field::kPrices:
      return prices_error_;
  }
  return file_error_;
}

void ScenarioPanel::show_error(Field field, const QString& message) {
  QLabel* l = error_label(field);
  l->setText(message);
  l->setVisible(!message.isEmpty());
}

void ScenarioPanel::clear_errors() {
  for (Field f : {Field::kFile, Field::kModel, Field::kWorkload, Field::kSlo, Field::kPrices}) {
    show_error(f, {});
  }
}

QString ScenarioPanel::error_text(Field field) const {
  QLabel* l = error_label(field);
  return l->isHidden() ? QString() : l->text();
}

void ScenarioPanel::update_workload_visibility() {
  const QString kind = kind_combo_->currentData().toString();
  const bool trace = kind == "trace";
  const bool arrivals = kind == "poisson" || kind == "gamma" || kind == "weibull";
  const bool closed = kind == "closed_loop";
  const bool classes = kind == "classes";
  const auto show = [](QWidget* a, QWidget* b, bool on) {
    a->setVisible(on);
    b->setVisible(on);
  };
  show(path_label_, path_edit_->parentWidget(), !classes);
  show(rate_label_, rate_spin_, arrivals);
  show(duration_label_, duration_spin_, arrivals || closed);
  show(cv_label_, cv_spin_, kind == "gamma" || kind == "weibull");
  show(users_label_, users_spin_, closed);
  show(think_label_, think_spin_, closed);
  kind_combo_->setEnabled(!classes);
  (void)trace;
  retranslateUi();
}

void ScenarioPanel::show_draft(const ScenarioDraft& draft, const model::Catalog& catalog) {
  loading_ = true;
  file_label_->setText(tr("Scenario: %1").arg(QString::fromStdString(draft.path().string())));
  // Model.
  const QString model_path = QString::fromStdString(draft.model_path().lexically_normal().string());
  int idx = model_combo_->findData(QFileInfo(model_path).absoluteFilePath());
  if (idx < 0) {
    model_combo_->addItem(QFileInfo(model_path).fileName(),
                          QFileInfo(model_path).absoluteFilePath());
    idx = model_combo_->count() - 1;
  }
  model_combo_->setCurrentIndex(idx);
  // Workload.
  workload_ = draft.json().value("workload", nlohmann::json::object());
  const std::string kind = workload_.value("kind", "trace");
  kind_combo_->setCurrentIndex(std::max(0, kind_combo_->findData(QString::fromStdString(kind))));
  const std::string path_key = kind == "trace" ? "path" : "lengths_path";
  path_edit_->setText(QString::fromStdString(workload_.value(path_key, std::string())));
  rate_spin_->setValue(number_or(workload_, "rate_per_s", 1));
  duration_spin_->setValue(number_or(workload_, "duration_s", 3600));
  cv_spin_->setValue(number_or(workload_, kind == "weibull" ? "shape" : "cv", 1));
  users_spin_->setValue(static_cast<int>(number_or(workload_, "num_users", 1)));
  think_spin_->setValue(number_or(workload_, "think_time_s", 0));
  update_workload_visibility();
  // SLO.
  slo_box_->setEnabled(draft.has_single_slo());
  ttft_spin_->setValue(draft.slo_ttft_s());
  tpot_spin_->setValue(draft.slo_tpot_s());
  // Candidates and prices: every instance type of the catalog, the scenario's checked.
  const std::vector<std::string> chosen = draft.candidates();
  const std::string price_model = draft.price_model();
  const std::vector<PriceOverride> overrides = draft.price_overrides();
  prices_.removeRows(0, prices_.rowCount());
  for (const model::InstanceType& inst : catalog.instances()) {
    QList<QStandardItem*> items;
    auto* use = new QStandardItem;
    use->setCheckable(true);
    use->setCheckState(chosen.empty() ||
                               std::find(chosen.begin(), chosen.end(), inst.id) != chosen.end()
                           ? Qt::Checked
                           : Qt::Unchecked);
    use->setEditable(false);
    items << use;
    auto* id = new QStandardItem(QString::fromStdString(inst.id));
    id->setEditable(false);
    id->setToolTip(QString::fromStdString(inst.note));
    items << id;
    auto* dev = new QStandardItem(
        QString::fromStdString(std::string(model::to_string(inst.kind))).toUpper());
    dev->setEditable(false);
    items << dev;
    const std::string pm = price_model.empty() ? inst.price_model : price_model;
    auto* pm_item = new QStandardItem(QString::fromStdString(pm));
    pm_item->setEditable(false);
    items << pm_item;
    const model::PriceOffer* offer = inst.find_price(pm);
    auto* price = new QStandardItem;
    if (offer != nullptr) {
      price->setText(QString::number(offer->usd_per_hour, 'f', 4));
      price->setToolTip(
          tr("Source: %1 (as of %2)")
              .arg(QString::fromStdString(offer->source), QString::fromStdString(offer->as_of)));
    } else {
      price->setText(QString());
      price->setToolTip(tr("No %1 price in the catalog").arg(QString::fromStdString(pm)));
    }
    for (const PriceOverride& o : overrides) {
      if (o.instance == inst.id && o.price_model == pm) {
        price->setText(QString::number(o.usd_per_hour, 'f', 4));
        price->setToolTip(
            tr("Edited in llmcap-gui (as of %1)").arg(QString::fromStdString(o.as_of)));
        QFont f = price->font();
        f.setBold(true);
        price->setFont(f);
      }
    }
    items << price;
    prices_.appendRow(items);
  }
  prices_view_->resizeColumnsToContents();
  prices_view_->setColumnHidden(kDeviceColumn, true);  // the results table shows it
  // The id column takes what the price columns leave (long ids elide; the panel is 340 px
  // wide at 1366x768), so that the editable prices stay in view.
  QHeaderView* header = prices_view_->horizontalHeader();
  header->setStretchLastSection(false);
  for (int c : {kUseColumn, kPriceModelColumn, kPriceColumn}) {
    header->setSectionResizeMode(c, QHeaderView::ResizeToContents);
  }
  header->setSectionResizeMode(kIdColumn, QHeaderView::Stretch);
  loading_ = false;
}

void ScenarioPanel::emit_workload() {
  if (loading_) return;
  nlohmann::json w = workload_;
  const std::string kind = kind_combo_->currentData().toString().toStdString();
  if (kind == "classes") return;  // edited in the file only
  const std::string old_kind = w.value("kind", "trace");
  if (kind != old_kind) {
    // Keep the length source, drop the other kind's fields.
    const std::string path = old_kind == "trace" ? w.value("path", std::string())
                                                 : w.value("lengths_path", std::string());
    w = nlohmann::json::object();
    w["kind"] = kind;
    w[kind == "trace" ? "path" : "lengths_path"] = path;
  }
  const std::string path_key = kind == "trace" ? "path" : "lengths_path";
  w[path_key] = path_edit_->text().toStdString();
  const bool arrivals = kind == "poisson" || kind == "gamma" || kind == "weibull";
  if (arrivals) {
    w["rate_per_s"] = rate_spin_->value();
    if (!w.contains("num_requests")) w["duration_s"] = duration_spin_->value();
    if (kind == "gamma") w["cv"] = cv_spin_->value();
    if (kind == "weibull") w["shape"] = cv_spin_->value();
  }
  if (kind == "closed_loop") {
    w["num_users"] = users_spin_->value();
    w["think_time_s"] = think_spin_->value();
    w["duration_s"] = duration_spin_->value();
  }
  emit workloadEdited(w);
}

void ScenarioPanel::on_price_item_changed(QStandardItem* item) {
  if (loading_) return;
  const int row = item->row();
  if (item->column() == kUseColumn) {
    std::vector<std::string> ids;
    bool all = true;
    for (int r = 0; r < prices_.rowCount(); ++r) {
      if (prices_.item(r, kUseColumn)->checkState() == Qt::Checked) {
        ids.push_back(prices_.item(r, kIdColumn)->text().toStdString());
      } else {
        all = false;
      }
    }
    if (all) ids.clear();
    if (!all && ids.empty()) {
      show_error(Field::kPrices, tr("Choose at least one instance type."));
      return;
    }
    show_error(Field::kPrices, {});
    emit candidatesEdited(ids);
  } else if (item->column() == kPriceColumn) {
    emit priceEdited(prices_.item(row, kIdColumn)->text(),
                     prices_.item(row, kPriceModelColumn)->text(), item->text());
  }
}

}  // namespace llmcap::gui
