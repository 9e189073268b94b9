#include "model/engine_profile.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "base/json_reader.h"

namespace llmcap::model {
namespace {

const std::vector<std::string> kPolicies = {"static", "continuous", "chunked_prefill",
                                            "prefill_first"};

/// {"value", "source", "as_of"} at `key`; the value must satisfy `ok` (`expected` in messages).
SourcedFigure figure(const base::JsonReader& r, const std::string& key,
                     const std::function<bool(double)>& ok, const std::string& expected) {
  const base::JsonReader f = r.object(key);
  f.only({"value", "source", "as_of", "note"});
  SourcedFigure out;
  out.value = f.number("value", ok, expected);
  out.source = f.non_empty_string("source");
  out.as_of = f.non_empty_string("as_of");
  return out;
}

SourcedFigure fraction(const base::JsonReader& r, const std::string& key) {
  return figure(
      r, key, [](double v) { return v > 0 && v <= 1; }, "a fraction in (0, 1]");
}

SourcedFigure seconds(const base::JsonReader& r, const std::string& key) {
  return figure(
      r, key, [](double v) { return v >= 0; }, "a non-negative number of seconds");
}

nlohmann::json figure_json(const SourcedFigure& f) {
  return {{"value", f.value}, {"source", f.source}, {"as_of", f.as_of}};
}

}  // namespace

const char* instruction_path_name(InstructionPath path) {
  switch (path) {
    case InstructionPath::kAmx:
      return "amx";
    case InstructionPath::kAvx512:
      return "avx512";
    case InstructionPath::kAvx2:
      return "avx2";
  }
  return "?";
}

EngineProfile load_engine_profile(const std::filesystem::path& file) {
  const nlohmann::json doc = base::read_json_file(file);
  if (!doc.is_object()) throw base::InputError::bad_document(file.string(), "a JSON object");
  const base::JsonReader r(doc, file.string(), "");
  r.only({"id", "name", "version", "device_kind", "note", "scheduler", "step_overhead_s",
          "kernel_overhead_s", "memory_bandwidth_fraction", "compute_fraction",
          "decode_compute_fraction", "usable_memory_fraction", "frontend_latency_s", "cpu_path",
          "hardware", "fit"});
  EngineProfile e;
  e.file = file;
  e.id = r.non_empty_string("id");
  if (r.has("hardware")) {
    e.hardware = r.non_empty_string("hardware");
    if (r.has("fit")) e.fit_summary = r.object("fit").non_empty_string("summary");
  } else if (r.has("fit")) {
    r.fail_missing("hardware", "a fitted profile (one with \"fit\") names its hardware");
  } else if (e.id != file.stem().string()) {
    r.fail("id", "the file's name without .json (\"" + file.stem().string() + "\")", r.got("id"));
  }
  e.name = r.non_empty_string("name");
  e.version = r.non_empty_string("version");
  const std::string kind = r.string("device_kind");
  if (kind == "cpu") {
    e.kind = DeviceKind::kCpu;
  } else if (kind == "gpu") {
    e.kind = DeviceKind::kGpu;
  } else {
    r.fail("device_kind", "\"cpu\" or \"gpu\"", r.got("device_kind"));
  }

  const base::JsonReader s = r.object("scheduler");
  s.only({"policy", "max_num_seqs", "max_num_batched_tokens", "prefix_caching", "block_size_tokens",
          "schedule_order", "allocate_per_chunk", "source", "as_of", "note"});
  e.scheduler.policy = s.string("policy");
  if (std::find(kPolicies.begin(), kPolicies.end(), e.scheduler.policy) == kPolicies.end()) {
    s.fail("policy", "one of static, continuous, chunked_prefill, prefill_first", s.got("policy"));
  }
  e.scheduler.max_num_seqs = s.positive_int("max_num_seqs");
  e.scheduler.max_num_batched_tokens = s.positive_int("max_num_batched_tokens");
  if (e.scheduler.policy == "chunked_prefill" &&
      e.scheduler.max_num_batched_tokens < e.scheduler.max_num_seqs) {
    s.fail("max_num_batched_tokens",
           "at least max_num_seqs (" + std::to_string(e.scheduler.max_num_seqs) +
               ") with chunked_prefill",
           s.got("max_num_batched_tokens"));
  }
  e.scheduler.prefix_caching = s.boolean_or("prefix_caching", false);
  e.scheduler.allocate_per_chunk = s.boolean_or("allocate_per_chunk", false);
  if (s.has("block_size_tokens")) {
    e.scheduler.block_size_tokens = s.positive_int("block_size_tokens");
  }
  if (s.has("schedule_order")) {
    const std::string order = s.string("schedule_order");
    if (order != "fcfs" && order != "longest_prefix") {
      s.fail("schedule_order", "\"fcfs\" or \"longest_prefix\"", s.got("schedule_order"));
    }
    e.scheduler.longest_prefix_first = order == "longest_prefix";
  }
  e.scheduler.source = s.non_empty_string("source");
  e.scheduler.as_of = s.non_empty_string("as_of");

  e.step_overhead_s = seconds(r, "step_overhead_s");
  e.kernel_overhead_s = seconds(r, "kernel_overhead_s");
  e.memory_bandwidth_fraction = fraction(r, "memory_bandwidth_fraction");
  e.compute_fraction = fraction(r, "compute_fraction");
  if (r.has("decode_compute_fraction")) {
    e.decode_compute_fraction = fraction(r, "decode_compute_fraction");
  }
  e.usable_memory_fraction = fraction(r, "usable_memory_fraction");
  if (r.has("frontend_latency_s")) e.frontend_latency_s = seconds(r, "frontend_latency_s");

  if (e.kind == DeviceKind::kGpu) {
    r.refuse("cpu_path", "only CPU engines have an instruction path");
  } else {
    if (!r.has("cpu_path")) {
      r.fail_missing("cpu_path",
                     "a CPU engine names the instruction path of its matrix products (amx, "
                     "avx512, avx2)");
    }
    const base::JsonReader p = r.object("cpu_path");
    p.only({"value", "source", "as_of", "note"});
    const std::string path = p.string("value");
    if (path == "amx") {
      e.cpu_path = InstructionPath::kAmx;
    } else if (path == "avx512") {
      e.cpu_path = InstructionPath::kAvx512;
    } else if (path == "avx2") {
      e.cpu_path = InstructionPath::kAvx2;
    } else {
      p.fail("value", "one of amx, avx512, avx2", p.got("value"));
    }
    e.cpu_path_source = p.non_empty_string("source") + " (" + p.non_empty_string("as_of") + ")";
  }
  return e;
}

std::map<std::string, EngineProfile> load_engine_profiles(const std::filesystem::path& data_dir) {
  std::map<std::string, EngineProfile> out;
  const std::filesystem::path dir = data_dir / "engines";
  if (!std::filesystem::is_directory(dir)) return out;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const std::filesystem::path& f : files) {
    EngineProfile e = load_engine_profile(f);
    const std::string id = e.id;
    out.emplace(id, std::move(e));
  }
  return out;
}

