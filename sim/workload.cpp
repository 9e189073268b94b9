#include "sim/workload.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <optional>
#include <queue>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>

#include "sim/input_error.h"
#include "sim/length_model.h"
#include "sim/random.h"
#include "sim/trace_jsonl.h"

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
  if (!in) throw InputError::unreadable_file(path.string());
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
/// epoch of that naive time. False on any deviation, and for a year outside 1970..2261, so that
/// the nanoseconds and the difference of any two of them fit 64 bits (found by fuzz_trace).
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
  if (year < 1970 || year > 2261 || month < 1 || month > 12 || day < 1 ||
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

/// The header matches no known format. Its text is not quoted: a file that is not a trace (a
/// workload.path such as ../../etc/passwd) must not have its content printed (docs/reports.md,
/// Output escaping).
std::string header_error(const std::string& file, size_t num_columns, bool allow_lengths) {
  std::string message =
      file + ": line 1: unrecognised header (" + std::to_string(num_columns) +
      (num_columns == 1 ? " column" : " columns") +
      ", not shown: not a known trace format); expected one of: " + quoted(kAzureHeader) +
      " (Azure 2023), " + quoted(kVidurHeader) + " (Vidur)";
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
      throw InputError(file + ": line 1: header " + quoted(kLengthsHeader) +
                       " is a length file without arrival times; expected an arrival trace: " +
                       quoted(kAzureHeader) + " (Azure 2023) or " + quoted(kVidurHeader) +
                       " (Vidur)");
    }
    parsed.format = Format::kLengths;
  } else {
    throw InputError(header_error(file, header_cells.size(), allow_lengths));
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
  if (is_jsonl_trace_path(path)) return load_jsonl_trace(path, options);
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
  if (is_length_model_path(path)) return length_samples(read_length_model(path));
  if (is_jsonl_trace_path(path)) {
    std::vector<LengthSample> lengths;
    for (const RequestSpec& r : load_jsonl_trace(path, {})) {
      lengths.push_back({r.num_prompt_tokens, r.num_output_tokens});
    }
    return lengths;
  }
  const ParsedFile parsed = parse_file(path, /*allow_lengths=*/true);
  std::vector<LengthSample> lengths;
  lengths.reserve(parsed.rows.size());
  for (const Row& row : parsed.rows) {
    lengths.push_back({row.num_prompt_tokens, row.num_output_tokens});
  }
  return lengths;
}

namespace {

constexpr double kNsPerHour = 3600e9;
/// Simulated time ends a little below 2^63 ns (about 292 years), so that rounding an offset to
/// SimTime cannot overflow. Arrivals that would land later end the list.
constexpr double kEndOfTimeNs = 9.2e18;
/// At most one request per nanosecond: faster, gaps round to 0 ns and time stops moving.
constexpr double kMaxRatePerS = 1e9;

/// Maps operational time (the homogeneous process's clock) to real time through the
/// piecewise-linear cumulative multiplier Lambda of a 24-hour profile. Calls must come with
/// non-decreasing tau (the cursor only moves forward).
class ProfileClock {
 public:
  explicit ProfileClock(const std::vector<double>& multipliers) : multipliers_(multipliers) {}

  /// Real time (ns) t with Lambda(t) = tau_ns: in the first hour h with
  /// Lambda(start of h + 1) > tau, t = start of h + (tau - Lambda(start of h)) / m_h.
  /// kEndOfTimeNs when that hour starts at or after it.
  double real_ns(double tau_ns) {
    while (true) {
      if (static_cast<double>(hour_) * kNsPerHour >= kEndOfTimeNs) return kEndOfTimeNs;
      const double m = multipliers_[static_cast<size_t>(hour_ % kHoursPerDay)];
      const double lambda_end_ns = lambda_start_ns_ + m * kNsPerHour;
      if (m > 0 && tau_ns < lambda_end_ns) {
        return static_cast<double>(hour_) * kNsPerHour + (tau_ns - lambda_start_ns_) / m;
      }
      lambda_start_ns_ = lambda_end_ns;
      ++hour_;
    }
  }

