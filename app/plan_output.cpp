#include "app/plan_output.h"

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

#include "base/text.h"

namespace llmcap::app {

std::string workload_kind(const plan::WorkloadSpec& w) {
  if (!w.classes.empty()) return "classes";
  switch (w.kind) {
    case plan::WorkloadSpec::Kind::kTrace:
      return "trace";
    case plan::WorkloadSpec::Kind::kArrivalProcess:
      return std::string(sim::to_string(w.arrival.kind));
    case plan::WorkloadSpec::Kind::kClosedLoop:
      return "closed_loop";
  }
  return "";
}

namespace {

/// Per-class CSV columns, appended after the fixed ones (docs/metrics.md, Plan output).
constexpr const char* kClassCsvColumns[] = {
    "name",       "slo_ttft_p99_s", "slo_tpot_p99_s", "num_requests",
    "ttft_p99_s", "tpot_p99_s",     "slo_attainment", "goodput_requests_per_s"};

}  // namespace

std::string plan_to_json(const plan::Scenario& sc, const plan::PlanResult& result) {
  using nlohmann::json;
  json scenario = {
      {"name", sc.name},
      {"file", sc.file.string()},
      {"model", result.model_id},
      {"model_num_params", result.model_num_params},
      {"weight_format", model::to_string(sc.weight_format)},
      {"cpu_weight_format", model::to_string(plan::weight_format_for(sc, model::DeviceKind::kCpu))},
      {"kv_cache_format", model::to_string(sc.kv_format)},
      {"workload_kind", workload_kind(sc.workload)},
      {"workload_path", sc.workload.path.string()},
      {"slo", {{"ttft_p99_s", sc.slo.ttft_s}, {"tpot_p99_s", sc.slo.tpot_s}}},
      {"seed", sc.seed},
      {"hours_per_year", sc.hours_per_year},
  };
  if (!sc.gpu_engine.empty() || !sc.cpu_engine.empty() || !sc.fitted_engines.empty()) {
    scenario["engine"] = {{"gpu", sc.gpu_engine}, {"cpu", sc.cpu_engine}};
    if (!sc.fitted_engines.empty()) {
      std::vector<std::string> files;
      for (const model::EngineProfile& e : sc.fitted_engines) files.push_back(e.file.string());
      scenario["engine"]["profiles"] = files;
    }
  }
  if (sc.speculative.on()) {
    const plan::SpeculativeSpec& sp = sc.speculative;
    scenario["speculative"] = {{"method", plan::speculative_method_name(sp.method)},
                               {"num_draft_tokens", sp.config.num_draft_tokens},
                               {"acceptance_rates", sp.config.acceptance_rates},
                               {"tokens_per_step", sp.config.tokens_per_step()}};
    if (sp.method == plan::SpeculativeSpec::Method::kDraftModel && sp.draft_model) {
      scenario["speculative"]["draft_model"] = sp.draft_model->id;
    }
    if (sp.method == plan::SpeculativeSpec::Method::kMtp ||
        sp.method == plan::SpeculativeSpec::Method::kEagle) {
      scenario["speculative"]["draft_layers"] = sp.draft_layers;
    }
    if (!sp.source.empty()) scenario["speculative"]["source"] = sp.source;
  }
  if (!sc.workload.classes.empty()) {
    json classes = json::array();
    for (const plan::ClientClassSpec& c : sc.workload.classes) {
      classes.push_back({{"name", c.name},
                         {"workload_kind", workload_kind(c.workload)},
                         {"workload_path", c.workload.path.string()},
                         {"slo", {{"ttft_p99_s", c.slo.ttft_s}, {"tpot_p99_s", c.slo.tpot_s}}}});
    }
    scenario["classes"] = std::move(classes);
  }
  json workload = {
      {"num_requests", result.workload.num_requests},
      {"span_s", result.workload.span_s},
      {"mean_prompt_tokens", result.workload.mean_prompt_tokens},
      {"mean_output_tokens", result.workload.mean_output_tokens},
      {"p99_prompt_tokens", result.workload.p99_prompt_tokens},
  };
  if (!result.workload.classes.empty()) {
    json classes = json::array();
    for (const plan::ClassWorkloadSummary& c : result.workload.classes) {
      classes.push_back({{"name", c.name},
                         {"num_requests", c.num_requests},
                         {"mean_prompt_tokens", c.mean_prompt_tokens},
                         {"mean_output_tokens", c.mean_output_tokens},
                         {"p99_prompt_tokens", c.p99_prompt_tokens}});
    }
    workload["classes"] = std::move(classes);
  }
  json rows = json::array();
  for (const auto& r : result.rows) {
    json row = {
        {"instance_type", r.instance_type},
        {"provider", r.provider},
        {"instance_name", r.instance_name},
        {"device_kind", plan::row_kind_name(r)},
        {"hardware", r.hardware_name},
        {"feasible", r.feasible},
        {"num_instances", r.feasible ? json(r.num_instances) : json(nullptr)},
        {"num_replicas_per_instance", r.num_replicas_per_instance},
        {"tp_degree", r.tp_degree},
        {"instance_usd_per_hour", r.instance_usd_per_hour},
        {"price_model", r.price_model},
        {"instance_note", r.instance_note},
        {"usd_per_hour", r.feasible ? json(r.usd_per_hour) : json(nullptr)},
        {"usd_per_million_output_tokens",
         r.feasible ? json(r.usd_per_million_output_tokens) : json(nullptr)},
        {"annual_usd", r.feasible ? json(r.annual_usd) : json(nullptr)},
        {"ttft_p50_s", r.feasible ? json(r.metrics.ttft.p50_s) : json(nullptr)},
        {"ttft_p99_s", r.feasible ? json(r.metrics.ttft.p99_s) : json(nullptr)},
        {"tpot_p50_s", r.feasible ? json(r.metrics.tpot.p50_s) : json(nullptr)},
        {"tpot_p99_s", r.feasible ? json(r.metrics.tpot.p99_s) : json(nullptr)},
        {"itl_p99_s", r.feasible ? json(r.metrics.itl.p99_s) : json(nullptr)},
        {"e2e_latency_p99_s", r.feasible ? json(r.metrics.e2e_latency.p99_s) : json(nullptr)},
        {"goodput_requests_per_s",
         r.feasible ? json(r.metrics.goodput_requests_per_s) : json(nullptr)},
        {"prefix_cache_hit_rate",
         r.feasible ? json(r.metrics.prefix_cache_hit_rate) : json(nullptr)},
        {"prefix_cache_saved_prefill_tokens",
         r.feasible ? json(r.metrics.num_saved_prefill_tokens) : json(nullptr)},
        {"prefix_cache_evicted_blocks",
         r.feasible ? json(r.metrics.num_evicted_blocks) : json(nullptr)},
        {"kv_offload_loaded_tokens",
         r.feasible ? json(r.metrics.num_kv_offload_loaded_tokens) : json(nullptr)},
        {"kv_offload_load_s", r.feasible ? json(r.metrics.kv_offload_load_s) : json(nullptr)},
        {"tpot_floor_s", r.tpot_floor_s},
        {"ttft_floor_s", r.ttft_floor_s},
        {"infeasible_reason", r.feasible ? json(nullptr) : json(r.infeasible_reason)},
        {"deployment_rule", r.deployment_rule},
        {"predictor", r.predictor},
        {"engine", r.engine},
        {"num_simulations", r.num_simulations},
        {"configuration", r.configuration},
    };
    if (!r.classes.empty()) {
      // Metrics are null for infeasible rows, as the row's own.
      auto value = [&r](auto v) { return r.feasible ? json(v) : json(nullptr); };
      json classes = json::array();
      for (const plan::ClassRow& c : r.classes) {
        const sim::Metrics& m = c.metrics;
        classes.push_back({
            {"name", c.name},
            {"slo", {{"ttft_p99_s", c.slo.ttft_s}, {"tpot_p99_s", c.slo.tpot_s}}},
            {"ttft_floor_s", c.ttft_floor_s},
            {"num_requests", value(m.num_requests)},
            {"num_completed", value(m.num_completed)},
            {"num_rejected", value(m.num_rejected)},
            {"ttft_p50_s", value(m.ttft.p50_s)},
            {"ttft_p99_s", value(m.ttft.p99_s)},
            {"tpot_p50_s", value(m.tpot.p50_s)},
            {"tpot_p99_s", value(m.tpot.p99_s)},
            {"e2e_latency_p99_s", value(m.e2e_latency.p99_s)},
            {"slo_attainment", value(m.slo_attainment)},
            {"goodput_requests_per_s", value(m.goodput_requests_per_s)},
            {"prefix_cache_hit_rate", value(m.prefix_cache_hit_rate)},
            {"throughput_output_tokens_per_s", value(m.throughput_output_tokens_per_s)},
        });
      }
      row["classes"] = std::move(classes);
    }
    rows.push_back(std::move(row));
  }
  json doc = {{"scenario", scenario}, {"workload", workload}, {"results", rows}};
  return doc.dump(2) + "\n";
}

std::string plan_to_csv(const plan::PlanResult& result) {
  std::ostringstream o;
  o.precision(10);
  o << "instance_type,device_kind,feasible,num_instances,usd_per_hour,"
       "usd_per_million_output_tokens,annual_usd,ttft_p50_s,ttft_p99_s,tpot_p50_s,tpot_p99_s,"
       "infeasible_reason";
  const size_t num_classes = result.workload.classes.size();
  for (size_t c = 0; c < num_classes; ++c) {
    for (const char* column : kClassCsvColumns) o << ",class_" << c << "_" << column;
  }
  o << "\n";
  for (const auto& r : result.rows) {
    o << base::csv_cell(r.instance_type) << ',' << plan::row_kind_name(r) << ','
      << (r.feasible ? "true" : "false") << ',';
    if (r.feasible) {
      o << r.num_instances << ',' << r.usd_per_hour << ',' << r.usd_per_million_output_tokens << ','
        << r.annual_usd << ',' << r.metrics.ttft.p50_s << ',' << r.metrics.ttft.p99_s << ','
        << r.metrics.tpot.p50_s << ',' << r.metrics.tpot.p99_s << ",";
    } else {
      o << ",,,,,,,," << base::csv_cell(r.infeasible_reason, true);
    }
    for (size_t c = 0; c < num_classes; ++c) {
      if (c >= r.classes.size()) {
        o << std::string(std::size(kClassCsvColumns), ',');
        continue;
      }
      const plan::ClassRow& k = r.classes[c];
      o << ',' << base::csv_cell(k.name, true) << ',' << k.slo.ttft_s << ',' << k.slo.tpot_s << ',';
      if (r.feasible) {
        o << k.metrics.num_requests << ',' << k.metrics.ttft.p99_s << ',' << k.metrics.tpot.p99_s
          << ',' << k.metrics.slo_attainment << ',' << k.metrics.goodput_requests_per_s;
      } else {
        o << ",,,,";
      }
    }
    o << "\n";
  }
  return o.str();
}

}  // namespace llmcap::app
