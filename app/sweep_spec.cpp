#include "app/sweep_spec.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "base/error.h"
#include "base/json_reader.h"
#include "model/calibration.h"
#include "model/input_error.h"
#include "plan/scenario.h"
#include "sim/input_error.h"

namespace llmcap::app {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

constexpr int64_t kMaxPoints = 100000;  // a grid larger than this is almost surely a mistake

std::string in_quotes(const std::string& text) { return "\"" + text + "\""; }

std::string read_text_or_throw(const std::filesystem::path& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw plan::InputError(what + ": cannot open " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// 64-bit FNV-1a (Fowler, Noll, Vo): a stable hash, the same on every platform and build.
uint64_t fnv1a(const std::string& text) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex16(uint64_t v) {
  std::ostringstream s;
  s << std::hex << std::setw(16) << std::setfill('0') << v;
  return s.str();
}

/// A value as shown in tables and labels: strings without quotes, the rest as compact JSON.
std::string shown(const ordered_json& value) {
  return value.is_string() ? value.get<std::string>() : value.dump();
}

/// Sets the dotted `field` of `doc` to `value`, creating missing objects on the way. Throws
/// InputError naming the sweep file and the grid field when the path crosses a non-object.
void set_field(ordered_json& doc, const std::string& field, const ordered_json& value,
               const std::string& file) {
  const std::string grid_field = "grid." + field;
  std::vector<std::string> parts;
  std::string part;
  std::istringstream in(field);
  while (std::getline(in, part, '.')) parts.push_back(part);
  if (parts.empty() || field.back() == '.' ||
      std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); })) {
    throw base::InputError::bad_field(
        file, grid_field, in_quotes(field),
        "a dotted scenario field like " + in_quotes("slo.tpot_p99_s"));
  }
  ordered_json* node = &doc;
  std::string walked;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& p = parts[i];
    const bool last = i + 1 == parts.size();
    if (node->is_array()) {
      const bool digits =
          std::all_of(p.begin(), p.end(), [](char c) { return c >= '0' && c <= '9'; });
      if (!digits || p.size() > 9 || std::stoul(p) >= node->size()) {
        throw base::InputError::refused_field(
            file, grid_field,
            in_quotes(walked) + " is a list of " + std::to_string(node->size()) +
                " entries, expected an index below " + std::to_string(node->size()) + ", got " +
                in_quotes(p));
      }
      node = &(*node)[std::stoul(p)];
    } else if (node->is_object()) {
      if (last) {
        (*node)[p] = value;
        return;
      }
      if (!node->contains(p)) (*node)[p] = ordered_json::object();
      node = &(*node)[p];
    } else {
      throw base::InputError::refused_field(
          file, grid_field,
          "the scenario's " + in_quotes(walked) + " is " + node->dump() +
              ", not an object or list, so it has no field " + in_quotes(p));
    }
    walked += (walked.empty() ? "" : ".") + p;
    if (last) *node = value;
  }
}

/// Checks one grid field of the sweep file (read by `grid`) and its values against the base
/// scenario `base` (read from `scenario_path`): a non-empty list of distinct values, a field the
/// scenario reader reads (probed with a value of the wrong type), each value accepted on its own.
/// Throws base::InputError naming the file, "grid.<field>", the value and what was expected.
void check_grid_field(const base::OrderedJsonReader& grid, const std::string& field,
                      const ordered_json& base_scenario, const std::filesystem::path& scenario_path,
                      const std::filesystem::path& data_dir) {
  const std::string& file = grid.file();
  const std::string grid_field = grid.name(field);
  const ordered_json& values = grid.non_empty_array(field, "a non-empty list of values");
  for (size_t i = 0; i < values.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      if (values[i] == values[j]) {
        throw base::InputError::refused_field(
            file, grid_field,
            "value " + values[i].dump() + " appears twice; expected distinct values");
      }
    }
  }
  // A field the scenario reader does not read would be ignored silently: probe it with a
  // value no field accepts (a list holding a list); a field that is read refuses it.
  ordered_json probe = base_scenario;
  set_field(probe, field, ordered_json::array({ordered_json::array()}), file);
  bool read = false;
  try {
    plan::load_scenario_text(probe.dump(), scenario_path, data_dir);
  } catch (const base::InputError& e) {
    // The reader refuses unknown fields (InputError::unknown_field names the field, or the
    // first unknown object on its path): those are not read.
    const std::string& path = e.field_path();
    const bool unknown = std::string(e.what()) ==
                             base::InputError::unknown_field(e.file(), path, e.expected()).what() &&
                         (field == path || field.rfind(path + ".", 0) == 0);
    read = !unknown;
  } catch (const std::exception&) {
    read = true;
  }
  if (!read) {
    throw base::InputError::refused_field(
        file, grid_field,
        "the scenario " + scenario_path.string() + " does not read " + in_quotes(field) +
            " (unknown field, or one its workload kind ignores); expected a scenario field "
            "(docs/scenarios.md)");
  }
  for (const ordered_json& value : values) {
    ordered_json one = base_scenario;
    set_field(one, field, value, file);
    try {
      plan::load_scenario_text(one.dump(), scenario_path, data_dir);
    } catch (const plan::InputError& e) {
      throw base::InputError::refused_field(
          file, grid_field,
          "value " + value.dump() + " refused by the scenario reader: " + e.what());
    }
  }
}

