#include "app/catalog_import.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "app/catalog_check.h"
#include "app/catalog_import_detail.h"
#include "base/error.h"
#include "base/json_reader.h"
#include "base/text.h"

namespace llmcap::app {
namespace {

using base::InputError;
using nlohmann::json;

constexpr double kHoursPerYear = 8760;
constexpr double kHoursPerMonth = 730;  // the providers' month (AWS, Azure, GCP calculators)

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

template <typename Json>
std::string str(const Json& o, const std::string& key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->template get<std::string>() : std::string();
}

/// A price written as a JSON number or a numeric string ("1.0060000000").
double price_of(const json& v, const std::string& file, const std::string& field) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    size_t used = 0;
    try {
      const double x = std::stod(s, &used);
      if (used == s.size() && std::isfinite(x) && x >= 0) return x;
    } catch (const std::exception&) {
    }
  }
  throw InputError::bad_field(file, field, v.dump(), "a non-negative price");
}

std::string require_date(const std::string& as_of, const std::string& file,
                         const std::string& what) {
  if (as_of.empty()) {
    throw InputError(file + ": " + what + ": expected --as-of YYYY-MM-DD (the day the list was " +
                     "downloaded), got nothing");
  }
  if (!date_days(as_of)) {
    throw InputError(file + ": --as-of \"" + as_of + "\": expected a date YYYY-MM-DD");
  }
  return as_of;
}

// ---- AWS Price List offer file ----

PriceList read_aws(const json& doc, const std::string& file) {
  PriceList list;
  list.format = "aws-offer-file";
  const std::string published = str(doc, "publicationDate");
  if (published.size() < 10 || !date_days(published.substr(0, 10))) {
    throw InputError::bad_field(
        file, "publicationDate",
        doc.contains("publicationDate") ? doc["publicationDate"].dump() : "nothing (field missing)",
        "a date-time such as \"2026-07-20T13:44:30Z\"");
  }
  list.as_of = published.substr(0, 10);
  if (!doc.at("products").is_object() || !doc.at("terms").is_object()) {
    throw InputError::bad_field(file, "products", doc.at("products").type_name(),
                                "an object of products by SKU, with \"terms\" an object");
  }
  std::string region;
  std::map<std::string, std::pair<std::string, std::string>> sku_to;  // sku -> name, region
  for (const auto& [sku, product] : doc.at("products").items()) {
    const json& a = product.contains("attributes") ? product.at("attributes") : json::object();
    const std::string name = str(a, "instanceType");
    const bool wanted = !name.empty() && str(a, "operatingSystem") == "Linux" &&
                        str(a, "tenancy") == "Shared" &&
                        (str(a, "preInstalledSw").empty() || str(a, "preInstalledSw") == "NA") &&
                        (str(a, "capacitystatus").empty() || str(a, "capacitystatus") == "Used");
    if (!wanted) {
      ++list.num_skipped;
      continue;
    }
    const std::string r = str(a, "regionCode");
    if (region.empty()) region = r;
    sku_to[sku] = {name, r};
  }
  const std::string offer = str(doc, "offerCode").empty() ? "AmazonEC2" : str(doc, "offerCode");
  const std::string version = str(doc, "version").empty() ? "current" : str(doc, "version");
  list.source =
      "AWS Price List offer file, https://pricing.us-east-1.amazonaws.com/offers/v1.0/aws/" +
      offer + "/" + version + "/" + (region.empty() ? "<region>" : region) +
      "/index.json (publicationDate " + published + "; Linux, shared tenancy)";
  const json& terms = doc.at("terms");
  auto each_term = [&](const std::string& kind, auto&& fn) {
    if (!terms.contains(kind)) return;
    for (const auto& [sku, by_code] : terms.at(kind).items()) {
      const auto it = sku_to.find(sku);
      if (it == sku_to.end()) continue;
      for (const auto& [code, term] : by_code.items()) fn(it->second, code, term);
    }
  };
  each_term("OnDemand", [&](const auto& nr, const std::string& code, const json& term) {
    for (const auto& [rate, dim] : term.at("priceDimensions").items()) {
      if (str(dim, "unit") != "Hrs") continue;
      const double usd = price_of(dim.at("pricePerUnit").at("USD"), file,
                                  "terms.OnDemand." + code + ".priceDimensions." + rate);
      if (usd > 0) list.prices.push_back({"AWS", nr.first, nr.second, "on_demand", usd});
    }
  });
  each_term("Reserved", [&](const auto& nr, const std::string& code, const json& term) {
    const json& ta = term.contains("termAttributes") ? term.at("termAttributes") : json::object();
    const std::string length = str(ta, "LeaseContractLength");
    if (str(ta, "OfferingClass") != "standard" || str(ta, "PurchaseOption") != "No Upfront" ||
        (length != "1yr" && length != "3yr")) {
      return;
    }
    const double years = length == "1yr" ? 1 : 3;
    double usd = 0;
    for (const auto& [rate, dim] : term.at("priceDimensions").items()) {
      const double p = price_of(dim.at("pricePerUnit").at("USD"), file,
                                "terms.Reserved." + code + ".priceDimensions." + rate);
      usd += str(dim, "unit") == "Hrs" ? p : p / (years * kHoursPerYear);
    }
    if (usd > 0) {
      list.prices.push_back(
          {"AWS", nr.first, nr.second, years == 1 ? "reserved_1y" : "reserved_3y", usd});
    }
  });
  return list;
}

