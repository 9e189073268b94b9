#include "store/results_store.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "test_util.h"

namespace llmcap::store {
namespace {

using llmcap::testing::error_message;
using llmcap::testing::TempDir;

RunRecord make_record(const std::string& kind, const std::string& name) {
  RunRecord r;
  r.kind = kind;
  r.name = name;
  r.command_line = "llmcap plan " + name + ".json";
  r.input_json = R"({"name": ")" + name + R"("})";
  r.document_json = R"({"format": "llmcap-run", "schema_version": 1, "name": ")" + name + R"("})";
  r.summary = "summary of " + name;
  return r;
}

/// Runs one SQL statement on the file directly (to forge other schema versions).
void exec_sql(const std::filesystem::path& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.string().c_str(), &db), SQLITE_OK);
  char* message = nullptr;
  const int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &message);
  EXPECT_EQ(rc, SQLITE_OK) << (message != nullptr ? message : "");
  sqlite3_free(message);
  sqlite3_close(db);
}

/// Sets an environment variable for the scope, restoring the old value after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value == nullptr) {
      unsetenv(name);
    } else {
      setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_, old_->c_str(), 1);
    } else {
      unsetenv(name_);
    }
  }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(ResultsStore, StoresAndReadsBackARun) {
  TempDir dir;
  const auto path = dir.path() / "nested" / "runs.sqlite";  // the folder is created
  ResultsStore store = ResultsStore::open(path);
  RunRecord record = make_record("plan", "small");
  record.sweep_id = "";
  const int64_t id = store.add_run(record);
  EXPECT_EQ(id, 1);
  const RunRecord back = store.get_run(id);
  EXPECT_EQ(back.id, id);
  EXPECT_EQ(back.kind, "plan");
  EXPECT_EQ(back.name, "small");
  EXPECT_EQ(back.command_line, record.command_line);
  EXPECT_EQ(back.input_json, record.input_json);
  EXPECT_EQ(back.document_json, record.document_json);
  EXPECT_EQ(back.summary, record.summary);
  // ISO 8601 UTC, e.g. 2025-01-31T12:00:00Z.
  ASSERT_EQ(back.created_utc.size(), 20u) << back.created_utc;
  EXPECT_EQ(back.created_utc[10], 'T');
  EXPECT_EQ(back.created_utc.back(), 'Z');
  EXPECT_EQ(store.path(), path);
}

TEST(ResultsStore, LatestListingAndKindFilter) {
  TempDir dir;
  ResultsStore store = ResultsStore::open(dir.path() / "runs.sqlite");
  const int64_t a = store.add_run(make_record("plan", "a"));
  const int64_t b = store.add_run(make_record("calibration", "b"));
  const int64_t c = store.add_run(make_record("plan", "c"));
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_EQ(store.get_run(0).id, c);
  EXPECT_EQ(store.get_run(0).name, "c");

  const std::vector<RunRecord> all = store.list_runs();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].id, c);  // newest first
  EXPECT_EQ(all[2].id, a);
  EXPECT_TRUE(all[0].document_json.empty());  // listings leave the documents out
  EXPECT_TRUE(all[0].input_json.empty());
  EXPECT_EQ(all[0].summary, "summary of c");

  const std::vector<RunRecord> plans = store.list_runs("plan");
  ASSERT_EQ(plans.size(), 2u);
  EXPECT_EQ(plans[0].name, "c");
  EXPECT_EQ(plans[1].name, "a");
  const std::vector<RunRecord> one = store.list_runs("", 1);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].id, c);
  EXPECT_TRUE(store.list_runs("audit").empty());
}

TEST(ResultsStore, RunsPersistAcrossOpens) {
  TempDir dir;
  const auto path = dir.path() / "runs.sqlite";
  { ResultsStore::open(path).add_run(make_record("plan", "first")); }
  ResultsStore store = ResultsStore::open(path);
  EXPECT_EQ(store.get_run(1).name, "first");
  EXPECT_EQ(store.add_run(make_record("plan", "second")), 2);
}

