#include "plan/tco.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/json_reader.h"
#include "plan/candidates.h"
#include "plan/scenario.h"
#include "plan/spec_parsers.h"

namespace llmcap::plan {
namespace {

using nlohmann::json;

constexpr double kHoursPerYearOfTerm = 8760;  // 365 days x 24 h: a reservation's billed hours
constexpr double kMaxDaysPerYear = 366;
/// Slack for ceil() of quotients that are integers up to rounding (e.g. 3 x 0.5 / 0.5).
constexpr double kCeilSlack = 1e-9;

std::string quote_text(const std::string& s) { return "\"" + s + "\""; }

std::string number_text(double v) {
  json j = v;
  return j.dump();
}

/// Reads one object of the "tco" section; messages name the file and "tco.<key>". A null
/// field counts as absent.
using TcoFields = base::JsonReader;

base::JsonReaderStyle tco_style() {
  base::JsonReaderStyle style;
  style.null_is_missing = true;
  return style;
}

std::vector<double> read_multipliers(const TcoFields& f, const std::string& key) {
  const json& v = f.at(key);
  if (!v.is_array() || v.size() != 24) {
    f.fail(key, "a list of 24 hourly multipliers (hours 00-01 to 23-24)", v.dump());
  }
  std::vector<double> out;
  double sum = 0;
  for (size_t h = 0; h < 24; ++h) {
    const json& m = v[h];
    if (!m.is_number() || !std::isfinite(m.get<double>()) || m.get<double>() < 0) {
      f.fail(key + "[" + std::to_string(h) + "]", "a non-negative number", m.dump());
    }
    out.push_back(m.get<double>());
    sum += out.back();
  }
  if (!(sum > 0)) f.fail(key, "at least one positive multiplier", "all 0");
  return out;
}

std::string price_model_list() {
  std::string out;
  for (const std::string& n : model::price_model_names()) {
    out += (out.empty() ? "" : ", ") + quote_text(n);
  }
  return out;
}

bool is_reservation(const std::string& price_model) {
  return price_model == "reserved_1y" || price_model == "reserved_3y";
}

double mean_of(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return v.empty() ? 0.0 : s / static_cast<double>(v.size());
}

double max_of(const std::vector<double>& v) {
  double m = 0;
  for (double x : v) m = std::max(m, x);
  return m;
}

int64_t ceil_count(double x) {
  return x <= 0 ? 0 : static_cast<int64_t>(std::ceil(x - kCeilSlack));
}

/// The instance types the scenario may cost: its fleet's groups, its candidates, or all (of
/// the candidate kind, when set).
std::vector<std::string> costed_types(const Scenario& sc, const model::Catalog& catalog) {
  std::vector<std::string> ids;
  if (sc.fleet) {
    for (const FleetGroupSpec& g : sc.fleet->groups) ids.push_back(g.instance);
  } else {
    for (const model::InstanceType* i : resolve_candidates(sc, catalog)) ids.push_back(i->id);
  }
  return ids;
}

std::string currency_list(const model::Catalog& catalog) {
  std::string out = "\"USD\"";
  for (const model::ExchangeRate& r : catalog.exchange_rates()) out += ", " + quote_text(r.to);
  return out;
}

}  // namespace

TcoSpec parse_tco_spec(const nlohmann::json& root, const std::filesystem::path& path) {
  TcoSpec spec;
  const std::string file = path.string();
  if (!root.is_object() || !root.contains("tco") || root.at("tco").is_null()) return spec;
  if (!root.at("tco").is_object()) {
    throw InputError::bad_field(file, "tco", root.at("tco").dump(), "an object");
  }
  const TcoFields t(root.at("tco"), file, "tco", tco_style());
  t.only({"price_model", "hours_per_day", "autoscaling", "spot", "currency", "owned"});

  if (t.has("price_model")) {
    spec.price_model = t.non_empty_string("price_model");
    const auto& names = model::price_model_names();
    if (std::find(names.begin(), names.end(), spec.price_model) == names.end()) {
      t.fail("price_model", "one of " + price_model_list(), t.at("price_model").dump());
    }
    spec.price_model_given = true;
  }
  if (t.has("hours_per_day")) {
    spec.hours_per_day = t.number(
        "hours_per_day", [](double v) { return v > 0 && v <= 24; }, "a number in (0, 24]");
    const bool year_given = root.contains("hours_per_year") &&
                            root.at("hours_per_year").is_number() &&
                            root.at("hours_per_year").get<double>() > 0;
    if (year_given) {
      const double hours_per_year = root.at("hours_per_year").get<double>();
      spec.days_per_year = hours_per_year / spec.hours_per_day;
      if (spec.days_per_year > kMaxDaysPerYear) {
        t.fail("hours_per_day",
               "hours_per_year / hours_per_day <= 366 days in service (hours_per_year " +
                   number_text(hours_per_year) + " gives " + number_text(spec.days_per_year) +
                   " days)",
               t.at("hours_per_day").dump());
      }
    } else {
      spec.days_per_year = 365;
    }
  }
  if (t.has("autoscaling")) {
    const TcoFields a = t.object("autoscaling");
    a.only({"enabled", "min_instances", "hourly_multipliers"});
    spec.autoscaling.enabled = a.has("enabled") ? a.boolean("enabled") : true;
    if (a.has("min_instances"))
      spec.autoscaling.min_instances = a.non_negative_int("min_instances");
    if (a.has("hourly_multipliers")) {
      spec.autoscaling.hourly_multipliers = read_multipliers(a, "hourly_multipliers");
    }
    if (spec.autoscaling.enabled && spec.hours_per_day < 24) {
      t.fail("hours_per_day",
             "24 with autoscaling (give hours out of service a multiplier of 0 and "
             "min_instances 0 instead)",
             t.at("hours_per_day").dump());
    }
  }
  if (t.has("spot")) {
    const TcoFields s = t.object("spot");
    s.only({"replacement_s", "capacity_confidence"});
    if (s.has("replacement_s")) {
      spec.spot.replacement_s = s.number(
          "replacement_s", [](double v) { return v > 0 && v <= 86400; }, "seconds in (0, 86400]");
    }
    if (s.has("capacity_confidence")) {
      spec.spot.capacity_confidence = s.number(
          "capacity_confidence", [](double v) { return v > 0 && v < 1; },
          "a probability in (0, 1)");
    }
  }
  if (t.has("currency")) {
    spec.currency = t.non_empty_string("currency");
    const bool code =
        spec.currency.size() == 3 && std::all_of(spec.currency.begin(), spec.currency.end(),
                                                 [](char c) { return c >= 'A' && c <= 'Z'; });
    if (!code)
      t.fail("currency", "an ISO 4217 code such as \"USD\" or \"CNY\"", t.at("currency").dump());
  }
  if (t.has("owned")) {
    const json& list = t.at("owned");
    if (!list.is_array() || list.empty()) {
      t.fail("owned", "a non-empty list of owned-hardware alternatives", list.dump());
    }
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string key = "owned[" + std::to_string(i) + "]";
      if (!list[i].is_object()) t.fail(key, "an object", list[i].dump());
      const TcoFields o(list[i], file, "tco." + key, tco_style());
      o.only({"hardware", "years", "utilisation", "pue", "usd_per_kwh"});
      OwnedSpec os;
      os.field = "tco." + key;
      for (const char* required : {"hardware", "years", "utilisation"}) {
        if (!o.has(required)) o.fail(required, "a value (required)", "nothing (field missing)");
      }
      os.hardware = o.non_empty_string("hardware");
      os.years = o.number(
          "years", [](double v) { return v > 0 && v <= 100; }, "years in (0, 100]");
      os.utilisation = o.number(
          "utilisation", [](double v) { return v > 0 && v <= 1; }, "a fraction of TDP in (0, 1]");
      if (o.has("pue")) {
        os.pue = o.number(
            "pue", [](double v) { return v >= 1 && v <= 10; }, "a PUE in [1, 10]");
      }
      if (o.has("usd_per_kwh")) {
        os.usd_per_kwh = o.number(
            "usd_per_kwh", [](double v) { return v > 0 && v <= 100; }, "USD in (0, 100]");
      }
      spec.owned.push_back(std::move(os));
    }
  }
  return spec;
}

