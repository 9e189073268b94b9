// The use of a calibration profile: the machine check, the measured shape ratios, and the
// efficiency the calibrated predictor gets (calibrated_efficiency, transfer_efficiency;
// model/calibration.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "base/stats.h"
#include "model/calibration.h"
#include "model/input_error.h"

namespace llmcap::model {

// ---------------------------------------------------------------------------------------------
// Use of a profile

void check_profile_machine(const CalibrationProfile& profile, const MachineIdentity& here,
                           const std::string& source) {
  const CalibrationMachine& m = profile.machine;
  if (m.cpu_model == here.cpu_model && m.isa == here.isa) return;
  throw InputError(source + ": profile was measured on \"" + m.cpu_model + "\" with [" + m.isa +
                   "], this machine is \"" + here.cpu_model + "\" with [" + here.isa +
                   "]; pass --transfer to use it for another CPU");
}

namespace {

const std::string& format_or_none(const std::string& s) {
  static const std::string none = "(unknown)";
  return s.empty() ? none : s;
}

/// Read bandwidth at the fitted thread count, else at the largest measured count; 0 if none.
double measured_read_bandwidth(const CalibrationProfile& p) {
  const auto& bw = p.machine.read_bandwidth_bytes_per_s;
  if (const auto it = bw.find(p.fit.threads); it != bw.end()) return it->second;
  return bw.empty() ? 0.0 : bw.rbegin()->second;
}

}  // namespace

namespace {
/// Whether `s` is a sample of `op` that `fit` fitted (its thread count, bytes floor and
/// cache-resident choice).
bool fitted_sample(const KernelSample& s, const CalibrationFit& fit, const char* op) {
  return s.op == op && s.threads == fit.threads && s.bytes >= fit.min_bytes &&
         (!s.cache_resident || fit.cache_resident_fitted);
}

/// The three-term time of `r` for a sample's bytes and flops (a rate of 0: term dropped).
double three_term_s(const RateFit& r, double bytes, double flops) {
  return r.overhead_s + (r.bytes_per_s > 0 ? bytes / r.bytes_per_s : 0.0) +
         (r.flops_per_s > 0 ? flops / r.flops_per_s : 0.0);
}

/// The sample's time (the fit's statistic) over `fitted_s`; 0 when either is not positive.
double measured_over(const KernelSample& s, const CalibrationFit& fit, double fitted_s) {
  const double measured_s = fit.statistic == FitStatistic::kMin ? s.min_s : s.median_s;
  return fitted_s > 0 && measured_s > 0 ? measured_s / fitted_s : 0.0;
}

/// Sorts every table by tokens and averages the entries of equal tokens (samples of one shape
/// from merged sweeps).
template <class Key>
void sort_and_average(std::map<Key, std::vector<ShapeRatio>>& tables) {
  for (auto& [key, table] : tables) {
    (void)key;
    std::sort(table.begin(), table.end(),
              [](const ShapeRatio& a, const ShapeRatio& b) { return a.tokens < b.tokens; });
    std::vector<ShapeRatio> merged;
    std::size_t n = 0;
    for (const ShapeRatio& r : table) {
      if (!merged.empty() && merged.back().tokens == r.tokens) {
        merged.back().ratio =
            (merged.back().ratio * static_cast<double>(n) + r.ratio) / static_cast<double>(n + 1);
        ++n;
      } else {
        merged.push_back(r);
        n = 1;
      }
    }
    table = std::move(merged);
  }
}
}  // namespace

namespace {
/// The fitted time of a matmul sample as the predictor takes it (RooflinePredictor's
/// calibrated_s): its batch's own line; between two fitted batches, each line at that batch's
/// bytes (the sample's bytes with the activations of that many rows) interpolated linearly in
/// the batch; past the last, the last line scaled by batch / last batch; else (below the first,
/// or no per-batch lines) the three-term line. So that a sample at a batch without a line of
/// its own (validate's batch 32 against a quick sweep's 16 and 64) has the ratio that makes the
/// prediction equal it.
double fitted_matmul_s(const RateFit& f, const KernelSample& s) {
  const auto& by = f.by_batch;
  const double batch = static_cast<double>(s.batch);
  const double bytes_per_row = 4.0 * static_cast<double>(s.rows + s.cols);  // f32 in and out
  const auto at = [&](const BatchRateFit& b, double rows) {
    const double bytes = std::max(0.0, s.bytes + bytes_per_row * (rows - batch));
    return b.overhead_s + (b.bytes_per_s > 0 ? bytes / b.bytes_per_s : 0.0);
  };
  if (by.empty() || batch < static_cast<double>(by.front().batch)) {
    return three_term_s(f, s.bytes, s.flops);
  }
  if (batch > static_cast<double>(by.back().batch)) {
    const double last = static_cast<double>(by.back().batch);
    return at(by.back(), last) * batch / last;
  }
  std::size_t hi = 0;
  while (by[hi].batch < s.batch) ++hi;
  if (by[hi].batch == s.batch) return at(by[hi], batch);
  const BatchRateFit& lo = by[hi - 1];
  const double w =
      (batch - static_cast<double>(lo.batch)) / static_cast<double>(by[hi].batch - lo.batch);
  return (1 - w) * at(lo, static_cast<double>(lo.batch)) +
         w * at(by[hi], static_cast<double>(by[hi].batch));
}
}  // namespace

std::map<MatmulShapeKey, std::vector<ShapeRatio>> measured_shape_ratios(
    const CalibrationProfile& profile) {
  const CalibrationFit& fit = profile.fit;
  std::map<MatmulShapeKey, std::vector<ShapeRatio>> out;
  for (const KernelSample& s : profile.kernels) {
    if (!fitted_sample(s, fit, "matmul")) continue;
    const auto f = fit.matmul.find(s.format);
    if (f == fit.matmul.end()) continue;
    const double fitted_s = fitted_matmul_s(f->second, s);
    if (const double r = measured_over(s, fit, fitted_s); r > 0) {
      out[MatmulShapeKey{s.format, s.rows, s.cols}].push_back({static_cast<double>(s.batch), r});
    }
  }
  sort_and_average(out);
  return out;
}

std::map<AttentionShapeKey, std::vector<ShapeRatio>> measured_attention_ratios(
    const CalibrationProfile& profile, const std::string& op) {
  const CalibrationFit& fit = profile.fit;
  std::map<AttentionShapeKey, std::vector<ShapeRatio>> out;
  for (const KernelSample& s : profile.kernels) {
    if (!fitted_sample(s, fit, op.c_str())) continue;
    const auto f = fit.attention.find(s.format);
    if (f == fit.attention.end()) continue;
    if (const double r = measured_over(s, fit, three_term_s(f->second, s.bytes, s.flops)); r > 0) {
      out[AttentionShapeKey{s.format, s.rows, s.batch}].push_back({static_cast<double>(s.cols), r});
    }
  }
  sort_and_average(out);
  return out;
}

namespace {
/// Seconds per element of the profile's `swiglu` sample from memory (not cache-resident) with
/// the most elements, else of its in-cache one with the most (one thread, the fit's
/// statistic); 0 without one.
double activation_s_per_element(const CalibrationProfile& profile) {
  bool from_memory = false;
  int64_t most = 0;
  double s_per_element = 0;
  for (const KernelSample& k : profile.kernels) {
    const int64_t elements = k.cols * k.batch;
    const double t = profile.fit.statistic == FitStatistic::kMin ? k.min_s : k.median_s;
    if (k.op != "swiglu" || k.cols < 1 || k.batch < 1 || !(t > 0)) continue;
    // A sample from memory beats any in the caches; among equals, the one with more elements.
    const bool k_from_memory = !k.cache_resident;
    if (from_memory && !k_from_memory) continue;
    if (k_from_memory == from_memory && elements <= most) continue;
    from_memory = k_from_memory;
    most = elements;
    s_per_element = t / static_cast<double>(elements);
  }
  return s_per_element;
}
}  // namespace

Efficiency calibrated_efficiency(const CalibrationProfile& profile) {
  if (profile.fit.matmul.empty()) {
    throw InputError("calibration profile of \"" + format_or_none(profile.machine.cpu_model) +
                     "\": field \"fit.matmul\": no fitted weight format (too few samples)");
  }
  Efficiency e = default_efficiency(DeviceKind::kCpu);
  CalibratedEfficiency cal;
  for (const auto& [format, f] : profile.fit.matmul) {
    CalibratedRates rates{f.overhead_s, f.bytes_per_s, f.flops_per_s, {}};
    for (const BatchRateFit& b : f.by_batch) {
      rates.by_batch.push_back({static_cast<double>(b.batch), b.overhead_s, b.bytes_per_s});
    }
    cal.linear[format] = rates;
  }
  for (const auto& [format, f] : profile.fit.attention) {
    cal.attention[format] = CalibratedRates{f.overhead_s, f.bytes_per_s, f.flops_per_s, {}};
  }
  cal.linear_shapes = measured_shape_ratios(profile);
  cal.attention_shapes = measured_attention_ratios(profile);
  cal.attention_spread_shapes = measured_attention_ratios(profile, "attention_spread");
  cal.stream_bytes_per_s = measured_read_bandwidth(profile);
  cal.threads = std::max(1, profile.fit.threads);
  cal.activation_s_per_element = activation_s_per_element(profile);
  cal.source = "measured on \"" + profile.machine.cpu_model + "\" with " +
               std::to_string(profile.fit.threads) + " threads" +
               (profile.created_at.empty() ? "" : " (" + profile.created_at + ")");
  e.calibrated = std::move(cal);
  return e;
}

namespace {
/// The calibrated efficiency of `profile` with its memory-bound work scaled by bw_ratio and its
/// CPU work by compute_ratio (the rule of transfer_efficiency); `note` is appended to the source.
Efficiency scaled_efficiency(const CalibrationProfile& profile, double bw_ratio,
                             double compute_ratio, const std::string& note) {
  Efficiency e = calibrated_efficiency(profile);
  const double measured_bw = measured_read_bandwidth(profile);
  CalibratedEfficiency& cal = *e.calibrated;
  // A fitted rate per byte is split into the memory stream (1 / measured read bandwidth),
  // which scales with bandwidth, and the rest, CPU work per byte (dequantisation, conversion),
  // which scales with compute.
  const auto transfer_bytes_rate = [&](double bytes_per_s) {
    if (!(bytes_per_s > 0)) return 0.0;
    const double s_per_byte = 1.0 / bytes_per_s;
    const double memory_s = std::min(s_per_byte, 1.0 / measured_bw);
    const double cpu_s = s_per_byte - memory_s;
    return 1.0 / (memory_s / bw_ratio + cpu_s / compute_ratio);
  };
  for (auto& [format, r] : cal.linear) {
    (void)format;
    r.bytes_per_s = transfer_bytes_rate(r.bytes_per_s);
    r.flops_per_s *= compute_ratio;
    for (BatchRates& b : r.by_batch) b.bytes_per_s = transfer_bytes_rate(b.bytes_per_s);
  }
  for (auto& [format, r] : cal.attention) {
    (void)format;
    r.bytes_per_s = transfer_bytes_rate(r.bytes_per_s);
    r.flops_per_s *= compute_ratio;
  }
  cal.stream_bytes_per_s *= bw_ratio;
  cal.threads *= compute_ratio;  // the target's cores x share
  cal.source += note;
  return e;
}
}  // namespace

Efficiency transfer_efficiency(const CalibrationProfile& profile, const HardwareSpec& target_cpu,
                               double share) {
  const std::string context = "transfer of the calibration profile of \"" +
                              format_or_none(profile.machine.cpu_model) + "\" to \"" +
                              target_cpu.id + "\"";
  if (target_cpu.kind != DeviceKind::kCpu) {
    throw InputError(context + ": expected a CPU, got a GPU (GPUs keep the datasheet roofline)");
  }
  if (!(share > 0 && share <= 1)) {
    throw InputError(context + ": share: expected a fraction in (0, 1], got " +
                     std::to_string(share));
  }
  const double measured_bw = measured_read_bandwidth(profile);
  if (!(measured_bw > 0)) {
    throw InputError(context + ": field \"machine.read_bandwidth_bytes_per_s\": no measurement");
  }
  if (!(target_cpu.peak_memory_bandwidth_bytes_per_s > 0) || target_cpu.num_cores < 1) {
    throw InputError(context + ": the target needs a positive peak memory bandwidth and cores");
  }
  const double threads = std::max(1, profile.fit.threads);
  const double bw_ratio = target_cpu.peak_memory_bandwidth_bytes_per_s * share *
                          default_efficiency(DeviceKind::kCpu).memory_bandwidth_fraction /
                          measured_bw;
  const double compute_ratio = target_cpu.num_cores * share / threads;
  char buf[256];
  std::snprintf(buf, sizeof buf,
                ", transferred to %s x %.3g: bandwidth x %.3g (%.4g GB/s x %.2f / %.4g GB/s "
                "measured), compute x %.3g (%.4g cores / %d threads)",
                target_cpu.id.c_str(), share, bw_ratio,
                target_cpu.peak_memory_bandwidth_bytes_per_s * share / 1e9,
                default_efficiency(DeviceKind::kCpu).memory_bandwidth_fraction, measured_bw / 1e9,
                compute_ratio, target_cpu.num_cores * share, static_cast<int>(threads));
  return scaled_efficiency(profile, bw_ratio, compute_ratio, buf);
}

}  // namespace llmcap::model
