#include "cli/audit.h"

#include <CLI/CLI.hpp>
#include <cstdio>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/output_files.h"
#include "app/plan_output.h"
#include "base/error.h"
#include "base/text.h"
#include "cli/cli.h"
#include "model/calibration.h"
#include "model/engine_profile.h"
#include "model/hardware.h"
#include "model/input_error.h"

namespace llmcap::cli {
namespace {

using nlohmann::json;

json optional_number(const std::optional<double>& v) { return v ? json(*v) : json(nullptr); }

std::string ms_text(const std::optional<double>& s) {
  if (!s) return "-";
  return base::significant(*s * 1e3, 4) + " ms";
}

/// `text` wrapped at `width` columns, each line indented by `indent` spaces.
std::string wrapped(const std::string& text, std::size_t width, std::size_t indent) {
  std::istringstream words(text);
  std::string word;
  std::string out;
  std::string line;
  while (words >> word) {
    if (!line.empty() && indent + line.size() + 1 + word.size() > width) {
      out += std::string(indent, ' ') + line + "\n";
      line.clear();
    }
    line += (line.empty() ? "" : " ") + word;
  }
  if (!line.empty()) out += std::string(indent, ' ') + line + "\n";
  return out;
}

}  // namespace

CLI::App* add_audit_command(CLI::App& app, AuditArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "audit",
      "Check published decode latency, throughput and memory-bandwidth claims against the "
      "roofline lower bound and the predictor (docs/audit.md)");
  cmd->add_option("claims", args.claims, "Claims JSON file (docs/audit.md)")
      ->required()
      ->option_text("FILE");
  cmd->add_option("--json", args.json_out,
                  "Write {\"claims\": [{id, verdict, claimed_s, lower_bound_s, predicted_s, "
                  "explanation, ...}]} to FILE")
      ->option_text("FILE");
  cmd->add_option("--profile", args.profile,
                  "Calibration profile JSON (llmcap calibrate --out): CPU predictions use its "
                  "rates transferred to the claim's CPU (docs/model.md, Calibration)")
      ->option_text("FILE");
  cmd->add_option("--data-dir", args.data_dir,
                  "Folder with models/, hardware/ and instances/ (see plan --help)")
      ->option_text("DIR");
  cmd->add_option("--engine", args.engines,
                  "Engine profile the predictions assume (data/engines, docs/engines.md); "
                  "repeat for the other device kind, e.g. --engine vllm --engine llama.cpp")
      ->option_text("ID");
  cmd->add_option("--engine-profile", args.engine_profiles,
                  "Fitted engine profile (llmcap calibrate --from-benchmark --out): claims on its "
                  "hardware are priced with it (repeatable, one per hardware)")
      ->option_text("FILE");
  cmd->add_option("--tolerance", args.tolerance,
                  "Optimistic when predicted / claimed time exceeds this factor")
      ->check(CLI::Range(1.0, 1000.0))
      ->option_text("FACTOR (>= 1; default 1.25)");
  return cmd;
}

std::string audit_to_json(const std::vector<model::ClaimAudit>& audits, double tolerance) {
  json claims = json::array();
  for (const model::ClaimAudit& a : audits) {
    json c;
    c["id"] = a.id;
    c["kind"] = std::string(model::to_string(a.kind));
    c["verdict"] = std::string(model::to_string(a.verdict));
    c["claimed_s"] = optional_number(a.claimed_s);
    c["lower_bound_s"] = optional_number(a.lower_bound_s);
    c["predicted_s"] = optional_number(a.predicted_s);
    c["factor"] = optional_number(a.factor);
    c["explanation"] = a.explanation;
    if (a.kind == model::ClaimKind::kMemoryBandwidth) {
      c["claimed_bytes_per_s"] = optional_number(a.claimed_bytes_per_s);
      c["peak_bytes_per_s"] = optional_number(a.peak_bytes_per_s);
      c["implied_channels"] = a.implied_channels;
      c["memory_transfer_rate_mts"] = a.memory_transfer_rate_mts;
    } else {
      c["model"] = a.model;
      c["weight_format"] = std::string(model::to_string(a.weight_format));
      c["weight_format_assumed"] = a.weight_format_assumed;
      c["kv_format"] = std::string(model::to_string(a.kv_format));
      c["kv_format_assumed"] = a.kv_format_assumed;
      c["weight_bytes"] = a.weight_bytes;
      c["bytes_per_step"] = a.bytes_per_step;
      c["flops_per_step"] = a.flops_per_step;
      c["bound_bandwidth_bytes_per_s"] = a.bound_bandwidth_bytes_per_s;
      c["bound_flops_per_s"] = a.bound_flops_per_s;
      c["memory_bytes"] = a.memory_bytes;
      c["fits"] = a.fits;
      c["predictor"] = a.predictor;
    }
    claims.push_back(std::move(c));
  }
  json doc;
  doc["tolerance"] = tolerance;
  doc["claims"] = std::move(claims);
  return doc.dump(2) + "\n";
}

