// Mooncake-style JSON Lines traces. Each line is read by a strict fast path for the usual shape
// (FastRow) or else by nlohmann::json::sax_parse with a SAX handler (RowHandler), which also
// words every error; neither builds a JSON document, and the hash ids go straight into the
// shared pool.
#include "sim/trace_jsonl.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "sim/input_error.h"
#include "sim/prefix_keys.h"

namespace llmcap::sim {
namespace {

using nlohmann::json;

/// The end of simulated time (9.2e18 ns) in milliseconds: later timestamps are refused.
constexpr int64_t kMaxTimestampMs = 9'200'000'000'000;
/// Longest string value quoted in a message.
constexpr size_t kMaxShownChars = 40;

constexpr const char* kRowFormat =
    "{\"timestamp\": <ms>, \"input_length\": <tokens>, \"output_length\": <tokens>, "
    "\"hash_ids\": [<int>, ...]}";

enum Field { kTimestamp, kInputLength, kOutputLength, kHashIds, kNumFields, kOther };
constexpr const char* kFieldNames[kNumFields] = {"timestamp", "input_length", "output_length",
                                                 "hash_ids"};

std::string read_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path.string() + ": cannot read file: it is a directory");
  }
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InputError::unreadable_file(path.string());
  const std::streamoff size = in.tellg();
  std::string text(size > 0 ? static_cast<size_t>(size) : 0, '\0');
  in.seekg(0);
  if (size > 0 && !in.read(text.data(), size)) {
    throw InputError(path.string() + ": cannot read file");
  }
  return text;
}

/// One row's values as the SAX events deliver them.
struct RowValues {
  int64_t values[kHashIds] = {0, 0, 0};  // timestamp, input_length, output_length
  bool seen[kNumFields] = {false, false, false, false};
  int64_t num_hashes = 0;
};

/// SAX events of one line (an object of integer fields and a list of hash ids) into RowValues
/// and the pool; throws InputError on anything else.
class RowHandler {
 public:
  RowHandler(const std::string& file, std::vector<uint64_t>& pool) : file_(file), pool_(pool) {}

  void start_line(int64_t line_number) {
    line_ = line_number;
    row_ = RowValues{};
    depth_ = 0;
    field_ = kOther;
  }
  const RowValues& row() const { return row_; }

  [[noreturn]] void fail_field(const std::string& field, const std::string& expected,
                               const std::string& got) const {
    throw InputError(file_ + ": line " + std::to_string(line_) + ", field \"" + field +
                     "\": expected " + expected + ", got " + got);
  }
  [[noreturn]] void fail_line(const std::string& what) const {
    throw InputError(file_ + ": line " + std::to_string(line_) + ": " + what);
  }

  // ---- nlohmann::json_sax interface ----
  bool null() { return scalar("null"); }
  bool boolean(bool b) { return scalar(b ? "true" : "false"); }
  bool number_integer(json::number_integer_t v) {
    if (v >= 0) return number_unsigned(static_cast<uint64_t>(v));
    return scalar(std::to_string(v));
  }
  bool number_unsigned(json::number_unsigned_t v) {
    if (in_hashes()) {
      pool_.push_back(v);
      ++row_.num_hashes;
      return true;
    }
    if (depth_ != 1 || field_ == kOther) return check_top();
    if (field_ == kHashIds)
      fail_field(kFieldNames[field_], "a list of hash ids", std::to_string(v));
    if (v > static_cast<uint64_t>(INT64_MAX)) {
      fail_field(kFieldNames[field_], "an integer up to 2^63 - 1", std::to_string(v));
    }
    row_.values[field_] = static_cast<int64_t>(v);
    return true;
  }
  bool number_float(json::number_float_t, const json::string_t& text) { return scalar(text); }
  bool string(json::string_t& s) {
    std::string shown = s.size() > kMaxShownChars ? s.substr(0, kMaxShownChars) + "..." : s;
    return scalar(json(shown).dump(-1, ' ', true, json::error_handler_t::replace));
  }
  bool binary(json::binary_t&) { return scalar("binary data"); }
  bool start_object(std::size_t) {
    if (depth_ == 0) {
      depth_ = 1;
      return true;
    }
    return open("an object");
  }
  bool key(json::string_t& k) {
    if (depth_ != 1) return true;  // inside an ignored value
    field_ = kOther;
    for (int f = 0; f < kNumFields; ++f) {
      if (k == kFieldNames[f]) field_ = static_cast<Field>(f);
    }
    if (field_ != kOther) {
      if (row_.seen[field_]) fail_field(kFieldNames[field_], "one value", "a second one");
      row_.seen[field_] = true;
    }
    return true;
  }
  bool end_object() {
    --depth_;
    return true;
  }
  bool start_array(std::size_t) {
    if (depth_ == 1 && field_ == kHashIds) {
      depth_ = 2;
      return true;
    }
    return open("a list");
  }
  bool end_array() {
    --depth_;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    fail_line("malformed JSON at byte " + std::to_string(position) +
              " (not shown); expected one JSON object per line, " + kRowFormat);
  }

