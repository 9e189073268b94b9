#include "cli/catalog_cmd.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>

#include "app/catalog_check.h"
#include "app/catalog_import.h"
#include "app/output_files.h"
#include "base/error.h"
#include "base/json_reader.h"
#include "base/text.h"
#include "cli/cli.h"
#include "cli/plan_output.h"
#include "cli/text_layout.h"
#include "model/hardware.h"

namespace llmcap::cli {
namespace {

using nlohmann::json;

std::string instances_file(const std::string& data_dir) {
  return (std::filesystem::path(data_dir) / "instances/instances.json").string();
}

/// "8 x NVIDIA H100 SXM" for a GPU type, the host CPU's name for a CPU type.
std::string hardware_text(const model::Catalog& c, const model::InstanceType& i) {
  if (i.kind == model::DeviceKind::kGpu) {
    const model::HardwareSpec* g = c.find_hardware(i.gpu_id);
    return std::to_string(i.num_gpus) + " x " + (g != nullptr ? g->name : i.gpu_id);
  }
  const model::HardwareSpec* cpu = c.find_hardware(i.cpu_id);
  return cpu != nullptr ? cpu->name : i.cpu_id;
}

/// The catalog's types of `provider` (case-insensitive; "" = all) and `kind` ("cpu", "gpu" or
/// "" = all), in the catalog's order. Throws base::InputError for another kind.
std::vector<const model::InstanceType*> select_instances(const model::Catalog& catalog,
                                                         const std::string& provider,
                                                         const std::string& kind) {
  if (!kind.empty() && kind != "cpu" && kind != "gpu") {
    throw base::InputError("--kind \"" + kind + "\": expected \"cpu\" or \"gpu\"");
  }
  std::vector<const model::InstanceType*> rows;
  for (const model::InstanceType& i : catalog.instances()) {
    if (!provider.empty() && base::ascii_lower(i.provider) != base::ascii_lower(provider)) continue;
    if (!kind.empty() && model::to_string(i.kind) != kind) continue;
    rows.push_back(&i);
  }
  return rows;
}

/// The on-demand price's text ("-" when the type has none) and its date (else the record's).
std::string on_demand_text(const model::InstanceType& i) {
  const model::PriceOffer* od = i.find_price("on_demand");
  return od != nullptr ? fixed_decimals(od->usd_per_hour, 4) : "-";
}
std::string price_date(const model::InstanceType& i) {
  const model::PriceOffer* od = i.find_price("on_demand");
  return od != nullptr ? od->as_of : i.as_of;
}

/// `catalog list` (every column, the catalog's order) and `instances` (id, kind, hardware,
/// price, date; cheapest on-demand first): one table each, fitted to `width`.
int list_instances(const CatalogArgs& args, const std::string& data_dir, bool full,
                   std::ostream& out) {
  const size_t width = output_width(args.width);
  const model::Catalog catalog = model::Catalog::load(data_dir);
  std::vector<const model::InstanceType*> rows =
      select_instances(catalog, args.provider, args.kind);
  if (!full) {
    std::stable_sort(rows.begin(), rows.end(), [](const auto* x, const auto* y) {
      const model::PriceOffer* px = x->find_price("on_demand");
      const model::PriceOffer* py = y->find_price("on_demand");
      if ((px == nullptr) != (py == nullptr)) return py == nullptr;  // unpriced last
      return px != nullptr && px->usd_per_hour < py->usd_per_hour;
    });
  }
  std::vector<std::vector<std::string>> cells;
  if (full) {
    cells.push_back({"id", "provider", "kind", "accelerator", "vCPUs", "GiB", "USD/hour",
                     "other price models", "as_of"});
  } else {
    cells.push_back({"id", "provider", "kind", "hardware", "USD/hour", "price as of"});
  }
  for (const model::InstanceType* i : rows) {
    const std::string hw = hardware_essentials(hardware_text(catalog, *i));
    const std::string kind(model::to_string(i->kind));
    if (!full) {
      cells.push_back({base::printable(i->id), base::printable(i->provider), kind, hw,
                       on_demand_text(*i), base::printable(price_date(*i))});
      continue;
    }
    std::string others;
    for (const model::PriceOffer& p : i->prices) {
      if (p.price_model == "on_demand") continue;
      others +=
          (others.empty() ? "" : ", ") + p.price_model + " " + fixed_decimals(p.usd_per_hour, 4);
    }
    cells.push_back(
        {base::printable(i->id), base::printable(i->provider), kind, hw, std::to_string(i->vcpus),
         fixed_decimals(static_cast<double>(i->memory_bytes) / (1024.0 * 1024 * 1024), 0),
         on_demand_text(*i), others.empty() ? "-" : base::printable(others),
         base::printable(price_date(*i))});
  }
  std::ostringstream t;
  if (full) {
    t << format_table(cells, {false, false, false, false, true, true, true, false, false},
                      {7, 3, 1}, width);
  } else {
    t << format_table(cells, {false, false, false, false, true, false}, {3}, width);
  }
  t << rows.size() << " of " << catalog.instances().size() << " instance types ("
    << instances_file(data_dir) << ")" << (full ? "" : ", cheapest on-demand first") << "\n";
  out << fit_to_width(t.str(), width);
  return kExitOk;
}

int check_catalog(const CatalogArgs& args, const std::string& data_dir, std::ostream& out) {
  (void)model::Catalog::load(data_dir);  // a catalog that does not load is bad input (exit 2)
  const std::string file = instances_file(data_dir);
  app::CatalogCheckOptions options;
  options.today = args.today.empty() ? app::today_utc() : args.today;
  if (args.max_age_days < 0) {
    throw base::InputError("--max-age-days " + std::to_string(args.max_age_days) +
                           ": expected a number of days >= 0");
  }
  options.max_age_days = args.max_age_days;
  const app::CatalogCheck c = app::check_catalog(base::read_json_file(file), file, options);
  std::map<std::string, size_t> by_kind;
  for (const app::CatalogFlag& f : c.flags) {
    out << f.instance << " " << f.price_model << ": " << f.kind << ": " << f.detail << "\n";
    ++by_kind[f.kind];
  }
  out << file << ": " << c.num_types << " instance types, " << c.num_prices
      << " prices checked (today " << options.today << ", stale after " << options.max_age_days
      << " days): ";
  if (c.flags.empty()) {
    out << "nothing flagged\n";
    return kExitOk;
  }
  out << c.flags.size() << " flags (";
  bool first = true;
  for (const auto& [kind, n] : by_kind) {
    out << (first ? "" : ", ") << n << " " << kind;
    first = false;
  }
  out << ")\n";
  return 1;
}

int import_catalog(const CatalogArgs& args, const std::string& data_dir, std::ostream& out) {
  if (args.output.empty() == !args.in_place) {
    throw base::InputError(
        "catalog import: expected exactly one of --output FILE and --in-place (which rewrites " +
        instances_file(data_dir) + ")");
  }
  (void)model::Catalog::load(data_dir);  // the catalog must load before it is merged into
  const std::string catalog_file = instances_file(data_dir);
  const std::string target = args.in_place ? catalog_file : args.output;
  if (!args.in_place) {  // before any reading: a refused output costs nothing
    std::vector<app::NamedPath> inputs = app::data_dir_inputs(data_dir);
    inputs.push_back({"FILE", args.file});
    app::check_output_paths({{"--output", args.output}}, inputs);
  }
  std::ifstream in(args.file, std::ios::binary);
  if (!in) throw base::InputError::unreadable_file(args.file);
  std::ostringstream text;
  text << in.rdbuf();
  app::PriceListOptions options{args.csv_provider, args.region, args.as_of, args.source};
  const app::PriceList list = app::read_price_list(text.str(), args.file, options);
  std::ifstream catalog_in(catalog_file, std::ios::binary);
  std::ostringstream catalog_text;
  catalog_text << catalog_in.rdbuf();
  const app::MergeResult merged =
      app::merge_prices(base::parse_ordered_json_text(catalog_text.str(), catalog_file), list);

  // The merged catalog must load like the shipped one before it is written.
  {
    const std::filesystem::path staging = std::filesystem::temp_directory_path() /
                                          ("llmcap-catalog-import-" + std::to_string(::getpid()) +
                                           "-" + std::to_string(std::hash<std::string>{}(target)));
    std::filesystem::remove_all(staging);
    std::filesystem::copy(data_dir, staging, std::filesystem::copy_options::recursive);
    app::write_file_atomically(staging / "instances/instances.json", merged.catalog.dump(2) + "\n");
    try {
      (void)model::Catalog::load(staging);
    } catch (const base::InputError& e) {
      std::filesystem::remove_all(staging);
      throw base::InputError(args.file + ": the catalog with its prices would not load (" +
                             e.what() + "); nothing written");
    }
    std::filesystem::remove_all(staging);
  }
  app::OutputSet outputs;
  outputs.add(args.in_place ? "" : "--output", target, merged.catalog.dump(2) + "\n");
  outputs.commit();

  out << args.file << ": " << list.format << ", " << list.prices.size() << " prices (as of "
      << list.as_of << "); " << list.num_skipped << " rows skipped (not a Linux, shared-tenancy "
      << "instance price)\n";
  for (const app::PriceChange& c : merged.changes) {
    out << "  " << c.instance << " " << c.price_model << ": "
        << (c.old_usd_per_hour > 0 ? "USD " + fixed_decimals(c.old_usd_per_hour, 4) : "new")
        << " -> USD " << fixed_decimals(c.usd_per_hour, 4) << "\n";
  }
  for (const std::string& s : merged.skipped) out << "  skipped: " << s << "\n";
  out << merged.changes.size() << " prices changed, " << merged.num_unchanged
      << " unchanged; written to " << target << "\n";
  if (!merged.unknown.empty()) {
    out << merged.unknown.size() << " instance types of the list are not in the catalog (add "
        << "a record with its hardware to import them):";
    for (const std::string& u : merged.unknown) out << " " << u << ";";
    out << "\n";
  }
  return kExitOk;
}

}  // namespace

CLI::App* add_catalog_command(CLI::App& app, CatalogArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "catalog", "List, check and update the instance catalog's prices (docs/catalog.md)");
  cmd->require_subcommand(1);
  cmd->add_option("--data-dir", args.data_dir,
                  "Catalog folder (default: $LLMCAP_DATA_DIR, else the source tree's data/)")
      ->option_text("DIR");

