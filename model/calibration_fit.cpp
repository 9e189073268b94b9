// The fit of a calibration profile's samples (model/calibration.h, fit_calibration).
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "base/stats.h"
#include "model/calibration.h"
#include "model/input_error.h"

namespace llmcap::model {

// ---------------------------------------------------------------------------------------------
// Fit

namespace {

/// Nearest-rank quantile of `v` (docs/metrics.md); 0 for an empty vector.
double quantile(const std::vector<double>& v, double q) {
  return base::nearest_rank_quantile(v, q);
}

/// Non-negative weighted least squares of t ~= offset + X c, rows weighted by 1 / t (relative
/// error), over every non-empty subset of the columns (exact NNLS for a handful of unknowns):
/// the subset with all coefficients >= 0 and the least residual wins; dropped columns get 0.
Eigen::VectorXd nnls_relative(const Eigen::MatrixXd& x, const Eigen::VectorXd& t,
                              const Eigen::VectorXd& offset) {
  const Eigen::Index n = x.rows();
  const Eigen::Index k = x.cols();
  Eigen::MatrixXd a(n, k);
  for (Eigen::Index i = 0; i < n; ++i) a.row(i) = x.row(i) / t(i);
  const Eigen::VectorXd b = Eigen::VectorXd::Ones(n) - offset.cwiseQuotient(t);
  // Column scaling: bytes (~1e8) and flops (~1e9) next to a constant column.
  Eigen::VectorXd scale(k);
  for (Eigen::Index j = 0; j < k; ++j) {
    const double m = a.col(j).cwiseAbs().maxCoeff();
    scale(j) = m > 0 ? m : 1.0;
  }
  const Eigen::MatrixXd as = a * scale.cwiseInverse().asDiagonal();
  Eigen::VectorXd best = Eigen::VectorXd::Zero(k);
  double best_residual = b.squaredNorm();  // all-zero coefficients
  for (unsigned mask = 1; mask < (1u << k); ++mask) {
    std::vector<Eigen::Index> cols;
    for (Eigen::Index j = 0; j < k; ++j) {
      if (mask & (1u << j)) cols.push_back(j);
    }
    if (static_cast<Eigen::Index>(cols.size()) > n) continue;
    Eigen::MatrixXd sub(n, static_cast<Eigen::Index>(cols.size()));
    for (std::size_t c = 0; c < cols.size(); ++c) {
      sub.col(static_cast<Eigen::Index>(c)) = as.col(cols[c]);
    }
    const Eigen::VectorXd coef = sub.colPivHouseholderQr().solve(b);
    if (!coef.allFinite() || (coef.array() < 0).any()) continue;
    const double residual = (sub * coef - b).squaredNorm();
    if (residual < best_residual * (1 - 1e-12)) {
      best_residual = residual;
      best.setZero();
      for (std::size_t c = 0; c < cols.size(); ++c) {
        best(cols[c]) = coef(static_cast<Eigen::Index>(c)) / scale(cols[c]);
      }
    }
  }
  return best;
}

double rate_of(double seconds_per_unit) {
  return seconds_per_unit > 0 ? 1.0 / seconds_per_unit : 0;
}

/// Fits samples of one kind; `with_flops` adds the flops column. The cost per byte is at least
/// `min_s_per_byte` (0: unbounded). Appends the relative errors of the fitted samples to
/// `all_errors`.
RateFit fit_one(const std::vector<const KernelSample*>& samples, bool with_flops,
                FitStatistic statistic, std::vector<double>& all_errors,
                double min_s_per_byte = 0) {
  const auto n = static_cast<Eigen::Index>(samples.size());
  const Eigen::Index k = with_flops ? 3 : 2;
  Eigen::MatrixXd x(n, k);
  Eigen::VectorXd t(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    const KernelSample& s = *samples[static_cast<std::size_t>(i)];
    x(i, 0) = 1.0;
    x(i, 1) = s.bytes;
    if (with_flops) x(i, 2) = s.flops;
    t(i) = statistic == FitStatistic::kMin ? s.min_s : s.median_s;
  }
  // Bounded below: fit t - bytes x bound with a non-negative rest, then add the bound back.
  Eigen::VectorXd c = nnls_relative(x, t, x.col(1) * min_s_per_byte);
  c(1) += min_s_per_byte;
  RateFit fit;
  fit.overhead_s = c(0);
  fit.bytes_per_s = rate_of(c(1));
  fit.flops_per_s = with_flops ? rate_of(c(2)) : 0.0;
  fit.num_samples = static_cast<int>(n);
  std::vector<double> errors;
  const Eigen::VectorXd predicted = x * c;
  for (Eigen::Index i = 0; i < n; ++i) {
    errors.push_back(std::abs(predicted(i) - t(i)) / t(i));
  }
  fit.median_rel_error = quantile(errors, 0.5);
  fit.p95_rel_error = quantile(errors, 0.95);
  all_errors.insert(all_errors.end(), errors.begin(), errors.end());
  return fit;
}

}  // namespace

const char* to_string(FitStatistic statistic) {
  return statistic == FitStatistic::kMin ? "min" : "median";
}

CalibrationFit fit_calibration(const std::vector<KernelSample>& samples, int threads,
                               double min_bytes, bool include_cache_resident,
                               FitStatistic statistic,
                               const std::map<int, double>& read_bandwidth_bytes_per_s) {
  CalibrationFit fit;
  fit.statistic = statistic;
  fit.cache_resident_fitted = include_cache_resident;
  if (threads <= 0) {
    for (const KernelSample& s : samples) threads = std::max(threads, s.threads);
  }
  fit.threads = threads;
  fit.min_bytes = min_bytes;
  std::map<std::string, std::vector<const KernelSample*>> matmul, attention;
  for (const KernelSample& s : samples) {
    if (s.threads != threads || (s.cache_resident && !include_cache_resident) ||
        s.bytes < min_bytes || !(s.median_s > 0) || !(s.min_s > 0)) {
      continue;
    }
    if (s.op == "matmul") matmul[s.format].push_back(&s);
    if (s.op == "attention") attention[s.format].push_back(&s);
  }
  std::vector<double> errors;
  for (const auto& [format, list] : matmul) {
    if (list.size() < 2) continue;
    std::vector<double> global_errors;
    RateFit f = fit_one(list, /*with_flops=*/true, statistic, global_errors);
    // Per batch: the kernels' cost per byte changes with the batch in steps (slices of
    // activation rows, memory- then compute-bound), which one line through all batches
    // smooths over.
    std::map<int64_t, std::vector<const KernelSample*>> by_batch;
    for (const KernelSample* k : list) by_batch[k->batch].push_back(k);
    std::vector<double> batch_errors;
    bool complete = true;
    for (const auto& [batch, group] : by_batch) {
      if (group.size() < 2) {
        complete = false;  // a batch without its own fit: keep the three-term fit only
        break;
      }
      std::vector<double> group_errors;
      const RateFit g = fit_one(group, /*with_flops=*/false, statistic, group_errors);
      f.by_batch.push_back({batch, g.overhead_s, g.bytes_per_s, g.num_samples});
      batch_errors.insert(batch_errors.end(), group_errors.begin(), group_errors.end());
    }
    // Kept only when they fit the samples better than the three-term line (median error):
    // the predictor uses them within their range, so the overall error is then theirs.
    if (complete && !f.by_batch.empty() && quantile(batch_errors, 0.5) < f.median_rel_error) {
      f.by_batch_median_rel_error = quantile(batch_errors, 0.5);
      f.by_batch_p95_rel_error = quantile(batch_errors, 0.95);
      errors.insert(errors.end(), batch_errors.begin(), batch_errors.end());
    } else {
      f.by_batch.clear();
      errors.insert(errors.end(), global_errors.begin(), global_errors.end());
    }
    fit.matmul[format] = f;
  }
  // Decode attention streams the KV cache: its cost per byte is at least the machine's read
  // time per byte at this thread count. (The samples' bytes and FLOPs are nearly collinear, so
  // an unbounded fit can move the whole cost onto FLOPs and read the KV "for free".)
  const auto bw = read_bandwidth_bytes_per_s.find(threads);
  const double min_s_per_byte =
      bw != read_bandwidth_bytes_per_s.end() && bw->second > 0 ? 1.0 / bw->second : 0.0;
  for (const auto& [format, list] : attention) {
    if (list.size() >= 2) {
      fit.attention[format] = fit_one(list, /*with_flops=*/true, statistic, errors, min_s_per_byte);
    }
  }
  fit.median_rel_error = quantile(errors, 0.5);
  fit.p95_rel_error = quantile(errors, 0.95);
  return fit;
}

CalibrationFit refit_calibration(const CalibrationProfile& profile, FitStatistic statistic) {
  return fit_calibration(profile.kernels, profile.fit.threads, profile.fit.min_bytes,
                         profile.fit.cache_resident_fitted, statistic,
                         profile.machine.read_bandwidth_bytes_per_s);
}

}  // namespace llmcap::model
