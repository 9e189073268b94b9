// The GUI's doors to the results database (store/) and the reports (report/), kept in one
// file so that the rest of the GUI does not include them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace llmcap::gui {

/// The database the GUI uses: store::default_db_path("") ($LLMCAP_DB, else
/// $XDG_DATA_HOME/llmcap/runs.sqlite).
std::filesystem::path database_path();

/// One stored run, for listings.
struct StoredRun {
  int64_t id = 0;
  std::string kind;
  std::string name;
  std::string created_utc;
  std::string summary;
};

/// Stores a plan run document (kind "plan") with its scenario text; returns its id. Throws
/// store::StoreError (a std::runtime_error) naming the database.
int64_t store_plan_document(const nlohmann::json& document, const std::string& scenario_text,
                            const std::string& name, const std::string& command_line);
/// Runs, newest first (kind "" = all; limit 0 = all). Throws store::StoreError.
std::vector<StoredRun> list_stored_runs(const std::string& kind, int64_t limit);
/// The run document of run `id`. Throws store::StoreError (unknown id, unreadable database) or
/// std::runtime_error when the run is not a plan run (kinds plan, sweep_point) or its stored
/// document is not JSON.
nlohmann::json load_run_document(int64_t id);

/// The report of `document` in `format_name` ("pdf", "html", "csv", "md", "json", "xlsx") as
/// bytes (report::render). Throws report::ReportError (a std::runtime_error).
std::string render_report(const nlohmann::json& document, const std::string& format_name);

/// Writes `bytes` to `path` through a temporary file renamed into place
/// (app::write_file_atomically). Throws std::runtime_error naming the path.
void write_file(const std::filesystem::path& path, const std::string& bytes);

}  // namespace llmcap::gui
