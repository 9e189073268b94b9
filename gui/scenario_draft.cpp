#include "gui/scenario_draft.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <sstream>
#include <system_error>

#include "base/error.h"
#include "base/json_reader.h"
#include "model/input_error.h"
#include "plan/price_overrides.h"
#include "plan/scenario_files.h"

namespace llmcap::gui {
namespace {

using Json = nlohmann::json;

constexpr const char* kOverridesKey = "price_overrides";

/// Multiplies the load of one workload object (not "classes").
void scale_source(Json& w, double m) {
  const std::string kind = w.value("kind", "trace");
  if (kind == "trace") {
    const double base = w.contains("rate_multiplier") && w["rate_multiplier"].is_number()
                            ? w["rate_multiplier"].get<double>()
                            : 1.0;
    w["rate_multiplier"] = base * m;
  } else if (kind == "closed_loop") {
    if (w.contains("num_users") && w["num_users"].is_number()) {
      const double users = w["num_users"].get<double>() * m;
      w["num_users"] = std::max<int64_t>(1, std::llround(users));
    }
  } else if (w.contains("rate_per_s") && w["rate_per_s"].is_number()) {
    w["rate_per_s"] = w["rate_per_s"].get<double>() * m;
  }
}

}  // namespace

ScenarioDraft ScenarioDraft::from_file(const std::filesystem::path& path,
                                       const std::filesystem::path& data_dir) {
  std::ifstream in(path);
  if (!in) throw plan::InputError(path.string() + ": cannot open file");
  std::ostringstream text;
  text << in.rdbuf();
  return from_text(text.str(), path, data_dir);
}

ScenarioDraft ScenarioDraft::from_text(const std::string& text, const std::filesystem::path& path,
                                       const std::filesystem::path& data_dir) {
  // Validate first: the scenario loader names the file and field.
  (void)plan::load_scenario_text(text, path, data_dir);
  ScenarioDraft d;
  d.path_ = path;
  d.data_dir_ = data_dir;
  d.json_ = base::parse_json_text(text, path.string());
  // Overrides are checked here too, so that a bad one is reported when the file is opened.
  if (d.json_.contains(kOverridesKey)) {
    const Json& list = d.json_[kOverridesKey];
    if (!list.is_array()) {
      throw base::InputError::bad_field(
          path.string(), kOverridesKey, list.dump(),
          "a list of {\"instance\", \"price_model\", \"usd_per_hour\", \"as_of\"}");
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const Json& o = list[i];
      const std::string field = std::string(kOverridesKey) + "[" + std::to_string(i) + "]";
      if (!o.is_object() || !o.contains("instance") || !o["instance"].is_string() ||
          !o.contains("price_model") || !o["price_model"].is_string() ||
          !o.contains("usd_per_hour") || !o["usd_per_hour"].is_number() ||
          !(o["usd_per_hour"].get<double>() > 0)) {
        throw base::InputError::bad_field(path.string(), field, o.dump(),
                                          "{\"instance\": id, \"price_model\": name, "
                                          "\"usd_per_hour\": a positive number, \"as_of\": "
                                          "date}");
      }
    }
  }
  return d;
}

Json ScenarioDraft::effective_json() const {
  Json j = json_;
  if (load_multiplier_ == 1.0 || !j.contains("workload") || !j["workload"].is_object()) return j;
  Json& w = j["workload"];
  if (w.value("kind", "") == "classes" && w.contains("classes") && w["classes"].is_array()) {
    for (Json& c : w["classes"]) scale_source(c, load_multiplier_);
  } else {
    scale_source(w, load_multiplier_);
  }
  return j;
}

std::string ScenarioDraft::text() const { return effective_json().dump(2) + "\n"; }

plan::Scenario ScenarioDraft::scenario() const {
  if (!(load_multiplier_ > 0) || !std::isfinite(load_multiplier_)) {
    throw plan::InputError(path_.string() + ": load multiplier: expected a positive number, got " +
                           std::to_string(load_multiplier_));
  }
  return plan::load_scenario_text(effective_json().dump(), path_, data_dir_);
}

bool ScenarioDraft::has_single_slo() const {
  return !(json_.contains("workload") && json_["workload"].is_object() &&
           json_["workload"].value("kind", "") == "classes");
}

double ScenarioDraft::slo_ttft_s() const {
  if (!json_.contains("slo") || !json_["slo"].is_object()) return 0;
  const Json& v = json_["slo"].value("ttft_p99_s", Json(0.0));
  return v.is_number() ? v.get<double>() : 0.0;
}

double ScenarioDraft::slo_tpot_s() const {
  if (!json_.contains("slo") || !json_["slo"].is_object()) return 0;
  const Json& v = json_["slo"].value("tpot_p99_s", Json(0.0));
  return v.is_number() ? v.get<double>() : 0.0;
}

std::string ScenarioDraft::verdict_context() const {
  Json j = json_;
  if (j.is_object()) {
    for (const char* key : {"slo", "tco", kOverridesKey}) j.erase(key);
  }
  return j.dump();
}

void ScenarioDraft::set_slo(double ttft_p99_s, double tpot_p99_s) {
  json_["slo"]["ttft_p99_s"] = ttft_p99_s;
  json_["slo"]["tpot_p99_s"] = tpot_p99_s;
}

std::string ScenarioDraft::weight_format() const {
  return json_.contains("weight_format") && json_["weight_format"].is_string()
             ? json_["weight_format"].get<std::string>()
             : "bf16";
}

void ScenarioDraft::set_weight_format(const std::string& name) { json_["weight_format"] = name; }

std::string ScenarioDraft::weight_format(const std::string& kind) const {
  if (!json_.contains("weight_format")) return "bf16";
  const Json& w = json_["weight_format"];
  if (w.is_string()) return w.get<std::string>();
  return w.is_object() && w.contains(kind) && w[kind].is_string() ? w[kind].get<std::string>()
                                                                  : "bf16";
}

void ScenarioDraft::set_weight_format(const std::string& kind, const std::string& name) {
  const std::string other_kind = kind == "cpu" ? "gpu" : "cpu";
  const std::string other = weight_format(other_kind);
  json_["weight_format"] = Json::object({{kind, name}, {other_kind, other}});
}

std::string ScenarioDraft::currency() const {
  if (!json_.contains("tco") || !json_["tco"].is_object()) return "USD";
  const Json& t = json_["tco"];
  return t.contains("currency") && t["currency"].is_string() ? t["currency"].get<std::string>()
                                                             : "USD";
}

void ScenarioDraft::set_currency(const std::string& code) {
  if (code == "USD" || code.empty()) {
    if (json_.contains("tco") && json_["tco"].is_object()) {
      json_["tco"].erase("currency");
      if (json_["tco"].empty()) json_.erase("tco");
    }
    return;
  }
  json_["tco"]["currency"] = code;
}

std::string ScenarioDraft::price_model() const {
  if (!json_.contains("tco") || !json_["tco"].is_object()) return "";
  const Json& t = json_["tco"];
  return t.contains("price_model") && t["price_model"].is_string()
             ? t["price_model"].get<std::string>()
             : "";
}

void ScenarioDraft::set_price_model(const std::string& name) {
  if (name.empty()) {
    if (json_.contains("tco") && json_["tco"].is_object()) {
      json_["tco"].erase("price_model");
      if (json_["tco"].empty()) json_.erase("tco");
    }
    return;
  }
  json_["tco"]["price_model"] = name;
}

std::vector<std::string> ScenarioDraft::candidates() const {
  std::vector<std::string> ids;
  if (!json_.contains("candidates") || !json_["candidates"].is_array()) return ids;
  for (const Json& id : json_["candidates"]) {
    if (id.is_string()) ids.push_back(id.get<std::string>());
  }
  return ids;
}

void ScenarioDraft::set_candidates(const std::vector<std::string>& ids) {
  if (ids.empty()) {
    json_["candidates"] = "all";
  } else {
    json_["candidates"] = ids;
  }
}

std::filesystem::path ScenarioDraft::model_path() const {
  if (!json_.contains("model") || !json_["model"].is_string()) return {};
  const std::string value = json_["model"].get<std::string>();
  if (value.empty()) return {};
  return plan::find_scenario_file(value, plan::ScenarioFileKind::kModel, path_.parent_path(),
                                  data_dir_)
      .path.lexically_normal();
}

void ScenarioDraft::set_model_path(const std::filesystem::path& config_json) {
  const std::filesystem::path base = path_.parent_path();
  if (!data_dir_.empty() && config_json.extension() == ".json") {
    const std::string id = config_json.stem().string();
    const plan::ScenarioFileLookup by_id =
        plan::find_scenario_file(id, plan::ScenarioFileKind::kModel, base, data_dir_);
    std::error_code ec;
    if (by_id.found && std::filesystem::equivalent(by_id.path, config_json, ec)) {
      json_["model"] = id;
      return;
    }
  }
  std::filesystem::path stored = config_json;
  if (!base.empty()) {
    const std::filesystem::path rel =
        std::filesystem::absolute(config_json).lexically_relative(std::filesystem::absolute(base));
    if (!rel.empty()) stored = rel;
  }
  json_["model"] = stored.generic_string();
}

std::vector<PriceOverride> ScenarioDraft::price_overrides() const {
  std::vector<PriceOverride> out;
  if (!json_.contains(kOverridesKey) || !json_[kOverridesKey].is_array()) return out;
  for (const Json& o : json_[kOverridesKey]) {
    PriceOverride p;
    p.instance = o.value("instance", "");
    p.price_model = o.value("price_model", "");
    p.usd_per_hour = o.value("usd_per_hour", 0.0);
    p.as_of = o.value("as_of", "");
    p.source = o.value("source", p.source);
    out.push_back(std::move(p));
  }
  return out;
}

void ScenarioDraft::set_price_override(const PriceOverride& price) {
  clear_price_override(price.instance, price.price_model);
  json_[kOverridesKey].push_back({{"instance", price.instance},
                                  {"price_model", price.price_model},
                                  {"usd_per_hour", price.usd_per_hour},
                                  {"source", "edited in llmcap-gui"},
                                  {"as_of", price.as_of}});
}

void ScenarioDraft::clear_price_override(const std::string& instance,
                                         const std::string& price_model) {
  if (!json_.contains(kOverridesKey) || !json_[kOverridesKey].is_array()) return;
  Json& list = json_[kOverridesKey];
  for (auto it = list.begin(); it != list.end();) {
    if (it->value("instance", "") == instance && it->value("price_model", "") == price_model) {
      it = list.erase(it);
    } else {
      ++it;
    }
  }
  if (list.empty()) json_.erase(kOverridesKey);
}

void ScenarioDraft::commit_load_multiplier() {
  json_ = effective_json();
  load_multiplier_ = 1.0;
}

void ScenarioDraft::rebase(const std::filesystem::path& path) {
  const std::filesystem::path old_base = std::filesystem::absolute(path_).parent_path();
  const std::filesystem::path new_base = std::filesystem::absolute(path).parent_path();
  const auto move = [&](Json& obj, const char* key) {
    if (!obj.is_object() || !obj.contains(key) || !obj[key].is_string()) return;
    const std::string value = obj[key].get<std::string>();
    const std::filesystem::path p = value;
    if (p.is_absolute()) return;
    std::error_code ec;
    const bool id =
        value.find('/') == std::string::npos && !std::filesystem::exists(old_base / p, ec);
    if (id) return;  // looked up in the data folder wherever the scenario lies
    const std::filesystem::path target = (old_base / p).lexically_normal();
    const std::filesystem::path rel = target.lexically_relative(new_base);
    obj[key] = (rel.empty() ? target : rel).generic_string();
  };
  move(json_, "model");
  if (json_.contains("workload") && json_["workload"].is_object()) {
    Json& w = json_["workload"];
    move(w, "path");
    move(w, "lengths_path");
    if (w.contains("classes") && w["classes"].is_array()) {
      for (Json& c : w["classes"]) {
        move(c, "path");
        move(c, "lengths_path");
      }
    }
  }
  path_ = path;
}

model::Catalog catalog_with_prices(const model::Catalog& catalog,
                                   const std::vector<PriceOverride>& overrides,
                                   const std::string& file) {
  return plan::catalog_with_price_overrides(catalog, overrides, file);
}

double parse_price_text(const std::string& text, const std::string& file,
                        const std::string& instance, const std::string& price_model) {
  std::string t = text;
  t.erase(0, t.find_first_not_of(" \t"));
  t.erase(t.find_last_not_of(" \t") + 1);
  double v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size() || !(v > 0) ||
      !std::isfinite(v)) {
    throw base::InputError::bad_field(file, "price_overrides." + instance + "." + price_model,
                                      "\"" + text + "\"", "a positive number of USD per hour");
  }
  return v;
}

}  // namespace llmcap::gui
