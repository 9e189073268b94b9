#include "model/hardware.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>

#include "base/json_reader.h"
#include "model/engine_profile.h"
#include "model/input_error.h"

namespace llmcap::model {
namespace {

using nlohmann::json;

/// Reads the fields of one catalog record: base::JsonReader in the catalog style (a null field
/// is absent, an absent required field reads "expected ..., got nothing (field missing)",
/// integers may be written 4.0); every error names file, record and field. Its strings are
/// non-empty.
class RecordReader : public base::JsonReader {
 public:
  /// `record` is e.g. `instance "aws-x"` or `record 3` (before the id is known).
  RecordReader(const json& rec, std::string file, std::string record)
      : base::JsonReader(rec, std::move(file), "", catalog_style(), std::move(record)) {}

  /// The object `field` read by a reader whose messages name "field.<key>".
  RecordReader nested(const std::string& field) const { return RecordReader(object(field)); }

  std::string string(const std::string& field) const { return non_empty_string(field); }
  std::string string_or(const std::string& field, const std::string& fallback) const {
    return non_empty_string_or(field, fallback);
  }

  /// The object's keys, in the order nlohmann::json keeps them (sorted).
  std::vector<std::string> keys() const {
    std::vector<std::string> out;
    for (const auto& [key, value] : raw().items()) out.push_back(key);
    return out;
  }

  /// An object of positive numbers, e.g. "peak_flops_per_s": {"bf16": 9.89e14}.
  std::map<std::string, double> positive_number_map(const std::string& field) const {
    const std::string expected = "an object of positive numbers by dtype, e.g. {\"bf16\": 1e15}";
    if (!has(field) || !at(field).is_object() || at(field).empty()) {
      fail(field, expected, got(field));
    }
    std::map<std::string, double> out;
    for (const auto& [key, value] : at(field).items()) {
      if (!value.is_number() || !(value.get<double>() > 0) || !std::isfinite(value.get<double>())) {
        fail(field + "." + key, "a positive number", value.dump());
      }
      out[key] = value.get<double>();
    }
    return out;
  }

 private:
  explicit RecordReader(base::JsonReader reader) : base::JsonReader(std::move(reader)) {}

