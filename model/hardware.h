// Hardware and cloud-instance catalogs (data/hardware/*.json, data/instances/*.json).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llmcap::model {

enum class DeviceKind { kCpu, kGpu };
std::string_view to_string(DeviceKind kind);  ///< "cpu" | "gpu"

/// One CPU socket or one GPU, from its datasheet. CPU figures are per socket.
struct HardwareSpec {
  std::string id;    ///< e.g. "xeon-8480plus", "h100-sxm"
  std::string name;  ///< marketing name
  DeviceKind kind = DeviceKind::kCpu;
  int num_cores = 0;         ///< CPU cores per socket; GPUs: SMs (0 if unknown)
  int threads_per_core = 1;  ///< CPU SMT; 1 for GPUs
  double clock_hz = 0;       ///< CPU all-core turbo (else base); GPU boost clock
  int memory_channels = 0;   ///< CPU DDR channels per socket; 0 for GPUs
  int64_t memory_bytes = 0;  ///< GPU memory; 0 for CPUs (capacity comes from the instance)
  double peak_memory_bandwidth_bytes_per_s = 0;  ///< theoretical, per socket / per GPU
  /// Peak dense FLOP/s (or OP/s) by compute dtype: "f32", "bf16", "fp8", "int8".
  std::map<std::string, double> peak_flops_per_s;
  /// GPU-to-GPU link bandwidth per GPU per direction (NVLink, else PCIe); 0 for CPUs.
  double interconnect_bandwidth_bytes_per_s = 0;
  double tdp_watts = 0;
  std::string source;
  std::string as_of;
  /// CPUs, optional ("socket_link" in cpus.json; 0 when not given): the socket-to-socket
  /// link of a two-socket host (Intel UPI, AMD Infinity Fabric / xGMI), which tensor
  /// parallelism over the sockets all-reduces through. Bandwidth: all links between the two
  /// sockets together, bytes per second per direction. Latency: one crossing (a cache line
  /// moved from a core of one socket to a core of the other), seconds. With their own
  /// source and as_of.
  double socket_link_bandwidth_bytes_per_s = 0;
  double socket_link_latency_s = 0;
  std::string socket_link_source;
  std::string socket_link_as_of;
  /// GPUs, optional ("host_link" in gpus.json; 0 when not given): the GPU's link to its host's
  /// memory (PCIe, or NVLink-C2C on Grace superchips), bytes per second per direction, as the
  /// datasheet gives it; KV offload moves blocks over it. With its own basis, source and as_of.
  double host_link_bandwidth_bytes_per_s = 0;
  std::string host_link_basis;
  std::string host_link_source;
  std::string host_link_as_of;
  /// CPUs: "microarchitecture" in cpus.json (e.g. "Sapphire Rapids", "Zen 4 (Genoa)"; "" when
  /// not given): which instruction paths the cores have and at what rate (model/cpu_model.h).
  std::string microarchitecture;
  /// CPUs, optional ("memory_model" in cpus.json; 0 when not given): measured DRAM read
  /// bandwidth of one core alone, and of the whole socket under load (STREAM-like), bytes
  /// per second, with their own source and as_of. model/cpu_model.h's bandwidth model.
  double per_core_read_bytes_per_s = 0;
  double sustained_read_bytes_per_s = 0;
  std::string memory_model_source;
  std::string memory_model_as_of;
};

/// Price models an instance's offers may carry (instances.json "price_model" / "prices"), in
/// display order: "on_demand", "reserved_1y", "reserved_3y", "spot", "capacity_block".
const std::vector<std::string>& price_model_names();

/// One price of an instance type under one price model (docs/tco.md). A reservation
/// ("reserved_1y", "reserved_3y") is the effective hourly rate over its term (upfront part
/// included) and is billed for every hour of the term; the others are billed while running.
struct PriceOffer {
  std::string price_model;  ///< one of price_model_names()
  /// Price per instance-hour in USD: as written ("usd_per_hour"), or "amount_per_hour" in
  /// `currency` divided by the catalog's dated rate USD -> currency (tco/exchange_rates.json).
  double usd_per_hour = 0;
  double amount_per_hour = 0;    ///< as written, in `currency`
  std::string currency = "USD";  ///< ISO 4217 code of amount_per_hour
  std::string source;
  std::string as_of;
  std::string note;
  /// "spot" only: the fraction of running instances the provider reclaims per hour, in (0, 1]
  /// (e.g. AWS Spot Instance Advisor's monthly band / 730 hours), with its own provenance.
  double interruption_rate_per_hour = 0;
  std::string interruption_source;
  std::string interruption_as_of;
};