// ---- Azure Retail Prices API ----

PriceList read_azure(const json& doc, const std::string& file, const PriceListOptions& o) {
  PriceList list;
  list.format = "azure-retail-prices";
  list.as_of = require_date(o.as_of, file, "an Azure Retail Prices response carries no date");
  list.source =
      "Azure Retail Prices API, " +
      (o.source.empty() ? std::string("https://prices.azure.com/api/retail/prices") : o.source) +
      " (Linux, pay-as-you-go / reservations, USD; response saved as " + file + ")";
  const json& items = doc.at("Items");
  if (!items.is_array()) {
    throw InputError::bad_field(file, "Items", items.type_name(), "an array of price items");
  }
  for (size_t i = 0; i < items.size(); ++i) {
    const json& it = items[i];
    const std::string field = "Items[" + std::to_string(i) + "]";
    if (!it.is_object()) throw InputError::bad_field(file, field, it.dump(), "an object");
    const std::string type = str(it, "type");
    const bool vm = str(it, "serviceName") == "Virtual Machines" && !str(it, "armSkuName").empty();
    if (!vm || str(it, "currencyCode") != "USD" || ends_with(str(it, "productName"), " Windows") ||
        ends_with(str(it, "meterName"), " Low Priority") || str(it, "unitOfMeasure") != "1 Hour" ||
        (type != "Consumption" && type != "Reservation")) {
      ++list.num_skipped;
      continue;
    }
    if (!it.contains("retailPrice")) {
      throw InputError::bad_field(file, field + ".retailPrice", "nothing (field missing)",
                                  "a price");
    }
    const double price = price_of(it.at("retailPrice"), file, field + ".retailPrice");
    ImportedPrice p{"Azure", str(it, "armSkuName"), str(it, "armRegionName"), "on_demand", price};
    if (type == "Reservation") {
      const std::string term = str(it, "reservationTerm");
      if (term != "1 Year" && term != "3 Years") {
        ++list.num_skipped;
        continue;
      }
      const double years = term == "1 Year" ? 1 : 3;
      p.price_model = years == 1 ? "reserved_1y" : "reserved_3y";
      p.usd_per_hour = price / (years * kHoursPerYear);  // retailPrice: the whole term
    } else if (ends_with(str(it, "skuName"), " Spot")) {
      p.price_model = "spot";
    }
    if (p.usd_per_hour > 0) list.prices.push_back(p);
  }
  return list;
}

