#include "app/benchmark_fit.h"

#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <map>
#include <set>
#include <sstream>

#include "app/published.h"
#include "base/error.h"
#include "base/parallel_for.h"
#include "base/stats.h"
#include "base/text.h"
#include "model/cpu_model.h"
#include "model/formats.h"
#include "model/model_spec.h"

namespace llmcap::app {
namespace {

using base::InputError;

/// Parameters, in the order of the fit's vector: kernel_overhead_s, then the inverses of the
/// bandwidth, compute and decode compute fractions (a roofline step time is linear in each
/// inverse on each side of its kinks).
enum Param {
  kKernel = 0,
  kBandwidth = 1,
  kCompute = 2,
  kDecode = 3,
  kFrontend = 4,
  kNumParams = 5
};
const char* const kParamNames[kNumParams] = {"kernel_overhead_s", "memory_bandwidth_fraction",
                                             "compute_fraction", "decode_compute_fraction",
                                             "frontend_latency_s"};
using Theta = Eigen::Matrix<double, kNumParams, 1>;
/// Parameters that are times (fitted as they are), not inverse fractions.
bool is_time(int i) { return i == kKernel || i == kFrontend; }

constexpr int kMaxIterations = 40;
/// A parameter moves the fitted predictions less than this (mean elasticity): not determined.
constexpr double kMinElasticity = 1e-3;
/// Relative step of the finite differences.
constexpr double kDifferenceStep = 0.01;
/// The iteration stops when no parameter moves more than this, relative.
constexpr double kConverged = 1e-6;
/// Inverse fractions are kept at or above this (a fraction of at most 1,000) while iterating.
constexpr double kMinInverse = 1e-3;
/// Fractions above 1 by more than this are refused.
constexpr double kPeakTolerance = 1e-6;

/// One run of a file: the simulation its points share.
struct Run {
  size_t file = 0;
  PublishedRow row;  ///< deployment, load and lengths (metric unused)
  bool left_out = false;
};

/// One fitted or left-out figure.
struct Observation {
  size_t run = 0;
  PublishedRow row;  ///< its metric and statistic
  BenchmarkPoint point;
  double measured_s = 0;  ///< seconds (a throughput as seconds per output token)
};

std::string joined_files(const std::vector<BenchmarkFile>& files) {
  std::string out;
  for (const BenchmarkFile& f : files) out += (out.empty() ? "" : ", ") + f.file.string();
  return out;
}

std::string load_key(const BenchmarkPoint& p) {
  std::ostringstream k;
  k.precision(17);
  k << p.batch << "/" << p.offline_requests << "/" << p.concurrency << "/" << p.request_rate_per_s
    << "/" << p.num_requests << "/" << p.prompt_tokens << "/" << p.output_tokens << "/"
    << p.threads;
  return k.str();
}

int statistic_rank(const std::string& statistic) {
  static const std::vector<std::string> order = {"mean", "total", "median", "p90", "p99"};
  const auto it = std::find(order.begin(), order.end(), statistic);
  return static_cast<int>(it - order.begin());
}

/// Refuses files that name different models or machines.
void check_same(const std::vector<BenchmarkFile>& files, std::string BenchmarkFile::*field,
                const std::string& what) {
  const BenchmarkFile* first = nullptr;
  for (const BenchmarkFile& f : files) {
    if ((f.*field).empty()) continue;
    if (first == nullptr) {
      first = &f;
    } else if (f.*field != first->*field) {
      throw InputError(f.file.string() + ": field \"" + what + "\": expected the " + what + " of " +
                       first->file.string() + " (\"" + first->*field + "\"), got \"" + f.*field +
                       "\": one fit takes the results of one " + what + " only");
    }
  }
}

std::string today() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

/// The fit's inputs, resolved.
struct Problem {
  const model::Catalog* catalog = nullptr;
  const model::HardwareSpec* hw = nullptr;
  model::ModelSpec spec;
  model::EngineProfile base;
  std::vector<Run> runs;
  std::vector<Observation> obs;
  uint64_t seed = 1;
  double shortest_time_s = 0;  ///< the shortest measured time (TTFT or TPOT), s
};

model::EngineProfile profile_at(const model::EngineProfile& base, const Theta& theta) {
  model::EngineProfile e = base;
  e.kernel_overhead_s.value = theta[kKernel];
  e.memory_bandwidth_fraction.value = 1.0 / theta[kBandwidth];
  e.compute_fraction.value = 1.0 / theta[kCompute];
  e.decode_compute_fraction.value = 1.0 / theta[kDecode];
  e.frontend_latency_s.value = theta[kFrontend];
  return e;
}

/// Each observation's prediction (seconds; throughput as seconds per token) at `theta`.
std::vector<double> predict(const Problem& p, const Theta& theta) {
  const model::EngineProfile engine = profile_at(p.base, theta);
  std::vector<sim::SimResult> results(p.runs.size());
  base::parallel_for(p.runs.size(), 0, [&](size_t i) {
    results[i] = simulate_published_row(p.runs[i].row, p.spec, *p.catalog, &engine, p.seed).result;
  });
  std::vector<double> out;
  out.reserve(p.obs.size());
  for (const Observation& o : p.obs) {
    const double figure = published_figure(o.row, results[o.run]);
    out.push_back(o.row.metric == "throughput" ? (figure > 0 ? 1.0 / figure : 1e30) : figure);
  }
  return out;
}

double cost_of(const Problem& p, const std::vector<double>& predicted) {
  double c = 0;
  for (size_t r = 0; r < p.obs.size(); ++r) {
    if (p.runs[p.obs[r].run].left_out) continue;
    const double e = (predicted[r] - p.obs[r].measured_s) / p.obs[r].measured_s;
    c += e * e;
  }
  return c;
}

/// min |A x - b| over x >= 0, by least squares on every subset of the columns (exact: the
/// optimum is the unconstrained solution on its support).
Eigen::VectorXd nnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const int n = static_cast<int>(a.cols());
  Eigen::VectorXd best = Eigen::VectorXd::Zero(n);
  double best_residual = b.squaredNorm();
  for (int mask = 1; mask < (1 << n); ++mask) {
    std::vector<int> cols;
    for (int i = 0; i < n; ++i) {
      if (mask & (1 << i)) cols.push_back(i);
    }
    Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(cols.size()));
    for (size_t j = 0; j < cols.size(); ++j) sub.col(static_cast<Eigen::Index>(j)) = a.col(cols[j]);
    const Eigen::ColPivHouseholderQR<Eigen::MatrixXd> qr(sub);
    if (qr.rank() < static_cast<Eigen::Index>(cols.size())) continue;
    const Eigen::VectorXd x = qr.solve(b);
    if ((x.array() < 0).any()) continue;
    Eigen::VectorXd full = Eigen::VectorXd::Zero(n);
    for (size_t j = 0; j < cols.size(); ++j) full[cols[j]] = x[static_cast<Eigen::Index>(j)];
    const double residual = (a * full - b).squaredNorm();
    if (residual < best_residual) {
      best_residual = residual;
      best = full;
    }
  }
  return best;
}

