// `llmcap catalog check` (issue 30, item 4; docs/catalog.md): every price of the instance
// catalog (data/instances/instances.json) checked for what a buyer needs to file it: a source
// that is the provider's own price page or price-list file, and a date not too old.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace llmcap::app {

/// One problem with one price (or with a record's notes).
struct CatalogFlag {
  std::string instance;     ///< record id
  std::string price_model;  ///< "on_demand", "spot", ...; "network" or "record" for notes
  std::string kind;         ///< "unsourced", "undated", "stale", "unofficial", "unverified"
  std::string detail;       ///< one line, e.g. "as_of 2024-12-31 is 701 days old (> 180)"
};

/// What `llmcap catalog check` looks at.
struct CatalogCheckOptions {
  std::string today;           ///< YYYY-MM-DD: the day ages are counted to
  int64_t max_age_days = 180;  ///< older prices are "stale"
};

/// The result: how much was checked, and every flag in file order.
struct CatalogCheck {
  size_t num_types = 0;
  size_t num_prices = 0;  ///< each record's own price plus each entry of its "prices"
  std::vector<CatalogFlag> flags;
};

/// Checks every price of `instances_doc` (the parsed instances.json: {"instances": [...]}):
/// the record's own price (usd_per_hour under price_model, its "source" and "as_of") and each
/// entry of "prices" (a spot offer's interruption rate too: "interruption_source",
/// "interruption_as_of"). Flags, per price:
/// - "unsourced": no or empty "source";
/// - "undated": no "as_of", or one that is not a date YYYY-MM-DD;
/// - "stale": as_of more than options.max_age_days before options.today (the age in days);
/// - "unofficial": the source names no URL on the provider's own domains (official_domains();
///   a provider without an entry has none, so every source of it is flagged);
/// - "unverified": "confidence": "unverified" on the record, or a note (the record's, the
///   offer's, or the network figures') saying a figure was not read from a source ("from
///   knowledge", "not re-read", "not read from").
/// Throws base::InputError naming `file` when the document is not an object with an
/// "instances" array of objects each with a string "id", or options.today is not a date.
CatalogCheck check_catalog(const nlohmann::json& instances_doc, const std::string& file,
                           const CatalogCheckOptions& options);

/// Days since 1970-01-01 of a date written YYYY-MM-DD (a real calendar day), else nullopt.
std::optional<int64_t> date_days(const std::string& text);

/// Today's date (UTC), YYYY-MM-DD.
std::string today_utc();

/// The official domains of a provider's prices, by provider name as instances.json writes it
/// ("AWS", "GCP", "Azure", "Lambda", ...): a URL matches when its host is the domain or ends in
/// "." + domain; an entry with a path ("github.com/aws/karpenter-provider-aws": the price file
/// AWS generates from its Price List API) matches URLs that start with it. Empty for an
/// unknown provider.
const std::vector<std::string>& official_domains(const std::string& provider);

/// Whether `source` contains an http(s) URL on one of official_domains(provider).
bool is_official_source(const std::string& provider, const std::string& source);

}  // namespace llmcap::app