// ---- CSV aggregate (instances.vantage.sh / ec2instances.info export) ----

/// The cells of one CSV record (RFC 4180 quoting; no line breaks inside cells).
std::vector<std::string> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cells.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  return cells;
}

/// "$1.006 hourly" -> 1.006; "$734.38 monthly" -> / 730; "" or "unavailable" -> nullopt.
std::optional<double> csv_price(const std::string& cell, const std::string& where) {
  std::string s = cell;
  s.erase(std::remove(s.begin(), s.end(), ','), s.end());
  const std::string l = base::ascii_lower(s);
  if (l.empty() || l == "unavailable" || l == "n/a") return std::nullopt;
  std::istringstream in(l[0] == '$' ? l.substr(1) : l);
  double x = 0;
  std::string unit = "hourly";
  if (!(in >> x) || !std::isfinite(x) || x < 0) {
    throw InputError(where + ": expected a price such as \"$1.006 hourly\", got \"" + cell + "\"");
  }
  in >> unit;
  const std::map<std::string, double> hours = {{"hourly", 1},
                                               {"daily", 24},
                                               {"weekly", 168},
                                               {"monthly", kHoursPerMonth},
                                               {"annually", kHoursPerYear},
                                               {"yearly", kHoursPerYear}};
  const auto h = hours.find(unit);
  if (h == hours.end()) {
    throw InputError(where + ": expected a price per hour, day, week, month or year (\"$1.006 " +
                     "hourly\"), got \"" + cell + "\"");
  }
  return x / h->second;
}

PriceList read_csv(const std::string& text, const std::string& file, const PriceListOptions& o) {
  PriceList list;
  list.format = "csv-aggregate";
  if (o.provider.empty() || o.region.empty()) {
    throw InputError(file + ": a CSV price list names no provider or region; expected --provider " +
                     "and --region (e.g. --provider AWS --region us-east-1)");
  }
  list.as_of = require_date(o.as_of, file, "a CSV price list carries no date");
  list.source = "multi-cloud aggregate CSV " +
                (o.source.empty() ? file : o.source + " (" + file + ")") +
                ", on-demand column, region " + o.region;
  std::istringstream in(text);
  std::string line;
  std::getline(in, line);
  const std::vector<std::string> header = csv_cells(line);
  auto column = [&](std::initializer_list<const char*> names) -> std::optional<size_t> {
    for (const char* n : names) {
      const auto it = std::find(header.begin(), header.end(), n);
      if (it != header.end()) return static_cast<size_t>(it - header.begin());
    }
    return std::nullopt;
  };
  const auto name_col = column({"API Name", "Instance Type"});
  const auto price_col = column({"On Demand", "Linux On Demand cost"});
  if (!name_col || !price_col) {
    throw InputError(file + ": line 1: expected a header with \"API Name\" and \"On Demand\" (or " +
                     "\"Linux On Demand cost\"), got \"" + line.substr(0, 80) + "\"");
  }
  for (size_t n = 2; std::getline(in, line); ++n) {
    if (line.empty() || line == "\r") continue;
    const std::vector<std::string> cells = csv_cells(line);
    const std::string where = file + ": line " + std::to_string(n);
    if (cells.size() <= std::max(*name_col, *price_col)) {
      throw InputError(where + ": expected " + std::to_string(header.size()) + " cells, got " +
                       std::to_string(cells.size()));
    }
    const auto usd =
        csv_price(cells[*price_col], where + ", column \"" + header[*price_col] + "\"");
    if (!usd || *usd <= 0) {
      ++list.num_skipped;
      continue;
    }
    list.prices.push_back({o.provider, cells[*name_col], o.region, "on_demand", *usd});
  }
  return list;
}

