#include "model/hardware.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "model/input_error.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using llmcap::testing::fresh_temp_dir;
using llmcap::testing::read_text;
using llmcap::testing::replace_once;
using llmcap::testing::test_data;
using llmcap::testing::write_text;
using ::testing::HasSubstr;

constexpr double kRelTol = 1e-12;

Catalog load_fixture_catalog() { return Catalog::load(test_data("catalog")); }

TEST(Catalog, LoadsRecordsInFileOrder) {
  const Catalog c = load_fixture_catalog();
  ASSERT_EQ(c.hardware().size(), 4u);
  EXPECT_EQ(c.hardware()[0].id, "xeon-8480plus");
  EXPECT_EQ(c.hardware()[1].id, "epyc-9654");
  EXPECT_EQ(c.hardware()[2].id, "h100-sxm");
  EXPECT_EQ(c.hardware()[3].id, "a10g");
  ASSERT_EQ(c.instances().size(), 5u);
  EXPECT_EQ(c.instances()[0].id, "test-cpu-slice");
  EXPECT_EQ(c.instances()[4].id, "test-gpu-1xa10g");
  EXPECT_EQ(c.hardware_of_kind(DeviceKind::kGpu).size(), 2u);
}

TEST(Catalog, CpuFields) {
  const Catalog c = load_fixture_catalog();
  const HardwareSpec* cpu = c.find_hardware("xeon-8480plus");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->kind, DeviceKind::kCpu);
  EXPECT_EQ(cpu->name, "Intel Xeon Platinum 8480+");
  EXPECT_EQ(cpu->num_cores, 56);
  EXPECT_EQ(cpu->threads_per_core, 2);
  EXPECT_EQ(cpu->clock_hz, 3.0e9);  // all-core turbo preferred over base
  EXPECT_EQ(cpu->memory_channels, 8);
  EXPECT_EQ(cpu->memory_bytes, 0);
  EXPECT_NEAR(cpu->peak_memory_bandwidth_bytes_per_s, 307.2e9, 307.2e9 * kRelTol);
  ASSERT_EQ(cpu->peak_flops_per_s.size(), 3u);
  EXPECT_EQ(cpu->peak_flops_per_s.at("bf16"), 2.0e14);
  EXPECT_EQ(cpu->tdp_watts, 350);
  EXPECT_EQ(cpu->source, "test fixture");
  EXPECT_EQ(cpu->as_of, "2025-01-01");
}

TEST(Catalog, CpuClockFallsBackToBase) {
  const Catalog c = load_fixture_catalog();
  EXPECT_EQ(c.hardware("epyc-9654", "test").clock_hz, 2.4e9);
}

