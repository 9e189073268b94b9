// One JSON field reader for every reader of input files: typed, required or optional fields,
// with InputError messages that name the file, the dotted field path, the value and what was
// expected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/error.h"

namespace llmcap::base {

/// The deepest nesting of objects and arrays any JSON input may have (the top-level value is
/// level 1). Every parse below refuses deeper input while it parses: printing or walking a
/// value recurses once per level, so a deeper one could exhaust the stack.
inline constexpr int kMaxJsonDepth = 64;

// Every parse of JSON in the tree goes through the functions below. Besides the parser's own
// syntax errors (InputError::malformed_json, "<file>: malformed JSON: <parser message>") they
// refuse, with an InputError naming the file and the field path (`a.b[2].c`):
//   - nesting deeper than kMaxJsonDepth:
//     `<file>: field "<path>": expected at most 64 levels of nested objects and arrays, got
//     level 65` (the path cut to 80 characters);
//   - a number beyond the range of a double (e.g. 1e999):
//     `<file>: field "<path>": expected a number of magnitude below 1.8e308, got 1e999`
//     (`<file>: expected ..., got 1e999` when the document is that number).

/// Parses the JSON file at `path` (read as a stream). Throws InputError::unreadable_file
/// ("<path>: cannot open file", also for a directory) or the errors above.
nlohmann::json read_json_file(const std::filesystem::path& path);

/// The bytes of the file at `path`. Throws InputError::unreadable_file ("<path>: cannot open
/// file", also for a directory).
std::string read_text_file(const std::filesystem::path& path);

/// Parses JSON `text` that stands for the file `file` (named in the message). Throws the
/// errors above.
nlohmann::json parse_json_text(const std::string& text, const std::string& file);
/// Likewise, keeping the key order of the text (for OrderedJsonReader).
nlohmann::ordered_json parse_ordered_json_text(const std::string& text, const std::string& file);
/// `text` (standing for `file`) parsed, or nullopt with the parser's message in
/// `syntax_error` (when not null) when it is not JSON. The bounds errors above are thrown.
std::optional<nlohmann::json> try_parse_json(const std::string& text, const std::string& file,
                                             std::string* syntax_error);

// Lenient reads, for JSON the tree wrote itself and reads back without judging it (stored runs,
// whose older versions may lack a field): absent or mistyped values give the fallback, never an
// error. Input from users goes through JsonReader instead.

/// `text` parsed, or null when it is empty, not JSON, or refused by the bounds above (a
/// document nested deeper than kMaxJsonDepth reads as null, never walked).
nlohmann::json parse_json_or_null(const std::string& text);
/// object[key] when `object` is an object holding a number there, else `fallback`.
double number_or(const nlohmann::json& object, const char* key, double fallback);
/// object[key] when `object` is an object holding a string there, else `fallback`.
std::string string_or(const nlohmann::json& object, const char* key,
                      const std::string& fallback = "");

/// How a reader's messages and checks differ between the input formats of the tree. The
/// defaults are those of the scenario reader.
struct JsonReaderStyle {
  /// A field whose value is null counts as absent (has() is false, a required read reports it
  /// as missing).
  bool null_is_missing = false;
  /// A required read of an absent field says `expected <what>, got nothing (field missing)`
  /// (InputError::bad_field) instead of `missing` (InputError::missing_field).
  bool missing_names_expected = false;
  /// Integer reads also accept numbers written with a zero fraction (3.0, 1e3) that are below
  /// whole_floats_below.
  bool whole_floats = false;
  double whole_floats_below = 9.2e18;
  /// What an absent field is shown as (got()).
  std::string missing_text = "nothing (field missing)";
  /// Values whose JSON text is longer than this are shown as their first max - 3 characters and
  /// "..." (0: always in full).
  size_t max_shown_chars = 0;
};

/// Typed access to one JSON object. `Json` is nlohmann::json (JsonReader) or
/// nlohmann::ordered_json (OrderedJsonReader, for documents whose key order matters: only()
/// and refuse_unknown() then name the first unknown key in file order). Every failure throws
/// InputError naming the file (and the record, when given), the field path `<prefix>.<key>`
/// (`<key>` with an empty prefix), the value as JSON text and what was expected, e.g.
///   `s.json: field "workload.rate_per_s": expected a positive number, got -1`.
/// The reader refers to the JSON value it was given, which must outlive it. Numbers are
/// read as doubles and must be finite; integers are int64_t.
template <typename Json>
class BasicJsonReader {
 public:
  /// `object` is the JSON object read; `file` names it in messages; `prefix` is the field path
  /// of the object itself ("" at the top level); `record` (e.g. `instance "aws-x"`) is put
  /// between the file and the field in messages when non-empty.
  BasicJsonReader(const Json& object, std::string file, std::string prefix,
                  JsonReaderStyle style = {}, std::string record = "");