 private:
  bool in_hashes() const { return depth_ == 2 && field_ == kHashIds; }
  /// The top-level value is not an object.
  bool check_top() const {
    if (depth_ == 0) fail_line(std::string("expected a JSON object, ") + kRowFormat);
    return true;
  }
  /// A scalar that is not a non-negative integer, shown as `text`.
  bool scalar(const std::string& text) {
    if (in_hashes()) {
      fail_field("hash_ids[" + std::to_string(row_.num_hashes) + "]",
                 "a non-negative integer (a block hash id)", text);
    }
    if (depth_ != 1 || field_ == kOther) return check_top();
    fail_field(kFieldNames[field_],
               field_ == kHashIds ? "a list of hash ids" : "a non-negative integer", text);
  }
  /// An object or list opens: fine inside an ignored field, an error elsewhere.
  bool open(const char* what) {
    if (in_hashes()) {
      fail_field("hash_ids[" + std::to_string(row_.num_hashes) + "]",
                 "a non-negative integer (a block hash id)", what);
    }
    if (depth_ == 1 && field_ != kOther) {
      fail_field(kFieldNames[field_],
                 field_ == kHashIds ? "a list of hash ids" : "a non-negative integer", what);
    }
    check_top();
    ++depth_;
    return true;
  }

  const std::string& file_;
  std::vector<uint64_t>& pool_;
  int64_t line_ = 0;
  RowValues row_;
  int depth_ = 0;  ///< 0 outside the row object, 1 in it, 2 in hash_ids or deeper
  Field field_ = kOther;
};

/// The fast path of a row in the exact shape the public traces use: an object of the four
/// known keys (each once, no escapes), non-negative integers (no sign, fraction, exponent or
/// leading zero) and a list of them for hash_ids, with JSON whitespace anywhere. Fills `row`
/// and appends the hash ids to `pool`; false (pool and row to be discarded) on anything else,
/// which the SAX parser then reads or refuses with its message. Parses about 5x faster than
/// nlohmann's lexer (its per-character input adapter and strtoull).
class FastRow {
 public:
  FastRow(std::string_view line, RowValues& row, std::vector<uint64_t>& pool)
      : p_(line.data()), end_(line.data() + line.size()), row_(row), pool_(pool) {}

  bool parse() {
    if (!literal('{')) return false;
    if (literal('}')) return rest_is_space();
    do {
      const Field f = key();
      if (f == kOther || row_.seen[f] || !literal(':')) return false;
      row_.seen[f] = true;
      if (f == kHashIds) {
        if (!hash_list()) return false;
      } else {
        uint64_t v = 0;
        space();
        if (!number(v) || v > static_cast<uint64_t>(INT64_MAX)) return false;
        row_.values[f] = static_cast<int64_t>(v);
      }
    } while (literal(','));
    return literal('}') && rest_is_space();
  }

 private:
  void space() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\t' || *p_ == '\r' || *p_ == '\n')) ++p_;
  }
  bool literal(char c) {
    space();
    if (p_ == end_ || *p_ != c) return false;
    ++p_;
    return true;
  }
  bool rest_is_space() {
    space();
    return p_ == end_;
  }
  Field key() {
    if (!literal('"')) return kOther;
    const char* start = p_;
    while (p_ < end_ && *p_ != '"' && *p_ != '\\') ++p_;
    if (p_ == end_ || *p_ != '"') return kOther;
    const std::string_view name(start, static_cast<size_t>(p_ - start));
    ++p_;
    for (int f = 0; f < kNumFields; ++f) {
      if (name == kFieldNames[f]) return static_cast<Field>(f);
    }
    return kOther;
  }
  /// A JSON integer >= 0 of at most 19 digits (< 10^19 < 2^64).
  bool number(uint64_t& v) {
    const char* start = p_;
    v = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') v = v * 10 + static_cast<uint64_t>(*p_++ - '0');
    const ptrdiff_t digits = p_ - start;
    if (digits == 0 || digits > 19 || (digits > 1 && *start == '0')) return false;
    return p_ == end_ || (*p_ != '.' && *p_ != 'e' && *p_ != 'E');
  }
  bool hash_list() {
    if (!literal('[')) return false;
    if (literal(']')) return true;
    do {
      uint64_t v = 0;
      space();
      if (!number(v)) return false;
      pool_.push_back(v);
      ++row_.num_hashes;
    } while (literal(','));
    return literal(']');
  }

  const char* p_;
  const char* end_;
  RowValues& row_;
  std::vector<uint64_t>& pool_;
};

