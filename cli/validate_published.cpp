// `llmcap validate --published`: the predictor against published measurements
// (app/published.h); printing only.
#include <cstdio>
#include <filesystem>

#include "app/output_files.h"
#include "app/plan_output.h"
#include "app/published.h"
#include "cli/cli.h"
#include "cli/validate_cmd.h"
#include "model/hardware.h"

namespace llmcap::cli {
namespace {

/// A figure in the unit it is printed in: milliseconds for times, tokens/s for throughput.
double shown(const std::string& metric, double value) {
  return metric == "throughput" ? value : value * 1e3;
}

}  // namespace

int run_validate_published(const ValidateArgs& a, const std::string& data_dir, std::ostream& out) {
  const std::filesystem::path data = data_dir;
  const std::filesystem::path file = a.published_file.empty()
                                         ? data / "validation" / "published.json"
                                         : std::filesystem::path(a.published_file);
  const model::Catalog catalog = model::Catalog::load(data);
  const app::PublishedSet set = app::read_published(file, catalog);
  app::PublishedOptions options;
  options.seed = a.seed;
  options.use_engines = !a.datasheet;
  const std::vector<app::PublishedPrediction> predictions =
      app::predict_published(set, catalog, data, options);
  app::OutputSet outputs;
  outputs.add("--json", a.json_out,
              a.json_out.empty() ? "" : app::published_json(predictions, options.use_engines));
  outputs.commit();
  print_published(predictions, file, options.use_engines, out);
  return kExitOk;
}

void print_published(const std::vector<app::PublishedPrediction>& predictions,
                     const std::filesystem::path& file, bool use_engines, std::ostream& out) {
  out << "Published measurements (" << file.string()
      << ") against llmcap's prediction of the same benchmark,\n"
      << (use_engines ? "each row priced with its engine's profile (docs/engines.md).\n"
                      : "every row priced with the datasheet roofline and the simulator's "
                        "default engine limits (--datasheet).\n")
      << "Times in ms (tpot, ttft), throughput in output tokens/s; error = predicted / "
         "published - 1.\n\n";
  char line[400];
  std::snprintf(line, sizeof line, "%-56s %-8s %-4s %-14s %-14s %-11s %-6s %11s %11s %8s\n", "row",
                "split", "kind", "engine", "hardware", "metric", "stat", "published", "predicted",
                "error");
  out << line;
  for (const app::PublishedPrediction& p : predictions) {
    const app::PublishedRow& r = *p.row;
    std::snprintf(line, sizeof line,
                  "%-56.56s %-8s %-4s %-14.14s %-14.14s %-11s %-6.6s %11.2f %11.2f %+7.1f%%\n",
                  r.id.c_str(), r.split.c_str(), r.device_kind.c_str(), r.engine.c_str(),
                  r.hardware.c_str(), r.metric.c_str(), r.statistic.c_str(),
                  shown(r.metric, r.published), shown(r.metric, p.predicted), 100 * p.error);
    out << line;
  }
  out << "\n|error| by device kind, metric and split:\n";
  std::snprintf(line, sizeof line, "%-4s %-11s %-9s %5s %9s %9s %11s %8s\n", "kind", "metric",
                "split", "rows", "median", "p90", "within 25%", "worst x");
  out << line;
  for (const app::PublishedSummary& s : app::summarize_published(predictions)) {
    std::snprintf(line, sizeof line, "%-4s %-11s %-9s %5lld %8.1f%% %8.1f%% %10.0f%% %8.2f\n",
                  s.device_kind.c_str(), s.metric.c_str(), s.split.c_str(),
                  static_cast<long long>(s.rows), 100 * s.median_abs_error, 100 * s.p90_abs_error,
                  100 * s.within_25_fraction, s.worst_factor);
    out << line;
  }
  out << "\nTargets on the held-out rows:\n";
  for (const app::PublishedTarget& t : app::published_targets(predictions)) {
    std::snprintf(line, sizeof line,
                  "  %-28s %4lld rows: median %5.1f%%, %3.0f%% within 25%%, worst x%.2f  (%s: "
                  "%s)\n",
                  t.what.c_str(), static_cast<long long>(t.rows), 100 * t.median_abs_error,
                  100 * t.within_25_fraction, t.worst_factor, t.goal.c_str(),
                  t.met ? "met" : "not met");
    out << line;
  }
}

}  // namespace llmcap::cli
