// `llmcap catalog list|check|import` (issue 30, item 4; docs/catalog.md): the instance
// catalog (data/instances/instances.json) as a table, checked for sources and dates, and
// updated from the public price lists providers publish.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

namespace CLI {
class App;
}

namespace llmcap::cli {

/// Options of `llmcap catalog` and its subcommands.
struct CatalogArgs {
  std::string data_dir;          ///< --data-dir (the catalog folder)
  std::string provider;          ///< list --provider (case-insensitive; "" = all)
  std::string kind;              ///< list --kind: "cpu", "gpu" or "" (all)
  std::string today;             ///< check --today YYYY-MM-DD ("" = today, UTC)
  int64_t max_age_days = 180;    ///< check --max-age-days
  std::string file;              ///< import FILE
  std::string output;            ///< import --output FILE
  bool in_place = false;         ///< import --in-place
  std::string region;            ///< import --region (CSV aggregate: the region its prices are for)
  std::string as_of;             ///< import --as-of (CSV aggregate: the day it was exported)
  std::string source;            ///< import --source (CSV aggregate: where it was exported from)
  std::string csv_provider;      ///< import --provider (CSV aggregate: whose prices)
  std::optional<int64_t> width;  ///< list, instances: --width (cli/text_layout.h)
  CLI::App* list_cmd = nullptr;  ///< set by add_catalog_command
  CLI::App* check_cmd = nullptr;
  CLI::App* import_cmd = nullptr;
};

/// Registers the `catalog` subcommand (options bound to `args`) on `app`.
CLI::App* add_catalog_command(CLI::App& app, CatalogArgs& args);

/// Runs it; returns an exit code: list 0; check 0 when nothing is flagged, 1 when anything is
/// (kExitInternalError's value, documented as "flagged" for this command); import 0. Bad input
/// (a catalog that does not load, a bad option value, a price list that cannot be read) throws
/// base::InputError (exit 2, nothing written).
int run_catalog_command(const CatalogArgs& args, const std::string& data_dir, std::ostream& out);

/// Registers `instances` (--kind, --provider, --width, --data-dir bound to `args`) on `app`.
CLI::App* add_instances_command(CLI::App& app, CatalogArgs& args);

/// `llmcap instances`: the catalog's types of the chosen kind and provider, cheapest on-demand
/// first (types without an on-demand price last), one line each (id, provider, kind, hardware,
/// on-demand USD/hour, the price's as_of), fitted to the width. Returns 0; an unknown --kind
/// or --width throws base::InputError (exit 2).
int run_instances_command(const CatalogArgs& args, const std::string& data_dir, std::ostream& out);

}  // namespace llmcap::cli