std::string engine_profile_to_json(const EngineProfile& e, const nlohmann::ordered_json& fit) {
  nlohmann::ordered_json j;
  j["id"] = e.id;
  j["name"] = e.name;
  j["version"] = e.version;
  j["device_kind"] = std::string(to_string(e.kind));
  if (!e.hardware.empty()) j["hardware"] = e.hardware;
  j["scheduler"] = {{"policy", e.scheduler.policy},
                    {"max_num_seqs", e.scheduler.max_num_seqs},
                    {"max_num_batched_tokens", e.scheduler.max_num_batched_tokens},
                    {"prefix_caching", e.scheduler.prefix_caching},
                    {"source", e.scheduler.source},
                    {"as_of", e.scheduler.as_of}};
  if (e.scheduler.block_size_tokens > 0) {
    j["scheduler"]["block_size_tokens"] = e.scheduler.block_size_tokens;
  }
  if (e.scheduler.longest_prefix_first) j["scheduler"]["schedule_order"] = "longest_prefix";
  if (e.scheduler.allocate_per_chunk) j["scheduler"]["allocate_per_chunk"] = true;
  j["step_overhead_s"] = figure_json(e.step_overhead_s);
  j["kernel_overhead_s"] = figure_json(e.kernel_overhead_s);
  j["memory_bandwidth_fraction"] = figure_json(e.memory_bandwidth_fraction);
  j["compute_fraction"] = figure_json(e.compute_fraction);
  if (e.decode_compute_fraction.value > 0) {
    j["decode_compute_fraction"] = figure_json(e.decode_compute_fraction);
  }
  j["usable_memory_fraction"] = figure_json(e.usable_memory_fraction);
  if (!e.frontend_latency_s.source.empty()) {
    j["frontend_latency_s"] = figure_json(e.frontend_latency_s);
  }
  if (e.kind == DeviceKind::kCpu) {
    // cpu_path_source is "<source> (<as_of>)" as load_engine_profile joined them.
    std::string source = e.cpu_path_source, as_of = "unknown";
    const size_t open = source.rfind(" (");
    if (open != std::string::npos && source.back() == ')') {
      as_of = source.substr(open + 2, source.size() - open - 3);
      source = source.substr(0, open);
    }
    j["cpu_path"] = {{"value", instruction_path_name(e.cpu_path)},
                     {"source", source.empty() ? "unknown" : source},
                     {"as_of", as_of}};
  }
  if (!fit.is_null()) j["fit"] = fit;
  return j.dump(2) + "\n";
}

