#include "cli/plan_output.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <functional>
#include <set>
#include <sstream>

#include "app/plan_output.h"
#include "app/plan_run.h"
#include "base/text.h"
#include "cli/text_layout.h"

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

/// "fp8" or "int4 tp=2" from a configuration label ("tp=2 int4 chunked_prefill ..."): the
/// weight format, and the degree when above 1.
std::string format_and_degree(const std::string& configuration) {
  std::istringstream words(configuration);
  std::string tp;
  std::string format;
  words >> tp >> format;
  if (format.empty()) return configuration;
  return tp == "tp=1" || tp == "tp=auto" ? format : format + " " + tp;
}

std::string hardware_essentials(const std::string& hardware_name) {
  std::string s = base::printable(hardware_name);
  // Parenthesised notes go: "(AWS custom, Genoa)".
  for (size_t open = s.find(" ("); open != std::string::npos; open = s.find(" (")) {
    const size_t close = s.find(')', open);
    if (close == std::string::npos) break;
    s.erase(open, close - open + 1);
  }
  for (const char* word : {"NVIDIA ", "AMD ", "Intel ", "Platinum "}) {
    for (size_t at = s.find(word); at != std::string::npos; at = s.find(word)) {
      s.erase(at, std::string(word).size());
    }
  }
  if (const size_t x = s.find(" x ");
      x != std::string::npos && x > 0 && std::isdigit(static_cast<unsigned char>(s[x - 1]))) {
    s.replace(x, 3, "x ");  // "8 x H100" -> "8x H100"
  }
  return s;
}

