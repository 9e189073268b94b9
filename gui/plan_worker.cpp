#include "gui/plan_worker.h"

#include <QMetaObject>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "app/plan_run.h"
#include "base/error.h"
#include "model/input_error.h"
#include "plan/search.h"
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
  } catch (const std::exception& e) {
    outcome.error = QString::fromStdString(e.what());
  }
}

}  // namespace

bool what_if_path_applies(const plan::Scenario& scenario) {
  return !scenario.fleet &&
         scenario.tensor_parallel.mode != plan::TensorParallelSpec::Mode::kSearch;
}

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
    outcome.document = std::make_shared<const nlohmann::json>(std::move(run.document));
    outcome.result = std::make_shared<const plan::PlanResult>(std::move(run.result));
    outcome.ok = true;
  });
  return outcome;
}

bool failures_carry_over(const VerdictBasis& previous, const VerdictBasis& current) {
  return previous.context == current.context && previous.calibration == current.calibration &&
         current.load_multiplier >= previous.load_multiplier &&
         current.ttft_p99_s <= previous.ttft_p99_s && current.tpot_p99_s <= previous.tpot_p99_s;
}

PlanOutcome PlanWorker::run_what_if(const PlanInput& input) {
  PlanOutcome outcome;
  if (!what_if_path_applies(input.scenario)) {
    // A given fleet or a tensor-parallel search: the planner as a whole.
    SignalingObserver observer([&](const plan::PlanRow& row, size_t done, size_t total) {
      emit_row(input, to_result_row(row, nullptr), done, total, outcome);
    });
    guarded(outcome, [&] {
      plan::PlanOptions options;
      options.cancel = [this, generation = input.generation] { return stale(generation); };
      options.num_threads = input.num_threads;
      options.observer = &observer;
      options.calibration = input.calibration.get();
      const plan::PlanResult result = plan::plan(input.scenario, *input.catalog, options);
      for (const plan::PlanRow& row : result.rows) {
        outcome.rows.push_back(to_result_row(row, nullptr));
        outcome.num_simulations += row.num_simulations;
      }
      outcome.ok = true;
    });
    return outcome;
  }

  guarded(outcome, [&] {
    const plan::Scenario& sc = input.scenario;
    const model::Catalog& catalog = *input.catalog;
    plan::PlanOptions options;
    options.num_threads = 1;
    options.calibration = input.calibration.get();
    options.record_itl = false;  // the what-if table shows no ITL
    options.cancel = [this, generation = input.generation] { return stale(generation); };
    (void)plan::resolve_tco(sc, catalog);  // a price model an instance lacks: before any work
    const plan::PlanSession session(sc, catalog, options);
    std::vector<const model::InstanceType*> types;
    if (sc.candidates.empty()) {
      for (const model::InstanceType& i : catalog.instances()) types.push_back(&i);
    } else {
      for (const std::string& id : sc.candidates) {
        types.push_back(&catalog.instance(id, sc.file.string() + ": field \"candidates\""));
      }
    }
    const size_t n = types.size();
    std::vector<ResultRow> rows(n);
    std::vector<int64_t> sims(n, 0);
    size_t num_done = 0;
    std::mutex mutex;
    std::exception_ptr error;
    std::atomic<bool> failed{false};
    const bool carry_failures =
        input.previous_basis.has_value() && failures_carry_over(*input.previous_basis, input.basis);
    const double scale = input.previous_load_multiplier > 0
                             ? input.load_multiplier / input.previous_load_multiplier
                             : 1.0;
    auto finish_row = [&](size_t i, const plan::PlanRow& row) {
      plan::TcoRow tco;
      const bool has_tco = row.feasible && row.num_instances > 0;
      if (has_tco) tco = plan::compute_tco(row, sc, catalog, session.summary());
      const ResultRow r = to_result_row(row, has_tco ? &tco : nullptr);
      const std::lock_guard lock(mutex);
      rows[i] = r;
      sims[i] = row.num_simulations;
      if (!stale(input.generation)) emit_row(input, r, ++num_done, n, outcome);
    };
    // Deploy every type and check its floors first (no simulation): types ruled out show at
    // once; the others are searched cheapest-first by the previous answer's cost, so the rows
    // that matter most update first.
    std::vector<plan::PreparedType> prepared(n);
    std::vector<size_t> queue;
    for (size_t i = 0; i < n; ++i) {
      if (stale(input.generation)) break;
      prepared[i] = session.prepare(*types[i], session.default_choice(types[i]->id));
      if (prepared[i].ready()) {
        queue.push_back(i);
      } else {
        finish_row(i, prepared[i].row);
      }
    }
    const auto previous_cost = [&](size_t i) {
      const auto it = input.previous_usd_per_hour.find(types[i]->id);
      return it != input.previous_usd_per_hour.end() ? it->second
                                                     : std::numeric_limits<double>::infinity();
    };
    std::stable_sort(queue.begin(), queue.end(),
                     [&](size_t a, size_t b) { return previous_cost(a) < previous_cost(b); });
    // One thread walks the types cheapest first (the rows that matter most come first); a
    // second walks them largest previous fleet first, as a large fleet's search takes longest
    // (a simulation costs in steps, and steps grow with replicas at a given load): started
    // last, it would finish alone. A type is searched by whichever thread claims it first.
    std::vector<size_t> largest_first = queue;
    const auto previous_size = [&](size_t i) {
      const auto it = input.previous_sizes.find(types[i]->id);
      return it != input.previous_sizes.end() ? it->second : int64_t{0};
    };
    std::stable_sort(largest_first.begin(), largest_first.end(),
                     [&](size_t a, size_t b) { return previous_size(a) > previous_size(b); });
    std::vector<std::atomic<bool>> claimed(n);
    auto work = [&](const std::vector<size_t>& order) {
      for (const size_t i : order) {
        if (stale(input.generation) || failed.load()) return;
        if (claimed[i].exchange(true)) continue;
        try {
          const plan::PreparedType& type = prepared[i];
          plan::SizeSearch search;
          search.lower_bound =
              std::max<int64_t>(1, plan::fleet_lower_bound(session, type).num_instances);
          const auto prev = input.previous_sizes.find(types[i]->id);
          if (prev != input.previous_sizes.end() && prev->second > 0) {
            // The previous size scaled by the load change, to the nearest integer: a small
            // change keeps it, and the search then needs the size and the one below it.
            const int64_t guess = std::llround(static_cast<double>(prev->second) * scale);
            // The previous answer was the smallest passing size, so every smaller one failed;
            // under a load no lower and an SLO no looser they fail again.
            if (carry_failures) search.lower_bound = std::max(search.lower_bound, prev->second);
            search.start = std::max(search.lower_bound, guess);
            search.first_step = 1;
          }
          const auto t0 = std::chrono::steady_clock::now();
          const plan::PlanRow row = session.search_size(type, search);
          if (std::getenv("LLMCAP_GUI_TRACE") != nullptr) {
            std::fprintf(stderr,
                         "llmcap-gui: %s: start %lld, lower bound %lld -> %lld instances, "
                         "%lld simulations, %.3f s\n",
                         types[i]->id.c_str(), static_cast<long long>(search.start),
                         static_cast<long long>(search.lower_bound),
                         static_cast<long long>(row.num_instances),
                         static_cast<long long>(row.num_simulations), seconds_since(t0));
          }
          finish_row(i, row);
        } catch (...) {
          const std::lock_guard lock(mutex);
          if (!error) error = std::current_exception();
          failed = true;
        }
      }
    };
    const int threads =
        std::max(1, std::min<int>(input.num_threads > 0
                                      ? input.num_threads
                                      : static_cast<int>(std::thread::hardware_concurrency()),
                                  static_cast<int>(queue.size())));
    std::vector<std::thread> pool;
    for (int t = 1; t < threads; ++t) {
      pool.emplace_back(work, std::cref(t == 1 ? largest_first : queue));
    }
    work(queue);
    for (std::thread& t : pool) t.join();
    if (error) std::rethrow_exception(error);
    if (stale(input.generation)) {
      outcome.cancelled = true;
      return;
    }
    outcome.rows = std::move(rows);
    for (int64_t s : sims) outcome.num_simulations += s;
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
