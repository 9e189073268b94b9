#include "gui/calibration_view.h"

#include <QBarCategoryAxis>
#include <QBarSeries>
#include <QBarSet>
#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QEvent>
#include <QFileDialog>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QThread>
#include <QVBarModelMapper>
#include <QVBoxLayout>
#include <QValueAxis>
#include <algorithm>
#include <exception>
#include <vector>

#include "app/decoder_support.h"
#include "app/profile.h"
#include "gui/chart_models.h"

namespace llmcap::gui {

CalibrationView::CalibrationView(QWidget* parent) : QWidget(parent), model_(this) {
  auto* layout = new QVBoxLayout(this);
  auto* buttons = new QHBoxLayout;
  quick_button_ = new QPushButton(this);
  model_label_ = new QLabel(this);
  model_combo_ = new QComboBox(this);
  model_combo_->addItem(QString(), QString());  // the sweep's shapes only (retranslateUi)
  model_combo_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  model_label_->setBuddy(model_combo_);
  open_button_ = new QPushButton(this);
  use_check_ = new QCheckBox(this);
  use_check_->setEnabled(false);
  buttons->addWidget(quick_button_);
  buttons->addWidget(model_label_);
  buttons->addWidget(model_combo_);
  buttons->addWidget(open_button_);
  buttons->addWidget(use_check_);
  buttons->addStretch(1);
  layout->addLayout(buttons);
  machine_label_ = new QLabel(this);
  machine_label_->setWordWrap(true);
  layout->addWidget(machine_label_);
  error_label_ = new QLabel(this);
  error_label_->setStyleSheet("color: #b00020;");
  error_label_->setWordWrap(true);
  error_label_->hide();
  layout->addWidget(error_label_);
  auto* split = new QSplitter(Qt::Vertical, this);
  model_.setColumnCount(kNumColumns);  // before the mapper reads it
  table_ = new QTableView(split);
  table_->setModel(&model_);
  table_->verticalHeader()->hide();
  auto* chart = new QChart;
  auto* series = new QBarSeries(chart);
  auto* columns = new ColumnsProxy(&model_, {kGbPerS, kMachineGbPerS}, series);
  auto* mapper = new QVBarModelMapper(series);
  mapper->setFirstBarSetColumn(0);  // kGbPerS
  mapper->setLastBarSetColumn(1);   // kMachineGbPerS
  mapper->setSeries(series);
  mapper->setModel(columns);
  chart->addSeries(series);
  auto* cats = new QBarCategoryAxis(chart);
  auto* values = new QValueAxis(chart);
  chart->addAxis(cats, Qt::AlignBottom);
  chart->addAxis(values, Qt::AlignLeft);
  series->attachAxis(cats);
  series->attachAxis(values);
  chart_view_ = new QChartView(chart, split);
  chart_view_->setMinimumHeight(220);
  split->addWidget(table_);
  split->addWidget(chart_view_);
  layout->addWidget(split, 1);

  connect(quick_button_, &QPushButton::clicked, this,
          [this] { start_calibration(kernels::SweepSize::kQuick); });
  connect(open_button_, &QPushButton::clicked, this, [this] {
    const QString f = QFileDialog::getOpenFileName(this, tr("Open a calibration profile"), {},
                                                   tr("JSON files (*.json)"));
    if (!f.isEmpty()) open_profile(f);
  });
  connect(use_check_, &QCheckBox::toggled, this,
          [this](bool on) { emit planProfileChanged(on ? profile_ : nullptr); });
  retranslateUi();
}

void CalibrationView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslateUi();
  QWidget::changeEvent(event);
}

void CalibrationView::retranslateUi() {
  quick_button_->setText(running_ ? tr("Calibrating…") : tr("Run a quick calibration (~11 s)"));
  model_label_->setText(tr("Also time the shapes of:"));
  model_combo_->setItemText(0, tr("no model (the sweep's shapes)"));
  model_combo_->setToolTip(
      tr("A model's own matrix shapes (every format) and attention layout are timed too, so "
         "that plans of that model use their measured times (llmcap calibrate --model); a "
         "quick run then takes a few seconds more."));
  open_button_->setText(tr("Open a profile…"));
  use_check_->setText(tr("Use this profile for CPU instance types in plans"));
  model_.setHorizontalHeaderLabels({tr("Kernel"), tr("Format"), tr("Shape"), tr("Batch"),
                                    tr("Threads"), tr("GB/s"), tr("Machine read GB/s"),
                                    tr("Fraction")});
  QChart* chart = chart_view_->chart();
  chart->setTitle(tr("Kernel bandwidth against the machine's read bandwidth (GB/s)"));
  if (profile_ == nullptr) {
    machine_label_->setText(
        tr("No calibration yet: run one, or open a profile written by "
           "`llmcap calibrate --out`."));
  }
}

void CalibrationView::show_error(const QString& message) {
  error_label_->setText(message);
  error_label_->setVisible(!message.isEmpty());
}

QString CalibrationView::error_text() const {
  return error_label_->isHidden() ? QString() : error_label_->text();
}

bool CalibrationView::use_for_plans() const { return use_check_->isChecked(); }

void CalibrationView::set_models_dir(const std::filesystem::path& dir) {
  while (model_combo_->count() > 1) model_combo_->removeItem(1);
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    model_combo_->addItem(QString::fromStdString(f.stem().string()),
                          QString::fromStdString(f.string()));
  }
}

