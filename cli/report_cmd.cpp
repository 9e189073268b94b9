#include "cli/report_cmd.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "app/output_files.h"
#include "app/plan_output.h"
#include "app/plan_run.h"
#include "base/error.h"
#include "base/json_reader.h"
#include "cli/cli.h"
#include "report/report.h"
#include "store/results_store.h"

namespace llmcap::cli {
namespace {

static_assert(report::kSupportedSchemaVersion == app::kRunDocumentVersion,
              "report/ must read the run documents app/plan_run.h writes");

/// A bad input of the report command: its message is printed as one line, exit code 2.
class ReportInputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// "latest" -> 0 (ResultsStore::get_run's latest), else a positive integer.
int64_t parse_run_id(const std::string& run) {
  if (run == "latest") return 0;
  bool digits = !run.empty() && run.size() <= 18;
  for (char c : run) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  if (!digits || std::stoll(run) <= 0) {
    throw ReportInputError("run \"" + run +
                           "\": expected a run id (a positive integer, see llmcap runs list) "
                           "or \"latest\"");
  }
  return std::stoll(run);
}

/// The document and a name for it in messages.
std::pair<nlohmann::json, std::string> load_document(const ReportArgs& a) {
  if (!a.document.empty()) {
    std::ifstream in(a.document, std::ios::binary);
    if (!in) throw ReportInputError(a.document + ": cannot open the run document");
    std::stringstream text;
    text << in.rdbuf();
    std::string error;
    std::optional<nlohmann::json> doc = base::try_parse_json(text.str(), a.document, &error);
    if (!doc) {
      throw ReportInputError(a.document + ": not JSON (" + error +
                             "), expected a run document (docs/run-document.md)");
    }
    return {std::move(*doc), a.document};
  }
  const int64_t id = parse_run_id(a.run);
  const std::filesystem::path db = store::default_db_path(a.db);
  store::RunRecord record;
  try {
    const store::ResultsStore store = store::ResultsStore::open(db);
    int64_t wanted = id;
    if (wanted == 0) {
      // "latest": the newest run a report can be made of (a plan or a sweep point), not a
      // calibration or validation stored after it.
      for (const char* kind : {"plan", "sweep_point"}) {
        const std::vector<store::RunRecord> newest = store.list_runs(kind, 1);
        if (!newest.empty()) wanted = std::max(wanted, newest.front().id);
      }
      if (wanted == 0) {
        throw ReportInputError("run latest: no plan run in " + db.string() +
                               " (reports are made of plan runs; run llmcap plan first)");
      }
    }
    record = store.get_run(wanted);
  } catch (const store::StoreError& e) {
    throw ReportInputError(std::string("run ") + a.run + ": " + e.what());
  }
  const std::string name = "run " + std::to_string(record.id) + " in " + db.string();
  if (record.kind != "plan" && record.kind != "sweep_point") {
    throw ReportInputError(name + " is a " + record.kind +
                           " run; reports are made of plan runs (kinds plan and sweep_point: "
                           "llmcap runs list --kind plan)");
  }
  std::string error;
  std::optional<nlohmann::json> doc = base::try_parse_json(record.document_json, name, &error);
  if (!doc) throw ReportInputError(name + ": the stored run document is not JSON (" + error + ")");
  return {std::move(*doc), name};
}

int report(const ReportArgs& a, std::ostream& out) {
  if (a.run.empty() == a.document.empty()) {
    throw ReportInputError(a.run.empty()
                               ? "report: give a RUN (a run id or \"latest\") or --document FILE"
                               : "report: give either a RUN or --document FILE, not both");
  }
  // The format first, so that a bad --format or --out fails before any work.
  report::Format format;
  try {
    format =
        a.format.empty() ? report::format_from_extension(a.out) : report::parse_format(a.format);
  } catch (const report::ReportError& e) {
    throw ReportInputError(std::string("--out ") + a.out + ": " + e.what());
  }
  try {
    app::check_output_paths(
        {{"--out", a.out}},
        {{"--document", a.document},
         {"--db", a.document.empty() ? store::default_db_path(a.db).string() : ""}});
  } catch (const base::InputError& e) {
    throw ReportInputError(e.what());
  }
  auto [document, name] = load_document(a);
  std::string bytes;
  try {
    bytes = report::render(document, format);
  } catch (const report::ReportError& e) {
    throw ReportInputError(name + ": " + e.what());
  }
  try {
    app::write_file_atomically(a.out, bytes);
  } catch (const std::exception& e) {
    throw ReportInputError(std::string("--out ") + a.out + ": cannot write the report (" +
                           e.what() + ")");
  }
  out << "Wrote " << a.out << " (" << report::format_name(format) << ", " << bytes.size()
      << " bytes) from " << name << "\n";
  return kExitOk;
}

}  // namespace

CLI::App* add_report_command(CLI::App& app, ReportArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "report",
      "Render a stored run (or a run document file) as a report: PDF, HTML, Markdown, CSV, "
      "JSON or XLSX (docs/reports.md)");
  cmd->add_option("RUN", args.run, "Run id in the results database, or \"latest\"")
      ->option_text("RUN");
  cmd->add_option("--document", args.document,
                  "Render this run document JSON file instead of a stored run")
      ->option_text("FILE");
  cmd->add_option("--format", args.format,
                  "pdf, html, md, csv, json or xlsx (default: from --out's extension)")
      ->option_text("FORMAT");
  cmd->add_option("--out", args.out, "The report file (written to a temporary file, renamed)")
      ->option_text("FILE")
      ->required();
  cmd->add_option("--db", args.db,
                  "Results database (default $LLMCAP_DB, else ~/.local/share/llmcap/runs.sqlite)")
      ->option_text("FILE");
  cmd->add_option("--data-dir", args.data_dir, "Data folder (not needed by the report)")
      ->option_text("DIR");
  return cmd;
}

int run_report_command(const ReportArgs& args, const std::string&, std::ostream& out,
                       std::ostream& err) {
  try {
    return report(args, out);
  } catch (const ReportInputError& e) {
    err << "llmcap: error: " << e.what() << "\n";
    return kExitBadInput;
  }
}

}  // namespace llmcap::cli
