// Request arrivals: real traces; Poisson, Gamma and Weibull renewal processes with lengths from a
// file, optionally shaped by a 24-hour load profile; several client classes merged into one
// stream; closed-loop users.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sim/prefix_keys.h"
#include "sim/sessions.h"
#include "sim/sim_time.h"

namespace llmcap::sim {

/// One request as offered to the fleet.
struct RequestSpec {
  SimTime arrival;                ///< offset from the start of the run
  int64_t num_prompt_tokens = 0;  ///< >= 1
  int64_t num_output_tokens = 0;  ///< >= 1 (a trace row with 0 is read as 1: every request
                                  ///< returns at least its first token)
  int32_t client_class = 0;       ///< index into the scenario's client classes (0 if one)
  /// Which blocks of its context it shares with other requests (prefix caching,
  /// sim/prefix_keys.h); not keyed by default.
  PrefixIdentity prefix = {};
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
  /// JSON Lines traces: tokens per hashed block of `hash_ids` (Mooncake: 512), > 0.
  int32_t hash_block_tokens = 512;
};

/// Reads an arrival trace. A file whose name ends in `.jsonl` is a JSON Lines trace
/// (sim/trace_jsonl.h: Mooncake's format, one object per line with `timestamp` (ms),
/// `input_length`, `output_length` and the `hash_ids` of the prompt's blocks of
/// options.hash_block_tokens tokens; each request gets a keyed PrefixIdentity). Any other
/// file is a CSV trace recognised by its header line:
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

/// Reads prompt/output lengths from any trace above (a `.jsonl` trace with the default block
/// size), from a length file with the header
/// `num_prefill_tokens,num_decode_tokens[,...]` (extra columns ignored; same errors), or from a
/// length model, a `.json` file (sim/length_model.h: its kLengthModelSamples stratified
/// samples).
std::vector<LengthSample> load_lengths(const std::filesystem::path& path);

/// Poisson arrivals at `rate_per_s`, `num_requests` of them, lengths drawn uniformly (with
/// replacement) from `lengths`; the first arrives one exponential gap after 0. Deterministic
/// for a seed on every platform (std::mt19937_64 and hand-written transforms, sim/random.h):
/// inter-arrival times use their own random stream, length draws another. Throws InputError
/// unless rate_per_s > 0, num_requests >= 0 and !lengths.empty(). The same arrivals as
/// generate_arrivals with a kPoisson process, num_requests set and no load profile.
std::vector<RequestSpec> poisson_arrivals(double rate_per_s, int64_t num_requests,
                                          const std::vector<LengthSample>& lengths, uint64_t seed);

/// The inter-arrival distribution of an open-loop renewal process, chosen by name.
///  - kPoisson: exponential gaps (CV 1).
///  - kGamma: Gamma gaps with a given coefficient of variation c = sd / mean: shape 1/c^2,
///    scale c^2 / rate. c > 1 is burstier than Poisson, c < 1 more regular; c = 1 is Poisson
///    in distribution (not in the numbers drawn). Bursty LLM serving arrivals are modelled
///    this way in AlpaServe (Li et al., OSDI 2023).
///  - kWeibull: Weibull gaps with shape k, scale 1 / (rate * Gamma(1 + 1/k)) so the mean gap
///    is 1 / rate; CV = sqrt(Gamma(1 + 2/k) / Gamma(1 + 1/k)^2 - 1) (k = 1: exponential;
///    k < 1: burstier; k = 0.5: CV sqrt(5)).
enum class ArrivalProcessKind { kPoisson, kGamma, kWeibull };

/// Names of the arrival processes, in enum order: "poisson", "gamma", "weibull".
inline constexpr std::array<std::string_view, 3> kArrivalProcessNames = {"poisson", "gamma",
                                                                         "weibull"};

/// "poisson" | "gamma" | "weibull". Throws InputError("<context>: unknown arrival process "x";
/// known: poisson, gamma, weibull").
ArrivalProcessKind parse_arrival_process(const std::string& name, const std::string& context);

/// The name parse_arrival_process reads.
std::string_view to_string(ArrivalProcessKind kind);

/// An arrival process and its shape parameter.
struct ArrivalProcess {
  ArrivalProcessKind kind = ArrivalProcessKind::kPoisson;
  double cv = 1.0;             ///< kGamma: coefficient of variation of the gaps, > 0
  double weibull_shape = 1.0;  ///< kWeibull: shape k, > 0
};

/// Hours in a load profile.
inline constexpr int kHoursPerDay = 24;

/// Options of generate_arrivals. At least one of num_requests and duration_s must be set;
/// with both, generation stops at whichever comes first.
struct ArrivalOptions {
  ArrivalProcess process;
  /// Mean arrival rate at multiplier 1, requests per second, > 0. With a load profile the
  /// rate in hour h of the day is rate_per_s * hourly_multipliers[h].
  double rate_per_s = 0;
  std::optional<int64_t> num_requests;  ///< stop after this many, >= 0
  std::optional<double> duration_s;     ///< keep only arrivals before this offset, > 0
  /// Empty: a constant rate. Otherwise a 24-hour load profile: exactly 24 multipliers >= 0,
  /// not all 0, for the hours 00:00-01:00, ..., 23:00-24:00 of a day that starts at offset
  /// 0 and repeats. The mean rate over a day is rate_per_s * mean(hourly_multipliers).
  std::vector<double> hourly_multipliers;
  /// Set: the process draws the starts of multi-turn sessions (sim/sessions.h) at
  /// rate_per_s / mean_turns, so the long-run request rate stays rate_per_s; a session's
  /// first turn arrives at its start, each later turn a think time after the previous turn's
  /// arrival (the open loop does not wait for the answer). num_requests and duration_s count
  /// and cut turns. Unset: single requests without prefix identity.
  std::optional<SessionOptions> sessions;
};

/// Open-loop arrivals of a renewal process, lengths drawn uniformly (with replacement) from
/// `lengths`; the first arrives one gap after 0. Arrival offsets are non-decreasing;
/// client_class is 0.
///
/// Load profile: by time rescaling (the standard construction of a non-homogeneous process
/// from a homogeneous one; see the time-rescaling theorem in Brown et al., Neural Computation
/// 14(2), 2002): the process is drawn in "operational time" tau at rate_per_s (gaps summed as
/// integer nanoseconds), and each arrival is placed at the real time t with Lambda(t) = tau,
/// where Lambda(t) = integral_0^t m(s) ds and m(s) is the multiplier of the hour containing
/// s. Lambda is piecewise linear, so t = 3600 h + (tau - Lambda(3600 h)) / m_h in the hour h
/// where Lambda reaches tau; hours with multiplier 0 get no arrivals. For Poisson this is exactly
/// the non-homogeneous Poisson process of rate rate_per_s * m(t); for Gamma and Weibull it keeps
/// the gap distribution's shape (its CV) at the local rate, which thinning would not (thinning a
/// renewal process pushes its CV towards 1).
///
/// Deterministic for a seed on every platform (sim/random.h; the Weibull scale also calls
/// std::tgamma once): gaps from stream kInterArrival, length draws from kArrivalLengths.
/// Generation also stops at the end of simulated time (9.2e18 ns, about 292 years), which
/// only absurd parameters reach.
///
/// Sessions: session starts take the place of arrivals above (gaps from kInterArrival, at
/// rate_per_s / mean_turns); every turn's lengths come from kArrivalLengths (a later turn
/// keeps only the draw's output: its prompt is the previous context plus a new message);
/// turn counts and messages from kSessionTurns and kSessionMessages, think times from
/// kSessionThink. Turns are returned in arrival order (ties: the earlier session first).
///
/// Throws InputError ("arrivals: <field>: expected ..., got <value>") unless
/// 0 < rate_per_s <= 1e9 (faster, gaps round to 0 ns), cv > 0 (kGamma), weibull_shape >= 0.006
/// (kWeibull; Gamma(1 + 1/k) overflows below), num_requests >= 0, 0 < duration_s < 9.2e9,
/// one of them is set, hourly_multipliers is empty or has 24 entries >= 0 that are not all 0
/// (a bad entry is named as hourly_multipliers[i]), lengths is not empty, and the sessions pass
/// check_session_options (named "arrivals: sessions.<field>").
std::vector<RequestSpec> generate_arrivals(const ArrivalOptions& options,
                                           const std::vector<LengthSample>& lengths, uint64_t seed);

/// Merges the arrivals of several client classes into one list in arrival order: every
/// request of classes[c] gets client_class = c. Ties in arrival time go to the lower class
/// index, then to the order within the class, so the result (and the simulator's request
/// ids, which follow arrival order with ties in input order) is fixed by the inputs. Each
/// class's list must be sorted by arrival (as load_trace and generate_arrivals return them);
/// throws InputError ("classes[c]: arrivals not sorted at request i") otherwise.
///
/// A trace's block hash ids (PrefixIdentity::hashes, e.g. a Mooncake trace's, which number
/// each file's blocks from 0) mean something only within their trace, so each pool of them is
/// replaced by a copy in a namespace of its contents: id -> prefix_chain(salt, id), salt a
/// chain of kTraceNamespaceSalt, the pool's size and its ids in order. Two classes that read
/// different traces then share no block, while two that read the same trace (equal pools)
/// still do; within a class nothing changes (equal ids stay equal, distinct ones distinct).
std::vector<RequestSpec> merge_client_classes(const std::vector<std::vector<RequestSpec>>& classes);

/// Salt of merge_client_classes' hash namespaces.
inline constexpr uint64_t kTraceNamespaceSalt = 0x3c6ef372fe94f82bULL;

/// A closed-loop population: each of num_users sends a request, waits for its last token,
/// thinks for an exponentially distributed time (mean think_time_s) and sends the next, until
/// duration_s; lengths drawn from `lengths`. User i starts at a uniformly random offset in
/// [0, think_time_s) so that users do not all arrive at once.
///
/// With `sessions`, each user runs multi-turn conversations (sim/sessions.h): its next request
/// extends its previous one (prompt = previous prompt + output + a new message; output from a
/// fresh draw of `lengths`) and is sent sessions->think_time_s (mean, exponential) after the
/// answer; after a session's last turn the user thinks think_time_s and starts a new session.
/// The simulator draws turn counts and messages from streams kSessionTurns and
/// kSessionMessages of its seed.
///
/// The loop issues at most max_requests requests: the arrival past it throws InputError
/// `<source_file>: field "<duration_field>": the closed loop of N users issued more than M
/// requests before T s of D s; expected at most M requests (raise the limit with
/// --max-requests)` (the planner sets these from plan::Scenario::max_requests; a closed loop's
/// request count depends on its latencies, so it cannot be refused before it runs).
struct ClosedLoopWorkload {
  int64_t num_users = 0;
  double think_time_s = 0;
  double duration_s = 0;
  std::vector<LengthSample> lengths;
  std::optional<SessionOptions> sessions{};  ///< set: multi-turn sessions (checked)
  int64_t max_requests = std::numeric_limits<int64_t>::max();
  std::string source_file{};                           ///< for the max_requests error
  std::string duration_field = "workload.duration_s";  ///< for the max_requests error
};

/// What the simulator is fed: either a fixed list of arrivals (open loop) or a closed loop.
struct Workload {
  std::vector<RequestSpec> open_loop;  ///< used when closed_loop is unset
  std::optional<ClosedLoopWorkload> closed_loop;
};

}  // namespace llmcap::sim
