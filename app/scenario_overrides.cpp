#include "app/scenario_overrides.h"

#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_reader.h"
#include "base/text.h"

namespace llmcap::app {
namespace {

using nlohmann::json;

[[noreturn]] void refuse(const std::string& file, const std::string& override_text,
                         const std::string& reason) {
  throw base::InputError(file + ": --set " + base::printable(override_text) + ": " + reason);
}

/// The dotted path's elements; refuses an empty one.
std::vector<std::string> path_elements(const std::string& key, const std::string& file,
                                       const std::string& override_text) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    const size_t dot = key.find('.', start);
    const std::string part = key.substr(start, dot == std::string::npos ? dot : dot - start);
    if (part.empty()) refuse(file, override_text, "empty path element in \"" + key + "\"");
    out.push_back(part);
    if (dot == std::string::npos) return out;
    start = dot + 1;
  }
}

/// An array index, or -1 when `part` is not a decimal number.
long long index_of(const std::string& part) {
  if (part.size() > 9) return -1;
  for (const char c : part) {
    if (c < '0' || c > '9') return -1;
  }
  return std::stoll(part);
}

}  // namespace

std::string apply_scenario_overrides(const std::string& text, const std::string& file,
                                     const std::vector<std::string>& overrides) {
  json doc = base::parse_json_text(text, file);
  for (const std::string& o : overrides) {
    const size_t eq = o.find('=');
    if (eq == std::string::npos) refuse(file, o, "expected key=value (e.g. slo.ttft_p99_s=1.5)");
    const std::string key = o.substr(0, eq);
    const std::string raw = o.substr(eq + 1);
    if (key.empty()) refuse(file, o, "expected a field name before \"=\"");
    json value = json::parse(raw, nullptr, /*allow_exceptions=*/false);
    if (value.is_discarded()) value = raw;  // plain text: a string
    json* at = &doc;
    std::string walked;
    for (const std::string& part : path_elements(key, file, o)) {
      if (at->is_null()) *at = json::object();
      if (at->is_array()) {
        const long long i = index_of(part);
        if (i < 0 || static_cast<size_t>(i) >= at->size()) {
          refuse(file, o,
                 "\"" + walked + "\" is an array of " + std::to_string(at->size()) +
                     " elements; expected an index from 0 to " +
                     std::to_string(static_cast<long long>(at->size()) - 1) + ", got \"" + part +
                     "\"");
        }
        at = &(*at)[static_cast<size_t>(i)];
      } else if (at->is_object()) {
        at = &(*at)[part];
      } else {
        refuse(file, o,
               "\"" + walked + "\" is " + base::printable(at->dump()) +
                   ", not an object or array; set it whole instead (e.g. --set '" + walked +
                   "={...}')");
      }
      walked += (walked.empty() ? "" : ".") + part;
    }
    *at = std::move(value);
  }
  return doc.dump(2);
}

std::string override_of_field(const std::vector<std::string>& overrides,
                              const std::string& field_path) {
  if (field_path.empty()) return "";
  // "a.b[2].c" -> "a.b.2.c": the dotted form the keys use.
  std::string dotted;
  for (const char c : field_path) {
    if (c == '[') {
      dotted += '.';
    } else if (c != ']') {
      dotted += c;
    }
  }
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    const std::string key = it->substr(0, it->find('='));
    if (key.empty() || dotted.compare(0, key.size(), key) != 0) continue;
    if (dotted.size() == key.size() || dotted[key.size()] == '.') return *it;
  }
  return "";
}

}  // namespace llmcap::app