TEST(Catalog, GpuFields) {
  const Catalog c = load_fixture_catalog();
  const HardwareSpec& gpu = c.hardware("h100-sxm", "test");
  EXPECT_EQ(gpu.kind, DeviceKind::kGpu);
  EXPECT_EQ(gpu.memory_bytes, 85'899'345'920);
  EXPECT_EQ(gpu.peak_memory_bandwidth_bytes_per_s, 3.35e12);
  EXPECT_EQ(gpu.peak_flops_per_s.at("fp8"), 1.979e15);
  EXPECT_EQ(gpu.interconnect_bandwidth_bytes_per_s, 4.5e11);
  EXPECT_EQ(gpu.num_cores, 132);
  EXPECT_EQ(gpu.threads_per_core, 1);
  EXPECT_EQ(gpu.clock_hz, 1.98e9);
  const HardwareSpec& a10g = c.hardware("a10g", "test");
  EXPECT_EQ(a10g.num_cores, 0);  // num_sms optional
  EXPECT_EQ(a10g.clock_hz, 0);   // boost_clock_hz optional
}

TEST(Catalog, InstanceFields) {
  const Catalog c = load_fixture_catalog();
  const InstanceType& p5 = c.instance("test-gpu-8xh100", "test");
  EXPECT_EQ(p5.provider, "AWS");
  EXPECT_EQ(p5.name, "p5.48xlarge");
  EXPECT_EQ(p5.region, "us-east-1");
  EXPECT_EQ(p5.kind, DeviceKind::kGpu);
  EXPECT_EQ(p5.gpu_id, "h100-sxm");
  EXPECT_EQ(p5.cpu_id, "epyc-9654");
  EXPECT_EQ(p5.num_gpus, 8);
  EXPECT_EQ(p5.vcpus, 192);
  EXPECT_EQ(p5.memory_bytes, 2'199'023'255'552);
  EXPECT_EQ(p5.usd_per_hour, 98.32);
  EXPECT_EQ(p5.note, "");
  const InstanceType& g5 = c.instance("test-gpu-1xa10g", "test");
  EXPECT_EQ(g5.cpu_id, "");  // optional on GPU instances
  EXPECT_EQ(g5.note, "on-demand price");
  const InstanceType& m7i = c.instance("test-cpu-slice", "test");
  EXPECT_EQ(m7i.kind, DeviceKind::kCpu);
  EXPECT_EQ(m7i.cpu_id, "xeon-8480plus");
  EXPECT_EQ(m7i.num_gpus, 0);
}

TEST(Catalog, FindReturnsNullForUnknown) {
  const Catalog c = load_fixture_catalog();
  EXPECT_EQ(c.find_hardware("tpu-v5e"), nullptr);
  EXPECT_EQ(c.find_instance("aws-x"), nullptr);
}

TEST(Catalog, UnknownInstanceListsKnownOnes) {
  const Catalog c = load_fixture_catalog();
  try {
    c.instance("aws-x", "scenario.json: field \"instances\"");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "scenario.json: field \"instances\": unknown instance type \"aws-x\"; known: "
              "test-cpu-slice, test-cpu-2socket, test-cpu-128g, test-gpu-8xh100, "
              "test-gpu-1xa10g");
  }
}

TEST(Catalog, UnknownHardwareListsKnownOnes) {
  const Catalog c = load_fixture_catalog();
  try {
    c.hardware("tpu-v5e", "ctx");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "ctx: unknown hardware \"tpu-v5e\"; known: xeon-8480plus, epyc-9654, h100-sxm, "
              "a10g");
  }
}

TEST(Catalog, AddRejectsDuplicates) {
  Catalog c;
  HardwareSpec h;
  h.id = "x";
  c.add_hardware(h);
  EXPECT_THROW(c.add_hardware(h), InputError);
  InstanceType i;
  i.id = "i";
  c.add_instance(i);
  EXPECT_THROW(c.add_instance(i), InputError);
  EXPECT_EQ(c.hardware().size(), 1u);
}

// ---- Bad input ------------------------------------------------------------------------------

/// Copies of the fixture files, edited by each test and loaded from a temporary directory.
class CatalogErrors : public ::testing::Test {
 protected:
  std::string cpus = read_text(test_data("catalog/hardware/cpus.json"));
  std::string gpus = read_text(test_data("catalog/hardware/gpus.json"));
  std::string instances = read_text(test_data("catalog/instances/instances.json"));
  std::filesystem::path dir = fresh_temp_dir();

  std::string cpus_path() const { return (dir / "hardware/cpus.json").string(); }
  std::string gpus_path() const { return (dir / "hardware/gpus.json").string(); }
  std::string instances_path() const { return (dir / "instances/instances.json").string(); }

  std::string load_error() {
    write_text(dir / "hardware/cpus.json", cpus);
    write_text(dir / "hardware/gpus.json", gpus);
    write_text(dir / "instances/instances.json", instances);
    try {
      Catalog::load(dir);
    } catch (const InputError& e) {
      return e.what();
    }
    ADD_FAILURE() << "expected InputError";
    return "";
  }
};

TEST_F(CatalogErrors, FixtureCopiesLoad) {
  write_text(dir / "hardware/cpus.json", cpus);
  write_text(dir / "hardware/gpus.json", gpus);
  write_text(dir / "instances/instances.json", instances);
  EXPECT_EQ(Catalog::load(dir).instances().size(), 5u);
}

TEST_F(CatalogErrors, MissingFile) {
  write_text(dir / "hardware/cpus.json", cpus);
  try {
    Catalog::load(dir);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), gpus_path() + ": cannot open file");
  }
}

