#include "sim/metrics.h"

#include <algorithm>

namespace llmcap::sim {
namespace {

/// Nearest-rank quantile of sorted values for q = percent/100, in exact integer arithmetic:
/// rank ceil(percent * n / 100), 1-based.
double nearest_rank(const std::vector<double>& sorted, int64_t percent) {
  const auto n = static_cast<int64_t>(sorted.size());
  const int64_t rank = std::max<int64_t>(1, (percent * n + 99) / 100);
  return sorted[static_cast<size_t>(rank - 1)];
}

}  // namespace

Distribution summarize_values(std::vector<double> values_s) {
  Distribution d;
  if (values_s.empty()) return d;
  std::sort(values_s.begin(), values_s.end());
  d.count = static_cast<int64_t>(values_s.size());
  double sum = 0;
  for (const double v : values_s) sum += v;
  d.mean_s = sum / static_cast<double>(d.count);
  d.p50_s = nearest_rank(values_s, 50);
  d.p90_s = nearest_rank(values_s, 90);
  d.p99_s = nearest_rank(values_s, 99);
  d.max_s = values_s.back();
  return d;
}

Metrics compute_metrics(const SimResult& result, const Slo& slo) {
  Metrics m;
  m.num_requests = static_cast<int64_t>(result.requests.size());
  m.num_preemptions = result.num_preemptions;

  std::vector<double> ttft, tpot, e2e, queueing;
  ttft.reserve(result.requests.size());
  tpot.reserve(result.requests.size());
  e2e.reserve(result.requests.size());
  queueing.reserve(result.requests.size());
  int64_t num_meeting_slo = 0;
  int64_t num_output_tokens = 0;
  SimTime first_arrival = SimTime::Max();
  SimTime last_completion = SimTime::Zero();
  for (const RequestRecord& r : result.requests) {
    first_arrival = std::min(first_arrival, r.arrival);
    last_completion = std::max(last_completion, r.completion);
    if (r.rejected) {
      ++m.num_rejected;
      continue;  // no latencies; never meets the SLO
    }
    ++m.num_completed;
    num_output_tokens += r.num_output_tokens;
    const double ttft_s = (r.first_token - r.arrival).seconds();
    ttft.push_back(ttft_s);
    e2e.push_back((r.completion - r.arrival).seconds());
    queueing.push_back((r.first_scheduled - r.arrival).seconds());
    bool meets = ttft_s <= slo.ttft_s;
    if (r.num_output_tokens >= 2) {
      const double tpot_s =
          (r.completion - r.first_token).seconds() / static_cast<double>(r.num_output_tokens - 1);
      tpot.push_back(tpot_s);
      meets = meets && tpot_s <= slo.tpot_s;
    }
    if (meets) ++num_meeting_slo;
  }
  std::vector<double> itl;
  itl.reserve(result.itl_ns.size());
  for (const int64_t gap_ns : result.itl_ns) itl.push_back(SimTime::Nanoseconds(gap_ns).seconds());

  m.ttft = summarize_values(std::move(ttft));
  m.tpot = summarize_values(std::move(tpot));
  m.itl = summarize_values(std::move(itl));
  m.e2e_latency = summarize_values(std::move(e2e));
  m.queueing_delay = summarize_values(std::move(queueing));

  if (m.num_requests > 0) {
    m.duration_s = (last_completion - first_arrival).seconds();
    m.slo_attainment = static_cast<double>(num_meeting_slo) / static_cast<double>(m.num_requests);
  }
  if (m.duration_s > 0) {
    m.throughput_requests_per_s = static_cast<double>(m.num_completed) / m.duration_s;
    m.throughput_output_tokens_per_s = static_cast<double>(num_output_tokens) / m.duration_s;
    m.goodput_requests_per_s = static_cast<double>(num_meeting_slo) / m.duration_s;
  }
  return m;
}

}  // namespace llmcap::sim