const EngineProfile* engine_for(const EngineProfile* chosen,
                                const std::vector<EngineProfile>& fitted,
                                const std::string& hardware_id) {
  for (const EngineProfile& e : fitted) {
    if (e.hardware == hardware_id) return &e;
  }
  return chosen;
}

std::vector<EngineProfile> load_fitted_engines(const std::vector<std::filesystem::path>& files,
                                               const std::string& chosen_gpu,
                                               const std::string& chosen_cpu,
                                               const std::string& context) {
  std::vector<EngineProfile> out;
  for (const std::filesystem::path& f : files) {
    EngineProfile e = load_engine_profile(f);
    const std::string where = context + ": " + f.string();
    if (e.hardware.empty()) {
      throw base::InputError(where +
                             ": expected a fitted engine profile (llmcap calibrate "
                             "--from-benchmark --out), got one without \"hardware\"");
    }
    for (const EngineProfile& other : out) {
      if (other.hardware == e.hardware) {
        throw base::InputError(where + ": a second fitted profile for \"" + e.hardware +
                               "\" (the first is " + other.file.string() +
                               "); give one per hardware");
      }
    }
    const std::string& chosen = e.kind == DeviceKind::kGpu ? chosen_gpu : chosen_cpu;
    if (!chosen.empty() && chosen != e.id) {
      throw base::InputError(where + ": fitted for engine \"" + e.id + "\", but the " +
                             std::string(to_string(e.kind)) + " engine is \"" + chosen +
                             "\"; fit the same engine or name \"" + e.id + "\"");
    }
    out.push_back(std::move(e));
  }
  return out;
}

void check_fitted_hardware(const std::vector<EngineProfile>& fitted, const Catalog& catalog,
                           const std::string& context) {
  for (const EngineProfile& e : fitted) {
    const std::string where = context + ": " + e.file.string();
    const HardwareSpec* hw = catalog.find_hardware(e.hardware);
    if (hw == nullptr) {
      throw base::InputError(where + ": field \"hardware\": unknown hardware \"" + e.hardware +
                             "\" (not in the catalog's data/hardware/)");
    }
    if (hw->kind != e.kind) {
      throw base::InputError(where + ": field \"hardware\": \"" + e.hardware + "\" is a " +
                             std::string(to_string(hw->kind)) + ", the profile is for a " +
                             std::string(to_string(e.kind)));
    }
  }
}

const EngineProfile& find_engine(const Catalog& catalog, const std::string& id,
                                 const std::string& context) {
  if (const EngineProfile* e = catalog.find_engine(id)) return *e;
  throw base::InputError(context + ": unknown engine \"" + id +
                         "\"; known: " + catalog.engine_ids());
}

Efficiency engine_efficiency(const EngineProfile& engine, const Efficiency& base) {
  Efficiency e = base;
  e.step_overhead_s = engine.step_overhead_s.value;
  e.kernel_overhead_s = engine.kernel_overhead_s.value;
  e.memory_bandwidth_fraction = engine.memory_bandwidth_fraction.value;
  e.compute_fraction = engine.compute_fraction.value;
  e.decode_compute_fraction = engine.decode_compute_fraction.value;
  e.usable_memory_fraction = engine.usable_memory_fraction.value;
  return e;
}

}  // namespace llmcap::model
