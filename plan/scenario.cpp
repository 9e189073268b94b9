#include "plan/scenario.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/json_reader.h"
#include "model/input_error.h"
#include "plan/spec_parsers.h"
#include "sim/input_error.h"
#include "sim/random.h"
#include "sim/trace_jsonl.h"
#include "sim/workload.h"

namespace llmcap::plan {
namespace {

using nlohmann::json;

/// Typed access to one JSON object with messages that name the file and the dotted field
/// (base::JsonReader in its default style: a missing field reads `field "x": missing`).
using Fields = base::JsonReader;

// Documented maxima of workload fields (docs/scenarios.md, "Bounds").
constexpr int64_t kMaxRequests = 100'000'000;    ///< workload.num_requests
constexpr int64_t kMaxUsers = 1'000'000;         ///< workload.num_users
constexpr double kMaxThinkTimeS = 1e8;           ///< workload.think_time_s
constexpr double kMaxClosedLoopDurationS = 4e9;  ///< closed_loop workload.duration_s
constexpr int64_t kMaxBlockTokens = 1 << 20;     ///< sessions.block_tokens, hash_block_tokens

sim::Slo parse_slo(const Fields& slo) {
  slo.only({"ttft_p99_s", "tpot_p99_s"});
  sim::Slo s;
  s.ttft_s = slo.positive_number("ttft_p99_s");
  s.tpot_s = slo.positive_number("tpot_p99_s");
  return s;
}

/// The kinds a workload (or, with in_class, a client class) may have, for messages.
std::string known_kinds(bool in_class) {
  std::string known = "trace";
  for (const std::string_view name : sim::kArrivalProcessNames) known += ", " + std::string(name);
  if (!in_class) known += ", closed_loop, classes";
  return known;
}

/// "load_profile": exactly 24 finite numbers >= 0, not all 0.
std::vector<double> parse_load_profile(const Fields& w) {
  const std::string key = "load_profile";
  const json& v = w.at(key);
  if (!v.is_array()) w.fail(key, "a list of 24 hourly multipliers", v.dump());
  if (v.size() != static_cast<size_t>(sim::kHoursPerDay)) {
    w.fail(key, "24 hourly multipliers (one per hour of the day)",
           std::to_string(v.size()) + " entries");
  }
  std::vector<double> profile;
  double sum = 0;
  for (size_t h = 0; h < v.size(); ++h) {
    const json& m = v[h];
    if (!m.is_number() || !(m.get<double>() >= 0) || !std::isfinite(m.get<double>())) {
      w.fail(key + "[" + std::to_string(h) + "]", "a non-negative number", m.dump());
    }
    profile.push_back(m.get<double>());
    sum += profile.back();
  }
  if (!(sum > 0)) w.fail(key, "at least one positive multiplier", "all 0");
  return profile;
}

/// "sessions": multi-turn conversations (sim::SessionOptions); think_time_s has no default.
sim::SessionOptions parse_sessions(const Fields& w) {
  const Fields f = w.object("sessions");
  f.only({"turns", "mean_turns", "think_time_s", "new_tokens_per_turn", "block_tokens"});
  sim::SessionOptions s;
  if (f.has("turns")) {
    const std::string turns = f.string("turns");
    if (turns == "fixed") {
      s.turn_count = sim::TurnCountKind::kFixed;
    } else if (turns != "geometric") {
      f.fail("turns", "\"geometric\" or \"fixed\"", f.got("turns"));
    }
  }
  if (f.has("mean_turns")) {
    s.mean_turns = f.number(
        "mean_turns", [](double x) { return x >= 1 && x <= 1e4; }, "a number of turns in [1, 1e4]");
    if (s.turn_count == sim::TurnCountKind::kFixed && s.mean_turns != std::floor(s.mean_turns)) {
      f.fail("mean_turns", "a whole number of turns (turns \"fixed\")", f.got("mean_turns"));
    }
  }
  if (!f.has("think_time_s")) {
    f.fail_missing("think_time_s",
                   "the mean seconds between an answer and the next turn (no default: no "
                   "published measurement of chat think times)");
  }
  s.think_time_s = f.number(
      "think_time_s", [](double x) { return x >= 0 && x <= kMaxThinkTimeS; },
      "a number of seconds in [0, 1e8]");
  if (f.has("new_tokens_per_turn")) {
    s.mean_new_tokens_per_turn = f.number(
        "new_tokens_per_turn", [](double x) { return x >= 1 && x <= 1e7; },
        "a mean number of tokens in [1, 1e7]");
  }
  if (f.has("block_tokens")) {
    s.block_tokens = static_cast<int32_t>(f.integer("block_tokens", 1, "a positive integer"));
    if (f.at("block_tokens").get<int64_t>() > kMaxBlockTokens) {
      f.fail("block_tokens", "a positive integer up to 1048576", f.got("block_tokens"));
    }
  }
  return s;
}

/// Where a scenario's file fields are looked up (find_scenario_file), and where the ones not
/// found are noted.
struct FileContext {
  std::filesystem::path scenario_dir;
  std::filesystem::path data_dir;
  std::vector<MissingFile>* missing;

