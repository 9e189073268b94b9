// Reading claims of the audit (model/audit.h): the claims file, its fields and their checks, and
// the models it names.
#include <algorithm>
#include <cctype>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "base/json_reader.h"
#include "base/text.h"
#include "model/audit.h"
#include "model/audit_lookup.h"
#include "model/input_error.h"
#include "model/model_description.h"

namespace llmcap::model {

using nlohmann::json;

namespace {

using audit_lookup::find_model;
using audit_lookup::id_list;
using audit_lookup::known_hardware;

/// The most sequences a claim's batch may have (docs/audit.md).
constexpr int64_t kMaxClaimBatch = 1'000'000;

/// "DDR5-5600" -> 5600; 0 when `type` is not (LP)DDR<digit>[X]-<MT/s>.
int64_t parse_memory_type(const std::string& type) {
  std::size_t i = 0;
  if (type.rfind("LP", 0) == 0) i = 2;
  if (type.compare(i, 3, "DDR") != 0) return 0;
  i += 3;
  if (i >= type.size() || !std::isdigit(static_cast<unsigned char>(type[i]))) return 0;
  ++i;
  if (i < type.size() && type[i] == 'X') ++i;
  if (i >= type.size() || type[i] != '-') return 0;
  ++i;
  if (i >= type.size() || type.size() - i > 6) return 0;
  int64_t mts = 0;
  for (; i < type.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(type[i]))) return 0;
    mts = mts * 10 + (type[i] - '0');
  }
  return mts;
}

// ---- Reading claims --------------------------------------------------------------------------

const std::set<std::string>& known_claim_fields() {
  static const std::set<std::string> fields = {"id",
                                               "hardware",
                                               "num_cores",
                                               "memory_bytes",
                                               "model",
                                               "weight_format",
                                               "kv_format",
                                               "batch",
                                               "context_tokens",
                                               "tpot_s",
                                               "output_tokens_per_s",
                                               "memory_type",
                                               "memory_bandwidth_bytes_per_s",
                                               "num_channels",
                                               "source",
                                               "as_of",
                                               "note"};
  return fields;
}

