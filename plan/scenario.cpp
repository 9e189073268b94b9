#include "plan/scenario.h"

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "model/input_error.h"
#include "sim/input_error.h"
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
  const std::string& file() const { return file_; }

 private:
  const json& object_;
  std::string file_;
  std::string prefix_;
};

WorkloadSpec parse_workload(const Fields& w, const std::filesystem::path& base) {
  WorkloadSpec spec;
  const std::string kind = w.string("kind");
  if (kind == "trace") {
    spec.kind = WorkloadSpec::Kind::kTrace;
    spec.path = base / w.string("path");
    if (w.has("rate_multiplier")) spec.rate_multiplier = w.positive("rate_multiplier");
    if (w.has("window_s")) spec.window_s = w.positive("window_s");
  } else if (kind == "poisson") {
    spec.kind = WorkloadSpec::Kind::kPoisson;
    spec.path = base / w.string("lengths_path");
    spec.rate_per_s = w.positive("rate_per_s");
    spec.num_requests = w.positive_int("num_requests");
  } else if (kind == "closed_loop") {
    spec.kind = WorkloadSpec::Kind::kClosedLoop;
    spec.path = base / w.string("lengths_path");
    spec.num_users = w.positive_int("num_users");
    spec.think_time_s = w.non_negative("think_time_s");
    spec.duration_s = w.positive("duration_s");
  } else {
    w.fail("kind", "one of: trace, poisson, closed_loop", "\"" + kind + "\"");
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
  s.workload = parse_workload(f.object("workload"), base);

  const Fields slo = f.object("slo");
  s.slo.ttft_s = slo.positive("ttft_p99_s");
  s.slo.tpot_s = slo.positive("tpot_p99_s");

  if (f.has("serving")) {
    const Fields sv = f.object("serving");
    if (sv.has("max_num_seqs")) s.serving.max_num_seqs = sv.positive_int("max_num_seqs");
    if (sv.has("max_num_batched_tokens")) {
      s.serving.max_num_batched_tokens = sv.positive_int("max_num_batched_tokens");
    }
    if (sv.has("block_size_tokens")) {
      s.serving.block_size_tokens = sv.positive_int("block_size_tokens");
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

sim::Workload load_workload(const WorkloadSpec& spec, uint64_t seed) {
  sim::Workload w;
  switch (spec.kind) {
    case WorkloadSpec::Kind::kTrace: {
      sim::TraceOptions options;
      options.rate_multiplier = spec.rate_multiplier;
      options.window_s = spec.window_s;
      w.open_loop = sim::load_trace(spec.path, options);
      break;
    }
    case WorkloadSpec::Kind::kPoisson:
      w.open_loop = sim::poisson_arrivals(spec.rate_per_s, spec.num_requests,
                                          sim::load_lengths(spec.path), seed);
      break;
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