/// llmcap's weight format for the quantisation a GGUF model type names ("llama 8B Q4_0":
/// "int4"), or "" when it names none llmcap knows.
std::string gguf_weight_format(const std::string& model_type) {
  const size_t space = model_type.rfind(' ');
  std::string q = model_type.substr(space == std::string::npos ? 0 : space + 1);
  std::transform(q.begin(), q.end(), q.begin(), [](unsigned char ch) { return std::toupper(ch); });
  if (q.rfind("Q4", 0) == 0 || q.rfind("IQ4", 0) == 0) return "int4";
  if (q.rfind("Q8", 0) == 0) return "int8";
  if (q == "BF16" || q == "F16") return "bf16";  // 2 bytes per weight either way
  if (q == "F32") return "f32";
  return "";
}

/// Refuses a llama-bench file whose model type names another weight format (kernel class) than
/// --weight-format.
void check_gguf_format(const BenchmarkFile& f, const std::string& weight_format) {
  if (f.tool != "llama-bench") return;
  const std::string named = gguf_weight_format(f.model);
  // q4_k_m, q4_0, ... are of the int4 class the file's quantisation names (model/formats.h).
  const std::string given_class(model::to_string(model::kernel_class(
      model::parse_weight_format(weight_format, "calibrate --from-benchmark: --weight-format"))));
  if (!named.empty() && named != given_class) {
    throw InputError(f.file.string() + ": field \"model_type\": \"" + f.model + "\" has " + named +
                     " weights, but --weight-format is " + weight_format +
                     "; pass --weight-format " + named);
  }
}

