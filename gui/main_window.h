// The main window: scenario panel (left), what-if bar, results table and charts (one
// ResultsModel), runs, calibration and audit tabs; menus for files, runs, export, language.
#pragma once

#include <QMainWindow>
#include <QString>
#include <QTimer>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gui/language.h"
#include "gui/plan_worker.h"
#include "gui/results_model.h"
#include "gui/scenario_draft.h"
#include "gui/scenario_panel.h"
#include "model/calibration.h"
#include "model/hardware.h"
#include "plan/scenario.h"

class QAction;
class QButtonGroup;
class QCheckBox;
class QComboBox;
class QDockWidget;
class QLabel;
class QMenu;
class QProgressBar;
class QPushButton;
class QSlider;
class QSortFilterProxyModel;
class QTabWidget;
class QTableView;
class QToolButton;

namespace llmcap::gui {

class AnswerCard;

class AuditView;
class CalibrationView;
class ChartsView;
class RunsView;

/// Times of one finished run, measured from the request (slider released, button pressed) to
/// the first row and to the last row shown.
struct RunTiming {
  bool full_run = false;
  double load_multiplier = 1;
  double first_row_s = 0;  ///< to the first row applied to the model (GUI thread)
  /// To the first feasible row (a fleet size, not a type ruled out by its floors); equals
  /// last_row_s when no row is feasible.
  double first_feasible_row_s = 0;
  double last_row_s = 0;  ///< to the run's end applied to the model (GUI thread)
  size_t num_rows = 0;
  int64_t num_simulations = 0;
  bool warm_start = false;
};

class MainWindow : public QMainWindow {
  Q_OBJECT

 public:
  struct Options {
    std::filesystem::path data_dir;  ///< catalogs and models
    int num_threads = 0;             ///< planner threads (0: hardware concurrency)
    bool store_runs = true;          ///< full runs go to the results database
    /// The most requests a run's workload may have (plan::Scenario::max_requests;
    /// llmcap-gui --max-requests); a larger one is shown as an error before any simulation.
    int64_t max_requests = plan::kDefaultMaxRequests;
  };

  MainWindow(Options options, Language* language, QWidget* parent = nullptr);
  ~MainWindow() override;

  /// Opens a scenario file; on error keeps the last good scenario, shows the error in the
  /// status bar and the panel, and returns false.
  bool open_scenario(const QString& path);
  bool save_scenario(const QString& path);
  /// Starts a full plan (run document, analyses when `analysis`), stored in the database;
  /// false when the input is bad (the error is shown in place).
  bool run_full(bool analysis);
  /// As if the load slider were released at `multiplier` (what-if run).
  void set_load_multiplier(double multiplier);
  /// As if the SLO sliders were released.
  void set_slo(double ttft_p99_s, double tpot_p99_s);
  void set_weight_format(const QString& name);  ///< every device kind's
  /// The weight format of one device kind ("gpu" or "cpu"), as its what-if list does.
  void set_weight_format(const QString& kind, const QString& name);
  void set_currency(const QString& code);     ///< "USD" or a currency with an exchange rate
  void set_price_model(const QString& name);  ///< "" = the catalog's own
  /// Writes the last full run's report; false with the error in the status bar.
  bool export_report(const QString& path, const QString& format);
  /// Exports the report of the current inputs (what File ▸ Export does): at once when the
  /// last full run was of exactly these inputs (scenario text and calibration profile), else
  /// once a full run (with the analyses) of them, started here, has finished. A new input
  /// before then cancels the export (said in the status bar). False when nothing could start.
  bool export_current(const QString& path, const QString& format);
  bool export_pending() const { return pending_export_.has_value(); }
  /// Opens a stored run document into the table and charts; `what_if`: a kept what-if of
  /// this session (RunsView::keep_what_if), whose answer is a what-if's and which is not what
  /// Export writes.
  void show_document(const nlohmann::json& document, bool what_if = false);
  /// The name a what-if of the current inputs is kept under: what differs from the scenario as
  /// opened ("load 2.00×, int4, reserved_1y"), or "as opened".
  QString what_if_name() const;
  /// Keeps a finished what-if in the Runs tab under what_if_name().
  void keep_what_if(const PlanOutcome& outcome);

  ResultsModel* results() { return results_; }
  QSortFilterProxyModel* sorted_results() { return sorted_; }
  ChartsView* charts() { return charts_; }
  ScenarioPanel* panel() { return panel_; }
  RunsView* runs() { return runs_; }
  CalibrationView* calibration() { return calibration_; }
  AuditView* audit() { return audit_; }
  QSlider* load_slider() { return load_slider_; }
  QTabWidget* tabs() { return tabs_; }
  QString status_text() const;
  /// The answer card's text (rich text) as shown.
  QString answer_text() const;
  const ScenarioDraft& draft() const { return draft_; }
  const std::optional<RunTiming>& last_timing() const { return last_timing_; }
  bool busy() const { return controller_->busy(); }
  std::shared_ptr<const nlohmann::json> last_document() const { return last_document_; }
  int64_t last_stored_run() const { return last_stored_run_; }

 signals:
  /// A run ended (ok false: bad input or a failure; the status bar says why).
  void runFinished(bool ok, bool full_run);

 protected:
  void changeEvent(QEvent* event) override;

