// Options of one simulation run that change what is recorded (and when a run may stop early),
// never what happens.
#pragma once

#include <functional>
#include <optional>
#include <vector>

#include "sim/sim_time.h"

namespace llmcap::sim {

/// Options of one run that change what is recorded, never what happens.
/// Per client class (index = RequestSpec::client_class) p99 bounds for
/// SimOptions::stop_at_certain_p99_miss, in seconds, with the semantics of sim::Slo and
/// metrics.h: TTFT = first_token - arrival, TPOT = (completion - first_token) / (output - 1)
/// over requests of >= 2 output tokens, p99 by nearest rank. A class beyond the vectors is
/// not watched.
struct P99Bounds {
  std::vector<double> ttft_s;
  std::vector<double> tpot_s;
};

struct SimOptions {
  /// Stop the run as soon as its verdict against these p99 bounds is certain to be "missed",
  /// which is all the planner's fleet-size search needs of a failing fleet: a request is
  /// rejected, or more TTFTs (or TPOTs) of one class lie above its bound than the p99 allows
  /// (with n values, the nearest-rank p99 exceeds a bound once n - ceil(0.99 n) + 1 values
  /// do). A run that meets the bounds runs to the end, unchanged. Open-loop workloads only
  /// (a closed loop's request count is not known in advance); ignored for a closed loop.
  /// A stopped run sets SimResult::stopped_early and stop_reason; its records are incomplete.
  std::optional<P99Bounds> stop_at_certain_p99_miss;
  /// Polled every 4,096 events or steps run ahead (decode_run_ahead; from the simulating thread);
  /// once it returns true the run stops (SimResult::cancelled, stopped_early). For a caller whose
  /// answer is no longer wanted (a GUI input changed). Empty: never.
  std::function<bool()> cancel;
  /// Keep every inter-token gap in SimResult::itl_ns: memory grows with output tokens (8 bytes
  /// each), so very large runs turn it off (the per-request max_itl is kept either way).
  bool record_itl_ns = true;
  /// Keep the inter-token gaps as runs of equal gaps in SimResult::itl_runs instead: the same
  /// ITL distribution (compute_metrics gives identical figures), in at most about one run per
  /// decode step rather than one entry per token (the decoders of a step share its gap, and
  /// consecutive steps of a replica with the same gap share a run). The
  /// planner's fleet-size search records them so. Independent of record_itl_ns.
  bool record_itl_runs = false;
  /// Width of the windows of the per-replica time series (SimResult::time_series); zero (the
  /// default) records none. Must be >= 0.
  SimTime time_series_interval = SimTime::Zero();
  /// Decode run-ahead (sim/simulator.cpp, Engine::run_decodes_ahead): a replica whose running
  /// sequences all decode and whose queue is empty runs its next steps without an event each,
  /// up to the next arrival, finish or block shortage. Every request record, count and gap
  /// comes out as with it off; only the order of the entries of SimResult::itl_ns and
  /// itl_runs differs (and a run that stops early may hold steps past its stop time). Off
  /// only to check that equivalence.
  bool decode_run_ahead = true;
};

}  // namespace llmcap::sim
