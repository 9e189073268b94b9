#include "app/answer_json.h"

namespace llmcap::app {
namespace {

using nlohmann::json;

json option_to_json(const plan::AnswerOption& o) {
  return {{"instance_type", o.instance_type},
          {"device_kind", o.device_kind},
          {"hardware_name", o.hardware_name},
          {"num_instances", o.num_instances},
          {"num_instances_billed", o.num_instances_billed},
          {"configuration", o.configuration},
          {"from_search", o.from_search},
          {"price_model", o.price_model},
          {"cost_per_hour", o.cost_per_hour},
          {"cost_per_year", o.cost_per_year},
          {"cost_per_million_output_tokens", o.cost_per_million_output_tokens}};
}

plan::AnswerOption option_from_json(const json& j) {
  plan::AnswerOption o;
  o.instance_type = j.at("instance_type").get<std::string>();
  o.device_kind = j.at("device_kind").get<std::string>();
  o.hardware_name = j.at("hardware_name").get<std::string>();
  o.num_instances = j.at("num_instances").get<int64_t>();
  o.num_instances_billed = j.at("num_instances_billed").get<int64_t>();
  o.configuration = j.at("configuration").get<std::string>();
  o.from_search = j.at("from_search").get<bool>();
  o.price_model = j.at("price_model").get<std::string>();
  o.cost_per_hour = j.at("cost_per_hour").get<double>();
  o.cost_per_year = j.at("cost_per_year").get<double>();
  o.cost_per_million_output_tokens = j.at("cost_per_million_output_tokens").get<double>();
  return o;
}

}  // namespace

json answer_to_json(const plan::Answer& a) {
  json j = {{"feasible", a.feasible},
            {"headline", a.headline},
            {"price_model", a.price_model},
            {"currency", a.currency},
            {"why_not", a.why_not}};
  const json option = a.feasible ? option_to_json(a.recommended) : json();
  for (const char* key : {"instance_type", "device_kind", "hardware_name", "num_instances",
                          "num_instances_billed", "configuration", "from_search", "cost_per_hour",
                          "cost_per_year", "cost_per_million_output_tokens"}) {
    j[key] = a.feasible ? option.at(key) : json();
  }
  j["offer"] = a.feasible ? json(a.recommended.price_model) : json();
  j["cost_per_month"] = a.feasible ? json(a.cost_per_month) : json();
  j["cost_range_95"] =
      a.has_range ? json::array({a.cost_per_hour_low,
                                 a.cost_per_hour_high > 0 ? json(a.cost_per_hour_high) : json()})
                  : json();
  j["confidence"] = a.has_range ? json(a.confidence) : json();
  j["dominant_assumption"] = a.has_range ? json(a.dominant_assumption) : json();
  j["binding_constraint"] = a.feasible ? json(a.binding_constraint) : json();
  j["binding_margin"] = a.feasible ? json(a.binding_margin) : json();
  j["binding_text"] = a.feasible ? json(a.binding_text) : json();
  j["runner_up"] = a.runner_up ? option_to_json(*a.runner_up) : json();
  j["other_device_kind"] =
      a.other_kind_candidate
          ? json{{"kind", a.other_kind},
                 {"cheapest",
                  a.other_kind_cheapest ? option_to_json(*a.other_kind_cheapest) : json()},
                 {"cost_ratio", a.other_kind_cheapest ? json(a.other_kind_cost_ratio) : json()},
                 {"text", a.other_kind_text}}
          : json();
  return j;
}

plan::Answer answer_from_json(const json& j) {
  plan::Answer a;
  a.feasible = j.at("feasible").get<bool>();
  a.headline = j.at("headline").get<std::string>();
  a.price_model = j.at("price_model").get<std::string>();
  a.currency = j.at("currency").get<std::string>();
  a.why_not = j.at("why_not").get<std::vector<std::string>>();
  if (a.feasible) {
    json option = j;
    option["price_model"] = j.at("offer");
    a.recommended = option_from_json(option);
    a.cost_per_month = j.at("cost_per_month").get<double>();
    a.binding_constraint = j.at("binding_constraint").get<std::string>();
    a.binding_margin = j.at("binding_margin").get<double>();
    a.binding_text = j.at("binding_text").get<std::string>();
  }
  if (const json& r = j.at("cost_range_95"); !r.is_null()) {
    a.has_range = true;
    a.cost_per_hour_low = r.at(0).get<double>();
    a.cost_per_hour_high = r.at(1).is_null() ? 0 : r.at(1).get<double>();
    a.confidence = j.at("confidence").get<double>();
    a.dominant_assumption = j.at("dominant_assumption").get<std::string>();
  }
  if (const json& r = j.at("runner_up"); !r.is_null()) a.runner_up = option_from_json(r);
  if (const json& o = j.at("other_device_kind"); !o.is_null()) {
    a.other_kind_candidate = true;
    a.other_kind = o.at("kind").get<std::string>();
    if (!o.at("cheapest").is_null()) {
      a.other_kind_cheapest = option_from_json(o.at("cheapest"));
      a.other_kind_cost_ratio = o.at("cost_ratio").get<double>();
    }
    a.other_kind_text = o.at("text").get<std::string>();
  }
  return a;
}

}  // namespace llmcap::app