Problem make_problem(const std::vector<BenchmarkFile>& files, const BenchmarkSetup& setup,
                     const model::Catalog& catalog, uint64_t seed) {
  if (files.empty()) throw InputError("calibrate --from-benchmark: no result file given");
  check_same(files, &BenchmarkFile::model, "model");
  check_same(files, &BenchmarkFile::machine, "machine");
  Problem p;
  p.catalog = &catalog;
  p.seed = seed;
  p.hw = &catalog.hardware(setup.hardware, "calibrate --from-benchmark: --hardware");
  p.base = model::find_engine(catalog, setup.engine, "calibrate --from-benchmark: --engine");
  if (p.base.kind != p.hw->kind) {
    throw InputError("calibrate --from-benchmark: --engine \"" + setup.engine +
                     "\" is an engine for " + std::string(model::to_string(p.base.kind)) +
                     "s, but --hardware \"" + setup.hardware + "\" is a " +
                     std::string(model::to_string(p.hw->kind)));
  }
  model::parse_weight_format(setup.weight_format, "calibrate --from-benchmark: --weight-format");
  for (const BenchmarkFile& f : files) check_gguf_format(f, setup.weight_format);
  model::parse_kv_format(setup.kv_format, "calibrate --from-benchmark: --kv-format");
  p.spec = model::load_model_spec(setup.model_file);

  std::map<std::string, size_t> run_of;                     // file index + load key -> run
  std::map<std::pair<size_t, std::string>, size_t> chosen;  // run, metric -> observation
  for (size_t f = 0; f < files.size(); ++f) {
    for (const BenchmarkPoint& pt : files[f].points) {
      const std::string key = std::to_string(f) + "|" + load_key(pt);
      auto it = run_of.find(key);
      if (it == run_of.end()) {
        Run run;
        run.file = f;
        PublishedRow& r = run.row;
        r.id = files[f].file.filename().string() + " " + pt.where;
        r.split = "fit";
        r.device_kind = std::string(model::to_string(p.hw->kind));
        r.engine = setup.engine;
        r.hardware = setup.hardware;
        r.device_count = p.hw->kind == model::DeviceKind::kGpu ? setup.device_count : 1;
        r.tensor_parallel = setup.tensor_parallel > 0 ? setup.tensor_parallel : r.device_count;
        r.cores_used = setup.cores_used > 0 ? setup.cores_used : static_cast<int>(pt.threads);
        r.model = setup.model_file.string();
        r.weight_format = setup.weight_format;
        r.kv_format = setup.kv_format;
        r.batch = pt.batch;
        r.offline_requests = pt.offline_requests;
        r.concurrency = pt.concurrency;
        r.request_rate_per_s = pt.request_rate_per_s;
        r.num_requests = pt.num_requests;
        if (pt.concurrency > 0 && pt.num_requests > 0) {
          // As many requests as the benchmark sent: a few per client start together.
          r.requests_per_user = std::max(
              1.0, static_cast<double>(pt.num_requests) / static_cast<double>(pt.concurrency));
        }
        r.prompt_tokens = pt.prompt_tokens;
        r.output_tokens = pt.output_tokens;
        it = run_of.emplace(key, p.runs.size()).first;
        p.runs.push_back(std::move(run));
      }
      Observation o;
      o.run = it->second;
      o.point = pt;
      o.row = p.runs[o.run].row;
      o.row.metric = pt.metric;
      o.row.statistic = pt.metric == "throughput" ? "total" : pt.statistic;
      o.row.published = pt.value;
      o.measured_s = pt.metric == "throughput" ? 1.0 / pt.value : pt.value;
      const auto slot = chosen.find({o.run, pt.metric});
      if (slot == chosen.end()) {
        chosen.emplace(std::make_pair(o.run, pt.metric), p.obs.size());
        p.obs.push_back(std::move(o));
      } else if (statistic_rank(pt.statistic) <
                 statistic_rank(p.obs[slot->second].point.statistic)) {
        p.obs[slot->second] = std::move(o);
      }
    }
  }
  p.shortest_time_s = 1e30;
  for (const Observation& o : p.obs) {
    if (o.row.metric != "throughput") p.shortest_time_s = std::min(p.shortest_time_s, o.measured_s);
  }
  if (p.shortest_time_s > 1e29) p.shortest_time_s = 1e-3;
  if (static_cast<int64_t>(p.runs.size()) < kMinBenchmarkRuns) {
    throw InputError("calibrate --from-benchmark: " + joined_files(files) +
                     ": too few runs to fit: " + std::to_string(p.runs.size()) + " distinct run" +
                     (p.runs.size() == 1 ? "" : "s") + " (loads or lengths, " +
                     std::to_string(p.obs.size()) + " figures); a fit needs at least " +
                     std::to_string(kMinBenchmarkRuns) +
                     " (each is left out in turn to check the fit)");
  }
  return p;
}

