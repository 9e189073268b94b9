// Normalises a run document (docs/run-document.md) into the Report every writer renders.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>

#include "base/text.h"
#include "report/report.h"
#include "report/report_model.h"

namespace llmcap::report {
namespace {

using nlohmann::json;

std::string short_dump(const json& j) {
  std::string s = j.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  return s;
}

/// A node of the document with its JSON path, for one-line errors naming the field.
class Node {
 public:
  Node(const json& j, std::string path) : j_(&j), path_(std::move(path)) {}

  const json& value() const { return *j_; }
  const std::string& path() const { return path_; }
  bool is_null() const { return j_->is_null(); }

  /// Present and not null.
  bool has(const std::string& key) const {
    return j_->is_object() && j_->contains(key) && !(*j_)[key].is_null();
  }
  Node child(const std::string& key) const {
    return Node((*j_)[key], path_.empty() ? key : path_ + "." + key);
  }
  /// An object member (absent or null: nullopt); another type throws.
  std::optional<Node> object(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    Node n = child(key);
    if (!n.value().is_object()) n.fail("an object or null");
    return n;
  }
  std::optional<double> number(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const json& v = (*j_)[key];
    if (!v.is_number()) child(key).fail("a number or null");
    return v.get<double>();
  }
  std::optional<std::string> text(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const json& v = (*j_)[key];
    if (!v.is_string()) child(key).fail("a string or null");
    return v.get<std::string>();
  }
  std::optional<bool> flag(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    const json& v = (*j_)[key];
    if (!v.is_boolean()) child(key).fail("true, false or null");
    return v.get<bool>();
  }
  /// The elements of an array member (absent or null: none); another type throws.
  std::vector<Node> items(const std::string& key) const {
    std::vector<Node> out;
    if (!has(key)) return out;
    const json& v = (*j_)[key];
    if (!v.is_array()) child(key).fail("an array or null");
    const std::string base = path_.empty() ? key : path_ + "." + key;
    for (size_t i = 0; i < v.size(); ++i) {
      out.emplace_back(v[i], base + "[" + std::to_string(i) + "]");
    }
    return out;
  }
  /// Array elements that must be objects.
  std::vector<Node> objects(const std::string& key) const {
    std::vector<Node> out = items(key);
    for (const Node& n : out) {
      if (!n.value().is_object()) n.fail("an object");
    }
    return out;
  }
  [[noreturn]] void fail(const std::string& expected) const {
    throw ReportError("run document: " + path_ + " is " + short_dump(*j_) + ", expected " +
                      expected);
  }

