// The stored forms of a calibration profile: JSON text and files, and the SQLite database
// (model/calibration.h).
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/json_reader.h"
#include "model/calibration.h"
#include "model/input_error.h"

namespace llmcap::model {

// ---------------------------------------------------------------------------------------------
// JSON

namespace {

using nlohmann::json;

json bandwidth_to_json(const std::map<int, double>& by_threads) {
  json out = json::object();
  for (const auto& [threads, value] : by_threads) out[std::to_string(threads)] = value;
  return out;
}

json rate_fit_to_json(const RateFit& f) {
  json out = {{"overhead_s", f.overhead_s},
              {"bytes_per_s", f.bytes_per_s},
              {"flops_per_s", f.flops_per_s},
              {"num_samples", f.num_samples},
              {"median_rel_error", f.median_rel_error},
              {"p95_rel_error", f.p95_rel_error}};
  if (!f.by_batch.empty()) {
    json rows = json::array();
    for (const BatchRateFit& b : f.by_batch) {
      rows.push_back({{"batch", b.batch},
                      {"overhead_s", b.overhead_s},
                      {"bytes_per_s", b.bytes_per_s},
                      {"num_samples", b.num_samples}});
    }
    out["by_batch"] = rows;
    out["by_batch_median_rel_error"] = f.by_batch_median_rel_error;
    out["by_batch_p95_rel_error"] = f.by_batch_p95_rel_error;
  }
  return out;
}

json fit_to_json(const CalibrationFit& fit) {
  json matmul = json::object();
  for (const auto& [format, f] : fit.matmul) matmul[format] = rate_fit_to_json(f);
  json attention = json::object();
  for (const auto& [format, f] : fit.attention) attention[format] = rate_fit_to_json(f);
  return {{"threads", fit.threads},
          {"min_bytes", fit.min_bytes},
          {"statistic", to_string(fit.statistic)},
          {"cache_resident_fitted", fit.cache_resident_fitted},
          {"model", std::string(to_string(fit.statistic)) +
                        "_s = overhead_s + bytes / bytes_per_s + flops / flops_per_s"},
          {"matmul", matmul},
          {"attention", attention},
          {"median_rel_error", fit.median_rel_error},
          {"p95_rel_error", fit.p95_rel_error}};
}

/// Reads typed fields of one JSON object, with errors that name the file and the field path:
/// base::JsonReader with values cut to 60 characters in messages. The object must be an object.
class Reader : public base::JsonReader {
 public:
  Reader(const json& object, const std::string& source, const std::string& path)
      : base::JsonReader(object, source, path, profile_style()) {
    if (!object.is_object()) {
      throw InputError::bad_field(source, path, shown(object), "an object");
    }
  }

  using base::JsonReader::fail;
  [[noreturn]] void fail(const std::string& key, const std::string& expected,
                         const json& got) const {
    fail(key, expected, shown(got));
  }

  std::string str(const std::string& key) const { return string(key); }
  /// A finite number, >= 0 unless `non_negative` is false.
  double number(const std::string& key, bool non_negative = true) const {
    if (non_negative) return non_negative_number(key);
    return base::JsonReader::number(
        key, [](double) { return true; }, "a number");
  }
  int64_t integer(const std::string& key) const { return non_negative_int(key); }
  Reader object(const std::string& key) const { return Reader(at(key), file(), name(key)); }
  std::map<int, double> bandwidth(const std::string& key) const {
    const Reader r = object(key);
    std::map<int, double> out;
    for (const auto& [k, v] : r.raw().items()) {
      int threads = 0;
      try {
        std::size_t used = 0;
        threads = std::stoi(k, &used);
        if (used != k.size() || threads < 1) throw std::invalid_argument(k);
      } catch (const std::exception&) {
        throw InputError::bad_field(file(), name(key), "\"" + k + "\"", "thread counts as keys");
      }
      out[threads] = r.number(k);
      if (!(out[threads] > 0)) r.fail(k, "a positive bandwidth in bytes/s", v);
    }
    return out;
  }
  std::string field(const std::string& key) const { return name(key); }
  const std::string& source() const { return file(); }

