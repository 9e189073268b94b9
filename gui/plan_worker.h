// Planning off the GUI thread. The planner reports each finished instance type through
// plan::PlanObserver (full runs) or plan::plan_what_if's on_row (what-if runs, plan/what_if.h);
// the worker forwards every row as a Qt signal to the GUI thread. A newer input makes an older
// run stop between instance types, and its rows are dropped (docs/gui.md, "What-if").
#pragma once

#include <QMetaType>
#include <QObject>
#include <QString>
#include <QThread>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gui/results_model.h"
#include "model/calibration.h"
#include "model/hardware.h"
#include "plan/answer.h"
#include "plan/fleet_over_day.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "plan/tco.h"
#include "plan/what_if.h"

namespace llmcap::gui {

/// What a what-if answer was computed under (plan/what_if.h).
using VerdictBasis = plan::VerdictBasis;
using plan::failures_carry_over;

/// One planning job.
struct PlanInput {
  uint64_t generation = 0;  ///< set by PlanController::submit
  plan::Scenario scenario;
  std::string scenario_text;  ///< the scenario as planned (JSON), for the results database
  std::shared_ptr<const model::Catalog> catalog;
  std::shared_ptr<const model::CalibrationProfile> calibration;  ///< may be null
  /// Simulations shared with the window's earlier runs (plan::PlanOptions::shared_simulations);
  /// null: the run keeps its own.
  std::shared_ptr<plan::SharedSimulations> simulations;
  /// Full run: app::make_plan_run (with the analyses when `analysis`), giving the run
  /// document (docs/run-document.md) for the charts, the results database and reports.
  /// What-if run: rows only, through plan::plan_what_if, each type's fleet-size search
  /// starting from `previous_sizes` scaled by load_multiplier / previous_load_multiplier.
  bool full_run = false;
  bool analysis = true;
  /// Warm start of what-if runs: the previous answer's fleet size per feasible type.
  std::map<std::string, int64_t> previous_sizes;
  /// The previous answer's USD per hour per feasible type: types are searched cheapest first.
  std::map<std::string, double> previous_usd_per_hour;
  double previous_load_multiplier = 1.0;
  /// What previous_sizes were computed under (unset: unknown). When failures_carry_over(
  /// *previous_basis, basis), a type's sizes below its previous size are known to fail and
  /// are not simulated again.
  std::optional<VerdictBasis> previous_basis;
  VerdictBasis basis;  ///< this job's
  /// What-if runs: each type's configuration (plan::WhatIfOptions::choices), e.g. the last
  /// full run's search winners; empty: the scenario's own.
  std::map<std::string, plan::ServingChoice> choices;
  double load_multiplier = 1.0;
  int num_threads = 0;  ///< 0: hardware concurrency
  /// When the user asked (slider released, button pressed): the timings are measured from it.
  std::chrono::steady_clock::time_point requested_at = std::chrono::steady_clock::now();
};

/// One finished instance type.
struct RowUpdate {
  uint64_t generation = 0;
  ResultRow row;
  size_t num_done = 0;
  size_t num_total = 0;
};

/// The end of a run.
struct PlanOutcome {
  uint64_t generation = 0;
  bool ok = false;
  bool cancelled = false;  ///< stopped because a newer input arrived
  QString error;           ///< one line naming the file and field (bad input)
  /// The error's base::InputError::field_path() (e.g. "slo.ttft_p99_s"); "" when the error
  /// carries none (a plain message, or not an InputError).
  std::string error_field_path;
  std::vector<ResultRow> rows;  ///< in candidate order (what-if and full runs)
  /// Full runs: the run document; null otherwise.
  std::shared_ptr<const nlohmann::json> document;
  std::shared_ptr<const plan::PlanResult> result;  ///< full runs
  /// The answer (plan/answer.h): a full run's, or a what-if's from its rows and their TCO
  /// (no analyses, no search). Null when the run failed or was cancelled.
  std::shared_ptr<const plan::Answer> answer;
  /// What-if runs: each costed feasible row's fleet over the day (plan::fleet_over_day), in
  /// row order. Full runs carry it in the document's analysis.fleet_over_day instead.
  std::vector<plan::FleetOverDay> fleet_over_day;
  /// Full runs with a configuration search: each type's chosen configuration
  /// (plan::Analysis::search_choices). What-if runs: whether they planned with given choices.
  std::map<std::string, plan::ServingChoice> search_choices;
  bool used_choices = false;
  int64_t num_simulations = 0;
  double load_multiplier = 1.0;
  double first_row_s = 0;  ///< requested_at to the first row emitted, seconds
  double last_row_s = 0;   ///< requested_at to the end, seconds
  bool full_run = false;
  /// The scenario's price model ("" when it names none) and every type the run costs that
  /// does not offer it: planned, but without TCO (plan::ResolvedTco::not_offered).
  std::string price_model;
  std::vector<plan::PriceModelNotOffered> not_offered;
};

/// Lives on the worker thread; runs one PlanInput at a time.
class PlanWorker : public QObject {
  Q_OBJECT

 public:
  explicit PlanWorker(std::atomic<uint64_t>* latest_generation)
      : latest_generation_(latest_generation) {}

  /// Runs `input` on the calling (worker) thread. Returns early, cancelled, when a newer
  /// generation has been submitted.
  void run(const PlanInput& input);

 signals:
  void rowReady(const llmcap::gui::RowUpdate& update);
  void finished(const llmcap::gui::PlanOutcome& outcome);

 private:
  bool stale(uint64_t generation) const { return generation != latest_generation_->load(); }
  PlanOutcome run_full(const PlanInput& input);
  PlanOutcome run_what_if(const PlanInput& input);
  void emit_row(const PlanInput& input, const ResultRow& row, size_t done, size_t total,
                PlanOutcome& outcome);

  std::atomic<uint64_t>* latest_generation_;
};

/// Owns the worker thread; hands out generations and forwards only the newest run's signals.
class PlanController : public QObject {
  Q_OBJECT

 public:
  explicit PlanController(QObject* parent);
  ~PlanController() override;

  /// Queues `input` as a new generation (returned); older runs stop between instance types.
  uint64_t submit(PlanInput input);
  uint64_t generation() const { return latest_generation_.load(); }
  bool busy() const { return num_running_ > 0; }

 signals:
  void rowReady(const llmcap::gui::RowUpdate& update);
  void finished(const llmcap::gui::PlanOutcome& outcome);

 private:
  std::atomic<uint64_t> latest_generation_{0};
  int num_running_ = 0;
  QThread thread_;
  PlanWorker* worker_ = nullptr;  ///< owned by thread_ (deleted on finish)
};

}  // namespace llmcap::gui

Q_DECLARE_METATYPE(llmcap::gui::RowUpdate)
Q_DECLARE_METATYPE(llmcap::gui::PlanOutcome)
