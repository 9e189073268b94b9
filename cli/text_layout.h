// Fitting the CLI's text to a width (issue 30, item 7): which width, wrapping prose with a
// hanging indent, and cutting a table cell with an ellipsis. Every command that prints for a
// reader (plan, runs show/compare, catalog list, instances, models) uses these, and only these.
// Widths are display columns: each UTF-8 code point counts one (the CLI's own text is ASCII; a
// name from a user's file may not be, and wide CJK glyphs are counted as one, a known limit).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace CLI {
class App;
class Option;
}  // namespace CLI

namespace llmcap::cli {

/// The narrowest and widest widths --width accepts (columns).
inline constexpr int64_t kMinWidth = 40;
inline constexpr int64_t kMaxWidth = 1000;
/// The width when there is no --width, no usable $COLUMNS and standard output is not a terminal.
inline constexpr size_t kDefaultWidth = 100;

/// The width to print at: `flag` (--width) when given, else `columns_env` ($COLUMNS) when it is
/// a whole number from kMinWidth to kMaxWidth, else `terminal_columns` (the terminal's width,
/// when standard output is one) clamped to [kMinWidth, kMaxWidth], else kDefaultWidth. Throws
/// base::InputError ("--width 0: expected a number of columns from 40 to 1000") for a flag
/// outside that range.
size_t choose_width(std::optional<int64_t> flag, const char* columns_env,
                    std::optional<size_t> terminal_columns);

/// choose_width with $COLUMNS and the terminal width of standard output (ioctl TIOCGWINSZ,
/// only when it is a tty); `flag` is --width (std::nullopt: not given).
size_t output_width(std::optional<int64_t> flag);

/// Adds `--width N` to a command; the value goes to `width` (std::nullopt when not given).
CLI::Option* add_width_option(CLI::App* cmd, std::optional<int64_t>& width);

/// Display columns of `text`: its UTF-8 code points (continuation bytes do not count).
size_t display_width(std::string_view text);

/// `text` cut to at most `width` columns: unchanged when it fits, else its first width - 1
/// columns (at a code point boundary, trailing spaces dropped) and "…".
std::string ellipsize(std::string_view text, size_t width);

/// One line (no '\n') broken at spaces into lines of at most `width` columns; every line after
/// the first starts with `hanging_indent` spaces. A word longer than a line is cut where the
/// line ends. Returns the lines joined with '\n', without a final one.
std::string wrap_line(std::string_view line, size_t width, size_t hanging_indent);

/// Every line of `text` fitted to `width` (wrap_line); a line that wraps hangs its
/// continuation lines 2 columns deeper than its own leading spaces (4 for a line with none),
/// capped so that at least half the width is left for text. Lines that fit are unchanged.
std::string fit_to_width(std::string_view text, size_t width);

/// `rows` (the first one the header) as lines of columns two spaces apart, a column
/// right-aligned where `right[c]`, trailing spaces dropped. While a line would be wider than
/// `width`, the columns named in `flexible` are narrowed in that order (their cells cut with
/// ellipsize), each to no fewer than 8 columns; a line may stay wider when that is not enough
/// (fit_to_width then wraps it). Cells are taken as they are (escape them first).
std::string format_table(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& right, const std::vector<size_t>& flexible,
                         size_t width);

/// The first clause of an infeasibility reason, for a table cell: the text before the first
/// ": " that follows a quoted name (the `model "x" on instance "y": ` prefix is dropped), then
/// up to its first "; " or ", " outside parentheses. E.g. `model "m" on instance "i": weights
/// need 141.1 GB (bf16), instance has ...` -> "weights need 141.1 GB (bf16)".
std::string first_clause(std::string_view reason);

}  // namespace llmcap::cli
