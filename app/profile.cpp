#include "app/profile.h"

#include <ctime>

namespace llmcap::app {

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

model::KernelSample to_model_sample(const kernels::KernelSample& k) {
  model::KernelSample s;
  s.op = k.op;
  s.format = k.format;
  s.backend = k.backend;
  s.rows = k.rows;
  s.cols = k.cols;
  s.batch = k.batch;
  s.threads = k.threads;
  s.min_s = k.min_s;
  s.median_s = k.median_s;
  s.bytes = k.bytes;
  s.flops = k.flops;
  s.bytes_per_s = k.bytes_per_s;
  s.flops_per_s = k.flops_per_s;
  s.cache_resident = k.cache_resident;
  return s;
}

model::CalibrationProfile to_profile(const kernels::CalibrationRun& run, const std::string& tool,
                                     model::FitStatistic statistic) {
  model::CalibrationProfile p;
  p.created_at = utc_now();
  p.tool = tool;
  const kernels::MachineInfo& m = run.machine;
  p.machine.cpu_model = m.cpu_model;
  p.machine.isa = m.isa;
  p.machine.num_cores = m.num_cores;
  p.machine.l1d_bytes = m.l1d_bytes;
  p.machine.l2_bytes = m.l2_bytes;
  p.machine.l3_bytes = m.l3_bytes;
  p.machine.read_bandwidth_bytes_per_s = m.read_bandwidth_bytes_per_s;
  p.machine.copy_bandwidth_bytes_per_s = m.copy_bandwidth_bytes_per_s;
  for (const kernels::KernelSample& k : run.samples) p.kernels.push_back(to_model_sample(k));
  // The test sweep has only cache-resident shapes: fit those (the plumbing is what it checks).
  p.fit = model::fit_calibration(p.kernels, run.max_threads, 0, run.rotation_bytes == 0, statistic,
                                 p.machine.read_bandwidth_bytes_per_s);
  return p;
}

}  // namespace llmcap::app