std::string joined(const std::set<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

/// Reads the fields of one claim; every error names file, claim and field.
class ClaimReader : public base::JsonReader {
 public:
  ClaimReader(const json& rec, const std::string& source, const std::string& claim)
      : base::JsonReader(rec, source, "", claim_style(), claim), rec_(rec) {}

  void rename(std::string claim) { set_record(std::move(claim)); }
  std::string where() const { return file() + ": " + record(); }
  std::string field_context(const std::string& field) const {
    return where() + ": field \"" + field + "\"";
  }

  std::string string(const std::string& field) const { return non_empty_string(field); }
  std::string string_or(const std::string& field, const std::string& fallback) const {
    return non_empty_string_or(field, fallback);
  }

  /// A positive whole number (an integer, or a number with no fraction such as 1.28e11).
  int64_t positive_integer(const std::string& field) const { return positive_int(field); }

  void reject_unknown_fields() const {
    for (const auto& [key, value] : rec_.items()) {
      if (known_claim_fields().count(key) == 0) {
        throw InputError(where() + ": unknown field \"" + key +
                         "\"; known: " + joined(known_claim_fields()));
      }
    }
  }

 private:
  /// A claim's style: an absent field is "nothing (missing)", whole numbers up to 9e18 may be
  /// written with a zero fraction.
  static base::JsonReaderStyle claim_style() {
    base::JsonReaderStyle style;
    style.missing_names_expected = true;
    style.missing_text = "nothing (missing)";
    style.whole_floats = true;
    style.whole_floats_below = std::nextafter(9e18, std::numeric_limits<double>::infinity());
    return style;
  }

  const json& rec_;
};

Claim read_claim(const ClaimReader& r, const std::string& id, const Catalog& catalog,
                 const std::vector<ModelSpec>& models) {
  r.reject_unknown_fields();
  Claim c;
  c.id = id;
  c.source = r.string("source");
  c.as_of = r.string("as_of");
  c.note = r.string_or("note", "");

  const std::vector<std::string> figures = {"tpot_s", "output_tokens_per_s",
                                            "memory_bandwidth_bytes_per_s"};
  int num_figures = 0;
  for (const std::string& f : figures) num_figures += r.has(f) ? 1 : 0;
  if (num_figures != 1) {
    throw InputError(r.where() +
                     ": expected exactly one of the fields \"tpot_s\" (seconds per output token), "
                     "\"output_tokens_per_s\" (throughput over the batch) or "
                     "\"memory_bandwidth_bytes_per_s\", got " +
                     std::to_string(num_figures));
  }
  if (r.has("tpot_s")) {
    c.kind = ClaimKind::kTpot;
    c.tpot_s = r.positive_number("tpot_s");
  } else if (r.has("output_tokens_per_s")) {
    c.kind = ClaimKind::kThroughput;
    c.output_tokens_per_s = r.positive_number("output_tokens_per_s");
  } else {
    c.kind = ClaimKind::kMemoryBandwidth;
    c.memory_bandwidth_bytes_per_s = r.positive_number("memory_bandwidth_bytes_per_s");
  }
  const bool bandwidth = c.kind == ClaimKind::kMemoryBandwidth;

  // Hardware: a CPU/GPU id or an instance id (optional for a bandwidth claim).
  const HardwareSpec* hw = nullptr;
  const InstanceType* instance = nullptr;
  if (!bandwidth || r.has("hardware")) {
    c.hardware = r.string("hardware");
    hw = catalog.find_hardware(c.hardware);
    instance = hw == nullptr ? catalog.find_instance(c.hardware) : nullptr;
    if (hw == nullptr && instance == nullptr) {
      throw InputError(r.field_context("hardware") + ": unknown hardware or instance \"" +
                       c.hardware + "\"; " + known_hardware(catalog));
    }
  }
  if (r.has("num_cores")) {
    const int64_t cores = r.positive_integer("num_cores");
    if (hw == nullptr || hw->kind != DeviceKind::kCpu) {
      r.fail("num_cores",
             "no such field unless \"hardware\" is a CPU id (an instance's cores come from "
             "its catalog record, a GPU has none)",
             r.got("num_cores") + " with hardware \"" + c.hardware + "\"");
    }
    if (cores > hw->num_cores) {
      r.fail(
          "num_cores",
          "at most the " + std::to_string(hw->num_cores) + " cores of one " + hw->name + " socket",
          std::to_string(cores));
    }
    c.num_cores = static_cast<int>(cores);
  }
  if (r.has("memory_bytes")) c.memory_bytes = r.positive_integer("memory_bytes");

  if (bandwidth) {
    for (const char* f : {"model", "weight_format", "kv_format", "batch", "context_tokens"}) {
      if (r.has(f)) {
        r.fail(f, "no such field on a memory-bandwidth claim", r.got(f));
      }
    }
    c.memory_type = r.string("memory_type");
    c.memory_transfer_rate_mts = parse_memory_type(c.memory_type);
    if (c.memory_transfer_rate_mts <= 0) {
      r.fail("memory_type", "a DDR memory type with its transfer rate, e.g. \"DDR5-5600\"",
             r.got("memory_type"));
    }
    if (r.has("num_channels")) {
      const int64_t channels = r.positive_integer("num_channels");
      if (channels > 64) r.fail("num_channels", "at most 64", std::to_string(channels));
      c.num_channels = static_cast<int>(channels);
    }
    if (instance != nullptr && instance->kind != DeviceKind::kCpu) {
      r.fail("hardware", "a CPU or a CPU instance (a DDR memory-bandwidth claim)",
             "\"" + c.hardware + "\" (a GPU instance)");
    }
    if (hw != nullptr && hw->kind != DeviceKind::kCpu) {
      r.fail("hardware", "a CPU or a CPU instance (a DDR memory-bandwidth claim)",
             "\"" + c.hardware + "\" (a GPU)");
    }
    return c;
  }

  for (const char* f : {"memory_type", "num_channels"}) {
    if (r.has(f)) r.fail(f, "no such field on a latency or throughput claim", r.got(f));
  }
  c.model = r.string("model");
  const ModelSpec* model = find_model(models, c.model);
  if (model == nullptr) {
    throw InputError(r.field_context("model") + ": unknown model \"" + c.model +
                     "\"; known: " + id_list(models));
  }
  if (r.has("weight_format")) {
    c.weight_format =
        parse_weight_format(r.string("weight_format"), r.field_context("weight_format"));
    check_weight_format(*model, *c.weight_format, r.field_context("weight_format"));
  }
  if (r.has("kv_format")) {
    c.kv_format = parse_kv_format(r.string("kv_format"), r.field_context("kv_format"));
  }
  // Bounded so that batch x context_tokens and the bytes derived from them fit 64 bits.
  c.batch = r.positive_integer("batch");
  if (c.batch > kMaxClaimBatch) {
    r.fail("batch", "an integer up to 1000000 (sequences)", std::to_string(c.batch));
  }
  c.context_tokens = r.positive_integer("context_tokens");
  if (c.context_tokens > kMaxConfigInteger) {
    r.fail("context_tokens", "an integer up to " + std::to_string(kMaxConfigInteger) + " (tokens)",
           std::to_string(c.context_tokens));
  }
  return c;
}

}  // namespace

