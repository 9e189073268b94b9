// The JSON and CSV forms of a plan result (files are written through app/output_files.h).
#pragma once

#include <filesystem>
#include <string>

#include "app/output_files.h"
#include "plan/planner.h"
#include "plan/scenario.h"

namespace llmcap::app {

/// The scenario file's name for the workload kind: "trace", the arrival process ("poisson",
/// "gamma", "weibull"), "closed_loop", or "classes" for client classes.
std::string workload_kind(const plan::WorkloadSpec& w);

/// `{"scenario": {...}, "workload": {...}, "results": [{"instance_type", "device_kind",
/// "feasible", "num_instances", "usd_per_hour", "usd_per_million_output_tokens", "ttft_p50_s",
/// "ttft_p99_s", "tpot_p50_s", "tpot_p99_s", "infeasible_reason", ...}]}`.
/// "scenario.workload_kind" is the scenario file's kind: "trace", "poisson", "gamma",
/// "weibull", "closed_loop" or "classes". With client classes (and only then), "scenario",
/// "workload" and each result also hold a "classes" array, one object per class in scenario
/// order: scenario: name, workload_kind, workload_path, slo; workload: name, num_requests,
/// mean_prompt_tokens, mean_output_tokens, p99_prompt_tokens; result: name, slo,
/// ttft_floor_s, num_requests, num_completed, num_rejected, ttft_p50_s, ttft_p99_s,
/// tpot_p50_s, tpot_p99_s, e2e_latency_p99_s, slo_attainment, goodput_requests_per_s,
/// throughput_output_tokens_per_s (metrics null for an infeasible row, as the row's own).
/// The other keys are those of a scenario without classes ("slo" then holds the tightest
/// bounds, Scenario::slo). With serving.speculative on, "scenario.speculative" (docs/metrics.md,
/// "Plan output"); each result has the prefix-cache and KV-offload figures.
std::string plan_to_json(const plan::Scenario& scenario, const plan::PlanResult& result);

/// One header line and one line per row, with the same fields as the JSON results, the
/// infeasible reason always quoted. With client classes, 8 columns per class c (0-based,
/// scenario order) follow the fixed ones: class_<c>_name (quoted), class_<c>_slo_ttft_p99_s,
/// class_<c>_slo_tpot_p99_s, class_<c>_num_requests, class_<c>_ttft_p99_s,
/// class_<c>_tpot_p99_s, class_<c>_slo_attainment, class_<c>_goodput_requests_per_s (the
/// metrics empty for an infeasible row). Without classes the columns are the fixed ones only.
std::string plan_to_csv(const plan::PlanResult& result);

}  // namespace llmcap::app
