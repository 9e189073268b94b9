#include "cli/runs_cmd.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <utility>
#include <vector>

#include "app/run_store.h"
#include "base/text.h"
#include "cli/bench_sim.h"
#include "cli/cli.h"
#include "cli/text_layout.h"
#include "plan/scenario.h"

namespace llmcap::cli {
namespace {

using app::feasible;
using app::number_or;
using app::parse_or_null;
using app::string_or;

using nlohmann::json;

using base::fixed;

/// `text` padded with spaces to `width` (left-aligned, or right-aligned numbers).
std::string pad(const std::string& text, size_t width, bool right = false) {
  if (text.size() >= width) return text;
  const std::string fill(width - text.size(), ' ');
  return right ? fill + text : text + fill;
}

/// Prints `rows` (the first one the header) as columns separated by two spaces; columns in
/// `right` are right-aligned.
/// `cells` as aligned columns; each cell one line (base::printable: a line break or control
/// character in a stored name shows as an escape).
/// A last left-aligned column is cut with "…" to keep each line within `width` (0: no limit).
void print_table(const std::vector<std::vector<std::string>>& cells, const std::vector<bool>& right,
                 std::ostream& out, size_t width = 0) {
  std::vector<std::vector<std::string>> rows = cells;
  for (auto& row : rows) {
    for (std::string& cell : row) cell = base::printable(cell);
  }
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c) widths[c] = std::max(widths[c], row[c].size());
  }
  for (const auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c) {
      const bool last = c + 1 == row.size();
      const bool r = c < right.size() && right[c];
      if (last && !r && width > 0) {
        const size_t used = display_width(line) + (c == 0 ? 0 : 2);
        line += (c == 0 ? "" : "  ") + ellipsize(row[c], width > used + 10 ? width - used : 10);
      } else {
        line += (c == 0 ? "" : "  ") + (last && !r ? row[c] : pad(row[c], widths[c], r));
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  }
}

/// The run's plan document, or InputError when the run has none (calibration runs, ...).
json plan_document(const store::RunRecord& run) {
  json doc = parse_or_null(run.document_json);
  if (!doc.is_object() || !doc.contains("results") || !doc["results"].is_array()) {
    throw plan::InputError("run " + std::to_string(run.id) + " (" + run.kind +
                           ") has no plan results; compare takes runs of kind plan or "
                           "sweep_point");
  }
  return doc;
}

/// Latency in milliseconds for tables, "-" when absent.
std::string ms(const json& row, const char* key) {
  const double v = number_or(row, key, NAN);
  return std::isnan(v) ? "-" : fixed(1000 * v, 1);
}

/// Leaves of `value` as "path" -> compact JSON ("a.b", "list[2]").
void flatten(const json& value, const std::string& path, std::map<std::string, std::string>& out) {
  if (value.is_object() && !value.empty()) {
    for (auto it = value.begin(); it != value.end(); ++it) {
      flatten(it.value(), path.empty() ? it.key() : path + "." + it.key(), out);
    }
  } else if (value.is_array() && !value.empty()) {
    for (size_t i = 0; i < value.size(); ++i) {
      flatten(value[i], path + "[" + std::to_string(i) + "]", out);
    }
  } else {
    out[path] = value.dump();
  }
}

int list_runs(const RunsArgs& a, std::ostream& out) {
  const store::ResultsStore db = app::open_results_store(a.db);
  if (a.limit < 0)
    throw plan::InputError("--limit " + std::to_string(a.limit) +
                           ": expected 0 (all) or a positive number of runs");
  std::vector<store::RunRecord> runs = db.list_runs(a.kind, a.limit > 0 ? a.limit + 1 : 0);
  const bool more = a.limit > 0 && static_cast<int64_t>(runs.size()) > a.limit;
  if (more) runs.pop_back();
  if (runs.empty()) {
    out << "No " << (a.kind.empty() ? "" : a.kind + " ") << "runs in " << db.path().string()
        << "\n";
    return kExitOk;
  }
  out << "Runs in " << db.path().string() << ", newest first:\n";
  std::vector<std::vector<std::string>> rows = {{"id", "kind", "created (UTC)", "name", "summary"}};
  for (const store::RunRecord& r : runs) {
    rows.push_back({std::to_string(r.id), r.kind, r.created_utc, r.name, r.summary});
  }
  print_table(rows, {true}, out, a.width_columns);
  if (more) {
    out << "(the newest " << a.limit << " shown; --limit 0 lists all)\n";
  }
  return kExitOk;
}

void print_results_table(const json& doc, std::ostream& out) {
  std::vector<std::vector<std::string>> rows = {
      {"instance type", "kind", "feasible", "count", "USD/hour", "TTFT p99 ms", "TPOT p99 ms"}};
  for (const json& row : doc["results"]) {
    const bool ok = feasible(row);
    rows.push_back({string_or(row, "instance_type"), string_or(row, "device_kind"),
                    ok ? "yes" : "no",
                    ok ? std::to_string(row.value("num_instances", int64_t{0})) : "-",
                    ok ? fixed(number_or(row, "usd_per_hour", 0), 2) : "-", ms(row, "ttft_p99_s"),
                    ms(row, "tpot_p99_s")});
  }
  print_table(rows, {false, false, false, true, true, true, true}, out);
}

int show_run(const RunsArgs& a, std::ostream& out) {
  const store::ResultsStore db = app::open_results_store(a.db);
  const store::RunRecord r = db.get_run(parse_run_id(a.run));
  if (a.json) {
    json j = {{"id", r.id},
              {"kind", r.kind},
              {"name", r.name},
              {"created_utc", r.created_utc},
              {"command_line", r.command_line},
              {"summary", r.summary},
              {"sweep_id", r.sweep_id},
              {"point_key", r.point_key}};
    const json input = parse_or_null(r.input_json);
    j["input"] = input.is_null() && !r.input_json.empty() ? json(r.input_json) : input;
    const json doc = parse_or_null(r.document_json);
    j["document"] = doc.is_null() && !r.document_json.empty() ? json(r.document_json) : doc;
    out << j.dump(2) << "\n";
    return kExitOk;
  }
  out << "Run " << r.id << " (" << r.kind << "): " << r.name << "\n"
      << "  created:  " << r.created_utc << "\n"
      << "  command:  " << r.command_line << "\n";
  if (!r.sweep_id.empty()) {
    out << "  sweep:    " << r.sweep_id << "\n"
        << "  point:    " << r.point_key << "\n";
  }
  out << "  summary:  " << r.summary << "\n";
  const json doc = parse_or_null(r.document_json);
  if (doc.is_object() && doc.contains("results") && doc["results"].is_array()) {
    out << "\n";
    print_results_table(doc, out);
    if (doc.contains("analysis") && doc["analysis"].is_object()) {
      const std::string advice = string_or(doc["analysis"], "recommendation");
      if (!advice.empty()) out << "\nRecommendation: " << advice << "\n";
    }
  } else {
    out << "  document: " << r.document_json.size() << " bytes (--json prints it)\n";
  }
  return kExitOk;
}

/// "+1.86 (+50.0%)" style change from a to b; "" when either is missing.
std::string change(double a, double b, int precision, bool percent) {
  if (std::isnan(a) || std::isnan(b)) return "";
  const double d = b - a;
  std::string text = (d > 0 ? "+" : "") + fixed(d, precision);
  if (percent && a != 0)
    text += " (" + std::string(d > 0 ? "+" : "") + fixed(100 * d / a, 1) + "%)";
  return text;
}

/// "3 x g5.xlarge, USD 1.01/hour" for a run document's answer (with its configuration when
/// `with_config`), "no fleet meets the SLO" when it has none, "" when the document has no answer
/// (a run stored before answers).
std::string answer_text(const json& doc, bool with_config) {
  if (!doc.contains("answer") || !doc["answer"].is_object()) return "";
  const json& an = doc["answer"];
  if (!an.value("feasible", false)) return "no fleet meets the SLO";
  std::string text =
      std::to_string(an.value("num_instances", int64_t{0})) + " x " +
      string_or(an, "instance_type") + ", " +
      base::money(string_or(an, "currency", "USD"), number_or(an, "cost_per_hour", 0)) + "/hour";
  const std::string config = string_or(an, "configuration");
  return config.empty() || !with_config ? text : text + " (" + config + ")";
}

/// Run A's and run B's figure as "a -> b", plus the relative change for money.
std::string before_after(const std::string& label, const std::string& x, const std::string& y) {
  return label + " " + x + " -> " + y;
}

/// The concise compare: the answer's change and one line per instance type whose feasibility,
/// fleet size or USD/hour changed (docs/results-store.md).
void print_changes(const json& da, const json& db_doc, const std::vector<std::string>& types,
                   std::map<std::string, json>& rows_a, std::map<std::string, json>& rows_b,
                   std::ostream& out) {
  const auto config = [](const json& doc) {
    return doc.contains("answer") && doc["answer"].is_object()
               ? string_or(doc["answer"], "configuration")
               : std::string();
  };
  const bool configs_differ = config(da) != config(db_doc);  // else shown once, unchanged
  const std::string ans_a = answer_text(da, configs_differ);
  const std::string ans_b = answer_text(db_doc, configs_differ);
  if (!ans_a.empty() || !ans_b.empty()) {
    if (ans_a == ans_b) {
      out << "Answer: unchanged, " << ans_a << "\n";
    } else {
      out << "Answer: " << (ans_a.empty() ? "(none)" : ans_a) << " -> "
          << (ans_b.empty() ? "(none)" : ans_b) << "\n";
    }
  }
  std::vector<std::string> lines;
  for (const std::string& t : types) {
    const json* x = rows_a.count(t) ? &rows_a[t] : nullptr;
    const json* y = rows_b.count(t) ? &rows_b[t] : nullptr;
    if (x == nullptr || y == nullptr) {
      lines.push_back(t + ": " +
                      (x == nullptr ? "only in the second run" : "only in the first run"));
      continue;
    }
    std::vector<std::string> parts;
    const bool fx = feasible(*x), fy = feasible(*y);
    if (fx != fy)
      parts.push_back(std::string("feasible ") + (fx ? "yes" : "no") + " -> " +
                      (fy ? "yes" : "no"));
    const auto count = [](const json& row) {
      return feasible(row) ? std::to_string(row.value("num_instances", int64_t{0}))
                           : std::string("-");
    };
    if (count(*x) != count(*y)) parts.push_back(before_after("instances", count(*x), count(*y)));
    const double ua = fx ? number_or(*x, "usd_per_hour", NAN) : NAN;
    const double ub = fy ? number_or(*y, "usd_per_hour", NAN) : NAN;
    const auto usd = [](double v) { return std::isnan(v) ? std::string("-") : fixed(v, 2); };
    if (usd(ua) != usd(ub)) {
      const bool relative = !std::isnan(ua) && !std::isnan(ub) && ua != 0;
      parts.push_back(
          before_after("USD/hour", usd(ua), usd(ub)) +
          (relative ? " (" + std::string(ub > ua ? "+" : "") + fixed(100 * (ub - ua) / ua, 1) + "%)"
                    : ""));
    }
    if (parts.empty()) continue;
    std::string line = t + ": ";
    for (size_t i = 0; i < parts.size(); ++i) line += (i == 0 ? "" : ", ") + parts[i];
    lines.push_back(line);
  }
  if (lines.empty()) {
    out << "Instance types: no fleet size, cost or feasibility changed (" << types.size()
        << " compared; --all shows every figure side by side)\n";
    return;
  }
  out << "Changed (" << lines.size() << " of " << types.size()
      << " instance types; --all shows every figure side by side):\n";
  for (const std::string& l : lines) out << "  " << base::printable(l) << "\n";
}

int compare_runs(const RunsArgs& a, std::ostream& out) {
  const store::ResultsStore db = app::open_results_store(a.db);
  const store::RunRecord ra = db.get_run(parse_run_id(a.run_a));
  const store::RunRecord rb = db.get_run(parse_run_id(a.run_b));
  const json da = plan_document(ra);
  const json db_doc = plan_document(rb);
  const std::string la = "run " + std::to_string(ra.id);
  const std::string lb = "run " + std::to_string(rb.id);
  out << "Comparing " << la << " (" << ra.kind << ", " << ra.name << ", " << ra.created_utc
      << ") with " << lb << " (" << rb.kind << ", " << rb.name << ", " << rb.created_utc << ")\n";

  // What changed in the inputs (the scenarios as stored).
  const json ia = parse_or_null(ra.input_json);
  const json ib = parse_or_null(rb.input_json);
  if (!ia.is_null() && !ib.is_null()) {
    std::map<std::string, std::string> fa, fb;
    flatten(ia, "", fa);
    flatten(ib, "", fb);
    std::vector<std::string> diffs;
    for (const auto& [path, value] : fa) {
      const auto it = fb.find(path);
      if (it == fb.end()) {
        diffs.push_back(path + ": " + value + " -> (absent)");
      } else if (it->second != value) {
        diffs.push_back(path + ": " + value + " -> " + it->second);
      }
    }
    for (const auto& [path, value] : fb) {
      if (!fa.count(path)) diffs.push_back(path + ": (absent) -> " + value);
    }
    if (diffs.empty()) {
      out << "Inputs: identical\n";
      if (ra.command_line != rb.command_line) {  // e.g. --load-multiplier, not in the input
        out << "Command lines differ:\n  " << la << ": " << ra.command_line << "\n  " << lb << ": "
            << rb.command_line << "\n";
      }
    } else {
      out << "Inputs differ:\n";
      for (const std::string& d : diffs) out << "  " << d << "\n";
    }
  }
  out << "\n";

  // Instance types in the order of run A, then those only in run B.
  std::vector<std::string> types;
  std::map<std::string, json> rows_a, rows_b;
  for (const json& row : da["results"]) {
    const std::string t = string_or(row, "instance_type");
    if (rows_a.emplace(t, row).second) types.push_back(t);
  }
  for (const json& row : db_doc["results"]) {
    const std::string t = string_or(row, "instance_type");
    if (rows_b.emplace(t, row).second && !rows_a.count(t)) types.push_back(t);
  }
  if (!a.all) {
    print_changes(da, db_doc, types, rows_a, rows_b, out);
    out << "\n" << la << ": " << ra.summary << "\n" << lb << ": " << rb.summary << "\n";
    return kExitOk;
  }
  std::vector<std::vector<std::string>> table = {{"instance type", "metric", la, lb, "change"}};
  for (const std::string& t : types) {
    const json* x = rows_a.count(t) ? &rows_a[t] : nullptr;
    const json* y = rows_b.count(t) ? &rows_b[t] : nullptr;
    auto cell = [](const json* row, const std::string& text) { return row ? text : "(absent)"; };
    auto num = [](const json* row, const char* key) {
      return row != nullptr && feasible(*row) ? number_or(*row, key, NAN) : NAN;
    };
    auto shown = [](double v, int precision, double scale) {
      return std::isnan(v) ? std::string("-") : fixed(scale * v, precision);
    };
    const std::string fa = x ? (feasible(*x) ? "yes" : "no") : "";
    const std::string fb = y ? (feasible(*y) ? "yes" : "no") : "";
    table.push_back(
        {t, "feasible", cell(x, fa), cell(y, fb), x && y && fa != fb ? fa + " -> " + fb : ""});
    const double na = num(x, "num_instances"), nb = num(y, "num_instances");
    table.push_back({"", "instances", cell(x, shown(na, 0, 1)), cell(y, shown(nb, 0, 1)),
                     change(na, nb, 0, false)});
    const double ua = num(x, "usd_per_hour"), ub = num(y, "usd_per_hour");
    table.push_back({"", "USD/hour", cell(x, shown(ua, 2, 1)), cell(y, shown(ub, 2, 1)),
                     change(ua, ub, 2, true)});
    const double ta = num(x, "ttft_p99_s"), tb = num(y, "ttft_p99_s");
    table.push_back({"", "TTFT p99 ms", cell(x, shown(ta, 1, 1000)), cell(y, shown(tb, 1, 1000)),
                     change(1000 * ta, 1000 * tb, 1, true)});
    const double pa = num(x, "tpot_p99_s"), pb = num(y, "tpot_p99_s");
    table.push_back({"", "TPOT p99 ms", cell(x, shown(pa, 1, 1000)), cell(y, shown(pb, 1, 1000)),
                     change(1000 * pa, 1000 * pb, 1, true)});
  }
  print_table(table, {false, false, true, true, false}, out, a.width_columns);
  out << "\n" << la << ": " << ra.summary << "\n" << lb << ": " << rb.summary << "\n";
  return kExitOk;
}

}  // namespace

