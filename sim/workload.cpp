#include "sim/workload.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <string_view>

#include "sim/input_error.h"
#include "sim/random.h"

namespace llmcap::sim {
namespace {

constexpr std::string_view kAzureHeader = "TIMESTAMP,ContextTokens,GeneratedTokens";
constexpr std::string_view kVidurHeader = "arrived_at,num_prefill_tokens,num_decode_tokens";
constexpr std::string_view kLengthsHeader = "num_prefill_tokens,num_decode_tokens,...";

enum class Format { kAzure, kVidur, kLengths };

std::string quoted(std::string_view s) { return "\"" + std::string(s) + "\""; }

std::string format_number(double x) {
  std::ostringstream out;
  out << x;
  return out.str();
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// Splits `line` at commas into `cells` (reused; views into `line`).
void split_cells(std::string_view line, std::vector<std::string_view>& cells) {
  cells.clear();
  size_t start = 0;
  while (true) {
    const size_t comma = line.find(',', start);
    if (comma == std::string_view::npos) {
      cells.push_back(trim(line.substr(start)));
      return;
    }
    cells.push_back(trim(line.substr(start, comma - start)));
    start = comma + 1;
  }
}

/// Lines of a text file, with "\n" or "\r\n" endings and with or without a final newline.
class LineReader {
 public:
  explicit LineReader(std::string_view text) : text_(text) {}
  /// Next line without its ending; false at the end of the text.
  bool next(std::string_view& line) {
    if (pos_ >= text_.size()) return false;
    size_t end = text_.find('\n', pos_);
    if (end == std::string_view::npos) end = text_.size();
    line = text_.substr(pos_, end - pos_);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    pos_ = end + 1;
    ++line_number_;
    return true;
  }
  int64_t line_number() const { return line_number_; }

 private:
  std::string_view text_;
  size_t pos_ = 0;
  int64_t line_number_ = 0;
};

std::string read_whole_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw InputError(path.string() + ": cannot read file: it is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot open file");
  try {
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad()) throw InputError(path.string() + ": cannot read file");
    return text;
  } catch (const std::ios_base::failure& e) {  // libstdc++ throws from underflow on EISDIR etc.
    throw InputError(path.string() + ": cannot read file: " + e.what());
  }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

/// Parses `YYYY-MM-DD HH:MM:SS[.f...]` (1 to 9 fraction digits) to nanoseconds since the Unix
/// epoch of that naive time. False on any deviation.
bool parse_timestamp_ns(std::string_view s, int64_t& ns) {
  auto digits = [&](size_t pos, size_t count, int64_t& out) {
    if (pos + count > s.size()) return false;
    out = 0;
    for (size_t i = pos; i < pos + count; ++i) {
      if (s[i] < '0' || s[i] > '9') return false;
      out = out * 10 + (s[i] - '0');
    }
    return true;
  };
  int64_t year, month, day, hour, minute, second;
  if (s.size() < 19 || !digits(0, 4, year) || s[4] != '-' || !digits(5, 2, month) || s[7] != '-' ||
      !digits(8, 2, day) || s[10] != ' ' || !digits(11, 2, hour) || s[13] != ':' ||
      !digits(14, 2, minute) || s[16] != ':' || !digits(17, 2, second)) {
    return false;
  }
  static constexpr int kDaysInMonth[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 ||
      day > kDaysInMonth[month - 1] + (month == 2 && is_leap(year) ? 1 : 0) || hour > 23 ||
      minute > 59 || second > 60) {
    return false;
  }
  int64_t fraction_ns = 0;
  if (s.size() > 19) {
    const size_t num_fraction_digits = s.size() - 20;
    if (s[19] != '.' || num_fraction_digits < 1 || num_fraction_digits > 9 ||
        !digits(20, num_fraction_digits, fraction_ns)) {
      return false;
    }
    for (size_t i = num_fraction_digits; i < 9; ++i) fraction_ns *= 10;
  }
  const int64_t seconds =
      days_from_civil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second;
  ns = seconds * 1'000'000'000 + fraction_ns;
  return true;
}

/// One parsed data row.
struct Row {
  int64_t arrival_ns = 0;  ///< Azure: absolute naive time; Vidur: offset. Unused for lengths.
  double arrival_s = 0;    ///< Vidur only
  int64_t num_prompt_tokens = 0;
  int64_t num_output_tokens = 0;
};

struct ParsedFile {
  Format format = Format::kAzure;
  std::vector<Row> rows;
};

std::string header_error(const std::string& file, std::string_view header, bool allow_lengths) {
  std::string message = file + ": line 1: unrecognised header " + quoted(header) +
                        "; expected one of: " + quoted(kAzureHeader) + " (Azure 2023), " +
                        quoted(kVidurHeader) + " (Vidur)";
  if (allow_lengths) message += ", " + quoted(kLengthsHeader) + " (lengths)";
  return message;
}

ParsedFile parse_file(const std::filesystem::path& path, bool allow_lengths) {
  const std::string file = path.string();
  const std::string text = read_whole_file(path);
  std::string_view body = text;
  if (body.substr(0, 3) == "\xEF\xBB\xBF") body.remove_prefix(3);  // UTF-8 byte-order mark
  LineReader lines(body);

  std::string_view header;
  if (!lines.next(header)) throw InputError(file + ": empty file; expected a header line");
  std::vector<std::string_view> header_cells;
  split_cells(header, header_cells);

  ParsedFile parsed;
  if (header == kAzureHeader) {
    parsed.format = Format::kAzure;
  } else if (header == kVidurHeader) {
    parsed.format = Format::kVidur;
  } else if (header_cells.size() >= 2 && header_cells[0] == "num_prefill_tokens" &&
             header_cells[1] == "num_decode_tokens") {
    if (!allow_lengths) {
      throw InputError(file + ": line 1: header " + quoted(header) +
                       " is a length file without arrival times; expected an arrival trace: " +
                       quoted(kAzureHeader) + " (Azure 2023) or " + quoted(kVidurHeader) +
                       " (Vidur)");
    }
    parsed.format = Format::kLengths;
  } else {
    throw InputError(header_error(file, header, allow_lengths));
  }
  const size_t num_columns = header_cells.size();
  // Columns of the token counts: Azure and Vidur have the arrival first.
  const size_t prompt_column = parsed.format == Format::kLengths ? 0 : 1;
  const size_t output_column = prompt_column + 1;

  auto cell_error = [&](size_t column, std::string_view expected, std::string_view value) {
    return InputError(file + ": line " + std::to_string(lines.line_number()) + ", column " +
                      std::to_string(column + 1) + " (" + quoted(header_cells[column]) +
                      "): expected " + std::string(expected) + ", got " + quoted(value));
  };
  auto parse_count = [&](const std::vector<std::string_view>& cells, size_t column,
                         int64_t minimum) {
    const std::string_view cell = cells[column];
    int64_t value = 0;
    const auto [end, error] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
    if (error != std::errc() || end != cell.data() + cell.size() || cell.empty() || value < 0) {
      throw cell_error(column, "a non-negative integer", cell);
    }
    if (value < minimum) throw cell_error(column, "a positive integer", cell);
    return value;
  };

  std::vector<std::string_view> cells;
  std::string_view line;
  while (lines.next(line)) {
    if (trim(line).empty()) continue;  // blank lines (e.g. a trailing one) carry no row
    split_cells(line, cells);
    if (cells.size() != num_columns) {
      throw InputError(file + ": line " + std::to_string(lines.line_number()) + ": expected " +
                       std::to_string(num_columns) + " columns, got " +
                       std::to_string(cells.size()));
    }
    Row row;
    if (parsed.format == Format::kAzure) {
      if (!parse_timestamp_ns(cells[0], row.arrival_ns)) {
        throw cell_error(0, "a timestamp YYYY-MM-DD HH:MM:SS[.fffffff]", cells[0]);
      }
    } else if (parsed.format == Format::kVidur) {
      const std::string_view cell = cells[0];
      const auto [end, error] =
          std::from_chars(cell.data(), cell.data() + cell.size(), row.arrival_s);
      if (error != std::errc() || end != cell.data() + cell.size() || cell.empty() ||
          !std::isfinite(row.arrival_s) || row.arrival_s < 0) {
        throw cell_error(0, "a non-negative number of seconds", cell);
      }
    }
    row.num_prompt_tokens = parse_count(cells, prompt_column, 1);
    // Every served request returns at least its first token: 0 generated tokens reads as 1.
    row.num_output_tokens = std::max<int64_t>(1, parse_count(cells, output_column, 0));
    parsed.rows.push_back(row);
  }
  if (parsed.rows.empty()) throw InputError(file + ": no rows after the header");
  return parsed;
}

void check_positive(const std::string& context, const char* name, double value) {
  if (!(value > 0) || !std::isfinite(value)) {
    throw InputError(context + name + ": expected a positive number, got " + format_number(value));
  }
}

}  // namespace

std::vector<RequestSpec> load_trace(const std::filesystem::path& path,
                                    const TraceOptions& options) {
  const std::string context = path.string() + ": ";
  check_positive(context, "rate_multiplier", options.rate_multiplier);
  if (options.window_s) check_positive(context, "window_s", *options.window_s);

  const ParsedFile parsed = parse_file(path, /*allow_lengths=*/false);
  std::vector<RequestSpec> requests;
  requests.reserve(parsed.rows.size());
  if (parsed.format == Format::kAzure) {
    int64_t origin_ns = parsed.rows.front().arrival_ns;
    for (const Row& row : parsed.rows) origin_ns = std::min(origin_ns, row.arrival_ns);
    for (const Row& row : parsed.rows) {
      const double offset_ns = static_cast<double>(row.arrival_ns - origin_ns);
      requests.push_back({SimTime::Nanoseconds(std::llround(offset_ns / options.rate_multiplier)),
                          row.num_prompt_tokens, row.num_output_tokens});
    }
  } else {
    for (const Row& row : parsed.rows) {
      requests.push_back({SimTime::Seconds(row.arrival_s / options.rate_multiplier),
                          row.num_prompt_tokens, row.num_output_tokens});
    }
  }
  std::stable_sort(
      requests.begin(), requests.end(),
      [](const RequestSpec& a, const RequestSpec& b) { return a.arrival < b.arrival; });
  if (options.window_s) {
    const SimTime window = SimTime::Seconds(*options.window_s);
    const auto end = std::partition_point(requests.begin(), requests.end(),
                                          [&](const RequestSpec& r) { return r.arrival < window; });
    requests.erase(end, requests.end());
  }
  return requests;
}

std::vector<LengthSample> load_lengths(const std::filesystem::path& path) {
  const ParsedFile parsed = parse_file(path, /*allow_lengths=*/true);
  std::vector<LengthSample> lengths;
  lengths.reserve(parsed.rows.size());
  for (const Row& row : parsed.rows) {
    lengths.push_back({row.num_prompt_tokens, row.num_output_tokens});
  }
  return lengths;
}

std::vector<RequestSpec> poisson_arrivals(double rate_per_s, int64_t num_requests,
                                          const std::vector<LengthSample>& lengths, uint64_t seed) {
  const std::string context = "poisson_arrivals: ";
  check_positive(context, "rate_per_s", rate_per_s);
  if (num_requests < 0) {
    throw InputError(context + "num_requests: expected a non-negative integer, got " +
                     std::to_string(num_requests));
  }
  if (lengths.empty())
    throw InputError(context + "lengths: expected at least one sample, got none");

  RandomStream gaps(seed, Stream::kPoissonInterArrival);
  RandomStream draws(seed, Stream::kPoissonLengths);
  const double mean_gap_s = 1.0 / rate_per_s;
  std::vector<RequestSpec> requests;
  requests.reserve(static_cast<size_t>(num_requests));
  SimTime now = SimTime::Zero();
  for (int64_t i = 0; i < num_requests; ++i) {
    now += SimTime::Seconds(gaps.exponential(mean_gap_s));
    const LengthSample& sample = lengths[draws.index(lengths.size())];
    requests.push_back({now, sample.num_prompt_tokens, sample.num_output_tokens});
  }
  return requests;
}

}  // namespace llmcap::sim