 private:
  const json* j_;
  std::string path_;
};

Cell to_cell(const json& v) {
  if (v.is_null()) return std::monostate{};
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

Cell num_cell(const std::optional<double>& v) { return v ? Cell(*v) : Cell(std::monostate{}); }
Cell text_cell(const std::optional<std::string>& v) {
  return v ? Cell(*v) : Cell(std::monostate{});
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

/// A display format guessed from a key's unit suffix (for objects whose keys are open: the
/// per-row "tco" and owned hardware).
CellFormat format_for_key(const std::string& key) {
  auto ends = [&key](const std::string& s) {
    return key.size() >= s.size() && key.compare(key.size() - s.size(), s.size(), s) == 0;
  };
  if (key.find("per_year") != std::string::npos || key.rfind("annual", 0) == 0) {
    return CellFormat::kUsdWhole;
  }
  if (key.find("usd") != std::string::npos || key.find("cny") != std::string::npos) {
    return CellFormat::kUsd;
  }
  if (ends("_fraction") || ends("attainment") || ends("utilisation") || ends("utilization")) {
    return CellFormat::kPercent;
  }
  if (ends("_s")) return CellFormat::kSeconds;
  if (key.rfind("num_", 0) == 0) return CellFormat::kInteger;
  return CellFormat::kNumber;
}

/// Human label of an open key: underscores to spaces.
std::string label_for_key(const std::string& key) {
  std::string s = key;
  std::replace(s.begin(), s.end(), '_', ' ');
  return s;
}

/// "key: value; key: value" for an object (nested values dumped).
std::string describe_object(const json& obj) {
  if (!obj.is_object()) return obj.is_string() ? obj.get<std::string>() : obj.dump();
  std::string out;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    if (!out.empty()) out += "; ";
    out += it.key() + ": ";
    if (it.value().is_string()) {
      out += it.value().get<std::string>();
    } else if (it.value().is_number_float()) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.6g", it.value().get<double>());
      out += buf;
    } else {
      out += it.value().dump();
    }
  }
  return out;
}

/// A table of objects whose scalar keys are open (one level of nested objects flattened as
/// "outer.inner"), columns in first-seen order after `lead` columns.
Table open_table(const std::string& id, const std::string& title, const std::string& sheet,
                 const std::vector<Column>& lead, const std::vector<std::vector<Cell>>& lead_cells,
                 const std::vector<Node>& objects, const std::vector<std::string>& only = {}) {
  std::vector<std::string> keys;
  std::set<std::string> seen;
  std::vector<std::map<std::string, Cell>> flat(objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    const json& o = objects[i].value();
    for (auto it = o.begin(); it != o.end(); ++it) {
      auto add = [&](const std::string& k, const json& v) {
        if (seen.insert(k).second) keys.push_back(k);
        flat[i][k] = to_cell(v);
      };
      if (it.value().is_object()) {
        for (auto in = it.value().begin(); in != it.value().end(); ++in) {
          add(it.key() + "." + in.key(), in.value());
        }
      } else {
        add(it.key(), it.value());
      }
    }
  }
  // The document's key order is lost in parsing (objects are sorted): money in USD first, in
  // the order of docs/run-document.md's TCO results, then the rest by name.
  static const std::vector<std::string> kFirst = {"price_model",
                                                  "hours_per_day",
                                                  "usd_per_hour",
                                                  "usd_per_million_input_tokens",
                                                  "usd_per_million_output_tokens",
                                                  "usd_per_thousand_requests",
                                                  "usd_per_year"};
  auto rank = [](const std::string& k) {
    const auto f = std::find(kFirst.begin(), kFirst.end(), k);
    return f == kFirst.end() ? kFirst.size() : static_cast<size_t>(f - kFirst.begin());
  };
  std::stable_sort(keys.begin(), keys.end(), [&rank](const std::string& a, const std::string& b) {
    return rank(a) < rank(b);
  });
  if (!only.empty()) {  // a curated table: these keys, in this order, where any object has one
    std::vector<std::string> kept;
    for (const std::string& k : only) {
      if (seen.count(k) > 0) kept.push_back(k);
    }
    keys = std::move(kept);
  }
  Table t{id, title, sheet, lead, {}};
  for (const std::string& k : keys) {
    const std::string leaf = k.substr(k.find('.') == std::string::npos ? 0 : k.find('.') + 1);
    bool numeric = true;
    for (const auto& row : flat) {
      const auto f = row.find(k);
      if (f != row.end() && !std::holds_alternative<double>(f->second) &&
          !std::holds_alternative<std::monostate>(f->second)) {
        numeric = false;
      }
    }
    t.columns.push_back({k, label_for_key(k), numeric ? format_for_key(leaf) : CellFormat::kText});
  }
  for (size_t i = 0; i < objects.size(); ++i) {
    std::vector<Cell> row = i < lead_cells.size() ? lead_cells[i] : std::vector<Cell>{};
    for (const std::string& k : keys) {
      const auto f = flat[i].find(k);
      row.push_back(f == flat[i].end() ? Cell(std::monostate{}) : f->second);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table key_value_table(const std::string& id, const std::string& title, const std::string& sheet) {
  return Table{id,
               title,
               sheet,
               {{"item", "Item", CellFormat::kText}, {"value", "Value", CellFormat::kText}},
               {}};
}

void add_kv(Table& t, const std::string& item, Cell value) {
  if (std::holds_alternative<std::monostate>(value)) return;
  t.rows.push_back({item, std::move(value)});
}

std::string seconds_text(double s) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", s);
  return std::string(buf) + " s";
}

// ---------------------------------------------------------------------------------------------

struct Row {
  Node node;
  std::string instance_type;
  std::string device_kind;
  std::string hardware;
  bool feasible = false;
  std::optional<double> num_instances, usd_per_hour, annual_usd, ttft_p99_s, tpot_p99_s;
};

std::vector<Row> read_rows(const Node& doc) {
  std::vector<Row> rows;
  for (const Node& n : doc.objects("results")) {
    Row r{n,
          n.text("instance_type").value_or("?"),
          n.text("device_kind").value_or(""),
          n.text("hardware").value_or(""),
          n.flag("feasible").value_or(false),
          n.number("num_instances"),
          n.number("usd_per_hour"),
          n.number("annual_usd"),
          n.number("ttft_p99_s"),
          n.number("tpot_p99_s")};
    if (!r.usd_per_hour) r.feasible = false;
    rows.push_back(std::move(r));
  }
  return rows;
}

/// Feasible rows cheapest first, then the infeasible ones in document order.
std::vector<const Row*> ranked(const std::vector<Row>& rows) {
  std::vector<const Row*> out;
  for (const Row& r : rows) out.push_back(&r);
  std::stable_sort(out.begin(), out.end(), [](const Row* a, const Row* b) {
    if (a->feasible != b->feasible) return a->feasible;
    if (!a->feasible) return false;
    return *a->usd_per_hour < *b->usd_per_hour;
  });
  return out;
}

/// "2 x aws-g6e.xlarge at CNY 26.71/hour" for an answer option.
std::string answer_fleet_text(const Node& o, const std::string& currency) {
  return base::sized_fleet(static_cast<int64_t>(o.number("num_instances").value_or(0)),
                           o.text("instance_type").value_or("?")) +
         " at " + base::money(currency, o.number("cost_per_hour").value_or(0)) + "/hour";
}

/// The run's answer (docs/run-document.md, "answer"): page 1 of every report.
std::optional<Section> answer_section(const Node& doc) {
  const std::optional<Node> a = doc.object("answer");
  if (!a) return std::nullopt;
  Section s{"answer", "Answer", {}};
  s.blocks.emplace_back(Paragraph{a->text("headline").value_or("")});
  const std::string currency = a->text("currency").value_or("USD");
  Table t = key_value_table("answer", "Answer", "Summary");
  if (a->flag("feasible").value_or(false)) {
    add_kv(t, "Recommended fleet",
           base::sized_fleet(static_cast<int64_t>(a->number("num_instances").value_or(0)),
                             a->text("instance_type").value_or("?")) +
               " (" + a->text("hardware_name").value_or("?") + ")");
    add_kv(
        t, "Configuration",
        a->text("configuration").value_or("") +
            (a->flag("from_search").value_or(false) ? " (the configuration search's best)" : ""));
    add_kv(t, "Price model", text_cell(a->text("offer")));
    add_kv(t, "Cost per hour", base::money(currency, a->number("cost_per_hour").value_or(0)));
    add_kv(t, "Cost per month",
           base::money(currency, a->number("cost_per_month").value_or(0), true));
    add_kv(t, "Cost per year", base::money(currency, a->number("cost_per_year").value_or(0), true));
    const std::vector<Node> range = a->items("cost_range_95");
    if (range.size() == 2 && range[0].value().is_number()) {
      const double confidence = a->number("confidence").value_or(0.95);
      add_kv(
          t, fixed(100 * confidence, 0) + "% range per hour",
          base::money(currency, range[0].value().get<double>()) + " to " +
              (range[1].value().is_number() ? base::money(currency, range[1].value().get<double>())
                                            : std::string("no fleet meeting the SLO")) +
              " (dominant assumption: " + a->text("dominant_assumption").value_or("?") + ")");
    }
    add_kv(t, "Binding constraint", text_cell(a->text("binding_text")));
    if (auto r = a->object("runner_up")) add_kv(t, "Runner-up", answer_fleet_text(*r, currency));
  }
  if (auto o = a->object("other_device_kind"))
    add_kv(t, "Other device kind", text_cell(o->text("text")));
  const std::vector<Node> why = a->items("why_not");
  for (size_t i = 0; i < why.size(); ++i) {
    if (!why[i].value().is_string()) why[i].fail("a string");
    add_kv(t, i == 0 ? "Why not" : "", why[i].value().get<std::string>());
  }
  s.blocks.emplace_back(std::move(t));
  return s;
}

Section scenario_section(const Node& doc) {
  Section s{"scenario", "Scenario and workload", {}};
  Table t = key_value_table("scenario", "Scenario", "Summary");
  if (auto sc = doc.object("scenario")) {
    add_kv(t, "Name", text_cell(sc->text("name")));
    add_kv(t, "Scenario file", text_cell(sc->text("file")));
    add_kv(t, "Model", text_cell(sc->text("model")));
    if (auto p = sc->number("model_num_params")) add_kv(t, "Parameters", fixed(*p / 1e9, 2) + "e9");
    add_kv(t, "Weight format", text_cell(sc->text("weight_format")));
    add_kv(t, "KV cache format", text_cell(sc->text("kv_cache_format")));
    add_kv(t, "Workload kind", text_cell(sc->text("workload_kind")));
    add_kv(t, "Workload file", text_cell(sc->text("workload_path")));
    if (auto slo = sc->object("slo")) {
      if (auto v = slo->number("ttft_p99_s")) add_kv(t, "SLO: p99 TTFT at most", seconds_text(*v));
      if (auto v = slo->number("tpot_p99_s")) {
        add_kv(t, "SLO: p99 TPOT at most", fixed(*v * 1e3, 1) + " ms");
      }
    }
    add_kv(t, "Seed", num_cell(sc->number("seed")));
  }
  if (auto w = doc.object("workload")) {
    add_kv(t, "Requests", num_cell(w->number("num_requests")));
    if (auto v = w->number("span_s")) {
      add_kv(t, "Trace span", fixed(*v, 0) + " s");
      if (auto n = w->number("num_requests"); n && *v > 0) {
        add_kv(t, "Mean arrival rate", fixed(*n / *v, 2) + " requests/s");
      }
    }
    if (auto v = w->number("mean_prompt_tokens"))
      add_kv(t, "Mean prompt", fixed(*v, 0) + " tokens");
    if (auto v = w->number("mean_output_tokens"))
      add_kv(t, "Mean output", fixed(*v, 0) + " tokens");
    if (auto v = w->number("p99_prompt_tokens")) add_kv(t, "p99 prompt", fixed(*v, 0) + " tokens");
  }
  s.blocks.emplace_back(std::move(t));

  // Client classes: the scenario's and the workload's, matched by position.
  if (auto sc = doc.object("scenario"); sc && sc->has("classes")) {
    Table c{"classes",
            "Client classes",
            "Summary",
            {{"name", "Class", CellFormat::kText},
             {"workload_kind", "Workload", CellFormat::kText},
             {"slo_ttft_p99_s", "SLO TTFT p99 (s)", CellFormat::kSeconds},
             {"slo_tpot_p99_s", "SLO TPOT p99 (ms)", CellFormat::kMilliseconds},
             {"num_requests", "Requests", CellFormat::kInteger},
             {"mean_prompt_tokens", "Mean prompt (tokens)", CellFormat::kNumber},
             {"mean_output_tokens", "Mean output (tokens)", CellFormat::kNumber}},
            {}};
    const std::vector<Node> classes = sc->objects("classes");
    std::vector<Node> wclasses;
    if (auto w = doc.object("workload")) wclasses = w->objects("classes");
    for (size_t i = 0; i < classes.size(); ++i) {
      const Node& k = classes[i];
      std::optional<Node> slo = k.object("slo");
      std::vector<Cell> row = {text_cell(k.text("name")), text_cell(k.text("workload_kind")),
                               num_cell(slo ? slo->number("ttft_p99_s") : std::nullopt),
                               num_cell(slo ? slo->number("tpot_p99_s") : std::nullopt)};
      if (i < wclasses.size()) {
        row.push_back(num_cell(wclasses[i].number("num_requests")));
        row.push_back(num_cell(wclasses[i].number("mean_prompt_tokens")));
        row.push_back(num_cell(wclasses[i].number("mean_output_tokens")));
      } else {
        row.resize(7);
      }
      c.rows.push_back(std::move(row));
    }
    s.blocks.emplace_back(std::move(c));
  }
  return s;
}

Section assumptions_section(const Node& doc, const std::vector<Row>& rows) {
  Section s{"assumptions", "Assumptions", {}};
  s.blocks.emplace_back(Paragraph{
      "Latency figures come from a discrete-event simulation of the workload on each fleet "
      "(continuous batching over a paged KV cache), with engine step times from the predictor "
      "named per instance type below. A fleet meets the SLO when its p99 TTFT and p99 TPOT are "
      "within the bounds. Money is in USD unless a column names another currency."});
  Table t = key_value_table("assumptions", "Assumptions", "Summary");
  if (auto sc = doc.object("scenario")) {
    if (auto v = sc->number("hours_per_year")) add_kv(t, "Hours in service per year", *v);
  }
  if (auto tco = doc.object("tco")) {
    add_kv(t, "Price model", text_cell(tco->text("price_model")));
    add_kv(t, "Hours in service per day", num_cell(tco->number("hours_per_day")));
    add_kv(t, "Currency", text_cell(tco->text("currency")));
    if (auto rate = tco->object("exchange_rate")) {
      add_kv(t, "Exchange rate", describe_object(rate->value()));
    }
    if (auto a = tco->object("autoscaling")) add_kv(t, "Autoscaling", describe_object(a->value()));
    // Other scalar settings the TCO section may carry (e.g. price uncertainty).
    for (auto it = tco->value().begin(); it != tco->value().end(); ++it) {
      static const std::set<std::string> kShown = {"price_model",   "hours_per_day", "currency",
                                                   "exchange_rate", "autoscaling",   "owned"};
      if (kShown.count(it.key()) || it.value().is_null()) continue;
      if (it.value().is_array() && it.value().empty()) continue;  // e.g. nothing not offered
      add_kv(t, label_for_key(it.key()),
             it.value().is_primitive() ? to_cell(it.value()) : Cell(describe_object(it.value())));
    }
  } else {
    std::set<std::string> models;
    for (const Row& r : rows) {
      if (auto pm = r.node.text("price_model")) models.insert(*pm);
    }
    std::string joined;
    for (const std::string& m : models) joined += (joined.empty() ? "" : ", ") + m;
    if (!joined.empty()) add_kv(t, "Price model", joined + " (catalog price of each type)");
  }
  s.blocks.emplace_back(std::move(t));

  if (auto tco = doc.object("tco"); tco && !tco->items("owned").empty()) {
    s.blocks.emplace_back(open_table("owned", "Owned hardware (alternative to renting)",
                                     "Assumptions", {}, {}, tco->objects("owned")));
  }

  Table d{"deployment",
          "Deployment and price per instance type",
          "Assumptions",
          {{"instance_type", "Instance type", CellFormat::kText},
           {"hardware", "Hardware", CellFormat::kText},
           {"tp_degree", "TP degree", CellFormat::kInteger},
           {"num_replicas_per_instance", "Replicas per instance", CellFormat::kInteger},
           {"price_model", "Price model", CellFormat::kText},
           {"instance_usd_per_hour", "USD/hour per instance", CellFormat::kUsd},
           {"predictor", "Predictor", CellFormat::kText},
           {"deployment_rule", "Deployment rule", CellFormat::kText},
           {"instance_note", "Note", CellFormat::kText}},
          {}};
  for (const Row& r : rows) {
    d.rows.push_back(
        {r.instance_type, r.hardware, num_cell(r.node.number("tp_degree")),
         num_cell(r.node.number("num_replicas_per_instance")),
         text_cell(r.node.text("price_model")), num_cell(r.node.number("instance_usd_per_hour")),
         text_cell(r.node.text("predictor")), text_cell(r.node.text("deployment_rule")),
         text_cell(r.node.text("instance_note"))});
  }
  s.blocks.emplace_back(std::move(d));
  return s;
}

Section sources_section(const Node& doc) {
  Section s{"sources", "Prices and specifications: sources", {}};
  const std::vector<Node> sources = doc.objects("sources");
  if (sources.empty()) {
    s.blocks.emplace_back(
        Paragraph{"This run document lists no sources. The catalog records (data/instances, "
                  "data/hardware, data/models) each carry their source and date."});
    return s;
  }
  Table t{"sources",
          "Every price and specification used, with its source and date",
          "Sources",
          {{"kind", "Kind", CellFormat::kText},
           {"id", "Id", CellFormat::kText},
           {"name", "Name", CellFormat::kText},
           {"figures", "Figures", CellFormat::kText},
           {"source", "Source", CellFormat::kText},
           {"as_of", "As of", CellFormat::kText}},
          {}};
  for (const Node& n : sources) {
    Cell figures = std::monostate{};
    if (n.has("figures")) figures = describe_object(n.value()["figures"]);
    t.rows.push_back({text_cell(n.text("kind")), text_cell(n.text("id")), text_cell(n.text("name")),
                      figures, text_cell(n.text("source")), text_cell(n.text("as_of"))});
  }
  s.blocks.emplace_back(std::move(t));
  return s;
}

Section calibration_section(const Node& doc) {
  Section s{"calibration", "Calibration profile", {}};
  auto cal = doc.object("calibration");
  if (!cal) {
    s.blocks.emplace_back(Paragraph{
        "No calibration profile was used: step times come from the roofline model of each "
        "instance's hardware (the predictor column of the deployment table)."});
    return s;
  }
  s.blocks.emplace_back(Paragraph{
      "CPU instance types were predicted with a profile of measured kernels (llmcap calibrate); "
      "the fit errors below are the predictor's relative errors on the measured kernels."});
  Table t = key_value_table("calibration", "Calibration profile", "Summary");
  add_kv(t, "CPU model", text_cell(cal->text("cpu_model")));
  add_kv(t, "Instruction set", text_cell(cal->text("isa")));
  add_kv(t, "Logical CPUs", num_cell(cal->number("num_cores")));
  if (auto v = cal->number("fit_median_abs_error")) {
    add_kv(t, "Fit error, median", fixed(*v * 100, 1) + "%");
  }
  if (auto v = cal->number("fit_p95_abs_error"))
    add_kv(t, "Fit error, p95", fixed(*v * 100, 1) + "%");
  if (cal->has("read_bandwidth_bytes_per_s")) {
    const json& bw = cal->value()["read_bandwidth_bytes_per_s"];
    if (bw.is_number()) {
      add_kv(t, "Read bandwidth", fixed(bw.get<double>() / 1e9, 1) + " GB/s");
    } else if (bw.is_object()) {
      std::string text;
      for (auto it = bw.begin(); it != bw.end(); ++it) {
        if (!it.value().is_number()) {
          cal->child("read_bandwidth_bytes_per_s").child(it.key()).fail("a number");
        }
        text += (text.empty() ? "" : "; ") + it.key() +
                " threads: " + fixed(it.value().get<double>() / 1e9, 1) + " GB/s";
      }
      add_kv(t, "Read bandwidth", text);
    } else {
      cal->child("read_bandwidth_bytes_per_s").fail("a number or an object");
    }
  }
  s.blocks.emplace_back(std::move(t));
  return s;
}

Section comparison_section(const Node& doc, const std::vector<Row>& rows) {
  Section s{"comparison", "Comparison of instance types", {}};
  struct Spec {
    const char* key;
    const char* label;
    CellFormat format;
  };
  static const Spec kColumns[] = {
      {"instance_type", "Instance type", CellFormat::kText},
      {"device_kind", "Kind", CellFormat::kText},
      {"hardware", "Hardware", CellFormat::kText},
      {"feasible", "Meets SLO", CellFormat::kBool},
      {"num_instances", "Instances", CellFormat::kInteger},
      {"usd_per_hour", "USD/hour", CellFormat::kUsd},
      {"usd_per_million_output_tokens", "USD per M output tokens", CellFormat::kUsd},
      {"annual_usd", "USD/year", CellFormat::kUsdWhole},
      {"ttft_p50_s", "TTFT p50 (s)", CellFormat::kSeconds},
      {"ttft_p99_s", "TTFT p99 (s)", CellFormat::kSeconds},
      {"tpot_p50_s", "TPOT p50 (ms)", CellFormat::kMilliseconds},
      {"tpot_p99_s", "TPOT p99 (ms)", CellFormat::kMilliseconds},
      {"e2e_latency_p99_s", "E2E latency p99 (s)", CellFormat::kSeconds},
      {"goodput_requests_per_s", "Goodput (req/s)", CellFormat::kNumber},
      {"infeasible_reason", "Why infeasible", CellFormat::kText},
  };
  Table t{"comparison", "Comparison (feasible fleets cheapest first)", "Comparison", {}, {}};
  for (const Spec& c : kColumns) {
    const bool present = std::any_of(rows.begin(), rows.end(),
                                     [&c](const Row& r) { return r.node.value().contains(c.key); });
    if (present) t.columns.push_back({c.key, c.label, c.format});
  }
  for (const Row* r : ranked(rows)) {
    std::vector<Cell> row;
    for (const Column& c : t.columns) {
      if (!r->node.has(c.key)) {
        row.emplace_back(std::monostate{});
        continue;
      }
      // Type checks through the accessors, so a wrong type names its field.
      if (c.format == CellFormat::kText) {
        row.push_back(text_cell(r->node.text(c.key)));
      } else if (c.format == CellFormat::kBool) {
        row.push_back(r->node.flag(c.key).value_or(false));
      } else {
        row.push_back(num_cell(r->node.number(c.key)));
      }
    }
    t.rows.push_back(std::move(row));
  }
  if (std::none_of(rows.begin(), rows.end(), [](const Row& r) { return r.feasible; })) {
    s.blocks.emplace_back(Paragraph{"No instance type meets the SLO (reasons in the table)."});
  }
  s.blocks.emplace_back(std::move(t));

  // Cost by instance type (feasible fleets).
  Chart bar{"cost_by_instance_type", "Fleet cost by instance type (fleets meeting the SLO)",
            ChartKind::kBar,         "instance_type",
            "usd_per_hour",          "",
            "USD per hour"};
  Series cost{"USD/hour", {}};
  for (const Row* r : ranked(rows)) {
    if (!r->feasible) continue;
    cost.points.emplace_back(static_cast<double>(bar.categories.size()), *r->usd_per_hour);
    bar.categories.push_back(r->instance_type);
  }
  if (!cost.points.empty()) {
    bar.series.push_back(std::move(cost));
    s.blocks.emplace_back(std::move(bar));
  }

  // Per-class metrics.
  const bool has_classes =
      std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.node.has("classes"); });
  if (has_classes) {
    Table c{"class_results",
            "Per-class results",
            "Comparison",
            {{"instance_type", "Instance type", CellFormat::kText},
             {"class", "Class", CellFormat::kText},
             {"ttft_p99_s", "TTFT p99 (s)", CellFormat::kSeconds},
             {"tpot_p99_s", "TPOT p99 (ms)", CellFormat::kMilliseconds},
             {"slo_attainment", "SLO attainment", CellFormat::kPercent},
             {"goodput_requests_per_s", "Goodput (req/s)", CellFormat::kNumber},
             {"num_requests", "Requests", CellFormat::kInteger}},
            {}};
    for (const Row* r : ranked(rows)) {
      if (!r->feasible) continue;
      for (const Node& k : r->node.objects("classes")) {
        c.rows.push_back(
            {r->instance_type, text_cell(k.text("name")), num_cell(k.number("ttft_p99_s")),
             num_cell(k.number("tpot_p99_s")), num_cell(k.number("slo_attainment")),
             num_cell(k.number("goodput_requests_per_s")), num_cell(k.number("num_requests"))});
      }
    }
    s.blocks.emplace_back(std::move(c));
  }
  (void)doc;
  return s;
}

std::optional<Section> tco_section(const std::vector<Row>& rows) {
  std::vector<Node> objects;
  std::vector<std::vector<Cell>> lead;
  std::string not_offered;  // rows whose type lacks the scenario's price model
  for (const Row* r : ranked(rows)) {
    if (auto t = r->node.object("tco")) {
      objects.push_back(*t);
      lead.push_back({r->instance_type, num_cell(r->num_instances)});
    }
    if (auto why = r->node.text("tco_not_offered")) {
      not_offered += (not_offered.empty() ? "" : "; ") + *why;
    }
  }
  if (objects.empty() && not_offered.empty()) return std::nullopt;
  Section s{"tco", "Total cost of ownership", {}};
  s.blocks.emplace_back(Paragraph{
      "Per fleet meeting the SLO, under the price model and service hours of the assumptions "
      "(arithmetic in docs/tco.md)."});
  if (!not_offered.empty()) {
    s.blocks.emplace_back(
        Paragraph{"Not offered under the price model, so without TCO and left "
                  "out of this comparison: " +
                  not_offered + "."});
  }
  if (objects.empty()) return s;
  s.blocks.emplace_back(
      open_table("tco", "TCO per fleet", "TCO",
                 {{"instance_type", "Instance type", CellFormat::kText},
                  {"num_instances", "Instances", CellFormat::kInteger}},
                 lead, objects,
                 // The figures a buyer reads; the rest of each row's TCO
                 // (spot, owned, currency details) is in the JSON and XLSX
                 // documents and the Assumptions section.
                 {"price_model", "num_instances_billed", "usd_per_hour", "annual_usd",
                  "usd_per_million_input_tokens", "usd_per_million_output_tokens",
                  "usd_per_thousand_requests", "usd_per_day", "cny_per_hour", "cny_per_year"}));
  return s;
}

/// Linear interpolation of the latency at `fraction` on a CDF (points sorted by fraction).
std::optional<double> latency_at(const std::vector<std::pair<double, double>>& points,
                                 double fraction) {
  for (size_t i = 0; i < points.size(); ++i) {
    if (points[i].second >= fraction) {
      if (i == 0) return points[0].first;
      const auto& [x0, y0] = points[i - 1];
      const auto& [x1, y1] = points[i];
      if (y1 <= y0) return x1;
      return x0 + (x1 - x0) * (fraction - y0) / (y1 - y0);
    }
  }
  return std::nullopt;
}

std::vector<Section> analysis_sections(const Node& doc, const std::vector<Row>& rows) {
  std::vector<Section> out;
  const auto analysis = doc.object("analysis");
  if (!analysis) return out;
  const Node& a = *analysis;
  (void)rows;

  // Search and Pareto frontier.
  if (a.has("search") || a.has("pareto")) {
    Section s{"search", "Configuration search", {}};
    if (a.has("search")) {
      Table t{"search",
              "Serving configurations tried per instance type",
              "Search",
              {{"instance_type", "Instance type", CellFormat::kText},
               {"configs_tried", "Configs tried", CellFormat::kInteger},
               {"configs_pruned", "Configs pruned", CellFormat::kInteger},
               {"best_config", "Best config", CellFormat::kText},
               {"max_requests_per_s_per_instance", "Max req/s per instance", CellFormat::kNumber}},
              {}};
      for (const Node& n : a.objects("search")) {
        Cell best = std::monostate{};
        if (n.has("best_config")) best = describe_object(n.value()["best_config"]);
        t.rows.push_back({text_cell(n.text("instance_type")), num_cell(n.number("configs_tried")),
                          num_cell(n.number("configs_pruned")), best,
                          num_cell(n.number("max_requests_per_s_per_instance"))});
      }
      s.blocks.emplace_back(std::move(t));
    }
    if (a.has("pareto")) {
      Table t{"pareto",
              "Pareto frontier: cost against p99 latency",
              "Search",
              {{"instance_type", "Instance type", CellFormat::kText},
               {"config", "Config", CellFormat::kText},
               {"num_instances", "Instances", CellFormat::kInteger},
               {"usd_per_hour", "USD/hour", CellFormat::kUsd},
               {"ttft_p99_s", "TTFT p99 (s)", CellFormat::kSeconds},
               {"tpot_p99_s", "TPOT p99 (ms)", CellFormat::kMilliseconds}},
              {}};
      Chart c{"pareto",         "Pareto frontier: fleet cost against p99 TTFT",
              ChartKind::kLine, "usd_per_hour",
              "ttft_p99_s",     "USD per hour",
              "p99 TTFT (s)"};
      std::map<std::string, size_t> index;
      for (const Node& n : a.objects("pareto")) {
        Cell config = std::monostate{};
        if (n.has("config")) config = describe_object(n.value()["config"]);
        const std::string type = n.text("instance_type").value_or("?");
        const auto usd = n.number("usd_per_hour");
        const auto ttft = n.number("ttft_p99_s");
        t.rows.push_back({type, config, num_cell(n.number("num_instances")), num_cell(usd),
                          num_cell(ttft), num_cell(n.number("tpot_p99_s"))});
        if (usd && ttft) {
          if (!index.count(type)) {
            index[type] = c.series.size();
            c.series.push_back({type, {}});
          }
          c.series[index[type]].points.emplace_back(*usd, *ttft);
        }
      }
      for (Series& se : c.series) std::sort(se.points.begin(), se.points.end());
      s.blocks.emplace_back(std::move(t));
      if (!c.series.empty()) s.blocks.emplace_back(std::move(c));
    }
    out.push_back(std::move(s));
  }

  // Cost against load.
  if (a.has("cost_vs_load")) {
    Section s{"cost_vs_load", "Cost against load", {}};
    s.blocks.emplace_back(Paragraph{
        "The workload's arrival rate scaled by the load multiplier; each point is the cheapest "
        "fleet of that instance type meeting the SLO at that load (missing where none does)."});
    Chart c{"cost_vs_load",   "Fleet cost against load",
            ChartKind::kLine, "load_multiplier",
            "usd_per_hour",   "Load multiplier (x the workload's rate)",
            "USD per hour"};
    Table t{"cost_vs_load",
            "Cost against load",
            "Cost vs load",
            {{"instance_type", "Instance type", CellFormat::kText},
             {"load_multiplier", "Load multiplier", CellFormat::kNumber},
             {"feasible", "Meets SLO", CellFormat::kBool},
             {"num_instances", "Instances", CellFormat::kInteger},
             {"usd_per_hour", "USD/hour", CellFormat::kUsd}},
            {}};
    for (const Node& n : a.objects("cost_vs_load")) {
      const std::string type = n.text("instance_type").value_or("?");
      Series se{type, {}};
      for (const Node& p : n.objects("points")) {
        const auto load = p.number("load_multiplier");
        const auto usd = p.number("usd_per_hour");
        const bool feasible = p.flag("feasible").value_or(usd.has_value());
        t.rows.push_back({type, num_cell(load), feasible, num_cell(p.number("num_instances")),
                          feasible ? num_cell(usd) : Cell(std::monostate{})});
        if (feasible && load && usd) se.points.emplace_back(*load, *usd);
      }
      std::sort(se.points.begin(), se.points.end());
      if (!se.points.empty()) c.series.push_back(std::move(se));
    }
    if (!c.series.empty()) s.blocks.emplace_back(std::move(c));
    s.blocks.emplace_back(std::move(t));
    out.push_back(std::move(s));
  }

  // Latency CDFs: one chart per metric.
  if (a.has("latency_cdf")) {
    Section s{"latency_cdf", "Latency distribution", {}};
    std::map<std::string, Chart> charts;     // by metric
    std::map<std::string, Table> quantiles;  // by metric: TTFT in s, TPOT and ITL in ms
    for (const Node& n : a.objects("latency_cdf")) {
      const std::string metric = n.text("metric").value_or("latency");
      const std::string type = n.text("instance_type").value_or("?");
      const auto num = n.number("num_instances");
      Series se{type + (num ? " (" + fixed(*num, 0) + ")" : std::string()), {}};
      for (const Node& p : n.objects("points")) {
        const auto x = p.number("latency_s");
        const auto y = p.number("fraction");
        if (x && y) se.points.emplace_back(*x, *y);
      }
      std::sort(se.points.begin(), se.points.end(),
                [](const auto& l, const auto& r) { return l.second < r.second; });
      std::string upper = metric;
      std::transform(upper.begin(), upper.end(), upper.begin(), ::toupper);
      const bool ms = metric == "tpot" || metric == "itl";
      auto [qt, fresh_table] = quantiles.try_emplace(metric);
      if (fresh_table) {
        const CellFormat f = ms ? CellFormat::kMilliseconds : CellFormat::kSeconds;
        const std::string unit = ms ? " (ms)" : " (s)";
        qt->second = Table{"latency_quantiles_" + metric,
                           upper + " quantiles read from the CDFs",
                           "Latency",
                           {{"instance_type", "Instance type", CellFormat::kText},
                            {"num_instances", "Instances", CellFormat::kInteger},
                            {"p50_s", upper + " p50" + unit, f},
                            {"p90_s", upper + " p90" + unit, f},
                            {"p99_s", upper + " p99" + unit, f}},
                           {}};
      }
      qt->second.rows.push_back({type, num_cell(num), num_cell(latency_at(se.points, 0.5)),
                                 num_cell(latency_at(se.points, 0.9)),
                                 num_cell(latency_at(se.points, 0.99))});
      auto [it, fresh] = charts.try_emplace(metric);
      if (fresh) {
        it->second = Chart{"latency_cdf_" + metric,
                           "Latency CDF: " + upper,
                           ChartKind::kLine,
                           "latency_s",
                           "fraction",
                           upper + (ms ? " (ms)" : " (s)"),
                           "Fraction of requests"};
        it->second.x_display_scale = ms ? 1e3 : 1.0;
      }
      it->second.series.push_back(std::move(se));
    }
    // TTFT first, then the others by name.
    if (charts.count("ttft")) s.blocks.emplace_back(charts["ttft"]);
    for (auto& [metric, chart] : charts) {
      if (metric != "ttft") s.blocks.emplace_back(chart);
    }
    if (quantiles.count("ttft")) s.blocks.emplace_back(quantiles["ttft"]);
    for (auto& [metric, table] : quantiles) {
      if (metric != "ttft") s.blocks.emplace_back(table);
    }
    out.push_back(std::move(s));
  }

  // Fleet over the day.
  if (a.has("fleet_over_day")) {
    Section s{"fleet_over_day", "Fleet size over the day", {}};
    s.blocks.emplace_back(Paragraph{
        "Instances each hour of the day needs: an autoscaled fleet follows its 24-hour "
        "multipliers; otherwise the planned fleet (billed all day) scaled by each hour's load "
        "(the load profile, the workload's hourly rate, or flat)."});
    Chart c{"fleet_over_day", "Fleet size over the day", ChartKind::kStep,
            "hour",           "num_instances",           "Hour of day",
            "Instances"};
    Table daily{"fleet_over_day_cost",
                "Daily cost",
                "Fleet over day",
                {{"instance_type", "Instance type", CellFormat::kText},
                 {"min_instances", "Min instances", CellFormat::kInteger},
                 {"max_instances", "Max instances", CellFormat::kInteger},
                 {"usd_per_day", "USD/day", CellFormat::kUsd}},
                {}};
    Table hourly{"fleet_over_day",
                 "Instances per hour",
                 "Fleet over day",
                 {{"hour", "Hour", CellFormat::kInteger}},
                 {}};
    std::vector<std::vector<double>> loads, counts;
    for (const Node& n : a.objects("fleet_over_day")) {
      const std::string type = n.text("instance_type").value_or("?");
      std::vector<double> load, count;
      for (const Node& v : n.items("hourly_load_multiplier")) {
        if (!v.value().is_number()) v.fail("a number");
        load.push_back(v.value().get<double>());
      }
      for (const Node& v : n.items("hourly_instances")) {
        if (!v.value().is_number()) v.fail("a number");
        count.push_back(v.value().get<double>());
      }
      Series se{type, {}};
      for (size_t h = 0; h < count.size(); ++h) se.points.emplace_back(h, count[h]);
      if (!count.empty()) se.points.emplace_back(count.size(), count.back());  // close the step
      c.series.push_back(std::move(se));
      daily.rows.push_back(
          {type,
           count.empty() ? Cell(std::monostate{}) : *std::min_element(count.begin(), count.end()),
           count.empty() ? Cell(std::monostate{}) : *std::max_element(count.begin(), count.end()),
           num_cell(n.number("usd_per_day"))});
      hourly.columns.push_back(
          {"load_multiplier_" + type, "Load x (" + type + ")", CellFormat::kNumber});
      hourly.columns.push_back({"num_instances_" + type, type, CellFormat::kInteger});
      loads.push_back(std::move(load));
      counts.push_back(std::move(count));
    }
    size_t hours = 0;
    for (const auto& v : counts) hours = std::max(hours, v.size());
    for (size_t h = 0; h < hours; ++h) {
      std::vector<Cell> row = {static_cast<double>(h)};
      for (size_t i = 0; i < counts.size(); ++i) {
        row.push_back(h < loads[i].size() ? Cell(loads[i][h]) : Cell(std::monostate{}));
        row.push_back(h < counts[i].size() ? Cell(counts[i][h]) : Cell(std::monostate{}));
      }
      hourly.rows.push_back(std::move(row));
    }
    if (!c.series.empty()) s.blocks.emplace_back(std::move(c));
    s.blocks.emplace_back(std::move(daily));
    if (hours > 0) s.blocks.emplace_back(std::move(hourly));
    out.push_back(std::move(s));
  }

  // Sensitivity.
  if (a.has("sensitivity")) {
    Section s{"sensitivity", "Sensitivity", {}};
    s.blocks.emplace_back(Paragraph{
        "How the cheapest fleet of each instance type changes when one input changes: price "
        "(per-hour price scaled), load (arrival rate scaled) or SLO (bounds scaled)."});
    Table t{"sensitivity",
            "Sensitivity to price, load and SLO",
            "Sensitivity",
            {{"parameter", "Parameter", CellFormat::kText},
             {"change", "Change", CellFormat::kText},
             {"instance_type", "Instance type", CellFormat::kText},
             {"feasible", "Meets SLO", CellFormat::kBool},
             {"num_instances", "Instances", CellFormat::kInteger},
             {"usd_per_hour", "USD/hour", CellFormat::kUsd},
             {"relative_change_usd_per_hour", "Change in USD/hour", CellFormat::kPercent}},
            {}};
    for (const Node& n : a.objects("sensitivity")) {
      Cell change = std::monostate{};
      if (n.has("change")) change = to_cell(n.value()["change"]);
      t.rows.push_back({text_cell(n.text("parameter")), change, text_cell(n.text("instance_type")),
                        n.flag("feasible").value_or(false), num_cell(n.number("num_instances")),
                        num_cell(n.number("usd_per_hour")),
                        num_cell(n.number("relative_change_usd_per_hour"))});
    }
    s.blocks.emplace_back(std::move(t));
    out.push_back(std::move(s));
  }

  // Uncertainty.
  if (a.has("uncertainty")) {
    Section s{"uncertainty", "Uncertainty", {}};
    Table t{"uncertainty",
            "Fleet size and cost as ranges",
            "Uncertainty",
            {{"instance_type", "Instance type", CellFormat::kText},
             {"confidence", "Confidence", CellFormat::kPercent},
             {"num_instances_low", "Instances (low)", CellFormat::kInteger},
             {"num_instances_high", "Instances (high)", CellFormat::kInteger},
             {"usd_per_hour_low", "USD/hour (low)", CellFormat::kUsd},
             {"usd_per_hour_high", "USD/hour (high)", CellFormat::kUsd},
             {"step_time_error_fraction", "Step-time error", CellFormat::kPercent},
             {"price_error_fraction", "Price error", CellFormat::kPercent},
             {"dominant_assumption", "Dominant assumption", CellFormat::kText}},
            {}};
    for (const Node& n : a.objects("uncertainty")) {
      const std::string type = n.text("instance_type").value_or("?");
      const auto lo = n.number("num_instances_low");
      const auto hi = n.number("num_instances_high");
      const auto conf = n.number("confidence");
      const auto ulo = n.number("usd_per_hour_low");
      const auto uhi = n.number("usd_per_hour_high");
      if (lo && hi) {
        std::string p = type + ": " + fixed(*lo, 0) + " to " + fixed(*hi, 0) + " instances";
        if (conf) p += " (" + fixed(*conf * 100, 0) + "%)";
        if (ulo && uhi) p += ", USD " + fixed(*ulo, 2) + " to " + fixed(*uhi, 2) + " per hour";
        if (auto d = n.text("dominant_assumption")) p += "; dominant assumption: " + *d;
        s.blocks.emplace_back(Paragraph{p + "."});
      }
      t.rows.push_back({type, num_cell(conf), num_cell(lo), num_cell(hi), num_cell(ulo),
                        num_cell(uhi), num_cell(n.number("step_time_error_fraction")),
                        num_cell(n.number("price_error_fraction")),
                        text_cell(n.text("dominant_assumption"))});
    }
    s.blocks.emplace_back(std::move(t));
    out.push_back(std::move(s));
  }
  return out;
}

/// One paragraph from the results: the cheapest fleet overall, then the cheapest of the other
/// device kind, with cost and p99 figures (and the uncertainty range when the analysis has it).
std::string recommendation_from_results(const Node& doc, const std::vector<Row>& rows) {
  std::string slo;
  if (auto sc = doc.object("scenario")) {
    if (auto s = sc->object("slo")) {
      const auto t = s->number("ttft_p99_s");
      const auto p = s->number("tpot_p99_s");
      if (t && p) {
        slo = " (p99 TTFT at most " + seconds_text(*t) + ", p99 TPOT at most " +
              fixed(*p * 1e3, 1) + " ms)";
      }
    }
  }
  std::map<std::string, Node> ranges;
  if (auto a = doc.object("analysis")) {
    for (const Node& n : a->objects("uncertainty")) {
      if (auto t = n.text("instance_type")) ranges.emplace(*t, n);
    }
  }
  auto describe = [&ranges](const Row& r) {
    std::string s =
        base::sized_fleet(static_cast<int64_t>(r.num_instances.value_or(0)), r.instance_type);
    if (!r.hardware.empty()) s += " (" + r.hardware + ")";
    s += " at USD " + fixed(*r.usd_per_hour, 2) + " per hour";
    if (r.annual_usd) {
      std::string whole = format_cell(*r.annual_usd, CellFormat::kUsdWhole);
      s += " (USD " + whole + " per year)";
    }
    if (r.ttft_p99_s && r.tpot_p99_s) {
      s += ", p99 TTFT " + fixed(*r.ttft_p99_s, 2) + " s and p99 TPOT " +
           fixed(*r.tpot_p99_s * 1e3, 1) + " ms";
    }
    if (auto f = ranges.find(r.instance_type); f != ranges.end()) {
      const auto lo = f->second.number("num_instances_low");
      const auto hi = f->second.number("num_instances_high");
      const auto conf = f->second.number("confidence");
      if (lo && hi) {
        s += "; " + fixed(*lo, 0) + " to " + fixed(*hi, 0) + " instances" +
             (conf ? " at " + fixed(*conf * 100, 0) + "% confidence" : std::string());
      }
    }
    return s;
  };
  const Row* best = nullptr;
  const Row* best_cpu = nullptr;
  const Row* best_gpu = nullptr;
  for (const Row* r : ranked(rows)) {
    if (!r->feasible) continue;
    if (best == nullptr) best = r;
    if (r->device_kind == "cpu" && best_cpu == nullptr) best_cpu = r;
    if (r->device_kind == "gpu" && best_gpu == nullptr) best_gpu = r;
  }
  std::string name = "this scenario";
  if (auto sc = doc.object("scenario")) {
    if (auto n = sc->text("name")) name = "scenario " + *n;
  }
  if (best == nullptr) {
    return "No instance type meets the SLO of " + name + slo +
           ": see the reasons in the comparison table; relax the SLO, change the weight format "
           "or consider larger instance types.";
  }
  std::string p =
      "For " + name + slo + ", buy " + describe(*best) + ": the cheapest fleet that meets the SLO.";
  const Row* other = best->device_kind == "cpu" ? best_gpu : best_cpu;
  const std::string other_kind = best->device_kind == "cpu" ? "GPU" : "CPU";
  if (other != nullptr) {
    p += " The cheapest " + other_kind + " fleet is " + describe(*other) + ", " +
         fixed(*other->usd_per_hour / *best->usd_per_hour, 2) + " times the cost.";
  } else if (!best->device_kind.empty()) {
    p += " No " + other_kind + " instance type meets the SLO.";
  }
  return p;
}

}  // namespace

const Table* Report::find_table(const std::string& id) const {
  for (const Section& s : sections) {
    for (const Block& b : s.blocks) {
      if (const auto* t = std::get_if<Table>(&b); t != nullptr && t->id == id) return t;
    }
  }
  return nullptr;
}

std::vector<const Chart*> Report::charts() const {
  std::vector<const Chart*> out;
  for (const Section& s : sections) {
    for (const Block& b : s.blocks) {
      if (const auto* c = std::get_if<Chart>(&b)) out.push_back(c);
    }
  }
  return out;
}

Report build_report(const nlohmann::json& document) {
  validate_document(document);
  const Node doc(document, "");
  const std::vector<Row> rows = read_rows(doc);
  Report r;
  r.scenario_name = "unnamed scenario";
  if (auto sc = doc.object("scenario"))
    r.scenario_name = sc->text("name").value_or(r.scenario_name);
  r.title = "Capacity plan: " + r.scenario_name;
  if (auto a = doc.object("analysis"); a && a->has("recommendation")) {
    r.recommendation = *a->text("recommendation");
    r.recommendation_from_analysis = true;
  } else {
    r.recommendation = recommendation_from_results(doc, rows);
  }
  if (auto s = answer_section(doc)) r.sections.push_back(std::move(*s));
  r.sections.push_back({"recommendation", "Recommendation", {Paragraph{r.recommendation}}});
  r.sections.push_back(scenario_section(doc));
  r.sections.push_back(comparison_section(doc, rows));
  if (auto s = tco_section(rows)) r.sections.push_back(std::move(*s));
  for (Section& s : analysis_sections(doc, rows)) r.sections.push_back(std::move(s));
  r.sections.push_back(assumptions_section(doc, rows));
  r.sections.push_back(calibration_section(doc));
  r.sections.push_back(sources_section(doc));
  return r;
}

std::string format_cell(const Cell& cell, CellFormat format) {
  if (std::holds_alternative<std::monostate>(cell)) return "-";
  if (const auto* b = std::get_if<bool>(&cell)) return *b ? "yes" : "no";
  if (const auto* s = std::get_if<std::string>(&cell)) return *s;
  const double v = std::get<double>(cell);
  if (!std::isfinite(v)) return std::isnan(v) ? "-" : (v > 0 ? "inf" : "-inf");
  auto grouped = [](double x, int decimals) {
    std::string s = fixed(std::fabs(x), decimals);
    const size_t dot = s.find('.');
    std::string whole = s.substr(0, dot);
    const std::string frac = dot == std::string::npos ? "" : s.substr(dot);
    std::string out;
    if (x < 0 && s.find_first_not_of("0.") != std::string::npos) out.push_back('-');
    const size_t lead = whole.size() % 3 == 0 ? 3 : whole.size() % 3;
    for (size_t i = 0; i < whole.size(); ++i) {
      if (i >= lead && (i - lead) % 3 == 0) out.push_back(',');
      out.push_back(whole[i]);
    }
    out.append(frac);
    return out;
  };
  switch (format) {
    case CellFormat::kInteger:
      return fixed(v, 0);
    case CellFormat::kUsd:
      return grouped(v, 2);
    case CellFormat::kUsdWhole:
      return grouped(v, 0);
    case CellFormat::kSeconds:
      return fixed(v, 3);
    case CellFormat::kMilliseconds:
      return fixed(v * 1e3, 1);
    case CellFormat::kPercent:
      return fixed(v * 100, 1) + "%";
    case CellFormat::kBool:
      return v != 0 ? "yes" : "no";
    case CellFormat::kNumber:
    case CellFormat::kText: {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.4g", v);
      if (std::fabs(v) >= 1e4 && std::fabs(v) < 1e15 && v == std::floor(v)) return fixed(v, 0);
      return buf;
    }
  }
  return "";
}

}  // namespace llmcap::report