void print_audit(const std::vector<model::ClaimAudit>& audits, const std::string& claims_file,
                 double tolerance, std::ostream& out) {
  std::size_t id_width = 2;
  for (const model::ClaimAudit& a : audits) id_width = std::max(id_width, a.id.size());
  out << "Audit of " << claims_file << ": " << audits.size()
      << (audits.size() == 1 ? " claim" : " claims")
      << " (impossible: below the roofline lower bound or not fitting memory; optimistic: "
         "predicted / claimed > "
      << tolerance << ")\n\n";
  out << std::left << std::setw(static_cast<int>(id_width) + 2) << "id" << std::setw(12)
      << "verdict" << std::right << std::setw(13) << "claimed" << std::setw(13) << "lower bound"
      << std::setw(13) << "predicted" << std::setw(9) << "factor"
      << "\n";
  for (const model::ClaimAudit& a : audits) {
    std::string claimed = ms_text(a.claimed_s);
    if (a.claimed_bytes_per_s) {
      claimed = base::gb_per_s(*a.claimed_bytes_per_s);
    }
    std::string factor = "-";
    if (a.factor) {
      factor = base::significant(*a.factor, 3) + "x";
    }
    out << std::left << std::setw(static_cast<int>(id_width) + 2) << a.id << std::setw(12)
        << model::to_string(a.verdict) << std::right << std::setw(13) << claimed << std::setw(13)
        << ms_text(a.lower_bound_s) << std::setw(13) << ms_text(a.predicted_s) << std::setw(9)
        << factor << "\n";
  }
  out << "\n(times are seconds per output token of one sequence; factor = predicted / "
         "claimed)\n";
  for (const model::ClaimAudit& a : audits) {
    out << "\n"
        << a.id << ": " << model::to_string(a.verdict) << "\n"
        << wrapped(a.explanation, 100, 4);
  }
}

int run_audit_command(const AuditArgs& args, const std::filesystem::path& data_dir,
                      std::ostream& out) {
  std::vector<app::NamedPath> inputs = {{"claims", args.claims}, {"--profile", args.profile}};
  for (const std::string& p : args.engine_profiles) inputs.push_back({"--engine-profile", p});
  const std::vector<app::NamedPath> catalog_files = app::data_dir_inputs(data_dir);
  inputs.insert(inputs.end(), catalog_files.begin(), catalog_files.end());
  app::check_output_paths({{"--json", args.json_out}}, inputs);
  const model::Catalog catalog = model::Catalog::load(data_dir);
  const std::vector<model::ModelSpec> models = model::load_models(data_dir / "models");
  const std::vector<model::Claim> claims = model::read_claims(args.claims, catalog, models);
  model::CalibrationProfile profile;
  model::AuditOptions options;
  options.tolerance = args.tolerance;
  if (!args.profile.empty()) {
    profile = model::read_profile_json(args.profile);
    options.profile = &profile;
  }
  for (const std::string& id : args.engines) {
    const model::EngineProfile& e = model::find_engine(catalog, id, "--engine");
    const model::EngineProfile*& slot =
        e.kind == model::DeviceKind::kGpu ? options.gpu_engine : options.cpu_engine;
    if (slot != nullptr) {
      throw base::InputError("--engine: \"" + slot->id + "\" and \"" + id + "\" are both " +
                             std::string(model::to_string(e.kind)) +
                             " engines; give at most one per device kind");
    }
    slot = &e;
  }
  const std::vector<model::EngineProfile> fitted = model::load_fitted_engines(
      {args.engine_profiles.begin(), args.engine_profiles.end()},
      options.gpu_engine != nullptr ? options.gpu_engine->id : "",
      options.cpu_engine != nullptr ? options.cpu_engine->id : "", "--engine-profile");
  model::check_fitted_hardware(fitted, catalog, "--engine-profile");
  options.fitted_engines = &fitted;
  std::vector<model::ClaimAudit> audits;
  audits.reserve(claims.size());
  for (const model::Claim& c : claims)
    audits.push_back(model::audit_claim(c, catalog, models, options));
  // Render first, so that nothing is written unless all of it succeeded.
  const std::string json_text = args.json_out.empty() ? "" : audit_to_json(audits, args.tolerance);
  app::OutputSet outputs;
  outputs.add("--json", args.json_out, json_text);
  outputs.commit();
  print_audit(audits, args.claims, args.tolerance, out);
  return kExitOk;
}

}  // namespace llmcap::cli