TEST(ResultsStore, UnknownRunIdNamesFileAndRange) {
  TempDir dir;
  const auto path = dir.path() / "runs.sqlite";
  ResultsStore store = ResultsStore::open(path);
  EXPECT_EQ(error_message<StoreError>([&] { store.get_run(0); }),
            path.string() + ": no runs stored yet");
  store.add_run(make_record("plan", "a"));
  store.add_run(make_record("plan", "b"));
  EXPECT_EQ(error_message<StoreError>([&] { store.get_run(42); }),
            path.string() + ": no run 42 (it holds 2 runs, ids 1 to 2; see llmcap runs list)");
}

TEST(ResultsStore, RefusesAFileThatIsNotADatabase) {
  TempDir dir;
  const auto path = dir.write("runs.sqlite", std::string(4096, 'x'));
  EXPECT_EQ(error_message<StoreError>([&] { ResultsStore::open(path); }),
            path.string() + ": not a readable SQLite results database (file is not a database)");
}

TEST(ResultsStore, RefusesAFolder) {
  TempDir dir;
  EXPECT_EQ(error_message<StoreError>([&] { ResultsStore::open(dir.path()); }),
            dir.path().string() + ": is a folder, expected a results database file");
}

TEST(ResultsStore, RefusesAnotherSqliteDatabase) {
  TempDir dir;
  const auto path = dir.path() / "profiles.sqlite";
  exec_sql(path, "CREATE TABLE profiles (id INTEGER)");
  EXPECT_EQ(error_message<StoreError>([&] { ResultsStore::open(path); }),
            path.string() +
                ": not an llmcap results database (it has tables but no schema_version table); "
                "give another file with --db or $LLMCAP_DB");
}

TEST(ResultsStore, RefusesANewerSchema) {
  TempDir dir;
  const auto path = dir.path() / "runs.sqlite";
  { ResultsStore::open(path); }
  exec_sql(path, "UPDATE schema_version SET version = 7");
  EXPECT_EQ(error_message<StoreError>([&] { ResultsStore::open(path); }),
            path.string() +
                ": results database schema version 7 is newer than this llmcap reads (1); use a "
                "newer llmcap or another database file");
}

TEST(ResultsStore, RefusesAnOlderSchema) {
  TempDir dir;
  const auto path = dir.path() / "runs.sqlite";
  { ResultsStore::open(path); }
  exec_sql(path, "UPDATE schema_version SET version = 0");
  EXPECT_EQ(error_message<StoreError>([&] { ResultsStore::open(path); }),
            path.string() +
                ": results database schema version 0 is older than this llmcap reads (1) and "
                "cannot be migrated; use another database file");
}

/// The file's bytes, to check that a refusal left it untouched.
std::string file_bytes(const std::filesystem::path& path) {
  return llmcap::testing::read_text(path);
}

// Issue 29: a foreign or newer database was switched to WAL before it was refused. It is now
// checked through a read-only connection first and refused with its bytes untouched.
TEST(ResultsStore, RefusesAForeignDatabaseUntouched) {
  TempDir dir;
  const auto path = dir.path() / "other.sqlite";
  exec_sql(path, "CREATE TABLE profiles (id INTEGER); INSERT INTO profiles VALUES (1)");
  const std::string before = file_bytes(path);
  EXPECT_EQ(error_message<StoreError>([&] { ResultsStore::open(path); }),
            path.string() +
                ": not an llmcap results database (it has tables but no schema_version table); "
                "give another file with --db or $LLMCAP_DB");
  EXPECT_EQ(file_bytes(path), before);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "other.sqlite-wal"));
}

TEST(ResultsStore, RefusesANewerDatabaseUntouched) {
  TempDir dir;
  const auto path = dir.path() / "runs.sqlite";
  exec_sql(path,
           "CREATE TABLE schema_version (version INTEGER NOT NULL); "
           "INSERT INTO schema_version (version) VALUES (2)");
  const std::string before = file_bytes(path);
  EXPECT_EQ(error_message<StoreError>([&] { ResultsStore::open(path); }),
            path.string() +
                ": results database schema version 2 is newer than this llmcap reads (1); use a "
                "newer llmcap or another database file");
  EXPECT_EQ(file_bytes(path), before);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "runs.sqlite-wal"));
}

