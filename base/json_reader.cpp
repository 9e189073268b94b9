#include "base/json_reader.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

namespace llmcap::base {

using nlohmann::json;

namespace {

/// Follows the parser's events to know the field path of the value being parsed, and refuses
/// a container that would open level kMaxJsonDepth + 1.
template <typename Json>
class BoundsTracker {
 public:
  explicit BoundsTracker(std::string file) : file_(std::move(file)) {}

  bool on_event(int depth, nlohmann::detail::parse_event_t event, Json& parsed) {
    using Event = nlohmann::detail::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        // `depth` counts the containers around the one that opens.
        if (depth >= kMaxJsonDepth) {
          std::string field = path();
          if (field.size() > 80) field = field.substr(0, 77) + "...";
          const std::string expected =
              "at most " + std::to_string(kMaxJsonDepth) + " levels of nested objects and arrays";
          const std::string got = "level " + std::to_string(depth + 1);
          if (field.empty()) throw InputError::bad_document(file_, expected, got);
          throw InputError::bad_field(file_, field, got, expected);
        }
        frames_.push_back({event == Event::array_start, "", 0});
        break;
      case Event::key:
        frames_.back().key = parsed.template get<std::string>();
        break;
      case Event::object_end:
      case Event::array_end:
        frames_.pop_back();
        next_element();
        break;
      case Event::value:
        next_element();
        break;
    }
    return true;
  }

  /// The field path of the value being parsed ("" at the top level).
  std::string path() const {
    std::string out;
    for (const Frame& f : frames_) {
      if (f.array) {
        out += '[';
        out += std::to_string(f.count);
        out += ']';
      } else {
        if (!out.empty()) out += '.';
        out += f.key;
      }
    }
    return out;
  }

 private:
  struct Frame {
    bool array;
    std::string key;  // objects: the key of the value being parsed
    size_t count;     // arrays: the index of the element being parsed
  };
  void next_element() {
    if (!frames_.empty() && frames_.back().array) ++frames_.back().count;
  }

  std::string file_;
  std::vector<Frame> frames_;
};

/// `input` (a string or a stream) parsed within the bounds of kMaxJsonDepth and the range of a
/// double; a syntax error gives nullopt and the parser's message in `syntax_error`.
template <typename Json, typename Input>
std::optional<Json> parse_bounded(Input&& input, const std::string& file,
                                  std::string* syntax_error) {
  BoundsTracker<Json> tracker(file);
  try {
    return Json::parse(std::forward<Input>(input),
                       [&tracker](int depth, nlohmann::detail::parse_event_t event, Json& parsed) {
                         return tracker.on_event(depth, event, parsed);
                       });
  } catch (const typename Json::out_of_range& e) {
    // 406: a number beyond the range of a double ("number overflow parsing '1e999'").
    std::string value = e.what();
    const size_t first = value.find('\'');
    const size_t last = value.rfind('\'');
    value = first != std::string::npos && last > first ? value.substr(first + 1, last - first - 1)
                                                       : std::string("a number out of range");
    const std::string expected = "a number of magnitude below 1.8e308";
    const std::string field = tracker.path();
    if (field.empty()) throw InputError::bad_document(file, expected, value);
    throw InputError::bad_field(file, field, value, expected);
  } catch (const typename Json::exception& e) {
    if (syntax_error != nullptr) *syntax_error = e.what();
    return std::nullopt;
  }
}

template <typename Json, typename Input>
Json parse_or_throw(Input&& input, const std::string& file) {
  std::string error;
  std::optional<Json> doc = parse_bounded<Json>(std::forward<Input>(input), file, &error);
  if (!doc) throw InputError::malformed_json(file, error);
  return std::move(*doc);
}

}  // namespace

json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(path, ec)) {
    throw InputError::unreadable_file(path.string());
  }
  return parse_or_throw<json>(in, path.string());
}

std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(path, ec)) {
    throw InputError::unreadable_file(path.string());
  }
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

json parse_json_text(const std::string& text, const std::string& file) {
  return parse_or_throw<json>(text, file);
}

nlohmann::ordered_json parse_ordered_json_text(const std::string& text, const std::string& file) {
  return parse_or_throw<nlohmann::ordered_json>(text, file);
}

std::optional<json> try_parse_json(const std::string& text, const std::string& file,
                                   std::string* syntax_error) {
  return parse_bounded<json>(text, file, syntax_error);
}

json parse_json_or_null(const std::string& text) {
  if (text.empty()) return nullptr;
  try {
    std::optional<json> doc = parse_bounded<json>(text, "", nullptr);
    return doc ? std::move(*doc) : json(nullptr);
  } catch (const InputError&) {
    return nullptr;
  }
}