  /// The file `f`'s string field `key` names; an empty value is refused, a file not found is
  /// noted in `missing` and its scenario-relative path returned.
  std::filesystem::path resolve(const Fields& f, const std::string& key,
                                ScenarioFileKind kind) const {
    const std::string value = f.string(key);
    if (value.empty()) f.fail(key, expected_scenario_file(kind), "\"\"");
    ScenarioFileLookup found = find_scenario_file(value, kind, scenario_dir, data_dir);
    if (!found.found) {
      missing->push_back({f.name(key), value, kind, std::move(found.looked), !data_dir.empty()});
    }
    return found.path;
  }
};

WorkloadSpec parse_workload(const Fields& w, const FileContext& files, bool in_class);

/// The fields a workload of `kind` may have (`arrival`: kind is an arrival process), and in a
/// client class also its name and SLO.
std::vector<std::string> workload_fields(const std::string& kind, bool arrival, bool in_class) {
  std::vector<std::string> known = {"kind"};
  if (kind == "trace") {
    known.insert(known.end(), {"path", "rate_multiplier", "window_s", "hash_block_tokens"});
  }
  if (arrival) {
    known.insert(known.end(), {"lengths_path", "rate_per_s", "num_requests", "duration_s", "cv",
                               "shape", "load_profile", "sessions"});
  }
  if (kind == "closed_loop") {
    known.insert(known.end(),
                 {"lengths_path", "num_users", "think_time_s", "duration_s", "sessions"});
  }
  if (kind == "classes") known.push_back("classes");
  if (in_class) {
    known.insert(known.end(), {"name", "slo"});
  } else {
    known.push_back("over_context");
  }
  return known;
}

/// "classes": a non-empty list of objects, each a source (trace or arrival process) with a
/// unique "name" and its own "slo".
std::vector<ClientClassSpec> parse_classes(const Fields& w, const FileContext& files) {
  const json& list = w.at("classes");
  if (!list.is_array() || list.empty()) {
    w.fail("classes", "a non-empty list of client classes", list.dump());
  }
  std::vector<ClientClassSpec> classes;
  for (size_t i = 0; i < list.size(); ++i) {
    const Fields c = w.element("classes", i);
    ClientClassSpec spec;
    spec.name = c.string("name");
    if (spec.name.empty()) c.fail("name", "a non-empty string", "\"\"");
    for (const ClientClassSpec& other : classes) {
      if (other.name == spec.name) {
        c.fail("name", "a name no other class has", "\"" + spec.name + "\" again");
      }
    }
    spec.workload = parse_workload(c, files, /*in_class=*/true);
    if (!c.has("slo")) {
      c.fail_missing("slo", "every client class needs its own SLO (ttft_p99_s, tpot_p99_s)");
    }
    spec.slo = parse_slo(c.object("slo"));
    classes.push_back(std::move(spec));
  }
  return classes;
}

WorkloadSpec parse_workload(const Fields& w, const FileContext& files, bool in_class) {
  WorkloadSpec spec;
  const std::string kind = w.string("kind");
  const std::string kind_text = "\"" + kind + "\"";
  std::optional<sim::ArrivalProcessKind> process;
  for (size_t i = 0; i < sim::kArrivalProcessNames.size(); ++i) {
    if (kind == sim::kArrivalProcessNames[i]) process = static_cast<sim::ArrivalProcessKind>(i);
  }
  const bool known = kind == "trace" || process.has_value() ||
                     (!in_class && (kind == "closed_loop" || kind == "classes"));
  if (!known) w.fail("kind", "one of: " + known_kinds(in_class), kind_text);
  // Parameters of one kind are refused with another rather than silently ignored.
  if (!process || *process != sim::ArrivalProcessKind::kGamma) {
    w.refuse("cv", "not allowed with kind " + kind_text + " (only with \"gamma\")");
  }
  if (!process || *process != sim::ArrivalProcessKind::kWeibull) {
    w.refuse("shape", "not allowed with kind " + kind_text + " (only with \"weibull\")");
  }
  if (!process) {
    const std::string where = kind == "classes" ? "; give each class its own" : "";
    w.refuse("load_profile", "not allowed with kind " + kind_text +
                                 " (only with an arrival process: poisson, gamma, weibull" + where +
                                 ")");
  }
  if (kind != "classes") w.refuse("classes", "not allowed with kind " + kind_text);
  if (!process && kind != "closed_loop") {
    w.refuse("sessions", "not allowed with kind " + kind_text +
                             " (only with an arrival process or closed_loop" +
                             (kind == "classes" ? "; give each class its own" : "") + ")");
  }
  if (kind != "trace") {
    w.refuse("hash_block_tokens", "not allowed with kind " + kind_text + " (only with \"trace\")");
  }
  w.only(workload_fields(kind, process.has_value(), in_class));

  if (kind == "trace") {
    spec.kind = WorkloadSpec::Kind::kTrace;
    spec.path = files.resolve(w, "path", ScenarioFileKind::kTrace);
    if (w.has("rate_multiplier")) {
      spec.rate_multiplier = w.positive_number("rate_multiplier");
      if (spec.rate_multiplier < 1e-3 || spec.rate_multiplier > 1e6) {
        w.fail("rate_multiplier", "a number in [0.001, 1e6]", w.got("rate_multiplier"));
      }
    }
    if (w.has("window_s")) {
      spec.window_s = w.positive_number("window_s");
      if (*spec.window_s >= 9.2e9) {
        w.fail("window_s", "a positive number below 9.2e9 (the end of simulated time)",
               w.got("window_s"));
      }
    }
    if (w.has("hash_block_tokens")) {
      if (!sim::is_jsonl_trace_path(spec.path)) {
        w.fail_refused("hash_block_tokens", "only for a JSON Lines trace (a .jsonl path)");
      }
      const int64_t block = w.integer("hash_block_tokens", 1, "a positive integer");
      if (block > kMaxBlockTokens) {
        w.fail("hash_block_tokens", "a positive integer up to 1048576", w.got("hash_block_tokens"));
      }
      spec.hash_block_tokens = static_cast<int32_t>(block);
    }
  } else if (process) {
    spec.kind = WorkloadSpec::Kind::kArrivalProcess;
    spec.arrival.kind = *process;
    spec.path = files.resolve(w, "lengths_path", ScenarioFileKind::kLengths);
    spec.rate_per_s = w.positive_number("rate_per_s");
    if (spec.rate_per_s > 1e9) {
      w.fail("rate_per_s", "a positive number up to 1e9 (one request per ns)",
             w.at("rate_per_s").dump());
    }
    if (!w.has("num_requests") && !w.has("duration_s")) {
      w.fail_missing("num_requests",
                     "expected num_requests (an integer > 0), duration_s (a number > 0) or both");
    }
    if (w.has("num_requests")) {
      spec.num_requests = w.positive_int("num_requests");
      if (spec.num_requests > kMaxRequests) {
        w.fail("num_requests", "a positive integer up to 1e8", w.at("num_requests").dump());
      }
    }
    if (w.has("duration_s")) {
      spec.duration_s = w.positive_number("duration_s");
      if (spec.duration_s >= 9.2e9) {
        w.fail("duration_s", "a positive number below 9.2e9 (the end of simulated time)",
               w.at("duration_s").dump());
      }
    }
    if (*process == sim::ArrivalProcessKind::kGamma) spec.arrival.cv = w.positive_number("cv");
    if (*process == sim::ArrivalProcessKind::kWeibull) {
      spec.arrival.weibull_shape = w.positive_number("shape");
      if (spec.arrival.weibull_shape < 0.006) {  // Gamma(1 + 1/shape) overflows below
        w.fail("shape", "a number >= 0.006", w.at("shape").dump());
      }
    }
    if (w.has("load_profile")) spec.load_profile = parse_load_profile(w);
    if (w.has("sessions")) spec.sessions = parse_sessions(w);
  } else if (kind == "closed_loop") {
    spec.kind = WorkloadSpec::Kind::kClosedLoop;
    spec.path = files.resolve(w, "lengths_path", ScenarioFileKind::kLengths);
    spec.num_users = w.positive_int("num_users");
    if (spec.num_users > kMaxUsers) {
      w.fail("num_users", "a positive integer up to 1e6", w.at("num_users").dump());
    }
    // A think time is drawn up to 37 times its mean (an exponential draw from a 53-bit
    // uniform): both bounds keep every arrival within simulated time (9.2e9 s).
    spec.think_time_s = w.non_negative_number("think_time_s");
    if (spec.think_time_s > kMaxThinkTimeS) {
      w.fail("think_time_s",
             "a number of seconds in [0, 1e8] (a think time is drawn up to 37 times its mean and "
             "must stay within simulated time, 9.2e9 s)",
             w.got("think_time_s"));
    }
    spec.duration_s = w.positive_number("duration_s");
    if (spec.duration_s > kMaxClosedLoopDurationS) {
      w.fail("duration_s", "a number of seconds in (0, 4e9] (within simulated time, 9.2e9 s)",
             w.got("duration_s"));
    }
    if (w.has("sessions")) spec.sessions = parse_sessions(w);
  } else {  // "classes"
    spec.classes = parse_classes(w, files);
    spec.kind = spec.classes.front().workload.kind;
    spec.path = spec.classes.front().workload.path;
  }
  if (!in_class && w.has("over_context")) {
    const std::string mode = w.string("over_context");
    if (mode == "clip") {
      spec.over_context = WorkloadSpec::OverContext::kClip;
    } else if (mode != "refuse") {
      w.fail("over_context", "\"refuse\" or \"clip\"", w.got("over_context"));
    }
  }
  return spec;
}

/// The engine limits of a "serving" object (the scenario's, or a fleet group's overrides) on
/// top of `serving`.
void parse_serving_limits(const Fields& sv, sim::ServingConfig& serving) {
  if (sv.has("max_num_seqs")) serving.max_num_seqs = sv.positive_int("max_num_seqs");
  if (sv.has("max_num_batched_tokens")) {
    serving.max_num_batched_tokens = sv.positive_int("max_num_batched_tokens");
  }
  if (sv.has("block_size_tokens")) serving.block_size_tokens = sv.positive_int("block_size_tokens");
  if (sv.has("prefix_caching")) serving.prefix_caching = sv.boolean("prefix_caching");
  if (sv.has("schedule_order")) {
    const std::string order = sv.string("schedule_order");
    if (order != "fcfs" && order != "longest_prefix") {
      sv.fail("schedule_order", "\"fcfs\" or \"longest_prefix\"", sv.got("schedule_order"));
    }
    serving.longest_prefix_first = order == "longest_prefix";
  }
  if (sv.has("batching")) {  // sim::InputError is plan::InputError: it passes through
    serving.policy = sim::parse_batching_policy(
        sv.string("batching"), sv.file() + ": field \"" + sv.name("batching") + "\"");
  }
}

/// "serving.kv_offload_bytes": host bytes per GPU instance for KV offload (0 when absent).
int64_t parse_kv_offload_bytes(const Fields& sv) {
  if (!sv.has("kv_offload_bytes")) return 0;
  return std::llround(sv.number(
      "kv_offload_bytes", [](double v) { return v >= 0 && v <= 9e18; },
      "a number of bytes in [0, 9e18] (0: no KV offload)"));
}

/// Which engine defaults the scenario's "serving" overrides (serving_for), and the serving
/// fields that are the scenario's alone (kv_offload_bytes).
void mark_serving_fields(const Fields& sv, Scenario& s) {
  s.kv_offload_bytes = parse_kv_offload_bytes(sv);
  s.batching_set = sv.has("batching");
  s.max_num_seqs_set = sv.has("max_num_seqs");
  s.max_num_batched_tokens_set = sv.has("max_num_batched_tokens");
  s.prefix_caching_set = sv.has("prefix_caching");
  s.block_size_set = sv.has("block_size_tokens");
  s.schedule_order_set = sv.has("schedule_order");
}

sim::RouterKind parse_router_field(const Fields& f, const std::string& key) {
  // sim::InputError is plan::InputError: it passes through.
  return sim::parse_router(f.string(key), f.file() + ": field \"" + f.name(key) + "\"");
}

/// "serving.tensor_parallel": "auto", "search", or {"instance id": degree, ...}.
TensorParallelSpec parse_tensor_parallel(const Fields& sv) {
  const std::string key = "tensor_parallel";
  const std::string expected =
      "\"auto\", \"search\" or an object of tensor-parallel degrees by instance id, e.g. "
      "{\"aws-p5.48xlarge\": 2}";
  const json& v = sv.at(key);
  TensorParallelSpec spec;
  if (v.is_string()) {
    const std::string mode = v.get<std::string>();
    if (mode == "auto") return spec;
    if (mode == "search") {
      spec.mode = TensorParallelSpec::Mode::kSearch;
      return spec;
    }
    sv.fail(key, expected, v.dump());
  }
  if (!v.is_object() || v.empty()) sv.fail(key, expected, v.dump());
  spec.mode = TensorParallelSpec::Mode::kPerType;
  const Fields per_type = sv.object(key);
  for (const auto& [id, degree] : v.items()) {
    if (!degree.is_number_integer() || degree.get<int64_t>() < 1 || degree.get<int64_t>() > 1024) {
      per_type.fail(id, "a tensor-parallel degree (an integer from 1 to 1024)", degree.dump());
    }
    spec.per_type[id] = static_cast<int>(degree.get<int64_t>());
  }
  return spec;
}

/// The groups of one list of "fleet" ("groups", "prefill" or "decode").
void parse_fleet_groups(const Fields& fleet, const std::string& key, sim::ReplicaRole role,
                        const sim::ServingConfig& serving, FleetSpec& out) {
  const json& list = fleet.at(key);
  if (!list.is_array() || list.empty()) {
    fleet.fail(key, "a non-empty list of groups ({\"instance\": id, \"count\": n, ...})",
               list.dump());
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const Fields g = fleet.element(key, i);
    g.only({"instance", "count", "tensor_parallel", "serving"});
    FleetGroupSpec spec;
    spec.field = fleet.name(key + "[" + std::to_string(i) + "]");
    spec.instance = g.string("instance");
    if (spec.instance.empty()) g.fail("instance", "an instance id", "\"\"");
    spec.count = g.positive_int("count");
    if (g.has("tensor_parallel")) {
      const json& tp = g.at("tensor_parallel");
      if (!tp.is_number_integer() || tp.get<int64_t>() < 1 || tp.get<int64_t>() > 1024) {
        g.fail("tensor_parallel", "a tensor-parallel degree (an integer from 1 to 1024)",
               tp.dump());
      }
      spec.tensor_parallel = static_cast<int>(tp.get<int64_t>());
    }
    spec.serving = serving;
    if (g.has("serving")) {
      const Fields sv = g.object("serving");
      sv.refuse("router",
                "not allowed in a group; routers are fleet-wide (serving.router, "
                "fleet.decode_router)");
      sv.refuse("tensor_parallel", "not allowed here; give the group's own \"tensor_parallel\"");
      sv.refuse("expert_parallel", "not allowed in a group; it is scenario-wide (serving)");
      sv.only({"max_num_seqs", "max_num_batched_tokens", "block_size_tokens", "batching",
               "prefix_caching", "schedule_order"});
      parse_serving_limits(sv, spec.serving);
    }
    if (role == sim::ReplicaRole::kDecode && spec.serving.policy == sim::BatchingPolicy::kStatic) {
      // Prefilled requests reach a decode replica one by one; static batches cannot take them.
      const std::string where = g.has("serving") && g.object("serving").has("batching")
                                    ? g.name("serving.batching")
                                    : std::string("serving.batching");
      throw InputError::refused_field(
          fleet.file(), where,
          "\"static\" cannot serve the decode pool (" + spec.field +
              "): prefilled requests arrive there one by one and would join a batch in "
              "progress; expected continuous or chunked_prefill");
    }
    spec.role = role;
    out.groups.push_back(std::move(spec));
  }
}

/// "fleet": {"groups": [...]} or {"prefill": [...], "decode": [...], "decode_router": name}.
FleetSpec parse_fleet(const Fields& f, const sim::ServingConfig& serving, sim::RouterKind router) {
  const Fields fleet = f.object("fleet");
  fleet.only({"groups", "prefill", "decode", "decode_router"});
  FleetSpec spec;
  spec.decode_router = router;
  if (fleet.has("groups")) {
    for (const char* pool : {"prefill", "decode"}) {
      fleet.refuse(pool,
                   "not allowed beside \"groups\" (a fleet is either mixed groups or "
                   "disaggregated prefill and decode pools)");
    }
    fleet.refuse("decode_router", "only with \"prefill\" and \"decode\" pools");
    parse_fleet_groups(fleet, "groups", sim::ReplicaRole::kUnified, serving, spec);
    return spec;
  }
  if (!fleet.has("prefill") && !fleet.has("decode")) {
    throw InputError::bad_field(
        f.file(), "fleet", "neither",
        "\"groups\" (a mixed fleet) or \"prefill\" and \"decode\" (disaggregated pools)");
  }
  if (!fleet.has("prefill") || !fleet.has("decode")) {
    const std::string missing = fleet.has("prefill") ? "decode" : "prefill";
    fleet.fail_missing(missing, "a disaggregated fleet needs both a prefill and a decode pool");
  }
  spec.disaggregated = true;
  parse_fleet_groups(fleet, "prefill", sim::ReplicaRole::kPrefill, serving, spec);
  parse_fleet_groups(fleet, "decode", sim::ReplicaRole::kDecode, serving, spec);
  if (fleet.has("decode_router")) spec.decode_router = parse_router_field(fleet, "decode_router");
  return spec;
}

}  // namespace

namespace {

Scenario scenario_from_json(const json& doc, const std::filesystem::path& path,
                            const std::filesystem::path& data_dir);

}  // namespace

std::string engine_id(const Scenario& scenario, model::DeviceKind kind,
                      const model::Catalog& catalog) {
  const std::string& named =
      kind == model::DeviceKind::kGpu ? scenario.gpu_engine : scenario.cpu_engine;
  if (named == kDatasheetEngine) return "";
  if (!named.empty()) return named;
  const char* fallback = kind == model::DeviceKind::kGpu ? kDefaultGpuEngine : kDefaultCpuEngine;
  return catalog.find_engine(fallback) != nullptr ? fallback : "";
}

const model::EngineProfile* engine_for(const Scenario& scenario,
                                       const model::InstanceType& instance,
                                       const model::Catalog& catalog) {
  const std::string id = engine_id(scenario, instance.kind, catalog);
  return model::engine_for(
      id.empty() ? nullptr : catalog.find_engine(id), scenario.fitted_engines,
      instance.kind == model::DeviceKind::kGpu ? instance.gpu_id : instance.cpu_id);
}

sim::ServingConfig serving_for(const Scenario& scenario, const model::InstanceType& instance,
                               const model::Catalog& catalog) {
  sim::ServingConfig serving = scenario.serving;
  const model::EngineProfile* engine = engine_for(scenario, instance, catalog);
  if (engine == nullptr) return serving;
  const model::EngineScheduler& s = engine->scheduler;
  if (!scenario.batching_set) {
    serving.policy = sim::parse_batching_policy(s.policy, engine->file.string() + ": scheduler");
  }
  if (!scenario.max_num_seqs_set) serving.max_num_seqs = s.max_num_seqs;
  if (!scenario.max_num_batched_tokens_set)
    serving.max_num_batched_tokens = s.max_num_batched_tokens;
  if (!scenario.prefix_caching_set) serving.prefix_caching = s.prefix_caching;
  if (!scenario.schedule_order_set) serving.longest_prefix_first = s.longest_prefix_first;
  serving.allocate_per_chunk = s.allocate_per_chunk;
  if (!scenario.block_size_set && s.block_size_tokens > 0) {
    serving.block_size_tokens = s.block_size_tokens;
  }
  // Every running decode takes 1 + its draft tokens of a chunked-prefill step's budget.
  const int64_t per_decode = 1 + serving.speculative.num_draft_tokens;
  if (serving.policy == sim::BatchingPolicy::kChunkedPrefill &&
      serving.max_num_batched_tokens < serving.max_num_seqs * per_decode) {
    serving.max_num_batched_tokens = serving.max_num_seqs * per_decode;
  }
  return serving;
}

model::WeightFormat weight_format_for(const Scenario& scenario, model::DeviceKind kind) {
  return kind == model::DeviceKind::kCpu && scenario.cpu_weight_format ? *scenario.cpu_weight_format
                                                                       : scenario.weight_format;
}

Scenario load_scenario(const std::filesystem::path& path, const std::filesystem::path& data_dir) {
  const std::string file = path.string();
  std::ifstream in(path);
  if (!in) throw InputError::unreadable_file(file);
  std::ostringstream text;
  text << in.rdbuf();
  return load_scenario_text(text.str(), path, data_dir);
}

Scenario load_scenario_text(const std::string& text, const std::filesystem::path& path,
                            const std::filesystem::path& data_dir) {
  return scenario_from_json(base::parse_json_text(text, path.string()), path, data_dir);
}

void check_scenario_files(const Scenario& scenario) {
  if (scenario.missing_files.empty()) return;
  const MissingFile& m = scenario.missing_files.front();
  std::string looked;
  for (const std::filesystem::path& p : m.looked)
    looked += (looked.empty() ? "" : ", ") + p.string();
  if (!m.data_dir_known) looked += "; no data folder was given to look ids up in";
  throw InputError::refused_field(scenario.file.string(), m.field,
                                  "no file \"" + m.value + "\" (looked for " + looked +
                                      "); expected " + expected_scenario_file(m.kind));
}

namespace {

/// "weight_format": a name, or {"gpu": name, "cpu": name} (each default bf16).
void parse_weight_formats(const Fields& f, Scenario& s) {
  const std::string file = f.file();
  if (!f.has("weight_format") || f.at("weight_format").is_string()) {
    s.weight_format = model::parse_weight_format(f.string_or("weight_format", "bf16"),
                                                 file + ": field \"weight_format\"");
    return;
  }
  const Fields by_kind =
      f.object("weight_format", "a weight format name or an object {\"gpu\": name, \"cpu\": name}");
  by_kind.only({"gpu", "cpu"});
  s.weight_format = model::parse_weight_format(by_kind.string_or("gpu", "bf16"),
                                               file + ": field \"weight_format.gpu\"");
  s.cpu_weight_format = model::parse_weight_format(by_kind.string_or("cpu", "bf16"),
                                                   file + ": field \"weight_format.cpu\"");
}

Scenario scenario_from_json(const json& doc, const std::filesystem::path& path,
                            const std::filesystem::path& data_dir) {
  const std::string file = path.string();
  if (!doc.is_object()) throw InputError::bad_document(file, "a JSON object at the top level");

  const Fields f(doc, file, "");
  f.only({"name", "description", "model", "weight_format", "kv_cache_format", "workload", "slo",
          "serving", "engine", "candidates", "fleet", "seed", "hours_per_year", "max_instances",
          "tco", "search", "uncertainty", "price_overrides"});
  const std::filesystem::path base = path.parent_path();
  Scenario s;
  const FileContext files{base, data_dir, &s.missing_files};
  s.file = path;
  s.name = f.string("name");
  s.description = f.string_or("description", "");
  s.model_config = files.resolve(f, "model", ScenarioFileKind::kModel);
  // model::InputError is plan::InputError: it passes through.
  parse_weight_formats(f, s);
  s.kv_format = model::parse_kv_format(f.string_or("kv_cache_format", "bf16"),
                                       file + ": field \"kv_cache_format\"");
  s.workload = parse_workload(f.object("workload"), files, /*in_class=*/false);

  if (s.workload.classes.empty()) {
    s.slo = parse_slo(f.object("slo"));
  } else {
    f.refuse("slo",
             "not allowed with workload.kind \"classes\"; each class has its own "
             "(workload.classes[i].slo)");
    s.slo = s.workload.classes.front().slo;
    for (const ClientClassSpec& c : s.workload.classes) {
      s.slo.ttft_s = std::min(s.slo.ttft_s, c.slo.ttft_s);
      s.slo.tpot_s = std::min(s.slo.tpot_s, c.slo.tpot_s);
    }
  }

  if (f.has("serving")) {
    const Fields sv = f.object("serving");
    sv.only({"max_num_seqs", "max_num_batched_tokens", "block_size_tokens", "batching", "router",
             "tensor_parallel", "expert_parallel", "prefix_caching", "schedule_order",
             "kv_offload_bytes", "speculative"});
    parse_serving_limits(sv, s.serving);
    s.speculative = parse_speculative_spec(doc, path, data_dir, s.missing_files);
    s.serving.speculative = s.speculative.config;
    mark_serving_fields(sv, s);
    if (sv.has("router")) s.router = parse_router_field(sv, "router");
    if (sv.has("tensor_parallel")) s.tensor_parallel = parse_tensor_parallel(sv);
    s.expert_parallel = sv.boolean_or("expert_parallel", false);
  }

  if (f.has("engine")) {
    const Fields e = f.object("engine");
    e.only({"gpu", "cpu", "profiles"});
    if (!e.has("gpu") && !e.has("cpu") && !e.has("profiles")) {
      f.fail("engine", "an object with \"gpu\" and/or \"cpu\" engine ids or \"profiles\"",
             f.got("engine"));
    }
    s.gpu_engine = e.has("gpu") ? e.non_empty_string("gpu") : "";
    s.cpu_engine = e.has("cpu") ? e.non_empty_string("cpu") : "";
    if (e.has("profiles")) {
      const json& list = e.non_empty_array("profiles", "a non-empty array of fitted profile files");
      std::vector<std::filesystem::path> files;
      for (size_t i = 0; i < list.size(); ++i) {
        if (!list[i].is_string() || list[i].get<std::string>().empty()) {
          e.fail("profiles", "an array of file names", e.got("profiles"));
        }
        files.push_back(base / list[i].get<std::string>());
      }
      s.fitted_engines = model::load_fitted_engines(files, s.gpu_engine, s.cpu_engine,
                                                    file + ": field \"engine.profiles\"");
    }
  }

  if (f.has("candidates")) {
    const json& c = f.at("candidates");
    if (c.is_string() && c.get<std::string>() == "all") {
      // empty list: every instance type
    } else if (c.is_string() && (c.get<std::string>() == "cpu" || c.get<std::string>() == "gpu")) {
      s.candidate_kind =
          c.get<std::string>() == "cpu" ? model::DeviceKind::kCpu : model::DeviceKind::kGpu;
    } else if (c.is_array() && !c.empty()) {
      for (const json& id : c) {
        if (!id.is_string()) {
          f.fail("candidates", "instance ids or device kinds (\"cpu\", \"gpu\") as strings",
                 id.dump());
        }
        s.candidates.push_back(id.get<std::string>());
      }
    } else {
      f.fail("candidates",
             "\"all\", \"cpu\", \"gpu\" or a non-empty list of instance ids and device kinds",
             c.dump());
    }
  }
  if (f.has("seed")) {
    const json& v = f.at("seed");
    if (!v.is_number_unsigned()) f.fail("seed", "a non-negative integer", v.dump());
    s.seed = v.get<uint64_t>();
  }
  if (f.has("hours_per_year")) {
    s.hours_per_year = f.positive_number("hours_per_year");
    if (s.hours_per_year > 8784) {
      f.fail("hours_per_year", "at most 8784 (hours in a leap year)",
             f.at("hours_per_year").dump());
    }
  }
  if (f.has("max_instances")) s.max_instances = f.positive_int("max_instances");
  if (f.has("fleet")) {
    f.refuse("candidates",
             "not allowed beside \"fleet\" (a given fleet is evaluated as it is; candidates are "
             "for the fleet-size search)");
    if (s.tensor_parallel.mode == TensorParallelSpec::Mode::kSearch) {
      throw InputError::refused_field(
          file, "serving.tensor_parallel",
          "\"search\" is for the fleet-size search over candidates; with a \"fleet\", give "
          "each group its \"tensor_parallel\" (or leave \"auto\")");
    }
    s.fleet = parse_fleet(f, s.serving, s.router);
  }
  s.tco = parse_tco_spec(doc, path);
  s.search = parse_search_spec(doc, path);
  if (s.search.enabled && s.fleet) {
    throw InputError::refused_field(file, "search",
                                    "not allowed beside \"fleet\" (a given fleet is evaluated "
                                    "as it is; the configuration search is over candidates)");
  }
  s.uncertainty = parse_uncertainty_spec(doc, path);
  if (f.has("price_overrides")) {
    const json& list = f.at("price_overrides");
    if (!list.is_array()) {
      f.fail("price_overrides",
             "a list of {\"instance\", \"price_model\", \"usd_per_hour\", "
             "\"source\", \"as_of\"}",
             list.dump());
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string key = "price_overrides[" + std::to_string(i) + "]";
      if (!list[i].is_object()) f.fail(key, "an object", list[i].dump());
      const Fields o(list[i], file, key);
      o.only({"instance", "price_model", "usd_per_hour", "source", "as_of"});
      PriceOverride p;
      p.instance = o.string("instance");
      p.price_model = o.string("price_model");
      p.usd_per_hour = o.positive_number("usd_per_hour");
      p.source = o.string_or("source", p.source);
      p.as_of = o.string("as_of");
      s.price_overrides.push_back(std::move(p));
    }
  }
  return s;
}

}  // namespace

std::vector<sim::Slo> Scenario::class_slos() const {
  if (workload.classes.empty()) return {slo};
  std::vector<sim::Slo> slos;
  for (const ClientClassSpec& c : workload.classes) slos.push_back(c.slo);
  return slos;
}

sim::Workload load_workload(const WorkloadSpec& spec, uint64_t seed, int64_t context_tokens) {
  sim::Workload w;
  if (!spec.classes.empty()) {
    std::vector<std::vector<sim::RequestSpec>> per_class;
    for (size_t c = 0; c < spec.classes.size(); ++c) {
      per_class.push_back(
          load_workload(spec.classes[c].workload, sim::substream_seed(seed, c), context_tokens)
              .open_loop);
    }
    w.open_loop = sim::merge_client_classes(per_class);
    return w;
  }
  switch (spec.kind) {
    case WorkloadSpec::Kind::kTrace: {
      sim::TraceOptions options;
      options.rate_multiplier = spec.rate_multiplier;
      options.window_s = spec.window_s;
      options.hash_block_tokens = spec.hash_block_tokens;
      w.open_loop = sim::load_trace(spec.path, options);
      break;
    }
    case WorkloadSpec::Kind::kArrivalProcess: {
      sim::ArrivalOptions options;
      options.process = spec.arrival;
      options.rate_per_s = spec.rate_per_s;
      if (spec.num_requests > 0) options.num_requests = spec.num_requests;
      if (spec.duration_s > 0) options.duration_s = spec.duration_s;
      options.hourly_multipliers = spec.load_profile;
      options.sessions = spec.sessions;
      if (options.sessions) options.sessions->max_context_tokens = context_tokens;
      w.open_loop = sim::generate_arrivals(options, sim::load_lengths(spec.path), seed);
      break;
    }
    case WorkloadSpec::Kind::kClosedLoop: {
      sim::ClosedLoopWorkload c;
      c.num_users = spec.num_users;
      c.think_time_s = spec.think_time_s;
      c.duration_s = spec.duration_s;
      c.lengths = sim::load_lengths(spec.path);
      c.sessions = spec.sessions;
      if (c.sessions) c.sessions->max_context_tokens = context_tokens;
      w.closed_loop = std::move(c);
      break;
    }
  }
  return w;
}

}  // namespace llmcap::plan