/// Refuses fitted fractions above 1: bandwidth above the datasheet peak (GPU) or above the
/// CPU bandwidth model's figure for the cores used, compute above the instruction path's peak.
void check_peaks(const Problem& p, const std::vector<FittedParameter>& params,
                 const std::string& files) {
  for (const FittedParameter& f : params) {
    if (f.name == "kernel_overhead_s" || f.name == "frontend_latency_s" || !f.determined ||
        f.value <= 1 + kPeakTolerance)
      continue;
    std::string ceiling;
    if (f.name == "memory_bandwidth_fraction") {
      const int cores =
          p.runs.front().row.cores_used > 0 ? p.runs.front().row.cores_used : p.hw->num_cores;
      ceiling =
          p.hw->kind == model::DeviceKind::kGpu
              ? "the datasheet peak of " + p.hw->name + " (" +
                    base::fixed(p.hw->peak_memory_bandwidth_bytes_per_s / 1e9, 0) + " GB/s)"
              : "the bandwidth llmcap's CPU model gives " + std::to_string(cores) + " cores of " +
                    p.hw->name + " (" +
                    base::fixed(model::cpu_read_bandwidth_bytes_per_s(*p.hw, cores) / 1e9, 0) +
                    " GB/s; datasheet " +
                    base::fixed(p.hw->peak_memory_bandwidth_bytes_per_s / 1e9, 0) + " GB/s)";
    } else {
      ceiling = p.hw->kind == model::DeviceKind::kGpu
                    ? "the datasheet peak of " + p.hw->name
                    : "the peak of the " +
                          std::string(model::instruction_path_name(
                              model::available_path(*p.hw, p.base.cpu_path))) +
                          " path on " + p.hw->name;
    }
    throw InputError("calibrate --from-benchmark: " + files + ": the fit puts " + f.name + " at " +
                     base::fixed(f.value, 3) + ", " + base::fixed(100 * (f.value - 1), 1) +
                     "% above " + ceiling +
                     "; nothing stored. Check --hardware, --devices/--cores and the model's "
                     "formats against the machine the benchmark ran on");
  }
}

/// The fitted parameters and the predictions at them.
struct Solution {
  Theta theta;
  std::array<bool, kNumParams> determined{};
  std::vector<double> predicted;
  int iterations = 0;
};