std::string fleet_hardware_essentials(const std::string& hardware_name) {
  std::string out;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= hardware_name.size(); ++i) {
    const bool end = i == hardware_name.size();
    if (!end && hardware_name[i] == '(') ++depth;
    if (!end && hardware_name[i] == ')') --depth;
    if (!end && !(depth == 0 && hardware_name.compare(i, 3, " + ") == 0)) continue;
    const std::string part = hardware_name.substr(start, i - start);
    const size_t x = part.find(" x (");
    const bool counted =
        x != std::string::npos && x > 0 && part.back() == ')' &&
        std::all_of(part.begin(), part.begin() + static_cast<std::ptrdiff_t>(x),
                    [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
    out += (out.empty() ? "" : " + ") +
           (counted ? part.substr(0, x) + "x (" +
                          hardware_essentials(part.substr(x + 4, part.size() - x - 5)) + ")"
                    : hardware_essentials(part));
    start = i + 3;
    i += 2;
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

/// Shortest text of a number, as an ostream prints it by default (e.g. 0.05, 2).
std::string number(double v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

/// "p99 TTFT <= 2 s, p99 TPOT <= 50 ms": TTFT in s, TPOT in ms (as the table's columns).
std::string slo_text(const sim::Slo& slo) {
  return "p99 TTFT <= " + base::significant(slo.ttft_s, 4) +
         " s, p99 TPOT <= " + base::significant(slo.tpot_s * 1e3, 4) + " ms";
}

/// One indented line per client class of a feasible row: the class's p99 TTFT and TPOT with
/// its bounds, its SLO attainment and goodput.
/// "Prefix cache: ..." when any feasible row found prompt tokens in its prefix cache: the range
/// of the hit rate (cached prompt tokens / prompt tokens) over the feasible rows.
void print_prefix_cache_line(const plan::PlanResult& result, std::ostream& out) {
  double low = 1, high = 0;
  for (const auto& r : result.rows) {
    if (!r.feasible) continue;
    low = std::min(low, r.metrics.prefix_cache_hit_rate);
    high = std::max(high, r.metrics.prefix_cache_hit_rate);
  }
  if (high <= 0) return;
  const auto percent = [](double v) { return fixed_decimals(100 * v, 1) + "%"; };
  out << "Prefix cache: " << (low < high ? percent(low) + " to " + percent(high) : percent(high))
      << " of prompt tokens cached, by type (--json: prefix_cache_hit_rate).\n";
}

/// The notes under the table: reasons cut (`cut`), the prefix cache's hit rates; a blank line.
void print_table_notes(const plan::PlanResult& result, bool cut, std::ostream& out) {
  if (cut) {
    out << "(Infeasible reasons cut to their first clause; --verbose prints them whole, and "
           "--json and --csv carry them too.)\n";
  }
  print_prefix_cache_line(result, out);
  out << "\n";
}

void print_class_lines(const plan::PlanRow& r, std::ostream& out) {
  size_t name_width = 0;
  for (const auto& c : r.classes) name_width = std::max(name_width, base::printable(c.name).size());
  for (const auto& c : r.classes) {
    const sim::Metrics& m = c.metrics;
    out << "    class " << pad(base::printable(c.name), name_width) << "  p99 TTFT "
        << fixed_decimals(m.ttft.p99_s, 2) << " s (SLO " << number(c.slo.ttft_s) << " s), p99 TPOT "
        << fixed_decimals(m.tpot.p99_s * 1e3, 1) << " ms (SLO " << number(c.slo.tpot_s * 1e3)
        << " ms), SLO attainment " << fixed_decimals(m.slo_attainment * 100.0, 2) << "%, goodput "
        << fixed_decimals(m.goodput_requests_per_s, 3) << " req/s, " << m.num_requests
        << " requests\n";
  }
}

/// Under a row: every tensor-parallel degree tried (serving.tensor_parallel "search"), and a
/// given fleet's groups and KV transfers.
void print_detail_lines(const plan::PlanRow& r, std::ostream& out,
                        const std::function<std::string(const std::string&)>& reason_text) {
  for (const plan::TpOptionRow& o : r.tp_options) {
    out << "    tp " << o.tp_degree << ": ";
    if (o.feasible) {
      out << o.num_instances << " x " << o.num_replicas_per_instance
          << " replica(s) per instance, USD " << fixed_decimals(o.usd_per_hour, 2)
          << "/hour, p99 TTFT " << fixed_decimals(o.ttft_p99_s, 2) << " s, p99 TPOT "
          << fixed_decimals(o.tpot_p99_s * 1e3, 1) << " ms"
          << (o.tp_degree == r.tp_degree ? "  <- chosen" : "") << "\n";
    } else {
      out << "infeasible: " << reason_text(o.infeasible_reason) << "\n";
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

/// "KV offload: ..." when the scenario gives GPU instances a host tier: its size and the
/// tokens the feasible GPU rows' fleets loaded back from it.
void print_kv_offload_line(const plan::Scenario& sc, const plan::PlanResult& result,
                           std::ostream& out) {
  if (sc.kv_offload_bytes <= 0) return;
  int64_t low = -1, high = 0;
  for (const plan::PlanRow& row : result.rows) {
    if (!row.feasible || row.device_kind != model::DeviceKind::kGpu) continue;
    const int64_t loaded = row.metrics.num_kv_offload_loaded_tokens;
    low = low < 0 ? loaded : std::min(low, loaded);
    high = std::max(high, loaded);
  }
  out << "KV offload (docs/simulator.md): " << base::gb(static_cast<double>(sc.kv_offload_bytes))
      << " of each GPU instance's host memory behind its prefix cache; ";
  if (high <= 0) {
    out << "nothing was loaded back from it (a type needs prefix caching on and evictions)";
  } else {
    out << (low < high ? base::grouped(static_cast<double>(low), 0) + " to " : std::string()) +
               base::grouped(static_cast<double>(high), 0)
        << " tokens loaded back, by GPU type (--json: kv_offload_loaded_tokens)";
  }
  out << ".\n";
}

/// The engines the rows were priced with (the scenario's, else each kind's default) and the
/// scenario's fitted profiles, used or not.
void print_engines(const plan::Scenario& sc, const plan::PlanResult& result, std::ostream& out) {
  // The engines the rows were priced with (the scenario's, else each kind's default).
  std::set<std::string> gpu, cpu;
  for (const plan::PlanRow& row : result.rows) {
    for (const plan::GroupRow& g : row.groups) {  // a given fleet: each group's own
      (g.device_kind == model::DeviceKind::kGpu ? gpu : cpu)
          .insert(g.engine.empty() ? "none" : g.engine);
    }
    if (row.groups.empty() && (!row.deployment_rule.empty() || row.feasible)) {
      (row.device_kind == model::DeviceKind::kGpu ? gpu : cpu)
          .insert(row.engine.empty() ? "none" : row.engine);
    }
  }
  const auto names = [](const std::set<std::string>& ids) {
    std::string s;
    for (const std::string& id : ids) {
      s += (s.empty() ? "" : " and ") +
           (id == "none" ? std::string("none (the datasheet roofline or a calibration profile)")
                         : id);
    }
    return s.empty() ? std::string("-") : s;
  };
  out << "Engines (docs/engines.md): GPU " << names(gpu) << "; CPU " << names(cpu);
  if (sc.gpu_engine.empty() && sc.cpu_engine.empty()) {
    out << " (each kind's default; the scenario's \"engine\" chooses others)";
  }
  out << "\n";
  print_kv_offload_line(sc, result, out);
  if (sc.speculative.on()) {
    const plan::SpeculativeSpec& sp = sc.speculative;
    std::string rates;
    for (const double a : sp.config.acceptance_rates)
      rates += (rates.empty() ? "" : ", ") + number(a);
    std::string draft;
    if (sp.method == plan::SpeculativeSpec::Method::kDraftModel && sp.draft_model) {
      draft = " (draft model " + base::printable(sp.draft_model->id) + ")";
    } else if (sp.method != plan::SpeculativeSpec::Method::kNgram) {
      draft = " (" + base::plural(sp.draft_layers, "draft layer") + ")";
    }
    out << "Speculative decoding: " << plan::speculative_method_name(sp.method) << draft << ", "
        << sp.config.num_draft_tokens << " draft token"
        << (sp.config.num_draft_tokens > 1 ? "s" : "") << " accepted at " << rates << ": "
        << number(sp.config.tokens_per_step()) << " tokens per decode step"
        << (sp.source.empty() ? std::string(" (no source given for the rates)")
                              : " (rates: " + base::printable(sp.source) + ")")
        << ".\n";
  }
  for (const model::EngineProfile& e : sc.fitted_engines) {
    const bool used = std::any_of(result.rows.begin(), result.rows.end(), [&](const auto& row) {
      return row.predictor.find(e.fit_summary) != std::string::npos;
    });
    out << "Fitted engine profile " << e.file.string() << ": " << e.id << " on " << e.hardware
        << (used ? ", " + e.fit_summary
                 : ": unused, no candidate instance type has that hardware (or its engine)")
        << "\n";
  }
}

/// ", multi-turn sessions (mean N turns, think time T s)" for a workload with sessions, else "".
static std::string sessions_text(const plan::WorkloadSpec& w) {
  if (!w.sessions) return "";
  std::ostringstream text;
  text << ", multi-turn sessions (mean " << w.sessions->mean_turns << " turns, think time "
       << w.sessions->think_time_s << " s)";
  return text.str();
}

namespace {

/// The lines above the table: scenario and model, engines, workload (and its classes), SLO.
void print_plan_preamble(const plan::Scenario& sc, const plan::PlanResult& result,
                         std::ostream& out) {
  const auto& w = result.workload;
  const bool searched = sc.search.enabled;
  out << "Scenario " << base::printable(sc.name) << ": " << base::printable(result.model_id) << " ("
      << fixed_decimals(static_cast<double>(result.model_num_params) / 1e9, 2)
      << " billion parameters, "
      << (searched ? std::string("weights and degree per row as searched")
          : sc.cpu_weight_format && *sc.cpu_weight_format != sc.weight_format
              ? std::string(model::to_string(sc.weight_format)) + " weights on GPUs, " +
                    std::string(model::to_string(*sc.cpu_weight_format)) + " on CPUs"
              : std::string(model::to_string(sc.weight_format)) + " weights")
      << ", " << model::to_string(sc.kv_format) << " KV cache)\n";
  print_engines(sc, result, out);
  const bool has_classes = !sc.workload.classes.empty();
  out << "Workload: ";
  if (has_classes) {
    out << sc.workload.classes.size() << " client classes";
  } else {
    out << sc.workload.path.filename().string() << " (" << app::workload_kind(sc.workload) << ")";
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
  out << sessions_text(sc.workload) << ", mean prompt " << fixed_decimals(w.mean_prompt_tokens, 0)
      << " tokens, mean output " << fixed_decimals(w.mean_output_tokens, 0) << " tokens\n";
  if (has_classes) {
    for (size_t c = 0; c < sc.workload.classes.size(); ++c) {
      const plan::ClientClassSpec& spec = sc.workload.classes[c];
      out << "  class " << base::printable(spec.name) << ": "
          << spec.workload.path.filename().string() << " (" << app::workload_kind(spec.workload)
          << ")";
      if (c < w.classes.size()) {
        const plan::ClassWorkloadSummary& cs = w.classes[c];
        out << ", " << cs.num_requests << " requests, mean prompt "
            << fixed_decimals(cs.mean_prompt_tokens, 0) << " tokens, mean output "
            << fixed_decimals(cs.mean_output_tokens, 0) << " tokens";
      }
      out << "; SLO: " << slo_text(spec.slo) << "\n";
    }
    out << "SLO: each class its own (above); a fleet passes when every class meets it. Prices: "
           "USD, on-demand unless marked *.\n\n";
  } else {
    out << "SLO: " << slo_text(sc.slo) << ". Prices: USD, on-demand unless marked *.\n\n";
  }
}

}  // namespace

void print_plan_table(const plan::Scenario& sc, const plan::PlanResult& result, std::ostream& out,
                      const TextOptions& options) {
  // With a configuration search each row is its type's cheapest configuration: the hardware
  // cell starts with its weight format and degree (row_hardware).
  const bool searched = sc.search.enabled;
  const auto row_hardware = [&](const plan::PlanRow& r) {
    const std::string hardware = r.groups.empty() ? hardware_essentials(r.hardware_name)
                                                  : fleet_hardware_essentials(r.hardware_name);
    // The format first: a narrow column cuts the end of the hardware's name instead.
    return searched && r.feasible ? format_and_degree(r.configuration) + ", " + hardware : hardware;
  };
  print_plan_preamble(sc, result, out);

  // Columns: instance type, kind, hardware, then the figures; the hardware column (its
  // essentials, hardware_essentials) takes what the width leaves (at least kMinHardware), and
  // "USD/M out" (also in the TCO lines) goes when even that does not fit.
  constexpr size_t kMinHardware = 16;
  constexpr size_t kMinId = 15;
  size_t id_width = kMinId;
  size_t hw_full = 10;
  size_t kind_width = 5;  // "gpu", "cpu"; "mixed" for a given fleet of both
  for (const auto& r : result.rows) {
    id_width = std::max(id_width, display_width(base::printable(r.instance_type)) + 2);
    hw_full = std::max(hw_full, display_width(row_hardware(r)) + 2);
    kind_width = std::max(kind_width, plan::row_kind_name(r).size() + 1);
  }
  constexpr size_t kLatency = 11;  // "0.08/0.41", "28.3/38.9"
  const size_t figures = 6 + 10 + 11 + 2 * kLatency;
  // A given fleet's id ("fleet: 2 x aws-g6e.xlarge + 1 x ...") is cut to what the narrowest
  // table leaves it; its groups are listed in full below its row.
  const size_t min_rest = kind_width + figures - 11 + kMinHardware;
  if (id_width + min_rest > options.width) {
    id_width = std::max(kMinId, options.width > min_rest ? options.width - min_rest : 0);
  }
  bool per_token = true;  // "USD/M out", dropped first (the TCO lines carry it)
  bool per_year = true;   // "USD/year", dropped next (the TCO lines carry it)
  size_t fixed_width = id_width + kind_width + figures + 10;
  if (fixed_width + std::max(kMinHardware, hw_full) > options.width) {  // hardware whole first
    per_token = false;
    fixed_width -= 10;
  }
  if (fixed_width + kMinHardware > options.width) {
    per_year = false;
    fixed_width -= 11;
  }
  const size_t hw_width =
      std::min(hw_full, options.width > fixed_width + kMinHardware ? options.width - fixed_width
                                                                   : kMinHardware);
  out << pad("instance type", id_width) << pad("kind", kind_width) << pad("hardware", hw_width)
      << pad("count", 6, true) << pad("USD/hour", 10, true)
      << (per_token ? pad("USD/M out", 10, true) : "")
      << (per_year ? pad("USD/year", 11, true) : "") << pad("TTFT s", kLatency, true)
      << pad("TPOT ms", kLatency, true) << "\n";
  out << std::string(fixed_width + hw_width - 2 * kLatency, ' ') << pad("p50/p99", kLatency, true)
      << pad("p50/p99", kLatency, true) << "\n";
  out << std::string(std::min(fixed_width + hw_width, options.width), '-') << "\n";
  bool cut = false;
  const auto reason_text = [&](const std::string& reason, size_t room) {
    const std::string full = base::printable(reason);
    if (options.verbose) return full;
    const std::string shown = ellipsize(first_clause(full), std::max<size_t>(room, 20));
    cut = cut || shown != full;
    return shown;
  };
  for (const auto* r : sorted_rows(result)) {
    const std::string hardware = ellipsize(row_hardware(*r), hw_width - 2);
    const std::string id = ellipsize(base::printable(r->instance_type), id_width - 2);
    out << pad(id, id_width + id.size() - display_width(id))
        << pad(plan::row_kind_name(*r), kind_width)
        << pad(hardware, hw_width + hardware.size() - display_width(hardware));
    if (r->feasible) {
      out << pad(std::to_string(r->num_instances), 6, true)
          << pad(fixed_decimals(r->usd_per_hour, 2) + (r->price_model == "on_demand" ? "" : "*"),
                 10, true)
          << (per_token ? pad(fixed_decimals(r->usd_per_million_output_tokens, 2), 10, true) : "")
          << (per_year ? pad(grouped_thousands(r->annual_usd), 11, true) : "")
          << pad(fixed_decimals(r->metrics.ttft.p50_s, 2) + "/" +
                     fixed_decimals(r->metrics.ttft.p99_s, 2),
                 kLatency, true)
          << pad(fixed_decimals(r->metrics.tpot.p50_s * 1e3, 1) + "/" +
                     fixed_decimals(r->metrics.tpot.p99_s * 1e3, 1),
                 kLatency, true)
          << "\n";
      print_class_lines(*r, out);
    } else {
      const size_t used = id_width + kind_width + hw_width + 14;
      out << "  infeasible: "
          << reason_text(r->infeasible_reason, options.width > used ? options.width - used : 0)
          << "\n";
    }
    print_detail_lines(*r, out, [&](const std::string& reason) {
      return reason_text(reason, options.width > 30 ? options.width - 30 : 0);
    });
  }
  print_table_notes(result, cut, out);
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
    if (r->feasible && r->price_model != "on_demand") {
      out << "* " << r->instance_type << ": " << r->price_model << " price, not on-demand.\n";
    }
  }
}

void print_answer(const plan::Answer& a, std::ostream& out, size_t width) {
  const auto line = [&](const std::string& label, const std::string& text) {
    out << wrap_line("  " + label + std::string(label.size() < 13 ? 13 - label.size() : 1, ' ') +
                         base::printable(text),
                     width, 15)
        << "\n";
  };
  if (!a.feasible) {
    out << wrap_line("Answer: " + base::printable(a.headline), width, 8) << "\n";
    for (size_t i = 0; i < a.why_not.size(); ++i) line(i == 0 ? "why not" : "", a.why_not[i]);
    return;
  }
  const plan::AnswerOption& r = a.recommended;
  out << wrap_line(
             "Answer: " + base::printable(base::sized_fleet(r.num_instances, r.instance_type)) +
                 " (" + base::printable(r.hardware_name) + ")" +
                 (r.from_search ? ", the search's best" : ""),
             width, 8)
      << "\n";
  line("config", r.configuration);
  std::string cost = base::money(a.currency, r.cost_per_hour) + "/hour (" + r.price_model + "), " +
                     base::money(a.currency, a.cost_per_month, true) + "/month, " +
                     base::money(a.currency, r.cost_per_year, true) + "/year";
  if (r.num_instances_billed != r.num_instances) {
    cost += ", " + std::to_string(r.num_instances_billed) + " billed";
  }
  line("cost", cost);
  if (a.has_range) {
    line(base::fixed(100 * a.confidence, 0) + "% range",
         base::money(a.currency, a.cost_per_hour_low) + " to " +
             (a.cost_per_hour_high > 0 ? base::money(a.currency, a.cost_per_hour_high) + "/hour"
                                       : std::string("no fleet meets the SLO")) +
             " (dominant assumption: " +
             (a.dominant_assumption == "step_time" ? std::string("step time")
                                                   : a.dominant_assumption) +
             ")");
  }
  line("binding", a.binding_text);
  if (a.runner_up) {
    const plan::AnswerOption& u = *a.runner_up;
    line("runner-up", base::sized_fleet(u.num_instances, u.instance_type) + " at " +
                          base::money(a.currency, u.cost_per_hour) + "/hour (" +
                          fixed_decimals(u.cost_per_hour / r.cost_per_hour, 2) + " times)" +
                          (u.configuration != r.configuration ? ", " + u.configuration : ""));
  }
  if (!a.other_kind_text.empty()) line("other kind", a.other_kind_text);
  for (size_t i = 0; i < a.why_not.size(); ++i) line(i == 0 ? "why not" : "", a.why_not[i]);
  out << "\n";
}

void print_run_summary(const app::PlanRun& run, std::ostream& out) {
  // Feasible rows, cheapest first (as the table).
  std::vector<size_t> order;
  for (size_t i = 0; i < run.result.rows.size() && i < run.tco.size(); ++i) {
    if (run.result.rows[i].feasible && run.tco[i].num_instances > 0) order.push_back(i);
  }
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return run.tco[a].usd_per_hour < run.tco[b].usd_per_hour;
  });
  if (!order.empty()) {
    const plan::TcoRow& first = run.tco[order.front()];
    out << "\nTCO (docs/tco.md): " << fixed_decimals(first.hours_per_day, 0) << " h/day, "
        << fixed_decimals(first.days_per_year, 0) << " days/year; per-token figures each carry the "
        << "whole cost.\n";
    for (size_t i : order) {
      const plan::TcoRow& t = run.tco[i];
      out << "  " << run.result.rows[i].instance_type << " (" << t.price_model
          << "): " << t.num_instances_billed << " billed, USD " << fixed_decimals(t.usd_per_hour, 2)
          << "/hour, USD " << grouped_thousands(t.annual_usd) << "/year, USD "
          << fixed_decimals(t.usd_per_million_input_tokens, 3) << "/M input tokens, USD "
          << fixed_decimals(t.usd_per_million_output_tokens, 3) << "/M output tokens, USD "
          << fixed_decimals(t.usd_per_thousand_requests, 3) << "/1000 requests";
      if (t.autoscaled) out << ", autoscaled: USD " << fixed_decimals(t.usd_per_day, 2) << "/day";
      if (t.converted) {
        out << "; " << t.in_currency.currency << " " << fixed_decimals(t.in_currency.per_hour, 2)
            << "/hour at " << t.in_currency.rate << " (" << t.in_currency.rate_as_of << ")";
      }
      out << "\n";
      for (const plan::TcoOwnedRow& o : t.owned) {
        out << "    owned instead: " << o.num_servers << " x " << o.name << ", USD "
            << fixed_decimals(o.usd_per_hour, 2) << "/hour (capex "
            << fixed_decimals(o.capex_usd_per_hour, 2) << " + power "
            << fixed_decimals(o.power_usd_per_hour, 2) << "), USD "
            << grouped_thousands(o.annual_usd) << "/year\n";
      }
      for (const std::string& note : t.notes) out << "    note: " << note << "\n";
    }
    const size_t best = order.front();
    const plan::PlanRow& best_row = run.result.rows[best];
    out << "  Cheapest under " << run.tco[best].price_model << ": "
        << base::sized_fleet(run.tco[best].num_instances, best_row.instance_type) << ", USD "
        << fixed_decimals(run.tco[best].usd_per_hour, 2) << "/hour\n";
  }
  if (!run.tco_not_offered.empty()) {
    out << "Not offered under " << run.tco_price_model << " (no TCO; left out of the cheapest):";
    for (const plan::PriceModelNotOffered& n : run.tco_not_offered) {
      out << "\n  " << n.instance_type << " (offers: " << n.offered << ")";
    }
    out << "\n";
  }
  if (!run.analysis) return;
  const plan::Analysis& a = *run.analysis;
  for (const plan::UncertaintyRow& u : a.uncertainty) {
    out << "Uncertainty, " << u.instance_type << ": " << u.text
        << "; dominant: " << u.dominant_assumption << " (step-time error "
        << fixed_decimals(u.step_time_error_fraction * 100, 0) << "%, " << u.step_time_error_source
        << "; price error " << fixed_decimals(u.price_error_fraction * 100, 0) << "%)\n";
  }
  for (const plan::SearchRow& s : a.search) {
    if (s.max_requests_per_s_per_instance > 0) {
      out << "Max sustainable rate, " << s.instance_type << ": "
          << fixed_decimals(s.max_requests_per_s_per_instance, 2) << " requests/s per instance\n";
    }
  }
  if (!a.recommendation.empty()) out << "Recommendation: " << a.recommendation << "\n";
}

}  // namespace llmcap::cli
