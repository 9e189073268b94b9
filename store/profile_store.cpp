// The calibration-profile database (store/profile_store.h): SQLite tables of machines, profiles,
// bandwidth and kernel samples; the fit is kept as model::fit_to_json's text.
#include "store/profile_store.h"

#include <sqlite3.h>

#include <map>
#include <string>
#include <utility>

#include "base/error.h"
#include "store/sqlite_statement.h"

namespace llmcap::store {
namespace {

using base::InputError;

/// How a profile database's statements fail: InputError naming the file.
struct ProfileErrors {
  [[noreturn]] static void prepare_failed(sqlite3* db, const std::string& file,
                                          const std::string& /*sql*/) {
    throw InputError(file +
                     ": SQLite (not an llmcap calibration database?): " + sqlite3_errmsg(db));
  }
  [[noreturn]] static void step_failed(sqlite3* db, const std::string& file) {
    throw InputError(file + ": SQLite: " + sqlite3_errmsg(db));
  }
};

using Stmt = detail::Statement<ProfileErrors>;

/// An open profile database; errors become InputError naming the file.
class Db {
 public:
  Db(const std::filesystem::path& path, bool create) : path_(path.string()) {
    if (!create && !std::filesystem::exists(path)) {
      throw InputError::unreadable_file(path_);
    }
    const int flags = create ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY;
    if (sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
      const std::string msg = db_ != nullptr ? sqlite3_errmsg(db_) : "out of memory";
      sqlite3_close(db_);
      throw InputError(path_ + ": cannot open SQLite database: " + msg);
    }
    sqlite3_busy_timeout(db_, 5000);
  }
  ~Db() { sqlite3_close(db_); }
  Db(const Db&) = delete;
  Db& operator=(const Db&) = delete;

  [[noreturn]] void fail(const std::string& what) const {
    throw InputError(path_ + ": " + what + ": " + sqlite3_errmsg(db_));
  }
  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      const std::string msg = err != nullptr ? err : "unknown error";
      sqlite3_free(err);
      throw InputError(path_ + ": SQLite: " + msg + " (not an llmcap calibration database?)");
    }
  }
  /// A prepared statement of this database.
  Stmt stmt(const std::string& sql) { return Stmt(db_, path_, sql); }
  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }
  int64_t last_id() const { return sqlite3_last_insert_rowid(db_); }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

constexpr const char* kSchema = R"sql(
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS machines (
  id INTEGER PRIMARY KEY,
  cpu_model TEXT NOT NULL,
  isa TEXT NOT NULL,
  num_cores INTEGER NOT NULL,
  l1d_bytes INTEGER NOT NULL,
  l2_bytes INTEGER NOT NULL,
  l3_bytes INTEGER NOT NULL,
  UNIQUE (cpu_model, isa, num_cores, l1d_bytes, l2_bytes, l3_bytes));
CREATE TABLE IF NOT EXISTS profiles (
  id INTEGER PRIMARY KEY,
  machine_id INTEGER NOT NULL REFERENCES machines(id),
  created_at TEXT NOT NULL,
  tool TEXT NOT NULL,
  fit_json TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS bandwidth_samples (
  profile_id INTEGER NOT NULL REFERENCES profiles(id),
  kind TEXT NOT NULL CHECK (kind IN ('read', 'copy')),
  threads INTEGER NOT NULL,
  bytes_per_s REAL NOT NULL,
  PRIMARY KEY (profile_id, kind, threads));
CREATE TABLE IF NOT EXISTS kernel_samples (
  id INTEGER PRIMARY KEY,
  profile_id INTEGER NOT NULL REFERENCES profiles(id),
  op TEXT NOT NULL, format TEXT NOT NULL, backend TEXT NOT NULL,
  rows INTEGER NOT NULL, cols INTEGER NOT NULL, batch INTEGER NOT NULL,
  threads INTEGER NOT NULL,
  min_s REAL NOT NULL, median_s REAL NOT NULL,
  bytes REAL NOT NULL, flops REAL NOT NULL,
  bytes_per_s REAL NOT NULL, flops_per_s REAL NOT NULL,
  cache_resident INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS kernel_samples_profile ON kernel_samples (profile_id);
)sql";

/// The stored schema version (0 when the table is empty).
int64_t stored_version(Db& db) {
  Stmt s = db.stmt("SELECT version FROM schema_version LIMIT 1");
  return s.step() ? s.int64(0) : 0;
}

void check_db_version(int64_t version, const std::string& path) {
  if (version != model::kCalibrationSchemaVersion) {
    throw InputError(path + ": table \"schema_version\": expected version " +
                     std::to_string(model::kCalibrationSchemaVersion) + ", got " +
                     std::to_string(version) + " (a database of another llmcap version)");
  }
}

}  // namespace