double number_or(const json& object, const char* key, double fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_number() ? it->get<double>() : fallback;
}

std::string string_or(const json& object, const char* key, const std::string& fallback) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : fallback;
}

template <typename Json>
BasicJsonReader<Json>::BasicJsonReader(const Json& object, std::string file, std::string prefix,
                                       JsonReaderStyle style, std::string record)
    : object_(object),
      file_(std::move(file)),
      prefix_(std::move(prefix)),
      style_(style),
      record_(std::move(record)) {}

template <typename Json>
std::string BasicJsonReader<Json>::where() const {
  return record_.empty() ? file_ : file_ + ": " + record_;
}

template <typename Json>
std::string BasicJsonReader<Json>::name(const std::string& key) const {
  return prefix_.empty() ? key : prefix_ + "." + key;
}

template <typename Json>
bool BasicJsonReader<Json>::has(const std::string& key) const {
  return object_.contains(key) && !(style_.null_is_missing && object_.at(key).is_null());
}

template <typename Json>
bool BasicJsonReader<Json>::has_value(const std::string& key) const {
  return object_.contains(key) && !object_.at(key).is_null();
}

template <typename Json>
const Json& BasicJsonReader<Json>::at(const std::string& key) const {
  if (!has(key)) fail_missing(key);
  return object_.at(key);
}

template <typename Json>
std::string BasicJsonReader<Json>::got(const std::string& key) const {
  return has(key) ? shown(object_.at(key)) : style_.missing_text;
}

template <typename Json>
std::string BasicJsonReader<Json>::shown(const Json& value) const {
  std::string text = value.dump();
  const size_t max = style_.max_shown_chars;
  if (max > 3 && text.size() > max) text = text.substr(0, max - 3) + "...";
  return text;
}

template <typename Json>
void BasicJsonReader<Json>::fail(const std::string& key, const std::string& expected,
                                 const std::string& got) const {
  if (record_.empty()) throw InputError::bad_field(file_, name(key), got, expected);
  throw InputError::bad_record_field(file_, record_, name(key), got, expected);
}

template <typename Json>
void BasicJsonReader<Json>::fail_missing(const std::string& key, const std::string& note) const {
  throw InputError::missing_field(where(), name(key), note);
}

template <typename Json>
void BasicJsonReader<Json>::fail_refused(const std::string& key, const std::string& reason) const {
  throw InputError::refused_field(where(), name(key), reason);
}

namespace {

/// `names`, comma-separated.
std::string comma_list(const std::vector<std::string>& names) {
  std::string list;
  for (const std::string& k : names) list += (list.empty() ? "" : ", ") + k;
  return list;
}

}  // namespace

template <typename Json>
std::optional<std::string> BasicJsonReader<Json>::first_unknown(
    const std::vector<std::string>& known) const {
  for (const auto& [key, value] : object_.items()) {
    if (std::find(known.begin(), known.end(), key) == known.end()) return key;
  }
  return std::nullopt;
}

template <typename Json>
void BasicJsonReader<Json>::refuse_unknown(const std::vector<std::string>& known,
                                           const std::string& lead) const {
  if (const auto key = first_unknown(known)) fail_refused(*key, lead + comma_list(known));
}

template <typename Json>
void BasicJsonReader<Json>::refuse(const std::string& key, const std::string& reason) const {
  if (has(key)) throw InputError::refused_field(where(), name(key), reason);
}

template <typename Json>
void BasicJsonReader<Json>::only(const std::vector<std::string>& known) const {
  if (const auto key = first_unknown(known)) {
    throw InputError::unknown_field(file_, name(*key), comma_list(known));
  }
}

template <typename Json>
const Json& BasicJsonReader<Json>::required(const std::string& key,
                                            const std::string& expected) const {
  if (has(key)) return object_.at(key);
  if (style_.missing_names_expected) fail(key, expected, style_.missing_text);
  fail_missing(key);
}

template <typename Json>
std::string BasicJsonReader<Json>::string(const std::string& key) const {
  return string(key, "a string");
}

template <typename Json>
std::string BasicJsonReader<Json>::string(const std::string& key,
                                          const std::string& expected) const {
  const Json& v = required(key, expected);
  if (!v.is_string()) fail(key, expected, shown(v));
  return v.template get<std::string>();
}

