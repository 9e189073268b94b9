#include "cli/plan_output.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace llmcap::cli {

std::string fixed_decimals(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string grouped_thousands(double v) {
  std::string digits = fixed_decimals(std::round(v), 0);
  std::string out;
  const size_t n = digits.size();
  const size_t sign = (n > 0 && digits[0] == '-') ? 1 : 0;
  for (size_t i = 0; i < n; ++i) {
    out += digits[i];
    if (i >= sign && (n - i - 1) % 3 == 0 && i + 1 < n) out += ',';
  }
  return out;
}

namespace {

std::string pad(const std::string& s, size_t width, bool right = false) {
  if (s.size() >= width) return s;
  return right ? std::string(width - s.size(), ' ') + s : s + std::string(width - s.size(), ' ');
}

std::vector<const plan::PlanRow*> sorted_rows(const plan::PlanResult& result) {
  std::vector<const plan::PlanRow*> rows;
  for (const auto& r : result.rows) rows.push_back(&r);
  std::stable_sort(rows.begin(), rows.end(), [](const auto* a, const auto* b) {
    if (a->feasible != b->feasible) return a->feasible;
    return a->feasible && a->usd_per_hour < b->usd_per_hour;
  });
  return rows;
}

/// The scenario file's name for the workload kind: "trace", the arrival process ("poisson",
/// "gamma", "weibull"), "closed_loop", or "classes" for client classes.
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

/// Shortest text of a number, as an ostream prints it by default (e.g. 0.05, 2).
std::string number(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

/// `"text"` with inner quotes doubled (RFC 4180).
std::string csv_quoted(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) quoted += (c == '"') ? std::string("\"\"") : std::string(1, c);
  return quoted + "\"";
}

/// Per-class CSV columns, appended after the fixed ones (docs/metrics.md, Plan output).
constexpr const char* kClassCsvColumns[] = {
    "name",       "slo_ttft_p99_s", "slo_tpot_p99_s", "num_requests",
    "ttft_p99_s", "tpot_p99_s",     "slo_attainment", "goodput_requests_per_s"};

/// One indented line per client class of a feasible row: the class's p99 TTFT and TPOT with
/// its bounds, its SLO attainment and goodput.
void print_class_lines(const plan::PlanRow& r, std::ostream& out) {
  size_t name_width = 0;
  for (const auto& c : r.classes) name_width = std::max(name_width, c.name.size());
  for (const auto& c : r.classes) {
    const sim::Metrics& m = c.metrics;
    out << "    class " << pad(c.name, name_width) << "  p99 TTFT "
        << fixed_decimals(m.ttft.p99_s, 2) << " s (SLO " << number(c.slo.ttft_s) << " s), p99 TPOT "
        << fixed_decimals(m.tpot.p99_s * 1e3, 1) << " ms (SLO " << number(c.slo.tpot_s * 1e3)
        << " ms), SLO attainment " << fixed_decimals(m.slo_attainment * 100.0, 2) << "%, goodput "
        << fixed_decimals(m.goodput_requests_per_s, 3) << " req/s, " << m.num_requests
        << " requests\n";
  }
}

/// Under a row: every tensor-parallel degree tried (serving.tensor_parallel "search"), and a
/// given fleet's groups and KV transfers.
void print_detail_lines(const plan::PlanRow& r, std::ostream& out) {
  for (const plan::TpOptionRow& o : r.tp_options) {
    out << "    tp " << o.tp_degree << ": ";
    if (o.feasible) {
      out << o.num_instances << " x " << o.num_replicas_per_instance
          << " replica(s) per instance, USD " << fixed_decimals(o.usd_per_hour, 2)
          << "/hour, p99 TTFT " << fixed_decimals(o.ttft_p99_s, 2) << " s, p99 TPOT "
          << fixed_decimals(o.tpot_p99_s * 1e3, 1) << " ms"
          << (o.tp_degree == r.tp_degree ? "  <- chosen" : "") << "\n";
    } else {
      out << "infeasible: " << o.infeasible_reason << "\n";
    }
  }
  for (const plan::GroupRow& g : r.groups) {
    out << "    " << g.field << " (" << g.role << "): " << g.num_instances << " x "
        << g.instance_type << ", tp " << g.tp_degree << ", " << g.num_replicas_per_instance
        << " replica(s) per instance, " << g.num_kv_blocks << " KV blocks per replica, USD "
        << fixed_decimals(g.usd_per_hour, 2) << "/hour";
    if (g.network_bandwidth_bytes_per_s > 0) {
      out << ", network " << fixed_decimals(g.network_bandwidth_bytes_per_s / 1e9, 2)
          << " GB/s per replica";
    }
    out << "\n";
  }
  if (r.num_kv_transfers > 0) {
    out << "    KV transfers: " << r.num_kv_transfers << " caches moved, "
        << fixed_decimals(static_cast<double>(r.kv_transfer_bytes) / 1e9, 2) << " GB in all\n";
  }
}

}  // namespace

void print_plan_table(const plan::Scenario& sc, const plan::PlanResult& result, std::ostream& out) {
  const auto& w = result.workload;
  out << "Scenario " << sc.name << ": " << result.model_id << " ("
      << fixed_decimals(static_cast<double>(result.model_num_params) / 1e9, 2) << "e9 parameters, "
      << model::to_string(sc.weight_format) << " weights, " << model::to_string(sc.kv_format)
      << " KV cache)\n";
  const bool has_classes = !sc.workload.classes.empty();
  out << "Workload: ";
  if (has_classes) {
    out << sc.workload.classes.size() << " client classes";
  } else {
    out << sc.workload.path.filename().string() << " (" << workload_kind(sc.workload) << ")";
  }
  if (w.num_requests > 0) {
    out << ", " << w.num_requests << " requests over " << fixed_decimals(w.span_s, 0) << " s ("
        << fixed_decimals(static_cast<double>(w.num_requests) / std::max(w.span_s, 1e-9), 2)
        << " req/s)";
  }
  if (sc.workload.kind == plan::WorkloadSpec::Kind::kClosedLoop) {
    out << ", " << sc.workload.num_users << " users, think time " << sc.workload.think_time_s
        << " s, " << fixed_decimals(sc.workload.duration_s, 0) << " s";
  }
  out << ", mean prompt " << fixed_decimals(w.mean_prompt_tokens, 0) << " tokens, mean output "
      << fixed_decimals(w.mean_output_tokens, 0) << " tokens\n";
  if (has_classes) {
    for (size_t c = 0; c < sc.workload.classes.size(); ++c) {
      const plan::ClientClassSpec& spec = sc.workload.classes[c];
      out << "  class " << spec.name << ": " << spec.workload.path.filename().string() << " ("
          << workload_kind(spec.workload) << ")";
      if (c < w.classes.size()) {
        const plan::ClassWorkloadSummary& cs = w.classes[c];
        out << ", " << cs.num_requests << " requests, mean prompt "
            << fixed_decimals(cs.mean_prompt_tokens, 0) << " tokens, mean output "
            << fixed_decimals(cs.mean_output_tokens, 0) << " tokens";
      }
      out << "; SLO: p99 TTFT <= " << spec.slo.ttft_s << " s, p99 TPOT <= " << spec.slo.tpot_s
          << " s\n";
    }
    out << "SLO: each class its own (above); a fleet passes when every class meets it. Prices: "
           "USD, on-demand unless marked *.\n\n";
  } else {
    out << "SLO: p99 TTFT <= " << sc.slo.ttft_s << " s, p99 TPOT <= " << sc.slo.tpot_s
        << " s. Prices: USD, on-demand unless marked *.\n\n";
  }

  size_t id_width = 14;
  size_t hw_width = 9;
  for (const auto& r : result.rows) {
    id_width = std::max(id_width, r.instance_type.size() + 2);
    hw_width = std::max(hw_width, std::min<size_t>(r.hardware_name.size(), 62) + 2);
  }
  out << pad("instance type", id_width) << pad("kind", 5) << pad("hardware", hw_width)
      << pad("count", 6, true) << pad("USD/hour", 10, true) << pad("USD/M out", 11, true)
      << pad("USD/year", 12, true) << pad("TTFT p50/p99 s", 17, true)
      << pad("TPOT p50/p99 ms", 17, true) << "\n";
  out << std::string(id_width + 5 + hw_width + 6 + 10 + 11 + 12 + 17 + 17, '-') << "\n";
  for (const auto* r : sorted_rows(result)) {
    out << pad(r->instance_type, id_width) << pad(std::string(model::to_string(r->device_kind)), 5)
        << pad(r->hardware_name.substr(0, hw_width - 2), hw_width);
    if (r->feasible) {
      out << pad(std::to_string(r->num_instances), 6, true)
          << pad(fixed_decimals(r->usd_per_hour, 2) + (r->price_model == "on_demand" ? "" : "*"),
                 10, true)
          << pad(fixed_decimals(r->usd_per_million_output_tokens, 2), 11, true)
          << pad(grouped_thousands(r->annual_usd), 12, true)
          << pad(fixed_decimals(r->metrics.ttft.p50_s, 2) + "/" +
                     fixed_decimals(r->metrics.ttft.p99_s, 2),
                 17, true)
          << pad(fixed_decimals(r->metrics.tpot.p50_s * 1e3, 1) + "/" +
                     fixed_decimals(r->metrics.tpot.p99_s * 1e3, 1),
                 17, true)
          << "\n";
      print_class_lines(*r, out);
    } else {
      out << "  infeasible: " << r->infeasible_reason << "\n";
    }
    print_detail_lines(*r, out);
  }
  const plan::PlanRow* best_cpu = nullptr;
  const plan::PlanRow* best_gpu = nullptr;
  out << "\n";
  bool given_fleet = false;
  for (const auto* r : sorted_rows(result)) {
    if (r->groups.empty()) continue;  // a given (mixed or disaggregated) fleet: one row
    given_fleet = true;
    out << "Given " << r->instance_type << ": " << r->num_instances << " instances, USD "
        << fixed_decimals(r->usd_per_hour, 2) << "/hour, USD " << grouped_thousands(r->annual_usd)
        << "/year; " << (r->feasible ? "meets the SLO" : "misses the SLO (reason above)") << ".\n";
  }
  if (given_fleet) return;
  for (const auto* r : sorted_rows(result)) {
    if (!r->feasible) continue;
    auto& best = r->device_kind == model::DeviceKind::kCpu ? best_cpu : best_gpu;
    if (best == nullptr) best = r;
  }
  for (const auto* r : sorted_rows(result)) {
    if (r->feasible && r->price_model != "on_demand") {
      out << "* " << r->instance_type << ": " << r->price_model << " price, not on-demand.\n";
    }
  }
  for (const auto* best : {best_gpu, best_cpu}) {
    if (best == nullptr) continue;
    out << "Cheapest " << model::to_string(best->device_kind) << " fleet: " << best->num_instances
        << " x " << best->instance_type << " (" << best->hardware_name << "), USD "
        << fixed_decimals(best->usd_per_hour, 2) << "/hour, USD "
        << grouped_thousands(best->annual_usd) << "/year.\n";
  }
  if (best_cpu == nullptr) out << "No CPU instance type meets the SLO (reasons above).\n";
  if (best_gpu == nullptr) out << "No GPU instance type meets the SLO (reasons above).\n";
}

std::string plan_to_json(const plan::Scenario& sc, const plan::PlanResult& result) {
  using nlohmann::json;
  json scenario = {
      {"name", sc.name},
      {"file", sc.file.string()},
      {"model", result.model_id},
      {"model_num_params", result.model_num_params},
      {"weight_format", model::to_string(sc.weight_format)},
      {"kv_cache_format", model::to_string(sc.kv_format)},
      {"workload_kind", workload_kind(sc.workload)},
      {"workload_path", sc.workload.path.string()},
      {"slo", {{"ttft_p99_s", sc.slo.ttft_s}, {"tpot_p99_s", sc.slo.tpot_s}}},
      {"seed", sc.seed},
      {"hours_per_year", sc.hours_per_year},
  };
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
        {"device_kind", model::to_string(r.device_kind)},
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
        {"tpot_floor_s", r.tpot_floor_s},
        {"ttft_floor_s", r.ttft_floor_s},
        {"infeasible_reason", r.feasible ? json(nullptr) : json(r.infeasible_reason)},
        {"deployment_rule", r.deployment_rule},
        {"predictor", r.predictor},
        {"num_simulations", r.num_simulations},
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
    o << r.instance_type << ',' << model::to_string(r.device_kind) << ','
      << (r.feasible ? "true" : "false") << ',';
    if (r.feasible) {
      o << r.num_instances << ',' << r.usd_per_hour << ',' << r.usd_per_million_output_tokens << ','
        << r.annual_usd << ',' << r.metrics.ttft.p50_s << ',' << r.metrics.ttft.p99_s << ','
        << r.metrics.tpot.p50_s << ',' << r.metrics.tpot.p99_s << ",";
    } else {
      o << ",,,,,,,," << csv_quoted(r.infeasible_reason);
    }
    for (size_t c = 0; c < num_classes; ++c) {
      if (c >= r.classes.size()) {
        o << std::string(std::size(kClassCsvColumns), ',');
        continue;
      }
      const plan::ClassRow& k = r.classes[c];
      o << ',' << csv_quoted(k.name) << ',' << k.slo.ttft_s << ',' << k.slo.tpot_s << ',';
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

void write_file_atomically(const std::filesystem::path& path, const std::string& contents) {
  const std::filesystem::path tmp =
      path.string() + ".tmp." + std::to_string(static_cast<long>(::getpid()));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw plan::InputError(path.string() + ": cannot write file");
    f << contents;
    f.flush();
    if (!f) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw plan::InputError(path.string() + ": write failed");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::filesystem::remove(tmp, ec);
    throw plan::InputError(path.string() + ": cannot move the finished file into place");
  }
}

}  // namespace llmcap::cli
