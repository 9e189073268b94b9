// The results database: every plan, sweep point, simulation and calibration run, in SQLite
// (issue 5, item 6; docs/results-store.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
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

/// Schema version this build reads and writes (the `schema_version` table). A database of
/// another version is refused (StoreError naming the file and both versions).
inline constexpr int kSchemaVersion = 1;

/// The results database (SQLite, WAL journal, schema versioned, every write one transaction).
/// Several processes may read and write one file at once: writes take the write lock with
/// BEGIN IMMEDIATE and wait up to 30 s for another writer (SQLite busy timeout). A process
/// killed mid-write leaves every committed run complete and no part of the interrupted one
/// (SQLite's write-ahead log; tests/store/results_store_test.cpp kills a writer to check).
/// One object is one connection: use it from one thread at a time.
class ResultsStore {
 public:
  /// Opens the database at `path`, creating it (and its folder) when missing. Throws
  /// StoreError naming the file when it cannot be created or opened, is not an SQLite
  /// database (or is corrupt), is an SQLite database of something else (no schema_version
  /// table), or has another schema version than kSchemaVersion.
  static ResultsStore open(const std::filesystem::path& path);
  ~ResultsStore();
  ResultsStore(ResultsStore&&) noexcept;
  ResultsStore& operator=(ResultsStore&&) noexcept;

  /// Adds a run in one transaction; returns its id (record.id and created_utc are ignored).
  /// A sweep point (non-empty sweep_id) already stored under the same sweep_id and point_key
  /// is not stored again: the stored run's id is returned, so that ranks or processes racing
  /// on one point leave one run. Throws StoreError when the write fails.
  int64_t add_run(const RunRecord& record);
  /// The run `id`, or the latest run when id is 0. Throws StoreError when absent.
  RunRecord get_run(int64_t id) const;
  /// Runs, newest first; kind "" means all kinds; limit 0 means no limit. document_json and
  /// input_json are left empty in listings.
  std::vector<RunRecord> list_runs(const std::string& kind = "", int64_t limit = 0) const;
  /// The points stored for the sweep `sweep_id`: point_key -> run id.
  std::map<std::string, int64_t> sweep_points(const std::string& sweep_id) const;
  /// SQLite's `PRAGMA integrity_check`: "ok", or its findings one per line.
  std::string integrity_check() const;
  /// The database file.
  const std::filesystem::path& path() const;

 private:
  struct Impl;
  explicit ResultsStore(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

/// The database path: `flag` when non-empty, else $LLMCAP_DB when set and non-empty, else
/// $XDG_DATA_HOME/llmcap/runs.sqlite (XDG_DATA_HOME defaulting to ~/.local/share).
std::filesystem::path default_db_path(const std::string& flag);

}  // namespace llmcap::store
