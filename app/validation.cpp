#include "app/validation.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <memory>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <sstream>

#include "app/decoder_support.h"
#include "app/profile.h"
#include "base/stats.h"
#include "base/text.h"
#include "kernels/calibrate.h"
#include "kernels/decoder.h"
#include "kernels/machine.h"
#include "model/calibrated_predictor.h"
#include "model/calibration.h"
#include "model/input_error.h"
#include "model/model_spec.h"
#include "model/roofline.h"

namespace llmcap::app {
namespace {

/// Nearest-rank quantile of |values| (docs/metrics.md).
double abs_quantile(const std::vector<double>& values, double q) {
  return base::abs_nearest_rank_quantile(values, q);
}

/// Predicted seconds per decoder section (kernels::StepSections): the layer operators of
/// predictor.breakdown x their num_layers, the MLP's matrices summed, the LM head once.
std::vector<double> section_seconds(const model::CalibratedPredictor& predictor,
                                    const model::BatchShape& step) {
  std::vector<double> predicted(kernels::StepSections::kCount, 0.0);
  const auto section_index = [](const std::string& op) {
    // A mixture of experts' MLP: its router, routed experts and shared experts.
    const bool mlp = op == "gate_proj" || op == "up_proj" || op == "down_proj" || op == "router" ||
                     op == "experts" || op == "shared_experts";
    const std::string name = mlp ? "mlp" : op;
    for (int i = 0; i < kernels::StepSections::kCount; ++i) {
      if (name == kernels::StepSections::kNames[i]) return i;
    }
    return -1;
  };
  for (const model::OpTime& op : predictor.breakdown(step)) {
    const int i = section_index(op.op);
    if (i < 0) continue;
    predicted[static_cast<size_t>(i)] += op.time_s * op.num_layers;
  }
  return predicted;
}

/// The model's kernels as a ShapeTimer times them for a validation of `format` (see
/// ValidationPoint::predicted_retimed_s).
kernels::ShapeTimingOptions retime_options(const model::ModelSpec& spec,
                                           const model::CalibrationProfile& profile,
                                           kernels::WeightFormat format,
                                           const ValidationOptions& options) {
  kernels::ShapeTimingOptions t;
  for (const model::MatmulShapeKey& k : model::linear_call_shapes(spec)) {
    t.matmul_shapes.push_back({k.rows, k.cols, {format}, 0});
  }
  // The grid's batches: a sample's ratio is taken against the fitted time the predictor uses
  // at that batch (model::measured_shape_ratios), so the re-timed cells are priced exactly.
  t.batches = options.batches;
  t.attention_layouts = {{spec.num_attention_heads, spec.num_kv_heads, spec.head_dim}};
  t.kv_types = {kernels::KvType::kBf16};
  for (const int64_t c : options.contexts) t.contexts.push_back(c + 1);
  t.size =
      profile.fit.cache_resident_fitted ? kernels::SweepSize::kTest : kernels::SweepSize::kQuick;
  return t;
}

/// `profile` with the samples that `fresh` re-times replaced (matmul: same format, shape and
/// batch; attention: every context of the same KV type and layout) and its read bandwidth at
/// the fitted thread count set to `read_bytes_per_s`; the fit is kept.
model::CalibrationProfile with_retimed_samples(const model::CalibrationProfile& profile,
                                               const std::vector<kernels::KernelSample>& fresh,
                                               double read_bytes_per_s) {
  model::CalibrationProfile p = profile;
  const auto replaced = [&](const model::KernelSample& s) {
    return std::any_of(fresh.begin(), fresh.end(), [&](const kernels::KernelSample& f) {
      return s.op == f.op && s.format == f.format && s.rows == f.rows && s.threads == f.threads &&
             (f.op == "attention" ? s.batch == f.batch : s.cols == f.cols && s.batch == f.batch);
    });
  };
  p.kernels.erase(std::remove_if(p.kernels.begin(), p.kernels.end(), replaced), p.kernels.end());
  for (const kernels::KernelSample& f : fresh) p.kernels.push_back(to_model_sample(f));
  if (read_bytes_per_s > 0) p.machine.read_bandwidth_bytes_per_s[p.fit.threads] = read_bytes_per_s;
  return p;
}

/// The upper median (value[n / 2] of the sorted values), as validate has always reported.
double median_of(const std::vector<double>& v) { return base::upper_median(v); }

/// The calibrated efficiency of `prof` for `statistic`: the profile's fit for its own
/// statistic, a refit of its samples for the other one; step overhead 0 (the reference decoder
/// has no engine scheduling).
model::Efficiency efficiency_for(const model::CalibrationProfile& prof,
                                 model::FitStatistic statistic) {
  model::CalibrationProfile p = prof;
  if (p.fit.statistic != statistic) p.fit = model::refit_calibration(prof, statistic);
  model::Efficiency e = model::calibrated_efficiency(p);
  e.step_overhead_s = 0;  // the reference decoder has no engine scheduling
  return e;
}

/// One grid point's timings over the rounds: the step and each operator section, seconds.
struct TimedCell {
  int64_t batch, context;
  std::vector<double> step_s;
  std::vector<std::vector<double>> section_s{kernels::StepSections::kCount};
  std::vector<double> experts_hit = {};  ///< a mixture of experts: per run, the layers' mean
};

/// The mean of the decoder's experts_hit() over its layers (0 for a dense model).
double mean_experts_hit(const kernels::ReferenceDecoder& decoder) {
  const auto hits = decoder.experts_hit();
  if (hits.empty()) return 0;
  double sum = 0;
  for (const int64_t h : hits) sum += static_cast<double>(h);
  return sum / static_cast<double>(hits.size());
}

/// The decode step a cell times: `batch` sequences of `context` tokens, each adding one.
model::BatchShape step_of(const TimedCell& c) {
  model::BatchShape step;
  step.num_decode_seqs = c.batch;
  step.num_decode_context_tokens = c.batch * (c.context + 1);
  return step;
}

/// A cell's point: its measured times against each predictor (`retimed_predictor` null when
/// not re-timed; `paired_predicted_s` the per-round re-timed predictions, empty then).
ValidationPoint make_point(const model::ModelSpec& spec, const kernels::DecoderShape& shape,
                           const std::string& format_name, const TimedCell& c,
                           const std::vector<double>& paired_predicted_s,
                           const model::CalibratedPredictor& predictor,
                           const model::CalibratedPredictor& min_predictor,
                           const model::CalibratedPredictor& fit_only_predictor,
                           const model::CalibratedPredictor* retimed_predictor) {
  const model::BatchShape step = step_of(c);
  ValidationPoint p;
  p.model = spec.id;
  p.format = format_name;
  p.batch = c.batch;
  p.context_tokens = c.context;
  p.measured_s = median_of(c.step_s);
  p.predicted_s = predictor.step_time_s(step);
  p.measured_min_s = *std::min_element(c.step_s.begin(), c.step_s.end());
  std::vector<double> deviations;
  for (const double s : c.step_s) deviations.push_back(std::abs(s / p.measured_s - 1));
  p.measured_spread = median_of(deviations);
  if (shape.is_moe()) {
    p.experts_hit = std::accumulate(c.experts_hit.begin(), c.experts_hit.end(), 0.0) /
                    static_cast<double>(c.experts_hit.size());
    const double e = static_cast<double>(shape.num_experts);
    p.experts_expected =
        e * -std::expm1(static_cast<double>(c.batch) *
                        std::log1p(-static_cast<double>(shape.experts_per_token) / e));
  }
  p.predicted_min_s = min_predictor.step_time_s(step);
  p.predicted_fit_only_s = fit_only_predictor.step_time_s(step);
  if (retimed_predictor != nullptr) p.predicted_retimed_s = retimed_predictor->step_time_s(step);
  if (!paired_predicted_s.empty()) {
    std::vector<double> paired;
    for (size_t r = 0; r < paired_predicted_s.size(); ++r) {
      paired.push_back(paired_predicted_s[r] / c.step_s[r] - 1.0);
    }
    p.retimed_paired_error = median_of(paired);
  }
  for (int i = 0; i < kernels::StepSections::kCount; ++i) {
    p.section_names.emplace_back(kernels::StepSections::kNames[i]);
    p.section_measured_s.push_back(median_of(c.section_s[static_cast<size_t>(i)]));
  }
  p.section_predicted_s = section_seconds(predictor, step);
  if (retimed_predictor != nullptr) {
    p.section_retimed_s = section_seconds(*retimed_predictor, step);
  }
  return p;
}

/// The error summaries of `result` from its points (nearest-rank median and p95 of each error's
/// absolute value), the re-timed ones when `retime`.
void set_error_summaries(ValidationResult& result, bool retime) {
  std::vector<double> errors;
  for (const auto& p : result.points) errors.push_back(p.error());
  result.median_abs_error = abs_quantile(errors, 0.5);
  result.p95_abs_error = abs_quantile(errors, 0.95);
  std::vector<double> min_errors;
  for (const auto& p : result.points) min_errors.push_back(p.min_error());
  result.min_median_abs_error = abs_quantile(min_errors, 0.5);
  result.min_p95_abs_error = abs_quantile(min_errors, 0.95);
  std::vector<double> fit_only_errors;
  for (const auto& p : result.points) {
    fit_only_errors.push_back(p.predicted_fit_only_s / p.measured_s - 1);
  }
  result.fit_only_median_abs_error = abs_quantile(fit_only_errors, 0.5);
  result.fit_only_p95_abs_error = abs_quantile(fit_only_errors, 0.95);
  std::vector<double> spreads;
  for (const auto& p : result.points) spreads.push_back(p.measured_spread);
  result.spread_median = abs_quantile(spreads, 0.5);
  result.spread_p95 = abs_quantile(spreads, 0.95);
  result.retimed = retime;
  if (retime) {
    std::vector<double> retimed_errors;
    for (const auto& p : result.points) retimed_errors.push_back(p.retimed_error());
    result.retimed_median_abs_error = abs_quantile(retimed_errors, 0.5);
    result.retimed_p95_abs_error = abs_quantile(retimed_errors, 0.95);
    std::vector<double> paired_errors;
    for (const auto& p : result.points) paired_errors.push_back(p.retimed_paired_error);
    result.retimed_paired_median_abs_error = abs_quantile(paired_errors, 0.5);
    result.retimed_paired_p95_abs_error = abs_quantile(paired_errors, 0.95);
  }
}

}  // namespace

ValidationResult run_validation(const ValidationOptions& options,
                                const model::CalibrationProfile& profile,
                                const std::string& profile_source) {
  ValidationResult result;
  result.threads = profile.fit.threads;
  result.profile = profile_source;
  const model::Efficiency efficiency = efficiency_for(profile, model::FitStatistic::kMedian);
  const model::Efficiency min_efficiency = efficiency_for(profile, model::FitStatistic::kMin);
  model::Efficiency fit_only_efficiency = efficiency;
  fit_only_efficiency.calibrated->linear_shapes.clear();
  fit_only_efficiency.calibrated->attention_shapes.clear();
  fit_only_efficiency.calibrated->attention_spread_shapes.clear();
  const model::Deployment machine = measured_machine(profile, efficiency);
  kernels::ThreadPool pool(std::max(1, result.threads));
  const int64_t max_batch = *std::max_element(options.batches.begin(), options.batches.end());
  const int64_t max_context = *std::max_element(options.contexts.begin(), options.contexts.end());

  kernels::ReadProbe probe(int64_t{256} << 20);
  std::vector<double> all_probes;

  for (const auto& path : options.models) {
    const model::ModelSpec spec = model::load_model_spec(path);
    const kernels::DecoderShape shape = decoder_shape(spec, path.string());
    for (const model::WeightFormat format : options.formats) {
      const std::string format_name(model::to_string(format));
      if (profile.fit.matmul.count(format_name) == 0) {
        throw model::InputError(profile_source + ": field \"fit.matmul\": no fitted rates for \"" +
                                format_name + "\" weights");
      }
      kernels::ReferenceDecoder decoder(shape, kernel_format(format), kernels::KvType::kBf16,
                                        max_batch, max_context + options.runs + 2, options.seed);
      std::vector<TimedCell> cells;
      for (const int64_t batch : options.batches) {
        for (const int64_t context : options.contexts) cells.push_back({batch, context, {}});
      }
      const auto contexts_of = [](const TimedCell& c) {
        return std::vector<int64_t>(static_cast<size_t>(c.batch), c.context);
      };
      for (const TimedCell& c : cells) {  // warm-up: caches, page faults of the KV pages touched
        decoder.set_contexts(contexts_of(c));
        decoder.step(pool);
      }
      std::unique_ptr<kernels::ShapeTimer> timer;
      if (options.retime) {
        timer = std::make_unique<kernels::ShapeTimer>(
            retime_options(spec, profile, kernel_format(format), options), pool);
      }
      std::vector<double> probes;
      for (int run = 0; run < options.runs; ++run) {
        probes.push_back(probe.read_bytes_per_s(pool));
        if (timer) timer->round();
        if (options.progress) {
          std::ostringstream line;
          line << spec.id << " " << format_name << " round " << run + 1 << ": read bandwidth "
               << probes.back() / 1e9 << " GB/s" << (timer ? ", kernels re-timed" : "");
          options.progress(line.str());
        }
        for (TimedCell& c : cells) {
          for (int k = 0; k < options.steady_steps; ++k) {
            decoder.set_contexts(contexts_of(c));
            decoder.step(pool);
          }
          decoder.set_contexts(contexts_of(c));
          kernels::StepSections sections;
          const auto start = std::chrono::steady_clock::now();
          decoder.step(pool, kernels::best_isa(), &sections);
          c.step_s.push_back(
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
          for (int i = 0; i < kernels::StepSections::kCount; ++i) {
            c.section_s[static_cast<size_t>(i)].push_back(sections.seconds[i]);
          }
          if (shape.is_moe()) c.experts_hit.push_back(mean_experts_hit(decoder));
        }
      }
      all_probes.insert(all_probes.end(), probes.begin(), probes.end());
      const model::CalibratedPredictor predictor(spec, format, model::KvFormat::kBf16, machine,
                                                 efficiency);
      const model::CalibratedPredictor min_predictor(spec, format, model::KvFormat::kBf16, machine,
                                                     min_efficiency);
      const model::CalibratedPredictor fit_only_predictor(spec, format, model::KvFormat::kBf16,
                                                          machine, fit_only_efficiency);
      std::optional<model::CalibratedPredictor> retimed_predictor;
      // Per round r: the predictor from round r's kernels and probe (retimed_paired_error).
      std::vector<std::vector<double>> paired_predicted_s(cells.size());
      if (timer) {
        for (int r = 0; r < timer->rounds(); ++r) {
          const model::CalibrationProfile round_profile = with_retimed_samples(
              profile, timer->round_samples(r), probes[static_cast<size_t>(r)]);
          const model::Efficiency e = efficiency_for(round_profile, model::FitStatistic::kMedian);
          const model::CalibratedPredictor round_predictor(spec, format, model::KvFormat::kBf16,
                                                           measured_machine(round_profile, e), e);
          for (size_t i = 0; i < cells.size(); ++i) {
            paired_predicted_s[i].push_back(round_predictor.step_time_s(step_of(cells[i])));
          }
        }
        const model::CalibrationProfile retimed =
            with_retimed_samples(profile, timer->samples(), median_of(probes));
        const model::Efficiency e = efficiency_for(retimed, model::FitStatistic::kMedian);
        retimed_predictor.emplace(spec, format, model::KvFormat::kBf16,
                                  measured_machine(retimed, e), e);
      }
      for (size_t ci = 0; ci < cells.size(); ++ci) {
        const TimedCell& c = cells[ci];
        const ValidationPoint p = make_point(spec, shape, format_name, c, paired_predicted_s[ci],
                                             predictor, min_predictor, fit_only_predictor,
                                             retimed_predictor ? &*retimed_predictor : nullptr);
        result.points.push_back(p);
        if (options.progress) {
          std::ostringstream line;
          line << p.model << " " << p.format << " batch " << c.batch << " context " << c.context
               << ": measured " << base::significant(p.measured_s * 1e3, 4) << " ms, predicted "
               << base::significant(p.predicted_s * 1e3, 4) << " ms";
          options.progress(line.str());
        }
      }
    }
  }
  result.profile_read_bytes_per_s =
      machine.memory_bandwidth_bytes_per_s * efficiency.memory_bandwidth_fraction;
  if (!all_probes.empty()) result.validation_read_bytes_per_s = median_of(all_probes);
  set_error_summaries(result, options.retime);
  return result;
}

std::string validation_to_json(const ValidationResult& result) {
  nlohmann::json points = nlohmann::json::array();
  for (const auto& p : result.points) {
    nlohmann::json sections = nlohmann::json::object();
    for (size_t i = 0; i < p.section_names.size(); ++i) {
      sections[p.section_names[i]] = {{"measured_s", p.section_measured_s[i]},
                                      {"predicted_s", p.section_predicted_s[i]}};
      if (result.retimed) sections[p.section_names[i]]["retimed_s"] = p.section_retimed_s[i];
    }
    points.push_back({{"model", p.model},
                      {"format", p.format},
                      {"batch", p.batch},
                      {"context_tokens", p.context_tokens},
                      {"measured_s", p.measured_s},
                      {"predicted_s", p.predicted_s},
                      {"error", p.error()},
                      {"measured_min_s", p.measured_min_s},
                      {"predicted_min_s", p.predicted_min_s},
                      {"min_error", p.min_error()},
                      {"predicted_fit_only_s", p.predicted_fit_only_s},
                      {"measured_spread", p.measured_spread},
                      {"sections", sections}});
    if (p.experts_expected > 0) {
      points.back()["experts_hit"] = p.experts_hit;
      points.back()["experts_expected"] = p.experts_expected;
    }
    if (result.retimed) {
      points.back()["predicted_retimed_s"] = p.predicted_retimed_s;
      points.back()["retimed_error"] = p.retimed_error();
      points.back()["retimed_paired_error"] = p.retimed_paired_error;
    }
  }
  nlohmann::json doc = {
      {"points", points},
      {"median_abs_error", result.median_abs_error},
      {"p95_abs_error", result.p95_abs_error},
      {"min_statistic",
       {{"median_abs_error", result.min_median_abs_error},
        {"p95_abs_error", result.min_p95_abs_error}}},
      {"fit_only",
       {{"median_abs_error", result.fit_only_median_abs_error},
        {"p95_abs_error", result.fit_only_p95_abs_error}}},
      {"measured_spread", {{"median", result.spread_median}, {"p95", result.spread_p95}}},
      {"read_bandwidth_bytes_per_s",
       {{"profile", result.profile_read_bytes_per_s},
        {"during_validation", result.validation_read_bytes_per_s}}},
      {"threads", result.threads},
      {"profile", result.profile}};
  if (result.retimed) {
    doc["retimed"] = {{"median_abs_error", result.retimed_median_abs_error},
                      {"p95_abs_error", result.retimed_p95_abs_error},
                      {"paired_median_abs_error", result.retimed_paired_median_abs_error},
                      {"paired_p95_abs_error", result.retimed_paired_p95_abs_error}};
  }
  return doc.dump(2) + "\n";
}

}  // namespace llmcap::app
