#include "app/analysis_json.h"

namespace llmcap::app {

using nlohmann::json;

json analysis_to_json(const plan::Analysis& a) {
  json out = json::object();
  out["rows_analysed"] = a.rows_analysed;
  out["num_simulations"] = a.num_simulations;
  if (!a.search.empty()) {
    json list = json::array();
    for (const plan::SearchRow& s : a.search) {
      list.push_back({{"instance_type", s.instance_type},
                      {"configs_tried", s.configs_tried},
                      {"configs_pruned", s.configs_pruned},
                      {"best_config", s.best_config.empty() ? json(nullptr) : json(s.best_config)},
                      {"feasible", s.feasible},
                      {"num_instances", s.num_instances},
                      {"usd_per_hour", s.usd_per_hour},
                      {"max_load_multiplier_per_instance", s.max_load_multiplier_per_instance},
                      {"max_requests_per_s_per_instance", s.max_requests_per_s_per_instance}});
    }
    out["search"] = std::move(list);
  }
  if (!a.pareto.empty()) {
    json list = json::array();
    for (const plan::ParetoRow& p : a.pareto) {
      list.push_back({{"instance_type", p.instance_type},
                      {"config", p.config},
                      {"num_instances", p.num_instances},
                      {"usd_per_hour", p.usd_per_hour},
                      {"ttft_p99_s", p.ttft_p99_s},
                      {"tpot_p99_s", p.tpot_p99_s}});
    }
    out["pareto"] = std::move(list);
  }
  if (!a.cost_vs_load.empty()) {
    json list = json::array();
    for (const plan::CostVsLoad& c : a.cost_vs_load) {
      json points = json::array();
      for (const plan::LoadPoint& p : c.points) {
        points.push_back({{"load_multiplier", p.load_multiplier},
                          {"feasible", p.feasible},
                          {"num_instances", p.num_instances},
                          {"usd_per_hour", p.usd_per_hour}});
      }
      list.push_back({{"instance_type", c.instance_type}, {"points", std::move(points)}});
    }
    out["cost_vs_load"] = std::move(list);
  }
  if (!a.latency_cdf.empty()) {
    json list = json::array();
    for (const plan::LatencyCdf& c : a.latency_cdf) {
      json points = json::array();
      for (const plan::CdfPoint& p : c.points) {
        points.push_back({{"latency_s", p.latency_s}, {"fraction", p.fraction}});
      }
      list.push_back({{"instance_type", c.instance_type},
                      {"num_instances", c.num_instances},
                      {"metric", c.metric},
                      {"points", std::move(points)}});
    }
    out["latency_cdf"] = std::move(list);
  }
  if (!a.sensitivity.empty()) {
    json list = json::array();
    for (const plan::SensitivityRow& s : a.sensitivity) {
      list.push_back({{"parameter", s.parameter},
                      {"change", s.change},
                      {"factor", s.factor},
                      {"instance_type", s.instance_type},
                      {"feasible", s.feasible},
                      {"num_instances", s.num_instances},
                      {"usd_per_hour", s.usd_per_hour},
                      {"relative_change_usd_per_hour", s.relative_change_usd_per_hour}});
    }
    out["sensitivity"] = std::move(list);
  }
  if (!a.uncertainty.empty()) {
    json list = json::array();
    for (const plan::UncertaintyRow& u : a.uncertainty) {
      list.push_back(
          {{"instance_type", u.instance_type},
           {"confidence", u.confidence},
           {"num_instances", u.num_instances},
           {"num_instances_low", u.num_instances_low},
           {"num_instances_high", u.feasible_high ? json(u.num_instances_high) : json(nullptr)},
           {"usd_per_hour", u.usd_per_hour},
           {"usd_per_hour_low", u.usd_per_hour_low},
           {"usd_per_hour_high", u.feasible_high ? json(u.usd_per_hour_high) : json(nullptr)},
           {"step_time_error_fraction", u.step_time_error_fraction},
           {"step_time_error_source", u.step_time_error_source},
           {"price_error_fraction", u.price_error_fraction},
           {"dominant_assumption", u.dominant_assumption},
           {"text", u.text}});
    }
    out["uncertainty"] = std::move(list);
  }
  if (!a.recommendation.empty()) out["recommendation"] = a.recommendation;
  return out;
}

}  // namespace llmcap::app