bool CalibrationView::select_model(const QString& path) {
  const int i = model_combo_->findData(path);
  if (i < 0) return false;
  model_combo_->setCurrentIndex(i);
  return true;
}

QString CalibrationView::selected_model() const { return model_combo_->currentData().toString(); }

void CalibrationView::start_calibration(kernels::SweepSize size) {
  if (running_) return;
  running_ = true;
  quick_button_->setEnabled(false);
  model_combo_->setEnabled(false);
  retranslateUi();
  QPointer<CalibrationView> self(this);
  const std::string model_file = selected_model().toStdString();
  QThread* thread = QThread::create([self, size, model_file] {
    std::shared_ptr<model::CalibrationProfile> profile;
    QString error;
    try {
      kernels::CalibrationOptions options;
      options.quick = size == kernels::SweepSize::kQuick;
      options.size =
          size == kernels::SweepSize::kTest ? kernels::SweepSize::kTest : kernels::SweepSize::kFull;
      if (!model_file.empty()) {
        options.extra_matmul_shapes = app::model_matmul_shapes({model_file});
        options.extra_attention_layouts = app::model_attention_layouts({model_file});
      }
      const kernels::CalibrationRun run = kernels::run_calibration(options);
      profile = std::make_shared<model::CalibrationProfile>(
          app::to_profile(run, "llmcap-gui (calibration view)"));
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    if (self == nullptr) return;
    QMetaObject::invokeMethod(
        self.data(),
        [self, profile, error] {
          if (self == nullptr) return;
          self->running_ = false;
          self->quick_button_->setEnabled(true);
          self->model_combo_->setEnabled(true);
          self->retranslateUi();
          if (profile) {
            self->show_error({});
            self->show_profile(*profile);
          } else {
            self->show_error(error);
          }
          emit self->calibrationFinished(profile != nullptr);
        },
        Qt::QueuedConnection);
  });
  thread->setParent(this);
  connect(thread, &QThread::finished, thread, &QObject::deleteLater);
  thread->start();
}

bool CalibrationView::open_profile(const QString& path) {
  try {
    const model::CalibrationProfile p = model::read_profile_json(path.toStdString());
    show_error({});
    show_profile(p);
    return true;
  } catch (const std::exception& e) {
    show_error(QString::fromStdString(e.what()));
    return false;
  }
}

void CalibrationView::show_profile(const model::CalibrationProfile& profile) {
  profile_ = std::make_shared<const model::CalibrationProfile>(profile);
  const model::CalibrationMachine& m = profile.machine;
  const int threads = profile.fit.threads;
  const auto bw = m.read_bandwidth_bytes_per_s.find(threads);
  const double machine = bw != m.read_bandwidth_bytes_per_s.end() ? bw->second : 0.0;
  machine_label_->setText(tr("%1, %2 logical CPUs; read bandwidth %3 GB/s at %4 threads. "
                             "Kernels measured at %4 threads on operands rotated through "
                             "memory (cache-resident samples left out).")
                              .arg(QString::fromStdString(m.cpu_model))
                              .arg(m.num_cores)
                              .arg(machine / 1e9, 0, 'f', 1)
                              .arg(threads));
  model_.removeRows(0, model_.rowCount());
  QStringList categories;
  for (const model::KernelSample& s : profile.kernels) {
    if (s.threads != threads || s.cache_resident) continue;
    QList<QStandardItem*> row;
    row << new QStandardItem(QString::fromStdString(s.op));
    row << new QStandardItem(QString::fromStdString(s.format));
    row << new QStandardItem(QStringLiteral("%1x%2").arg(s.rows).arg(s.cols));
    auto num = [](double v, int decimals) {
      auto* item = new QStandardItem;
      item->setData(QString::number(v, 'f', decimals).toDouble(), Qt::DisplayRole);
      return item;
    };
    row << num(static_cast<double>(s.batch), 0) << num(s.threads, 0);
    row << num(s.bytes_per_s / 1e9, 1) << num(machine / 1e9, 1);
    row << num(machine > 0 ? s.bytes_per_s / machine : 0.0, 2);
    for (QStandardItem* i : row) i->setEditable(false);
    model_.appendRow(row);
    categories << QStringLiteral("%1 %2 b%3")
                      .arg(QString::fromStdString(s.op), QString::fromStdString(s.format))
                      .arg(s.batch);
  }
  QChart* chart = chart_view_->chart();
  for (QAbstractAxis* a : chart->axes(Qt::Horizontal)) {
    if (auto* c = qobject_cast<QBarCategoryAxis*>(a)) {
      c->clear();
      c->append(categories);
    }
  }
  for (QAbstractAxis* a : chart->axes(Qt::Vertical)) {
    if (auto* v = qobject_cast<QValueAxis*>(a)) {
      double top = machine / 1e9;
      for (int r = 0; r < model_.rowCount(); ++r) {
        top = std::max(top, model_.item(r, kGbPerS)->data(Qt::DisplayRole).toDouble());
      }
      v->setRange(0, top > 0 ? top * 1.1 : 1);
      v->applyNiceNumbers();
    }
  }
  table_->resizeColumnsToContents();
  use_check_->setEnabled(true);
  retranslateUi();
  if (use_check_->isChecked()) emit planProfileChanged(profile_);
}

}  // namespace llmcap::gui
