#include "gui/main_window.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QButtonGroup>
#include <QCheckBox>
#include <QCloseEvent>
#include <QComboBox>
#include <QDate>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSlider>
#include <QSortFilterProxyModel>
#include <QSplitter>
#include <QStatusBar>
#include <QStyledItemDelegate>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <cmath>
#include <exception>
#include <string>
#include <string_view>

#include "app/answer_json.h"
#include "base/error.h"
#include "gui/answer_card.h"
#include "gui/audit_view.h"
#include "gui/calibration_view.h"
#include "gui/charts_view.h"
#include "gui/runs_view.h"
#include "gui/seams.h"
#include "model/formats.h"
#include "model/input_error.h"
#include "model/model_spec.h"
#include "plan/candidates.h"
#include "plan/sim_cache.h"
#include "sim/input_error.h"

namespace llmcap::gui {
namespace {

constexpr int kMaxRecentFiles = 8;
/// At most this often, rows of a run in progress reach the table and charts (MainWindow::
/// pending_rows_): each update re-sorts the table and rebuilds the bar chart of every type.
constexpr int kRowBatchIntervalMs = 150;

/// "; engines: GPU vllm, CPU llama.cpp" for the status line after a run ("" without rows).
QString engines_note(const std::vector<ResultRow>& rows) {
  const std::string s = engines_summary(rows);
  return s.empty() ? QString() : MainWindow::tr("; engines: %1").arg(QString::fromStdString(s));
}
/// "; not offered under reserved_1y (no TCO): aws-x (offers: on_demand), ..." or "".
QString not_offered_note(const PlanOutcome& o) {
  if (o.not_offered.empty()) return {};
  QStringList types;
  for (const plan::PriceModelNotOffered& n : o.not_offered) {
    types << QString::fromStdString(n.instance_type + " (offers: " + n.offered + ")");
  }
  return MainWindow::tr("; not offered under %1 (no TCO): %2")
      .arg(QString::fromStdString(o.price_model), types.join(QStringLiteral(", ")));
}
constexpr const char* kRecentKey = "recent_files";

/// Formats the results model's numbers (SI units) for the table; the model keeps the numbers.
class FormatDelegate : public QStyledItemDelegate {
 public:
  enum class Kind { kCount, kUsd, kSecondsAsMs };
  FormatDelegate(Kind kind, QObject* parent) : QStyledItemDelegate(parent), kind_(kind) {}
  QString displayText(const QVariant& value, const QLocale& locale) const override {
    if (!value.isValid()) return QStringLiteral("—");
    switch (kind_) {
      case Kind::kCount:
        return locale.toString(value.toLongLong());
      case Kind::kUsd:
        return locale.toString(value.toDouble(), 'f', 2);
      case Kind::kSecondsAsMs:
        return locale.toString(value.toDouble() * 1e3, 'f', 1) + " ms";
    }
    return QStyledItemDelegate::displayText(value, locale);
  }

