// Private to store/ (included by its .cpp files only, never by a public header): the prepared
// statement both SQLite stores use, the results database (store/results_store.cpp) and the
// calibration-profile database (store/profile_store.cpp).
#pragma once

#include <sqlite3.h>

#include <cstdint>
#include <string>

namespace llmcap::store::detail {

/// One prepared statement of the connection `db`, finalized on destruction. Binding is 1-based,
/// column reads 0-based. `file` names the database in messages; `db` and `file` must outlive the
/// statement. Each store words its own failures: `Errors` has two static [[noreturn]] functions
/// that throw,
///   prepare_failed(sqlite3* db, const std::string& file, const std::string& sql)  (bad SQL or
///     not this store's tables) and
///   step_failed(sqlite3* db, const std::string& file)                             (a step's
///   error).
template <typename Errors>
class Statement {
 public:
  Statement(sqlite3* db, const std::string& file, const std::string& sql) : db_(db), file_(file) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) {
      Errors::prepare_failed(db, file, sql);
    }
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  Statement& bind(int index, const std::string& text) {
    sqlite3_bind_text(stmt_, index, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
    return *this;
  }
  Statement& bind(int index, int64_t value) {
    sqlite3_bind_int64(stmt_, index, value);
    return *this;
  }
  Statement& bind(int index, int value) { return bind(index, static_cast<int64_t>(value)); }
  Statement& bind(int index, double value) {
    sqlite3_bind_double(stmt_, index, value);
    return *this;
  }
  /// Steps once: true while a row is available, false when done; a failure goes to
  /// Errors::step_failed.
  bool step() {
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    Errors::step_failed(db_, file_);
  }
  /// Steps once, then resets the statement and clears its bindings for the next row.
  void run() {
    step();
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  int64_t int64(int column) const { return sqlite3_column_int64(stmt_, column); }
  double real(int column) const { return sqlite3_column_double(stmt_, column); }
  /// The column's text, all its bytes; "" for NULL.
  std::string text(int column) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    return p == nullptr ? std::string() : std::string(p, sqlite3_column_bytes(stmt_, column));
  }

 private:
  sqlite3* db_;
  const std::string& file_;
  sqlite3_stmt* stmt_ = nullptr;
};

}  // namespace llmcap::store::detail
