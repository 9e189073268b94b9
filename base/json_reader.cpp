#include "base/json_reader.h"

#include <cmath>
#include <fstream>
#include <limits>
#include <utility>

namespace llmcap::base {

using nlohmann::json;

json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) throw InputError::unreadable_file(path.string());
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw InputError::malformed_json(path.string(), e.what());
  }
}

json parse_json_text(const std::string& text, const std::string& file) {
  try {
    return json::parse(text);
  } catch (const json::parse_error& e) {
    throw InputError::malformed_json(file, e.what());
  }
}

JsonReader::JsonReader(const json& object, std::string file, std::string prefix,
                       JsonReaderStyle style, std::string record)
    : object_(object),
      file_(std::move(file)),
      prefix_(std::move(prefix)),
      style_(style),
      record_(std::move(record)) {}

std::string JsonReader::where() const { return record_.empty() ? file_ : file_ + ": " + record_; }

std::string JsonReader::name(const std::string& key) const {
  return prefix_.empty() ? key : prefix_ + "." + key;
}

bool JsonReader::has(const std::string& key) const {
  return object_.contains(key) && !(style_.null_is_missing && object_.at(key).is_null());
}

bool JsonReader::has_value(const std::string& key) const {
  return object_.contains(key) && !object_.at(key).is_null();
}

const json& JsonReader::at(const std::string& key) const {
  if (!has(key)) fail_missing(key);
  return object_.at(key);
}

std::string JsonReader::got(const std::string& key) const {
  return has(key) ? shown(object_.at(key)) : style_.missing_text;
}

std::string JsonReader::shown(const json& value) const {
  std::string text = value.dump();
  const size_t max = style_.max_shown_chars;
  if (max > 3 && text.size() > max) text = text.substr(0, max - 3) + "...";
  return text;
}

void JsonReader::fail(const std::string& key, const std::string& expected,
                      const std::string& got) const {
  if (record_.empty()) throw InputError::bad_field(file_, name(key), got, expected);
  throw InputError::bad_record_field(file_, record_, name(key), got, expected);
}

void JsonReader::fail_missing(const std::string& key, const std::string& note) const {
  throw InputError::missing_field(where(), name(key), note);
}

void JsonReader::refuse(const std::string& key, const std::string& reason) const {
  if (has(key)) throw InputError::refused_field(where(), name(key), reason);
}

void JsonReader::only(const std::vector<std::string>& known) const {
  for (const auto& [key, value] : object_.items()) {
    bool listed = false;
    for (const std::string& k : known) listed = listed || k == key;
    if (listed) continue;
    std::string list;
    for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
    throw InputError::unknown_field(file_, name(key), list);
  }
}

const json& JsonReader::required(const std::string& key, const std::string& expected) const {
  if (has(key)) return object_.at(key);
  if (style_.missing_names_expected) fail(key, expected, style_.missing_text);
  fail_missing(key);
}

std::string JsonReader::string(const std::string& key) const {
  const json& v = required(key, "a string");
  if (!v.is_string()) fail(key, "a string", shown(v));
  return v.get<std::string>();
}

std::string JsonReader::string_or(const std::string& key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

std::string JsonReader::non_empty_string(const std::string& key) const {
  const std::string expected = "a non-empty string";
  const json& v = required(key, expected);
  if (!v.is_string() || v.get<std::string>().empty()) fail(key, expected, shown(v));
  return v.get<std::string>();
}

std::string JsonReader::non_empty_string_or(const std::string& key,
                                            const std::string& fallback) const {
  return has(key) ? non_empty_string(key) : fallback;
}

bool JsonReader::boolean(const std::string& key) const {
  const json& v = required(key, "true or false");
  if (!v.is_boolean()) fail(key, "true or false", shown(v));
  return v.get<bool>();
}

bool JsonReader::boolean_or(const std::string& key, bool fallback) const {
  return has(key) ? boolean(key) : fallback;
}

double JsonReader::number(const std::string& key, const std::function<bool(double)>& ok,
                          const std::string& expected) const {
  const json& v = required(key, expected);
  if (!v.is_number() || !std::isfinite(v.get<double>()) || !ok(v.get<double>())) {
    fail(key, expected, shown(v));
  }
  return v.get<double>();
}

double JsonReader::positive_number(const std::string& key) const {
  return number(
      key, [](double v) { return v > 0; }, "a positive number");
}

double JsonReader::positive_number_or(const std::string& key, double fallback) const {
  return has(key) ? positive_number(key) : fallback;
}

double JsonReader::non_negative_number(const std::string& key) const {
  return number(
      key, [](double v) { return v >= 0; }, "a non-negative number");
}

int64_t JsonReader::integer(const std::string& key, int64_t min,
                            const std::string& expected) const {
  const json& v = required(key, expected);
  if (v.is_number_unsigned()) {
    const auto u = v.get<uint64_t>();
    if (u <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) &&
        static_cast<int64_t>(u) >= min) {
      return static_cast<int64_t>(u);
    }
  } else if (v.is_number_integer()) {
    if (v.get<int64_t>() >= min) return v.get<int64_t>();
  } else if (style_.whole_floats && v.is_number_float()) {
    const double d = v.get<double>();
    if (d >= static_cast<double>(min) && d < style_.whole_floats_below && std::floor(d) == d) {
      return static_cast<int64_t>(d);
    }
  }
  fail(key, expected, shown(v));
}

int64_t JsonReader::positive_int(const std::string& key) const {
  return integer(key, 1, "a positive integer");
}

int64_t JsonReader::positive_int_or(const std::string& key, int64_t fallback) const {
  return has(key) ? positive_int(key) : fallback;
}

int64_t JsonReader::non_negative_int(const std::string& key) const {
  return integer(key, 0, "a non-negative integer");
}

int64_t JsonReader::non_negative_int_or(const std::string& key, int64_t fallback) const {
  return has(key) ? non_negative_int(key) : fallback;
}

JsonReader JsonReader::object(const std::string& key) const {
  const json& v = required(key, "an object");
  if (!v.is_object()) fail(key, "an object", shown(v));
  return JsonReader(v, file_, name(key), style_, record_);
}

JsonReader JsonReader::element(const std::string& key, size_t i) const {
  const std::string item = key + "[" + std::to_string(i) + "]";
  const json& v = object_.at(key).at(i);
  if (!v.is_object()) fail(item, "an object", shown(v));
  return JsonReader(v, file_, name(item), style_, record_);
}

}  // namespace llmcap::base