ResolvedTco resolve_tco(const Scenario& sc, const model::Catalog& catalog) {
  const std::string file = sc.file.string();
  auto fail = [&file](const std::string& field, const std::string& expected,
                      const std::string& got) {
    throw InputError::bad_field(file, field, got, expected);
  };
  ResolvedTco r;
  r.spec = sc.tco;
  const TcoSpec& spec = sc.tco;
  r.hours_per_day = spec.hours_per_day;
  r.days_per_year =
      spec.days_per_year > 0 ? spec.days_per_year : sc.hours_per_year / spec.hours_per_day;
  if (!(r.hours_per_day > 0 && r.hours_per_day <= 24)) {
    fail("tco.hours_per_day", "a number in (0, 24]", number_text(r.hours_per_day));
  }
  if (!(r.days_per_year > 0) || r.days_per_year > kMaxDaysPerYear) {
    fail("hours_per_year",
         "at most 366 days of tco.hours_per_day (" + number_text(r.hours_per_day) + " h)",
         number_text(sc.hours_per_year));
  }
  r.service_hours_per_year = r.hours_per_day * r.days_per_year;

  const bool profile = sc.workload.load_profile.size() == 24 && sc.workload.classes.empty();
  r.workload_multipliers = profile ? sc.workload.load_profile : std::vector<double>(24, 1.0);
  if (!spec.autoscaling.hourly_multipliers.empty()) {
    r.hourly_multipliers = spec.autoscaling.hourly_multipliers;
    r.multipliers_origin = "tco.autoscaling";
  } else {
    r.hourly_multipliers = r.workload_multipliers;
    r.multipliers_origin = profile ? "workload.load_profile" : "flat";
  }
  if (spec.autoscaling.enabled && sc.fleet) {
    fail("tco.autoscaling", "no autoscaling with a given fleet (its sizes are fixed)",
         "\"enabled\": true");
  }

  if (spec.price_model_given) {
    size_t num_known = 0;
    for (const std::string& id : costed_types(sc, catalog)) {
      const model::InstanceType* inst = catalog.find_instance(id);
      if (inst == nullptr) continue;  // the planner names unknown ids itself
      ++num_known;
      if (inst->find_price(spec.price_model) == nullptr) {
        r.not_offered.push_back({id, inst->offered_price_models()});
      }
    }
    if (num_known > 0 && r.not_offered.size() == num_known) {
      // Types grouped by what they offer, at most 5 named per group.
      std::vector<std::pair<std::string, std::vector<std::string>>> groups;
      for (const PriceModelNotOffered& n : r.not_offered) {
        auto it = std::find_if(groups.begin(), groups.end(),
                               [&](const auto& g) { return g.first == n.offered; });
        if (it == groups.end()) it = groups.insert(groups.end(), {n.offered, {}});
        it->second.push_back(n.instance_type);
      }
      constexpr size_t kNamed = 5;
      std::string list;
      for (const auto& [offered, ids] : groups) {
        std::string names;
        for (size_t i = 0; i < ids.size() && i < kNamed; ++i) {
          names += (i == 0 ? "" : ", ") + quote_text(ids[i]);
        }
        if (ids.size() > kNamed) names += " and " + std::to_string(ids.size() - kNamed) + " more";
        list += (list.empty() ? "" : "; ") + names + (ids.size() == 1 ? " offers " : " offer ") +
                offered;
      }
      throw InputError::refused_field(
          file, "tco.price_model",
          "no instance type the scenario costs offers a " + quote_text(spec.price_model) +
              " price in instances/instances.json: " + list +
              "; give your quotes in price_overrides or import a price list (llmcap catalog "
              "import, docs/catalog.md)");
    }
  }

  if (spec.currency != "USD") {
    const model::ExchangeRate* rate = catalog.find_exchange_rate(spec.currency);
    if (rate == nullptr) {
      fail("tco.currency",
           "\"USD\" or a currency with a rate in tco/exchange_rates.json (one of " +
               currency_list(catalog) + ")",
           quote_text(spec.currency));
    }
    r.exchange_rate = *rate;
  } else {
    r.exchange_rate.to = "USD";
  }

  const model::TcoDefaults& defaults = catalog.tco_defaults();
  for (OwnedSpec& o : r.spec.owned) {
    const model::OwnedHardware* hw = catalog.find_owned_hardware(o.hardware);
    if (hw == nullptr) {
      std::string known;
      for (const model::OwnedHardware& h : catalog.owned_hardware()) {
        known += (known.empty() ? "" : ", ") + h.id;
      }
      fail(o.field + ".hardware",
           "an id of tco/owned_hardware.json (known: " + (known.empty() ? "none" : known) + ")",
           quote_text(o.hardware));
    }
    if (o.pue == 0) {
      if (!(defaults.pue.value > 0)) {
        fail(o.field + ".pue", "a value (the catalog has no tco/defaults.json \"pue\")",
             "nothing (field missing)");
      }
      o.pue = defaults.pue.value;
    }
    if (o.usd_per_kwh == 0) {
      if (!(defaults.usd_per_kwh.value > 0)) {
        fail(o.field + ".usd_per_kwh",
             "a value (the catalog has no tco/defaults.json \"usd_per_kwh\")",
             "nothing (field missing)");
      }
      o.usd_per_kwh = defaults.usd_per_kwh.value;
    }
  }
  if (r.spec.spot.replacement_s == 0) {
    r.spec.spot.replacement_s = defaults.spot_replacement_s.value;
    r.spot_replacement_source = defaults.spot_replacement_s.source;
    r.spot_replacement_as_of = defaults.spot_replacement_s.as_of;
    if (spec.price_model_given && spec.price_model == "spot" && !(r.spec.spot.replacement_s > 0)) {
      fail("tco.spot.replacement_s",
           "a value (the catalog has no tco/defaults.json \"spot_replacement_s\")",
           "nothing (field missing)");
    }
  }
  return r;
}