 private:
  Kind kind_;
};

/// Which panel field an error message names, read from its text: the fallback for errors that
/// carry no field path (field_of below).
ScenarioPanel::Field field_of_text(const std::string& message, ScenarioPanel::Field fallback) {
  if (message.find("\"price_overrides") != std::string::npos ||
      message.find("\"tco.price_model") != std::string::npos) {
    return ScenarioPanel::Field::kPrices;
  }
  if (message.find("field \"model") != std::string::npos) return ScenarioPanel::Field::kModel;
  if (message.find("\"workload") != std::string::npos) return ScenarioPanel::Field::kWorkload;
  if (message.find("\"slo") != std::string::npos) return ScenarioPanel::Field::kSlo;
  return fallback;
}

/// Which panel field an error names: from its field path (base::InputError::field_path(),
/// e.g. "slo.ttft_p99_s") when it has one, else from its text (field_of_text).
ScenarioPanel::Field field_of(const std::string& field_path, const std::string& message,
                              ScenarioPanel::Field fallback) {
  if (field_path.empty()) return field_of_text(message, fallback);
  const std::string_view path = field_path;
  if (path.starts_with("price_overrides") || path.starts_with("tco.price_model")) {
    return ScenarioPanel::Field::kPrices;
  }
  if (path.starts_with("model")) return ScenarioPanel::Field::kModel;
  if (path.starts_with("workload")) return ScenarioPanel::Field::kWorkload;
  if (path.starts_with("slo")) return ScenarioPanel::Field::kSlo;
  return fallback;
}

/// field_of for a caught exception: the field path of a base::InputError, else its text.
ScenarioPanel::Field field_of(const std::exception& e, ScenarioPanel::Field fallback) {
  const auto* input = dynamic_cast<const base::InputError*>(&e);
  return field_of(input != nullptr ? input->field_path() : std::string(), e.what(), fallback);
}

std::string today() { return QDate::currentDate().toString(Qt::ISODate).toStdString(); }

}  // namespace

MainWindow::MainWindow(Options options, Language* language, QWidget* parent)
    : QMainWindow(parent), options_(std::move(options)), language_(language) {
  controller_ = new PlanController(this);
  results_ = new ResultsModel(this);
  row_timer_ = new QTimer(this);
  row_timer_->setSingleShot(true);
  row_timer_->setInterval(kRowBatchIntervalMs);
  connect(row_timer_, &QTimer::timeout, this, &MainWindow::flush_rows);
  connect(controller_, &PlanController::rowReady, this, &MainWindow::on_row_ready);
  connect(controller_, &PlanController::finished, this, &MainWindow::on_finished);
  build_ui();
  build_menus();
  try {
    catalog_ = std::make_shared<const model::Catalog>(model::Catalog::load(options_.data_dir));
    for (const model::ExchangeRate& rate : catalog_->exchange_rates()) {
      const QString code = QString::fromStdString(rate.to);
      if (currency_combo_->findData(code) < 0) currency_combo_->addItem(code, code);
    }
  } catch (const std::exception& e) {
    show_status(QString::fromStdString(e.what()), true);
  }
  retranslateUi();
  resize(1600, 1000);
}

MainWindow::~MainWindow() = default;

void MainWindow::build_ui() {
  // Scenario panel, in a dock on the left.
  panel_ = new ScenarioPanel(options_.data_dir / "models", this);
  auto* scroll = new QScrollArea(this);
  scroll->setWidget(panel_);
  scroll->setWidgetResizable(true);
  // Narrow enough for a 1366 px wide screen beside the what-if tab (docs/gui.md).
  scroll->setMinimumWidth(340);
  panel_dock_ = new QDockWidget(this);
  panel_dock_->setObjectName("scenario_dock");
  panel_dock_->setWidget(scroll);
  panel_dock_->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  addDockWidget(Qt::LeftDockWidgetArea, panel_dock_);

  tabs_ = new QTabWidget(this);
  setCentralWidget(tabs_);

  // What-if tab: controls, table, charts.
  auto* what_if = new QWidget(tabs_);
  auto* layout = new QVBoxLayout(what_if);
  auto* bar = new QGridLayout;
  load_label_ = new QLabel(what_if);
  load_slider_ = new QSlider(Qt::Horizontal, what_if);
  load_slider_->setRange(10, 400);  // percent of the scenario's load
  load_slider_->setSingleStep(5);
  load_slider_->setPageStep(25);
  load_slider_->setValue(100);
  load_value_ = new QLabel(what_if);
  load_value_->setMinimumWidth(60);
  ttft_label_ = new QLabel(what_if);
  ttft_slider_ = new QSlider(Qt::Horizontal, what_if);
  ttft_slider_->setRange(1, 200);  // tenths of a second
  ttft_value_ = new QLabel(what_if);
  ttft_value_->setMinimumWidth(60);
  tpot_label_ = new QLabel(what_if);
  tpot_slider_ = new QSlider(Qt::Horizontal, what_if);
  tpot_slider_->setRange(5, 300);  // milliseconds
  tpot_value_ = new QLabel(what_if);
  tpot_value_->setMinimumWidth(60);
  bar->addWidget(load_label_, 0, 0);
  bar->addWidget(load_slider_, 0, 1);
  bar->addWidget(load_value_, 0, 2);
  bar->addWidget(ttft_label_, 1, 0);
  bar->addWidget(ttft_slider_, 1, 1);
  bar->addWidget(ttft_value_, 1, 2);
  bar->addWidget(tpot_label_, 2, 0);
  bar->addWidget(tpot_slider_, 2, 1);
  bar->addWidget(tpot_value_, 2, 2);
  bar->setColumnStretch(1, 1);

  auto* toggles = new QGridLayout;
  format_label_ = new QLabel(what_if);
  // Every weight format (model/formats.h), each with what it stores as its tooltip: one list
  // for the GPU instance types, one for the CPU ones.
  cpu_format_label_ = new QLabel(what_if);
  format_combo_ = new QComboBox(what_if);
  format_combo_->setObjectName(QStringLiteral("weight_format"));
  cpu_format_combo_ = new QComboBox(what_if);
  cpu_format_combo_->setObjectName(QStringLiteral("cpu_weight_format"));
  for (QComboBox* combo : {format_combo_, cpu_format_combo_}) {
    for (const model::WeightFormat f : model::kAllWeightFormats) {
      const QString name = QString::fromUtf8(model::to_string(f).data(),
                                             static_cast<int>(model::to_string(f).size()));
      combo->addItem(name, name);
      combo->setItemData(
          combo->count() - 1,
          QString::fromUtf8(model::describe(f).data(), static_cast<int>(model::describe(f).size())),
          Qt::ToolTipRole);
    }
  }
  currency_label_ = new QLabel(what_if);
  currency_combo_ = new QComboBox(what_if);
  currency_combo_->setObjectName(QStringLiteral("currency"));
  currency_combo_->addItem(QStringLiteral("USD"), QStringLiteral("USD"));
  price_label_ = new QLabel(what_if);
  price_combo_ = new QComboBox(what_if);
  price_combo_->addItem(QString(), QString());
  for (const std::string& p : model::price_model_names()) {
    price_combo_->addItem(QString::fromStdString(p), QString::fromStdString(p));
  }
  run_button_ = new QPushButton(what_if);
  analysis_check_ = new QCheckBox(what_if);
  analysis_check_->setChecked(true);
  progress_ = new QProgressBar(what_if);
  progress_->setRange(0, 1);
  progress_->setValue(0);
  progress_->setMinimumWidth(160);
  toggles->addWidget(format_label_, 0, 0);
  toggles->addWidget(format_combo_, 0, 1);
  toggles->addWidget(cpu_format_label_, 0, 2);
  toggles->addWidget(cpu_format_combo_, 0, 3);
  toggles->addWidget(price_label_, 1, 0);
  toggles->addWidget(price_combo_, 1, 1);
  toggles->addWidget(currency_label_, 1, 2);
  toggles->addWidget(currency_combo_, 1, 3);
  toggles->addWidget(run_button_, 2, 0);
  toggles->addWidget(analysis_check_, 2, 1, 1, 3);
  toggles->addWidget(progress_, 3, 0, 1, 4);
  auto* top = new QHBoxLayout;
  top->addLayout(bar, 3);
  top->addSpacing(16);
  top->addLayout(toggles, 2);
  layout->addLayout(top);

  answer_card_ = new AnswerCard(what_if);
  layout->addWidget(answer_card_);

  auto* split = new QSplitter(Qt::Vertical, what_if);
  sorted_ = new QSortFilterProxyModel(this);
  sorted_->setSourceModel(results_);
  sorted_->setSortRole(ResultsModel::kSortRole);
  table_ = new QTableView(split);
  table_->setModel(sorted_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(ResultsModel::kUsdPerHour, Qt::AscendingOrder);
  table_->verticalHeader()->hide();
  table_->horizontalHeader()->setStretchLastSection(true);
  table_->setWordWrap(false);
  table_->setItemDelegateForColumn(ResultsModel::kFleetSize,
                                   new FormatDelegate(FormatDelegate::Kind::kCount, table_));
  for (int c : {ResultsModel::kUsdPerHour, ResultsModel::kUsdPerMillionOutputTokens}) {
    table_->setItemDelegateForColumn(c, new FormatDelegate(FormatDelegate::Kind::kUsd, table_));
  }
  for (int c : {ResultsModel::kTtftP50, ResultsModel::kTtftP99, ResultsModel::kTpotP50,
                ResultsModel::kTpotP99}) {
    table_->setItemDelegateForColumn(
        c, new FormatDelegate(FormatDelegate::Kind::kSecondsAsMs, table_));
  }
  for (int c = ResultsModel::kReason + 1; c < ResultsModel::kNumColumns; ++c) {
    table_->setColumnHidden(c, true);
  }
  charts_ = new ChartsView(results_, split);
  split->addWidget(table_);
  split->addWidget(charts_);
  split->setStretchFactor(0, 2);
  split->setStretchFactor(1, 3);
  split->setSizes({300, 500});
  layout->addWidget(split, 1);
  tabs_->addTab(what_if, QString());

  runs_ = new RunsView(tabs_);
  calibration_ = new CalibrationView(tabs_);
  calibration_->set_models_dir(options_.data_dir / "models");
  audit_ = new AuditView(options_.data_dir, tabs_);
  tabs_->addTab(runs_, QString());
  tabs_->addTab(calibration_, QString());
  tabs_->addTab(audit_, QString());

  status_label_ = new QLabel(this);
  status_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  statusBar()->addWidget(status_label_, 1);

  // What-if controls: labels follow the slider; a release (or a keyboard step) plans.
  connect(load_slider_, &QSlider::valueChanged, this, [this](int v) {
    load_value_->setText(QStringLiteral("%1×").arg(v / 100.0, 0, 'f', 2));
    if (!updating_controls_ && !load_slider_->isSliderDown()) {
      draft_.set_load_multiplier(v / 100.0);
      request_what_if(ScenarioPanel::Field::kWorkload);
    }
  });
  connect(load_slider_, &QSlider::sliderReleased, this, [this] {
    draft_.set_load_multiplier(load_slider_->value() / 100.0);
    request_what_if(ScenarioPanel::Field::kWorkload);
  });
  const auto slo_changed = [this] {
    ttft_value_->setText(QStringLiteral("%1 s").arg(ttft_slider_->value() / 10.0, 0, 'f', 1));
    tpot_value_->setText(QStringLiteral("%1 ms").arg(tpot_slider_->value()));
  };
  const auto slo_apply = [this] {
    draft_.set_slo(ttft_slider_->value() / 10.0, tpot_slider_->value() / 1000.0);
    updating_controls_ = true;
    panel_->show_draft(draft_, *catalog_);
    updating_controls_ = false;
    request_what_if(ScenarioPanel::Field::kSlo);
  };
  for (QSlider* s : {ttft_slider_, tpot_slider_}) {
    connect(s, &QSlider::valueChanged, this, [this, s, slo_changed, slo_apply] {
      slo_changed();
      if (!updating_controls_ && !s->isSliderDown()) slo_apply();
    });
    connect(s, &QSlider::sliderReleased, this, slo_apply);
  }
  connect(format_combo_, &QComboBox::activated, this, [this] {
    set_weight_format(QStringLiteral("gpu"), format_combo_->currentData().toString());
  });
  connect(cpu_format_combo_, &QComboBox::activated, this, [this] {
    set_weight_format(QStringLiteral("cpu"), cpu_format_combo_->currentData().toString());
  });
  connect(currency_combo_, &QComboBox::activated, this,
          [this] { set_currency(currency_combo_->currentData().toString()); });
  connect(price_combo_, &QComboBox::activated, this, [this] {
    draft_.set_price_model(price_combo_->currentData().toString().toStdString());
    if (catalog_) panel_->show_draft(draft_, *catalog_);
    request_what_if(ScenarioPanel::Field::kPrices);
  });
  connect(run_button_, &QPushButton::clicked, this,
          [this] { run_full(analysis_check_->isChecked()); });

  // Scenario panel edits.
  connect(panel_, &ScenarioPanel::modelChosen, this, [this](const QString& path) {
    try {
      (void)model::load_model_spec(path.toStdString());
    } catch (const std::exception& e) {
      panel_->show_error(ScenarioPanel::Field::kModel, QString::fromStdString(e.what()));
      show_status(QString::fromStdString(e.what()), true);
      panel_->show_draft(draft_, *catalog_);  // the last good model stays chosen
      return;
    }
    draft_.set_model_path(path.toStdString());
    request_what_if(ScenarioPanel::Field::kModel);
  });
  connect(panel_, &ScenarioPanel::workloadEdited, this, [this](const nlohmann::json& w) {
    draft_.set_workload(w);
    request_what_if(ScenarioPanel::Field::kWorkload);
  });
  connect(panel_, &ScenarioPanel::sloEdited, this, [this](double ttft, double tpot) {
    draft_.set_slo(ttft, tpot);
    sync_what_if_controls();
    request_what_if(ScenarioPanel::Field::kSlo);
  });
  connect(panel_, &ScenarioPanel::candidatesEdited, this,
          [this](const std::vector<std::string>& ids) {
            draft_.set_candidates(ids);
            request_what_if(ScenarioPanel::Field::kPrices);
          });
  connect(panel_, &ScenarioPanel::priceEdited, this,
          [this](const QString& instance, const QString& price_model, const QString& text) {
            try {
              const double usd =
                  parse_price_text(text.toStdString(), draft_.path().string(),
                                   instance.toStdString(), price_model.toStdString());
              draft_.set_price_override(
                  {instance.toStdString(), price_model.toStdString(), usd, today()});
            } catch (const plan::InputError& e) {
              panel_->show_error(ScenarioPanel::Field::kPrices, QString::fromStdString(e.what()));
              show_status(QString::fromStdString(e.what()), true);
              panel_->show_draft(draft_, *catalog_);  // the last good price stays shown
              return;
            }
            request_what_if(ScenarioPanel::Field::kPrices);
          });
  connect(runs_, &RunsView::openRequested, this, [this](int64_t, const nlohmann::json& doc) {
    show_document(doc);
    tabs_->setCurrentIndex(0);
  });
  connect(runs_, &RunsView::whatIfOpenRequested, this,
          [this](const QString& name, const nlohmann::json& doc) {
            show_document(doc, /*what_if=*/true);
            tabs_->setCurrentIndex(0);
            show_status(tr("Opened the what-if \"%1\"").arg(name), false);
          });
  connect(calibration_, &CalibrationView::planProfileChanged, this,
          [this](std::shared_ptr<const model::CalibrationProfile> p) {
            calibration_profile_ = std::move(p);
            simulations_ = plan::make_shared_simulations();
            audit_->set_profile(calibration_profile_);
          });
}

void MainWindow::build_menus() {
  file_menu_ = menuBar()->addMenu(QString());
  open_action_ = file_menu_->addAction(QString(), this, [this] {
    const QString f = QFileDialog::getOpenFileName(
        this, tr("Open a scenario"),
        QString::fromStdString((options_.data_dir / "scenarios").string()),
        tr("Scenarios (*.json)"));
    if (!f.isEmpty()) open_scenario(f);
  });
  open_action_->setShortcut(QKeySequence::Open);
  recent_menu_ = file_menu_->addMenu(QString());
  save_action_ = file_menu_->addAction(QString(), this, [this] {
    if (!draft_.empty()) save_scenario(QString::fromStdString(draft_.path().string()));
  });
  save_action_->setShortcut(QKeySequence::Save);
  save_as_action_ = file_menu_->addAction(QString(), this, [this] {
    const QString f = QFileDialog::getSaveFileName(this, tr("Save the scenario as"),
                                                   QString::fromStdString(draft_.path().string()),
                                                   tr("Scenarios (*.json)"));
    if (!f.isEmpty()) save_scenario(f);
  });
  export_menu_ = file_menu_->addMenu(QString());
  export_pdf_ = export_menu_->addAction(QString(), this, [this] { export_dialog("pdf"); });
  export_html_ = export_menu_->addAction(QString(), this, [this] { export_dialog("html"); });
  export_csv_ = export_menu_->addAction(QString(), this, [this] { export_dialog("csv"); });
  export_xlsx_ = export_menu_->addAction(QString(), this, [this] { export_dialog("xlsx"); });
  file_menu_->addSeparator();
  quit_action_ = file_menu_->addAction(QString(), this, [this] { close(); });
  quit_action_->setShortcut(QKeySequence::Quit);

  run_menu_ = menuBar()->addMenu(QString());
  run_action_ =
      run_menu_->addAction(QString(), this, [this] { run_full(analysis_check_->isChecked()); });
  run_action_->setShortcut(Qt::Key_F5);
  store_action_ = run_menu_->addAction(QString());
  store_action_->setCheckable(true);
  store_action_->setChecked(options_.store_runs);
  connect(store_action_, &QAction::toggled, this, [this](bool on) { options_.store_runs = on; });

  language_menu_ = menuBar()->addMenu(QString());
  auto* group = new QActionGroup(this);
  lang_en_ = language_menu_->addAction(Language::native_name("en"));
  lang_zh_ = language_menu_->addAction(Language::native_name("zh_CN"));
  for (QAction* a : {lang_en_, lang_zh_}) {
    a->setCheckable(true);
    group->addAction(a);
  }
  (language_->current() == "zh_CN" ? lang_zh_ : lang_en_)->setChecked(true);
  connect(lang_en_, &QAction::triggered, this, [this] { language_->set("en"); });
  connect(lang_zh_, &QAction::triggered, this, [this] {
    if (!language_->set("zh_CN"))
      show_status(tr("The Chinese translation could not be loaded."), true);
  });
  rebuild_recent_menu();
}

void MainWindow::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslateUi();
  QMainWindow::changeEvent(event);
}

void MainWindow::retranslateUi() {
  setWindowTitle(
      draft_.empty()
          ? tr("llmcap — what-if capacity planner")
          : tr("llmcap — %1")
                .arg(QFileInfo(QString::fromStdString(draft_.path().string())).fileName()));
  panel_dock_->setWindowTitle(tr("Scenario"));
  tabs_->setTabText(0, tr("What-if"));
  tabs_->setTabText(1, tr("Runs"));
  tabs_->setTabText(2, tr("Calibration"));
  tabs_->setTabText(3, tr("Audit"));
  load_label_->setText(tr("Load multiplier"));
  ttft_label_->setText(tr("SLO: p99 TTFT"));
  tpot_label_->setText(tr("SLO: p99 TPOT"));
  format_label_->setText(tr("GPU weights"));
  cpu_format_label_->setText(tr("CPU weights"));
  price_label_->setText(tr("Price model"));
  currency_label_->setText(tr("Currency"));
  price_combo_->setItemText(0, tr("catalog's own"));
  const std::map<QString, QString> price_names = {{"on_demand", tr("on-demand")},
                                                  {"reserved_1y", tr("reserved 1 year")},
                                                  {"reserved_3y", tr("reserved 3 years")},
                                                  {"spot", tr("spot")},
                                                  {"capacity_block", tr("capacity block")}};
  for (int i = 1; i < price_combo_->count(); ++i) {
    const QString key = price_combo_->itemData(i).toString();
    const auto it = price_names.find(key);
    price_combo_->setItemText(i, it != price_names.end() ? it->second : key);
  }
  run_button_->setText(tr("Run full plan"));
  analysis_check_->setText(tr("with analyses"));
  analysis_check_->setToolTip(
      tr("Also run the analyses: cost against load, latency CDFs, search, uncertainty"));
  file_menu_->setTitle(tr("&File"));
  open_action_->setText(tr("&Open scenario…"));
  recent_menu_->setTitle(tr("Recent files"));
  save_action_->setText(tr("&Save scenario"));
  save_as_action_->setText(tr("Save scenario &as…"));
  export_menu_->setTitle(tr("&Export report"));
  export_pdf_->setText(tr("PDF…"));
  export_html_->setText(tr("HTML…"));
  export_csv_->setText(tr("CSV…"));
  export_xlsx_->setText(tr("Excel workbook (XLSX)…"));
  quit_action_->setText(tr("&Quit"));
  run_menu_->setTitle(tr("&Run"));
  run_action_->setText(tr("Run full plan"));
  store_action_->setText(tr("Store full runs in the results database"));
  language_menu_->setTitle(tr("&Language"));
  results_->retranslate();
  answer_card_->retranslate();
  rebuild_recent_menu();
}

void MainWindow::show_status(const QString& message, bool error) {
  status_label_->setText(message);
  status_label_->setStyleSheet(error ? "color: #b00020;" : "");
}

QString MainWindow::status_text() const { return status_label_->text(); }

bool MainWindow::open_scenario(const QString& path) {
  ScenarioDraft next;
  try {
    next = ScenarioDraft::from_file(path.toStdString(), options_.data_dir);
    plan::check_scenario_files(next.scenario());  // a model or workload file not found
    (void)model::load_model_spec(next.model_path());
  } catch (const std::exception& e) {
    const QString message = QString::fromStdString(e.what());
    panel_->show_error(field_of(e, ScenarioPanel::Field::kFile), message);
    show_status(message, true);
    return false;  // the last good scenario stays
  }
  if (!catalog_) {
    show_status(
        tr("No catalog loaded from %1").arg(QString::fromStdString(options_.data_dir.string())),
        true);
    return false;
  }
  draft_ = next;
  good_draft_ = next;
  opened_draft_ = next;
  ran_draft_ = ScenarioDraft();
  last_sizes_.clear();
  last_costs_.clear();
  last_document_.reset();
  panel_->clear_errors();
  panel_->show_draft(draft_, *catalog_);
  sync_what_if_controls();
  results_->clear();
  answer_card_->clear();
  charts_->clear_analysis();
  charts_->cost_vs_load()->clear();
  add_recent(QFileInfo(path).absoluteFilePath());
  retranslateUi();
  show_status(tr("Opened %1").arg(path), false);
  return true;
}

bool MainWindow::save_scenario(const QString& path) {
  if (draft_.empty()) return false;
  ScenarioDraft saved = draft_;
  const double committed_load = draft_.load_multiplier();
  saved.commit_load_multiplier();
  saved.rebase(path.toStdString());
  try {
    write_file(path.toStdString(), saved.text());
  } catch (const std::exception& e) {
    show_status(QString::fromStdString(e.what()), true);
    return false;
  }
  // The saved file is now the scenario (at load 1: the multiplier was folded into it).
  draft_ = saved;
  good_draft_ = saved;
  last_sizes_load_ /= committed_load;  // the warm start's load in the new file's units
  if (catalog_) panel_->show_draft(draft_, *catalog_);
  sync_what_if_controls();
  retranslateUi();
  show_status(tr("Saved %1").arg(path), false);
  add_recent(QFileInfo(path).absoluteFilePath());
  return true;
}

void MainWindow::sync_what_if_controls() {
  updating_controls_ = true;
  load_slider_->setValue(static_cast<int>(std::lround(draft_.load_multiplier() * 100)));
  load_value_->setText(QStringLiteral("%1×").arg(load_slider_->value() / 100.0, 0, 'f', 2));
  const bool single = draft_.has_single_slo();
  ttft_slider_->setEnabled(single);
  tpot_slider_->setEnabled(single);
  ttft_slider_->setValue(static_cast<int>(std::lround(draft_.slo_ttft_s() * 10)));
  tpot_slider_->setValue(static_cast<int>(std::lround(draft_.slo_tpot_s() * 1000)));
  ttft_value_->setText(QStringLiteral("%1 s").arg(ttft_slider_->value() / 10.0, 0, 'f', 1));
  tpot_value_->setText(QStringLiteral("%1 ms").arg(tpot_slider_->value()));
  format_combo_->setCurrentIndex(
      std::max(0, format_combo_->findData(QString::fromStdString(draft_.weight_format("gpu")))));
  cpu_format_combo_->setCurrentIndex(std::max(
      0, cpu_format_combo_->findData(QString::fromStdString(draft_.weight_format("cpu")))));
  currency_combo_->setCurrentIndex(
      std::max(0, currency_combo_->findData(QString::fromStdString(draft_.currency()))));
  price_combo_->setCurrentIndex(
      std::max(0, price_combo_->findData(QString::fromStdString(draft_.price_model()))));
  updating_controls_ = false;
}

std::optional<plan::Scenario> MainWindow::validated(ScenarioPanel::Field field) {
  try {
    plan::Scenario s = draft_.scenario();
    s.max_requests = options_.max_requests;
    good_draft_ = draft_;
    panel_->clear_errors();
    return s;
  } catch (const std::exception& e) {
    const QString message = QString::fromStdString(e.what());
    panel_->show_error(field_of(e, field), message);
    show_status(message, true);
    // Keep the last good state: the draft and the controls go back to it.
    const double load = draft_.load_multiplier();
    draft_ = good_draft_;
    if (!(load > 0)) draft_.set_load_multiplier(good_draft_.load_multiplier());
    if (catalog_) panel_->show_draft(draft_, *catalog_);
    sync_what_if_controls();
    return std::nullopt;
  }
}

std::shared_ptr<const model::Catalog> MainWindow::priced_catalog(ScenarioPanel::Field field) {
  const std::vector<PriceOverride> overrides = draft_.price_overrides();
  if (overrides.empty()) return catalog_;
  try {
    return std::make_shared<const model::Catalog>(
        catalog_with_prices(*catalog_, overrides, draft_.path().string()));
  } catch (const std::exception& e) {
    panel_->show_error(field_of(e, field), QString::fromStdString(e.what()));
    show_status(QString::fromStdString(e.what()), true);
    return nullptr;
  }
}

void MainWindow::request_what_if(ScenarioPanel::Field field) {
  if (draft_.empty() || !catalog_) return;
  requested_at_ = std::chrono::steady_clock::now();
  const std::optional<plan::Scenario> scenario = validated(field);
  if (!scenario) return;
  std::shared_ptr<const model::Catalog> catalog = priced_catalog(field);
  if (!catalog) return;
  QString export_cancelled;
  if (pending_export_) {
    export_cancelled =
        tr("Export to %1 cancelled: the inputs changed before its full run finished.")
            .arg(pending_export_->path);
    pending_export_.reset();
  }
  PlanInput input;
  input.scenario = *scenario;
  input.scenario_text = draft_.text();
  input.catalog = catalog;
  input.calibration = calibration_profile_;
  input.full_run = false;
  input.simulations = shared_simulations();
  input.previous_sizes = last_sizes_;
  input.previous_usd_per_hour = last_costs_;
  input.previous_load_multiplier = last_sizes_load_;
  input.basis = verdict_basis();
  if (!last_sizes_.empty()) input.previous_basis = last_basis_;
  // The last full run's search winners, while the scenario is the one it searched (load, SLO
  // and prices aside): a what-if then keeps the configurations the search chose.
  if (input.basis.context == search_choices_context_) input.choices = search_choices_;
  input.load_multiplier = draft_.load_multiplier();
  input.num_threads = options_.num_threads;
  input.requested_at = requested_at_;
  submit(false, false);
  // Classes carry their own SLOs: the scenario-level bounds are then 0 and no line is drawn.
  charts_->set_slo(scenario->slo.ttft_s, scenario->slo.tpot_s);
  if (!export_cancelled.isEmpty()) show_status(export_cancelled, true);
  controller_->submit(std::move(input));
}

bool MainWindow::run_full(bool analysis) {
  if (draft_.empty() || !catalog_) return false;
  requested_at_ = std::chrono::steady_clock::now();
  const std::optional<plan::Scenario> scenario = validated(ScenarioPanel::Field::kFile);
  if (!scenario) return false;
  std::shared_ptr<const model::Catalog> catalog = priced_catalog(ScenarioPanel::Field::kPrices);
  if (!catalog) return false;
  PlanInput input;
  input.scenario = *scenario;
  input.scenario_text = draft_.text();
  input.catalog = catalog;
  input.calibration = calibration_profile_;
  input.full_run = true;
  input.simulations = shared_simulations();
  input.analysis = analysis;
  input.load_multiplier = draft_.load_multiplier();
  input.num_threads = options_.num_threads;
  input.requested_at = requested_at_;
  submit(true, analysis);
  charts_->set_slo(scenario->slo.ttft_s, scenario->slo.tpot_s);
  controller_->submit(std::move(input));
  return true;
}

std::shared_ptr<plan::SharedSimulations> MainWindow::shared_simulations() {
  // A context keeps each simulation's metrics (no per-request records); a bound on contexts
  // bounds that memory in a long session of many loads, SLOs and scenarios.
  constexpr size_t kMaxSharedContexts = 256;
  if (simulations_->num_contexts() > kMaxSharedContexts) {
    simulations_ = plan::make_shared_simulations();
  }
  return simulations_;
}

VerdictBasis MainWindow::verdict_basis() const {
  VerdictBasis b;
  b.context = draft_.verdict_context();
  b.calibration = calibration_profile_.get();
  b.load_multiplier = draft_.load_multiplier();
  b.ttft_p99_s = draft_.has_single_slo() ? draft_.slo_ttft_s() : 0.0;
  b.tpot_p99_s = draft_.has_single_slo() ? draft_.slo_tpot_s() : 0.0;
  return b;
}

void MainWindow::submit(bool full_run, bool analysis) {
  current_full_ = full_run;
  submitted_draft_ = draft_;
  submitted_basis_ = verdict_basis();
  first_row_seen_ = false;
  first_feasible_seen_ = false;
  row_timer_->stop();
  pending_rows_.clear();  // a superseded run's
  // The rows to expect, in candidate order as the planner resolves them (the table keeps old
  // figures greyed until then). A candidate the catalog lacks fails the run with the
  // planner's own error, so no rows are expected then.
  std::vector<std::string> ids, kinds;
  const plan::Scenario s = good_draft_.scenario();
  try {
    for (const model::InstanceType* i : plan::resolve_candidates(s, *catalog_)) {
      ids.push_back(i->id);
      kinds.emplace_back(model::to_string(i->kind));
    }
  } catch (const base::InputError&) {
    ids.clear();
    kinds.clear();
  }
  if (!ids.empty()) results_->begin(ids, kinds);
  progress_->setRange(0, std::max<int>(1, static_cast<int>(ids.size())));
  progress_->setValue(0);
  show_status(
      full_run ? (analysis ? tr("Planning (full run with analyses)…") : tr("Planning (full run)…"))
               : tr("Planning what-if (load %1×)…").arg(draft_.load_multiplier(), 0, 'f', 2),
      false);
}

void MainWindow::on_row_ready(const RowUpdate& update) {
  bool at_once = false;  // the run's first row and first feasible row show without delay
  if (!first_row_seen_) {
    first_row_seen_ = true;
    at_once = true;
    first_row_s_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - requested_at_).count();
  }
  if (!first_feasible_seen_ && update.row.feasible) {
    first_feasible_seen_ = true;
    at_once = true;
    first_feasible_row_s_ =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - requested_at_).count();
  }
  pending_rows_.push_back(update.row);
  if (at_once) {
    flush_rows();
  } else if (!row_timer_->isActive()) {
    row_timer_->start();
  }
  progress_->setRange(0, static_cast<int>(update.num_total));
  progress_->setValue(static_cast<int>(update.num_done));
}