/// Projected Gauss-Newton from `theta`: linearise by forward differences, solve the NNLS of the
/// relative errors of the fitted observations, halve the step until the simulated cost falls.
Solution solve(const Problem& p, Theta theta) {
  std::vector<size_t> fitted;  // observations in the fit
  for (size_t r = 0; r < p.obs.size(); ++r) {
    if (!p.runs[p.obs[r].run].left_out) fitted.push_back(r);
  }
  std::vector<double> predicted = predict(p, theta);
  double cost = cost_of(p, predicted);
  // determined: moved the fitted figures at some iteration (and so may have moved);
  // now_determined: at this iteration.
  std::array<bool, kNumParams> determined{}, now_determined{};
  int iterations = 0;
  bool converged = false;
  while (!converged && iterations < kMaxIterations) {
    ++iterations;
    // Jacobian by forward differences (the step time is piecewise linear in theta).
    Eigen::MatrixXd jac(static_cast<Eigen::Index>(p.obs.size()), kNumParams);
    for (int i = 0; i < kNumParams; ++i) {
      Theta moved = theta;
      const double h =
          is_time(i) ? std::max(kDifferenceStep * theta[i], 1e-6) : kDifferenceStep * theta[i];
      moved[i] += h;
      const std::vector<double> q = predict(p, moved);
      double elasticity = 0;
      for (size_t r = 0; r < p.obs.size(); ++r) {
        jac(static_cast<Eigen::Index>(r), i) = (q[r] - predicted[r]) / h;
      }
      for (size_t r : fitted) {
        elasticity += std::abs(q[r] - predicted[r]) / predicted[r] / kDifferenceStep;
      }
      elasticity /= static_cast<double>(fitted.size());
      now_determined[i] = is_time(i) ? elasticity > 0 : elasticity >= kMinElasticity;
      determined[i] = determined[i] || now_determined[i];
    }
    std::vector<int> cols;
    for (int i = 0; i < kNumParams; ++i) {
      if (now_determined[i]) cols.push_back(i);
    }
    if (cols.empty() || cost <= 1e-24) break;  // nothing to fit, or nothing left to gain
    Eigen::MatrixXd a(static_cast<Eigen::Index>(fitted.size()),
                      static_cast<Eigen::Index>(cols.size()));
    Eigen::VectorXd b(static_cast<Eigen::Index>(fitted.size()));
    for (size_t k = 0; k < fitted.size(); ++k) {
      const size_t r = fitted[k];
      const double y = p.obs[r].measured_s;
      double rhs = y - predicted[r];
      for (size_t j = 0; j < cols.size(); ++j) {
        const double d = jac(static_cast<Eigen::Index>(r), cols[j]);
        a(static_cast<Eigen::Index>(k), static_cast<Eigen::Index>(j)) = d / y;
        rhs += d * theta[cols[j]];
      }
      b[static_cast<Eigen::Index>(k)] = rhs / y;
    }
    const Eigen::VectorXd x = nnls(a, b);
    Theta target = theta;
    for (size_t j = 0; j < cols.size(); ++j) {
      target[cols[j]] = x[static_cast<Eigen::Index>(j)];
      if (!is_time(cols[j])) target[cols[j]] = std::max(target[cols[j]], kMinInverse);
    }
    // Halve the step until the simulated cost falls.
    bool moved = false;
    Theta step = target - theta;
    for (int halving = 0; halving < 8 && !moved; ++halving, step *= 0.5) {
      const Theta next = theta + step;
      const std::vector<double> q = predict(p, next);
      const double c = cost_of(p, q);
      if (c < cost) {
        const double change = (step.array().abs() / theta.array().abs().max(1e-9)).maxCoeff();
        theta = next;
        predicted = q;
        cost = c;
        moved = true;
        converged = change < kConverged;
      }
    }
    // Where the simulated figures are not smooth in the parameters (a closed loop's users in
    // lockstep, a step crossing a roofline kink), the linear model's step can fail: try each
    // parameter alone, scaled up and down (a time at 0: a share of the shortest figure).
    for (size_t j = 0; j < cols.size() && !moved; ++j) {
      const int i = cols[j];
      for (double factor : {2.0, 0.5, 1.25, 0.8, 1.05, 0.95}) {
        Theta next = theta;
        next[i] = theta[i] > 0 ? theta[i] * factor : (factor - 0.5) * p.shortest_time_s;
        if (!is_time(i) && next[i] < kMinInverse) continue;
        const std::vector<double> q = predict(p, next);
        const double c = cost_of(p, q);
        if (c < cost * (1 - 1e-9)) {
          theta = next;
          predicted = q;
          cost = c;
          moved = true;
          break;
        }
      }
    }
    converged = converged || !moved;
  }

  return Solution{theta, determined, predicted, iterations};
}

}  // namespace

