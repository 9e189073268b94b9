// A sweep file (docs/sweep.md): a base scenario and a grid of overrides, read and checked into
// its points.
#pragma once

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "app/output_files.h"

namespace llmcap::app {

/// One point of a sweep: the base scenario with one value per grid field.
struct SweepPoint {
  /// Canonical key: the overrides as compact JSON with sorted field names, e.g.
  /// `{"slo.tpot_p99_s":0.03,"workload.rate_multiplier":2}` (values as written in the grid).
  std::string key;
  std::string label;  ///< "workload.rate_multiplier=2 slo.tpot_p99_s=0.03", grid order
  std::vector<std::pair<std::string, std::string>> values;  ///< field, value as JSON text
  std::string scenario_json;  ///< the base scenario with the overrides applied (JSON text)
};

/// A sweep file, read and checked (docs/sweep.md).
struct SweepSpec {
  std::filesystem::path file;           ///< the sweep file
  std::string name;                     ///< "name", default the file's stem
  std::filesystem::path scenario_path;  ///< "scenario", resolved against the sweep's folder
  /// The data folder the scenario's model and workload ids are looked up in (load_sweep's).
  std::filesystem::path data_dir;
  std::filesystem::path profile_path;  ///< "profile" (resolved), empty when absent
  bool analysis = false;               ///< "analysis": run the plan analyses per point
  /// Stable id: name + "-" + 16 hex digits of a hash of the base scenario (parsed, canonical),
  /// the analysis flag and the profile's text. The grid is not part of it, so a sweep whose
  /// grid grows keeps the points it has.
  std::string sweep_id;
  std::vector<std::string> fields;  ///< grid fields in file order
  std::vector<SweepPoint> points;   ///< cartesian product, the last field varying fastest
  /// Every file the sweep reads: the sweep file, its scenario and profile, and each point's
  /// model config and traces (distinct paths), named as messages name them ("scenario",
  /// `point workload.path=...: workload.path`). An output path must be none of them.
  std::vector<NamedPath> input_files;
};

/// Reads and checks a sweep file: every grid field is a dotted path the scenario reader reads
/// (probed with a value of the wrong type), every value is accepted by the scenario reader on
/// its own, every point loads. Throws plan::InputError naming the file, the field, the value
/// and what was expected (or the scenario reader's own message). The scenario's ids are looked
/// up in `data_dir` (plan::load_scenario; empty: paths only).
SweepSpec load_sweep(const std::filesystem::path& file, const std::filesystem::path& data_dir = {});

}  // namespace llmcap::app
