// `llmcap calibrate --from-benchmark FILE...`: options are registered in calibrate_cmd.cpp.
#include <filesystem>
#include <iomanip>
#include <ostream>

#include "app/benchmark_files.h"
#include "app/benchmark_fit.h"
#include "app/output_files.h"
#include "app/plan_output.h"
#include "base/error.h"
#include "base/text.h"
#include "cli/calibrate_cmd.h"
#include "cli/cli.h"
#include "model/engine_profile.h"
#include "model/hardware.h"

namespace llmcap::cli {
namespace {

using base::fixed;

std::string shown(const app::FittedParameter& f) {
  if (f.name.ends_with("_s")) return fixed(f.value * 1e3, 3) + " ms";
  return fixed(f.value, 4);
}

std::string shown_start(const app::FittedParameter& f) {
  if (f.name.ends_with("_s")) return fixed(f.start * 1e3, 3) + " ms";
  return fixed(f.start, 4);
}

std::string shown_value(const std::string& metric, double v) {
  if (metric == "throughput") return fixed(v, 1) + " tok/s";
  return fixed(v * 1e3, 2) + " ms";
}

void print_fit(const app::BenchmarkFit& fit, const std::string& model_file,
               const std::string& out_file, std::ostream& out) {
  out << "Engine " << fit.profile.id << " fitted on " << fit.profile.hardware << " (" << fit.tools
      << "): " << fit.runs << " runs, " << fit.iterations
      << " iterations; each run also left out in turn and predicted by a fit on the others\n";
  out << "Model: " << model_file << " (the files name "
      << (fit.files_model.empty() ? std::string("none") : "\"" + fit.files_model + "\"")
      << ": check they are the same model)\n\n";
  out << "  " << std::left << std::setw(28) << "parameter" << std::right << std::setw(16)
      << "engine profile" << std::setw(14) << "fitted"
      << "\n";
  for (const app::FittedParameter& f : fit.parameters) {
    out << "  " << std::left << std::setw(28) << f.name << std::right << std::setw(16)
        << shown_start(f) << std::setw(14) << (f.determined ? shown(f) : "kept")
        << (f.determined ? "" : "  (no figure depends on it)") << "\n";
  }
  out << "\n  " << std::left << std::setw(24) << "file" << std::setw(20) << "where" << std::setw(18)
      << "metric" << std::right << std::setw(14) << "measured" << std::setw(14) << "fitted"
      << std::setw(9) << "error" << std::setw(14) << "run left out" << std::setw(9) << "error"
      << "\n";
  for (const app::FittedPoint& p : fit.points) {
    out << "  " << std::left << std::setw(24) << p.file.filename().string() << std::setw(20)
        << p.point.where << std::setw(18) << (p.point.metric + " " + p.point.statistic)
        << std::right << std::setw(14) << shown_value(p.point.metric, p.point.value)
        << std::setw(14) << shown_value(p.point.metric, p.predicted) << std::setw(8)
        << fixed(100 * p.error, 1) << "%" << std::setw(14)
        << shown_value(p.point.metric, p.left_out_predicted) << std::setw(8)
        << fixed(100 * p.left_out_error, 1) << "%\n";
  }
  out << "\nFit error: median " << fixed(100 * fit.fit_median_abs_error, 1) << "%, worst "
      << fixed(100 * fit.fit_max_abs_error, 1) << "%; each run predicted with it left out: median "
      << fixed(100 * fit.left_out_median_abs_error, 1) << "%, worst "
      << fixed(100 * fit.left_out_max_abs_error, 1) << "%\n";
  out << "Wrote the fitted profile to " << out_file
      << "; name it in a scenario's \"engine\": {\"profiles\": [FILE]} (plan, GUI) or pass "
         "audit --engine-profile FILE\n";
}

}  // namespace

int run_calibrate_from_benchmark(const CalibrateArgs& a, const std::string& data_dir,
                                 std::ostream& out) {
  const auto missing = [](const std::string& flag, const std::string& why) {
    throw base::InputError("calibrate --from-benchmark: " + flag + " is required: " + why);
  };
  if (a.json_out.empty()) missing("--out FILE", "where the fitted engine profile is written");
  if (a.engine.empty()) missing("--engine ID", "the engine the benchmark ran (data/engines/)");
  if (a.hardware.empty()) missing("--hardware ID", "the GPU or CPU it ran on (data/hardware/)");
  if (a.models.empty()) missing("--model FILE", "the model config the benchmark served");
  if (a.models.size() > 1) {
    throw base::InputError("calibrate --from-benchmark: --model: one model per fit, got " +
                           std::to_string(a.models.size()));
  }
  if (a.tensor_parallel > a.devices || (a.tensor_parallel > 0 && a.devices % a.tensor_parallel)) {
    throw base::InputError("calibrate --from-benchmark: --tp " + std::to_string(a.tensor_parallel) +
                           ": expected a divisor of --devices (" + std::to_string(a.devices) + ")");
  }
  for (const std::string& path : {a.json_out, a.fit_json_out}) {
    const std::filesystem::path dir = std::filesystem::path(path).parent_path();
    if (!path.empty() && !dir.empty() && !std::filesystem::is_directory(dir)) {
      throw base::InputError(path + ": cannot write file: no folder " + dir.string() +
                             "; nothing written");
    }
  }
  std::vector<app::NamedPath> inputs;
  for (const std::string& f : a.benchmark_files) inputs.push_back({"--from-benchmark", f});
  for (const std::string& m : a.models) inputs.push_back({"--model", m});
  app::check_output_paths({{"--out", a.json_out}, {"--json", a.fit_json_out}}, inputs);
  std::vector<app::BenchmarkFile> files;
  for (const std::string& f : a.benchmark_files) files.push_back(app::read_benchmark_file(f));
  const model::Catalog catalog = model::Catalog::load(data_dir);
  app::BenchmarkSetup setup;
  setup.engine = a.engine;
  setup.hardware = a.hardware;
  setup.device_count = a.devices;
  setup.tensor_parallel = a.tensor_parallel;
  setup.cores_used = a.cores;
  setup.model_file = a.models.front();
  setup.weight_format = a.weight_format;
  setup.kv_format = a.kv_format;
  const app::BenchmarkFit fit = app::fit_benchmarks(files, setup, catalog, a.seed);
  // Render everything first, so that nothing is written unless all of it succeeded.
  const nlohmann::ordered_json fit_object = app::fit_json(fit, setup);
  const std::string profile = model::engine_profile_to_json(fit.profile, fit_object);
  const std::string fit_text = a.fit_json_out.empty() ? "" : fit_object.dump(2) + "\n";
  app::OutputSet outputs;
  outputs.add("--out", a.json_out, profile);
  outputs.add("--json", a.fit_json_out, fit_text);
  outputs.commit();
  print_fit(fit, a.models.front(), a.json_out, out);
  return kExitOk;
}

}  // namespace llmcap::cli
