#include "plan/scenario.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/input_error.h"
#include "sim/input_error.h"
#include "sim/random.h"
#include "sim/workload.h"

namespace llmcap::plan {
namespace {

using nlohmann::json;

/// Typed access to one JSON object with messages that name the file and the dotted field.
class Fields {
 public:
  Fields(const json& object, std::string file, std::string prefix)
      : object_(object), file_(std::move(file)), prefix_(std::move(prefix)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& expected,
                         const std::string& got) const {
    throw InputError(file_ + ": field \"" + name(key) + "\": expected " + expected + ", got " +
                     got);
  }
  std::string name(const std::string& key) const {
    return prefix_.empty() ? key : prefix_ + "." + key;
  }
  bool has(const std::string& key) const { return object_.contains(key); }
  const json& at(const std::string& key) const {
    if (!object_.contains(key)) {
      throw InputError(file_ + ": field \"" + name(key) + "\": missing");
    }
    return object_.at(key);
  }

  std::string string(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_string()) fail(key, "a string", v.dump());
    return v.get<std::string>();
  }
  std::string string_or(const std::string& key, const std::string& fallback) const {
    return has(key) ? string(key) : fallback;
  }
  double positive(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_number() || !(v.get<double>() > 0) || !std::isfinite(v.get<double>())) {
      fail(key, "a positive number", v.dump());
    }
    return v.get<double>();
  }
  double non_negative(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_number() || !(v.get<double>() >= 0) || !std::isfinite(v.get<double>())) {
      fail(key, "a non-negative number", v.dump());
    }
    return v.get<double>();
  }
  int64_t positive_int(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_number_integer() || v.get<int64_t>() <= 0) {
      fail(key, "a positive integer", v.dump());
    }
    return v.get<int64_t>();
  }
  Fields object(const std::string& key) const {
    const json& v = at(key);
    if (!v.is_object()) fail(key, "an object", v.dump());
    return Fields(v, file_, name(key));
  }
  /// Element i of the array `key` (which the caller has checked), as an object.
  Fields element(const std::string& key, size_t i) const {
    const std::string item = key + "[" + std::to_string(i) + "]";
    const json& v = object_.at(key).at(i);
    if (!v.is_object()) fail(item, "an object", v.dump());
    return Fields(v, file_, name(item));
  }
  /// Refuses `key` when present: `file: field "<name>": <reason>`.
  void refuse(const std::string& key, const std::string& reason) const {
    if (has(key)) throw InputError(file_ + ": field \"" + name(key) + "\": " + reason);
  }
  const std::string& file() const { return file_; }

 private:
  const json& object_;
  std::string file_;
  std::string prefix_;
};

sim::Slo parse_slo(const Fields& slo) {
  sim::Slo s;
  s.ttft_s = slo.positive("ttft_p99_s");
  s.tpot_s = slo.positive("tpot_p99_s");
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

WorkloadSpec parse_workload(const Fields& w, const std::filesystem::path& base, bool in_class);

/// "classes": a non-empty list of objects, each a source (trace or arrival process) with a
/// unique "name" and its own "slo".
std::vector<ClientClassSpec> parse_classes(const Fields& w, const std::filesystem::path& base) {
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
    spec.workload = parse_workload(c, base, /*in_class=*/true);
    if (!c.has("slo")) {
      throw InputError(c.file() + ": field \"" + c.name("slo") +
                       "\": missing; every client class needs its own SLO (ttft_p99_s, "
                       "tpot_p99_s)");
    }
    spec.slo = parse_slo(c.object("slo"));
    classes.push_back(std::move(spec));
  }
  return classes;
}

WorkloadSpec parse_workload(const Fields& w, const std::filesystem::path& base, bool in_class) {
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

  if (kind == "trace") {
    spec.kind = WorkloadSpec::Kind::kTrace;
    spec.path = base / w.string("path");
    if (w.has("rate_multiplier")) spec.rate_multiplier = w.positive("rate_multiplier");
    if (w.has("window_s")) spec.window_s = w.positive("window_s");
  } else if (process) {
    spec.kind = WorkloadSpec::Kind::kArrivalProcess;
    spec.arrival.kind = *process;
    spec.path = base / w.string("lengths_path");
    spec.rate_per_s = w.positive("rate_per_s");
    if (spec.rate_per_s > 1e9) {
      w.fail("rate_per_s", "a positive number up to 1e9 (one request per ns)",
             w.at("rate_per_s").dump());
    }
    if (!w.has("num_requests") && !w.has("duration_s")) {
      throw InputError(w.file() + ": field \"" + w.name("num_requests") +
                       "\": missing; expected num_requests (an integer > 0), duration_s (a "
                       "number > 0) or both");
    }
    if (w.has("num_requests")) spec.num_requests = w.positive_int("num_requests");
    if (w.has("duration_s")) {
      spec.duration_s = w.positive("duration_s");
      if (spec.duration_s >= 9.2e9) {
        w.fail("duration_s", "a positive number below 9.2e9 (the end of simulated time)",
               w.at("duration_s").dump());
      }
    }
    if (*process == sim::ArrivalProcessKind::kGamma) spec.arrival.cv = w.positive("cv");
    if (*process == sim::ArrivalProcessKind::kWeibull) {
      spec.arrival.weibull_shape = w.positive("shape");
      if (spec.arrival.weibull_shape < 0.006) {  // Gamma(1 + 1/shape) overflows below
        w.fail("shape", "a number >= 0.006", w.at("shape").dump());
      }
    }
    if (w.has("load_profile")) spec.load_profile = parse_load_profile(w);
  } else if (kind == "closed_loop") {
    spec.kind = WorkloadSpec::Kind::kClosedLoop;
    spec.path = base / w.string("lengths_path");
    spec.num_users = w.positive_int("num_users");
    spec.think_time_s = w.non_negative("think_time_s");
    spec.duration_s = w.positive("duration_s");
  } else {  // "classes"
    spec.classes = parse_classes(w, base);
    spec.kind = spec.classes.front().workload.kind;
    spec.path = spec.classes.front().workload.path;
  }
  return spec;
}

}  // namespace

