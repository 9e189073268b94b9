#include "app/tco_json.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <set>
#include <string>

#include "base/text.h"

namespace llmcap::app {
namespace {

using nlohmann::json;

std::string money_text(double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

}  // namespace

json tco_row_to_json(const plan::TcoRow& t) {
  json prices = json::array();
  for (const plan::TcoPriceUsed& p : t.prices) {
    prices.push_back({{"instance_type", p.instance_type},
                      {"num_instances", p.num_instances},
                      {"price_model", p.offer.price_model},
                      {"usd_per_hour", p.offer.usd_per_hour},
                      {"amount_per_hour", p.offer.amount_per_hour},
                      {"currency", p.offer.currency},
                      {"source", p.offer.source},
                      {"as_of", p.offer.as_of}});
  }
  json out = {
      {"price_model", t.price_model},
      {"instance_usd_per_hour", t.instance_usd_per_hour},
      {"prices", prices},
      {"num_instances", t.num_instances},
      {"num_instances_billed", t.num_instances_billed},
      {"hours_per_day", t.hours_per_day},
      {"days_per_year", t.days_per_year},
      {"service_hours_per_year", t.service_hours_per_year},
      {"billed_hours_per_year", t.billed_hours_per_year},
      {"usd_per_hour", t.usd_per_hour},
      {"annual_usd", t.annual_usd},
      {"usd_per_day", t.autoscaled ? json(t.usd_per_day) : json(nullptr)},
      {"requests_per_hour", t.requests_per_hour},
      {"input_tokens_per_hour", t.input_tokens_per_hour},
      {"output_tokens_per_hour", t.output_tokens_per_hour},
      {"usd_per_million_input_tokens", t.usd_per_million_input_tokens},
      {"usd_per_million_output_tokens", t.usd_per_million_output_tokens},
      {"usd_per_million_tokens", t.usd_per_million_tokens},
      {"usd_per_thousand_requests", t.usd_per_thousand_requests},
      {"cost_attribution",
       "each per-token figure charges the whole cost to that token kind (docs/tco.md)"},
  };
  out["spot"] = nullptr;
  if (t.spot) {
    const plan::TcoSpot& s = t.spot_figures;
    out["spot"] = {{"interruption_rate_per_hour", s.interruption_rate_per_hour},
                   {"replacement_s", s.replacement_s},
                   {"capacity_confidence", s.capacity_confidence},
                   {"availability", s.availability},
                   {"num_spare_instances", s.num_spare_instances},
                   {"expected_instances_down", s.expected_instances_down}};
  }
  out["autoscaling"] = nullptr;
  if (t.autoscaled) {
    out["autoscaling"] = {{"hourly_multipliers", t.hourly_multipliers},
                          {"hourly_instances", t.hourly_instances},
                          {"rule", t.autoscaling_rule},
                          {"usd_per_day", t.usd_per_day}};
  }
  out["exchange_rate"] = nullptr;
  if (t.converted) {
    const plan::TcoConverted& c = t.in_currency;
    const std::string k = base::ascii_lower(c.currency);
    out["exchange_rate"] = {{"from", "USD"},
                            {"to", c.currency},
                            {"rate", c.rate},
                            {"source", c.rate_source},
                            {"as_of", c.rate_as_of}};
    out["instance_" + k + "_per_hour"] = c.instance_per_hour;
    out[k + "_per_hour"] = c.per_hour;
    out["annual_" + k] = c.per_year;
    out[k + "_per_day"] = t.autoscaled ? json(c.per_day) : json(nullptr);
    out[k + "_per_million_input_tokens"] = c.per_million_input_tokens;
    out[k + "_per_million_output_tokens"] = c.per_million_output_tokens;
    out[k + "_per_million_tokens"] = c.per_million_tokens;
    out[k + "_per_thousand_requests"] = c.per_thousand_requests;
  }
  json owned = json::array();
  for (const plan::TcoOwnedRow& o : t.owned) {
    json row = {{"field", o.field},
                {"hardware", o.hardware},
                {"name", o.name},
                {"num_servers", o.num_servers},
                {"purchase_usd", o.purchase_usd},
                {"power_watts", o.power_watts},
                {"years", o.years},
                {"utilisation", o.utilisation},
                {"pue", o.pue},
                {"usd_per_kwh", o.usd_per_kwh},
                {"capex_usd_per_hour", o.capex_usd_per_hour},
                {"power_usd_per_hour", o.power_usd_per_hour},
                {"usd_per_hour", o.usd_per_hour},
                {"annual_usd", o.annual_usd},
                {"usd_per_million_output_tokens", o.usd_per_million_output_tokens},
                {"usd_per_thousand_requests", o.usd_per_thousand_requests},
                {"source", o.source},
                {"as_of", o.as_of}};
    if (t.converted) {
      const std::string k = base::ascii_lower(t.in_currency.currency);
      row[k + "_per_hour"] = o.usd_per_hour * t.in_currency.rate;
      row["annual_" + k] = o.annual_usd * t.in_currency.rate;
    }
    owned.push_back(std::move(row));
  }
  out["owned"] = std::move(owned);
  out["notes"] = t.notes;
  return out;
}

json tco_settings_to_json(const plan::ResolvedTco& r) {
  const plan::TcoSpec& s = r.spec;
  json owned = json::array();
  for (const plan::OwnedSpec& o : s.owned) {
    owned.push_back({{"field", o.field},
                     {"hardware", o.hardware},
                     {"years", o.years},
                     {"utilisation", o.utilisation},
                     {"pue", o.pue},
                     {"usd_per_kwh", o.usd_per_kwh}});
  }
  json rate = nullptr;
  if (s.currency != "USD") {
    rate = {{"from", "USD"},
            {"to", r.exchange_rate.to},
            {"rate", r.exchange_rate.rate},
            {"source", r.exchange_rate.source},
            {"as_of", r.exchange_rate.as_of}};
  }
  json not_offered = json::array();
  for (const plan::PriceModelNotOffered& n : r.not_offered) {
    not_offered.push_back({{"instance_type", n.instance_type}, {"offers", n.offered}});
  }
  return {
      {"price_model_not_offered", not_offered},
      {"price_model", s.price_model_given ? json(s.price_model) : json("catalog default")},
      {"price_model_given", s.price_model_given},
      {"hours_per_day", r.hours_per_day},
      {"days_per_year", r.days_per_year},
      {"service_hours_per_year", r.service_hours_per_year},
      {"currency", s.currency},
      {"exchange_rate", rate},
      {"autoscaling",
       {{"enabled", s.autoscaling.enabled},
        {"min_instances", s.autoscaling.min_instances},
        {"hourly_multipliers", r.hourly_multipliers},
        {"multipliers_origin", r.multipliers_origin}}},
      {"spot",
       {{"replacement_s", s.spot.replacement_s},
        {"capacity_confidence", s.spot.capacity_confidence},
        {"replacement_source", r.spot_replacement_source},
        {"replacement_as_of", r.spot_replacement_as_of}}},
      {"owned", owned},
  };
}

json price_sources_to_json(const std::vector<plan::TcoRow>& rows) {
  json out = json::array();
  std::set<std::string> seen;
  auto add = [&](const std::string& kind, const std::string& id, const std::string& name,
                 const std::string& figures, const std::string& source, const std::string& as_of) {
    if (!seen.insert(kind + "/" + id).second) return;
    out.push_back({{"kind", kind},
                   {"id", id},
                   {"name", name},
                   {"figures", figures},
                   {"source", source},
                   {"as_of", as_of}});
  };
  for (const plan::TcoRow& t : rows) {
    for (const plan::TcoPriceUsed& p : t.prices) {
      const model::PriceOffer& o = p.offer;
      std::string figures = "USD " + money_text(o.usd_per_hour) + "/hour";
      if (o.currency != "USD") {
        figures += " (" + o.currency + " " + money_text(o.amount_per_hour) + "/hour)";
      }
      add("instance", p.instance_type + ":" + o.price_model,
          p.instance_type + " " + o.price_model + " price", figures, o.source, o.as_of);
      if (o.price_model == "spot") {
        add("instance", p.instance_type + ":spot_interruption_rate",
            p.instance_type + " spot interruption rate",
            money_text(o.interruption_rate_per_hour) + " per instance-hour", o.interruption_source,
            o.interruption_as_of);
      }
    }
    if (t.converted) {
      const plan::TcoConverted& c = t.in_currency;
      add("exchange_rate", "USD-" + c.currency, "USD to " + c.currency,
          "1 USD = " + money_text(c.rate) + " " + c.currency, c.rate_source, c.rate_as_of);
    }
    for (const plan::TcoOwnedRow& o : t.owned) {
      add("owned_hardware", o.hardware, o.name,
          "purchase USD " + money_text(o.purchase_usd) + ", " + money_text(o.power_watts) +
              " W at TDP",
          o.source, o.as_of);
    }
  }
  return out;
}

}  // namespace llmcap::app