  static base::JsonReaderStyle catalog_style() {
    base::JsonReaderStyle style;
    style.null_is_missing = true;
    style.missing_names_expected = true;
    style.whole_floats = true;
    return style;
  }
};

/// A link figure with its own provenance: {"bandwidth_bytes_per_s", "latency_s", "source",
/// "as_of"} (plus optional text fields the caller reads).
struct LinkFigures {
  double bandwidth_bytes_per_s = 0;
  double latency_s = 0;
  std::string source;
  std::string as_of;
};

LinkFigures read_link(const RecordReader& r) {
  LinkFigures l;
  l.bandwidth_bytes_per_s = r.positive_number("bandwidth_bytes_per_s");
  l.latency_s = r.non_negative_number("latency_s");
  l.source = r.string("source");
  l.as_of = r.string("as_of");
  return l;
}

/// The array under `key` of a catalog file such as {"cpus": [...]}.
const json& record_array(const json& doc, const std::string& file, const std::string& key) {
  if (!doc.is_object() || !doc.contains(key) || !doc.at(key).is_array()) {
    const std::string got = !doc.is_object()     ? doc.dump().substr(0, 40)
                            : !doc.contains(key) ? std::string("nothing (field missing)")
                                                 : doc.at(key).dump().substr(0, 40);
    throw InputError::bad_field(file, key, got, "an array of records");
  }
  return doc.at(key);
}

/// Checks the record is an object and reads its id; `kind` is "cpu", "gpu" or "instance".
std::string record_id(const json& rec, const std::string& file, const std::string& kind,
                      std::size_t index) {
  const std::string record = kind + " record " + std::to_string(index);
  if (!rec.is_object()) {
    throw InputError(file + ": " + record + ": expected a JSON object, got " +
                     rec.dump().substr(0, 40));
  }
  return RecordReader(rec, file, record).string("id");
}

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

template <typename Record>
std::string known_ids(const std::vector<Record>& records) {
  std::string out;
  for (const Record& r : records) {
    if (!out.empty()) out += ", ";
    out += r.id;
  }
  return out.empty() ? std::string("(none)") : out;
}

bool is_price_model(const std::string& name) {
  const auto& names = price_model_names();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string price_model_list() {
  std::string out;
  for (const std::string& n : price_model_names()) out += (out.empty() ? "" : ", ") + quoted(n);
  return out;
}

std::string currency_list(const std::vector<ExchangeRate>& rates) {
  std::string out = "\"USD\"";
  for (const ExchangeRate& r : rates) out += ", " + quoted(r.to);
  return out;
}

/// A money amount read as "<usd_field>" (USD) or "<amount_field>" with "currency" (converted to
/// USD at the catalog's dated rate). Returns {usd, amount, currency}.
struct Money {
  double usd = 0;
  double amount = 0;
  std::string currency = "USD";
};

Money read_money(const RecordReader& r, const std::string& usd_field,
                 const std::string& amount_field, const std::vector<ExchangeRate>& rates) {
  Money m;
  if (r.has(usd_field)) {
    if (r.has(amount_field)) {
      r.fail(amount_field, "no \"" + amount_field + "\" beside \"" + usd_field + "\"",
             r.got(amount_field));
    }
    if (r.has("currency") && r.string("currency") != "USD") {
      r.fail("currency", "\"USD\" (or none) with \"" + usd_field + "\"", r.got("currency"));
    }
    m.usd = r.positive_number(usd_field);
    m.amount = m.usd;
    return m;
  }
  if (!r.has(amount_field)) {
    r.fail(usd_field, "a positive number (or \"" + amount_field + "\" with \"currency\")",
           r.got(usd_field));
  }
  m.amount = r.positive_number(amount_field);
  if (!r.has("currency")) {
    r.fail("currency",
           "a currency code for \"" + amount_field + "\" (one of " + currency_list(rates) + ")",
           r.got("currency"));
  }
  m.currency = r.string("currency");
  if (m.currency == "USD") {
    m.usd = m.amount;
    return m;
  }
  for (const ExchangeRate& rate : rates) {
    if (rate.to == m.currency) {
      m.usd = m.amount / rate.rate;
      return m;
    }
  }
  r.fail("currency",
         "a currency with a rate in tco/exchange_rates.json (one of " + currency_list(rates) + ")",
         r.got("currency"));
}

/// The "prices" object of an instance record: offers by price model, in
/// price_model_names() order.
std::vector<PriceOffer> read_prices(const RecordReader& r, const InstanceType& inst,
                                    const std::vector<ExchangeRate>& rates) {
  const RecordReader prices = r.nested("prices");
  std::vector<PriceOffer> out;
  for (const std::string& key : prices.keys()) {
    if (!is_price_model(key)) {
      prices.fail(key, "a price model (one of " + price_model_list() + ")", "\"" + key + "\"");
    }
    if (key == inst.price_model) {
      prices.fail(key,
                  "no offer for the record's own price_model \"" + key +
                      "\" (its price is \"usd_per_hour\")",
                  prices.got(key));
    }
  }
  for (const std::string& model : price_model_names()) {
    if (!prices.has(model)) continue;
    const RecordReader o = prices.nested(model);
    PriceOffer offer;
    offer.price_model = model;
    const Money money = read_money(o, "usd_per_hour", "amount_per_hour", rates);
    offer.usd_per_hour = money.usd;
    offer.amount_per_hour = money.amount;
    offer.currency = money.currency;
    offer.source = o.string("source");
    offer.as_of = o.string("as_of");
    offer.note = o.string_or("note", "");
    if (model == "spot") {
      offer.interruption_rate_per_hour = o.positive_number("interruption_rate_per_hour");
      if (offer.interruption_rate_per_hour > 1) {
        o.fail("interruption_rate_per_hour", "a fraction of instances per hour in (0, 1]",
               o.got("interruption_rate_per_hour"));
      }
      offer.interruption_source = o.string("interruption_source");
      offer.interruption_as_of = o.string("interruption_as_of");
    } else {
      for (const char* f :
           {"interruption_rate_per_hour", "interruption_source", "interruption_as_of"}) {
        if (o.has(f)) o.fail(f, "no interruption figures on a \"" + model + "\" offer", o.got(f));
      }
    }
    out.push_back(std::move(offer));
  }
  return out;
}

/// The record's own offer: usd_per_hour under price_model, with the record's provenance.
PriceOffer own_offer(const InstanceType& inst) {
  PriceOffer o;
  o.price_model = inst.price_model;
  o.usd_per_hour = inst.usd_per_hour;
  o.amount_per_hour = inst.usd_per_hour;
  o.source = inst.source;
  o.as_of = inst.as_of;
  return o;
}

/// A TCO file under `<data_dir>/tco/`, or null when absent.
std::optional<json> optional_tco_file(const std::filesystem::path& data_dir,
                                      const std::string& name) {
  const std::filesystem::path p = data_dir / "tco" / name;
  if (!std::filesystem::exists(p)) return std::nullopt;
  return base::read_json_file(p);
}

HardwareSpec read_cpu(const RecordReader& r, const std::string& id) {
  HardwareSpec s;
  s.id = id;
  s.kind = DeviceKind::kCpu;
  s.name = r.string("name");
  s.num_cores = static_cast<int>(r.positive_int("num_cores"));
  s.threads_per_core = static_cast<int>(r.positive_int("threads_per_core"));
  s.clock_hz = r.has("all_core_turbo_clock_hz") ? r.positive_number("all_core_turbo_clock_hz")
                                                : r.positive_number("base_clock_hz");
  s.memory_channels = static_cast<int>(r.positive_int("memory_channels"));
  s.peak_memory_bandwidth_bytes_per_s = r.positive_number("peak_memory_bandwidth_bytes_per_s");
  s.peak_flops_per_s = r.positive_number_map("peak_flops_per_s");
  s.tdp_watts = r.positive_number("tdp_watts");
  s.source = r.string("source");
  s.as_of = r.string("as_of");
  if (r.has("socket_link")) {
    const LinkFigures link = read_link(r.nested("socket_link"));
    s.socket_link_bandwidth_bytes_per_s = link.bandwidth_bytes_per_s;
    s.socket_link_latency_s = link.latency_s;
    s.socket_link_source = link.source;
    s.socket_link_as_of = link.as_of;
  }
  s.microarchitecture = r.string_or("microarchitecture", "");
  if (r.has("memory_model")) {
    const RecordReader m = r.nested("memory_model");
    m.only({"per_core_read_bytes_per_s", "sustained_read_bytes_per_s", "source", "as_of", "note"});
    s.per_core_read_bytes_per_s = m.positive_number("per_core_read_bytes_per_s");
    s.sustained_read_bytes_per_s = m.positive_number("sustained_read_bytes_per_s");
    if (s.sustained_read_bytes_per_s > s.peak_memory_bandwidth_bytes_per_s) {
      m.fail("sustained_read_bytes_per_s",
             "at most the datasheet peak_memory_bandwidth_bytes_per_s (" +
                 std::to_string(s.peak_memory_bandwidth_bytes_per_s) + ")",
             m.got("sustained_read_bytes_per_s"));
    }
    s.memory_model_source = m.string("source");
    s.memory_model_as_of = m.string("as_of");
  }
  return s;
}

HardwareSpec read_gpu(const RecordReader& r, const std::string& id) {
  HardwareSpec s;
  s.id = id;
  s.kind = DeviceKind::kGpu;
  s.name = r.string("name");
  s.memory_bytes = r.positive_int("memory_bytes");
  s.peak_memory_bandwidth_bytes_per_s = r.positive_number("peak_memory_bandwidth_bytes_per_s");
  s.peak_flops_per_s = r.positive_number_map("peak_flops_per_s");
  s.interconnect_bandwidth_bytes_per_s = r.positive_number("interconnect_bandwidth_bytes_per_s");
  s.num_cores = static_cast<int>(r.positive_int_or("num_sms", 0));
  s.threads_per_core = 1;
  s.clock_hz = r.positive_number_or("boost_clock_hz", 0.0);
  s.tdp_watts = r.positive_number("tdp_watts");
  s.source = r.string("source");
  s.as_of = r.string("as_of");
  if (r.has("socket_link")) {
    r.fail("socket_link", "no such field on a GPU (GPU links: interconnect_bandwidth_bytes_per_s)",
           r.got("socket_link"));
  }
  if (r.has("host_link")) {
    const RecordReader h = r.nested("host_link");
    h.only({"bandwidth_bytes_per_s", "basis", "source", "as_of"});
    s.host_link_bandwidth_bytes_per_s = h.positive_number("bandwidth_bytes_per_s");
    s.host_link_basis = h.string("basis");
    s.host_link_source = h.string("source");
    s.host_link_as_of = h.string("as_of");
  }
  return s;
}

}  // namespace

std::string_view to_string(DeviceKind kind) { return kind == DeviceKind::kCpu ? "cpu" : "gpu"; }

Catalog Catalog::load(const std::filesystem::path& data_dir) {
  Catalog catalog;
  std::map<std::string, std::string> defined_in;  // hardware id -> file

  for (const auto& [kind, key, rel] :
       {std::tuple<std::string, std::string, std::string>{"cpu", "cpus", "hardware/cpus.json"},
        {"gpu", "gpus", "hardware/gpus.json"}}) {
    const std::string file = (data_dir / rel).string();
    const json doc = base::read_json_file(data_dir / rel);
    const json& records = record_array(doc, file, key);
    for (std::size_t i = 0; i < records.size(); ++i) {
      const std::string id = record_id(records[i], file, kind, i);
      const RecordReader r(records[i], file, kind + " " + quoted(id));
      if (const auto it = defined_in.find(id); it != defined_in.end()) {
        r.fail("id", "a unique id", quoted(id) + " (already defined in " + it->second + ")");
      }
      defined_in[id] = file;
      catalog.hardware_.push_back(kind == "cpu" ? read_cpu(r, id) : read_gpu(r, id));
    }
  }

  // Exchange rates first: instance prices and purchase prices may be in another currency.
  if (const auto doc = optional_tco_file(data_dir, "exchange_rates.json")) {
    const std::string file = (data_dir / "tco/exchange_rates.json").string();
    const json& records = record_array(*doc, file, "exchange_rates");
    for (std::size_t i = 0; i < records.size(); ++i) {
      const std::string id = record_id(records[i], file, "exchange rate", i);
      const RecordReader r(records[i], file, "exchange rate " + quoted(id));
      if (r.string("from") != "USD") r.fail("from", "\"USD\"", r.got("from"));
      ExchangeRate rate;
      rate.to = r.string("to");
      rate.rate = r.positive_number("rate");
      rate.source = r.string("source");
      rate.as_of = r.string("as_of");
      if (rate.to == "USD" || catalog.find_exchange_rate(rate.to) != nullptr) {
        r.fail("to", "a currency other than USD given once", r.got("to"));
      }
      catalog.exchange_rates_.push_back(std::move(rate));
    }
  }

  const std::string file = (data_dir / "instances/instances.json").string();
  const json doc = base::read_json_file(data_dir / "instances/instances.json");
  const json& records = record_array(doc, file, "instances");
  std::set<std::string> instance_ids;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const std::string id = record_id(records[i], file, "instance", i);
    const RecordReader r(records[i], file, "instance " + quoted(id));
    if (!instance_ids.insert(id).second) {
      r.fail("id", "a unique id", quoted(id) + " (already defined earlier in the file)");
    }
    InstanceType inst;
    inst.id = id;
    inst.provider = r.string("provider");
    inst.name = r.string("name");
    inst.region = r.string("region");
    const std::string kind = r.string("device_kind");
    if (kind != "cpu" && kind != "gpu")
      r.fail("device_kind", "\"cpu\" or \"gpu\"", r.got("device_kind"));
    inst.kind = kind == "cpu" ? DeviceKind::kCpu : DeviceKind::kGpu;

    // Host CPU: required for CPU instances; optional for GPU instances.
    if (inst.kind == DeviceKind::kCpu || r.has("cpu")) {
      inst.cpu_id = r.string("cpu");
      const HardwareSpec* cpu = catalog.find_hardware(inst.cpu_id);
      if (cpu == nullptr || cpu->kind != DeviceKind::kCpu) {
        r.fail("cpu",
               "the id of a CPU in hardware/cpus.json (known: " +
                   known_ids(catalog.hardware_of_kind(DeviceKind::kCpu)) + ")",
               r.got("cpu"));
      }
    }
    if (inst.kind == DeviceKind::kGpu) {
      inst.gpu_id = r.string("gpu");
      const HardwareSpec* gpu = catalog.find_hardware(inst.gpu_id);
      if (gpu == nullptr || gpu->kind != DeviceKind::kGpu) {
        r.fail("gpu",
               "the id of a GPU in hardware/gpus.json (known: " +
                   known_ids(catalog.hardware_of_kind(DeviceKind::kGpu)) + ")",
               r.got("gpu"));
      }
      inst.num_gpus = static_cast<int>(r.positive_int("num_gpus"));
    } else {
      if (r.has("gpu")) r.fail("gpu", "no GPU on a \"cpu\" instance", r.got("gpu"));
      inst.num_gpus = static_cast<int>(r.non_negative_int_or("num_gpus", 0));
      if (inst.num_gpus != 0) r.fail("num_gpus", "0 on a \"cpu\" instance", r.got("num_gpus"));
    }
    inst.vcpus = static_cast<int>(r.positive_int("vcpus"));
    if (r.has("vcpus_per_socket")) {
      if (inst.kind != DeviceKind::kCpu) {
        r.fail("vcpus_per_socket", "no such field on a \"gpu\" instance",
               r.got("vcpus_per_socket"));
      }
      inst.vcpus_per_socket = static_cast<int>(r.positive_int("vcpus_per_socket"));
    }
    if (r.has("price_model")) inst.price_model = r.string("price_model");
    inst.memory_bytes = r.positive_int("memory_bytes");
    inst.usd_per_hour = r.positive_number("usd_per_hour");
    if (r.has("currency") && r.string("currency") != "USD") {
      r.fail("currency", "\"USD\" (\"usd_per_hour\" is in USD; other currencies go in \"prices\")",
             r.got("currency"));
    }
    if (!is_price_model(inst.price_model)) {
      r.fail("price_model", "a price model (one of " + price_model_list() + ")",
             r.got("price_model"));
    }
    inst.source = r.string("source");
    inst.as_of = r.string("as_of");
    inst.prices.push_back(own_offer(inst));
    if (r.has("prices")) {
      for (PriceOffer& o : read_prices(r, inst, catalog.exchange_rates_)) {
        inst.prices.push_back(std::move(o));
      }
    }
    inst.note = r.has("note") ? r.string_or("note", "") : std::string();
    if (r.has("network")) {
      const RecordReader n = r.nested("network");
      const LinkFigures link = read_link(n);
      inst.network_bandwidth_bytes_per_s = link.bandwidth_bytes_per_s;
      inst.network_latency_s = link.latency_s;
      inst.network_source = link.source;
      inst.network_as_of = link.as_of;
      inst.network_note = n.string_or("note", "");
    }
    catalog.instances_.push_back(std::move(inst));
  }