/// A rentable instance type.
struct InstanceType {
  std::string id;        ///< e.g. "aws-g5.xlarge"
  std::string provider;  ///< "AWS", "GCP", "Azure", "Alibaba Cloud", "Tencent Cloud"
  std::string name;      ///< provider's name, e.g. "g5.xlarge"
  std::string region;
  DeviceKind kind = DeviceKind::kCpu;
  std::string cpu_id;  ///< host CPU (required for CPU instances, optional for GPU ones)
  std::string gpu_id;  ///< GPU instances only
  int num_gpus = 0;
  int vcpus = 0;
  /// CPU instances: vCPUs that one host socket presents to instances of this family (e.g. 96
  /// on AWS m7a, whose vCPUs are whole cores, SMT off; 88 on GCP c3, whose hosts keep cores
  /// back). 0: the CPU's num_cores x threads_per_core.
  int vcpus_per_socket = 0;
  int64_t memory_bytes = 0;               ///< instance RAM
  double usd_per_hour = 0;                ///< price per hour of `price_model`
  std::string price_model = "on_demand";  ///< "on_demand" or e.g. "capacity_block"
  std::string source;
  std::string as_of;
  std::string note;
  /// Optional ("network" in instances.json; 0 when not given): the instance's network, which
  /// a disaggregated fleet moves KV caches over. Bandwidth: the provider's figure for the
  /// instance, bytes per second per direction (an "up to" burst figure when that is all the
  /// provider gives; see network_note). Latency: one way, between instances in one zone,
  /// seconds. With their own source and as_of.
  double network_bandwidth_bytes_per_s = 0;
  double network_latency_s = 0;
  std::string network_source;
  std::string network_as_of;
  std::string network_note;
  /// Every price offer: first the record's own (usd_per_hour under price_model, with the
  /// record's source and as_of), then "prices" in price_model_names() order. At most one per
  /// price model.
  std::vector<PriceOffer> prices;

  /// The offer under `price_model`, or nullptr when the instance has none.
  const PriceOffer* find_price(const std::string& price_model) const;
  /// The price models offered, comma-separated in `prices` order, e.g. "on_demand, spot".
  std::string offered_price_models() const;
};

/// A dated exchange rate (data/tco/exchange_rates.json): 1 USD = `rate` units of `to`.
struct ExchangeRate {
  std::string to;  ///< ISO 4217 code, e.g. "CNY"
  double rate = 0;
  std::string source;
  std::string as_of;
};

/// A server one can buy instead of renting (data/tco/owned_hardware.json), with the catalog
/// instance type whose performance it is taken to have.
struct OwnedHardware {
  std::string id;                   ///< e.g. "dgx-h100"
  std::string name;                 ///< e.g. "NVIDIA DGX H100 (8x H100 SXM 80 GB)"
  std::string equivalent_instance;  ///< catalog instance id, e.g. "aws-p5.48xlarge"
  double purchase_usd = 0;          ///< purchase price, converted like PriceOffer::usd_per_hour
  double purchase_amount = 0;       ///< as written, in `currency`
  std::string currency = "USD";
  double power_watts = 0;  ///< whole server at TDP (the maximum it is provisioned for)
  std::string source;
  std::string as_of;
  std::string note;
};

/// One default of the TCO model (data/tco/defaults.json) with its provenance.
struct TcoDefault {
  double value = 0;
  std::string source;
  std::string as_of;
  std::string note;
};

/// Defaults of the owned-hardware and spot arithmetic (docs/tco.md); value 0 when the catalog
/// folder has no tco/defaults.json.
struct TcoDefaults {
  TcoDefault pue;                 ///< power usage effectiveness, >= 1
  TcoDefault usd_per_kwh;         ///< electricity price
  TcoDefault spot_replacement_s;  ///< seconds from a spot interruption to a replacement serving
};

struct EngineProfile;  // model/engine_profile.h

