// Latency and throughput metrics of a simulation (definitions: docs/metrics.md).
#pragma once

#include <cstdint>
#include <vector>

#include "sim/simulator.h"

namespace llmcap::sim {

/// Summary of one metric over requests (or, for ITL, over token gaps). Quantiles use the
/// nearest-rank rule: the q-quantile of n sorted values is value[ceil(q*n) - 1].
struct Distribution {
  int64_t count = 0;
  double mean_s = 0, p50_s = 0, p90_s = 0, p99_s = 0, max_s = 0;
};

/// Nearest-rank summary of `values_s` (any order). All zeros when empty.
Distribution summarize_values(std::vector<double> values_s);

/// A per-request latency objective: a request meets it when its TTFT <= ttft_s and its TPOT
/// <= tpot_s. The fleet-level objective (used by the planner) is that the p99 of each is
/// within its bound.
struct Slo {
  double ttft_s = 0;
  double tpot_s = 0;
};

struct Metrics {
  Distribution ttft;            ///< first_token - arrival
  Distribution tpot;            ///< (completion - first_token) / (output - 1), output >= 2
  Distribution itl;             ///< gaps between consecutive output tokens
  Distribution e2e_latency;     ///< completion - arrival
  Distribution queueing_delay;  ///< first_scheduled - arrival
  int64_t num_requests = 0;
  int64_t num_completed = 0;
  int64_t num_rejected = 0;
  int64_t num_preemptions = 0;
  double duration_s = 0;  ///< first arrival to last completion
  double throughput_requests_per_s = 0;
  double throughput_output_tokens_per_s = 0;
  double goodput_requests_per_s = 0;  ///< completed requests meeting the SLO per second
  double slo_attainment = 0;          ///< fraction of requests meeting the SLO
};

Metrics compute_metrics(const SimResult& result, const Slo& slo);

}  // namespace llmcap::sim
