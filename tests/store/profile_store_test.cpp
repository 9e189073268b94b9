#include "store/profile_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

#include "base/error.h"
#include "model/calibration_fixtures.h"
#include "test_util.h"

namespace llmcap::store {
namespace {

using base::InputError;
using llmcap::testing::error_message;
using llmcap::testing::TempDir;
using model::CalibrationProfile;
using model::testing::synthetic_profile;
using ::testing::HasSubstr;

/// Runs SQL on the file directly (to forge damaged or foreign databases).
void exec_sql(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.string().c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  const std::string text = message != nullptr ? message : "";
  sqlite3_free(message);
  sqlite3_close(db);
  ASSERT_EQ(rc, SQLITE_OK) << text;
}

/// The `sql` column of sqlite_master, in rowid order: the schema as SQLite keeps it.
std::vector<std::string> schema_of(const std::filesystem::path& path) {
  sqlite3* db = nullptr;
  std::vector<std::string> out;
  EXPECT_EQ(sqlite3_open(path.string().c_str(), &db), SQLITE_OK);
  sqlite3_stmt* s = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_master ORDER BY rowid", -1, &s, nullptr),
            SQLITE_OK);
  while (sqlite3_step(s) == SQLITE_ROW) {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, 0));
    out.emplace_back(p != nullptr ? p : "(null)");
  }
  sqlite3_finalize(s);
  sqlite3_close(db);
  return out;
}

TEST(ProfileStore, RoundTripAndLatestProfile) {
  TempDir dir;
  const auto db = dir.path() / "cal.db";
  CalibrationProfile p = synthetic_profile();
  const int64_t first = write_profile(db, p);
  p.created_at = "2026-11-30T00:00:00Z";
  p.kernels.pop_back();
  const int64_t second = write_profile(db, p);
  EXPECT_GT(second, first);
  const CalibrationProfile latest = read_profile(db);
  EXPECT_EQ(latest.created_at, "2026-11-30T00:00:00Z");
  EXPECT_EQ(latest.kernels.size(), p.kernels.size());
  EXPECT_EQ(latest.machine.isa, p.machine.isa);
  EXPECT_EQ(latest.machine.l3_bytes, p.machine.l3_bytes);
  EXPECT_EQ(latest.machine.copy_bandwidth_bytes_per_s, p.machine.copy_bandwidth_bytes_per_s);
  EXPECT_DOUBLE_EQ(latest.kernels[4].bytes, p.kernels[4].bytes);
  EXPECT_DOUBLE_EQ(latest.fit.matmul.at("bf16").flops_per_s, p.fit.matmul.at("bf16").flops_per_s);
  const CalibrationProfile older = read_profile(db, first);
  EXPECT_EQ(older.kernels.size(), p.kernels.size() + 1);
  EXPECT_THAT([&] { read_profile(db, 99); },
              ::testing::Throws<InputError>(
                  ::testing::Property(&InputError::what, HasSubstr("no profile with id 99"))));
}

TEST(ProfileStore, NotADatabaseIsAnInputError) {
  TempDir dir;
  const auto path = dir.write("junk.db",
                              "this is not sqlite, just text padded out to a page "
                              "so that SQLite reads a header and rejects it........");
  try {
    read_profile(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path.string()));
  }
  EXPECT_THROW(read_profile(dir.path() / "missing.db"), InputError);
}

