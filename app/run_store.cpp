#include "app/run_store.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <utility>
#include <vector>

#include "app/plan_run.h"
#include "app/validation.h"
#include "base/text.h"

namespace llmcap::app {
namespace {

using nlohmann::json;

using base::fixed;

}  // namespace

store::ResultsStore open_results_store(const std::string& db_flag) {
  return store::ResultsStore::open(store::default_db_path(db_flag));
}

std::string summarize_plan_document(const json& document) {
  if (!document.is_object() || !document.contains("results") || !document["results"].is_array()) {
    return "no plan results";
  }
  const json& rows = document["results"];
  std::string parts;
  for (const std::string kind : {"cpu", "gpu"}) {
    const json* best = nullptr;
    bool any = false;
    for (const json& row : rows) {
      if (string_or(row, "device_kind") != kind) continue;
      any = true;
      if (!feasible(row)) continue;
      if (best == nullptr ||
          number_or(row, "usd_per_hour", 0) < number_or(*best, "usd_per_hour", 0)) {
        best = &row;
      }
    }
    if (!any) continue;
    std::string upper = kind;
    std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
    parts += (parts.empty() ? "" : "; ") + std::string("cheapest ") + upper + ": ";
    parts += best == nullptr ? "none feasible"
                             : base::sized_fleet(best->value("num_instances", int64_t{0}),
                                                 string_or(*best, "instance_type")) +
                                   ", " + fixed(number_or(*best, "usd_per_hour", 0), 2) + " USD/h";
  }
  if (parts.empty() || parts.find(" x ") == std::string::npos) {
    return "no feasible fleet among " + std::to_string(rows.size()) + " instance type" +
           (rows.size() == 1 ? "" : "s");
  }
  return parts;
}

std::optional<int64_t> store_run(const store::RunRecord& record, const std::string& db_flag,
                                 bool no_store, std::ostream& err) {
  if (no_store) return std::nullopt;
  try {
    store::ResultsStore db = open_results_store(db_flag);
    const int64_t id = db.add_run(record);
    err << "Stored as run " << id << " in " << db.path().string() << "\n";
    return id;
  } catch (const std::exception& e) {
    err << "llmcap: warning: run not stored: " << e.what() << "\n";
    return std::nullopt;
  }
}

void store_plan_run(const PlanRun& run, const std::string& scenario_text,
                    const std::string& scenario_name, const std::string& db_flag, bool no_store,
                    const std::string& command_line, std::ostream& err) {
  if (no_store) return;
  store::RunRecord record;
  record.kind = "plan";
  record.name = scenario_name;
  record.command_line = command_line;
  record.input_json = scenario_text;
  record.document_json = run.document.dump();
  record.summary = summarize_plan_document(run.document);
  store_run(record, db_flag, no_store, err);
}

void store_calibration_run(const std::string& profile_json, const std::string& cpu_model,
                           const std::string& db_flag, bool no_store,
                           const std::string& command_line, std::ostream& err) {
  if (no_store) return;
  store::RunRecord record;
  record.kind = "calibration";
  record.name = cpu_model;
  record.command_line = command_line;
  record.input_json = "";
  record.document_json = profile_json;
  std::string summary = cpu_model;
  const json profile = parse_or_null(profile_json);
  if (profile.is_object()) {
    if (profile.contains("machine") && profile["machine"].is_object()) {
      const double cores = number_or(profile["machine"], "num_cores", 0);
      if (cores > 0) summary += ", " + fixed(cores, 0) + " logical CPUs";
    }
    if (profile.contains("fit") && profile["fit"].is_object()) {
      const double median = number_or(profile["fit"], "median_rel_error", NAN);
      if (!std::isnan(median)) summary += ", fit median error " + fixed(100 * median, 1) + "%";
    }
  }
  record.summary = summary;
  store_run(record, db_flag, no_store, err);
}

std::string summarize_validation(const ValidationResult& result) {
  return "|predicted / measured - 1| over " + std::to_string(result.points.size()) + " point" +
         (result.points.size() == 1 ? "" : "s") + ": median " +
         fixed(100 * result.median_abs_error, 1) + "%, p95 " +
         fixed(100 * result.p95_abs_error, 1) + "% (median steps); median " +
         fixed(100 * result.min_median_abs_error, 1) + "%, p95 " +
         fixed(100 * result.min_p95_abs_error, 1) + "% (fastest steps)";
}

void store_document_run(const char* kind, std::string name, std::string summary,
                        const std::string& document_json, const std::string& input_json,
                        const std::string& db_flag, bool no_store, const std::string& command_line,
                        std::ostream& err) {
  if (no_store) return;
  store::RunRecord record;
  record.kind = kind;
  record.name = std::move(name);
  record.command_line = command_line;
  record.input_json = input_json;
  record.document_json = document_json;
  record.summary = std::move(summary);
  store_run(record, db_flag, no_store, err);
}

void store_validate_run(const ValidationResult& result, const std::string& document_json,
                        const std::string& input_json, const std::string& db_flag, bool no_store,
                        const std::string& command_line, std::ostream& err) {
  std::vector<std::string> models;
  for (const ValidationPoint& p : result.points) {
    if (std::find(models.begin(), models.end(), p.model) == models.end()) {
      models.push_back(p.model);
    }
  }
  std::string name;
  for (const std::string& m : models) name += (name.empty() ? "" : ", ") + m;
  store_document_run("validate", std::move(name), summarize_validation(result), document_json,
                     input_json, db_flag, no_store, command_line, err);
}

bool feasible(const json& row) { return row.value("feasible", false); }

}  // namespace llmcap::app