 private:
  static base::JsonReaderStyle profile_style() {
    base::JsonReaderStyle style;
    style.max_shown_chars = 60;
    return style;
  }
};

RateFit rate_fit_from(const Reader& r) {
  RateFit f;
  f.overhead_s = r.number("overhead_s");
  f.bytes_per_s = r.number("bytes_per_s");
  f.flops_per_s = r.number("flops_per_s");
  f.num_samples = static_cast<int>(r.integer("num_samples"));
  f.median_rel_error = r.number("median_rel_error");
  f.p95_rel_error = r.number("p95_rel_error");
  if (r.has("by_batch")) {  // optional: profiles before it lack it
    const json& rows = r.at("by_batch");
    if (!rows.is_array()) r.fail("by_batch", "an array", rows);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Reader row(rows[i], r.source(), r.field("by_batch") + "[" + std::to_string(i) + "]");
      BatchRateFit b;
      b.batch = row.integer("batch");
      b.overhead_s = row.number("overhead_s");
      b.bytes_per_s = row.number("bytes_per_s");
      b.num_samples = static_cast<int>(row.integer("num_samples"));
      if (b.batch < 1 || (!f.by_batch.empty() && b.batch <= f.by_batch.back().batch)) {
        row.fail("batch", "batches >= 1 in ascending order", row.at("batch"));
      }
      f.by_batch.push_back(b);
    }
    f.by_batch_median_rel_error = r.number("by_batch_median_rel_error");
    f.by_batch_p95_rel_error = r.number("by_batch_p95_rel_error");
  }
  return f;
}

CalibrationFit fit_from(const Reader& r) {
  CalibrationFit fit;
  fit.threads = static_cast<int>(r.integer("threads"));
  fit.min_bytes = r.number("min_bytes");
  if (r.has("statistic")) {  // optional: profiles before it were fitted on the median
    const json& v = r.at("statistic");
    if (v == "min") {
      fit.statistic = FitStatistic::kMin;
    } else if (v != "median") {
      r.fail("statistic", "\"median\" or \"min\"", v);
    }
  }
  if (r.has("cache_resident_fitted")) {
    const json& v = r.at("cache_resident_fitted");
    if (!v.is_boolean()) r.fail("cache_resident_fitted", "true or false", v);
    fit.cache_resident_fitted = v.get<bool>();
  }
  for (const char* kind : {"matmul", "attention"}) {
    const Reader group = r.object(kind);
    auto& out = std::string(kind) == "matmul" ? fit.matmul : fit.attention;
    for (const auto& [format, value] : group.raw().items()) {
      (void)value;
      out[format] = rate_fit_from(group.object(format));
    }
  }
  fit.median_rel_error = r.number("median_rel_error");
  fit.p95_rel_error = r.number("p95_rel_error");
  return fit;
}

void check_schema_version(int64_t version, const std::string& source) {
  if (version != kCalibrationSchemaVersion) {
    throw InputError::bad_field(source, "schema_version",
                                std::to_string(version) +
                                    " (a profile of another llmcap version; run llmcap "
                                    "calibrate again)",
                                std::to_string(kCalibrationSchemaVersion));
  }
}

}  // namespace