// The tables, columns and index of the databases llmcap calibrate --db has always written
// (model/calibration_storage.cpp until profile storage moved to store/), as SQLite keeps them:
// a database written before the move is read, and one written after it has the same schema.
TEST(ProfileStore, TheSchemaIsThatOfEarlierDatabases) {
  TempDir dir;
  const auto db = dir.path() / "cal.db";
  write_profile(db, synthetic_profile());
  const std::vector<std::string> expected = {
      "CREATE TABLE schema_version (version INTEGER NOT NULL)",
      "CREATE TABLE machines (\n  id INTEGER PRIMARY KEY,\n  cpu_model TEXT NOT NULL,\n  isa TEXT "
      "NOT NULL,\n  num_cores INTEGER NOT NULL,\n  l1d_bytes INTEGER NOT NULL,\n  l2_bytes "
      "INTEGER NOT NULL,\n  l3_bytes INTEGER NOT NULL,\n  UNIQUE (cpu_model, isa, num_cores, "
      "l1d_bytes, l2_bytes, l3_bytes))",
      "(null)",
      "CREATE TABLE profiles (\n  id INTEGER PRIMARY KEY,\n  machine_id INTEGER NOT NULL "
      "REFERENCES machines(id),\n  created_at TEXT NOT NULL,\n  tool TEXT NOT NULL,\n  fit_json "
      "TEXT NOT NULL)",
      "CREATE TABLE bandwidth_samples (\n  profile_id INTEGER NOT NULL REFERENCES profiles(id),\n "
      " kind TEXT NOT NULL CHECK (kind IN ('read', 'copy')),\n  threads INTEGER NOT NULL,\n  "
      "bytes_per_s REAL NOT NULL,\n  PRIMARY KEY (profile_id, kind, threads))",
      "(null)",
      "CREATE TABLE kernel_samples (\n  id INTEGER PRIMARY KEY,\n  profile_id INTEGER NOT NULL "
      "REFERENCES profiles(id),\n  op TEXT NOT NULL, format TEXT NOT NULL, backend TEXT NOT "
      "NULL,\n  rows INTEGER NOT NULL, cols INTEGER NOT NULL, batch INTEGER NOT NULL,\n  threads "
      "INTEGER NOT NULL,\n  min_s REAL NOT NULL, median_s REAL NOT NULL,\n  bytes REAL NOT NULL, "
      "flops REAL NOT NULL,\n  bytes_per_s REAL NOT NULL, flops_per_s REAL NOT NULL,\n  "
      "cache_resident INTEGER NOT NULL)",
      "CREATE INDEX kernel_samples_profile ON kernel_samples (profile_id)"};
  EXPECT_EQ(schema_of(db), expected);
}

TEST(ProfileStore, AnotherSchemaVersionIsRefusedOnReadAndWrite) {
  TempDir dir;
  const auto db = dir.path() / "cal.db";
  write_profile(db, synthetic_profile());
  exec_sql(db, "UPDATE schema_version SET version = 7");
  const std::string expected = db.string() +
                               ": table \"schema_version\": expected version 1, got 7 (a "
                               "database of another llmcap version)";
  EXPECT_EQ(error_message<InputError>([&] { read_profile(db); }), expected);
  EXPECT_EQ(error_message<InputError>([&] { write_profile(db, synthetic_profile()); }), expected);
}

TEST(ProfileStore, ADatabaseWithoutProfilesSaysSo) {
  TempDir dir;
  const auto db = dir.path() / "cal.db";
  write_profile(db, synthetic_profile());
  exec_sql(db, "DELETE FROM kernel_samples; DELETE FROM bandwidth_samples; DELETE FROM profiles");
  EXPECT_EQ(error_message<InputError>([&] { read_profile(db); }),
            db.string() + ": table \"profiles\": no calibration profile stored");
}

TEST(ProfileStore, AnotherSqliteDatabaseIsNotACalibrationDatabase) {
  TempDir dir;
  const auto db = dir.path() / "other.db";
  exec_sql(db,
           "CREATE TABLE schema_version (version INTEGER NOT NULL); "
           "INSERT INTO schema_version VALUES (1); CREATE TABLE runs (id INTEGER)");
  EXPECT_THAT(
      error_message<InputError>([&] { read_profile(db); }),
      ::testing::StartsWith(db.string() + ": SQLite (not an llmcap calibration database?): no such "
                                          "table: profiles"));
}

TEST(ProfileStore, AMalformedFitNamesTheProfileAndColumn) {
  TempDir dir;
  const auto db = dir.path() / "cal.db";
  const int64_t id = write_profile(db, synthetic_profile());
  exec_sql(db, "UPDATE profiles SET fit_json = '{oops'");
  const std::string profile = "profile " + std::to_string(id);
  EXPECT_THAT(error_message<InputError>([&] { read_profile(db, id); }),
              ::testing::StartsWith(db.string() + ": " + profile +
                                    ": column \"fit_json\": malformed JSON: "));
  exec_sql(db, "UPDATE profiles SET fit_json = '{\"threads\": -1}'");
  EXPECT_THAT(error_message<InputError>([&] { read_profile(db, id); }),
              ::testing::AllOf(::testing::StartsWith(db.string() + " (" + profile + ")"),
                               HasSubstr("fit.threads")));
}

}  // namespace
}  // namespace llmcap::store
