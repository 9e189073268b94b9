#include "store/results_store.h"

#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <system_error>
#include <thread>
#include <utility>

#include "store/sqlite_statement.h"

namespace llmcap::store {
namespace {

constexpr int kBusyTimeoutMs = 30000;  // how long a writer waits for another one

/// How a results database's statements fail: StoreError naming the file (and, for a statement
/// that does not prepare, its SQL).
struct ResultsErrors {
  [[noreturn]] static void prepare_failed(sqlite3* db, const std::string& file,
                                          const std::string& sql) {
    throw StoreError(file + ": " + sqlite3_errmsg(db) + " (in: " + sql + ")");
  }
  [[noreturn]] static void step_failed(sqlite3* db, const std::string& file) {
    throw StoreError(file + ": " + sqlite3_errmsg(db));
  }
};

using Statement = detail::Statement<ResultsErrors>;

std::string utc_now_iso8601() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

constexpr const char* kCreateSchema = R"sql(
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE runs (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  name TEXT NOT NULL,
  created_utc TEXT NOT NULL,
  command_line TEXT NOT NULL,
  input_json TEXT NOT NULL,
  document_json TEXT NOT NULL,
  summary TEXT NOT NULL,
  sweep_id TEXT NOT NULL DEFAULT '',
  point_key TEXT NOT NULL DEFAULT ''
);
CREATE INDEX runs_by_kind ON runs (kind, id);
CREATE UNIQUE INDEX runs_by_sweep_point ON runs (sweep_id, point_key) WHERE sweep_id <> '';
)sql";

/// Refuses a database with tables that is not an llmcap results database of kSchemaVersion.
void check_schema(sqlite3* db, const std::string& file) {
  Statement has(db, file, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
  has.bind(1, std::string("schema_version"));
  if (!has.step()) {
    throw StoreError(file +
                     ": not an llmcap results database (it has tables but no schema_version "
                     "table); give another file with --db or $LLMCAP_DB");
  }
  Statement s(db, file, "SELECT MAX(version) FROM schema_version");
  s.step();
  const int64_t version = s.int64(0);
  if (version > kSchemaVersion) {
    throw StoreError(file + ": results database schema version " + std::to_string(version) +
                     " is newer than this llmcap reads (" + std::to_string(kSchemaVersion) +
                     "); use a newer llmcap or another database file");
  }
  if (version < kSchemaVersion) {
    throw StoreError(file + ": results database schema version " + std::to_string(version) +
                     " is older than this llmcap reads (" + std::to_string(kSchemaVersion) +
                     ") and cannot be migrated; use another database file");
  }
  Statement runs(db, file, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'");
  if (!runs.step()) {
    throw StoreError(file +
                     ": not an llmcap results database (it has a schema_version table but no "
                     "runs table: a calibration-profile database, calibrate --db?); give another "
                     "file with --db or $LLMCAP_DB");
  }
}

/// Checks an existing, non-empty file through a read-only connection before anything writes
/// to it: a file that is not SQLite, a database of something else and one of another schema
/// version are refused with the file's bytes untouched. A file with no tables passes (the
/// schema is created in it). Busy or locked (another writer) passes: the writing connection
/// checks again.
void check_read_only(const std::filesystem::path& path, const std::string& file) {
  std::error_code ec;
  if (!std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0 || ec) {
    return;
  }
  sqlite3* db = nullptr;
  const int rc = sqlite3_open_v2(file.c_str(), &db, SQLITE_OPEN_READONLY, nullptr);
  struct Closer {
    sqlite3* db;
    ~Closer() {
      if (db != nullptr) sqlite3_close_v2(db);
    }
  } closer{db};
  if (rc != SQLITE_OK) {
    const std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    throw StoreError(file + ": cannot open the results database: " + message);
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);
  try {
    Statement count(db, file, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'");
    count.step();
    if (count.int64(0) == 0) return;
    check_schema(db, file);
  } catch (const StoreError&) {
    const int code = sqlite3_errcode(db);
    if (code == SQLITE_NOTADB || code == SQLITE_CORRUPT) {
      throw StoreError(file + ": not a readable SQLite results database (" + sqlite3_errmsg(db) +
                       ")");
    }
    if (code == SQLITE_BUSY || code == SQLITE_LOCKED || code == SQLITE_CANTOPEN) return;
    throw;
  }
}

}  // namespace

struct ResultsStore::Impl {
  std::filesystem::path path;
  std::string file;  // path as text, for messages
  sqlite3* db = nullptr;

  ~Impl() {
    if (db != nullptr) sqlite3_close_v2(db);
  }

  /// Runs SQL without results; throws StoreError with `what` on failure.
  void exec(const std::string& sql, const std::string& what) {
    char* message = nullptr;
    if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message) != SQLITE_OK) {
      const std::string text = message != nullptr ? message : sqlite3_errmsg(db);
      sqlite3_free(message);
      throw StoreError(file + ": " + what + ": " + text);
    }
  }

  /// Runs `body` inside BEGIN IMMEDIATE ... COMMIT, rolling back when it throws.
  template <typename F>
  auto transaction(const std::string& what, F&& body) {
    exec("BEGIN IMMEDIATE", what);
    try {
      auto result = body();
      exec("COMMIT", what);
      return result;
    } catch (...) {
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      throw;
    }
  }

  int64_t num_tables() {
    Statement s(db, file, "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'");
    s.step();
    return s.int64(0);
  }

  /// Creates the schema in a new file, or checks the version of an existing one.
  void prepare_schema() {
    if (num_tables() == 0) {
      transaction("cannot create the results schema", [&] {
        // Another process may have created it while this one waited for the write lock.
        if (num_tables() == 0) {
          exec(kCreateSchema, "cannot create the results schema");
          exec("INSERT INTO schema_version (version) VALUES (" + std::to_string(kSchemaVersion) +
                   ")",
               "cannot create the results schema");
        }
        return 0;
      });
    }
    check_schema(db, file);
  }

  RunRecord read_listing_row(const Statement& s) const {
    RunRecord r;
    r.id = s.int64(0);
    r.kind = s.text(1);
    r.name = s.text(2);
    r.created_utc = s.text(3);
    r.command_line = s.text(4);
    r.summary = s.text(5);
    r.sweep_id = s.text(6);
    r.point_key = s.text(7);
    return r;
  }
};

ResultsStore::ResultsStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ResultsStore::~ResultsStore() = default;
ResultsStore::ResultsStore(ResultsStore&&) noexcept = default;
ResultsStore& ResultsStore::operator=(ResultsStore&&) noexcept = default;

ResultsStore ResultsStore::open(const std::filesystem::path& path) {
  auto impl = std::make_unique<Impl>();
  impl->path = path;
  impl->file = path.string();
  const std::string& file = impl->file;
  if (path.empty()) throw StoreError("results database: empty file name");
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw StoreError(file + ": is a folder, expected a results database file");
  }
  if (path.has_parent_path() && !std::filesystem::exists(path.parent_path(), ec)) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      throw StoreError(file + ": cannot create its folder " + path.parent_path().string() + ": " +
                       ec.message());
    }
  }
  check_read_only(path, file);
  const int rc =
      sqlite3_open_v2(file.c_str(), &impl->db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX, nullptr);
  if (rc != SQLITE_OK) {
    const std::string message = impl->db != nullptr ? sqlite3_errmsg(impl->db) : sqlite3_errstr(rc);
    throw StoreError(file + ": cannot open the results database: " + message);
  }
  sqlite3_busy_timeout(impl->db, kBusyTimeoutMs);
  // The first statement reads the header: a file that is not SQLite (or is damaged) fails here.
  // Switching a new file to WAL needs a lock that SQLite does not wait for through the busy
  // handler when several processes open the same new file at once: "database is locked" is
  // retried (every 10 ms, up to the busy timeout); any other error is the file's.
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(kBusyTimeoutMs);
  for (;;) {
    try {
      Statement mode(impl->db, file, "PRAGMA journal_mode = WAL");
      mode.step();
      break;
    } catch (const StoreError&) {
      const int code = sqlite3_errcode(impl->db);
      if ((code == SQLITE_BUSY || code == SQLITE_LOCKED) &&
          std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      throw StoreError(file + ": not a readable SQLite results database (" +
                       sqlite3_errmsg(impl->db) + ")");
    }
  }
  // WAL with synchronous FULL: a commit is on disk when add_run returns.
  impl->exec("PRAGMA synchronous = FULL", "cannot configure the database");
  try {
    impl->prepare_schema();
  } catch (const StoreError& e) {
    const std::string message = e.what();
    if (sqlite3_errcode(impl->db) == SQLITE_NOTADB || sqlite3_errcode(impl->db) == SQLITE_CORRUPT) {
      throw StoreError(file + ": not a readable SQLite results database (" +
                       sqlite3_errmsg(impl->db) + ")");
    }
    throw;
  }
  return ResultsStore(std::move(impl));
}