std::string profile_to_json(const CalibrationProfile& p) {
  json kernels = json::array();
  for (const KernelSample& s : p.kernels) {
    kernels.push_back({{"op", s.op},
                       {"format", s.format},
                       {"backend", s.backend},
                       {"rows", s.rows},
                       {"cols", s.cols},
                       {"batch", s.batch},
                       {"threads", s.threads},
                       {"min_s", s.min_s},
                       {"median_s", s.median_s},
                       {"bytes", s.bytes},
                       {"flops", s.flops},
                       {"bytes_per_s", s.bytes_per_s},
                       {"flops_per_s", s.flops_per_s},
                       {"cache_resident", s.cache_resident}});
  }
  const CalibrationMachine& m = p.machine;
  const json doc = {
      {"schema_version", p.schema_version},
      {"created_at", p.created_at},
      {"tool", p.tool},
      {"machine",
       {{"cpu_model", m.cpu_model},
        {"isa", m.isa},
        {"num_cores", m.num_cores},
        {"l1d_bytes", m.l1d_bytes},
        {"l2_bytes", m.l2_bytes},
        {"l3_bytes", m.l3_bytes},
        {"read_bandwidth_bytes_per_s", bandwidth_to_json(m.read_bandwidth_bytes_per_s)},
        {"copy_bandwidth_bytes_per_s", bandwidth_to_json(m.copy_bandwidth_bytes_per_s)}}},
      {"kernels", kernels},
      {"fit", fit_to_json(p.fit)}};
  return doc.dump(2) + "\n";
}

CalibrationProfile profile_from_json(const std::string& text, const std::string& source) {
  const json doc = base::parse_json_text(text, source);
  const Reader r(doc, source, "");
  CalibrationProfile p;
  p.schema_version = static_cast<int>(r.integer("schema_version"));
  check_schema_version(p.schema_version, source);
  p.created_at = r.has("created_at") ? r.str("created_at") : "";
  p.tool = r.has("tool") ? r.str("tool") : "";
  const Reader m = r.object("machine");
  p.machine.cpu_model = m.str("cpu_model");
  p.machine.isa = m.str("isa");
  p.machine.num_cores = static_cast<int>(m.integer("num_cores"));
  if (p.machine.num_cores < 1) m.fail("num_cores", "a positive integer", m.at("num_cores"));
  for (auto [key, out] :
       {std::pair{"l1d_bytes", &p.machine.l1d_bytes}, std::pair{"l2_bytes", &p.machine.l2_bytes},
        std::pair{"l3_bytes", &p.machine.l3_bytes}}) {
    if (m.has(key)) *out = m.integer(key);
  }
  p.machine.read_bandwidth_bytes_per_s = m.bandwidth("read_bandwidth_bytes_per_s");
  if (m.has("copy_bandwidth_bytes_per_s")) {
    p.machine.copy_bandwidth_bytes_per_s = m.bandwidth("copy_bandwidth_bytes_per_s");
  }
  const json& kernels = r.at("kernels");
  if (!kernels.is_array()) r.fail("kernels", "an array", kernels);
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const Reader k(kernels[i], source, "kernels[" + std::to_string(i) + "]");
    KernelSample s;
    s.op = k.str("op");
    s.format = k.str("format");
    s.backend = k.str("backend");
    s.rows = k.integer("rows");
    s.cols = k.integer("cols");
    s.batch = k.integer("batch");
    s.threads = static_cast<int>(k.integer("threads"));
    if (s.threads < 1) k.fail("threads", "a positive integer", k.at("threads"));
    s.median_s = k.number("median_s");
    if (!(s.median_s > 0)) k.fail("median_s", "a positive time in seconds", k.at("median_s"));
    s.min_s = k.has("min_s") ? k.number("min_s") : s.median_s;
    s.bytes = k.number("bytes");
    s.flops = k.has("flops") ? k.number("flops") : 0.0;
    s.bytes_per_s = k.number("bytes_per_s");
    s.flops_per_s = k.has("flops_per_s") ? k.number("flops_per_s") : 0.0;
    if (k.has("cache_resident")) {
      const json& v = k.at("cache_resident");
      if (!v.is_boolean()) k.fail("cache_resident", "true or false", v);
      s.cache_resident = v.get<bool>();
    }
    p.kernels.push_back(std::move(s));
  }
  if (r.has("fit")) {
    p.fit = fit_from(r.object("fit"));
  } else {
    p.fit = fit_calibration(p.kernels, 0, 0, false, FitStatistic::kMedian,
                            p.machine.read_bandwidth_bytes_per_s);
  }
  return p;
}