BenchmarkFit fit_benchmarks(const std::vector<BenchmarkFile>& files, const BenchmarkSetup& setup,
                            const model::Catalog& catalog, uint64_t seed) {
  const Problem p = make_problem(files, setup, catalog, seed);
  const std::string file_list = joined_files(files);
  Theta theta;
  theta[kKernel] = p.base.kernel_overhead_s.value;
  theta[kFrontend] = p.base.frontend_latency_s.value;
  theta[kBandwidth] = 1.0 / p.base.memory_bandwidth_fraction.value;
  theta[kCompute] = 1.0 / p.base.compute_fraction.value;
  theta[kDecode] =
      1.0 / (p.base.decode_compute_fraction.value > 0 ? p.base.decode_compute_fraction.value
                                                      : p.base.compute_fraction.value);
  const Theta start = theta;

  // The profile: fitted on every run. The error a user can expect on runs it has not seen:
  // each run's figures predicted by a fit on the other runs (leave one run out).
  const Solution sol = solve(p, theta);
  theta = sol.theta;
  std::vector<double> unseen(p.obs.size());
  for (size_t k = 0; k < p.runs.size(); ++k) {
    Problem without = p;
    without.runs[k].left_out = true;
    const Solution s = solve(without, sol.theta);
    for (size_t r = 0; r < p.obs.size(); ++r) {
      if (p.obs[r].run == k) unseen[r] = s.predicted[r];
    }
  }

  BenchmarkFit fit;
  fit.iterations = sol.iterations;
  fit.runs = static_cast<int64_t>(p.runs.size());
  fit.left_out_runs = fit.runs;
  for (int i = 0; i < kNumParams; ++i) {
    FittedParameter f;
    f.name = kParamNames[i];
    f.determined = sol.determined[i];
    f.start = is_time(i) ? start[i] : 1.0 / start[i];
    f.value = is_time(i) ? theta[i] : 1.0 / theta[i];  // start when it never moved
    fit.parameters.push_back(f);
  }
  check_peaks(p, fit.parameters, file_list);

  std::set<std::string> tools;
  for (const BenchmarkFile& f : files) {
    tools.insert(f.tool);
    if (fit.files_model.empty()) fit.files_model = f.model;
  }
  for (const std::string& t : tools) fit.tools += (fit.tools.empty() ? "" : ", ") + t;
  std::vector<double> fit_errors, left_errors;
  const auto figure = [](const Observation& o, double time_s) {
    return o.row.metric == "throughput" ? 1.0 / time_s : time_s;
  };
  for (size_t r = 0; r < p.obs.size(); ++r) {
    const Observation& o = p.obs[r];
    FittedPoint fp;
    fp.file = files[p.runs[o.run].file].file;
    fp.point = o.point;
    fp.run = static_cast<int>(o.run);
    fp.predicted = figure(o, sol.predicted[r]);
    fp.error = base::relative_error(fp.predicted, o.point.value);
    fp.left_out_predicted = figure(o, unseen[r]);
    fp.left_out_error = base::relative_error(fp.left_out_predicted, o.point.value);
    fit_errors.push_back(fp.error);
    left_errors.push_back(fp.left_out_error);
    fit.points.push_back(fp);
  }
  const auto max_abs = [](const std::vector<double>& v) {
    double m = 0;
    for (double e : v) m = std::max(m, std::abs(e));
    return m;
  };
  fit.fit_median_abs_error = base::abs_nearest_rank_quantile(fit_errors, 0.5);
  fit.fit_max_abs_error = max_abs(fit_errors);
  fit.left_out_median_abs_error = base::abs_nearest_rank_quantile(left_errors, 0.5);
  fit.left_out_max_abs_error = max_abs(left_errors);

  // The fitted profile.
  model::EngineProfile& e = fit.profile;
  e = p.base;
  e.hardware = setup.hardware;
  e.name = p.base.name + ", fitted on " + p.hw->name;
  e.file.clear();
  std::ostringstream summary;
  summary << "fitted to " << fit_errors.size() << " figures of " << fit.runs << " runs ("
          << fit.tools << ": " << file_list << ") on " << p.hw->name << ", model "
          << setup.model_file.filename().string() << " (" << setup.weight_format << ", KV "
          << setup.kv_format << "); error median " << base::fixed(100 * fit.fit_median_abs_error, 1)
          << "%; each run left out in turn: median "
          << base::fixed(100 * fit.left_out_median_abs_error, 1) << "%, worst "
          << base::fixed(100 * fit.left_out_max_abs_error, 1) << "%";
  e.fit_summary = summary.str();
  const std::string date = today();
  const auto set = [&](model::SourcedFigure& figure, const FittedParameter& f) {
    if (!f.determined) return;
    figure.value = f.value;
    figure.source = "llmcap calibrate --from-benchmark: " + e.fit_summary;
    figure.as_of = date;
  };
  set(e.kernel_overhead_s, fit.parameters[kKernel]);
  set(e.memory_bandwidth_fraction, fit.parameters[kBandwidth]);
  set(e.compute_fraction, fit.parameters[kCompute]);
  set(e.decode_compute_fraction, fit.parameters[kDecode]);
  set(e.frontend_latency_s, fit.parameters[kFrontend]);
  return fit;
}

