// The JSON form of a calibration profile: text and files, and the fit alone (the fit_json column
// of the profile database, store/profile_store.h) (model/calibration.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/json_reader.h"
#include "model/calibration.h"
#include "model/input_error.h"

namespace llmcap::model {

namespace {

using nlohmann::json;

json bandwidth_to_json(const std::map<int, double>& by_threads) {
  json out = json::object();
  for (const auto& [threads, value] : by_threads) out[std::to_string(threads)] = value;
  return out;
}

json rate_fit_to_json(const RateFit& f) {
  json out = {{"overhead_s", f.overhead_s},
              {"bytes_per_s", f.bytes_per_s},
              {"flops_per_s", f.flops_per_s},
              {"num_samples", f.num_samples},
              {"median_rel_error", f.median_rel_error},
              {"p95_rel_error", f.p95_rel_error}};
  if (!f.by_batch.empty()) {
    json rows = json::array();
    for (const BatchRateFit& b : f.by_batch) {
      rows.push_back({{"batch", b.batch},
                      {"overhead_s", b.overhead_s},
                      {"bytes_per_s", b.bytes_per_s},
                      {"num_samples", b.num_samples}});
    }
    out["by_batch"] = rows;
    out["by_batch_median_rel_error"] = f.by_batch_median_rel_error;
    out["by_batch_p95_rel_error"] = f.by_batch_p95_rel_error;
  }
  return out;
}

json fit_json(const CalibrationFit& fit) {
  json matmul = json::object();
  for (const auto& [format, f] : fit.matmul) matmul[format] = rate_fit_to_json(f);
  json attention = json::object();
  for (const auto& [format, f] : fit.attention) attention[format] = rate_fit_to_json(f);
  return {{"threads", fit.threads},
          {"min_bytes", fit.min_bytes},
          {"statistic", to_string(fit.statistic)},
          {"cache_resident_fitted", fit.cache_resident_fitted},
          {"model", std::string(to_string(fit.statistic)) +
                        "_s = overhead_s + bytes / bytes_per_s + flops / flops_per_s"},
          {"matmul", matmul},
          {"attention", attention},
          {"median_rel_error", fit.median_rel_error},
          {"p95_rel_error", fit.p95_rel_error}};
}

/// Reads typed fields of one JSON object, with errors that name the file and the field path:
/// base::JsonReader with values cut to 60 characters in messages. The object must be an object.
class Reader : public base::JsonReader {
 public:
  Reader(const json& object, const std::string& source, const std::string& path)
      : base::JsonReader(object, source, path, profile_style()) {
    if (!object.is_object()) {
      throw InputError::bad_field(source, path, shown(object), "an object");
    }
  }

  using base::JsonReader::fail;
  [[noreturn]] void fail(const std::string& key, const std::string& expected,
                         const json& got) const {
    fail(key, expected, shown(got));
  }

  std::string str(const std::string& key) const { return string(key); }
  /// A finite number, >= 0 unless `non_negative` is false.
  double number(const std::string& key, bool non_negative = true) const {
    if (non_negative) return non_negative_number(key);
    return base::JsonReader::number(
        key, [](double) { return true; }, "a number");
  }
  int64_t integer(const std::string& key) const { return non_negative_int(key); }
  Reader object(const std::string& key) const { return Reader(at(key), file(), name(key)); }
  std::map<int, double> bandwidth(const std::string& key) const {
    const Reader r = object(key);
    std::map<int, double> out;
    for (const auto& [k, v] : r.raw().items()) {
      int threads = 0;
      try {
        std::size_t used = 0;
        threads = std::stoi(k, &used);
        if (used != k.size() || threads < 1) throw std::invalid_argument(k);
      } catch (const std::exception&) {
        throw InputError::bad_field(file(), name(key), "\"" + k + "\"", "thread counts as keys");
      }
      out[threads] = r.number(k);
      if (!(out[threads] > 0)) r.fail(k, "a positive bandwidth in bytes/s", v);
    }
    return out;
  }
  std::string field(const std::string& key) const { return name(key); }
  const std::string& source() const { return file(); }

