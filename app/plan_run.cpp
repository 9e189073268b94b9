#include "app/plan_run.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <string>

#include "app/analysis_json.h"
#include "app/answer_json.h"
#include "app/plan_output.h"
#include "app/published.h"
#include "app/tco_json.h"
#include "plan/analysis.h"
#include "plan/fleet_over_day.h"
#include "plan/tco.h"

namespace llmcap::app {
namespace {

using nlohmann::json;

std::string bytes_per_s_text(double v) {
  return std::to_string(static_cast<int64_t>(v / 1e9 + 0.5)) + " GB/s";
}

/// One "sources" entry.
json source_entry(const std::string& kind, const std::string& id, const std::string& name,
                  const std::string& figures, const std::string& source, const std::string& as_of) {
  return {{"kind", kind},       {"id", id},         {"name", name},
          {"figures", figures}, {"source", source}, {"as_of", as_of}};
}

/// The figures of one CPU or GPU record the plan used, as text with units.
std::string hardware_figures(const model::HardwareSpec& h) {
  std::string f = "memory bandwidth " + bytes_per_s_text(h.peak_memory_bandwidth_bytes_per_s);
  for (const auto& [dtype, flops] : h.peak_flops_per_s) {
    f += ", " + dtype + " " + std::to_string(static_cast<int64_t>(flops / 1e12 + 0.5)) + " TFLOP/s";
  }
  if (h.memory_bytes > 0) {
    f += ", memory " + std::to_string(h.memory_bytes / 1'000'000'000) + " GB";
  }
  if (h.kind == model::DeviceKind::kCpu) {
    f += ", " + std::to_string(h.num_cores) + " cores per socket";
  }
  if (h.tdp_watts > 0) f += ", TDP " + std::to_string(static_cast<int>(h.tdp_watts)) + " W";
  return f;
}

/// Every instance type the plan looked at, its hardware, and their sources, in row order
/// (each record once).
json catalog_sources(const plan::PlanResult& result, const model::Catalog& catalog) {
  json sources = json::array();
  std::set<std::string> seen_hardware;
  std::set<std::string> seen_instances;
  auto add_hardware = [&](const std::string& id) {
    if (id.empty() || !seen_hardware.insert(id).second) return;
    const model::HardwareSpec* h = catalog.find_hardware(id);
    if (h == nullptr) return;
    sources.push_back(source_entry(std::string(model::to_string(h->kind)), h->id, h->name,
                                   hardware_figures(*h), h->source, h->as_of));
    if (h->socket_link_bandwidth_bytes_per_s > 0) {
      sources.push_back(source_entry(
          "socket_link", h->id, h->name + " socket link",
          bytes_per_s_text(h->socket_link_bandwidth_bytes_per_s) + " per direction, latency " +
              std::to_string(h->socket_link_latency_s * 1e9).substr(0, 5) + " ns",
          h->socket_link_source, h->socket_link_as_of));
    }
  };
  auto add_instance = [&](const std::string& id) {
    if (!seen_instances.insert(id).second) return;
    const model::InstanceType* i = catalog.find_instance(id);
    if (i == nullptr) return;
    char price[64];
    std::snprintf(price, sizeof price, "USD %.4f/hour (%s)", i->usd_per_hour,
                  i->price_model.c_str());
    std::string figures = std::string(price) + ", " + std::to_string(i->vcpus) + " vCPUs, " +
                          std::to_string(i->memory_bytes / (1024LL * 1024 * 1024)) + " GiB";
    if (i->num_gpus > 0) figures += ", " + std::to_string(i->num_gpus) + " x " + i->gpu_id;
    sources.push_back(source_entry("instance", i->id,
                                   i->provider + " " + i->name + " (" + i->region + ")", figures,
                                   i->source, i->as_of));
    if (i->network_bandwidth_bytes_per_s > 0) {
      sources.push_back(
          source_entry("network", i->id, i->provider + " " + i->name + " network",
                       bytes_per_s_text(i->network_bandwidth_bytes_per_s) + " per direction",
                       i->network_source, i->network_as_of));
    }
    add_hardware(i->cpu_id);
    add_hardware(i->gpu_id);
  };
  for (const plan::PlanRow& row : result.rows) {
    if (row.groups.empty()) {
      add_instance(row.instance_type);
    } else {
      for (const plan::GroupRow& g : row.groups) add_instance(g.instance_type);
    }
  }
  return sources;
}

json calibration_summary(const model::CalibrationProfile* profile) {
  if (profile == nullptr) return nullptr;
  json bandwidth = json::object();
  for (const auto& [threads, bytes_per_s] : profile->machine.read_bandwidth_bytes_per_s) {
    bandwidth[std::to_string(threads)] = bytes_per_s;
  }
  return {{"cpu_model", profile->machine.cpu_model},
          {"isa", profile->machine.isa},
          {"num_cores", profile->machine.num_cores},
          {"created_at", profile->created_at},
          {"tool", profile->tool},
          {"fit_median_abs_error", profile->fit.median_rel_error},
          {"fit_p95_abs_error", profile->fit.p95_rel_error},
          {"read_bandwidth_bytes_per_s", bandwidth}};
}

}  // namespace

PlanRun make_plan_run(const plan::Scenario& scenario, const model::Catalog& base_catalog,
                      const PlanRunOptions& options) {
  // The scenario's own prices (price_overrides) replace the catalog's before anything else.
  const model::Catalog catalog = plan::catalog_with_price_overrides(
      base_catalog, scenario.price_overrides, scenario.file.string());
  PlanRun run;
  // Refuses an unoffered price term, a currency without a rate or an unknown owned server
  // before any simulation.
  const plan::ResolvedTco tco = plan::resolve_tco(scenario, catalog);
  // The plan, its analyses and its configuration search share their simulations: a search's
  // configuration that is the plan's own (bf16 on one instance of an 8-GPU type) runs once.
  plan::PlanOptions plan_options = options.plan;
  if (plan_options.shared_simulations == nullptr) {
    plan_options.shared_simulations = plan::make_shared_simulations();
  }
  run.result = plan::plan(scenario, catalog, plan_options);
  json analysis_doc = json::object();
  if (options.analysis) {
    plan::AnalysisOptions analysis_options;
    analysis_options.plan = plan_options;
    analysis_options.plan.observer = nullptr;
    // A scenario priced with engines carries their measured error into its uncertainty.
    plan::MeasuredStepTimeErrors measured;
    if ((!plan::engine_id(scenario, model::DeviceKind::kGpu, catalog).empty() ||
         !plan::engine_id(scenario, model::DeviceKind::kCpu, catalog).empty() ||
         !scenario.fitted_engines.empty()) &&
        !catalog.data_dir().empty()) {
      measured = published_step_time_errors(catalog, catalog.data_dir(), plan_options.num_threads);
      analysis_options.measured_errors = &measured;
    }
    run.analysis = plan::analyse(scenario, catalog, run.result, analysis_options);
    analysis_doc = analysis_to_json(*run.analysis);
    // With a configuration search, each type's row is its cheapest searched configuration, so
    // the table, the TCO lines and the answer quote one fleet per type.
    for (const plan::PlanRow& best : run.analysis->search_best) {
      for (plan::PlanRow& row : run.result.rows) {
        if (row.instance_type == best.instance_type && best.feasible) row = best;
      }
    }
  }
  json doc = json::parse(plan_to_json(scenario, run.result));
  doc["format"] = "llmcap-run";
  doc["schema_version"] = kRunDocumentVersion;
  doc["kind"] = "plan";
  doc["calibration"] = calibration_summary(options.plan.calibration);
  doc["sources"] = catalog_sources(run.result, catalog);
  doc["analysis"] = std::move(analysis_doc);

  // TCO of every feasible row; autoscaling uses the analysis's sustainable rate per instance
  // where it measured one.
  std::vector<plan::TcoRow> tco_rows;
  json fleet_over_day = json::array();
  for (size_t i = 0; i < run.result.rows.size(); ++i) {
    const plan::PlanRow& row = run.result.rows[i];
    run.tco.emplace_back();
    // A type without the scenario's price model: no TCO, the reason in its place.
    const std::string not_offered = plan::price_model_not_offered(row, scenario, catalog);
    if (!not_offered.empty()) doc["results"][i]["tco_not_offered"] = not_offered;
    if (!row.feasible || row.num_instances < 1 || !not_offered.empty()) {
      doc["results"][i]["tco"] = nullptr;
      continue;
    }
    double sustainable_requests_per_s = 0;
    if (run.analysis) {
      for (const plan::SearchRow& s : run.analysis->search) {
        // The rate of this very fleet (a search's best configuration may be another one).
        if (s.instance_type == row.instance_type && s.best_config == row.configuration &&
            s.num_instances == row.num_instances) {
          sustainable_requests_per_s = s.max_requests_per_s_per_instance;
        }
      }
    }
    plan::TcoRow t =
        plan::compute_tco(row, scenario, catalog, run.result.workload, sustainable_requests_per_s);
    doc["results"][i]["tco"] = tco_row_to_json(t);
    // One cost per row: the table, the answer and the TCO lines quote what the fleet costs
    // under the scenario's price model (autoscaled: the mean hour in service).
    plan::PlanRow& priced = run.result.rows[i];
    priced.usd_per_hour = t.usd_per_hour;
    priced.annual_usd = t.annual_usd;
    priced.usd_per_million_output_tokens = t.usd_per_million_output_tokens;
    priced.price_model = t.price_model;
    json& doc_row = doc["results"][i];
    doc_row["usd_per_hour"] = t.usd_per_hour;
    doc_row["annual_usd"] = t.annual_usd;
    doc_row["usd_per_million_output_tokens"] = t.usd_per_million_output_tokens;
    doc_row["price_model"] = t.price_model;
    // Every costed row's fleet over the day (plan/fleet_over_day.h): autoscaled, or the
    // instances each hour's load needs while the planned fleet is billed all day.
    const plan::FleetOverDay f = plan::fleet_over_day(row, scenario, run.result.workload, &t);
    fleet_over_day.push_back(
        {{"instance_type", f.instance_type},
         {"hourly_load_multiplier", f.hourly_load_multiplier},
         {"hourly_instances", f.hourly_instances},
         {"usd_per_day", t.autoscaled ? t.usd_per_day : t.usd_per_hour * t.hours_per_day},
         {"autoscaled", f.autoscaled},
         {"origin", f.origin},
         {"rule", f.rule}});
    tco_rows.push_back(t);
    run.tco.back() = std::move(t);
  }
  // The TCO of each type's best searched configuration, which the answer ranks instead.
  if (run.analysis) {
    for (const plan::PlanRow& row : run.analysis->search_best) {
      if (!plan::price_model_not_offered(row, scenario, catalog).empty()) {
        run.search_tco.emplace_back();  // not costed: left out of the answer
        continue;
      }
      double sustainable_requests_per_s = 0;
      for (const plan::SearchRow& s : run.analysis->search) {
        if (s.instance_type == row.instance_type && s.best_config == row.configuration) {
          sustainable_requests_per_s = s.max_requests_per_s_per_instance;
        }
      }
      run.search_tco.push_back(plan::compute_tco(row, scenario, catalog, run.result.workload,
                                                 sustainable_requests_per_s));
    }
  }
  run.answer = plan::make_answer(scenario, run.result, run.analysis ? &*run.analysis : nullptr,
                                 run.tco, run.search_tco);
  doc["answer"] = answer_to_json(run.answer);
  doc["tco"] = tco_settings_to_json(tco);
  run.tco_not_offered = tco.not_offered;
  run.tco_price_model = scenario.tco.price_model_given ? scenario.tco.price_model : "";
  for (auto& source : price_sources_to_json(tco_rows)) doc["sources"].push_back(source);
  if (!fleet_over_day.empty()) doc["analysis"]["fleet_over_day"] = fleet_over_day;
  run.document = std::move(doc);
  return run;
}

}  // namespace llmcap::app
