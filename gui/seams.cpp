#include "gui/seams.h"

#include <optional>
#include <stdexcept>
#include <utility>

#include "app/plan_output.h"
#include "app/run_store.h"
#include "base/json_reader.h"
#include "report/report.h"
#include "store/results_store.h"

namespace llmcap::gui {

std::filesystem::path database_path() { return store::default_db_path(""); }

int64_t store_plan_document(const nlohmann::json& document, const std::string& scenario_text,
                            const std::string& name, const std::string& command_line) {
  store::RunRecord record;
  record.kind = "plan";
  record.name = name;
  record.command_line = command_line;
  record.input_json = scenario_text;
  record.document_json = document.dump();
  record.summary = app::summarize_plan_document(document);
  store::ResultsStore db = store::ResultsStore::open(database_path());
  return db.add_run(record);
}

std::vector<StoredRun> list_stored_runs(const std::string& kind, int64_t limit) {
  const std::filesystem::path path = database_path();
  std::vector<StoredRun> out;
  if (!std::filesystem::exists(path)) return out;  // no database yet: no runs (none created)
  store::ResultsStore db = store::ResultsStore::open(path);
  for (const store::RunRecord& r : db.list_runs(kind, limit)) {
    out.push_back({r.id, r.kind, r.name, r.created_utc, r.summary});
  }
  return out;
}

nlohmann::json load_run_document(int64_t id) {
  store::ResultsStore db = store::ResultsStore::open(database_path());
  const store::RunRecord r = db.get_run(id);
  if (r.kind != "plan" && r.kind != "sweep_point") {
    throw std::runtime_error(database_path().string() + ": run " + std::to_string(id) + " is a " +
                             r.kind + " run; only plan runs (plan, sweep_point) open in the table");
  }
  const std::string name = database_path().string() + ": run " + std::to_string(id);
  std::string error;
  std::optional<nlohmann::json> doc = base::try_parse_json(r.document_json, name, &error);
  if (!doc) throw std::runtime_error(name + ": stored document is not JSON: " + error);
  return std::move(*doc);
}

std::string render_report(const nlohmann::json& document, const std::string& format_name) {
  return report::render(document, report::parse_format(format_name));
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  app::write_file_atomically(path, bytes);
}

}  // namespace llmcap::gui
