// Run storage and summaries (docs/results-store.md): what the front ends share to store a run
// (plan, sweep point, calibration, validation, and the documents of other commands) in the
// results database (store/results_store.h) and to summarise it in one line for listings.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>

#include "base/json_reader.h"
#include "store/results_store.h"

namespace llmcap::app {

/// The results database `db_flag` names, else store::default_db_path's. Throws what
/// store::ResultsStore::open throws (store::StoreError).
store::ResultsStore open_results_store(const std::string& db_flag);

// Lenient reads of a stored run's JSON (its input or document, a row of its "results"), for
// summaries and the runs listing: absent or mistyped values give the fallback. Defined once in
// base/json_reader.h.

/// `text` parsed, or null when it is empty or not JSON.
inline nlohmann::json parse_or_null(const std::string& text) {
  return base::parse_json_or_null(text);
}
using base::number_or;
using base::string_or;
/// row["feasible"], false when absent.
bool feasible(const nlohmann::json& row);

/// One line for listings from a run document (docs/run-document.md): the cheapest feasible
/// CPU and GPU fleets, e.g. "cheapest CPU: 4 x aws-m7i.8xlarge, 6.45 USD/h; cheapest GPU: 2 x
/// aws-g6e.xlarge, 3.72 USD/h", or "no feasible fleet among N instance types".
std::string summarize_plan_document(const nlohmann::json& document);

/// Stores `record` in the database `db_flag` resolves to (store::default_db_path) and prints
/// "Stored as run N in FILE" to `err`; nothing when `no_store`. A database error is printed
/// to `err` as a warning ("llmcap: warning: run not stored: ...") and yields nullopt: storing
/// never fails the command that produced the run.
std::optional<int64_t> store_run(const store::RunRecord& record, const std::string& db_flag,
                                 bool no_store, std::ostream& err);

/// Stores a finished plan run (kind "plan") in the results database `db_flag` resolves to
/// (store::default_db_path) and prints "Stored as run N in FILE" to `err`; does nothing when
/// `no_store`. The run document is PlanRun::document, the input `scenario_text` (the scenario as
/// planned: the file with any --set overrides). A database error is reported on `err` as a warning
/// and does not fail the plan.
struct PlanRun;
void store_plan_run(const PlanRun& run, const std::string& scenario_text,
                    const std::string& scenario_name, const std::string& db_flag, bool no_store,
                    const std::string& command_line, std::ostream& err);

/// Stores a calibration profile (kind "calibration"; the document is the profile's JSON,
/// model::profile_to_json, the name the CPU model) like store_plan_run.
void store_calibration_run(const std::string& profile_json, const std::string& cpu_model,
                           const std::string& db_flag, bool no_store,
                           const std::string& command_line, std::ostream& err);

/// Stores a run of `kind` whose document is the JSON its command writes with --json
/// (`document_json`), its input `input_json`, its listing line `summary`, like store_plan_run.
void store_document_run(const char* kind, std::string name, std::string summary,
                        const std::string& document_json, const std::string& input_json,
                        const std::string& db_flag, bool no_store, const std::string& command_line,
                        std::ostream& err);

struct ValidationResult;

/// Stores a `llmcap validate` run (kind "validate") like store_plan_run: name the model ids
/// (in grid order, ", "-separated), the document `document_json` (validation_to_json(result):
/// what --json writes), the input `input_json` (the grid and the profile), the summary
/// summarize_validation(result).
void store_validate_run(const ValidationResult& result, const std::string& document_json,
                        const std::string& input_json, const std::string& db_flag, bool no_store,
                        const std::string& command_line, std::ostream& err);

/// One line for listings: "|predicted / measured - 1| over 8 points: median 12.3%, p95 25.0%".
std::string summarize_validation(const ValidationResult& result);

}  // namespace llmcap::app
