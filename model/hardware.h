// Hardware and cloud-instance catalogs (data/hardware/*.json, data/instances/*.json).
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
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
};

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
  void add_instance(InstanceType instance);

 private:
  std::vector<HardwareSpec> hardware_;
  std::vector<InstanceType> instances_;
};

}  // namespace llmcap::model
