#include "gui/plan_worker.h"

#include <QMetaObject>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <mutex>

#include "app/plan_run.h"
#include "base/error.h"
#include "model/input_error.h"
#include "plan/tco.h"
#include "sim/input_error.h"

namespace llmcap::gui {
namespace {

double seconds_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

/// Full runs: the planner's progress as the worker's signals.
class SignalingObserver final : public plan::PlanObserver {
 public:
  SignalingObserver(std::function<void(const plan::PlanRow&, size_t, size_t)> forward)
      : forward_(std::move(forward)) {}
  void on_row_done(const plan::PlanRow& row, size_t num_done, size_t num_total) override {
    forward_(row, num_done, num_total);
  }

 private:
  std::function<void(const plan::PlanRow&, size_t, size_t)> forward_;
};

/// The row's figures from the run document's "tco" object, when it has one.
void apply_document_tco(ResultRow& row, const nlohmann::json& result) {
  if (!result.contains("tco") || !result["tco"].is_object()) return;
  const nlohmann::json& t = result["tco"];
  if (t.contains("usd_per_hour") && t["usd_per_hour"].is_number()) {
    row.usd_per_hour = t["usd_per_hour"].get<double>();
  }
  if (t.contains("usd_per_million_output_tokens") &&
      t["usd_per_million_output_tokens"].is_number()) {
    row.usd_per_million_output_tokens = t["usd_per_million_output_tokens"].get<double>();
  }
  if (t.contains("price_model") && t["price_model"].is_string()) {
    row.price_model = t["price_model"].get<std::string>();
  }
}

/// Runs `body`, turning bad input into an error line and a cancelled plan into a cancelled
/// outcome.
template <typename Body>
void guarded(PlanOutcome& outcome, Body body) {
  try {
    body();
  } catch (const plan::Cancelled&) {
    outcome.cancelled = true;
  } catch (const base::InputError& e) {  // model::, sim:: and plan::InputError are this type
    outcome.error = QString::fromStdString(e.what());
    outcome.error_field_path = e.field_path();
  } catch (const std::exception& e) {
    outcome.error = QString::fromStdString(e.what());
  }
}

}  // namespace

void PlanWorker::emit_row(const PlanInput& input, const ResultRow& row, size_t done, size_t total,
                          PlanOutcome& outcome) {
  if (done == 1) outcome.first_row_s = seconds_since(input.requested_at);
  emit rowReady(RowUpdate{input.generation, row, done, total});
}

void PlanWorker::run(const PlanInput& input) {
  if (stale(input.generation)) {
    PlanOutcome o;
    o.generation = input.generation;
    o.cancelled = true;
    emit finished(o);
    return;
  }
  PlanOutcome outcome = input.full_run ? run_full(input) : run_what_if(input);
  outcome.generation = input.generation;
  outcome.full_run = input.full_run;
  outcome.load_multiplier = input.load_multiplier;
  outcome.last_row_s = seconds_since(input.requested_at);
  emit finished(outcome);
}

PlanOutcome PlanWorker::run_full(const PlanInput& input) {
  PlanOutcome outcome;
  std::mutex mutex;
  SignalingObserver observer([&](const plan::PlanRow& row, size_t done, size_t total) {
    // Serialised by the planner; the figures are the planner's until the TCO arrives.
    emit_row(input, to_result_row(row, nullptr), done, total, outcome);
  });
  guarded(outcome, [&] {
    app::PlanRunOptions options;
    options.plan.cancel = [this, generation = input.generation] { return stale(generation); };
    options.plan.num_threads = input.num_threads;
    options.plan.observer = &observer;
    options.plan.calibration = input.calibration.get();
    options.plan.shared_simulations = input.simulations;
    options.analysis = input.analysis;
    app::PlanRun run = app::make_plan_run(input.scenario, *input.catalog, options);
    const nlohmann::json& results =
        run.document.contains("results") ? run.document["results"] : nlohmann::json::array();
    for (size_t i = 0; i < run.result.rows.size(); ++i) {
      ResultRow r = to_result_row(run.result.rows[i], nullptr);
      if (i < results.size()) apply_document_tco(r, results[i]);
      outcome.rows.push_back(std::move(r));
      outcome.num_simulations += run.result.rows[i].num_simulations;
    }
    outcome.answer = std::make_shared<const plan::Answer>(run.answer);
    if (run.analysis) outcome.search_choices = run.analysis->search_choices;
    outcome.document = std::make_shared<const nlohmann::json>(std::move(run.document));
    outcome.result = std::make_shared<const plan::PlanResult>(std::move(run.result));
    outcome.price_model = run.tco_price_model;
    outcome.not_offered = run.tco_not_offered;
    outcome.ok = true;
  });
  return outcome;
}

PlanOutcome PlanWorker::run_what_if(const PlanInput& input) {
  PlanOutcome outcome;
  guarded(outcome, [&] {
    plan::WhatIfOptions options;
    options.plan.num_threads = input.num_threads;
    options.plan.calibration = input.calibration.get();
    options.plan.shared_simulations = input.simulations;
    options.plan.cancel = [this, generation = input.generation] { return stale(generation); };
    options.warm_start.sizes = input.previous_sizes;
    options.warm_start.usd_per_hour = input.previous_usd_per_hour;
    options.warm_start.load_multiplier = input.previous_load_multiplier;
    options.warm_start.basis = input.previous_basis;
    options.basis = input.basis;
    options.choices = input.choices;
    outcome.used_choices = !input.choices.empty();
    options.load_multiplier = input.load_multiplier;
    options.on_row = [&](const plan::PlanRow& row, const plan::TcoRow* tco, size_t done,
                         size_t total) {
      emit_row(input, to_result_row(row, tco), done, total, outcome);
    };
    if (std::getenv("LLMCAP_GUI_TRACE") != nullptr) {
      options.trace = [](const std::string& line) {
        std::fprintf(stderr, "llmcap-gui: %s\n", line.c_str());
      };
    }
    const plan::WhatIfResult result = plan::plan_what_if(input.scenario, *input.catalog, options);
    if (result.cancelled) {
      outcome.cancelled = true;
      return;
    }
    for (size_t i = 0; i < result.rows.size(); ++i) {
      outcome.rows.push_back(
          to_result_row(result.rows[i], result.tco[i] ? &*result.tco[i] : nullptr));
    }
    outcome.num_simulations = result.num_simulations;
    for (size_t i = 0; i < result.rows.size(); ++i) {
      if (!result.rows[i].feasible || result.rows[i].num_instances < 1) continue;
      outcome.fleet_over_day.push_back(
          plan::fleet_over_day(result.rows[i], input.scenario, result.workload,
                               result.tco[i] ? &*result.tco[i] : nullptr));
    }
    plan::PlanResult as_plan;
    as_plan.rows = result.rows;
    std::vector<plan::TcoRow> tco;
    for (const auto& t : result.tco) tco.push_back(t ? *t : plan::TcoRow{});
    outcome.answer = std::make_shared<const plan::Answer>(
        plan::make_answer(input.scenario, as_plan, nullptr, tco, {}));
    if (input.scenario.tco.price_model_given) {
      outcome.price_model = input.scenario.tco.price_model;
      outcome.not_offered = plan::resolve_tco(input.scenario, *input.catalog).not_offered;
    }
    outcome.ok = true;
  });
  return outcome;
}

PlanController::PlanController(QObject* parent) : QObject(parent) {
  qRegisterMetaType<llmcap::gui::RowUpdate>();
  qRegisterMetaType<llmcap::gui::PlanOutcome>();
  worker_ = new PlanWorker(&latest_generation_);
  worker_->moveToThread(&thread_);
  connect(&thread_, &QThread::finished, worker_, &QObject::deleteLater);
  connect(
      worker_, &PlanWorker::rowReady, this,
      [this](const RowUpdate& u) {
        if (u.generation == latest_generation_.load()) emit rowReady(u);
      },
      Qt::QueuedConnection);
  connect(
      worker_, &PlanWorker::finished, this,
      [this](const PlanOutcome& o) {
        --num_running_;
        if (o.generation == latest_generation_.load()) emit finished(o);
      },
      Qt::QueuedConnection);
  thread_.setObjectName("llmcap-plan");
  thread_.start();
}

PlanController::~PlanController() {
  latest_generation_ = latest_generation_.load() + 1;  // stops a running what-if job
  thread_.quit();
  thread_.wait();
}

uint64_t PlanController::submit(PlanInput input) {
  const uint64_t generation = latest_generation_.load() + 1;
  input.generation = generation;
  latest_generation_ = generation;
  ++num_running_;
  PlanWorker* worker = worker_;
  QMetaObject::invokeMethod(
      worker_, [worker, input = std::move(input)] { worker->run(input); }, Qt::QueuedConnection);
  return generation;
}

}  // namespace llmcap::gui