 private:
  const std::vector<double>& multipliers_;
  int64_t hour_ = 0;              ///< hour (since offset 0) the cursor is in
  double lambda_start_ns_ = 0.0;  ///< Lambda at the start of that hour, ns of operational time
};

/// Checks the options; `context` prefixes every message ("arrivals: ").
void check_arrival_options(const std::string& context, const ArrivalOptions& options,
                           const std::vector<LengthSample>& lengths) {
  check_positive(context, "rate_per_s", options.rate_per_s);
  if (options.rate_per_s > kMaxRatePerS) {
    throw InputError(context + "rate_per_s: expected at most " + format_number(kMaxRatePerS) +
                     " (one request per ns), got " + format_number(options.rate_per_s));
  }
  if (options.process.kind == ArrivalProcessKind::kGamma) {
    check_positive(context, "cv", options.process.cv);
  }
  if (options.process.kind == ArrivalProcessKind::kWeibull) {
    const double k = options.process.weibull_shape;
    check_positive(context, "weibull_shape", k);
    if (!std::isfinite(std::tgamma(1.0 + 1.0 / k))) {  // overflows below k = 0.0059
      throw InputError(context +
                       "weibull_shape: expected a shape whose Gamma(1 + 1/shape) is "
                       "finite (shape >= 0.006), got " +
                       format_number(k));
    }
  }
  if (!options.num_requests && !options.duration_s) {
    throw InputError(context + "num_requests, duration_s: expected at least one, got neither");
  }
  if (options.num_requests && *options.num_requests < 0) {
    throw InputError(context + "num_requests: expected a non-negative integer, got " +
                     std::to_string(*options.num_requests));
  }
  if (options.duration_s) {
    check_positive(context, "duration_s", *options.duration_s);
    if (*options.duration_s * 1e9 >= kEndOfTimeNs) {
      throw InputError(context + "duration_s: expected less than " +
                       format_number(kEndOfTimeNs * 1e-9) + " s (the end of simulated time), got " +
                       format_number(*options.duration_s));
    }
  }
  const std::vector<double>& profile = options.hourly_multipliers;
  if (!profile.empty()) {
    if (profile.size() != static_cast<size_t>(kHoursPerDay)) {
      throw InputError(context + "hourly_multipliers: expected 24 hourly multipliers, got " +
                       std::to_string(profile.size()));
    }
    double sum = 0;
    for (size_t h = 0; h < profile.size(); ++h) {
      if (!(profile[h] >= 0) || !std::isfinite(profile[h])) {
        throw InputError(context + "hourly_multipliers[" + std::to_string(h) +
                         "]: expected a non-negative number, got " + format_number(profile[h]));
      }
      sum += profile[h];
    }
    if (!(sum > 0)) {
      throw InputError(context +
                       "hourly_multipliers: expected at least one positive "
                       "multiplier, got all 0");
    }
  }
  if (lengths.empty()) {
    throw InputError(context + "lengths: expected at least one sample, got none");
  }
  if (options.sessions) check_session_options(*options.sessions, context + "sessions.");
}

/// The turns of open-loop sessions, in arrival order (ties: generation order), cut at
/// num_requests: add_session() is called with each session's start in non-decreasing order
/// and returns false once no later session can change the first num_requests turns.
class OpenLoopSessions {
 public:
  OpenLoopSessions(const SessionOptions& options, uint64_t seed, SimTime end, int64_t max_requests)
      : turns_(options, seed),
        think_(seed, Stream::kSessionThink),
        think_time_s_(options.think_time_s),
        end_(end),
        max_requests_(max_requests) {}

