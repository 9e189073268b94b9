#include "gui/runs_view.h"

#include <QDateTime>
#include <QEvent>
#include <QFileInfo>
#include <QFileSystemWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
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

RunsView::RunsView(QWidget* parent)
    : QWidget(parent), runs_(this), compare_(this), what_ifs_(this) {
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
  auto* what_ifs_box = new QWidget(split);
  auto* what_ifs_layout = new QVBoxLayout(what_ifs_box);
  what_ifs_layout->setContentsMargins(0, 0, 0, 0);
  what_ifs_label_ = new QLabel(what_ifs_box);
  what_ifs_view_ = new QTableView(what_ifs_box);
  what_ifs_view_->setModel(&what_ifs_);
  what_ifs_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  what_ifs_view_->setSelectionMode(QAbstractItemView::ExtendedSelection);
  what_ifs_view_->verticalHeader()->hide();
  what_ifs_view_->horizontalHeader()->setStretchLastSection(true);
  what_ifs_layout->addWidget(what_ifs_label_);
  what_ifs_layout->addWidget(what_ifs_view_, 1);
  split->addWidget(runs_view_);
  split->addWidget(what_ifs_box);
  split->addWidget(compare_view_);
  layout->addWidget(split, 1);

  // Live: a run stored by this window or another process shows without a click.
  watcher_ = new QFileSystemWatcher(this);
  connect(watcher_, &QFileSystemWatcher::fileChanged, this, [this] { check_for_changes(); });
  connect(watcher_, &QFileSystemWatcher::directoryChanged, this, [this] { check_for_changes(); });
  poll_timer_ = new QTimer(this);
  poll_timer_->setInterval(kPollMs);
  connect(poll_timer_, &QTimer::timeout, this, [this] { check_for_changes(); });
  poll_timer_->start();
  connect(refresh_button_, &QPushButton::clicked, this, [this] { refresh(); });
  connect(open_button_, &QPushButton::clicked, this, [this] {
    const std::vector<int64_t> ids = selected_ids();
    const std::vector<int> what_ifs = selected_what_ifs();
    if (!ids.empty()) {
      open(ids.front());
    } else if (!what_ifs.empty()) {
      open_what_if(what_ifs.front());
    }
  });
  connect(compare_button_, &QPushButton::clicked, this, [this] {
    const std::vector<int64_t> ids = selected_ids();
    const std::vector<int> what_ifs = selected_what_ifs();
    if (ids.size() == 2 && what_ifs.empty()) {
      compare(ids[1], ids[0]);  // older first
    } else if (what_ifs.size() == 2 && ids.empty()) {
      compare_what_ifs(what_ifs[1], what_ifs[0]);  // older first
    } else if (ids.size() == 1 && what_ifs.size() == 1) {
      try {
        compare_documents(tr("run %1").arg(ids[0]), load_run_document(ids[0]),
                          kept_[static_cast<size_t>(what_ifs[0])].first,
                          kept_[static_cast<size_t>(what_ifs[0])].second);
      } catch (const std::exception& e) {
        show_error(QString::fromStdString(e.what()));
      }
    } else {
      show_error(tr("Select two runs or what-ifs to compare."));
    }
  });
  connect(what_ifs_view_, &QTableView::doubleClicked, this,
          [this](const QModelIndex& i) { open_what_if(i.row()); });
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
      {tr("Instance type"), tr("%1: fleet").arg(compare_a_), tr("%1: USD/hour").arg(compare_a_),
       tr("%1: fleet").arg(compare_b_), tr("%1: USD/hour").arg(compare_b_),
       tr("%1: reason").arg(compare_a_), tr("%1: reason").arg(compare_b_)});
  what_ifs_label_->setText(
      tr("What-ifs of this session (kept until the window closes, not in the database):"));
  what_ifs_.setHorizontalHeaderLabels({tr("What-if"), tr("Answer"), tr("USD/hour")});
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

QString RunsView::database_signature() const {
  const QString db = QString::fromStdString(database_path().string());
  QString signature;
  for (const QString& path : {db, db + QStringLiteral("-wal")}) {
    const QFileInfo f(path);
    if (!f.exists()) continue;
    signature += QString::number(f.size()) + QLatin1Char('@') +
                 QString::number(f.lastModified().toMSecsSinceEpoch()) + QLatin1Char(';');
  }
  return signature;
}

bool RunsView::check_for_changes() {
  if (database_signature() == last_signature_) return false;
  refresh();
  return true;
}

void RunsView::refresh() {
  last_signature_ = database_signature();
  // Watch the database and its WAL (created on the first write) and, until they exist, the
  // folder.
  const QString db = QString::fromStdString(database_path().string());
  for (const QString& path : {db, db + QStringLiteral("-wal"), QFileInfo(db).absolutePath()}) {
    if (QFileInfo::exists(path) && !watcher_->files().contains(path) &&
        !watcher_->directories().contains(path)) {
      watcher_->addPath(path);
    }
  }
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

std::vector<int> RunsView::selected_what_ifs() const {
  std::set<int> rows;
  for (const QModelIndex& i : what_ifs_view_->selectionModel()->selectedRows())
    rows.insert(i.row());
  return {rows.begin(), rows.end()};
}

void RunsView::keep_what_if(const QString& name, nlohmann::json document) {
  for (size_t i = 0; i < kept_.size(); ++i) {
    if (kept_[i].first == name) {
      kept_.erase(kept_.begin() + static_cast<std::ptrdiff_t>(i));
      what_ifs_.removeRow(static_cast<int>(i));
      break;
    }
  }
  QString answer;
  auto* cost = new QStandardItem;
  cost->setEditable(false);
  if (document.contains("answer") && document["answer"].is_object()) {
    const nlohmann::json& a = document["answer"];
    if (a.contains("num_instances") && a["num_instances"].is_number() &&
        a.contains("instance_type") && a["instance_type"].is_string()) {
      answer = QStringLiteral("%1 × %2")
                   .arg(a["num_instances"].get<int64_t>())
                   .arg(QString::fromStdString(a["instance_type"].get<std::string>()));
    }
    if (a.contains("cost_per_hour") && a["cost_per_hour"].is_number()) {
      cost->setData(a["cost_per_hour"].get<double>(), Qt::DisplayRole);
    }
  }
  what_ifs_.insertRow(0, QList<QStandardItem*>{text_item(name), text_item(answer), cost});
  kept_.insert(kept_.begin(), {name, std::move(document)});
  retranslateUi();
  what_ifs_view_->resizeColumnsToContents();
}

bool RunsView::open_what_if(int row) {
  if (row < 0 || row >= static_cast<int>(kept_.size())) return false;
  show_error({});
  emit whatIfOpenRequested(kept_[static_cast<size_t>(row)].first,
                           kept_[static_cast<size_t>(row)].second);
  return true;
}

bool RunsView::compare_what_ifs(int a, int b) {
  const int n = static_cast<int>(kept_.size());
  if (a < 0 || b < 0 || a >= n || b >= n) return false;
  return compare_documents(
      kept_[static_cast<size_t>(a)].first, kept_[static_cast<size_t>(a)].second,
      kept_[static_cast<size_t>(b)].first, kept_[static_cast<size_t>(b)].second);
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
  return compare_documents(tr("run %1").arg(a), da, tr("run %1").arg(b), db);
}

bool RunsView::compare_documents(const QString& label_a, const nlohmann::json& da,
                                 const QString& label_b, const nlohmann::json& db) {
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
    show_error(tr("%1 or %2 holds no plan results to compare.").arg(label_a, label_b));
    return false;
  }
  compare_a_ = label_a;
  compare_b_ = label_b;
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
