// Request arrivals: real traces, Poisson arrivals with lengths from a file, closed-loop users.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <vector>

#include "sim/sim_time.h"

namespace llmcap::sim {

/// One request as offered to the fleet.
struct RequestSpec {
  SimTime arrival;                ///< offset from the start of the run
  int64_t num_prompt_tokens = 0;  ///< >= 1
  int64_t num_output_tokens = 0;  ///< >= 1 (a trace row with 0 is read as 1: every request
                                  ///< returns at least its first token)
};

/// Prompt and output lengths without arrival times.
struct LengthSample {
  int64_t num_prompt_tokens = 0;
  int64_t num_output_tokens = 0;
};

/// Options for reading a trace.
struct TraceOptions {
  /// Arrival offsets are divided by this (2.0 = twice the request rate). Must be > 0.
  double rate_multiplier = 1.0;
  /// Keep only requests whose (scaled) arrival offset is < window_s. Unset: keep all.
  std::optional<double> window_s;
};

/// Reads an arrival trace. The format is recognised by its header line:
///  - Azure LLM inference trace 2023: `TIMESTAMP,ContextTokens,GeneratedTokens`, TIMESTAMP as
///    `YYYY-MM-DD HH:MM:SS[.fffffff]` (1 to 9 fraction digits, naive time); offsets are taken
///    from the earliest row (the first row of a sorted trace), exact to the nanosecond.
///  - Vidur: `arrived_at,num_prefill_tokens,num_decode_tokens`, arrived_at in seconds from the
///    start of the run (used as is).
/// Lines may end in LF or CRLF; the last may lack its newline; blank lines are skipped.
/// Rows are returned sorted by arrival (stable). Throws InputError naming the file, line,
/// column and value for: a missing/unreadable file, an unknown header (lists the known ones),
/// a length file (no arrivals), a row with a missing or extra column, a non-numeric or
/// negative cell, a prompt of 0 tokens, a bad timestamp, a rate_multiplier or window_s <= 0,
/// and a trace without rows.
std::vector<RequestSpec> load_trace(const std::filesystem::path& path,
                                    const TraceOptions& options = {});

/// Reads prompt/output lengths from any trace above or from a length file with the header
/// `num_prefill_tokens,num_decode_tokens[,...]` (extra columns ignored). Same errors.
std::vector<LengthSample> load_lengths(const std::filesystem::path& path);

/// Poisson arrivals at `rate_per_s`, `num_requests` of them, lengths drawn uniformly (with
/// replacement) from `lengths`; the first arrives one exponential gap after 0. Deterministic
/// for a seed on every platform (std::mt19937_64 and hand-written transforms, sim/random.h):
/// inter-arrival times use their own random stream, length draws another. Throws InputError
/// unless rate_per_s > 0, num_requests >= 0 and !lengths.empty().
std::vector<RequestSpec> poisson_arrivals(double rate_per_s, int64_t num_requests,
                                          const std::vector<LengthSample>& lengths, uint64_t seed);

/// A closed-loop population: each of num_users sends a request, waits for its last token,
/// thinks for an exponentially distributed time (mean think_time_s) and sends the next, until
/// duration_s; lengths drawn from `lengths`. User i starts at a uniformly random offset in
/// [0, think_time_s) so that users do not all arrive at once.
struct ClosedLoopWorkload {
  int64_t num_users = 0;
  double think_time_s = 0;
  double duration_s = 0;
  std::vector<LengthSample> lengths;
};

/// What the simulator is fed: either a fixed list of arrivals (open loop) or a closed loop.
struct Workload {
  std::vector<RequestSpec> open_loop;  ///< used when closed_loop is unset
  std::optional<ClosedLoopWorkload> closed_loop;
};

}  // namespace llmcap::sim