void MainWindow::flush_rows() {
  row_timer_->stop();
  if (pending_rows_.empty()) return;
  results_->set_rows(pending_rows_);
  pending_rows_.clear();
}

void MainWindow::on_finished(const PlanOutcome& outcome) {
  if (outcome.cancelled) return;
  flush_rows();  // the last rows are shown before the run counts as done
  const double last_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - requested_at_).count();
  if (!outcome.ok) {
    // Bad input found by the planner (e.g. a price model an instance does not offer): back to
    // the scenario of the last answer, which stays shown.
    results_->restore_stale();
    if (!ran_draft_.empty()) {
      draft_ = ran_draft_;
      good_draft_ = ran_draft_;
      if (catalog_) panel_->show_draft(draft_, *catalog_);
      sync_what_if_controls();
    }
    show_status(outcome.error, true);
    panel_->show_error(field_of(outcome.error_field_path, outcome.error.toStdString(),
                                ScenarioPanel::Field::kFile),
                       outcome.error);
    pending_export_.reset();  // its run failed: the error above says why
    emit runFinished(false, outcome.full_run);
    return;
  }
  results_->set_rows(outcome.rows);
  if (outcome.answer) {
    answer_card_->show_answer(*outcome.answer, outcome.full_run, outcome.used_choices);
  }
  ran_draft_ = submitted_draft_;
  if (outcome.full_run) {
    search_choices_ = outcome.search_choices;
    search_choices_context_ = submitted_basis_.context;
  }
  last_sizes_.clear();
  last_costs_.clear();
  for (const ResultRow& r : outcome.rows) {
    if (!r.feasible) continue;
    last_sizes_[r.instance_type] = r.num_instances;
    last_costs_[r.instance_type] = r.usd_per_hour;
  }
  last_sizes_load_ = outcome.load_multiplier;
  last_basis_ = submitted_basis_;
  RunTiming t;
  t.full_run = outcome.full_run;
  t.load_multiplier = outcome.load_multiplier;
  t.first_row_s = first_row_seen_ ? first_row_s_ : last_s;
  t.first_feasible_row_s = first_feasible_seen_ ? first_feasible_row_s_ : last_s;
  t.last_row_s = last_s;
  t.num_rows = outcome.rows.size();
  t.num_simulations = outcome.num_simulations;
  t.warm_start = !outcome.full_run;
  last_timing_ = t;
  qInfo(
      "llmcap-gui: %s at load %.2fx: first row after %.3f s, first feasible row after %.3f s, "
      "last row after %.3f s (%zu rows, %lld simulations)",
      outcome.full_run ? "full run" : "what-if", t.load_multiplier, t.first_row_s,
      t.first_feasible_row_s, t.last_row_s, t.num_rows, static_cast<long long>(t.num_simulations));
  progress_->setRange(0, 1);
  progress_->setValue(1);
  table_->resizeColumnsToContents();
  if (outcome.full_run && outcome.document) {
    last_document_ = outcome.document;
    last_document_scenario_text_ = submitted_draft_.text();
    last_document_calibration_ = submitted_basis_.calibration;
    charts_->clear_analysis();
    if (!charts_->show_analysis(*outcome.document))
      charts_->add_load_point(outcome.load_multiplier);
    QString stored;
    if (options_.store_runs) {
      try {
        last_stored_run_ =
            store_plan_document(*outcome.document, last_document_scenario_text_,
                                good_draft_.json().value("name", std::string()), "llmcap-gui");
        stored = tr("; stored as run %1").arg(last_stored_run_);
        runs_->refresh();
      } catch (const std::exception& e) {
        stored = tr("; not stored: %1").arg(QString::fromStdString(e.what()));
      }
    }
    show_status(tr("Full run: %1 instance types, %2 simulations, %3 s%4")
                        .arg(t.num_rows)
                        .arg(t.num_simulations)
                        .arg(t.last_row_s, 0, 'f', 2)
                        .arg(stored) +
                    engines_note(outcome.rows) + not_offered_note(outcome),
                false);
  } else {
    charts_->add_load_point(outcome.load_multiplier);
    charts_->show_fleet_over_day(outcome.fleet_over_day);
    keep_what_if(outcome);
    show_status(tr("What-if at load %1×: first row after %2 s, all %3 rows after %4 s "
                   "(%5 simulations)")
                        .arg(t.load_multiplier, 0, 'f', 2)
                        .arg(t.first_row_s, 0, 'f', 2)
                        .arg(t.num_rows)
                        .arg(t.last_row_s, 0, 'f', 2)
                        .arg(t.num_simulations) +
                    engines_note(outcome.rows) + not_offered_note(outcome),
                false);
  }
  if (pending_export_ && outcome.full_run) {
    const PendingExport e = *pending_export_;
    pending_export_.reset();
    export_report(e.path, e.format);
  }
  emit runFinished(true, outcome.full_run);
}

