#include "cli/sweep_cmd.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iomanip>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/sweep.h"
#include "base/json_reader.h"
#include "cli/cli.h"
#include "store/results_store.h"

namespace llmcap::cli {
namespace {

using nlohmann::json;

/// The cheapest feasible row of a run document, or nullptr.
const json* cheapest_row(const json& doc) {
  const json* best = nullptr;
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array()) return nullptr;
  for (const json& row : doc["results"]) {
    if (!row.is_object() || !row.value("feasible", false) || !row.contains("usd_per_hour") ||
        !row["usd_per_hour"].is_number()) {
      continue;
    }
    if (best == nullptr ||
        row["usd_per_hour"].get<double>() < (*best)["usd_per_hour"].get<double>()) {
      best = &row;
    }
  }
  return best;
}

/// The table of all the sweep's points (stored now or earlier), in grid order.
void print_points(const app::SweepSpec& spec, const store::ResultsStore& db, std::ostream& out) {
  const std::map<std::string, int64_t> stored = db.sweep_points(spec.sweep_id);
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> header = {"run"};
  for (const std::string& f : spec.fields) header.push_back(f);
  for (const char* h : {"cheapest", "count", "USD/hour", "feasible"}) header.push_back(h);
  rows.push_back(header);
  for (const app::SweepPoint& point : spec.points) {
    std::vector<std::string> row;
    const auto it = stored.find(point.key);
    row.push_back(it == stored.end() ? "-" : std::to_string(it->second));
    for (const auto& [field, value] : point.values) {
      const json v = base::parse_json_or_null(value);
      row.push_back(v.is_string() ? v.get<std::string>() : value);
    }
    if (it == stored.end()) {
      for (int i = 0; i < 3; ++i) row.push_back("-");
      row.push_back("not run");
    } else {
      // A stored document is read leniently: one that is not JSON, too deep or without
      // results reads as having no rows.
      const json doc = base::parse_json_or_null(db.get_run(it->second).document_json);
      const json* best = cheapest_row(doc);
      const json results = best != nullptr || (doc.is_object() && doc.contains("results") &&
                                               doc["results"].is_array())
                               ? doc["results"]
                               : json::array();
      int num_feasible = 0;
      for (const json& r : results) num_feasible += r.is_object() && r.value("feasible", false);
      std::ostringstream usd;
      if (best != nullptr)
        usd << std::fixed << std::setprecision(2) << (*best)["usd_per_hour"].get<double>();
      row.push_back(best ? base::string_or(*best, "instance_type") : "none feasible");
      row.push_back(
          best ? std::to_string(static_cast<int64_t>(base::number_or(*best, "num_instances", 0)))
               : "-");
      row.push_back(best ? usd.str() : "-");
      row.push_back(std::to_string(num_feasible) + "/" + std::to_string(results.size()));
    }
    rows.push_back(std::move(row));
  }
  std::vector<size_t> widths(header.size(), 0);
  for (const auto& row : rows) {
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      std::string cell = row[c];
      if (c + 1 < row.size()) cell.resize(widths[c], ' ');
      line += (c == 0 ? "" : "  ") + cell;
    }
    out << line << "\n";
  }
}

}  // namespace

CLI::App* add_sweep_command(CLI::App& app, SweepArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Plan every point of a grid of scenario overrides, each stored in the results database; "
      "resumes an interrupted sweep; parallel with --jobs or mpirun (docs/sweep.md)");
  cmd->footer(
      "Across machines: mpirun -n N llmcap sweep SWEEP.json [--db FILE] [--threads-per-point T]\n"
      "  rank 0 reads the stored points, hands out the others and writes every result to its\n"
      "  database; every rank must see the sweep, scenario and data files at the same paths.\n"
      "  (This llmcap was built " +
      std::string(app::built_with_mpi() ? "with" : "WITHOUT") + " MPI.)");
  cmd->add_option("sweep", args.sweep_file, "Sweep file (docs/sweep.md)")
      ->required()
      ->option_text("SWEEP.json");
  cmd->add_option("--db", args.db,
                  "Results database (default: $LLMCAP_DB, else $XDG_DATA_HOME/llmcap/runs.sqlite)")
      ->option_text("FILE");
  cmd->add_option("--jobs", args.jobs,
                  "Points planned at once on this machine (0: CPUs / --threads-per-point). Under "
                  "mpirun each rank plans one point at a time: set the ranks with -n")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--threads-per-point", args.threads_per_point,
                  "Planner threads of each point (results do not depend on it)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  cmd->add_option("--max-points", args.max_points,
                  "Plan at most N new points, then stop (rerun to continue; 0: all)")
      ->check(CLI::NonNegativeNumber)
      ->option_text("N");
  cmd->add_option("--max-requests", args.max_requests,
                  "The most requests each point's workload may have; a point above it fails "
                  "before any simulation, as plan --max-requests (default 2000000)")
      ->option_text("N")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000'000}));
  cmd->add_option("--data-dir", args.data_dir, "Folder with hardware/ and instances/ catalogs")
      ->option_text("DIR");
  cmd->add_flag("--quiet", args.quiet, "No progress lines on stderr");
  return cmd;
}

int run_sweep_command(const SweepArgs& args, const std::string& data_dir, std::ostream& out,
                      std::ostream& err) {
  app::SweepOptions options;
  options.sweep_file = args.sweep_file;
  options.data_dir = data_dir;
  options.db = args.db;
  options.jobs = args.jobs;
  options.threads_per_point = args.threads_per_point;
  options.max_points = args.max_points;
  options.max_requests = args.max_requests;
  options.quiet = args.quiet;
  options.command_line = "llmcap sweep " + args.sweep_file;
  const app::SweepRun run = app::run_sweep(options, err);
  if (run.role == app::SweepRun::Role::kWorkerStopped) return kExitBadInput;
  if (run.role == app::SweepRun::Role::kWorker) return kExitOk;
  const app::SweepSpec& spec = *run.spec;
  const store::ResultsStore& db = *run.db;
  print_points(spec, db, out);
  const size_t num_missing = spec.points.size() - db.sweep_points(spec.sweep_id).size();
  out << "\nSweep " << spec.sweep_id << ": " << run.num_done << " points planned now, "
      << run.num_stored_before << " stored before";
  if (num_missing > 0) out << ", " << num_missing << " still to run (rerun to continue)";
  out << "; runs in " << db.path().string() << " (llmcap runs list --kind sweep_point)\n";
  return kExitOk;
}

}  // namespace llmcap::cli