  bool add_session(SimTime start, const std::vector<LengthSample>& lengths, RandomStream& draws) {
    if (num_settled_ >= max_requests_) return false;
    // Every turn already drawn at or before `start` precedes this session's turns.
    while (!pending_.empty() && pending_.top() <= start.ns()) {
      pending_.pop();
      if (++num_settled_ >= max_requests_) return false;
    }
    Session session;
    turns_.start(session);
    SimTime arrival = start;
    while (!session.done()) {
      std::optional<RequestSpec> spec =
          turns_.next_turn(session, lengths[draws.index(lengths.size())]);
      if (!spec) break;  // the conversation outgrew the model's context
      spec->arrival = arrival;
      requests_.push_back(*spec);
      pending_.push(arrival.ns());
      if (session.done()) break;
      const double think_s = think_.exponential(think_time_s_);
      if (!(static_cast<double>(arrival.ns()) + think_s * 1e9 < kEndOfTimeNs)) break;
      arrival += SimTime::Seconds(think_s);
      if (arrival >= end_) break;
    }
    return true;
  }

  std::vector<RequestSpec> take() {
    std::stable_sort(
        requests_.begin(), requests_.end(),
        [](const RequestSpec& a, const RequestSpec& b) { return a.arrival < b.arrival; });
    if (static_cast<int64_t>(requests_.size()) > max_requests_) {
      requests_.resize(static_cast<size_t>(max_requests_));
    }
    return std::move(requests_);
  }

 private:
  SessionTurns turns_;
  RandomStream think_;
  double think_time_s_;
  SimTime end_;
  int64_t max_requests_;
  std::vector<RequestSpec> requests_;
  /// Arrivals (ns) of the turns drawn and not yet known to precede every later session's.
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<>> pending_;
  int64_t num_settled_ = 0;
};

std::vector<RequestSpec> generate(const ArrivalOptions& options,
                                  const std::vector<LengthSample>& lengths, uint64_t seed,
                                  const std::string& context) {
  check_arrival_options(context, options, lengths);
  RandomStream gaps(seed, Stream::kInterArrival);
  RandomStream draws(seed, Stream::kArrivalLengths);
  // Sessions: the process draws session starts, at rate_per_s / mean_turns.
  const double mean_gap_s =
      (options.sessions ? options.sessions->mean_turns : 1.0) / options.rate_per_s;
  // Gamma: shape 1/cv^2 and scale cv^2 / rate give mean 1/rate and CV cv.
  const double cv2 = options.process.cv * options.process.cv;
  const double gamma_shape = 1.0 / cv2;
  const double gamma_scale_s = cv2 * mean_gap_s;
  // Weibull: mean = scale * Gamma(1 + 1/k).
  const double k = options.process.weibull_shape;
  const double weibull_scale_s = options.process.kind == ArrivalProcessKind::kWeibull
                                     ? mean_gap_s / std::tgamma(1.0 + 1.0 / k)
                                     : 0.0;
  auto next_gap_s = [&] {
    switch (options.process.kind) {
      case ArrivalProcessKind::kPoisson:
        return gaps.exponential(mean_gap_s);
      case ArrivalProcessKind::kGamma:
        return gaps.gamma(gamma_shape, gamma_scale_s);
      case ArrivalProcessKind::kWeibull:
        return gaps.weibull(k, weibull_scale_s);
    }
    return 0.0;  // unreachable: every kind is handled
  };

  const int64_t max_requests = options.num_requests.value_or(INT64_MAX);
  const SimTime end = options.duration_s ? SimTime::Seconds(*options.duration_s) : SimTime::Max();
  std::optional<ProfileClock> clock;
  if (!options.hourly_multipliers.empty()) clock.emplace(options.hourly_multipliers);

  std::vector<RequestSpec> requests;
  constexpr int64_t kMaxReserve = int64_t{1} << 22;  // a huge count should not reserve up front
  if (options.num_requests) {
    requests.reserve(static_cast<size_t>(std::min(*options.num_requests, kMaxReserve)));
  }
  std::optional<OpenLoopSessions> sessions;
  if (options.sessions) sessions.emplace(*options.sessions, seed, end, max_requests);
  SimTime tau = SimTime::Zero();  // operational time: the real time when there is no profile
  for (int64_t i = 0; sessions || i < max_requests; ++i) {
    const double gap_s = next_gap_s();
    if (!(static_cast<double>(tau.ns()) + gap_s * 1e9 < kEndOfTimeNs)) break;
    tau += SimTime::Seconds(gap_s);
    SimTime arrival = tau;
    if (clock) {
      const double real_ns = clock->real_ns(static_cast<double>(tau.ns()));
      if (!(real_ns < kEndOfTimeNs)) break;
      arrival = SimTime::Nanoseconds(std::llround(real_ns));
    }
    if (arrival >= end) break;
    if (sessions) {
      if (!sessions->add_session(arrival, lengths, draws)) break;
      continue;
    }
    const LengthSample& sample = lengths[draws.index(lengths.size())];
    requests.push_back({arrival, sample.num_prompt_tokens, sample.num_output_tokens});
  }
  if (sessions) return sessions->take();
  return requests;
}

}  // namespace