TEST_F(CatalogErrors, MalformedJson) {
  instances = replace_once(instances, "\"vcpus\": 48,", "\"vcpus\": 48");
  const std::string msg = load_error();
  EXPECT_THAT(msg, HasSubstr(instances_path() + ": malformed JSON: "));
  EXPECT_THAT(msg, HasSubstr("parse error"));
}

TEST_F(CatalogErrors, MissingTopLevelArray) {
  gpus = replace_once(gpus, "\"gpus\": [", "\"gpu\": [");
  EXPECT_EQ(
      load_error(),
      gpus_path() + ": field \"gpus\": expected an array of records, got nothing (field missing)");
}

TEST_F(CatalogErrors, RecordNotAnObject) {
  cpus = replace_once(cpus, "\"cpus\": [", "\"cpus\": [42, ");
  const std::string msg = load_error();
  EXPECT_THAT(msg, HasSubstr(cpus_path() + ": cpu record 0: expected a JSON object, got 42"));
}

TEST_F(CatalogErrors, MissingId) {
  gpus = replace_once(gpus, "\"id\": \"a10g\",", "");
  EXPECT_EQ(load_error(), gpus_path() +
                              ": gpu record 1: field \"id\": expected a non-empty string, got "
                              "nothing (field missing)");
}

TEST_F(CatalogErrors, MistypedPrice) {
  instances = replace_once(instances, "\"usd_per_hour\": 1.006", "\"usd_per_hour\": \"abc\"");
  EXPECT_EQ(load_error(), instances_path() +
                              ": instance \"test-gpu-1xa10g\": field \"usd_per_hour\": expected "
                              "a positive number, got \"abc\"");
}

TEST_F(CatalogErrors, RecordErrorsCarryFileRecordAndFieldPath) {
  instances = replace_once(instances, "\"usd_per_hour\": 1.006", "\"usd_per_hour\": \"abc\"");
  write_text(dir / "hardware/cpus.json", cpus);
  write_text(dir / "hardware/gpus.json", gpus);
  write_text(dir / "instances/instances.json", instances);
  try {
    Catalog::load(dir);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(e.file(), instances_path());
    EXPECT_EQ(e.record(), "instance \"test-gpu-1xa10g\"");
    EXPECT_EQ(e.field_path(), "usd_per_hour");
    EXPECT_EQ(e.value(), "\"abc\"");
    EXPECT_EQ(e.expected(), "a positive number");
  }
}

TEST_F(CatalogErrors, VcpusPerSocketOnAGpuInstance) {
  instances = replace_once(instances, "\"usd_per_hour\": 1.006",
                           "\"vcpus_per_socket\": 8, \"usd_per_hour\": 1.006");
  EXPECT_EQ(load_error(), instances_path() +
                              ": instance \"test-gpu-1xa10g\": field \"vcpus_per_socket\": "
                              "expected no such field on a \"gpu\" instance, got 8");
}

TEST_F(CatalogErrors, ZeroVcpusPerSocket) {
  instances = replace_once(instances, "\"vcpus\": 224", "\"vcpus\": 224, \"vcpus_per_socket\": 0");
  EXPECT_EQ(load_error(), instances_path() +
                              ": instance \"test-cpu-2socket\": field \"vcpus_per_socket\": "
                              "expected a positive integer, got 0");
}

TEST_F(CatalogErrors, NegativePrice) {
  instances = replace_once(instances, "\"usd_per_hour\": 98.32", "\"usd_per_hour\": -1");
  const std::string msg = load_error();
  EXPECT_THAT(msg, HasSubstr(instances_path()));
  EXPECT_THAT(msg, HasSubstr("instance \"test-gpu-8xh100\""));
  EXPECT_THAT(msg, HasSubstr("field \"usd_per_hour\": expected a positive number, got -1"));
}

TEST_F(CatalogErrors, ZeroCores) {
  cpus = replace_once(cpus, "\"num_cores\": 96", "\"num_cores\": 0");
  EXPECT_EQ(load_error(), cpus_path() +
                              ": cpu \"epyc-9654\": field \"num_cores\": expected a positive "
                              "integer, got 0");
}