void check_positive(const std::string& file, const char* name, double value) {
  if (!(value > 0) || !std::isfinite(value)) {
    std::ostringstream text;
    text << value;
    throw InputError(file + ": " + name + ": expected a positive number, got " + text.str());
  }
}

}  // namespace

bool is_jsonl_trace_path(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  const std::string tail = ".jsonl";
  return name.size() > tail.size() &&
         name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
}

std::vector<RequestSpec> load_jsonl_trace(const std::filesystem::path& path,
                                          const TraceOptions& options) {
  const std::string file = path.string();
  check_positive(file, "rate_multiplier", options.rate_multiplier);
  if (options.window_s) check_positive(file, "window_s", *options.window_s);
  const int64_t block = options.hash_block_tokens;
  if (block < 1) {
    throw InputError(file + ": hash_block_tokens: expected a positive integer, got " +
                     std::to_string(block));
  }
  const std::string text = read_file(path);
  std::string_view body = text;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);  // UTF-8 byte-order mark

  auto pool = std::make_shared<std::vector<uint64_t>>();
  pool->reserve(body.size() / 8);  // Mooncake: about 10 bytes of text per hash id
  std::vector<RequestSpec> requests;
  requests.reserve(body.size() / 200);
  RowHandler handler(file, *pool);
  int64_t line_number = 0;
  int64_t num_rows = 0;
  int64_t first_ms = 0;
  int64_t previous_ms = 0;
  const SimTime window = options.window_s ? SimTime::Seconds(*options.window_s) : SimTime::Max();
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find('\n', pos);
    if (end == std::string_view::npos) end = body.size();
    std::string_view line = body.substr(pos, end - pos);
    pos = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;

    const auto begin = static_cast<int64_t>(pool->size());
    handler.start_line(line_number);
    RowValues fast;
    const bool fast_ok = FastRow(line, fast, *pool).parse();
    if (!fast_ok) {  // anything unusual, and every error: the SAX parser
      pool->resize(static_cast<size_t>(begin));
      json::sax_parse(line.begin(), line.end(), &handler);
    }
    const RowValues& row = fast_ok ? fast : handler.row();
    for (int f = 0; f < kNumFields; ++f) {
      if (!row.seen[f]) {
        handler.fail_line(std::string("field \"") + kFieldNames[f] + "\": missing; expected " +
                          kRowFormat);
      }
    }
    const int64_t ms = row.values[kTimestamp];
    const int64_t prompt = row.values[kInputLength];
    if (ms > kMaxTimestampMs) {
      handler.fail_field("timestamp",
                         "milliseconds up to 9200000000000 (the end of simulated time)",
                         std::to_string(ms));
    }
    if (prompt < 1)
      handler.fail_field("input_length", "a positive integer", std::to_string(prompt));
    const int64_t expected_hashes = prompt / block + (prompt % block != 0 ? 1 : 0);
    if (row.num_hashes != expected_hashes) {
      handler.fail_field("hash_ids",
                         std::to_string(expected_hashes) + " hash ids, ceil(input_length " +
                             std::to_string(prompt) + " / block " + std::to_string(block) +
                             " tokens) (the block size contradicts its lengths)",
                         std::to_string(row.num_hashes) + " hash ids");
    }
    if (num_rows > 0 && ms < previous_ms) {
      handler.fail_field(
          "timestamp",
          "rows in time order (at least " + std::to_string(previous_ms) + ", the previous row's)",
          std::to_string(ms));
    }
    if (num_rows == 0) first_ms = ms;
    previous_ms = ms;
    const int64_t row_index = num_rows++;
    const double offset_ns = static_cast<double>(ms - first_ms) * 1e6;
    const SimTime arrival = SimTime::Nanoseconds(std::llround(offset_ns / options.rate_multiplier));
    if (arrival >= window) {  // rows are in time order: keep reading only to check them
      pool->resize(static_cast<size_t>(begin));
      continue;
    }
    RequestSpec& spec = requests.emplace_back();
    spec.arrival = arrival;
    spec.num_prompt_tokens = prompt;
    // Every served request returns at least its first token: 0 generated tokens reads as 1.
    spec.num_output_tokens = std::max<int64_t>(1, row.values[kOutputLength]);
    spec.prefix.hashes = pool;
    spec.prefix.begin = begin;
    spec.prefix.count = static_cast<int32_t>(row.num_hashes);
    spec.prefix.block_tokens = static_cast<int32_t>(block);
    spec.prefix.stream = prefix_chain(kJsonlTraceStreamSalt, static_cast<uint64_t>(row_index) + 1);
  }
  if (num_rows == 0) {
    throw InputError(file + ": no rows; expected one JSON object per line, " + kRowFormat);
  }
  return requests;
}

}  // namespace llmcap::sim