  const std::string& file() const { return file_; }
  const std::string& record() const { return record_; }
  /// Names another record in later messages (e.g. once the record's id is read).
  void set_record(std::string record) { record_ = std::move(record); }
  /// The JSON object read.
  const Json& raw() const { return object_; }
  /// The field path of `key` in messages: "<prefix>.<key>", or "<key>" at the top level.
  std::string name(const std::string& key) const;

  /// Whether `key` is present (and, with null_is_missing, not null).
  bool has(const std::string& key) const;
  /// Whether `key` is present and not null, whatever the style.
  bool has_value(const std::string& key) const;
  /// The value of `key`; throws the reader's "missing" error when has(key) is false.
  const Json& at(const std::string& key) const;
  /// The value of `key` as shown in messages, or "nothing (field missing)" when absent.
  std::string got(const std::string& key) const;
  /// `value` as shown in messages (its JSON text, cut to max_shown_chars).
  std::string shown(const Json& value) const;

  /// Throws InputError::bad_field (or bad_record_field) for `key`.
  [[noreturn]] void fail(const std::string& key, const std::string& expected,
                         const std::string& got) const;
  /// Throws InputError::missing_field for `key`, with an optional note after "missing; ".
  [[noreturn]] void fail_missing(const std::string& key, const std::string& note = "") const;
  /// Throws InputError::refused_field (`<file>: field "<name>": <reason>`) for `key`.
  [[noreturn]] void fail_refused(const std::string& key, const std::string& reason) const;
  /// Throws InputError::refused_field (`<file>: field "<name>": <reason>`) when `key` is
  /// present (has()).
  void refuse(const std::string& key, const std::string& reason) const;
  /// Throws InputError::unknown_field for the first key of the object not in `known`.
  void only(const std::vector<std::string>& known) const;
  /// Throws InputError::refused_field for the first key of the object not in `known`, with the
  /// reason `<lead><known, comma-separated>` (e.g. lead "unknown field; known: ").
  void refuse_unknown(const std::vector<std::string>& known, const std::string& lead) const;

  /// A string (may be empty).
  std::string string(const std::string& key) const;
  /// A string (may be empty); `expected` describes it in messages (e.g. "a file path").
  std::string string(const std::string& key, const std::string& expected) const;
  std::string string_or(const std::string& key, const std::string& fallback) const;
  /// A string of at least one character.
  std::string non_empty_string(const std::string& key) const;
  std::string non_empty_string_or(const std::string& key, const std::string& fallback) const;
  /// true or false.
  bool boolean(const std::string& key) const;
  bool boolean_or(const std::string& key, bool fallback) const;

  /// A finite number for which `ok` holds; `expected` describes the range in messages.
  double number(const std::string& key, const std::function<bool(double)>& ok,
                const std::string& expected) const;
  /// A finite number > 0.
  double positive_number(const std::string& key) const;
  double positive_number_or(const std::string& key, double fallback) const;
  /// A finite number >= 0.
  double non_negative_number(const std::string& key) const;

  /// An integer >= `min` (and <= INT64_MAX); `expected` describes it in messages.
  int64_t integer(const std::string& key, int64_t min, const std::string& expected) const;
  /// An integer >= 1 ("a positive integer").
  int64_t positive_int(const std::string& key) const;
  int64_t positive_int_or(const std::string& key, int64_t fallback) const;
  /// An integer >= 0 ("a non-negative integer").
  int64_t non_negative_int(const std::string& key) const;
  int64_t non_negative_int_or(const std::string& key, int64_t fallback) const;

  /// The object `key`, read by a reader whose field path is name(key); `expected` describes
  /// it in messages.
  BasicJsonReader object(const std::string& key, const std::string& expected = "an object") const;
  /// The array `key` (may be empty); `expected` describes it in messages.
  const Json& array(const std::string& key, const std::string& expected) const;
  /// The array `key` with at least one element; `expected` describes it in messages.
  const Json& non_empty_array(const std::string& key, const std::string& expected) const;
  /// Element `i` of the array `key` (the caller has checked the array), as an object with the
  /// field path name(key) + "[i]"; `expected` describes it in messages. A failing check of
  /// the element's own value can name it with fail(key + "[i]", ...).
  BasicJsonReader element(const std::string& key, size_t i,
                          const std::string& expected = "an object") const;

 private:
  /// The value of `key` for a typed read that expects `expected`: absent fields fail as the
  /// style says.
  const Json& required(const std::string& key, const std::string& expected) const;

  /// The message prefix before the field: the file, and the record when given.
  std::string where() const;

  /// The first key of the object not in `known` (nullopt when every key is), for only() and
  /// refuse_unknown().
  std::optional<std::string> first_unknown(const std::vector<std::string>& known) const;

  const Json& object_;
  std::string file_;
  std::string prefix_;
  JsonReaderStyle style_;
  std::string record_;
};

using JsonReader = BasicJsonReader<nlohmann::json>;
using OrderedJsonReader = BasicJsonReader<nlohmann::ordered_json>;
extern template class BasicJsonReader<nlohmann::json>;
extern template class BasicJsonReader<nlohmann::ordered_json>;

}  // namespace llmcap::base