TEST_F(CatalogErrors, FractionalMemoryBytes) {
  gpus = replace_once(gpus, "\"memory_bytes\": 25769803776", "\"memory_bytes\": 2.5");
  const std::string msg = load_error();
  EXPECT_THAT(msg, HasSubstr("gpu \"a10g\": field \"memory_bytes\": expected a positive integer"));
  EXPECT_THAT(msg, HasSubstr("got 2.5"));
}

TEST_F(CatalogErrors, NonPositivePeakFlops) {
  gpus = replace_once(gpus, "\"bf16\": 1.25e14", "\"bf16\": 0");
  EXPECT_EQ(load_error(), gpus_path() +
                              ": gpu \"a10g\": field \"peak_flops_per_s.bf16\": expected a "
                              "positive number, got 0");
}

TEST_F(CatalogErrors, PeakFlopsNotAnObject) {
  cpus = replace_once(cpus, "\"peak_flops_per_s\": {\"f32\": 1.0e13, \"bf16\": 2.0e13}",
                      "\"peak_flops_per_s\": 2.0e13");
  const std::string msg = load_error();
  EXPECT_THAT(msg, HasSubstr("cpu \"epyc-9654\": field \"peak_flops_per_s\": expected an object"));
  EXPECT_THAT(msg, HasSubstr("got 20000000000000.0"));
}

TEST_F(CatalogErrors, CpuWithoutAnyClock) {
  cpus = replace_once(cpus, "\"base_clock_hz\": 2.4e9,", "");
  const std::string msg = load_error();
  EXPECT_THAT(msg, HasSubstr("cpu \"epyc-9654\": field \"base_clock_hz\""));
  EXPECT_THAT(msg, HasSubstr("field missing"));
}

TEST_F(CatalogErrors, MissingSource) {
  cpus = replace_once(cpus, "\"source\": \"test fixture\",\n      \"as_of\": \"2025-01-01\",\n",
                      "\"as_of\": \"2025-01-01\",\n");
  EXPECT_EQ(load_error(), cpus_path() +
                              ": cpu \"xeon-8480plus\": field \"source\": expected a non-empty "
                              "string, got nothing (field missing)");
}

TEST_F(CatalogErrors, MissingAsOf) {
  instances = replace_once(instances, "\"as_of\": \"2025-01-01\",\n      \"note\"", "\"note\"");
  EXPECT_EQ(load_error(), instances_path() +
                              ": instance \"test-gpu-1xa10g\": field \"as_of\": expected a "
                              "non-empty string, got nothing (field missing)");
}

TEST_F(CatalogErrors, DuplicateHardwareIdAcrossFiles) {
  gpus = replace_once(gpus, "\"id\": \"a10g\"", "\"id\": \"epyc-9654\"");
  const std::string msg = load_error();
  EXPECT_THAT(msg, HasSubstr(gpus_path() + ": gpu \"epyc-9654\": field \"id\""));
  EXPECT_THAT(msg, HasSubstr("already defined in " + cpus_path()));
}

TEST_F(CatalogErrors, DuplicateInstanceId) {
  instances = replace_once(instances, "\"id\": \"test-cpu-128g\"", "\"id\": \"test-cpu-slice\"");
  const std::string msg = load_error();
  EXPECT_THAT(msg, HasSubstr(instances_path() + ": instance \"test-cpu-slice\": field \"id\""));
  EXPECT_THAT(msg, HasSubstr("a unique id"));
}

TEST_F(CatalogErrors, UnknownGpuListsKnownGpus) {
  instances = replace_once(instances, "\"gpu\": \"a10g\"", "\"gpu\": \"l4\"");
  EXPECT_EQ(load_error(), instances_path() +
                              ": instance \"test-gpu-1xa10g\": field \"gpu\": expected the id of a "
                              "GPU in hardware/gpus.json (known: h100-sxm, a10g), got \"l4\"");
}

