// The results database: every plan, sweep point, simulation and calibration run, in SQLite
// (issue 5, item 6; docs/results-store.md). Helper C owns this.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmcap::store {

/// A database that cannot be opened, is corrupt, has another schema version, or a run that
/// does not exist. The message names the file and what was expected.
class StoreError : public std::runtime_error {
 public:
  explicit StoreError(const std::string& message) : std::runtime_error(message) {}
};

/// One stored run.
struct RunRecord {
  int64_t id = 0;             ///< assigned by add_run, increasing
  std::string kind;           ///< "plan", "sweep_point", "calibration", "audit", ...
  std::string name;           ///< e.g. the scenario's name
  std::string created_utc;    ///< ISO 8601, set by add_run (metadata, not on the sim path)
  std::string command_line;   ///< how it was produced
  std::string input_json;     ///< the scenario (or other input) as read, JSON text
  std::string document_json;  ///< the run document (docs/run-document.md), JSON text
  std::string summary;        ///< one line for listings
  std::string sweep_id;       ///< sweeps: the sweep's id; "" otherwise
  std::string point_key;      ///< sweeps: the point's key within the sweep; "" otherwise
};

/// The results database (SQLite, WAL journal, schema versioned, every write one transaction).
class ResultsStore {
 public:
  /// Opens or creates the database at `path`. Throws StoreError.
  static ResultsStore open(const std::filesystem::path& path);
  ~ResultsStore();
  ResultsStore(ResultsStore&&) noexcept;
  ResultsStore& operator=(ResultsStore&&) noexcept;

  /// Adds a run in one transaction; returns its id (record.id and created_utc are ignored).
  int64_t add_run(const RunRecord& record);
  /// The run `id`, or the latest run when id is 0. Throws StoreError when absent.
  RunRecord get_run(int64_t id) const;
  /// Runs, newest first; kind "" means all kinds; limit 0 means no limit. document_json and
  /// input_json are left empty in listings.
  std::vector<RunRecord> list_runs(const std::string& kind = "", int64_t limit = 0) const;

 private:
  struct Impl;
  explicit ResultsStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The database path: `flag` when non-empty, else $LLMCAP_DB when set and non-empty, else
/// $XDG_DATA_HOME/llmcap/runs.sqlite (XDG_DATA_HOME defaulting to ~/.local/share).
std::filesystem::path default_db_path(const std::string& flag);

}  // namespace llmcap::store