TEST(ResultsStore, RefusesAProfileDatabaseUntouched) {
  TempDir dir;
  const auto path = dir.path() / "profiles.sqlite";
  exec_sql(path,
           "CREATE TABLE schema_version (version INTEGER NOT NULL); "
           "INSERT INTO schema_version (version) VALUES (1); "
           "CREATE TABLE profiles (id INTEGER)");
  const std::string before = file_bytes(path);
  EXPECT_EQ(error_message<StoreError>([&] { ResultsStore::open(path); }),
            path.string() +
                ": not an llmcap results database (it has a schema_version table but no runs "
                "table: a calibration-profile database, calibrate --db?); give another file "
                "with --db or $LLMCAP_DB");
  EXPECT_EQ(file_bytes(path), before);
}

TEST(ResultsStore, RefusesANonDatabaseUntouched) {
  TempDir dir;
  const std::string text = "SQLite format 3" + std::string(200, '\x01');
  const auto path = dir.write("runs.sqlite", text);
  EXPECT_THROW(ResultsStore::open(path), StoreError);
  EXPECT_EQ(file_bytes(path), text);
}

TEST(ResultsStore, UsesWriteAheadLog) {
  TempDir dir;
  const auto path = dir.path() / "runs.sqlite";
  ResultsStore store = ResultsStore::open(path);
  store.add_run(make_record("plan", "a"));
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "runs.sqlite-wal"));
  EXPECT_EQ(store.integrity_check(), "ok");
}

TEST(ResultsStore, SweepPointStoredOnce) {
  TempDir dir;
  ResultsStore store = ResultsStore::open(dir.path() / "runs.sqlite");
  RunRecord p = make_record("sweep_point", "s");
  p.sweep_id = "s-0123";
  p.point_key = R"({"seed":1})";
  const int64_t first = store.add_run(p);
  p.document_json = "{}";
  EXPECT_EQ(store.add_run(p), first);  // the same point again: not stored twice
  EXPECT_EQ(store.get_run(first).document_json, make_record("sweep_point", "s").document_json);
  p.point_key = R"({"seed":2})";
  const int64_t second = store.add_run(p);
  EXPECT_NE(second, first);
  p.sweep_id = "other";
  const int64_t third = store.add_run(p);  // same key, another sweep
  EXPECT_NE(third, second);

  const auto points = store.sweep_points("s-0123");
  ASSERT_EQ(points.size(), 2u);
  EXPECT_EQ(points.at(R"({"seed":1})"), first);
  EXPECT_EQ(points.at(R"({"seed":2})"), second);
  EXPECT_EQ(store.sweep_points("other").size(), 1u);
  EXPECT_TRUE(store.sweep_points("none").empty());
  EXPECT_EQ(store.list_runs().size(), 3u);
}

TEST(ResultsStore, DefaultPathFollowsFlagThenEnvironment) {
  {
    ScopedEnv db("LLMCAP_DB", "/tmp/from-env.sqlite");
    EXPECT_EQ(default_db_path("/tmp/flag.sqlite"), "/tmp/flag.sqlite");
    EXPECT_EQ(default_db_path(""), "/tmp/from-env.sqlite");
  }
  ScopedEnv db("LLMCAP_DB", nullptr);
  {
    ScopedEnv xdg("XDG_DATA_HOME", "/tmp/xdg");
    EXPECT_EQ(default_db_path(""), "/tmp/xdg/llmcap/runs.sqlite");
  }
  ScopedEnv xdg("XDG_DATA_HOME", nullptr);
  ScopedEnv home("HOME", "/home/someone");
  EXPECT_EQ(default_db_path(""), "/home/someone/.local/share/llmcap/runs.sqlite");
}

/// A document of `num_bytes` whose content is fixed by `name` (to check a run is whole).
std::string big_document(const std::string& name, size_t num_bytes) {
  std::string doc = R"({"name": ")" + name + R"(", "payload": ")";
  for (size_t i = 0; doc.size() < num_bytes; ++i) doc += name[i % name.size()];
  return doc + "\"}";
}