TEST_F(CatalogErrors, CpuIdIsNotAGpu) {
  instances = replace_once(instances, "\"cpu\": \"epyc-9654\",\n      \"gpu\"",
                           "\"cpu\": \"h100-sxm\",\n      \"gpu\"");
  const std::string msg = load_error();
  EXPECT_THAT(msg, HasSubstr("instance \"test-gpu-8xh100\": field \"cpu\""));
  EXPECT_THAT(msg, HasSubstr("known: xeon-8480plus, epyc-9654"));
  EXPECT_THAT(msg, HasSubstr("got \"h100-sxm\""));
}

TEST_F(CatalogErrors, CpuInstanceNeedsCpu) {
  instances =
      replace_once(instances, "\"cpu\": \"xeon-8480plus\",\n      \"vcpus\": 48", "\"vcpus\": 48");
  EXPECT_EQ(load_error(), instances_path() +
                              ": instance \"test-cpu-slice\": field \"cpu\": expected a non-empty "
                              "string, got nothing (field missing)");
}

TEST_F(CatalogErrors, GpuInstanceNeedsNumGpus) {
  instances = replace_once(instances, "\"num_gpus\": 1,", "");
  const std::string msg = load_error();
  EXPECT_THAT(msg, HasSubstr("instance \"test-gpu-1xa10g\": field \"num_gpus\": expected a "
                             "positive integer, got nothing (field missing)"));
}

TEST_F(CatalogErrors, UnknownDeviceKind) {
  instances = replace_once(instances, "\"device_kind\": \"cpu\",\n      \"cpu\": \"epyc-9654\"",
                           "\"device_kind\": \"tpu\",\n      \"cpu\": \"epyc-9654\"");
  EXPECT_EQ(load_error(), instances_path() +
                              ": instance \"test-cpu-128g\": field \"device_kind\": expected "
                              "\"cpu\" or \"gpu\", got \"tpu\"");
}

// ---- Socket links and networks (optional, each with its own source) -----------------------

constexpr const char* kSocketLink =
    "\"socket_link\": {\"bandwidth_bytes_per_s\": 1.28e11, \"latency_s\": 2e-7, "
    "\"source\": \"link datasheet\", \"as_of\": \"2024-06-01\"}, \"tdp_watts\": 350";
constexpr const char* kNetwork =
    "\"network\": {\"bandwidth_bytes_per_s\": 4e11, \"latency_s\": 1.5e-5, \"source\": "
    "\"provider page\", \"as_of\": \"2025-02-01\", \"note\": \"EFA\"}, \"usd_per_hour\": 98.32";

TEST_F(CatalogErrors, SocketLinkAndNetworkFields) {
  cpus = replace_once(cpus, "\"tdp_watts\": 350", kSocketLink);
  instances = replace_once(instances, "\"usd_per_hour\": 98.32", kNetwork);
  write_text(dir / "hardware/cpus.json", cpus);
  write_text(dir / "hardware/gpus.json", gpus);
  write_text(dir / "instances/instances.json", instances);
  const Catalog c = Catalog::load(dir);
  const HardwareSpec& xeon = c.hardware("xeon-8480plus", "test");
  EXPECT_EQ(xeon.socket_link_bandwidth_bytes_per_s, 1.28e11);
  EXPECT_EQ(xeon.socket_link_latency_s, 2e-7);
  EXPECT_EQ(xeon.socket_link_source, "link datasheet");
  EXPECT_EQ(xeon.socket_link_as_of, "2024-06-01");
  EXPECT_EQ(c.hardware("epyc-9654", "test").socket_link_bandwidth_bytes_per_s, 0);  // optional
  const InstanceType& p5 = c.instance("test-gpu-8xh100", "test");
  EXPECT_EQ(p5.network_bandwidth_bytes_per_s, 4e11);
  EXPECT_EQ(p5.network_latency_s, 1.5e-5);
  EXPECT_EQ(p5.network_source, "provider page");
  EXPECT_EQ(p5.network_as_of, "2025-02-01");
  EXPECT_EQ(p5.network_note, "EFA");
  EXPECT_EQ(c.instance("test-gpu-1xa10g", "test").network_bandwidth_bytes_per_s, 0);
}