int64_t ResultsStore::add_run(const RunRecord& record) {
  Impl& m = *impl_;
  const std::string created = utc_now_iso8601();
  return m.transaction("cannot store the run", [&]() -> int64_t {
    if (!record.sweep_id.empty()) {
      Statement find(m.db, m.file, "SELECT id FROM runs WHERE sweep_id = ? AND point_key = ?");
      find.bind(1, record.sweep_id);
      find.bind(2, record.point_key);
      if (find.step()) return find.int64(0);
    }
    Statement insert(
        m.db, m.file,
        "INSERT INTO runs (kind, name, created_utc, command_line, input_json, "
        "document_json, summary, sweep_id, point_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
    insert.bind(1, record.kind);
    insert.bind(2, record.name);
    insert.bind(3, created);
    insert.bind(4, record.command_line);
    insert.bind(5, record.input_json);
    insert.bind(6, record.document_json);
    insert.bind(7, record.summary);
    insert.bind(8, record.sweep_id);
    insert.bind(9, record.point_key);
    insert.step();
    return sqlite3_last_insert_rowid(m.db);
  });
}

RunRecord ResultsStore::get_run(int64_t id) const {
  Impl& m = *impl_;
  const std::string columns =
      "SELECT id, kind, name, created_utc, command_line, summary, sweep_id, point_key, "
      "input_json, document_json FROM runs ";
  Statement s(m.db, m.file,
              id == 0 ? columns + "ORDER BY id DESC LIMIT 1" : columns + "WHERE id = ?");
  if (id != 0) s.bind(1, id);
  if (!s.step()) {
    Statement range(m.db, m.file, "SELECT COUNT(*), MIN(id), MAX(id) FROM runs");
    range.step();
    if (range.int64(0) == 0) throw StoreError(m.file + ": no runs stored yet");
    throw StoreError(m.file + ": no run " + std::to_string(id) + " (it holds " +
                     std::to_string(range.int64(0)) + " runs, ids " +
                     std::to_string(range.int64(1)) + " to " + std::to_string(range.int64(2)) +
                     "; see llmcap runs list)");
  }
  RunRecord r = m.read_listing_row(s);
  r.input_json = s.text(8);
  r.document_json = s.text(9);
  return r;
}

std::vector<RunRecord> ResultsStore::list_runs(const std::string& kind, int64_t limit) const {
  Impl& m = *impl_;
  std::string sql =
      "SELECT id, kind, name, created_utc, command_line, summary, sweep_id, point_key FROM runs";
  if (!kind.empty()) sql += " WHERE kind = ?";
  sql += " ORDER BY id DESC";
  if (limit > 0) sql += " LIMIT " + std::to_string(limit);
  Statement s(m.db, m.file, sql);
  if (!kind.empty()) s.bind(1, kind);
  std::vector<RunRecord> runs;
  while (s.step()) runs.push_back(m.read_listing_row(s));
  return runs;
}

std::map<std::string, int64_t> ResultsStore::sweep_points(const std::string& sweep_id) const {
  Impl& m = *impl_;
  Statement s(m.db, m.file, "SELECT point_key, id FROM runs WHERE sweep_id = ?");
  s.bind(1, sweep_id);
  std::map<std::string, int64_t> points;
  while (s.step()) points.emplace(s.text(0), s.int64(1));
  return points;
}

std::string ResultsStore::integrity_check() const {
  Impl& m = *impl_;
  Statement s(m.db, m.file, "PRAGMA integrity_check");
  std::string result;
  while (s.step()) {
    if (!result.empty()) result += '\n';
    result += s.text(0);
  }
  return result;
}

const std::filesystem::path& ResultsStore::path() const { return impl_->path; }

std::filesystem::path default_db_path(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("LLMCAP_DB"); env != nullptr && *env != '\0') return env;
  std::filesystem::path data_home;
  if (const char* xdg = std::getenv("XDG_DATA_HOME"); xdg != nullptr && *xdg != '\0') {
    data_home = xdg;
  } else if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    data_home = std::filesystem::path(home) / ".local" / "share";
  } else {
    data_home = ".";  // no home: the current folder
  }
  return data_home / "llmcap" / "runs.sqlite";
}

}  // namespace llmcap::store