TEST(ResultsStore, SurvivesAKilledWriter) {
  constexpr size_t kDocumentBytes = 256 * 1024;  // large, so the kill lands inside a write
  constexpr int kRounds = 3;
  TempDir dir;
  const auto path = dir.path() / "runs.sqlite";
  { ResultsStore::open(path); }
  std::set<int64_t> committed;  // ids the writers reported after add_run returned
  for (int round = 0; round < kRounds; ++round) {
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {  // the writer: adds runs until killed
      close(fds[0]);
      try {
        ResultsStore store = ResultsStore::open(path);
        for (int i = 0; i < 100000; ++i) {
          RunRecord r =
              make_record("plan", "round" + std::to_string(round) + "-run" + std::to_string(i));
          r.document_json = big_document(r.name, kDocumentBytes);
          const int64_t id = store.add_run(r);
          if (write(fds[1], &id, sizeof(id)) != sizeof(id)) _exit(4);
        }
      } catch (...) {
        _exit(3);
      }
      _exit(0);
    }
    close(fds[1]);
    // Let it commit a few runs, then kill it while it writes the next one.
    const size_t wanted = 5 + 3 * static_cast<size_t>(round);
    size_t num_read = 0;
    int64_t id = 0;
    while (num_read < wanted && read(fds[0], &id, sizeof(id)) == sizeof(id)) {
      committed.insert(id);
      ++num_read;
    }
    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer ended by itself, status " << status;
    EXPECT_EQ(WTERMSIG(status), SIGKILL);
    while (read(fds[0], &id, sizeof(id)) == sizeof(id)) committed.insert(id);
    close(fds[0]);
    ASSERT_EQ(num_read, wanted);

    // Reopen: the file is sound, every committed run is there and whole, no partial run.
    ResultsStore store = ResultsStore::open(path);
    EXPECT_EQ(store.integrity_check(), "ok");
    const std::vector<RunRecord> runs = store.list_runs();
    std::set<int64_t> stored;
    for (const RunRecord& listed : runs) {
      stored.insert(listed.id);
      const RunRecord r = store.get_run(listed.id);
      const std::string expected = r.name.rfind("after-", 0) == 0
                                       ? make_record("plan", r.name).document_json
                                       : big_document(r.name, kDocumentBytes);
      EXPECT_EQ(r.document_json.size(), expected.size()) << "run " << r.id;
      EXPECT_TRUE(r.document_json == expected) << "run " << r.id << " differs";
      EXPECT_EQ(r.input_json, make_record("plan", r.name).input_json);
      EXPECT_EQ(r.summary, "summary of " + r.name);
    }
    for (int64_t c : committed) EXPECT_TRUE(stored.count(c)) << "committed run " << c << " lost";
    // At most the one run whose commit finished after the last report is extra.
    EXPECT_LE(stored.size(), committed.size() + static_cast<size_t>(round) + 1);
    // The store still takes writes after the crash.
    EXPECT_GT(store.add_run(make_record("plan", "after-round" + std::to_string(round))), 0);
    committed.insert(store.get_run(0).id);
  }
}

TEST(ResultsStore, SeveralProcessesWriteAtOnce) {
  constexpr int kWriters = 3;
  constexpr int kRunsPerWriter = 30;
  TempDir dir;
  const auto path = dir.path() / "runs.sqlite";
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      try {
        ResultsStore store = ResultsStore::open(path);  // they may race to create the file
        for (int i = 0; i < kRunsPerWriter; ++i) {
          store.add_run(make_record("plan", "w" + std::to_string(w) + "-" + std::to_string(i)));
        }
      } catch (const std::exception& e) {
        std::fprintf(stderr, "writer %d: %s\n", w, e.what());
        _exit(3);
      } catch (...) {
        _exit(3);
      }
      _exit(0);
    }
    children.push_back(child);
  }
  for (pid_t child : children) {
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
  }
  ResultsStore store = ResultsStore::open(path);
  EXPECT_EQ(store.integrity_check(), "ok");
  const std::vector<RunRecord> runs = store.list_runs();
  ASSERT_EQ(runs.size(), static_cast<size_t>(kWriters * kRunsPerWriter));
  std::set<std::string> names;
  for (const RunRecord& r : runs) names.insert(r.name);
  EXPECT_EQ(names.size(), runs.size());
  EXPECT_EQ(runs.front().id, kWriters * kRunsPerWriter);
}

}  // namespace
}  // namespace llmcap::store