/// The record's offer under `model`: its own price ("usd_per_hour" on the record) or an entry
/// of "prices"; nullptr when it has none.
nlohmann::ordered_json* offer_of(nlohmann::ordered_json& record, const std::string& model,
                                 bool& own) {
  const std::string own_model = record.contains("price_model") && record["price_model"].is_string()
                                    ? record["price_model"].get<std::string>()
                                    : "on_demand";
  own = model == own_model;
  if (own) return &record;
  if (record.contains("prices") && record["prices"].is_object() &&
      record["prices"].contains(model)) {
    return &record["prices"][model];
  }
  return nullptr;
}

}  // namespace

PriceList read_price_list(const std::string& text, const std::string& file,
                          const PriceListOptions& options) {
  const size_t first = text.find_first_not_of(" \t\r\n\xEF\xBB\xBF");
  if (first != std::string::npos && text[first] == '{') {
    const json doc = base::parse_json_text(text, file);  // depth and range bounds too
    // A field the shape needs that is missing or of another type: one line naming the file.
    try {
      if (doc.contains("offerCode") && doc.contains("products") && doc.contains("terms")) {
        return read_aws(doc, file);
      }
      if (doc.contains("Items")) return read_azure(doc, file, options);
      if (doc.contains("skus")) return detail::read_gcp(doc, file, options);
    } catch (const json::exception& e) {
      throw InputError(file + ": not in the shape of its price list: " + std::string(e.what()));
    }
    throw InputError(file +
                     ": expected an AWS Price List offer file (\"offerCode\", \"products\", " +
                     "\"terms\"), an Azure Retail Prices response (\"Items\") or a Cloud " +
                     "Billing Catalog API response (\"skus\"), got a JSON object without them");
  }
  return read_csv(text, file, options);
}

namespace detail {

void apply_price(nlohmann::ordered_json& record, const std::string& model, double usd,
                 const PriceList& list, MergeResult& out) {
  using ojson = nlohmann::ordered_json;
  const std::string id = str(record, "id");
  bool own = false;
  ojson* offer = offer_of(record, model, own);
  if (offer == nullptr && model == "spot") {
    out.skipped.push_back(id +
                          " spot: no spot offer to update (a new one needs an "
                          "interruption rate from another source)");
    return;
  }
  if (offer == nullptr) {
    if (!record.contains("prices") || !record["prices"].is_object()) {
      record["prices"] = ojson::object();
    }
    offer = &record["prices"][model];
  }
  const double old = offer->contains("usd_per_hour") && (*offer)["usd_per_hour"].is_number()
                         ? (*offer)["usd_per_hour"].get<double>()
                         : 0.0;
  if (old == usd && str(*offer, "source") == list.source && str(*offer, "as_of") == list.as_of) {
    ++out.num_unchanged;
    return;
  }
  (*offer)["usd_per_hour"] = usd;
  (*offer)["source"] = list.source;
  (*offer)["as_of"] = list.as_of;
  if (own) record.erase("confidence");
  out.changes.push_back({id, model, old, usd});
}

}  // namespace detail

MergeResult merge_prices(const nlohmann::ordered_json& catalog_doc, const PriceList& list) {
  using ojson = nlohmann::ordered_json;
  MergeResult out;
  out.catalog = catalog_doc;
  ojson& records = out.catalog.at("instances");
  std::map<std::tuple<std::string, std::string, std::string>, size_t> index;
  for (size_t i = 0; i < records.size(); ++i) {
    const ojson& r = records[i];
    index[{base::ascii_lower(str(r, "provider")), str(r, "name"), str(r, "region")}] = i;
  }
  std::set<std::string> unknown;
  for (const ImportedPrice& p : list.prices) {
    const auto it = index.find({base::ascii_lower(p.provider), p.name, p.region});
    if (it == index.end()) {
      unknown.insert(p.name + " (" + p.region + ")");
      continue;
    }
    detail::apply_price(records[it->second], p.price_model, p.usd_per_hour, list, out);
  }
  if (!list.components.empty()) detail::merge_gcp(records, list, out);
  out.unknown.assign(unknown.begin(), unknown.end());
  return out;
}

}  // namespace llmcap::app