std::vector<RequestSpec> poisson_arrivals(double rate_per_s, int64_t num_requests,
                                          const std::vector<LengthSample>& lengths, uint64_t seed) {
  ArrivalOptions options;
  options.rate_per_s = rate_per_s;
  options.num_requests = num_requests;
  return generate(options, lengths, seed, "poisson_arrivals: ");
}

std::vector<RequestSpec> generate_arrivals(const ArrivalOptions& options,
                                           const std::vector<LengthSample>& lengths,
                                           uint64_t seed) {
  return generate(options, lengths, seed, "arrivals: ");
}

ArrivalProcessKind parse_arrival_process(const std::string& name, const std::string& context) {
  for (size_t i = 0; i < kArrivalProcessNames.size(); ++i) {
    if (name == kArrivalProcessNames[i]) return static_cast<ArrivalProcessKind>(i);
  }
  std::string known;
  for (const std::string_view n : kArrivalProcessNames) {
    known += (known.empty() ? "" : ", ") + std::string(n);
  }
  throw InputError(context + ": unknown arrival process " + quoted(std::string_view(name)) +
                   "; known: " + known);
}

std::string_view to_string(ArrivalProcessKind kind) {
  return kArrivalProcessNames[static_cast<size_t>(kind)];
}

std::vector<RequestSpec> merge_client_classes(
    const std::vector<std::vector<RequestSpec>>& classes) {
  size_t total = 0;
  for (size_t c = 0; c < classes.size(); ++c) {
    for (size_t i = 1; i < classes[c].size(); ++i) {
      if (classes[c][i].arrival < classes[c][i - 1].arrival) {
        throw InputError("classes[" + std::to_string(c) + "]: arrivals not sorted at request " +
                         std::to_string(i));
      }
    }
    total += classes[c].size();
  }
  // Each trace's hash ids in a namespace of its contents (see the header): one salted copy
  // per pool, shared by every request that read it.
  std::vector<std::pair<const std::vector<uint64_t>*, std::shared_ptr<const std::vector<uint64_t>>>>
      salted;
  const auto namespaced = [&](const std::shared_ptr<const std::vector<uint64_t>>& pool) {
    for (const auto& [from, to] : salted) {
      if (from == pool.get()) return to;
    }
    uint64_t salt = prefix_chain(kTraceNamespaceSalt, pool->size());
    for (const uint64_t id : *pool) salt = prefix_chain(salt, id);
    auto copy = std::make_shared<std::vector<uint64_t>>(*pool);
    for (uint64_t& id : *copy) id = prefix_chain(salt, id);
    salted.emplace_back(pool.get(), copy);
    return std::shared_ptr<const std::vector<uint64_t>>(std::move(copy));
  };
  // Concatenate in class order, then a stable sort by arrival: ties keep class order, then
  // the order within the class.
  std::vector<RequestSpec> merged;
  merged.reserve(total);
  for (size_t c = 0; c < classes.size(); ++c) {
    for (RequestSpec r : classes[c]) {
      r.client_class = static_cast<int32_t>(c);
      if (r.prefix.hashes != nullptr) r.prefix.hashes = namespaced(r.prefix.hashes);
      merged.push_back(r);
    }
  }
  std::stable_sort(merged.begin(), merged.end(), [](const RequestSpec& a, const RequestSpec& b) {
    return a.arrival < b.arrival;
  });
  return merged;
}

}  // namespace llmcap::sim