int64_t write_profile(const std::filesystem::path& path, const model::CalibrationProfile& p) {
  Db db(path, /*create=*/true);
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec(kSchema);
    const int64_t version = stored_version(db);
    if (version == 0) {
      db.stmt("INSERT INTO schema_version (version) VALUES (?)")
          .bind(1, int64_t{model::kCalibrationSchemaVersion})
          .run();
    } else {
      check_db_version(version, db.path());
    }
    const model::CalibrationMachine& m = p.machine;
    db.stmt(
          "INSERT OR IGNORE INTO machines (cpu_model, isa, num_cores, l1d_bytes, l2_bytes, "
          "l3_bytes) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(1, m.cpu_model)
        .bind(2, m.isa)
        .bind(3, m.num_cores)
        .bind(4, m.l1d_bytes)
        .bind(5, m.l2_bytes)
        .bind(6, m.l3_bytes)
        .run();
    Stmt find = db.stmt(
        "SELECT id FROM machines WHERE cpu_model = ? AND isa = ? AND num_cores = ? AND "
        "l1d_bytes = ? AND l2_bytes = ? AND l3_bytes = ?");
    find.bind(1, m.cpu_model)
        .bind(2, m.isa)
        .bind(3, m.num_cores)
        .bind(4, m.l1d_bytes)
        .bind(5, m.l2_bytes)
        .bind(6, m.l3_bytes);
    if (!find.step()) db.fail("machine row missing after insert");
    const int64_t machine_id = find.int64(0);
    db.stmt("INSERT INTO profiles (machine_id, created_at, tool, fit_json) VALUES (?, ?, ?, ?)")
        .bind(1, machine_id)
        .bind(2, p.created_at)
        .bind(3, p.tool)
        .bind(4, model::fit_to_json(p.fit))
        .run();
    const int64_t profile_id = db.last_id();
    Stmt bw = db.stmt(
        "INSERT INTO bandwidth_samples (profile_id, kind, threads, bytes_per_s) "
        "VALUES (?, ?, ?, ?)");
    for (const auto& [kind, map] : {std::pair<std::string, const std::map<int, double>*>{
                                        "read", &m.read_bandwidth_bytes_per_s},
                                    {"copy", &m.copy_bandwidth_bytes_per_s}}) {
      for (const auto& [threads, value] : *map) {
        bw.bind(1, profile_id).bind(2, kind).bind(3, threads).bind(4, value).run();
      }
    }
    Stmt k = db.stmt(
        "INSERT INTO kernel_samples (profile_id, op, format, backend, rows, cols, batch, "
        "threads, min_s, median_s, bytes, flops, bytes_per_s, flops_per_s, cache_resident) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const model::KernelSample& s : p.kernels) {
      k.bind(1, profile_id)
          .bind(2, s.op)
          .bind(3, s.format)
          .bind(4, s.backend)
          .bind(5, s.rows)
          .bind(6, s.cols)
          .bind(7, s.batch)
          .bind(8, s.threads)
          .bind(9, s.min_s)
          .bind(10, s.median_s)
          .bind(11, s.bytes)
          .bind(12, s.flops)
          .bind(13, s.bytes_per_s)
          .bind(14, s.flops_per_s)
          .bind(15, int64_t{s.cache_resident ? 1 : 0})
          .run();
    }
    db.exec("COMMIT");
    return profile_id;
  } catch (...) {
    sqlite3_exec(db.get(), "ROLLBACK", nullptr, nullptr, nullptr);
    throw;
  }
}

model::CalibrationProfile read_profile(const std::filesystem::path& path, int64_t profile_id) {
  Db db(path, /*create=*/false);
  check_db_version(stored_version(db), db.path());
  if (profile_id <= 0) {
    Stmt latest = db.stmt("SELECT max(id) FROM profiles");
    if (!latest.step() || latest.int64(0) <= 0) {
      throw InputError(db.path() + ": table \"profiles\": no calibration profile stored");
    }
    profile_id = latest.int64(0);
  }
  model::CalibrationProfile p;
  std::string fit_json;
  {
    Stmt s = db.stmt(
        "SELECT p.created_at, p.tool, p.fit_json, m.cpu_model, m.isa, m.num_cores, "
        "m.l1d_bytes, m.l2_bytes, m.l3_bytes FROM profiles p JOIN machines m ON "
        "m.id = p.machine_id WHERE p.id = ?");
    s.bind(1, profile_id);
    if (!s.step()) {
      throw InputError(db.path() + ": table \"profiles\": no profile with id " +
                       std::to_string(profile_id));
    }
    p.created_at = s.text(0);
    p.tool = s.text(1);
    fit_json = s.text(2);
    p.machine.cpu_model = s.text(3);
    p.machine.isa = s.text(4);
    p.machine.num_cores = static_cast<int>(s.int64(5));
    p.machine.l1d_bytes = s.int64(6);
    p.machine.l2_bytes = s.int64(7);
    p.machine.l3_bytes = s.int64(8);
  }
  {
    Stmt s =
        db.stmt("SELECT kind, threads, bytes_per_s FROM bandwidth_samples WHERE profile_id = ?");
    s.bind(1, profile_id);
    while (s.step()) {
      auto& map = s.text(0) == "read" ? p.machine.read_bandwidth_bytes_per_s
                                      : p.machine.copy_bandwidth_bytes_per_s;
      map[static_cast<int>(s.int64(1))] = s.real(2);
    }
  }
  {
    Stmt s = db.stmt(
        "SELECT op, format, backend, rows, cols, batch, threads, min_s, median_s, bytes, "
        "flops, bytes_per_s, flops_per_s, cache_resident FROM kernel_samples WHERE "
        "profile_id = ? ORDER BY id");
    s.bind(1, profile_id);
    while (s.step()) {
      model::KernelSample k;
      k.op = s.text(0);
      k.format = s.text(1);
      k.backend = s.text(2);
      k.rows = s.int64(3);
      k.cols = s.int64(4);
      k.batch = s.int64(5);
      k.threads = static_cast<int>(s.int64(6));
      k.min_s = s.real(7);
      k.median_s = s.real(8);
      k.bytes = s.real(9);
      k.flops = s.real(10);
      k.bytes_per_s = s.real(11);
      k.flops_per_s = s.real(12);
      k.cache_resident = s.int64(13) != 0;
      p.kernels.push_back(std::move(k));
    }
  }
  const std::string profile = "profile " + std::to_string(profile_id);
  p.fit = model::fit_from_json(fit_json, db.path() + " (" + profile + ")",
                               db.path() + ": " + profile + ": column \"fit_json\"");
  return p;
}

}  // namespace llmcap::store
