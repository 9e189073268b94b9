#include "base/text.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iomanip>
#include <sstream>

namespace llmcap::base {

std::string describe(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

std::string fixed(double v, int precision) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

std::string grouped(double v, int decimals) {
  std::string digits = fixed(v, decimals);
  if (digits == "-" + fixed(0.0, decimals)) digits.erase(0, 1);  // no "-0.00"
  const size_t sign = !digits.empty() && digits[0] == '-' ? 1 : 0;
  const size_t point = digits.find('.');
  const size_t int_end = point == std::string::npos ? digits.size() : point;
  std::string out = digits.substr(0, sign);
  for (size_t i = sign; i < int_end; ++i) {
    out += digits[i];
    if ((int_end - i - 1) % 3 == 0 && i + 1 < int_end) out += ',';
  }
  return out + digits.substr(int_end);
}

std::string money(const std::string& currency, double amount, bool whole_from_thousand) {
  const bool whole = whole_from_thousand && std::abs(amount) >= 999.995;
  return currency + " " + grouped(amount, whole ? 0 : 2);
}

std::string ascii_lower(std::string s) {
  for (char& c : s) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return s;
}

std::string plural(int64_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string significant(double v, int digits) {
  if (v == 0 || !std::isfinite(v)) return describe(v);
  const int magnitude = static_cast<int>(std::floor(std::log10(std::fabs(v))));
  if (magnitude >= digits) return grouped(v, 0);
  char buf[400];
  std::snprintf(buf, sizeof buf, "%.*f", std::clamp(digits - 1 - magnitude, 0, 30), v);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (s.back() == '0') s.pop_back();
    if (s.back() == '.') s.pop_back();
  }
  return s;
}

std::string gb(double bytes) { return significant(bytes / 1e9, 4) + " GB"; }

std::string gb_per_s(double bytes_per_s) { return significant(bytes_per_s / 1e9, 4) + " GB/s"; }

}  // namespace llmcap::base

namespace llmcap::base {
namespace {

/// The code point of the UTF-8 sequence at the start of `s` and its length in bytes; length 0
/// when `s` does not start with a well-formed sequence (overlong forms, surrogates and values
/// beyond U+10FFFF are not well-formed).
struct CodePoint {
  char32_t value = 0;
  size_t length = 0;
};

CodePoint decode_utf8(std::string_view s) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return {b0, 1};
  size_t n = 0;
  char32_t cp = 0;
  char32_t min = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2, cp = b0 & 0x1F, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3, cp = b0 & 0x0F, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    return {};
  }
  if (s.size() < n) return {};
  for (size_t i = 1; i < n; ++i) {
    if ((byte(i) & 0xC0) != 0x80) return {};
    cp = (cp << 6) | (byte(i) & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return {};
  return {cp, n};
}

/// Whether printable() writes `cp` as an escape.
bool needs_escape(char32_t cp) {
  return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
         (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}

void append_escape(std::string& out, char32_t cp) {
  char buf[16];
  switch (cp) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  if (cp <= 0x7F) {
    std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(cp));
  } else {
    std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
  }
  out += buf;
}

void append_byte_escape(std::string& out, unsigned char b) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(b));
  out += buf;
}

/// Calls on_char(code point, its bytes) for each well-formed sequence of `text` and
/// on_invalid(byte) for each byte that does not start one.
template <typename OnChar, typename OnInvalid>
void for_each_char(std::string_view text, OnChar on_char, OnInvalid on_invalid) {
  size_t i = 0;
  while (i < text.size()) {
    const CodePoint c = decode_utf8(text.substr(i));
    if (c.length == 0) {
      on_invalid(static_cast<unsigned char>(text[i]));
      ++i;
    } else {
      on_char(c.value, text.substr(i, c.length));
      i += c.length;
    }
  }
}

}  // namespace

std::string printable(std::string_view text, bool keep_line_breaks) {
  std::string out;
  out.reserve(text.size());
  for_each_char(
      text,
      [&](char32_t cp, std::string_view bytes) {
        if (needs_escape(cp) && !(keep_line_breaks && (cp == '\n' || cp == '\t'))) {
          append_escape(out, cp);
        } else {
          out += bytes;
        }
      },
      [&](unsigned char b) { append_byte_escape(out, b); });
  return out;
}

std::string escape_markdown(std::string_view text, bool block_start) {
  const std::string plain = printable(text);
  std::string out;
  out.reserve(plain.size() + 8);
  size_t i = 0;
  for (; block_start && i < plain.size() && plain[i] == ' '; ++i) {
    out += "&#32;";  // not an indented code block
  }
  // A block marker at the start: a list item, a setext underline or an ordered list item.
  size_t digits = i;
  while (digits < plain.size() && digits - i < 10 && plain[digits] >= '0' && plain[digits] <= '9') {
    ++digits;
  }
  const bool ordered = block_start && digits > i && digits < plain.size() &&
                       (plain[digits] == '.' || plain[digits] == ')');
  for (size_t k = i; k < plain.size(); ++k) {
    const char c = plain[k];
    const bool marker =
        (block_start && k == i && (c == '-' || c == '+' || c == '=')) || (ordered && k == digits);
    if (marker || std::string_view("\\`*_[]<>#|~&").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string escape_xml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for_each_char(
      text,
      [&](char32_t cp, std::string_view bytes) {
        switch (cp) {
          case '&':
            out += "&amp;";
            return;
          case '<':
            out += "&lt;";
            return;
          case '>':
            out += "&gt;";
            return;
          case '"':
            out += "&quot;";
            return;
          case '\'':
            out += "&apos;";
            return;
          case '\t':
          case '\n':
          case '\r':
            out += bytes;
            return;
          default:
            break;
        }
        if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0xFFFE || cp == 0xFFFF) {
          append_escape(out, cp);
        } else {
          out += bytes;
        }
      },
      [&](unsigned char b) { append_byte_escape(out, b); });
  return out;
}

std::string csv_cell(std::string_view text, bool always_quote) {
  const bool neutralise =
      !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos;
  const bool quote =
      always_quote || neutralise || text.find_first_of(",\";\t\n\r") != std::string_view::npos;
  if (!quote) return std::string(text);
  std::string out = neutralise ? "\"'" : "\"";
  for (char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

bool is_given_fleet_id(const std::string& id) { return id.rfind(kGivenFleetPrefix, 0) == 0; }

std::string sized_fleet(int64_t num_instances, const std::string& instance_type) {
  const std::string count = std::to_string(num_instances);
  if (is_given_fleet_id(instance_type)) {
    return instance_type + " (" + count + (num_instances == 1 ? " instance)" : " instances)");
  }
  return count + " x " + instance_type;
}

}  // namespace llmcap::base