int64_t parse_run_id(const std::string& text) {
  if (text == "latest") return 0;
  const bool digits =
      !text.empty() && text.size() <= 18 &&
      std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
  const int64_t id = digits ? std::stoll(text) : 0;
  if (id <= 0) {
    throw plan::InputError("run \"" + text +
                           "\": expected a run id (a positive integer, see llmcap runs list) or "
                           "\"latest\"");
  }
  return id;
}

CLI::App* add_runs_command(CLI::App& app, RunsArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "runs", "List, show and compare the runs in the results database (docs/results-store.md)");
  cmd->require_subcommand(1);
  cmd->add_option("--db", args.db,
                  "Results database (default: $LLMCAP_DB, else "
                  "$XDG_DATA_HOME/llmcap/runs.sqlite)")
      ->option_text("FILE");
  cmd->add_option("--data-dir", args.data_dir, "Data folder (unused)")
      ->option_text("DIR")
      ->group("");

  args.list_cmd = cmd->add_subcommand("list", "The stored runs, newest first");
  args.list_cmd
      ->add_option("--kind", args.kind,
                   "Only runs of this kind (plan, sweep_point, calibration, bench-sim, "
                   "serve-bench, validate)")
      ->option_text("KIND");
  args.list_cmd->add_option("--limit", args.limit, "Newest N runs (0: all)")
      ->option_text("N")
      ->capture_default_str();

  args.show_cmd = cmd->add_subcommand("show", "One run: its summary and results");
  args.show_cmd->add_option("run", args.run, "Run id, or \"latest\"")
      ->required()
      ->option_text("RUN");
  args.show_cmd->add_flag("--json", args.json,
                          "Print the whole record as JSON (input and run document included)");

  args.compare_cmd = cmd->add_subcommand(
      "compare",
      "What changed between two runs: their inputs, the answer, and each instance type whose "
      "fleet size, USD/hour or feasibility changed (--all: every figure side by side)");
  args.compare_cmd->add_option("run_a", args.run_a, "First run id, or \"latest\"")->required();
  args.compare_cmd->add_option("run_b", args.run_b, "Second run id, or \"latest\"")->required();
  args.compare_cmd->add_flag("--all", args.all,
                             "Every instance type's figures side by side, changed or not");
  add_width_option(cmd, args.width);
  for (CLI::App* sub : {args.list_cmd, args.show_cmd, args.compare_cmd}) {
    sub->fallthrough();  // --db after the subcommand's name too
  }
  return cmd;
}

int run_runs_command(const RunsArgs& given, const std::string&, std::ostream& out, std::ostream&) {
  RunsArgs args = given;
  args.width_columns = output_width(args.width);
  std::ostringstream text;  // fitted to the width as a whole (not show --json)
  const auto fitted = [&](int code) {
    out << (args.json ? text.str() : fit_to_width(text.str(), args.width_columns));
    return code;
  };
  try {
    if (args.list_cmd != nullptr && args.list_cmd->parsed()) return fitted(list_runs(args, text));
    if (args.show_cmd != nullptr && args.show_cmd->parsed()) return fitted(show_run(args, text));
    if (args.compare_cmd != nullptr && args.compare_cmd->parsed()) {
      return fitted(compare_runs(args, text));
    }
  } catch (const store::StoreError& e) {
    throw plan::InputError(e.what());  // a missing run or an unreadable file: bad input
  }
  throw plan::InputError("runs: expected a subcommand: list, show or compare");
}

}  // namespace llmcap::cli
