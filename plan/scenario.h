// A planning scenario: model, workload, SLO, serving limits and candidate instance types.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "model/formats.h"
#include "sim/metrics.h"
#include "sim/simulator.h"

namespace llmcap::plan {

/// Bad scenario input. One line naming the file, the field, the value and what was expected,
/// e.g. `s.json: field "workload.rate_multiplier": expected a positive number, got -2`.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

/// Where requests come from. Paths are resolved against the scenario file's folder.
struct WorkloadSpec {
  enum class Kind { kTrace, kPoisson, kClosedLoop };
  Kind kind = Kind::kTrace;
  /// kTrace: an Azure 2023 or Vidur trace. kPoisson / kClosedLoop: any file with lengths.
  std::filesystem::path path;
  double rate_multiplier = 1.0;    ///< kTrace: > 0, divides arrival offsets
  std::optional<double> window_s;  ///< kTrace: keep arrivals before this offset (after scaling)
  double rate_per_s = 0;           ///< kPoisson: > 0
  int64_t num_requests = 0;        ///< kPoisson: > 0
  int64_t num_users = 0;           ///< kClosedLoop: > 0
  double think_time_s = 0;         ///< kClosedLoop: mean think time, >= 0
  double duration_s = 0;           ///< kClosedLoop: > 0
};

struct Scenario {
  std::filesystem::path file;  ///< the scenario file itself
  std::string name;
  std::string description;
  std::filesystem::path model_config;  ///< Hugging Face config.json
  model::WeightFormat weight_format = model::WeightFormat::kBf16;
  model::KvFormat kv_format = model::KvFormat::kBf16;
  WorkloadSpec workload;
  sim::Slo slo;                ///< p99 TTFT and p99 TPOT bounds, seconds
  sim::ServingConfig serving;  ///< num_kv_blocks is filled per instance by the planner
  sim::RouterKind router = sim::RouterKind::kLeastOutstanding;
  /// Instance ids to try; empty means every instance type in the catalog.
  std::vector<std::string> candidates;
  uint64_t seed = 1;
  double hours_per_year = 8760;  ///< hours in service per year, for the annual cost
  int64_t max_instances = 256;   ///< largest fleet the search tries per instance type
};

/// Reads a scenario JSON file (format: docs/scenarios.md). Throws InputError naming the file,
/// field and value for a missing file, malformed JSON, a missing, mistyped or out-of-range
/// field, and an unknown name (weight format, router, workload kind: lists the known ones).
Scenario load_scenario(const std::filesystem::path& path);

/// Builds the simulator's workload from the spec. Throws sim::InputError for a bad trace.
sim::Workload load_workload(const WorkloadSpec& spec, uint64_t seed);

}  // namespace llmcap::plan