void MainWindow::set_load_multiplier(double multiplier) {
  updating_controls_ = true;
  load_slider_->setValue(static_cast<int>(std::lround(multiplier * 100)));
  updating_controls_ = false;
  draft_.set_load_multiplier(multiplier);
  request_what_if(ScenarioPanel::Field::kWorkload);
}

void MainWindow::set_slo(double ttft_p99_s, double tpot_p99_s) {
  draft_.set_slo(ttft_p99_s, tpot_p99_s);
  sync_what_if_controls();
  if (catalog_) panel_->show_draft(draft_, *catalog_);
  request_what_if(ScenarioPanel::Field::kSlo);
}

void MainWindow::set_weight_format(const QString& name) {
  draft_.set_weight_format(name.toStdString());
  sync_what_if_controls();
  request_what_if(ScenarioPanel::Field::kFile);
}

void MainWindow::set_weight_format(const QString& kind, const QString& name) {
  const bool kept = draft_.verdict_context() == search_choices_context_;
  draft_.set_weight_format(kind.toStdString(), name.toStdString());
  if (kept && catalog_) {
    // The other kind's types keep the configuration the search chose; this kind's now plan
    // the format asked for.
    for (auto it = search_choices_.begin(); it != search_choices_.end();) {
      const model::InstanceType* type = catalog_->find_instance(it->first);
      const bool this_kind = type == nullptr || model::to_string(type->kind) == kind.toStdString();
      it = this_kind ? search_choices_.erase(it) : std::next(it);
    }
    search_choices_context_ = draft_.verdict_context();
  }
  sync_what_if_controls();
  request_what_if(ScenarioPanel::Field::kFile);
}