CalibrationProfile read_profile_json(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError::unreadable_file(path.string());
  std::stringstream buffer;
  buffer << in.rdbuf();
  return profile_from_json(buffer.str(), path.string());
}

// ---------------------------------------------------------------------------------------------
// SQLite

namespace {

/// An open database; errors become InputError naming the file.
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
  sqlite3* get() const { return db_; }
  const std::string& path() const { return path_; }
  int64_t last_id() const { return sqlite3_last_insert_rowid(db_); }

 private:
  std::string path_;
  sqlite3* db_ = nullptr;
};

/// A prepared statement with positional binding (1-based) and column reads (0-based).
class Stmt {
 public:
  Stmt(Db& db, const char* sql) : db_(db) {
    if (sqlite3_prepare_v2(db.get(), sql, -1, &s_, nullptr) != SQLITE_OK) {
      db.fail("SQLite (not an llmcap calibration database?)");
    }
  }
  ~Stmt() { sqlite3_finalize(s_); }
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  Stmt& bind(int i, const std::string& v) {
    sqlite3_bind_text(s_, i, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Stmt& bind(int i, int64_t v) {
    sqlite3_bind_int64(s_, i, v);
    return *this;
  }
  Stmt& bind(int i, int v) { return bind(i, static_cast<int64_t>(v)); }
  Stmt& bind(int i, double v) {
    sqlite3_bind_double(s_, i, v);
    return *this;
  }
  /// Steps once: true when a row is available.
  bool step() {
    const int rc = sqlite3_step(s_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    db_.fail("SQLite");
  }
  void run() {
    step();
    sqlite3_reset(s_);
    sqlite3_clear_bindings(s_);
  }
  int64_t integer(int c) const { return sqlite3_column_int64(s_, c); }
  double real(int c) const { return sqlite3_column_double(s_, c); }
  std::string text(int c) const {
    const auto* p = sqlite3_column_text(s_, c);
    return p != nullptr ? reinterpret_cast<const char*>(p) : "";
  }

 private:
  Db& db_;
  sqlite3_stmt* s_ = nullptr;
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
  Stmt s(db, "SELECT version FROM schema_version LIMIT 1");
  return s.step() ? s.integer(0) : 0;
}

void check_db_version(int64_t version, const std::string& path) {
  if (version != kCalibrationSchemaVersion) {
    throw InputError(path + ": table \"schema_version\": expected version " +
                     std::to_string(kCalibrationSchemaVersion) + ", got " +
                     std::to_string(version) + " (a database of another llmcap version)");
  }
}

}  // namespace

int64_t write_profile_sqlite(const std::filesystem::path& path, const CalibrationProfile& p) {
  Db db(path, /*create=*/true);
  db.exec("BEGIN IMMEDIATE");
  try {
    db.exec(kSchema);
    const int64_t version = stored_version(db);
    if (version == 0) {
      Stmt(db, "INSERT INTO schema_version (version) VALUES (?)")
          .bind(1, int64_t{kCalibrationSchemaVersion})
          .run();
    } else {
      check_db_version(version, db.path());
    }
    const CalibrationMachine& m = p.machine;
    Stmt(db,
         "INSERT OR IGNORE INTO machines (cpu_model, isa, num_cores, l1d_bytes, l2_bytes, "
         "l3_bytes) VALUES (?, ?, ?, ?, ?, ?)")
        .bind(1, m.cpu_model)
        .bind(2, m.isa)
        .bind(3, m.num_cores)
        .bind(4, m.l1d_bytes)
        .bind(5, m.l2_bytes)
        .bind(6, m.l3_bytes)
        .run();
    Stmt find(db,
              "SELECT id FROM machines WHERE cpu_model = ? AND isa = ? AND num_cores = ? AND "
              "l1d_bytes = ? AND l2_bytes = ? AND l3_bytes = ?");
    find.bind(1, m.cpu_model)
        .bind(2, m.isa)
        .bind(3, m.num_cores)
        .bind(4, m.l1d_bytes)
        .bind(5, m.l2_bytes)
        .bind(6, m.l3_bytes);
    if (!find.step()) db.fail("machine row missing after insert");
    const int64_t machine_id = find.integer(0);
    Stmt(db, "INSERT INTO profiles (machine_id, created_at, tool, fit_json) VALUES (?, ?, ?, ?)")
        .bind(1, machine_id)
        .bind(2, p.created_at)
        .bind(3, p.tool)
        .bind(4, fit_to_json(p.fit).dump())
        .run();
    const int64_t profile_id = db.last_id();
    Stmt bw(db,
            "INSERT INTO bandwidth_samples (profile_id, kind, threads, bytes_per_s) "
            "VALUES (?, ?, ?, ?)");
    for (const auto& [kind, map] : {std::pair<std::string, const std::map<int, double>*>{
                                        "read", &m.read_bandwidth_bytes_per_s},
                                    {"copy", &m.copy_bandwidth_bytes_per_s}}) {
      for (const auto& [threads, value] : *map) {
        bw.bind(1, profile_id).bind(2, kind).bind(3, threads).bind(4, value).run();
      }
    }
    Stmt k(db,
           "INSERT INTO kernel_samples (profile_id, op, format, backend, rows, cols, batch, "
           "threads, min_s, median_s, bytes, flops, bytes_per_s, flops_per_s, cache_resident) "
           "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
    for (const KernelSample& s : p.kernels) {
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

CalibrationProfile read_profile_sqlite(const std::filesystem::path& path, int64_t profile_id) {
  Db db(path, /*create=*/false);
  check_db_version(stored_version(db), db.path());
  if (profile_id <= 0) {
    Stmt latest(db, "SELECT max(id) FROM profiles");
    if (!latest.step() || latest.integer(0) <= 0) {
      throw InputError(db.path() + ": table \"profiles\": no calibration profile stored");
    }
    profile_id = latest.integer(0);
  }
  CalibrationProfile p;
  std::string fit_json;
  {
    Stmt s(db,
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
    p.machine.num_cores = static_cast<int>(s.integer(5));
    p.machine.l1d_bytes = s.integer(6);
    p.machine.l2_bytes = s.integer(7);
    p.machine.l3_bytes = s.integer(8);
  }
  {
    Stmt s(db, "SELECT kind, threads, bytes_per_s FROM bandwidth_samples WHERE profile_id = ?");
    s.bind(1, profile_id);
    while (s.step()) {
      auto& map = s.text(0) == "read" ? p.machine.read_bandwidth_bytes_per_s
                                      : p.machine.copy_bandwidth_bytes_per_s;
      map[static_cast<int>(s.integer(1))] = s.real(2);
    }
  }
  {
    Stmt s(db,
           "SELECT op, format, backend, rows, cols, batch, threads, min_s, median_s, bytes, "
           "flops, bytes_per_s, flops_per_s, cache_resident FROM kernel_samples WHERE "
           "profile_id = ? ORDER BY id");
    s.bind(1, profile_id);
    while (s.step()) {
      KernelSample k;
      k.op = s.text(0);
      k.format = s.text(1);
      k.backend = s.text(2);
      k.rows = s.integer(3);
      k.cols = s.integer(4);
      k.batch = s.integer(5);
      k.threads = static_cast<int>(s.integer(6));
      k.min_s = s.real(7);
      k.median_s = s.real(8);
      k.bytes = s.real(9);
      k.flops = s.real(10);
      k.bytes_per_s = s.real(11);
      k.flops_per_s = s.real(12);
      k.cache_resident = s.integer(13) != 0;
      p.kernels.push_back(std::move(k));
    }
  }
  json fit;
  try {
    fit = json::parse(fit_json);
  } catch (const json::parse_error& e) {
    throw InputError(db.path() + ": profile " + std::to_string(profile_id) +
                     ": column \"fit_json\": malformed JSON: " + e.what());
  }
  p.fit = fit_from(Reader(fit, db.path() + " (profile " + std::to_string(profile_id) + ")", "fit"));
  return p;
}

}  // namespace llmcap::model