template <typename Json>
std::string BasicJsonReader<Json>::string_or(const std::string& key,
                                             const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

template <typename Json>
std::string BasicJsonReader<Json>::non_empty_string(const std::string& key) const {
  const std::string expected = "a non-empty string";
  const Json& v = required(key, expected);
  if (!v.is_string() || v.template get<std::string>().empty()) fail(key, expected, shown(v));
  return v.template get<std::string>();
}

template <typename Json>
std::string BasicJsonReader<Json>::non_empty_string_or(const std::string& key,
                                                       const std::string& fallback) const {
  return has(key) ? non_empty_string(key) : fallback;
}

template <typename Json>
bool BasicJsonReader<Json>::boolean(const std::string& key) const {
  const Json& v = required(key, "true or false");
  if (!v.is_boolean()) fail(key, "true or false", shown(v));
  return v.template get<bool>();
}

template <typename Json>
bool BasicJsonReader<Json>::boolean_or(const std::string& key, bool fallback) const {
  return has(key) ? boolean(key) : fallback;
}

template <typename Json>
double BasicJsonReader<Json>::number(const std::string& key, const std::function<bool(double)>& ok,
                                     const std::string& expected) const {
  const Json& v = required(key, expected);
  if (!v.is_number() || !std::isfinite(v.template get<double>()) || !ok(v.template get<double>())) {
    fail(key, expected, shown(v));
  }
  return v.template get<double>();
}

template <typename Json>
double BasicJsonReader<Json>::positive_number(const std::string& key) const {
  return number(
      key, [](double v) { return v > 0; }, "a positive number");
}

template <typename Json>
double BasicJsonReader<Json>::positive_number_or(const std::string& key, double fallback) const {
  return has(key) ? positive_number(key) : fallback;
}

template <typename Json>
double BasicJsonReader<Json>::non_negative_number(const std::string& key) const {
  return number(
      key, [](double v) { return v >= 0; }, "a non-negative number");
}

template <typename Json>
int64_t BasicJsonReader<Json>::integer(const std::string& key, int64_t min,
                                       const std::string& expected) const {
  const Json& v = required(key, expected);
  if (v.is_number_unsigned()) {
    const auto u = v.template get<uint64_t>();
    if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) &&
        static_cast<int64_t>(u) >= min) {
      return static_cast<int64_t>(u);
    }
  } else if (v.is_number_integer()) {
    if (v.template get<int64_t>() >= min) return v.template get<int64_t>();
  } else if (style_.whole_floats && v.is_number_float()) {
    const double d = v.template get<double>();
    if (d >= static_cast<double>(min) && d < style_.whole_floats_below && std::floor(d) == d) {
      return static_cast<int64_t>(d);
    }
  }
  fail(key, expected, shown(v));
}

template <typename Json>
int64_t BasicJsonReader<Json>::positive_int(const std::string& key) const {
  return integer(key, 1, "a positive integer");
}

template <typename Json>
int64_t BasicJsonReader<Json>::positive_int_or(const std::string& key, int64_t fallback) const {
  return has(key) ? positive_int(key) : fallback;
}

template <typename Json>
int64_t BasicJsonReader<Json>::non_negative_int(const std::string& key) const {
  return integer(key, 0, "a non-negative integer");
}

template <typename Json>
int64_t BasicJsonReader<Json>::non_negative_int_or(const std::string& key, int64_t fallback) const {
  return has(key) ? non_negative_int(key) : fallback;
}

template <typename Json>
BasicJsonReader<Json> BasicJsonReader<Json>::object(const std::string& key,
                                                    const std::string& expected) const {
  const Json& v = required(key, expected);
  if (!v.is_object()) fail(key, expected, shown(v));
  return BasicJsonReader(v, file_, name(key), style_, record_);
}

template <typename Json>
const Json& BasicJsonReader<Json>::array(const std::string& key,
                                         const std::string& expected) const {
  const Json& v = required(key, expected);
  if (!v.is_array()) fail(key, expected, shown(v));
  return v;
}

template <typename Json>
const Json& BasicJsonReader<Json>::non_empty_array(const std::string& key,
                                                   const std::string& expected) const {
  const Json& v = required(key, expected);
  if (!v.is_array() || v.empty()) fail(key, expected, shown(v));
  return v;
}

template <typename Json>
BasicJsonReader<Json> BasicJsonReader<Json>::element(const std::string& key, size_t i,
                                                     const std::string& expected) const {
  const std::string item = key + "[" + std::to_string(i) + "]";
  const Json& v = object_.at(key).at(i);
  if (!v.is_object()) fail(item, expected, shown(v));
  return BasicJsonReader(v, file_, name(item), style_, record_);
}

template class BasicJsonReader<nlohmann::json>;
template class BasicJsonReader<nlohmann::ordered_json>;

}  // namespace llmcap::base
