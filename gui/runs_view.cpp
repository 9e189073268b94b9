#include "gui/runs_view.h"

#include <QEvent>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <exception>
#include <map>
#include <set>

#include "gui/seams.h"

namespace llmcap::gui {
namespace {

QStandardItem* text_item(const QString& s) {
  auto* i = new QStandardItem(s);
  i->setEditable(false);
  return i;
}

QStandardItem* number_item(const nlohmann::json& row, const char* key) {
  auto* i = new QStandardItem;
  i->setEditable(false);
  if (row.contains(key) && row[key].is_number())
    i->setData(row[key].get<double>(), Qt::DisplayRole);
  return i;
}

}  // namespace

RunsView::RunsView(QWidget* parent) : QWidget(parent), runs_(this), compare_(this) {
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  refresh_button_ = new QPushButton(this);
  open_button_ = new QPushButton(this);
  compare_button_ = new QPushButton(this);
  db_label_ = new QLabel(this);
  db_label_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  top->addWidget(refresh_button_);
  top->addWidget(open_button_);
  top->addWidget(compare_button_);
  top->addWidget(db_label_, 1);
  layout->addLayout(top);
  error_label_ = new QLabel(this);
  error_label_->setStyleSheet("color: #b00020;");
  error_label_->setWordWrap(true);
  error_label_->hide();
  layout->addWidget(error_label_);
  auto* split = new QSplitter(Qt::Vertical, this);
  runs_view_ = new QTableView(split);
  runs_view_->setModel(&runs_);
  runs_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  runs_view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  runs_view_->verticalHeader()->hide();
  runs_view_->horizontalHeader()->setStretchLastSection(true);
  compare_view_ = new QTableView(split);
  compare_view_->setModel(&compare_);
  compare_view_->verticalHeader()->hide();
  compare_view_->horizontalHeader()->setStretchLastSection(true);
  split->addWidget(runs_view_);
  split->addWidget(compare_view_);
  layout->addWidget(split, 1);

  connect(refresh_button_, &QPushButton::clicked, this, [this] { refresh(); });
  connect(open_button_, &QPushButton::clicked, this, [this] {
    const std::vector<int64_t> ids = selected_ids();
    if (!ids.empty()) open(ids.front());
  });
  connect(compare_button_, &QPushButton::clicked, this, [this] {
    const std::vector<int64_t> ids = selected_ids();
    if (ids.size() != 2) {
      show_error(tr("Select two runs to compare."));
      return;
    }
    compare(ids[1], ids[0]);  // older first
  });
  retranslateUi();
}

void RunsView::changeEvent(QEvent* event) {
  if (event->type() == QEvent::LanguageChange) retranslateUi();
  QWidget::changeEvent(event);
}

void RunsView::retranslateUi() {
  refresh_button_->setText(tr("Refresh"));
  open_button_->setText(tr("Open"));
  compare_button_->setText(tr("Compare two"));
  db_label_->setText(tr("Database: %1").arg(QString::fromStdString(database_path().string())));
  runs_.setHorizontalHeaderLabels(
      {tr("Run"), tr("Kind"), tr("Name"), tr("Created (UTC)"), tr("Summary")});
  compare_.setHorizontalHeaderLabels(
      {tr("Instance type"), tr("Run %1: fleet").arg(compare_a_),
       tr("Run %1: USD/hour").arg(compare_a_), tr("Run %1: fleet").arg(compare_b_),
       tr("Run %1: USD/hour").arg(compare_b_), tr("Run %1: reason").arg(compare_a_),
       tr("Run %1: reason").arg(compare_b_)});
}

void RunsView::show_error(const QString& message) {
  error_label_->setText(message);
  error_label_->setVisible(!message.isEmpty());
}

QString RunsView::error_text() const {
  return error_label_->isHidden() ? QString() : error_label_->text();
}

std::vector<int64_t> RunsView::selected_ids() const {
  std::set<int> rows;
  for (const QModelIndex& i : runs_view_->selectionModel()->selectedRows()) rows.insert(i.row());
  std::vector<int64_t> ids;
  for (int r : rows) ids.push_back(runs_.item(r, kId)->data(Qt::DisplayRole).toLongLong());
  return ids;
}

void RunsView::refresh() {
  runs_.removeRows(0, runs_.rowCount());
  try {
    for (const StoredRun& r : list_stored_runs("", 200)) {
      QList<QStandardItem*> row;
      auto* id = new QStandardItem;
      id->setData(QVariant::fromValue<qlonglong>(r.id), Qt::DisplayRole);
      id->setEditable(false);
      row << id << text_item(QString::fromStdString(r.kind))
          << text_item(QString::fromStdString(r.name))
          << text_item(QString::fromStdString(r.created_utc))
          << text_item(QString::fromStdString(r.summary));
      runs_.appendRow(row);
    }
    show_error({});
  } catch (const std::exception& e) {
    show_error(QString::fromStdString(e.what()));
  }
  retranslateUi();
  runs_view_->resizeColumnsToContents();
}

bool RunsView::open(int64_t id) {
  try {
    const nlohmann::json doc = load_run_document(id);
    show_error({});
    emit openRequested(id, doc);
    return true;
  } catch (const std::exception& e) {
    show_error(QString::fromStdString(e.what()));
    return false;
  }
}

bool RunsView::compare(int64_t a, int64_t b) {
  nlohmann::json da, db;
  try {
    da = load_run_document(a);
    db = load_run_document(b);
  } catch (const std::exception& e) {
    show_error(QString::fromStdString(e.what()));
    return false;
  }
  const auto results = [](const nlohmann::json& d) {
    std::map<std::string, nlohmann::json> by_type;
    if (d.contains("results") && d["results"].is_array()) {
      for (const nlohmann::json& r : d["results"])
        by_type[r.value("instance_type", std::string())] = r;
    }
    return by_type;
  };
  const auto ra = results(da);
  const auto rb = results(db);
  if (ra.empty() || rb.empty()) {
    show_error(tr("Run %1 or %2 holds no plan results to compare.").arg(a).arg(b));
    return false;
  }
  compare_a_ = a;
  compare_b_ = b;
  compare_.removeRows(0, compare_.rowCount());
  std::vector<std::string> types;
  for (const auto& [t, r] : ra) types.push_back(t);
  for (const auto& [t, r] : rb) {
    if (ra.count(t) == 0) types.push_back(t);
  }
  const nlohmann::json none = nlohmann::json::object();
  for (const std::string& t : types) {
    const nlohmann::json& x = ra.count(t) ? ra.at(t) : none;
    const nlohmann::json& y = rb.count(t) ? rb.at(t) : none;
    const auto reason = [](const nlohmann::json& r) {
      return QString::fromStdString(r.contains("infeasible_reason") &&
                                            r["infeasible_reason"].is_string()
                                        ? r["infeasible_reason"].get<std::string>()
                                        : std::string());
    };
    QList<QStandardItem*> row;
    row << text_item(QString::fromStdString(t)) << number_item(x, "num_instances")
        << number_item(x, "usd_per_hour") << number_item(y, "num_instances")
        << number_item(y, "usd_per_hour") << text_item(reason(x)) << text_item(reason(y));
    compare_.appendRow(row);
  }
  show_error({});
  retranslateUi();
  compare_view_->resizeColumnsToContents();
  return true;
}

}  // namespace llmcap::gui