int64_t spot_spare_instances(int64_t n, double rate_per_hour, double replacement_s,
                             double confidence) {
  if (n <= 0 || !(rate_per_hour > 0) || !(replacement_s > 0)) return 0;
  const double down_h = rate_per_hour * replacement_s / 3600.0;
  const double p = down_h / (1.0 + down_h);
  constexpr int64_t kMaxSpares = 1000000;
  for (int64_t s = 0; s < kMaxSpares; ++s) {
    const int64_t m = n + s;
    // P(X <= s), X ~ Binomial(m, p), by the pmf recurrence (no lgamma: thread-safe, exact
    // enough for the fleet sizes planned).
    double pmf = std::pow(1.0 - p, static_cast<double>(m));
    double cdf = pmf;
    for (int64_t k = 0; k < s; ++k) {
      pmf *= static_cast<double>(m - k) / static_cast<double>(k + 1) * p / (1.0 - p);
      cdf += pmf;
    }
    if (1.0 - cdf <= 1.0 - confidence) return s;
  }
  return kMaxSpares;
}

namespace {

/// A quantity's cost per `unit` of it (0 when there is none).
double per(double usd, double quantity, double unit) {
  return quantity > 0 ? usd / quantity * unit : 0.0;
}

/// Spare spot instances kept so that `n` stay up (0 for other price models).
int64_t spares_of(int64_t n, const model::PriceOffer& o, const TcoSpec& spec) {
  return o.price_model == "spot"
             ? spot_spare_instances(n, o.interruption_rate_per_hour, spec.spot.replacement_s,
                                    spec.spot.capacity_confidence)
             : int64_t{0};
}

/// compute_tco with autoscaling: the instances of each hour, what is billed, and the requests
/// served per year (`requests_per_year`).
void autoscale(TcoRow& t, const ResolvedTco& r, const PlanRow& row, double requests_per_s,
               double sustainable_requests_per_s, double& requests_per_year) {
  const TcoSpec& spec = r.spec;
  auto spares = [&](int64_t n, const model::PriceOffer& o) { return spares_of(n, o, spec); };
  // One instance type (resolve_tco refuses autoscaling with a given fleet).
  const TcoPriceUsed& p = t.prices.front();
  const std::vector<double>& a = r.hourly_multipliers;
  const std::vector<double>& w = r.workload_multipliers;
  const int64_t min_n = spec.autoscaling.min_instances;
  t.autoscaled = true;
  t.hourly_multipliers = a;
  const double w_mean = mean_of(w);
  const double w_max = max_of(w);
  const bool by_rate = sustainable_requests_per_s > 0 && requests_per_s > 0;
  double requests_per_day = 0;
  for (size_t h = 0; h < 24; ++h) {
    const double rate_h = requests_per_s * a[h] / w_mean;
    requests_per_day += rate_h * 3600.0;
    const int64_t need = by_rate
                             ? ceil_count(rate_h / sustainable_requests_per_s)
                             : ceil_count(static_cast<double>(row.num_instances) * a[h] / w_max);
    t.hourly_instances.push_back(std::max(min_n, need));
  }
  requests_per_year = requests_per_day * r.days_per_year;
  t.autoscaling_rule =
      by_rate ? "instances(h) = max(min_instances, ceil(rate(h) / " +
                    number_text(sustainable_requests_per_s) +
                    " requests/s per instance)), rate(h) = mean rate x multiplier(h) / mean "
                    "workload multiplier"
              : "instances(h) = max(min_instances, ceil(planned instances x multiplier(h) / "
                "peak workload multiplier)) (sustainable rate per instance unknown)";
  if (!by_rate && max_of(a) > w_max) {
    t.notes.push_back("autoscaling multipliers exceed the simulated workload's peak (" +
                      number_text(w_max) +
                      "): instances scaled linearly beyond what was simulated");
  }
  int64_t peak_billed = 0;
  double billed_instance_hours_per_day = 0;
  for (int64_t n : t.hourly_instances) {
    const int64_t billed = n + spares(n, p.offer);
    peak_billed = std::max(peak_billed, billed);
    billed_instance_hours_per_day += static_cast<double>(billed);
    if (p.offer.price_model == "spot") {
      t.spot_figures.num_spare_instances = std::max(t.spot_figures.num_spare_instances, billed - n);
    }
  }
  t.num_instances_billed = peak_billed;
  if (is_reservation(p.offer.price_model)) {
    // A reservation is paid every hour of its term: the busiest hour's count, all day.
    t.usd_per_day = static_cast<double>(peak_billed) * p.offer.usd_per_hour * 24.0;
    t.annual_usd = static_cast<double>(peak_billed) * p.offer.usd_per_hour * kHoursPerYearOfTerm;
    t.billed_hours_per_year = kHoursPerYearOfTerm;
    t.notes.push_back(
        "reserved instances are paid every hour of the term: autoscaling saves "
        "nothing on them; the busiest hour's count is reserved");
  } else {
    t.usd_per_day = billed_instance_hours_per_day * p.offer.usd_per_hour;
    t.annual_usd = t.usd_per_day * r.days_per_year;
    t.billed_hours_per_year = r.service_hours_per_year;
  }
}

/// The owned alternatives to `row`'s instance type (TcoOwnedRow per matching tco.owned entry).
void add_owned(TcoRow& t, const PlanRow& row, const ResolvedTco& r, const model::Catalog& catalog,
               double output_per_year, double requests_per_year) {
  const TcoSpec& spec = r.spec;
  const double per_year_hours = r.service_hours_per_year;
  for (const OwnedSpec& o : spec.owned) {
    const model::OwnedHardware* hw = catalog.find_owned_hardware(o.hardware);
    if (hw == nullptr || hw->equivalent_instance != row.instance_type) continue;
    TcoOwnedRow w;
    w.field = o.field;
    w.hardware = hw->id;
    w.name = hw->name;
    w.source = hw->source;
    w.as_of = hw->as_of;
    w.purchase_usd = hw->purchase_usd;
    w.power_watts = hw->power_watts;
    w.years = o.years;
    w.utilisation = o.utilisation;
    w.pue = o.pue;
    w.usd_per_kwh = o.usd_per_kwh;
    const double usd_per_server_hour_powered =
        hw->power_watts / 1000.0 * o.utilisation * o.pue * o.usd_per_kwh;
    double powered_server_hours_per_year = 0;
    if (t.autoscaled) {
      int64_t peak = 0;
      double per_day = 0;
      for (int64_t n : t.hourly_instances) {
        peak = std::max(peak, n);
        per_day += static_cast<double>(n);
      }
      w.num_servers = peak;
      powered_server_hours_per_year = per_day * r.days_per_year;
    } else {
      w.num_servers = row.num_instances;
      powered_server_hours_per_year = static_cast<double>(w.num_servers) * per_year_hours;
    }
    const double capex_per_year = static_cast<double>(w.num_servers) * hw->purchase_usd / o.years;
    const double power_per_year = powered_server_hours_per_year * usd_per_server_hour_powered;
    w.annual_usd = capex_per_year + power_per_year;
    w.capex_usd_per_hour = capex_per_year / per_year_hours;
    w.power_usd_per_hour = power_per_year / per_year_hours;
    w.usd_per_hour = w.capex_usd_per_hour + w.power_usd_per_hour;
    w.usd_per_million_output_tokens = per(w.annual_usd, output_per_year, 1e6);
    w.usd_per_thousand_requests = per(w.annual_usd, requests_per_year, 1e3);
    t.owned.push_back(std::move(w));
  }
}

/// The row's figures in the scenario's currency (tco.currency).
void convert(TcoRow& t, const ResolvedTco& r) {
  TcoConverted& c = t.in_currency;
  t.converted = true;
  c.currency = r.spec.currency;
  c.rate = r.exchange_rate.rate;
  c.rate_source = r.exchange_rate.source;
  c.rate_as_of = r.exchange_rate.as_of;
  c.per_hour = t.usd_per_hour * c.rate;
  c.per_year = t.annual_usd * c.rate;
  c.per_day = t.usd_per_day * c.rate;
  c.per_million_input_tokens = t.usd_per_million_input_tokens * c.rate;
  c.per_million_output_tokens = t.usd_per_million_output_tokens * c.rate;
  c.per_million_tokens = t.usd_per_million_tokens * c.rate;
  c.per_thousand_requests = t.usd_per_thousand_requests * c.rate;
  c.instance_per_hour = t.instance_usd_per_hour * c.rate;
}

}  // namespace