TEST_F(CatalogErrors, GpuHostLinkIsOptionalWithItsOwnSource) {
  gpus = replace_once(gpus, "\"tdp_watts\": 700",
                      "\"host_link\": {\"bandwidth_bytes_per_s\": 6.4e10, \"basis\": \"PCIe 5.0 "
                      "x16\", \"source\": \"GPU datasheet\", \"as_of\": \"2023-01-01\"}, "
                      "\"tdp_watts\": 700");
  write_text(dir / "hardware/cpus.json", cpus);
  write_text(dir / "hardware/gpus.json", gpus);
  write_text(dir / "instances/instances.json", instances);
  const Catalog c = Catalog::load(dir);
  const HardwareSpec& h100 = c.hardware("h100-sxm", "test");
  EXPECT_EQ(h100.host_link_bandwidth_bytes_per_s, 6.4e10);
  EXPECT_EQ(h100.host_link_basis, "PCIe 5.0 x16");
  EXPECT_EQ(h100.host_link_source, "GPU datasheet");
  EXPECT_EQ(h100.host_link_as_of, "2023-01-01");
  EXPECT_EQ(c.hardware("a10g", "test").host_link_bandwidth_bytes_per_s, 0);  // optional
}

TEST_F(CatalogErrors, GpuHostLinkZeroBandwidth) {
  gpus = replace_once(gpus, "\"tdp_watts\": 700",
                      "\"host_link\": {\"bandwidth_bytes_per_s\": 0, \"basis\": \"b\", "
                      "\"source\": \"s\", \"as_of\": \"2023-01-01\"}, \"tdp_watts\": 700");
  EXPECT_EQ(load_error(), gpus_path() +
                              ": gpu \"h100-sxm\": field \"host_link.bandwidth_bytes_per_s\": "
                              "expected a positive number, got 0");
}

TEST_F(CatalogErrors, SocketLinkNotAnObject) {
  cpus = replace_once(cpus, "\"tdp_watts\": 350", "\"socket_link\": 5, \"tdp_watts\": 350");
  EXPECT_EQ(load_error(), cpus_path() +
                              ": cpu \"xeon-8480plus\": field \"socket_link\": expected an "
                              "object, got 5");
}

TEST_F(CatalogErrors, SocketLinkZeroBandwidth) {
  cpus = replace_once(cpus, "\"tdp_watts\": 350", replace_once(kSocketLink, "1.28e11", "0"));
  EXPECT_EQ(load_error(), cpus_path() +
                              ": cpu \"xeon-8480plus\": field \"socket_link.bandwidth_bytes_per_s\""
                              ": expected a positive number, got 0");
}

TEST_F(CatalogErrors, SocketLinkWithoutSource) {
  cpus = replace_once(cpus, "\"tdp_watts\": 350",
                      replace_once(kSocketLink, "\"source\": \"link datasheet\", ", ""));
  EXPECT_EQ(load_error(), cpus_path() +
                              ": cpu \"xeon-8480plus\": field \"socket_link.source\": expected a "
                              "non-empty string, got nothing (field missing)");
}

TEST_F(CatalogErrors, SocketLinkOnAGpu) {
  gpus = replace_once(gpus, "\"tdp_watts\": 700", "\"socket_link\": {}, \"tdp_watts\": 700");
  EXPECT_THAT(load_error(), HasSubstr("gpu \"h100-sxm\": field \"socket_link\": expected no such "
                                      "field on a GPU"));
}

TEST_F(CatalogErrors, NetworkNegativeLatency) {
  instances =
      replace_once(instances, "\"usd_per_hour\": 98.32", replace_once(kNetwork, "1.5e-5", "-1"));
  EXPECT_EQ(load_error(), instances_path() +
                              ": instance \"test-gpu-8xh100\": field \"network.latency_s\": "
                              "expected a non-negative number, got -1");
}

TEST_F(CatalogErrors, NetworkWithoutAsOf) {
  instances = replace_once(instances, "\"usd_per_hour\": 98.32",
                           replace_once(kNetwork, ", \"as_of\": \"2025-02-01\"", ""));
  EXPECT_EQ(load_error(), instances_path() +
                              ": instance \"test-gpu-8xh100\": field \"network.as_of\": expected "
                              "a non-empty string, got nothing (field missing)");
}

}  // namespace
}  // namespace llmcap::model