  catalog.load_owned_hardware(data_dir);
  catalog.load_tco_defaults(data_dir);
  for (const auto& [id, engine] : load_engine_profiles(data_dir)) catalog.add_engine(engine);
  catalog.data_dir_ = data_dir;
  return catalog;
}

/// tco/owned_hardware.json when present (after the instances, which it refers to).
void Catalog::load_owned_hardware(const std::filesystem::path& data_dir) {
  if (const auto owned = optional_tco_file(data_dir, "owned_hardware.json")) {
    const std::string owned_file = (data_dir / "tco/owned_hardware.json").string();
    const json& servers = record_array(*owned, owned_file, "owned_hardware");
    for (std::size_t i = 0; i < servers.size(); ++i) {
      const std::string id = record_id(servers[i], owned_file, "owned hardware", i);
      const RecordReader r(servers[i], owned_file, "owned hardware " + quoted(id));
      if (find_owned_hardware(id) != nullptr) {
        r.fail("id", "a unique id", quoted(id) + " (already defined earlier in the file)");
      }
      OwnedHardware h;
      h.id = id;
      h.name = r.string("name");
      h.equivalent_instance = r.string("equivalent_instance");
      if (find_instance(h.equivalent_instance) == nullptr) {
        r.fail("equivalent_instance",
               "an instance id of instances/instances.json (known: " + known_ids(instances_) + ")",
               r.got("equivalent_instance"));
      }
      const Money money = read_money(r, "purchase_usd", "purchase_amount", exchange_rates_);
      h.purchase_usd = money.usd;
      h.purchase_amount = money.amount;
      h.currency = money.currency;
      h.power_watts = r.positive_number("power_watts");
      h.source = r.string("source");
      h.as_of = r.string("as_of");
      h.note = r.string_or("note", "");
      owned_hardware_.push_back(std::move(h));
    }
  }
}

/// tco/defaults.json when present.
void Catalog::load_tco_defaults(const std::filesystem::path& data_dir) {
  if (const auto defaults = optional_tco_file(data_dir, "defaults.json")) {
    const std::string defaults_file = (data_dir / "tco/defaults.json").string();
    if (!defaults->is_object()) {
      throw InputError(defaults_file + ": expected a JSON object, got " +
                       defaults->dump().substr(0, 40));
    }
    const RecordReader r(*defaults, defaults_file, "defaults");
    auto read_default = [&r](const std::string& field, double min) {
      const RecordReader d = r.nested(field);
      TcoDefault out;
      out.value = d.positive_number("value");
      if (out.value < min) {
        d.fail("value", "a number >= " + std::to_string(static_cast<int>(min)), d.got("value"));
      }
      out.source = d.string("source");
      out.as_of = d.string("as_of");
      out.note = d.string_or("note", "");
      return out;
    };
    tco_defaults_.pue = read_default("pue", 1);
    tco_defaults_.usd_per_kwh = read_default("usd_per_kwh", 0);
    tco_defaults_.spot_replacement_s = read_default("spot_replacement_s", 0);
  }
}

const std::vector<std::string>& price_model_names() {
  static const std::vector<std::string> names = {"on_demand", "reserved_1y", "reserved_3y", "spot",
                                                 "capacity_block"};
  return names;
}

const PriceOffer* InstanceType::find_price(const std::string& model) const {
  for (const PriceOffer& o : prices) {
    if (o.price_model == model) return &o;
  }
  return nullptr;
}

std::string InstanceType::offered_price_models() const {
  std::string out;
  for (const PriceOffer& o : prices) out += (out.empty() ? "" : ", ") + o.price_model;
  return out.empty() ? std::string("(none)") : out;
}

const ExchangeRate* Catalog::find_exchange_rate(const std::string& currency) const {
  for (const ExchangeRate& r : exchange_rates_) {
    if (r.to == currency) return &r;
  }
  return nullptr;
}

const OwnedHardware* Catalog::find_owned_hardware(const std::string& id) const {
  for (const OwnedHardware& h : owned_hardware_) {
    if (h.id == id) return &h;
  }
  return nullptr;
}

void Catalog::add_exchange_rate(ExchangeRate rate) {
  if (rate.to == "USD" || find_exchange_rate(rate.to) != nullptr) {
    throw InputError("exchange rate USD -> \"" + rate.to + "\": duplicate");
  }
  exchange_rates_.push_back(std::move(rate));
}

void Catalog::add_owned_hardware(OwnedHardware hardware) {
  if (find_owned_hardware(hardware.id) != nullptr) {
    throw InputError("owned hardware \"" + hardware.id + "\": duplicate id");
  }
  owned_hardware_.push_back(std::move(hardware));
}

std::vector<HardwareSpec> Catalog::hardware_of_kind(DeviceKind kind) const {
  std::vector<HardwareSpec> out;
  for (const HardwareSpec& h : hardware_) {
    if (h.kind == kind) out.push_back(h);
  }
  return out;
}

const HardwareSpec* Catalog::find_hardware(const std::string& id) const {
  for (const HardwareSpec& h : hardware_) {
    if (h.id == id) return &h;
  }
  return nullptr;
}

const InstanceType* Catalog::find_instance(const std::string& id) const {
  for (const InstanceType& i : instances_) {
    if (i.id == id) return &i;
  }
  return nullptr;
}

const InstanceType& Catalog::instance(const std::string& id, const std::string& context) const {
  if (const InstanceType* i = find_instance(id)) return *i;
  throw InputError(context + ": unknown instance type \"" + id +
                   "\"; known: " + known_ids(instances_));
}

const HardwareSpec& Catalog::hardware(const std::string& id, const std::string& context) const {
  if (const HardwareSpec* h = find_hardware(id)) return *h;
  throw InputError(context + ": unknown hardware \"" + id + "\"; known: " + known_ids(hardware_));
}

void Catalog::add_hardware(HardwareSpec spec) {
  if (find_hardware(spec.id) != nullptr) {
    throw InputError("hardware \"" + spec.id + "\": duplicate id");
  }
  hardware_.push_back(std::move(spec));
}

void Catalog::add_instance(InstanceType instance) {
  if (find_instance(instance.id) != nullptr) {
    throw InputError("instance \"" + instance.id + "\": duplicate id");
  }
  if (instance.prices.empty()) instance.prices.push_back(own_offer(instance));
  instances_.push_back(std::move(instance));
}

void Catalog::replace_instance(InstanceType instance) {
  for (InstanceType& i : instances_) {
    if (i.id != instance.id) continue;
    if (instance.prices.empty()) instance.prices.push_back(own_offer(instance));
    i = std::move(instance);
    return;
  }
  throw InputError("instance \"" + instance.id + "\": unknown id");
}

const EngineProfile* Catalog::find_engine(const std::string& id) const {
  const auto it = engines_.find(id);
  return it == engines_.end() ? nullptr : it->second.get();
}

std::vector<const EngineProfile*> Catalog::engines() const {
  std::vector<const EngineProfile*> out;
  for (const auto& [id, e] : engines_) out.push_back(e.get());
  return out;
}

std::string Catalog::engine_ids() const {
  std::string out;
  for (const auto& [id, e] : engines_) out += (out.empty() ? "" : ", ") + id;
  return out.empty() ? std::string("none") : out;
}

void Catalog::add_engine(const EngineProfile& engine) {
  engines_[engine.id] = std::make_shared<const EngineProfile>(engine);
}

}  // namespace llmcap::model