nlohmann::ordered_json fit_json(const BenchmarkFit& fit, const BenchmarkSetup& setup) {
  nlohmann::ordered_json j;
  j["summary"] = fit.profile.fit_summary;
  j["tools"] = fit.tools;
  std::vector<std::string> files;
  for (const FittedPoint& p : fit.points) {
    if (std::find(files.begin(), files.end(), p.file.string()) == files.end()) {
      files.push_back(p.file.string());
    }
  }
  j["files"] = files;
  j["model"] = setup.model_file.string();
  j["weight_format"] = setup.weight_format;
  j["kv_format"] = setup.kv_format;
  j["hardware"] = setup.hardware;
  j["device_count"] = setup.device_count;
  j["tensor_parallel"] = setup.tensor_parallel;
  j["cores_used"] = setup.cores_used;
  j["runs"] = fit.runs;
  j["left_out_runs"] = fit.left_out_runs;
  j["iterations"] = fit.iterations;
  j["fit_median_abs_error"] = fit.fit_median_abs_error;
  j["fit_max_abs_error"] = fit.fit_max_abs_error;
  j["left_out_median_abs_error"] = fit.left_out_median_abs_error;
  j["left_out_max_abs_error"] = fit.left_out_max_abs_error;
  nlohmann::ordered_json params = nlohmann::ordered_json::array();
  for (const FittedParameter& f : fit.parameters) {
    params.push_back(
        {{"name", f.name}, {"start", f.start}, {"value", f.value}, {"determined", f.determined}});
  }
  j["parameters"] = params;
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const FittedPoint& p : fit.points) {
    points.push_back({{"file", p.file.string()},
                      {"where", p.point.where},
                      {"metric", p.point.metric},
                      {"statistic", p.point.statistic},
                      {"measured", p.point.value},
                      {"predicted", p.predicted},
                      {"error", p.error},
                      {"left_out_predicted", p.left_out_predicted},
                      {"left_out_error", p.left_out_error}});
  }
  j["points"] = points;
  return j;
}

}  // namespace llmcap::app