/// All hardware and instance records, looked up by id. Records keep file order.
class Catalog {
 public:
  /// Loads `<data_dir>/hardware/cpus.json`, `<data_dir>/hardware/gpus.json` and
  /// `<data_dir>/instances/instances.json`. Throws InputError naming the file, record id,
  /// field and value for: a missing file, malformed JSON, a missing or mistyped field,
  /// a non-positive quantity, a duplicate id, an instance that names unknown hardware, a
  /// record without "source" or "as_of"; a "socket_link" (CPUs) or "network" (instances)
  /// that is not an object with a positive "bandwidth_bytes_per_s", a non-negative
  /// "latency_s", "source" and "as_of" (fields named e.g. "network.latency_s"); a
  /// "socket_link" on a GPU record.
  ///
  /// Prices and TCO data (docs/tco.md): an instance's optional "prices" object maps a price
  /// model (price_model_names(); another name lists them) to an offer with "source", "as_of"
  /// and either "usd_per_hour" or "amount_per_hour" with "currency" (a currency other than USD
  /// needs its rate in tco/exchange_rates.json); "spot" offers need
  /// "interruption_rate_per_hour" in (0, 1] with "interruption_source" and
  /// "interruption_as_of", other offers must not have them; the record's own price_model may
  /// not be repeated in "prices"; a record-level "currency" must be "USD". The folder
  /// `<data_dir>/tco/` is optional, and each of its files: exchange_rates.json
  /// ({"exchange_rates": [{"from": "USD", "to", "rate", "source", "as_of"}]}),
  /// owned_hardware.json ({"owned_hardware": [{"id", "name", "equivalent_instance",
  /// "purchase_usd" | "purchase_amount" + "currency", "power_watts", "source", "as_of"}]},
  /// equivalent_instance a known instance id) and defaults.json ({"pue", "usd_per_kwh",
  /// "spot_replacement_s"}: each {"value", "source", "as_of"}). Errors name file, record, field
  /// and value as above.
  static Catalog load(const std::filesystem::path& data_dir);

  const std::vector<HardwareSpec>& hardware() const { return hardware_; }
  const std::vector<InstanceType>& instances() const { return instances_; }
  /// nullptr when unknown.
  const HardwareSpec* find_hardware(const std::string& id) const;
  const InstanceType* find_instance(const std::string& id) const;
  /// Throws InputError("<context>: unknown instance type "x"; known: a, b, ...").
  const InstanceType& instance(const std::string& id, const std::string& context) const;
  const HardwareSpec& hardware(const std::string& id, const std::string& context) const;
  /// Records of one kind (CPUs or GPUs), in file order.
  std::vector<HardwareSpec> hardware_of_kind(DeviceKind kind) const;

  void add_hardware(HardwareSpec spec);  ///< for tests and programmatic catalogs
  /// An instance without `prices` gets its own offer (usd_per_hour under price_model).
  void add_instance(InstanceType instance);
  /// Replaces the instance of the same id, in place (plan::catalog_with_price_overrides).
  /// Throws InputError("instance "x": unknown id") when there is none.
  void replace_instance(InstanceType instance);

  /// TCO data (empty / zero when `<data_dir>/tco/` lacks the file).
  const std::vector<ExchangeRate>& exchange_rates() const { return exchange_rates_; }
  const std::vector<OwnedHardware>& owned_hardware() const { return owned_hardware_; }
  const TcoDefaults& tco_defaults() const { return tco_defaults_; }
  /// The rate USD -> `currency`, or nullptr when the catalog has none.
  const ExchangeRate* find_exchange_rate(const std::string& currency) const;
  const OwnedHardware* find_owned_hardware(const std::string& id) const;
  /// For tests and programmatic catalogs (duplicates throw InputError).
  void add_exchange_rate(ExchangeRate rate);
  void add_owned_hardware(OwnedHardware hardware);
  void set_tco_defaults(TcoDefaults defaults) { tco_defaults_ = std::move(defaults); }

  /// Engine profiles (`<data_dir>/engines/*.json`, model/engine_profile.h; none when the
  /// folder is absent), loaded by load() with the same errors as load_engine_profiles().
  /// nullptr when `id` is unknown.
  const EngineProfile* find_engine(const std::string& id) const;
  /// The folder load() read ("" for a catalog built in code).
  const std::filesystem::path& data_dir() const { return data_dir_; }
  /// Every engine profile, sorted by id.
  std::vector<const EngineProfile*> engines() const;
  /// The engine ids, sorted, comma-separated ("none" when there are none).
  std::string engine_ids() const;
  void add_engine(const EngineProfile& engine);  ///< for tests (replaces one of the same id)

 private:
  /// Parts of load(): tco/owned_hardware.json and tco/defaults.json of `data_dir`, when present.
  void load_owned_hardware(const std::filesystem::path& data_dir);
  void load_tco_defaults(const std::filesystem::path& data_dir);
  std::vector<HardwareSpec> hardware_;
  std::vector<InstanceType> instances_;
  std::vector<ExchangeRate> exchange_rates_;
  std::vector<OwnedHardware> owned_hardware_;
  TcoDefaults tco_defaults_;
  std::map<std::string, std::shared_ptr<const EngineProfile>> engines_;
  std::filesystem::path data_dir_;
};

}  // namespace llmcap::model