void MainWindow::set_currency(const QString& code) {
  draft_.set_currency(code.toStdString());
  sync_what_if_controls();
  request_what_if(ScenarioPanel::Field::kPrices);
}

void MainWindow::set_price_model(const QString& name) {
  draft_.set_price_model(name.toStdString());
  sync_what_if_controls();
  if (catalog_) panel_->show_draft(draft_, *catalog_);
  request_what_if(ScenarioPanel::Field::kPrices);
}

QString MainWindow::answer_text() const { return answer_card_->text(); }

void MainWindow::show_document(const nlohmann::json& document, bool what_if) {
  // Rows from the document's results (the same figures the run stored).
  std::vector<std::string> ids, kinds;
  const nlohmann::json& results = document.value("results", nlohmann::json::array());
  for (const nlohmann::json& r : results) {
    ids.push_back(r.value("instance_type", std::string()));
    kinds.push_back(r.value("device_kind", std::string()));
  }
  results_->clear();
  results_->begin(ids, kinds);
  for (const nlohmann::json& r : results) {
    ResultRow row;
    row.instance_type = r.value("instance_type", std::string());
    row.device_kind = r.value("device_kind", std::string());
    row.state = ResultRow::State::kDone;
    row.feasible = r.value("feasible", false);
    const auto num = [&r](const char* key) {
      return r.contains(key) && r[key].is_number() ? r[key].get<double>() : 0.0;
    };
    row.num_instances = static_cast<int64_t>(num("num_instances"));
    row.usd_per_hour = num("usd_per_hour");
    row.usd_per_million_output_tokens = num("usd_per_million_output_tokens");
    if (r.contains("tco") && r["tco"].is_object()) {
      const nlohmann::json& t = r["tco"];
      if (t.contains("usd_per_hour") && t["usd_per_hour"].is_number())
        row.usd_per_hour = t["usd_per_hour"];
      if (t.contains("usd_per_million_output_tokens") &&
          t["usd_per_million_output_tokens"].is_number()) {
        row.usd_per_million_output_tokens = t["usd_per_million_output_tokens"];
      }
      row.price_model = t.value("price_model", std::string());
    }
    row.ttft_p50_s = num("ttft_p50_s");
    row.ttft_p99_s = num("ttft_p99_s");
    row.tpot_p50_s = num("tpot_p50_s");
    row.tpot_p99_s = num("tpot_p99_s");
    row.ttft_p90_s = num("ttft_p90_s");
    row.tpot_p90_s = num("tpot_p90_s");
    row.ttft_max_s = num("ttft_max_s");
    row.tpot_max_s = num("tpot_max_s");
    row.infeasible_reason = r.contains("infeasible_reason") && r["infeasible_reason"].is_string()
                                ? r["infeasible_reason"].get<std::string>()
                                : std::string();
    results_->set_row(row);
  }
  if (!what_if) last_document_ = std::make_shared<const nlohmann::json>(document);
  answer_card_->clear();
  if (document.contains("answer") && document["answer"].is_object()) {
    try {
      answer_card_->show_answer(app::answer_from_json(document["answer"]), !what_if);
    } catch (const nlohmann::json::exception&) {
      // A stored run of another shape: the card stays empty.
    }
  }
  charts_->clear_analysis();
  charts_->show_analysis(document);
}

