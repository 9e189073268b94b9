#include "cli/text_layout.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdlib>
#include <string>

#include "base/error.h"

namespace llmcap::cli {
namespace {

bool continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

/// Bytes of `text` that hold its first `columns` code points.
size_t prefix_bytes(std::string_view text, size_t columns) {
  size_t i = 0;
  size_t n = 0;
  while (i < text.size()) {
    if (!continuation(text[i])) {
      if (n == columns) break;
      ++n;
    }
    ++i;
  }
  return i;
}

std::optional<int64_t> whole_number(const char* text) {
  if (text == nullptr || *text == '\0') return std::nullopt;
  int64_t v = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9' || v > kMaxWidth) return std::nullopt;
    v = v * 10 + (*p - '0');
  }
  return v;
}

}  // namespace

size_t choose_width(std::optional<int64_t> flag, const char* columns_env,
                    std::optional<size_t> terminal_columns) {
  if (flag) {
    if (*flag < kMinWidth || *flag > kMaxWidth) {
      throw base::InputError("--width " + std::to_string(*flag) +
                             ": expected a number of columns from " + std::to_string(kMinWidth) +
                             " to " + std::to_string(kMaxWidth));
    }
    return static_cast<size_t>(*flag);
  }
  const std::optional<int64_t> env = whole_number(columns_env);
  if (env && *env >= kMinWidth && *env <= kMaxWidth) return static_cast<size_t>(*env);
  if (terminal_columns && *terminal_columns > 0) {
    return std::clamp<size_t>(*terminal_columns, kMinWidth, kMaxWidth);
  }
  return kDefaultWidth;
}

size_t output_width(std::optional<int64_t> flag) {
  std::optional<size_t> terminal;
  if (::isatty(STDOUT_FILENO) != 0) {
    winsize ws{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) terminal = ws.ws_col;
  }
  return choose_width(flag, std::getenv("COLUMNS"), terminal);
}

CLI::Option* add_width_option(CLI::App* cmd, std::optional<int64_t>& width) {
  return cmd
      ->add_option("--width", width,
                   "Fit the output to N columns (default: $COLUMNS, else the terminal's width, "
                   "else 100)")
      ->option_text("N");
}

size_t display_width(std::string_view text) {
  return static_cast<size_t>(
      std::count_if(text.begin(), text.end(), [](char c) { return !continuation(c); }));
}

std::string ellipsize(std::string_view text, size_t width) {
  if (display_width(text) <= width) return std::string(text);
  if (width == 0) return "";
  std::string cut(text.substr(0, prefix_bytes(text, width - 1)));
  while (!cut.empty() && cut.back() == ' ') cut.pop_back();
  return cut + "\xE2\x80\xA6";  // U+2026 HORIZONTAL ELLIPSIS
}

std::string wrap_line(std::string_view line, size_t width, size_t hanging_indent) {
  if (width == 0 || display_width(line) <= width) return std::string(line);
  hanging_indent = std::min(hanging_indent, width / 2);
  size_t lead = 0;
  while (lead < line.size() && line[lead] == ' ') ++lead;
  std::string out;
  std::string current(std::min(lead, width / 2), ' ');
  size_t current_cols = current.size();
  bool empty = true;  // no word on the current line yet
  const auto next_line = [&] {
    out += (out.empty() ? "" : "\n") + current;
    current.assign(hanging_indent, ' ');
    current_cols = hanging_indent;
    empty = true;
  };
  size_t i = lead;
  size_t gap = 0;  // the spaces before `word` in `line`, kept within a line
  while (i < line.size()) {
    size_t j = line.find(' ', i);
    if (j == std::string_view::npos) j = line.size();
    std::string_view word = line.substr(i, j - i);
    size_t k = j;
    while (k < line.size() && line[k] == ' ') ++k;
    const size_t gap_before = gap;
    gap = k - j;
    i = k;
    if (word.empty()) continue;
    size_t cols = display_width(word);
    if (!empty && current_cols + gap_before + cols > width) next_line();
    while (current_cols + cols > width) {  // longer than a line: cut it where the line ends
      const size_t bytes = prefix_bytes(word, width - current_cols);
      current += word.substr(0, bytes);
      next_line();
      word.remove_prefix(bytes);
      cols = display_width(word);
    }
    if (word.empty()) continue;
    if (!empty) {
      current += std::string(gap_before, ' ');
      current_cols += gap_before;
    }
    current += word;
    current_cols += cols;
    empty = false;
  }
  if (!empty || out.empty()) next_line();
  return out;
}

std::string fit_to_width(std::string_view text, size_t width) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    const bool has_newline = end != std::string_view::npos;
    if (!has_newline) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    size_t lead = 0;
    while (lead < line.size() && line[lead] == ' ') ++lead;
    out += wrap_line(line, width, lead == 0 ? 4 : lead + 2);
    if (has_newline) out += '\n';
    start = end + 1;
  }
  return out;
}

std::string format_table(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right, const std::vector<size_t>& flexible,
                         size_t width) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], display_width(row[c]));
    }
  }
  size_t total = widths.empty() ? 0 : 2 * (widths.size() - 1);
  for (size_t w : widths) total += w;
  constexpr size_t kNarrowest = 8;
  for (size_t c : flexible) {  // in the order given, each down to kNarrowest
    if (c >= widths.size() || widths[c] <= kNarrowest || total <= width) continue;
    const size_t cut = std::min(widths[c] - kNarrowest, total - width);
    widths[c] -= cut;
    total -= cut;
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string cell = ellipsize(row[c], widths[c]);
      const std::string fill(widths[c] - display_width(cell), ' ');
      line += (c == 0 ? "" : "  ") + (c < right.size() && right[c] ? fill + cell : cell + fill);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string first_clause(std::string_view reason) {
  // Drop a `... "name": ` prefix (the row already names the type).
  const size_t quote_colon = reason.find("\": ");
  if (quote_colon != std::string_view::npos &&
      reason.substr(0, quote_colon).find(": ") == std::string_view::npos) {
    reason.remove_prefix(quote_colon + 3);
  }
  int depth = 0;
  for (size_t i = 0; i + 1 < reason.size(); ++i) {
    const char c = reason[i];
    if (c == '(') ++depth;
    if (c == ')' && depth > 0) --depth;
    if (depth == 0 && (c == ';' || c == ',') && reason[i + 1] == ' ') {
      return std::string(reason.substr(0, i));
    }
  }
  return std::string(reason);
}

}  // namespace llmcap::cli