  args.list_cmd = cmd->add_subcommand("list", "The instance types, one line each");
  args.list_cmd->add_option("--provider", args.provider, "Only this provider (e.g. AWS)")
      ->option_text("NAME");
  args.list_cmd->add_option("--kind", args.kind, "Only \"cpu\" or \"gpu\" types")
      ->option_text("KIND");
  add_width_option(args.list_cmd, args.width);

  args.check_cmd = cmd->add_subcommand(
      "check",
      "Flag prices without a source or date, stale ones, unofficial sources and unverified "
      "figures; exit 1 when anything is flagged");
  args.check_cmd->add_option("--today", args.today, "Count ages to this day (default: today)")
      ->option_text("YYYY-MM-DD");
  args.check_cmd->add_option("--max-age-days", args.max_age_days, "Older prices are stale")
      ->option_text("N")
      ->capture_default_str();

  args.import_cmd = cmd->add_subcommand(
      "import",
      "Update prices from a provider's price list: an AWS Price List offer file, an Azure "
      "Retail Prices API response, a GCP Cloud Billing Catalog API response, or a multi-cloud "
      "aggregate CSV");
  args.import_cmd->add_option("file", args.file, "The price list")->required()->option_text("FILE");
  args.import_cmd->add_option("--output", args.output, "Write the merged instances.json here")
      ->option_text("FILE");
  args.import_cmd->add_flag("--in-place", args.in_place,
                            "Rewrite the catalog's own instances/instances.json");
  args.import_cmd->add_option("--provider", args.csv_provider, "CSV: whose prices (e.g. AWS)")
      ->option_text("NAME");
  args.import_cmd->add_option("--region", args.region, "CSV: the region of its prices")
      ->option_text("REGION");
  args.import_cmd->add_option("--as-of", args.as_of, "CSV, Azure: the day the list was downloaded")
      ->option_text("YYYY-MM-DD");
  args.import_cmd->add_option("--source", args.source, "CSV, Azure: the URL it came from")
      ->option_text("URL");
  for (CLI::App* sub : {args.list_cmd, args.check_cmd, args.import_cmd}) sub->fallthrough();
  return cmd;
}