bool MainWindow::export_report(const QString& path, const QString& format) {
  if (!last_document_) {
    show_status(tr("Nothing to export yet: run a full plan first (Run ▸ Run full plan)."), true);
    return false;
  }
  try {
    write_file(path.toStdString(), render_report(*last_document_, format.toStdString()));
  } catch (const std::exception& e) {
    show_status(QString::fromStdString(e.what()), true);
    return false;
  }
  show_status(tr("Exported %1").arg(path), false);
  return true;
}

bool MainWindow::export_current(const QString& path, const QString& format) {
  if (draft_.empty()) {
    show_status(tr("Nothing to export yet: open a scenario first."), true);
    return false;
  }
  if (last_document_ && last_document_scenario_text_ == draft_.text() &&
      last_document_calibration_ == calibration_profile_.get()) {
    return export_report(path, format);
  }
  pending_export_ = PendingExport{path, format};
  if (!run_full(/*analysis=*/true)) {  // it did not start (bad input, shown in place)
    pending_export_.reset();
    return false;
  }
  show_status(tr("Running the full plan of the current inputs for the export to %1…").arg(path),
              false);
  return true;
}

void MainWindow::export_dialog(const QString& format) {
  const QString f = QFileDialog::getSaveFileName(
      this, tr("Export the report"), QStringLiteral("report.") + format,
      format.toUpper() + QStringLiteral(" (*.") + format + QStringLiteral(")"));
  if (!f.isEmpty()) export_current(f, format);
}

void MainWindow::add_recent(const QString& path) {
  QSettings settings;
  QStringList files = settings.value(kRecentKey).toStringList();
  files.removeAll(path);
  files.prepend(path);
  while (files.size() > kMaxRecentFiles) files.removeLast();
  settings.setValue(kRecentKey, files);
  rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
  recent_menu_->clear();
  const QStringList files = QSettings().value(kRecentKey).toStringList();
  for (const QString& f : files) {
    recent_menu_->addAction(f, this, [this, f] { open_scenario(f); });
  }
  recent_menu_->setEnabled(!files.isEmpty());
}

}  // namespace llmcap::gui
