// `llmcap audit CLAIMS.json`: published latency, throughput and memory-bandwidth claims checked
// against the roofline lower bound and the predictor (issue 5, item 4; docs/audit.md).
#pragma once

#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include "model/audit.h"

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap audit`.
struct AuditArgs {
  std::string claims;    ///< the claims file (docs/audit.md)
  std::string json_out;  ///< --json FILE (empty: none)
  std::string profile;   ///< --profile: calibration profile JSON (empty: datasheet defaults)
  std::string data_dir;  ///< --data-dir (empty: the CLI's default resolution)
  double tolerance = model::kOptimisticTolerance;  ///< --tolerance, >= 1
  /// --engine (repeatable): engine profiles the predictions assume, at most one per device kind.
  std::vector<std::string> engines;
  std::vector<std::string> engine_profiles;  ///< --engine-profile: fitted engine profiles
};

/// Registers the `audit` subcommand (options bound to `args`) on `app`.
CLI::App* add_audit_command(CLI::App& app, AuditArgs& args);

/// `{"tolerance": t, "claims": [{"id", "kind", "verdict" ("plausible"|"optimistic"|
/// "impossible"), "claimed_s", "lower_bound_s", "predicted_s", "factor", "explanation", ...}]}`
/// in claim order. Times are seconds per output token (null for a memory-bandwidth claim, and
/// predicted_s / factor null when there is no prediction). Latency and throughput claims add
/// "model", "weight_format", "weight_format_assumed", "kv_format", "kv_format_assumed",
/// "weight_bytes", "bytes_per_step", "flops_per_step", "bound_bandwidth_bytes_per_s",
/// "bound_flops_per_s", "memory_bytes" (0: not stated), "fits", "predictor"; memory-bandwidth
/// claims add "claimed_bytes_per_s", "peak_bytes_per_s" (null when neither hardware nor
/// channels are named), "implied_channels", "memory_transfer_rate_mts" (docs/audit.md).
std::string audit_to_json(const std::vector<model::ClaimAudit>& audits, double tolerance);

/// The table (id, verdict, claimed, lower bound, predicted, factor), then each claim's
/// explanation.
void print_audit(const std::vector<model::ClaimAudit>& audits, const std::string& claims_file,
                 double tolerance, std::ostream& out);

/// The whole command: load the catalogs and models under `data_dir`, read and audit the
/// claims, print, and (with --json) write the JSON atomically. Returns an exit code (cli.h);
/// bad input propagates as model::InputError to cli::run (exit 2, no file written).
int run_audit_command(const AuditArgs& args, const std::filesystem::path& data_dir,
                      std::ostream& out);

}  // namespace llmcap::cli
