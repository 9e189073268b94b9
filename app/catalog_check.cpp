#include "app/catalog_check.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <map>

#include "base/error.h"
#include "base/text.h"

namespace llmcap::app {
namespace {

using nlohmann::json;

/// A string field of `o`, or "" when absent or not a string.
std::string text(const json& o, const std::string& key) {
  const auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

/// Every http(s) URL in `s`, lower-cased, without the scheme ("aws.amazon.com/ec2/pricing").
std::vector<std::string> urls(const std::string& s) {
  std::vector<std::string> out;
  const std::string l = base::ascii_lower(s);
  for (size_t at = l.find("http"); at != std::string::npos; at = l.find("http", at + 4)) {
    size_t start = at + 4;
    if (start < l.size() && l[start] == 's') ++start;
    if (l.compare(start, 3, "://") != 0) continue;
    start += 3;
    size_t end = start;
    while (end < l.size() && !std::isspace(static_cast<unsigned char>(l[end])) &&
           std::string(",;)\"'").find(l[end]) == std::string::npos) {
      ++end;
    }
    if (end > start) out.push_back(l.substr(start, end - start));
  }
  return out;
}

bool url_matches(const std::string& url, const std::string& domain) {
  const size_t slash = domain.find('/');
  if (slash != std::string::npos) {  // a path entry: the URL must start with it
    return url.compare(0, domain.size(), domain) == 0 &&
           (url.size() == domain.size() || url[domain.size()] == '/');
  }
  const std::string host = url.substr(0, url.find_first_of("/?#:"));
  return host == domain || (host.size() > domain.size() &&
                            host.compare(host.size() - domain.size(), domain.size(), domain) == 0 &&
                            host[host.size() - domain.size() - 1] == '.');
}

/// Phrases of a note that say a figure was not read from a source.
const std::vector<std::string>& unread_phrases() {
  static const std::vector<std::string> phrases = {"from knowledge", "not re-read",
                                                   "not read from"};
  return phrases;
}

std::string unread_phrase(const std::string& note) {
  const std::string l = base::ascii_lower(note);
  for (const std::string& p : unread_phrases()) {
    if (l.find(p) != std::string::npos) return p;
  }
  return "";
}

std::string domain_list(const std::string& provider) {
  std::string out;
  for (const std::string& d : official_domains(provider)) out += (out.empty() ? "" : ", ") + d;
  return out.empty() ? "none known for this provider" : out;
}

/// Flags one price: its source, its date, its age and whether its source is official.
void check_price(const std::string& id, const std::string& provider, const std::string& model,
                 const std::string& source, const std::string& as_of, const std::string& what,
                 const CatalogCheckOptions& options, int64_t today, CatalogCheck& out) {
  auto flag = [&](const std::string& kind, const std::string& detail) {
    out.flags.push_back({id, model, kind, what + detail});
  };
  if (source.empty()) {
    flag("unsourced", "no source");
  } else if (!is_official_source(provider, source)) {
    flag("unofficial", "source names no official price page or file of " + provider +
                           " (expected a URL on " + domain_list(provider) + ")");
  }
  const std::optional<int64_t> days = date_days(as_of);
  if (as_of.empty()) {
    flag("undated", "no as_of");
  } else if (!days) {
    flag("undated", "as_of \"" + as_of + "\" is not a date YYYY-MM-DD");
  } else if (today - *days > options.max_age_days) {
    flag("stale", "as_of " + as_of + " is " + std::to_string(today - *days) + " days old (> " +
                      std::to_string(options.max_age_days) + ")");
  }
}

}  // namespace

std::optional<int64_t> date_days(const std::string& t) {
  if (t.size() != 10 || t[4] != '-' || t[7] != '-') return std::nullopt;
  for (size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (!std::isdigit(static_cast<unsigned char>(t[i]))) return std::nullopt;
  }
  const std::chrono::year_month_day ymd{
      std::chrono::year{std::stoi(t.substr(0, 4))},
      std::chrono::month{static_cast<unsigned>(std::stoi(t.substr(5, 2)))},
      std::chrono::day{static_cast<unsigned>(std::stoi(t.substr(8, 2)))}};
  if (!ymd.ok()) return std::nullopt;
  return std::chrono::sys_days{ymd}.time_since_epoch().count();
}

std::string today_utc() {
  const auto now = std::chrono::floor<std::chrono::days>(std::chrono::system_clock::now());
  const std::chrono::year_month_day ymd{now};
  char buf[16];
  std::snprintf(buf, sizeof buf, "%04d-%02u-%02u", static_cast<int>(ymd.year()),
                static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()));
  return buf;
}

const std::vector<std::string>& official_domains(const std::string& provider) {
  static const std::map<std::string, std::vector<std::string>> domains = {
      {"aws",
       {"aws.amazon.com", "pricing.us-east-1.amazonaws.com", "spot-bid-advisor.s3.amazonaws.com",
        "b0.p.awsstatic.com", "github.com/aws/karpenter-provider-aws",
        "raw.githubusercontent.com/aws/karpenter-provider-aws"}},
      {"azure",
       {"azure.microsoft.com", "prices.azure.com", "learn.microsoft.com",
        "github.com/azure/karpenter-provider-azure",
        "raw.githubusercontent.com/azure/karpenter-provider-azure"}},
      {"gcp", {"cloud.google.com", "cloudbilling.googleapis.com", "gstatic.com"}},
      {"lambda", {"lambda.ai", "lambdalabs.com"}},
      {"coreweave", {"coreweave.com"}},
      {"runpod", {"runpod.io"}},
      {"oracle", {"oracle.com"}},
      {"oci", {"oracle.com"}},
      {"alibaba cloud", {"alibabacloud.com", "aliyun.com"}},
      {"tencent cloud", {"tencentcloud.com", "cloud.tencent.com"}},
  };
  static const std::vector<std::string> none;
  const auto it = domains.find(base::ascii_lower(provider));
  return it == domains.end() ? none : it->second;
}

bool is_official_source(const std::string& provider, const std::string& source) {
  for (const std::string& url : urls(source)) {
    for (const std::string& d : official_domains(provider)) {
      if (url_matches(url, d)) return true;
    }
  }
  return false;
}

CatalogCheck check_catalog(const json& doc, const std::string& file,
                           const CatalogCheckOptions& options) {
  const std::optional<int64_t> today = date_days(options.today);
  if (!today) {
    throw base::InputError(file + ": --today \"" + options.today +
                           "\": expected a date YYYY-MM-DD");
  }
  if (!doc.is_object() || !doc.contains("instances") || !doc.at("instances").is_array()) {
    throw base::InputError::bad_field(file, "instances",
                                      doc.is_object() ? "nothing" : "not an object",
                                      "an array of instance records");
  }
  CatalogCheck out;
  const json& records = doc.at("instances");
  for (size_t i = 0; i < records.size(); ++i) {
    const json& r = records[i];
    if (!r.is_object() || !r.contains("id") || !r.at("id").is_string()) {
      throw base::InputError::bad_record_field(
          file, "record " + std::to_string(i), "id",
          r.is_object() && r.contains("id") ? r.at("id").dump() : "nothing", "a string id");
    }
    const std::string id = r.at("id").get<std::string>();
    const std::string provider = text(r, "provider");
    ++out.num_types;
    ++out.num_prices;
    const std::string own = r.contains("price_model") ? text(r, "price_model") : "on_demand";
    check_price(id, provider, own, text(r, "source"), text(r, "as_of"), "", options, *today, out);
    if (text(r, "confidence") == "unverified") {
      out.flags.push_back({id, own, "unverified", "\"confidence\": \"unverified\""});
    }
    if (const std::string p = unread_phrase(text(r, "note")); !p.empty()) {
      out.flags.push_back({id, "record", "unverified", "note says \"" + p + "\""});
    }
    if (r.contains("network") && r.at("network").is_object()) {
      if (const std::string p = unread_phrase(text(r.at("network"), "note")); !p.empty()) {
        out.flags.push_back({id, "network", "unverified", "network note says \"" + p + "\""});
      }
    }
    if (!r.contains("prices") || !r.at("prices").is_object()) continue;
    for (const auto& [model, offer] : r.at("prices").items()) {
      if (!offer.is_object()) continue;
      ++out.num_prices;
      check_price(id, provider, model, text(offer, "source"), text(offer, "as_of"), "", options,
                  *today, out);
      if (offer.contains("interruption_rate_per_hour")) {
        check_price(id, provider, model, text(offer, "interruption_source"),
                    text(offer, "interruption_as_of"), "interruption rate: ", options, *today, out);
      }
      if (const std::string p = unread_phrase(text(offer, "note")); !p.empty()) {
        out.flags.push_back({id, model, "unverified", "note says \"" + p + "\""});
      }
    }
  }
  return out;
}

}  // namespace llmcap::app