int run_catalog_command(const CatalogArgs& args, const std::string& data_dir, std::ostream& out) {
  if (args.list_cmd != nullptr && args.list_cmd->parsed()) {
    return list_instances(args, data_dir, true, out);
  }
  if (args.check_cmd != nullptr && args.check_cmd->parsed()) {
    return check_catalog(args, data_dir, out);
  }
  if (args.import_cmd != nullptr && args.import_cmd->parsed()) {
    return import_catalog(args, data_dir, out);
  }
  return kExitInternalError;
}

CLI::App* add_instances_command(CLI::App& app, CatalogArgs& args) {
  CLI::App* cmd = app.add_subcommand(
      "instances",
      "The catalog's instance types, cheapest on-demand first: id, provider, kind, hardware, "
      "price and its date (llmcap catalog list shows every column)");
  cmd->add_option("--data-dir", args.data_dir, "Catalog folder (default: found beside the binary)")
      ->option_text("DIR");
  cmd->add_option("--kind", args.kind, "Only \"cpu\" or \"gpu\" types")->option_text("KIND");
  cmd->add_option("--provider", args.provider, "Only this provider (e.g. AWS; any case)")
      ->option_text("NAME");
  add_width_option(cmd, args.width);
  return cmd;
}

int run_instances_command(const CatalogArgs& args, const std::string& data_dir, std::ostream& out) {
  return list_instances(args, data_dir, false, out);
}

}  // namespace llmcap::cli