/// Adds the files `scenario` reads (model config, traces) to spec.input_files, each once,
/// named `model` or `workload.path` of the scenario (`point <label>: ...` for a point's).
void add_input_files(SweepSpec& spec, const std::string& point_label,
                     const plan::Scenario& scenario) {
  const std::string prefix = point_label.empty() ? "scenario " : "point " + point_label + ": ";
  auto add = [&](const std::string& field, const std::filesystem::path& path) {
    if (path.empty()) return;
    for (const NamedPath& known : spec.input_files) {
      if (known.path == path.string()) return;
    }
    spec.input_files.push_back({prefix + field, path.string()});
  };
  add("model", scenario.model_config);
  add("workload.path", scenario.workload.path);
  for (const plan::ClientClassSpec& c : scenario.workload.classes) {
    add("class \"" + c.name + "\" workload.path", c.workload.path);
  }
}

}  // namespace

SweepSpec load_sweep(const std::filesystem::path& path, const std::filesystem::path& data_dir) {
  const std::string file = path.string();
  std::ifstream in(path, std::ios::binary);
  if (!in) throw plan::InputError(file + ": cannot open the sweep file");
  std::ostringstream text;
  text << in.rdbuf();
  const ordered_json doc = base::parse_ordered_json_text(text.str(), file);
  if (!doc.is_object()) {
    throw base::InputError::bad_document(file, "a JSON object at the top level");
  }
  const base::OrderedJsonReader top(doc, file, "");
  top.refuse_unknown({"name", "scenario", "grid", "analysis", "profile"},
                     "unknown field; expected one of ");
  for (const char* required : {"scenario", "grid"}) {
    if (!top.has(required)) top.fail_refused(required, "missing (required)");
  }

  SweepSpec spec;
  spec.file = path;
  spec.data_dir = data_dir;
  spec.name = top.non_empty_string_or("name", path.stem().string());
  const std::filesystem::path folder = path.parent_path();
  spec.scenario_path = (folder / top.string("scenario", "a scenario file path")).lexically_normal();
  spec.analysis = top.boolean_or("analysis", false);
  std::string profile_text;
  if (top.has("profile")) {
    spec.profile_path = (folder / top.string("profile", "a profile file path")).lexically_normal();
    profile_text = read_text_or_throw(spec.profile_path, file + ": field \"profile\"");
    model::read_profile_json(spec.profile_path);  // checks it (model::InputError)
  }

  // The base scenario: read and checked as it is.
  const std::string base_text =
      read_text_or_throw(spec.scenario_path, file + ": field \"scenario\"");
  spec.input_files = {{"sweep", spec.file.string()},
                      {"field \"scenario\" of " + file, spec.scenario_path.string()},
                      {"field \"profile\" of " + file, spec.profile_path.string()}};
  add_input_files(spec, "", plan::load_scenario_text(base_text, spec.scenario_path, data_dir));
  const ordered_json base = base::parse_ordered_json_text(base_text, spec.scenario_path.string());
  spec.sweep_id =
      spec.name + "-" +
      hex16(fnv1a(base::parse_json_text(base_text, spec.scenario_path.string()).dump() +
                  "\nanalysis=" + (spec.analysis ? "1" : "0") + "\nprofile=" + profile_text));

  const base::OrderedJsonReader grid_fields = top.object("grid", "an object of field: [values]");
  const ordered_json& grid = grid_fields.raw();
  if (grid.empty()) {
    throw base::InputError::bad_field(file, "grid", "{}", "at least one field with values");
  }
  int64_t num_points = 1;
  for (const auto& [field, values] : grid.items()) {
    check_grid_field(grid_fields, field, base, spec.scenario_path, data_dir);
    spec.fields.push_back(field);
    num_points *= static_cast<int64_t>(values.size());
    if (num_points > kMaxPoints) {
      top.fail_refused("grid", std::to_string(num_points) + "+ points, expected at most " +
                                   std::to_string(kMaxPoints));
    }
  }

  // The cartesian product, the last field varying fastest.
  std::vector<size_t> at(spec.fields.size(), 0);
  for (int64_t n = 0; n < num_points; ++n) {
    SweepPoint point;
    ordered_json scenario = base;
    json key = json::object();
    for (size_t f = 0; f < spec.fields.size(); ++f) {
      const ordered_json& value = grid.at(spec.fields[f])[at[f]];
      set_field(scenario, spec.fields[f], value, file);
      key[spec.fields[f]] = base::parse_json_text(value.dump(), file);
      point.values.emplace_back(spec.fields[f], value.dump());
      point.label += (f == 0 ? "" : " ") + spec.fields[f] + "=" + shown(value);
    }
    point.key = key.dump();
    point.scenario_json = scenario.dump(2);
    try {
      add_input_files(spec, point.label,
                      plan::load_scenario_text(point.scenario_json, spec.scenario_path, data_dir));
    } catch (const plan::InputError& e) {
      throw plan::InputError(file + ": point " + point.label +
                             ": refused by the scenario reader: " + e.what());
    }
    spec.points.push_back(std::move(point));
    for (size_t f = spec.fields.size(); f-- > 0;) {
      if (++at[f] < grid.at(spec.fields[f]).size()) break;
      at[f] = 0;
    }
  }
  return spec;
}

}  // namespace llmcap::app