Scenario load_scenario(const std::filesystem::path& path) {
  const std::string file = path.string();
  std::ifstream in(path);
  if (!in) throw InputError(file + ": cannot open file");
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    throw InputError(file + ": malformed JSON: " + e.what());
  }
  if (!doc.is_object()) throw InputError(file + ": expected a JSON object at the top level");

  const Fields f(doc, file, "");
  const std::filesystem::path base = path.parent_path();
  Scenario s;
  s.file = path;
  s.name = f.string("name");
  s.description = f.string_or("description", "");
  s.model_config = base / f.string("model");
  try {
    s.weight_format = model::parse_weight_format(f.string_or("weight_format", "bf16"),
                                                 file + ": field \"weight_format\"");
    s.kv_format = model::parse_kv_format(f.string_or("kv_cache_format", "bf16"),
                                         file + ": field \"kv_cache_format\"");
  } catch (const model::InputError& e) {
    throw InputError(e.what());
  }
  s.workload = parse_workload(f.object("workload"), base, /*in_class=*/false);

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
    if (sv.has("max_num_seqs")) s.serving.max_num_seqs = sv.positive_int("max_num_seqs");
    if (sv.has("max_num_batched_tokens")) {
      s.serving.max_num_batched_tokens = sv.positive_int("max_num_batched_tokens");
    }
    if (sv.has("block_size_tokens")) {
      s.serving.block_size_tokens = sv.positive_int("block_size_tokens");
    }
    if (sv.has("batching")) {
      try {
        s.serving.policy = sim::parse_batching_policy(sv.string("batching"),
                                                      file + ": field \"serving.batching\"");
      } catch (const sim::InputError& e) {
        throw InputError(e.what());
      }
    }
    if (sv.has("router")) {
      try {
        s.router = sim::parse_router(sv.string("router"), file + ": field \"serving.router\"");
      } catch (const sim::InputError& e) {
        throw InputError(e.what());
      }
    }
  }

  if (f.has("candidates")) {
    const json& c = f.at("candidates");
    if (c.is_string() && c.get<std::string>() == "all") {
      // empty list: every instance type
    } else if (c.is_array() && !c.empty()) {
      for (const json& id : c) {
        if (!id.is_string()) f.fail("candidates", "instance ids (strings)", id.dump());
        s.candidates.push_back(id.get<std::string>());
      }
    } else {
      f.fail("candidates", "\"all\" or a non-empty list of instance ids", c.dump());
    }
  }
  if (f.has("seed")) {
    const json& v = f.at("seed");
    if (!v.is_number_unsigned()) f.fail("seed", "a non-negative integer", v.dump());
    s.seed = v.get<uint64_t>();
  }
  if (f.has("hours_per_year")) {
    s.hours_per_year = f.positive("hours_per_year");
    if (s.hours_per_year > 8784) {
      f.fail("hours_per_year", "at most 8784 (hours in a leap year)",
             f.at("hours_per_year").dump());
    }
  }
  if (f.has("max_instances")) s.max_instances = f.positive_int("max_instances");
  return s;
}

std::vector<sim::Slo> Scenario::class_slos() const {
  if (workload.classes.empty()) return {slo};
  std::vector<sim::Slo> slos;
  for (const ClientClassSpec& c : workload.classes) slos.push_back(c.slo);
  return slos;
}

sim::Workload load_workload(const WorkloadSpec& spec, uint64_t seed) {
  sim::Workload w;
  if (!spec.classes.empty()) {
    std::vector<std::vector<sim::RequestSpec>> per_class;
    for (size_t c = 0; c < spec.classes.size(); ++c) {
      per_class.push_back(
          load_workload(spec.classes[c].workload, sim::substream_seed(seed, c)).open_loop);
    }
    w.open_loop = sim::merge_client_classes(per_class);
    return w;
  }
  switch (spec.kind) {
    case WorkloadSpec::Kind::kTrace: {
      sim::TraceOptions options;
      options.rate_multiplier = spec.rate_multiplier;
      options.window_s = spec.window_s;
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
      w.open_loop = sim::generate_arrivals(options, sim::load_lengths(spec.path), seed);
      break;
    }
    case WorkloadSpec::Kind::kClosedLoop: {
      sim::ClosedLoopWorkload c;
      c.num_users = spec.num_users;
      c.think_time_s = spec.think_time_s;
      c.duration_s = spec.duration_s;
      c.lengths = sim::load_lengths(spec.path);
      w.closed_loop = std::move(c);
      break;
    }
  }
  return w;
}

}  // namespace llmcap::plan
