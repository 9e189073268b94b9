// The planner's entry points: plan(), evaluate_fleet, evaluate_given_fleet and PlanSession,
// each loading the model and workload once into a detail::Context.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "base/parallel_for.h"
#include "base/text.h"
#include "model/input_error.h"
#include "plan/candidates.h"
#include "plan/planner.h"
#include "plan/planner_detail.h"
#include "sim/simulator.h"

namespace llmcap::plan {

using detail::Candidate;
using detail::check_engines;
using detail::check_fixed_tp;
using detail::check_kv_offload;
using detail::chosen_tp;
using detail::Context;
using detail::evaluate;
using detail::GivenFleet;
using detail::make_candidate;
using detail::max_request_tokens;
using detail::plan_given_fleet;
using detail::plan_one;
using detail::prepare_candidate;
using detail::prepare_fleet;
using detail::search_size_of;
using detail::summarize_workload;

namespace {

/// Speculative decoding (serving.speculative) against the model: "mtp" runs the model's own
/// multi-token-prediction modules, so it needs a model trained with them, at least
/// draft_layers of them; a draft model must share the model's vocabulary (a proxy for its
/// tokenizer: drafts are verified token by token) and be smaller than it.
void check_speculative_model(const Scenario& scenario, const model::ModelSpec& model) {
  const SpeculativeSpec& spec = scenario.speculative;
  if (spec.on() && spec.method == SpeculativeSpec::Method::kMtp) {
    const int64_t have = model.num_mtp_layers();
    if (have == 0) {
      throw InputError::refused_field(
          scenario.file.string(), "serving.speculative.method",
          "\"mtp\": \"" + model.id +
              "\" has no multi-token-prediction layers (num_nextn_predict_layers of its "
              "config.json is 0 or absent); expected \"eagle\", \"draft_model\" or \"ngram\" "
              "for it, or a model trained with MTP layers (DeepSeek-V3)");
    }
    if (spec.draft_layers > have) {
      throw InputError::refused_field(scenario.file.string(), "serving.speculative.draft_layers",
                                      std::to_string(spec.draft_layers) + ": \"" + model.id +
                                          "\" has " + std::to_string(have) +
                                          " multi-token-prediction layer" + (have == 1 ? "" : "s") +
                                          " (num_nextn_predict_layers); expected at most that");
    }
  }
  if (!spec.on() || spec.method != SpeculativeSpec::Method::kDraftModel || !spec.draft_model) {
    return;
  }
  const model::ModelSpec& draft = *spec.draft_model;
  const std::string value = "\"" + draft.id + "\"";
  if (draft.vocab_size != model.vocab_size) {
    throw InputError::refused_field(scenario.file.string(), "serving.speculative.draft_model",
                                    value + " has a vocabulary of " +
                                        std::to_string(draft.vocab_size) + " tokens, \"" +
                                        model.id + "\" one of " + std::to_string(model.vocab_size) +
                                        "; expected a draft of the model's tokenizer");
  }
  if (draft.num_params() >= model.num_params()) {
    throw InputError::refused_field(
        scenario.file.string(), "serving.speculative.draft_model",
        value + " has " + base::significant(static_cast<double>(draft.num_params()), 3) +
            " parameters, \"" + model.id + "\" " +
            base::significant(static_cast<double>(model.num_params()), 3) +
            "; expected a smaller draft");
  }
}

/// The scenario's model; an error reading it names the scenario file and its "model" field.
/// A weight format that does not apply to the model (model::check_weight_format) names the
/// "weight_format" or "search.weight_formats" field. First of all, a file the scenario names
/// that was not found (check_scenario_files) is refused: this runs before the workload is read.
model::ModelSpec load_scenario_model(const Scenario& scenario) {
  check_scenario_files(scenario);
  model::ModelSpec model;
  try {
    model = model::load_model_spec(scenario.model_config);
  } catch (const InputError& e) {
    throw InputError(scenario.file.string() + ": field \"model\": " + e.what());
  }
  const std::string file = scenario.file.string();
  model::check_weight_format(
      model, scenario.weight_format,
      file + ": field \"weight_format" + (scenario.cpu_weight_format ? ".gpu" : "") + "\"");
  if (scenario.cpu_weight_format) {
    model::check_weight_format(model, *scenario.cpu_weight_format,
                               file + ": field \"weight_format.cpu\"");
  }
  for (const model::WeightFormat f : scenario.search.cpu_weight_formats) {
    model::check_weight_format(model, f, file + ": field \"search.weight_formats.cpu\"");
  }
  for (const model::WeightFormat f : scenario.search.weight_formats) {
    model::check_weight_format(model, f, file + ": field \"search.weight_formats\"");
  }
  check_speculative_model(scenario, model);
  return model;
}

/// Requests an arrival process will draw (the smaller of num_requests and rate x duration x
/// the largest hourly multiplier), summed over classes; 0 for traces and closed loops.
double expected_requests(const WorkloadSpec& w) {
  if (!w.classes.empty()) {
    double n = 0;
    for (const ClientClassSpec& c : w.classes) n += expected_requests(c.workload);
    return n;
  }
  if (w.kind != WorkloadSpec::Kind::kArrivalProcess) return 0;
  double n = w.num_requests > 0 ? static_cast<double>(w.num_requests) : HUGE_VAL;
  if (w.duration_s > 0) {
    double peak = 1;
    for (const double m : w.load_profile) peak = std::max(peak, m);
    n = std::min(n, w.rate_per_s * w.duration_s * peak);
  }
  return n;
}

/// Refuses `requests` (estimated or counted) above scenario.max_requests, naming `field`.
void check_request_count(const Scenario& scenario, double requests, const std::string& field) {
  if (!(requests > static_cast<double>(scenario.max_requests))) return;
  std::ostringstream reason;
  reason << "about " << std::llround(requests) << " requests, which would need about "
         << std::setprecision(3) << requests * kBytesPerSimulatedRequest / 1e9
         << " GB to simulate (~2 KB a request); expected at most " << scenario.max_requests
         << " requests (raise the limit with --max-requests)";
  throw InputError::refused_field(scenario.file.string(), field, reason.str());
}

/// The scenario's workload (load_workload), refused before anything is drawn or simulated
/// when it has more than scenario.max_requests requests (check_request_count), and after it is
/// read when it yields no request at all (a window, a duration or a rate that leaves none):
/// InputErrors naming the field, rather than a plan for nothing. Multi-turn sessions end their
/// conversations where a turn would outgrow the model's context (max_position_embeddings).
sim::Workload load_checked_workload(const Scenario& scenario, const model::ModelSpec& model) {
  const WorkloadSpec& w = scenario.workload;
  const std::string count_field =
      !w.classes.empty()                     ? "workload.classes"
      : w.kind == WorkloadSpec::Kind::kTrace ? "workload.path"
      : w.num_requests > 0 &&
              (w.duration_s <= 0 || static_cast<double>(w.num_requests) <= expected_requests(w))
          ? "workload.num_requests"
          : "workload.duration_s";
  check_request_count(scenario, expected_requests(w), count_field);
  sim::Workload workload = load_workload(scenario.workload, scenario.seed,
                                         std::max<int64_t>(model.max_position_embeddings, 0));
  check_request_count(scenario, static_cast<double>(workload.open_loop.size()), count_field);
  if (workload.closed_loop) {
    // A closed loop's request count follows from its latencies: the simulator stops it at
    // the same limit instead (sim::ClosedLoopWorkload::max_requests).
    workload.closed_loop->max_requests = scenario.max_requests;
    workload.closed_loop->source_file = scenario.file.string();
  }
  if (workload.closed_loop || !workload.open_loop.empty()) return workload;
  const std::string file = scenario.file.string();
  const std::string expected = "a workload that yields at least one request";
  auto number = [](double v) {
    std::ostringstream text;
    text << v;
    return text.str();
  };
  if (w.classes.empty() && w.kind == WorkloadSpec::Kind::kTrace && w.window_s) {
    throw InputError::bad_field(file, "workload.window_s",
                                number(*w.window_s) + " (no arrival of the trace before it)",
                                expected);
  }
  if (w.classes.empty() && w.kind == WorkloadSpec::Kind::kArrivalProcess && w.duration_s > 0) {
    throw InputError::bad_field(file, "workload.duration_s",
                                number(w.duration_s) + " (no arrival before it)", expected);
  }
  throw InputError::bad_field(file, "workload", "no requests", expected);
}

/// Requests whose prompt plus output exceed the model's context length: refused (an InputError
/// naming the scenario's workload with their count and the longest), or clipped as vLLM does
/// (the prompt to context - 1 tokens, the output to what is left) with over_context "clip".
void fit_context(const Scenario& scenario, const model::ModelSpec& model, sim::Workload& workload) {
  const int64_t context = model.max_position_embeddings;
  if (context <= 0) return;
  const bool clip = scenario.workload.over_context == WorkloadSpec::OverContext::kClip;
  int64_t over = 0;
  int64_t longest = 0;
  auto fit = [&](int64_t& prompt, int64_t& output) {
    if (prompt + output <= context) return;
    ++over;
    longest = std::max(longest, prompt + output);
    if (!clip) return;
    prompt = std::min(prompt, std::max<int64_t>(context - 1, 1));
    output = std::max<int64_t>(std::min(output, context - prompt), 1);
  };
  for (sim::RequestSpec& r : workload.open_loop) fit(r.num_prompt_tokens, r.num_output_tokens);
  if (workload.closed_loop) {
    for (sim::LengthSample& l : workload.closed_loop->lengths) {
      fit(l.num_prompt_tokens, l.num_output_tokens);
    }
  }
  if (over == 0 || clip) return;
  const size_t total =
      workload.closed_loop ? workload.closed_loop->lengths.size() : workload.open_loop.size();
  throw InputError::refused_field(
      scenario.file.string(), "workload",
      std::to_string(over) + " of " + std::to_string(total) +
          (workload.closed_loop ? " length samples" : " requests") +
          " exceed the model's context length (" + std::to_string(context) +
          " tokens, max_position_embeddings of " + scenario.model_config.string() +
          "; the longest prompt plus output has " + std::to_string(longest) +
          " tokens); expected at most " + std::to_string(context) +
          ", or \"over_context\": \"clip\" to clip them as the engine would");
}

/// Loads what every entry point needs and calls `body` with the context; `before` runs after
/// the model is read and before the workload is (so errors come in that order).
template <typename Before, typename Body>
auto with_context(const Scenario& scenario, const model::Catalog& catalog,
                  const model::CalibrationProfile* calibration, Before before, Body body,
                  double step_time_scale = 1.0, bool record_itl = true,
                  const std::function<bool()>& cancel = {}, SharedSimulations* shared = nullptr) {
  if (!(step_time_scale > 0) || !std::isfinite(step_time_scale)) {
    throw InputError("plan options: step_time_scale " + std::to_string(step_time_scale) +
                     ": expected a positive number");
  }
  const model::ModelSpec model = load_scenario_model(scenario);
  before();
  check_fixed_tp(scenario, catalog, model);
  check_engines(scenario, catalog);
  check_kv_offload(scenario, catalog);
  sim::Workload workload = load_checked_workload(scenario, model);
  fit_context(scenario, model, workload);
  const WorkloadSummary summary = summarize_workload(workload, scenario.workload);
  const std::vector<sim::Slo> class_slos = scenario.class_slos();
  detail::SimulationCache own;
  detail::SimulationCache* simulations = &own;
  if (shared != nullptr) {
    const std::string fingerprint = detail::context_fingerprint(
        scenario, model, workload, class_slos, step_time_scale, record_itl, calibration);
    if (!fingerprint.empty()) simulations = &shared->for_context(fingerprint);
  }
  const Context ctx{.scenario = scenario,
                    .catalog = catalog,
                    .model = model,
                    .workload = workload,
                    .summary = summary,
                    .max_request_tokens = max_request_tokens(workload),
                    .calibration = calibration,
                    .class_slos = class_slos,
                    .step_time_scale = step_time_scale,
                    .record_itl = record_itl,
                    .cancel = cancel,
                    .simulations = simulations};
  return body(ctx);
}

}  // namespace

FleetEvaluation evaluate_fleet(const Scenario& scenario, const model::Catalog& catalog,
                               const std::string& instance_type, int64_t num_instances,
                               const model::CalibrationProfile* calibration) {
  return with_context(
      scenario, catalog, calibration, [] {},
      [&](const Context& ctx) {
        const model::InstanceType& instance =
            catalog.instance(instance_type, scenario.file.string() + ": instance type");
        Candidate c = make_candidate(ctx, instance, chosen_tp(scenario, instance.id),
                                     serving_for(scenario, instance, catalog),
                                     weight_format_for(scenario, instance.kind));
        if (c.predictor == nullptr) throw model::InfeasibleError(c.row.infeasible_reason);
        return c.simulate(ctx, num_instances);
      });
}

FleetEvaluation evaluate_given_fleet(const Scenario& scenario, const model::Catalog& catalog,
                                     const model::CalibrationProfile* calibration) {
  if (!scenario.fleet) {
    throw InputError(scenario.file.string() +
                     ": field \"fleet\": missing; expected a given "
                     "fleet to evaluate");
  }
  return with_context(
      scenario, catalog, calibration, [] {},
      [&](const Context& ctx) {
        GivenFleet f = prepare_fleet(ctx);
        if (!f.row.infeasible_reason.empty()) throw model::InfeasibleError(f.row.infeasible_reason);
        return evaluate(ctx,
                        sim::simulate(ctx.workload, f.fleet, scenario.seed, ctx.sim_options()));
      });
}

PlanResult plan(const Scenario& scenario, const model::Catalog& catalog,
                const PlanOptions& options) {
  std::vector<const model::InstanceType*> candidates;
  const auto resolve = [&] { candidates = resolve_candidates(scenario, catalog); };

  return with_context(
      scenario, catalog, options.calibration, resolve,
      [&](const Context& ctx) {
        PlanResult result;
        result.model_id = ctx.model.id;
        result.model_num_params = ctx.model.num_params();
        result.workload = ctx.summary;
        if (scenario.fleet) {
          result.rows.push_back(plan_given_fleet(ctx));
          if (options.observer != nullptr) options.observer->on_row_done(result.rows.back(), 1, 1);
          return result;
        }
        result.rows.resize(candidates.size());
        std::mutex observer_mutex;
        size_t num_done = 0;
        // Index order for a tensor-parallel search (each degree would need its own estimate).
        const int order_threads = scenario.tensor_parallel.mode == TensorParallelSpec::Mode::kSearch
                                      ? 1
                                      : options.num_threads;
        const std::vector<size_t> order = detail::longest_first(
            candidates.size(), order_threads, ctx.workload, ctx.class_slos,
            [&](size_t i) -> PreparedType {
              const model::InstanceType& instance = *candidates[i];
              return prepare_candidate(
                  ctx, instance,
                  {chosen_tp(scenario, instance.id), weight_format_for(scenario, instance.kind),
                   serving_for(scenario, instance, catalog)});
            });
        base::parallel_for(candidates.size(), options.num_threads, [&](size_t k) {
          ctx.check_cancel();
          const size_t i = order[k];
          result.rows[i] = plan_one(ctx, *candidates[i], options.warm_start_sizes);
          const std::lock_guard lock(observer_mutex);
          ++num_done;
          if (options.observer != nullptr) {
            options.observer->on_row_done(result.rows[i], num_done, candidates.size());
          }
        });
        return result;
      },
      options.step_time_scale, options.record_itl, options.cancel,
      options.shared_simulations.get());
}

// ---- PlanSession ------------------------------------------------------------------------------

struct PlanSession::Impl {
  Scenario scenario;
  const model::Catalog& catalog;
  model::ModelSpec model;
  sim::Workload workload;
  WorkloadSummary summary;
  std::vector<sim::Slo> class_slos;
  detail::SimulationCache own_simulations;
  std::unique_ptr<Context> ctx;
};

PlanSession::PlanSession(const Scenario& scenario, const model::Catalog& catalog,
                         const PlanOptions& options) {
  if (!(options.step_time_scale > 0) || !std::isfinite(options.step_time_scale)) {
    throw InputError("plan options: step_time_scale " + std::to_string(options.step_time_scale) +
                     ": expected a positive number");
  }
  model::ModelSpec model = load_scenario_model(scenario);
  check_fixed_tp(scenario, catalog, model);
  check_engines(scenario, catalog);
  check_kv_offload(scenario, catalog);
  impl_ = std::unique_ptr<Impl>(new Impl{scenario, catalog, std::move(model), {}, {}, {}, {}, {}});
  Impl& m = *impl_;
  m.workload = load_checked_workload(m.scenario, m.model);
  fit_context(m.scenario, m.model, m.workload);
  m.summary = summarize_workload(m.workload, m.scenario.workload);
  m.class_slos = m.scenario.class_slos();
  detail::SimulationCache* simulations = &m.own_simulations;
  if (options.shared_simulations != nullptr) {
    const std::string fingerprint = detail::context_fingerprint(
        m.scenario, m.model, m.workload, m.class_slos, options.step_time_scale, options.record_itl,
        options.calibration);
    if (!fingerprint.empty()) simulations = &options.shared_simulations->for_context(fingerprint);
  }
  m.ctx = std::unique_ptr<Context>(new Context{.scenario = m.scenario,
                                               .catalog = catalog,
                                               .model = m.model,
                                               .workload = m.workload,
                                               .summary = m.summary,
                                               .max_request_tokens = max_request_tokens(m.workload),
                                               .calibration = options.calibration,
                                               .class_slos = m.class_slos,
                                               .step_time_scale = options.step_time_scale,
                                               .record_itl = options.record_itl,
                                               .cancel = options.cancel,
                                               .simulations = simulations});
}

PlanSession::~PlanSession() = default;

const Scenario& PlanSession::scenario() const { return impl_->scenario; }
const model::Catalog& PlanSession::catalog() const { return impl_->catalog; }
const model::ModelSpec& PlanSession::model() const { return impl_->model; }
const sim::Workload& PlanSession::workload() const { return impl_->workload; }
const WorkloadSummary& PlanSession::summary() const { return impl_->summary; }

ServingChoice PlanSession::default_choice(const std::string& instance_id) const {
  const Scenario& sc = impl_->scenario;
  const model::InstanceType& instance =
      impl_->catalog.instance(instance_id, sc.file.string() + ": instance type");
  return ServingChoice{chosen_tp(sc, instance_id), weight_format_for(sc, instance.kind),
                       serving_for(sc, instance, impl_->catalog)};
}

PreparedType PlanSession::prepare(const model::InstanceType& instance,
                                  const ServingChoice& choice) const {
  return prepare_candidate(*impl_->ctx, instance, choice);
}

FleetEvaluation PlanSession::evaluate(const PreparedType& type, int64_t num_instances) const {
  if (!type.ready() || type.predictor == nullptr) {
    throw InputError("instance \"" + type.row.instance_type +
                     "\" cannot be simulated: " + type.row.infeasible_reason);
  }
  Candidate c;
  static_cast<PreparedType&>(c) = type;
  return c.simulate(*impl_->ctx, num_instances);
}

RequestLatencies PlanSession::request_latencies(const PreparedType& type,
                                                int64_t num_instances) const {
  if (!type.ready() || type.predictor == nullptr) {
    throw InputError("instance \"" + type.row.instance_type +
                     "\" cannot be simulated: " + type.row.infeasible_reason);
  }
  sim::FleetConfig fleet = type.fleet;
  fleet.num_replicas = num_instances * type.deployment.num_replicas;
  sim::SimOptions options = impl_->ctx->sim_options();
  options.record_itl_ns = false;
  options.record_itl_runs = false;
  const sim::SimResult result =
      sim::simulate(impl_->workload, fleet, *type.predictor, impl_->scenario.seed, options);
  if (result.cancelled) throw Cancelled("planning cancelled: " + result.stop_reason);
  RequestLatencies out;
  for (const sim::RequestRecord& r : result.requests) {
    if (r.rejected) continue;
    out.ttft_s.push_back((r.first_token - r.arrival).seconds());
    if (r.num_output_tokens >= 2) {
      out.tpot_s.push_back((r.completion - r.first_token).seconds() /
                           static_cast<double>(r.num_output_tokens - 1));
    }
  }
  return out;
}

PlanRow PlanSession::search_size(const PreparedType& type, const SizeSearch& search) const {
  Candidate c;
  static_cast<PreparedType&>(c) = type;
  return search_size_of(*impl_->ctx, std::move(c), search);
}

}  // namespace llmcap::plan