std::vector<ModelSpec> load_models(const std::filesystem::path& models_dir) {
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (std::filesystem::recursive_directory_iterator it(models_dir, ec), end; !ec && it != end;
       it.increment(ec)) {
    if (it->is_regular_file() && it->path().extension() == ".json") files.push_back(it->path());
  }
  if (ec) {
    throw InputError(models_dir.string() + ": cannot read the models folder: " + ec.message());
  }
  std::sort(files.begin(), files.end());
  std::vector<ModelSpec> models;
  std::vector<std::filesystem::path> read_from;
  for (const auto& f : files) {
    ModelSpec m = load_model_spec(f);
    for (std::size_t k = 0; k < models.size(); ++k) {
      if (models[k].id == m.id) {
        throw InputError(f.string() + ": model id \"" + m.id + "\" is also the id of " +
                         read_from[k].string() + "; a claim could not tell them apart");
      }
    }
    models.push_back(std::move(m));
    read_from.push_back(f);
  }
  return models;
}

std::vector<Claim> parse_claims(const std::string& text, const std::string& source,
                                const Catalog& catalog, const std::vector<ModelSpec>& models) {
  const json doc = base::parse_json_text(text, source);
  if (!doc.is_object() || !doc.contains("claims") || !doc.at("claims").is_array()) {
    throw InputError(source + ": field \"claims\": expected an array of claims, got " +
                     (doc.is_object() && doc.contains("claims") ? doc.at("claims").dump()
                                                                : std::string("nothing")));
  }
  for (const auto& [key, value] : doc.items()) {
    if (key != "claims" && key != "source" && key != "as_of" && key != "note") {
      throw InputError(source + ": unknown top-level field \"" + key +
                       "\"; known: claims, source, as_of, note");
    }
  }
  std::vector<Claim> claims;
  std::set<std::string> ids;
  const json& array = doc.at("claims");
  for (std::size_t k = 0; k < array.size(); ++k) {
    const json& rec = array[k];
    ClaimReader r(rec, source, "claim " + std::to_string(k));
    if (!rec.is_object()) r.fail("claims[" + std::to_string(k) + "]", "an object", rec.dump());
    const std::string id = r.string("id");
    r.rename("claim \"" + id + "\"");
    if (!ids.insert(id).second) {
      throw InputError(r.field_context("id") + ": duplicate claim id \"" + id + "\"");
    }
    claims.push_back(read_claim(r, id, catalog, models));
  }
  return claims;
}

std::vector<Claim> read_claims(const std::filesystem::path& path, const Catalog& catalog,
                               const std::vector<ModelSpec>& models) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError::unreadable_file(path.string());
  std::stringstream text;
  text << in.rdbuf();
  return parse_claims(text.str(), path.string(), catalog, models);
}

}  // namespace llmcap::model
