// Text, JSON and CSV forms of a plan result.
#pragma once

#include <filesystem>
#include <ostream>
#include <string>

#include "plan/planner.h"
#include "plan/scenario.h"

namespace llmcap::cli {

/// Human-readable comparison table (feasible rows cheapest first, then infeasible ones with
/// their reasons) and a two-line recommendation (cheapest CPU and GPU fleet).
void print_plan_table(const plan::Scenario& scenario, const plan::PlanResult& result,
                      std::ostream& out);

/// `{"scenario": {...}, "workload": {...}, "results": [{"instance_type", "device_kind",
/// "feasible", "num_instances", "usd_per_hour", "usd_per_million_output_tokens", "ttft_p50_s",
/// "ttft_p99_s", "tpot_p50_s", "tpot_p99_s", "infeasible_reason", ...}]}`.
std::string plan_to_json(const plan::Scenario& scenario, const plan::PlanResult& result);

/// One header line and one line per row, with the same fields as the JSON results.
std::string plan_to_csv(const plan::PlanResult& result);

/// Writes `contents` to `path` through a temporary file in the same folder renamed into place,
/// so that a reader never sees a half-written file. Throws std::runtime_error naming the path.
void write_file_atomically(const std::filesystem::path& path, const std::string& contents);

}  // namespace llmcap::cli