 private:
  static base::JsonReaderStyle profile_style() {
    base::JsonReaderStyle style;
    style.max_shown_chars = 60;
    return style;
  }
};

RateFit rate_fit_from(const Reader& r) {
  r.only({"overhead_s", "bytes_per_s", "flops_per_s", "num_samples", "median_rel_error",
          "p95_rel_error", "by_batch", "by_batch_median_rel_error", "by_batch_p95_rel_error"});
  RateFit f;
  f.overhead_s = r.number("overhead_s");
  f.bytes_per_s = r.number("bytes_per_s");
  f.flops_per_s = r.number("flops_per_s");
  f.num_samples = static_cast<int>(r.integer("num_samples"));
  f.median_rel_error = r.number("median_rel_error");
  f.p95_rel_error = r.number("p95_rel_error");
  if (r.has("by_batch")) {  // optional: profiles before it lack it
    const json& rows = r.at("by_batch");
    if (!rows.is_array()) r.fail("by_batch", "an array", rows);
    for (std::size_t i = 0; i < rows.size(); ++i) {
      const Reader row(rows[i], r.source(), r.field("by_batch") + "[" + std::to_string(i) + "]");
      row.only({"batch", "overhead_s", "bytes_per_s", "num_samples"});
      BatchRateFit b;
      b.batch = row.integer("batch");
      b.overhead_s = row.number("overhead_s");
      b.bytes_per_s = row.number("bytes_per_s");
      b.num_samples = static_cast<int>(row.integer("num_samples"));
      if (b.batch < 1 || (!f.by_batch.empty() && b.batch <= f.by_batch.back().batch)) {
        row.fail("batch", "batches >= 1 in ascending order", row.at("batch"));
      }
      f.by_batch.push_back(b);
    }
    f.by_batch_median_rel_error = r.number("by_batch_median_rel_error");
    f.by_batch_p95_rel_error = r.number("by_batch_p95_rel_error");
  }
  return f;
}

CalibrationFit fit_from(const Reader& r) {
  r.only({"threads", "min_bytes", "statistic", "cache_resident_fitted", "model", "matmul",
          "attention", "median_rel_error", "p95_rel_error"});
  CalibrationFit fit;
  fit.threads = static_cast<int>(r.integer("threads"));
  fit.min_bytes = r.number("min_bytes");
  if (r.has("statistic")) {  // optional: profiles before it were fitted on the median
    const json& v = r.at("statistic");
    if (v == "min") {
      fit.statistic = FitStatistic::kMin;
    } else if (v != "median") {
      r.fail("statistic", "\"median\" or \"min\"", v);
    }
  }
  if (r.has("cache_resident_fitted")) {
    const json& v = r.at("cache_resident_fitted");
    if (!v.is_boolean()) r.fail("cache_resident_fitted", "true or false", v);
    fit.cache_resident_fitted = v.get<bool>();
  }
  for (const char* kind : {"matmul", "attention"}) {
    const Reader group = r.object(kind);
    auto& out = std::string(kind) == "matmul" ? fit.matmul : fit.attention;
    for (const auto& [format, value] : group.raw().items()) {
      (void)value;
      out[format] = rate_fit_from(group.object(format));
    }
  }
  fit.median_rel_error = r.number("median_rel_error");
  fit.p95_rel_error = r.number("p95_rel_error");
  return fit;
}

void check_schema_version(int64_t version, const std::string& source) {
  if (version != kCalibrationSchemaVersion) {
    throw InputError::bad_field(source, "schema_version",
                                std::to_string(version) +
                                    " (a profile of another llmcap version; run llmcap "
                                    "calibrate again)",
                                std::to_string(kCalibrationSchemaVersion));
  }
}

}  // namespace

std::string profile_to_json(const CalibrationProfile& p) {
  json kernels = json::array();
  for (const KernelSample& s : p.kernels) {
    kernels.push_back({{"op", s.op},
                       {"format", s.format},
                       {"backend", s.backend},
                       {"rows", s.rows},
                       {"cols", s.cols},
                       {"batch", s.batch},
                       {"threads", s.threads},
                       {"min_s", s.min_s},
                       {"median_s", s.median_s},
                       {"bytes", s.bytes},
                       {"flops", s.flops},
                       {"bytes_per_s", s.bytes_per_s},
                       {"flops_per_s", s.flops_per_s},
                       {"cache_resident", s.cache_resident}});
  }
  const CalibrationMachine& m = p.machine;
  const json doc = {
      {"schema_version", p.schema_version},
      {"created_at", p.created_at},
      {"tool", p.tool},
      {"machine",
       {{"cpu_model", m.cpu_model},
        {"isa", m.isa},
        {"num_cores", m.num_cores},
        {"l1d_bytes", m.l1d_bytes},
        {"l2_bytes", m.l2_bytes},
        {"l3_bytes", m.l3_bytes},
        {"read_bandwidth_bytes_per_s", bandwidth_to_json(m.read_bandwidth_bytes_per_s)},
        {"copy_bandwidth_bytes_per_s", bandwidth_to_json(m.copy_bandwidth_bytes_per_s)}}},
      {"kernels", kernels},
      {"fit", fit_json(p.fit)}};
  return doc.dump(2) + "\n";
}

CalibrationProfile profile_from_json(const std::string& text, const std::string& source) {
  const json doc = base::parse_json_text(text, source);
  const Reader r(doc, source, "");
  CalibrationProfile p;
  p.schema_version = static_cast<int>(r.integer("schema_version"));
  check_schema_version(p.schema_version, source);
  // Unknown keys are refused at every level (issue 29): a profile is stored with each
  // calibration run, and a key this version would drop is a key nobody sees again.
  r.only({"schema_version", "created_at", "tool", "machine", "kernels", "fit"});
  p.created_at = r.has("created_at") ? r.str("created_at") : "";
  p.tool = r.has("tool") ? r.str("tool") : "";
  const Reader m = r.object("machine");
  m.only({"cpu_model", "isa", "num_cores", "l1d_bytes", "l2_bytes", "l3_bytes",
          "read_bandwidth_bytes_per_s", "copy_bandwidth_bytes_per_s"});
  p.machine.cpu_model = m.str("cpu_model");
  p.machine.isa = m.str("isa");
  p.machine.num_cores = static_cast<int>(m.integer("num_cores"));
  if (p.machine.num_cores < 1) m.fail("num_cores", "a positive integer", m.at("num_cores"));
  for (auto [key, out] :
       {std::pair{"l1d_bytes", &p.machine.l1d_bytes}, std::pair{"l2_bytes", &p.machine.l2_bytes},
        std::pair{"l3_bytes", &p.machine.l3_bytes}}) {
    if (m.has(key)) *out = m.integer(key);
  }
  p.machine.read_bandwidth_bytes_per_s = m.bandwidth("read_bandwidth_bytes_per_s");
  if (m.has("copy_bandwidth_bytes_per_s")) {
    p.machine.copy_bandwidth_bytes_per_s = m.bandwidth("copy_bandwidth_bytes_per_s");
  }
  const json& kernels = r.at("kernels");
  if (!kernels.is_array()) r.fail("kernels", "an array", kernels);
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    const Reader k(kernels[i], source, "kernels[" + std::to_string(i) + "]");
    k.only({"op", "format", "backend", "rows", "cols", "batch", "threads", "min_s", "median_s",
            "bytes", "flops", "bytes_per_s", "flops_per_s", "cache_resident"});
    KernelSample s;
    s.op = k.str("op");
    s.format = k.str("format");
    s.backend = k.str("backend");
    s.rows = k.integer("rows");
    s.cols = k.integer("cols");
    s.batch = k.integer("batch");
    s.threads = static_cast<int>(k.integer("threads"));
    if (s.threads < 1) k.fail("threads", "a positive integer", k.at("threads"));
    s.median_s = k.number("median_s");
    if (!(s.median_s > 0)) k.fail("median_s", "a positive time in seconds", k.at("median_s"));
    s.min_s = k.has("min_s") ? k.number("min_s") : s.median_s;
    s.bytes = k.number("bytes");
    s.flops = k.has("flops") ? k.number("flops") : 0.0;
    s.bytes_per_s = k.number("bytes_per_s");
    s.flops_per_s = k.has("flops_per_s") ? k.number("flops_per_s") : 0.0;
    if (k.has("cache_resident")) {
      const json& v = k.at("cache_resident");
      if (!v.is_boolean()) k.fail("cache_resident", "true or false", v);
      s.cache_resident = v.get<bool>();
    }
    p.kernels.push_back(std::move(s));
  }
  if (r.has("fit")) {
    p.fit = fit_from(r.object("fit"));
  } else {
    p.fit = fit_calibration(p.kernels, 0, 0, false, FitStatistic::kMedian,
                            p.machine.read_bandwidth_bytes_per_s);
  }
  return p;
}

CalibrationProfile read_profile_json(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError::unreadable_file(path.string());
  std::stringstream buffer;
  buffer << in.rdbuf();
  return profile_from_json(buffer.str(), path.string());
}

std::string fit_to_json(const CalibrationFit& fit) { return fit_json(fit).dump(); }

CalibrationFit fit_from_json(const std::string& text, const std::string& source,
                             const std::string& text_name) {
  const json fit = base::parse_json_text(text, text_name);
  return fit_from(Reader(fit, source, "fit"));
}

}  // namespace llmcap::model