 private:
  void build_ui();
  void build_menus();
  void retranslateUi();
  void show_status(const QString& message, bool error);
  /// Validates the draft; on failure restores the last good one and shows the error next to
  /// the field it names. Returns the scenario when valid.
  std::optional<plan::Scenario> validated(ScenarioPanel::Field field);
  void submit(bool full_run, bool analysis);
  void request_what_if(ScenarioPanel::Field field);
  void on_row_ready(const RowUpdate& update);
  /// Applies the rows on_row_ready held back (pending_rows_) in one model update.
  void flush_rows();
  void on_finished(const PlanOutcome& outcome);
  void sync_what_if_controls();
  /// The current draft's VerdictBasis (with the current calibration profile).
  VerdictBasis verdict_basis() const;
  void add_recent(const QString& path);
  void rebuild_recent_menu();
  void export_dialog(const QString& format);
  std::shared_ptr<const model::Catalog> priced_catalog(ScenarioPanel::Field field);

  Options options_;
  Language* language_;
  std::shared_ptr<const model::Catalog> catalog_;  ///< as loaded from data_dir
  ScenarioDraft draft_;
  ScenarioDraft good_draft_;
  ScenarioDraft opened_draft_;     ///< as opened: what-if names say what differs from it       ///<
                                   ///< last draft that validated
  ScenarioDraft submitted_draft_;  ///< the draft of the run in progress
  ScenarioDraft ran_draft_;        ///< the draft of the last answer shown (empty: none)
  std::shared_ptr<const model::CalibrationProfile> calibration_profile_;
  /// The simulations of this window's runs (full and what-if), by context: a what-if of a load,
  /// SLO or scenario seen before reuses them (plan::SharedSimulations). A new one when the
  /// calibration profile changes (its address is part of the context) or past
  /// kMaxSharedContexts contexts (memory).
  std::shared_ptr<plan::SharedSimulations> simulations_ = plan::make_shared_simulations();
  std::shared_ptr<plan::SharedSimulations> shared_simulations();
  std::map<std::string, int64_t> last_sizes_;  ///< warm start
  std::map<std::string, double> last_costs_;   ///< search order of the next what-if run
  double last_sizes_load_ = 1.0;
  VerdictBasis submitted_basis_;            ///< of the run in progress
  std::optional<VerdictBasis> last_basis_;  ///< what last_sizes_ were computed under
  /// The last full run's search winners per type, kept for what-ifs of the same verdict
  /// context (search_choices_context_: a format or file change drops them).
  std::map<std::string, plan::ServingChoice> search_choices_;
  std::string search_choices_context_;
  std::shared_ptr<const nlohmann::json> last_document_;
  std::string last_document_scenario_text_;
  const void* last_document_calibration_ = nullptr;
  struct PendingExport {
    QString path;
    QString format;
  };
  std::optional<PendingExport> pending_export_;  ///< waits for the full run it started
  int64_t last_stored_run_ = 0;
  std::optional<RunTiming> last_timing_;
  std::chrono::steady_clock::time_point requested_at_;
  bool first_row_seen_ = false;
  double first_row_s_ = 0;
  bool first_feasible_seen_ = false;
  double first_feasible_row_s_ = 0;
  /// Rows of the run in progress not yet in the results model: after its first row and its
  /// first feasible row (shown at once), rows are applied at most every kRowBatchInterval
  /// (row_timer_), as each model update re-sorts the table and rebuilds the charts.
  std::vector<ResultRow> pending_rows_;
  QTimer* row_timer_;
  bool current_full_ = false;
  bool updating_controls_ = false;

  PlanController* controller_;
  ResultsModel* results_;
  QSortFilterProxyModel* sorted_;
  ScenarioPanel* panel_;
  ChartsView* charts_;
  RunsView* runs_;
  CalibrationView* calibration_;
  AuditView* audit_;
  QTabWidget* tabs_;
  QTableView* table_;
  AnswerCard* answer_card_;
  QLabel* load_label_;
  QLabel* load_value_;
  QSlider* load_slider_;
  QLabel* ttft_label_;
  QLabel* ttft_value_;
  QSlider* ttft_slider_;
  QLabel* tpot_label_;
  QLabel* tpot_value_;
  QSlider* tpot_slider_;
  QLabel* format_label_;
  QComboBox* format_combo_;  ///< the GPU instances' weight format, every model::WeightFormat
  QLabel* cpu_format_label_;
  QComboBox* cpu_format_combo_;  ///< the CPU instances' weight format
  QLabel* price_label_;
  QComboBox* price_combo_;
  QLabel* currency_label_;
  QComboBox* currency_combo_;  ///< USD and each currency of the catalog's exchange rates
  QPushButton* run_button_;
  QCheckBox* analysis_check_;
  QLabel* status_label_;
  QProgressBar* progress_;
  QDockWidget* panel_dock_;
  QMenu* file_menu_;
  QMenu* recent_menu_;
  QMenu* export_menu_;
  QMenu* run_menu_;
  QMenu* language_menu_;
  QAction* open_action_;
  QAction* save_action_;
  QAction* save_as_action_;
  QAction* quit_action_;
  QAction* run_action_;
  QAction* store_action_;
  QAction* export_pdf_;
  QAction* export_html_;
  QAction* export_xlsx_ = nullptr;
  QAction* export_csv_;
  QAction* lang_en_;
  QAction* lang_zh_;
};

}  // namespace llmcap::gui