std::string price_model_not_offered(const PlanRow& row, const Scenario& sc,
                                    const model::Catalog& catalog) {
  if (!sc.tco.price_model_given) return "";
  std::vector<std::string> ids;
  if (!row.groups.empty()) {
    for (const GroupRow& g : row.groups) ids.push_back(g.instance_type);
  } else {
    ids.push_back(row.instance_type);
  }
  std::string out;
  for (const std::string& id : ids) {
    const model::InstanceType* inst = catalog.find_instance(id);
    if (inst == nullptr || inst->find_price(sc.tco.price_model) != nullptr) continue;
    out += (out.empty() ? "" : "; ") + quote_text(id) + " offers no " +
           quote_text(sc.tco.price_model) + " price (it offers: " + inst->offered_price_models() +
           ")";
  }
  return out;
}

TcoRow compute_tco(const PlanRow& row, const Scenario& sc, const model::Catalog& catalog,
                   const WorkloadSummary& workload, double sustainable_requests_per_s) {
  const std::string file = sc.file.string();
  if (row.num_instances < 1) {
    throw InputError(file + ": TCO of " + quote_text(row.instance_type) +
                     ": expected a fleet of at least 1 instance, got " +
                     std::to_string(row.num_instances));
  }
  const ResolvedTco r = resolve_tco(sc, catalog);
  const TcoSpec& spec = r.spec;
  TcoRow t;
  t.hours_per_day = r.hours_per_day;
  t.days_per_year = r.days_per_year;
  t.service_hours_per_year = r.service_hours_per_year;
  t.num_instances = row.num_instances;

  // The fleet's instance types and counts.
  std::vector<std::pair<std::string, int64_t>> groups;
  if (!row.groups.empty()) {
    for (const GroupRow& g : row.groups) groups.emplace_back(g.instance_type, g.num_instances);
  } else {
    groups.emplace_back(row.instance_type, row.num_instances);
  }
  std::vector<std::string> models;
  for (const auto& [id, count] : groups) {
    const model::InstanceType& inst = catalog.instance(id, file + ": TCO");
    const model::PriceOffer* offer =
        spec.price_model_given ? inst.find_price(spec.price_model) : &inst.prices.front();
    if (offer == nullptr) {  // callers skip such rows (price_model_not_offered)
      throw InputError::refused_field(
          file, "tco.price_model",
          "instance \"" + id + "\" offers no " + quote_text(spec.price_model) +
              " price in instances/instances.json; it offers: " + inst.offered_price_models());
    }
    if (std::find(models.begin(), models.end(), offer->price_model) == models.end()) {
      models.push_back(offer->price_model);
    }
    t.prices.push_back({id, count, *offer});
  }
  for (const std::string& m : models) t.price_model += (t.price_model.empty() ? "" : "+") + m;
  t.spot = models.size() == 1 && models.front() == "spot";

  // Requests and tokens: the simulated mean rate (docs/tco.md#per-token-costs).
  const double requests_per_s = workload.num_requests > 0 && workload.span_s > 0
                                    ? static_cast<double>(workload.num_requests) / workload.span_s
                                    : row.metrics.throughput_requests_per_s;
  double requests_per_year = requests_per_s * 3600.0 * r.service_hours_per_year;

  const double replacement_s = spec.spot.replacement_s;
  auto spares = [&](int64_t n, const model::PriceOffer& o) { return spares_of(n, o, spec); };

  double fleet_usd_per_hour_listed = 0;  // sum of count x unit price
  if (!spec.autoscaling.enabled) {
    for (const TcoPriceUsed& p : t.prices) {
      const int64_t billed = p.num_instances + spares(p.num_instances, p.offer);
      const double hours =
          is_reservation(p.offer.price_model) ? kHoursPerYearOfTerm : r.service_hours_per_year;
      t.annual_usd += static_cast<double>(billed) * p.offer.usd_per_hour * hours;
      t.num_instances_billed += billed;
      fleet_usd_per_hour_listed += static_cast<double>(p.num_instances) * p.offer.usd_per_hour;
      if (p.offer.price_model == "spot")
        t.spot_figures.num_spare_instances += billed - p.num_instances;
    }
    // Mixed reservations and hourly prices cannot happen (one price model per scenario), so
    // billed hours are the reservation's 8760 or the service hours.
    t.billed_hours_per_year =
        is_reservation(models.front()) ? kHoursPerYearOfTerm : r.service_hours_per_year;
  } else {
    autoscale(t, r, row, requests_per_s, sustainable_requests_per_s, requests_per_year);
    fleet_usd_per_hour_listed =
        static_cast<double>(row.num_instances) * t.prices.front().offer.usd_per_hour;
  }
  t.instance_usd_per_hour = fleet_usd_per_hour_listed / static_cast<double>(row.num_instances);
  t.usd_per_hour = t.annual_usd / r.service_hours_per_year;

  if (t.spot) {
    const model::PriceOffer& o = t.prices.front().offer;
    TcoSpot& s = t.spot_figures;
    s.interruption_rate_per_hour = o.interruption_rate_per_hour;
    s.replacement_s = replacement_s;
    s.capacity_confidence = spec.spot.capacity_confidence;
    s.availability = 1.0 / (1.0 + o.interruption_rate_per_hour * replacement_s / 3600.0);
    s.expected_instances_down =
        static_cast<double>(t.num_instances_billed) * (1.0 - s.availability);
  }

  const double per_year_hours = r.service_hours_per_year;
  t.requests_per_hour = requests_per_year / per_year_hours;
  t.input_tokens_per_hour = t.requests_per_hour * workload.mean_prompt_tokens;
  t.output_tokens_per_hour = t.requests_per_hour * workload.mean_output_tokens;
  const double input_per_year = requests_per_year * workload.mean_prompt_tokens;
  const double output_per_year = requests_per_year * workload.mean_output_tokens;
  t.usd_per_million_input_tokens = per(t.annual_usd, input_per_year, 1e6);
  t.usd_per_million_output_tokens = per(t.annual_usd, output_per_year, 1e6);
  t.usd_per_million_tokens = per(t.annual_usd, input_per_year + output_per_year, 1e6);
  t.usd_per_thousand_requests = per(t.annual_usd, requests_per_year, 1e3);

  // Owned alternatives for this instance type.
  if (row.groups.empty()) add_owned(t, row, r, catalog, output_per_year, requests_per_year);

  if (spec.currency != "USD") convert(t, r);
  return t;
}

}  // namespace llmcap::plan
