// Tensor parallelism per instance type (GPUs and the sockets of a two-socket CPU host), and
// given mixed or disaggregated fleets evaluated by the planner.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "model/input_error.h"
#include "model/roofline.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "synthetic_catalog.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

using ::testing::HasSubstr;

constexpr double kRelTol = 1e-12;

/// A two-socket CPU; with `link`, its socket link is 128 GB/s per direction and 200 ns.
model::HardwareSpec test_cpu(const std::string& id, bool link) {
  model::HardwareSpec c;
  c.id = id;
  c.name = "Test CPU " + id;
  c.kind = model::DeviceKind::kCpu;
  c.num_cores = 56;
  c.threads_per_core = 2;
  c.clock_hz = 2e9;
  c.memory_channels = 8;
  c.peak_memory_bandwidth_bytes_per_s = 3e11;
  c.peak_flops_per_s = {{"f32", 7e12}, {"bf16", 1e14}, {"int8", 2e14}};
  c.tdp_watts = 350;
  c.source = "synthetic";
  c.as_of = "2026-11-29";
  if (link) {
    c.socket_link_bandwidth_bytes_per_s = 1.28e11;
    c.socket_link_latency_s = 2e-7;
    c.socket_link_source = "synthetic";
    c.socket_link_as_of = "2026-11-29";
  }
  return c;
}

model::InstanceType instance(const std::string& id, model::DeviceKind kind, double usd_per_hour) {
  model::InstanceType i;
  i.id = id;
  i.provider = "Test";
  i.name = id;
  i.region = "test-1";
  i.kind = kind;
  i.usd_per_hour = usd_per_hour;
  i.source = "synthetic";
  i.as_of = "2026-11-29";
  return i;
}

model::InstanceType gpu_instance(const std::string& id, int num_gpus, double usd_per_hour) {
  model::InstanceType i = testing::synthetic_gpu_instance(id, "big", num_gpus, usd_per_hour);
  i.vcpus = 16 * num_gpus;
  i.network_bandwidth_bytes_per_s = 3.125e9;  // 25 Gbit/s
  i.network_latency_s = 5e-5;
  return i;
}

model::InstanceType cpu_instance(const std::string& id, const std::string& cpu, int vcpus,
                                 double usd_per_hour) {
  model::InstanceType i = instance(id, model::DeviceKind::kCpu, usd_per_hour);
  i.cpu_id = cpu;
  i.vcpus = vcpus;
  i.memory_bytes = int64_t{512} << 30;
  return i;
}

/// GPU instances of 1 and 4 GPUs; CPU hosts of two sockets with and without a socket link,
/// and a 16-vCPU slice of one socket.
model::Catalog test_catalog() {
  model::Catalog c;
  c.add_hardware(testing::synthetic_gpu("big", int64_t{80} << 30, 2e12, 5e14));
  c.add_hardware(test_cpu("cpu2s", true));
  c.add_hardware(test_cpu("nolink", false));
  c.add_instance(gpu_instance("gpu-1x", 1, 2.0));
  c.add_instance(gpu_instance("gpu-4x", 4, 8.0));
  c.add_instance(cpu_instance("cpu-2socket", "cpu2s", 224, 9.0));
  c.add_instance(cpu_instance("cpu-2socket-nolink", "nolink", 224, 9.0));
  c.add_instance(cpu_instance("cpu-slice", "cpu2s", 16, 0.7));
  return c;
}

model::ModelSpec llama_8b() {
  return model::load_model_spec(llmcap::testing::data_dir() / "models" / "llama-3.1-8b.json");
}

Scenario test_scenario() {
  Scenario s;
  s.file = "test-scenario.json";
  s.name = "test";
  s.model_config = llmcap::testing::data_dir() / "models" / "llama-3.1-8b.json";
  s.workload.kind = WorkloadSpec::Kind::kPoisson;
  s.workload.path = std::filesystem::path(LLMCAP_TEST_DATA_DIR) / "lengths.csv";
  s.workload.rate_per_s = 6.0;
  s.workload.num_requests = 300;
  s.slo.ttft_s = 5.0;
  s.slo.tpot_s = 0.15;
  s.seed = 3;
  s.max_instances = 16;
  return s;
}

const model::InstanceType& inst(const model::Catalog& c, const std::string& id) {
  return c.instance(id, "test");
}

// ---- tensor-parallel degrees -----------------------------------------------------------------

TEST(TensorParallel, OptionsPerInstanceType) {
  const model::Catalog c = test_catalog();
  const model::ModelSpec m = llama_8b();
  EXPECT_EQ(tp_options(inst(c, "gpu-1x"), c, m), (std::vector<int>{1}));
  EXPECT_EQ(tp_options(inst(c, "gpu-4x"), c, m), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(tp_options(inst(c, "cpu-2socket"), c, m), (std::vector<int>{1, 2}));
  EXPECT_EQ(tp_options(inst(c, "cpu-2socket-nolink"), c, m), (std::vector<int>{1}));
  EXPECT_EQ(tp_options(inst(c, "cpu-slice"), c, m), (std::vector<int>{1}));
}

TEST(TensorParallel, RefusalsNameTheReason) {
  const model::Catalog c = test_catalog();
  model::ModelSpec m = llama_8b();
  EXPECT_EQ(tp_refusal(inst(c, "gpu-4x"), c, m, 2), "");
  EXPECT_EQ(tp_refusal(inst(c, "gpu-1x"), c, m, 2),
            "tp 2 is larger than the instance's 1 GPU (Test GPU big)");
  EXPECT_EQ(tp_refusal(inst(c, "gpu-4x"), c, m, 8),
            "tp 8 is larger than the instance's 4 GPUs (Test GPU big)");
  EXPECT_EQ(tp_refusal(inst(c, "gpu-4x"), c, m, 3),
            "tp 3 does not divide the instance's 4 GPUs (a replica takes tp whole GPUs)");
  EXPECT_EQ(tp_refusal(inst(c, "cpu-slice"), c, m, 2),
            "tp 2 is larger than the instance's 1 socket (a 16-vCPU slice of one 112-vCPU Test "
            "CPU cpu2s socket)");
  EXPECT_EQ(tp_refusal(inst(c, "cpu-2socket"), c, m, 4),
            "tp 4 is larger than the instance's 2 sockets (Test CPU cpu2s)");
  EXPECT_EQ(tp_refusal(inst(c, "cpu-2socket-nolink"), c, m, 2),
            "tp 2 all-reduces over the inter-socket link of \"nolink\", which hardware/cpus.json "
            "does not give (field \"socket_link\")");
  EXPECT_EQ(tp_refusal(inst(c, "gpu-1x"), c, m, 0),
            "tp 0 is not a degree (at least 1 device per replica)");
  m.num_attention_heads = 6;  // a model vLLM cannot shard 4 ways
  EXPECT_EQ(tp_refusal(inst(c, "gpu-4x"), c, m, 4),
            "tp 4 does not divide the model's 6 attention heads");
  try {
    deployment_for_tp(inst(c, "gpu-1x"), c, llama_8b(), model::WeightFormat::kBf16,
                      model::KvFormat::kBf16, model::default_efficiency(model::DeviceKind::kGpu),
                      2);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "instance \"gpu-1x\": tp 2 is larger than the instance's 1 GPU (Test GPU big); "
              "expected one of: 1");
  }
}

TEST(TensorParallel, PlanRefusesAnImpossibleDegreeBeforeTheRun) {
  const model::Catalog c = test_catalog();
  struct CountingObserver : PlanObserver {
    int calls = 0;
    void on_row_done(const PlanRow&, size_t, size_t) override { ++calls; }
  } observer;
  PlanOptions options;
  options.observer = &observer;
  auto error_of = [&](const Scenario& s) -> std::string {
    try {
      plan(s, c, options);
    } catch (const InputError& e) {
      return e.what();
    }
    return "no error";
  };
  Scenario s = test_scenario();
  s.candidates = {"gpu-1x"};
  s.tensor_parallel.mode = TensorParallelSpec::Mode::kPerType;
  s.tensor_parallel.per_type = {{"gpu-1x", 2}};
  EXPECT_EQ(error_of(s),
            "test-scenario.json: field \"serving.tensor_parallel.gpu-1x\": instance \"gpu-1x\": "
            "tp 2 is larger than the instance's 1 GPU (Test GPU big); expected one of: 1");
  s.tensor_parallel.per_type = {{"cpu-slice", 2}};
  EXPECT_THAT(error_of(s), HasSubstr("field \"serving.tensor_parallel.cpu-slice\": instance "
                                     "\"cpu-slice\": tp 2 is larger than the instance's 1 "
                                     "socket"));
  s.tensor_parallel.per_type = {{"gpu-9x", 2}};
  EXPECT_EQ(error_of(s),
            "test-scenario.json: field \"serving.tensor_parallel.gpu-9x\": unknown instance type "
            "\"gpu-9x\"; known: gpu-1x, gpu-4x, cpu-2socket, cpu-2socket-nolink, cpu-slice");
  Scenario f = test_scenario();
  f.fleet = FleetSpec{};
  FleetGroupSpec g;
  g.field = "fleet.groups[0]";
  g.instance = "cpu-2socket-nolink";
  g.tensor_parallel = 2;
  f.fleet->groups = {g};
  EXPECT_EQ(error_of(f),
            "test-scenario.json: field \"fleet.groups[0].tensor_parallel\": instance "
            "\"cpu-2socket-nolink\": tp 2 all-reduces over the inter-socket link of \"nolink\", "
            "which hardware/cpus.json does not give (field \"socket_link\"); expected one of: 1");
  EXPECT_EQ(observer.calls, 0);  // nothing was planned or simulated
}

// tp = 2 on a two-socket host: one replica whose devices are the sockets; per layer two ring
// all-reduces of T x hidden bf16 values, each 2 (tp - 1) x 200 ns + 2 (tp-1)/tp x T x 4096 x 2
// bytes / (128 GB/s x 0.75). Llama's layer is one chain, so the step holds 32 x 2 of them.
TEST(TensorParallel, CpuAllReduceCostIsInStepTimes) {
  const model::Catalog c = test_catalog();
  const model::ModelSpec m = llama_8b();
  const model::InstanceType& host = inst(c, "cpu-2socket");
  const model::HardwareSpec& cpu = c.hardware("cpu2s", "test");
  const model::Efficiency base = model::default_efficiency(model::DeviceKind::kCpu);
  const model::Deployment d =
      deployment_for_tp(host, c, m, model::WeightFormat::kBf16, model::KvFormat::kBf16, base, 2);
  EXPECT_EQ(d.tp_degree, 2);
  EXPECT_EQ(d.num_replicas, 1);
  EXPECT_EQ(d.memory_bytes, host.memory_bytes);
  EXPECT_EQ(d.memory_bandwidth_bytes_per_s, 3e11);  // per device: one socket's
  EXPECT_EQ(d.link_bandwidth_bytes_per_s, 1.28e11);
  const model::Efficiency e = tp_efficiency(base, d, &cpu);
  EXPECT_NEAR(e.all_reduce_latency_s, 4e-7, 4e-7 * kRelTol);

  model::BatchShape batch;
  batch.num_decode_seqs = 8;
  batch.num_decode_context_tokens = 8000;
  const model::RooflinePredictor predictor(m, model::WeightFormat::kBf16, model::KvFormat::kBf16, d,
                                           e);
  const double link_bytes = 2.0 * (2 - 1) / 2 * 8 * 4096 * 2;
  const double all_reduce_s = 4e-7 + link_bytes / (1.28e11 * base.link_bandwidth_fraction);
  int num_all_reduces = 0;
  for (const model::OpTime& op : predictor.breakdown(batch)) {
    if (op.op.find("all_reduce") == std::string::npos) continue;
    ++num_all_reduces;
    EXPECT_NEAR(op.time_s, all_reduce_s, all_reduce_s * kRelTol) << op.op;
  }
  EXPECT_EQ(num_all_reduces, 2);
  // The same replica with a free link: the step is 32 layers x 2 all-reduces shorter.
  model::Efficiency free_link = e;
  free_link.all_reduce_latency_s = 0;
  free_link.link_bandwidth_fraction = 1e30;
  const model::RooflinePredictor no_cost(m, model::WeightFormat::kBf16, model::KvFormat::kBf16, d,
                                         free_link);
  constexpr double kStepTol = 1e-9;
  EXPECT_NEAR(predictor.step_time_s(batch) - no_cost.step_time_s(batch), 64 * all_reduce_s,
              kStepTol * predictor.step_time_s(batch));
  // Against one replica per socket (tp 1): each device streams half the weights, so the step
  // is shorter, but not half as long (the all-reduces, and the per-step overhead).
  const model::Deployment d1 =
      deployment_for_tp(host, c, m, model::WeightFormat::kBf16, model::KvFormat::kBf16, base, 1);
  EXPECT_EQ(d1.tp_degree, 1);
  EXPECT_EQ(d1.num_replicas, 2);
  const model::RooflinePredictor one_socket(m, model::WeightFormat::kBf16, model::KvFormat::kBf16,
                                            d1, base);
  EXPECT_LT(predictor.step_time_s(batch), one_socket.step_time_s(batch));
  EXPECT_GT(predictor.step_time_s(batch), 0.5 * one_socket.step_time_s(batch));
}

// On GPUs a chosen degree follows make_deployment's rule at that degree: the degree it picks
// itself gives the same deployment; tp = 2 doubles the replica's memory and halves replicas.
TEST(TensorParallel, GpuDegreeFollowsMakeDeploymentsRule) {
  const model::Catalog c = test_catalog();
  const model::ModelSpec m = llama_8b();
  const model::Efficiency e = model::default_efficiency(model::DeviceKind::kGpu);
  const model::InstanceType& four = inst(c, "gpu-4x");
  const model::Deployment automatic =
      model::make_deployment(four, c, m, model::WeightFormat::kBf16, model::KvFormat::kBf16, e);
  const model::Deployment one =
      deployment_for_tp(four, c, m, model::WeightFormat::kBf16, model::KvFormat::kBf16, e, 1);
  EXPECT_EQ(automatic.tp_degree, 1);
  EXPECT_EQ(one.num_replicas, automatic.num_replicas);
  EXPECT_EQ(one.memory_bytes, automatic.memory_bytes);
  EXPECT_EQ(one.kv_cache_bytes, automatic.kv_cache_bytes);
  EXPECT_EQ(one.rule, automatic.rule);  // make_deployment's own, at its own degree
  EXPECT_EQ(one.link_bandwidth_bytes_per_s, 0);
  const model::Deployment two =
      deployment_for_tp(four, c, m, model::WeightFormat::kBf16, model::KvFormat::kBf16, e, 2);
  EXPECT_EQ(two.tp_degree, 2);
  EXPECT_EQ(two.num_replicas, 2);
  EXPECT_EQ(two.memory_bytes, 2 * (int64_t{80} << 30));
  const int64_t usable = std::llround(0.9 * static_cast<double>(two.memory_bytes));
  EXPECT_EQ(two.kv_cache_bytes, usable - m.weight_bytes(model::WeightFormat::kBf16) -
                                    2 * model::kActivationReserveBytes);
  EXPECT_EQ(two.link_bandwidth_bytes_per_s, 3e11);
}

// "search" plans each degree and keeps the cheapest; each option is what planning at that
// fixed degree gives.
TEST(TensorParallel, SearchKeepsTheCheapestDegree) {
  const model::Catalog c = test_catalog();
  Scenario s = test_scenario();
  s.candidates = {"cpu-2socket"};
  s.tensor_parallel.mode = TensorParallelSpec::Mode::kSearch;
  const PlanRow row = plan(s, c).rows.at(0);
  ASSERT_EQ(row.tp_options.size(), 2u);
  EXPECT_EQ(row.tp_options[0].tp_degree, 1);
  EXPECT_EQ(row.tp_options[1].tp_degree, 2);
  ASSERT_TRUE(row.feasible) << row.infeasible_reason;
  double cheapest = 1e300;
  for (const TpOptionRow& o : row.tp_options) {
    if (o.feasible) cheapest = std::min(cheapest, o.usd_per_hour);
  }
  EXPECT_EQ(row.usd_per_hour, cheapest);
  for (const TpOptionRow& o : row.tp_options) {
    Scenario fixed = test_scenario();
    fixed.candidates = {"cpu-2socket"};
    fixed.tensor_parallel.mode = TensorParallelSpec::Mode::kPerType;
    fixed.tensor_parallel.per_type = {{"cpu-2socket", static_cast<int>(o.tp_degree)}};
    const PlanRow at = plan(fixed, c).rows.at(0);
    EXPECT_EQ(at.tp_degree, o.tp_degree);
    EXPECT_EQ(at.feasible, o.feasible);
    EXPECT_EQ(at.num_instances, o.num_instances);
    EXPECT_EQ(at.usd_per_hour, o.usd_per_hour);
  }
  // tp 2 halves the bytes each socket streams per decode step: a lower TPOT floor.
  Scenario two = s;
  two.tensor_parallel.mode = TensorParallelSpec::Mode::kPerType;
  two.tensor_parallel.per_type = {{"cpu-2socket", 2}};
  Scenario one = two;
  one.tensor_parallel.per_type = {{"cpu-2socket", 1}};
  EXPECT_LT(plan(two, c).rows.at(0).tpot_floor_s, plan(one, c).rows.at(0).tpot_floor_s);
}

// ---- given fleets -----------------------------------------------------------------------------

FleetGroupSpec fleet_group(const Scenario& s, const std::string& field, const std::string& id,
                           int64_t count, sim::ReplicaRole role, int tp = 0) {
  FleetGroupSpec g;
  g.field = field;
  g.instance = id;
  g.count = count;
  g.role = role;
  g.tensor_parallel = tp;
  g.serving = s.serving;
  return g;
}

TEST(GivenFleet, MixedFleetReportsMetricsAndCost) {
  const model::Catalog c = test_catalog();
  Scenario s = test_scenario();
  s.fleet = FleetSpec{};
  s.fleet->groups = {
      fleet_group(s, "fleet.groups[0]", "gpu-1x", 1, sim::ReplicaRole::kUnified),
      fleet_group(s, "fleet.groups[1]", "cpu-2socket", 2, sim::ReplicaRole::kUnified, 2)};
  const PlanResult result = plan(s, c);
  ASSERT_EQ(result.rows.size(), 1u);
  const PlanRow& row = result.rows[0];
  EXPECT_EQ(row.instance_type, "fleet: 1 x gpu-1x + 2 x cpu-2socket");
  EXPECT_EQ(row.instance_name, "mixed fleet");
  EXPECT_EQ(row.device_kind, model::DeviceKind::kGpu);
  EXPECT_EQ(row.num_instances, 3);
  EXPECT_EQ(row.usd_per_hour, 2.0 + 2 * 9.0);
  EXPECT_NEAR(row.annual_usd, row.usd_per_hour * 8760, row.annual_usd * kRelTol);
  EXPECT_EQ(row.num_simulations, 1);
  EXPECT_EQ(row.tp_degree, 0);  // the groups differ
  ASSERT_EQ(row.groups.size(), 2u);
  EXPECT_EQ(row.groups[0].tp_degree, 1);
  EXPECT_EQ(row.groups[1].tp_degree, 2);
  EXPECT_EQ(row.groups[1].num_replicas_per_instance, 1);
  EXPECT_EQ(row.groups[1].usd_per_hour, 18.0);
  EXPECT_GT(row.groups[1].num_kv_blocks, row.groups[0].num_kv_blocks);  // 512 GiB of RAM
  EXPECT_EQ(row.metrics.num_requests, 300);
  EXPECT_EQ(row.metrics.num_completed, 300);
  EXPECT_GT(row.usd_per_million_output_tokens, 0);
  EXPECT_EQ(row.feasible, meets_slo(row.metrics, s.slo));
  if (!row.feasible) {
    EXPECT_THAT(row.infeasible_reason,
                HasSubstr("the given fleet (USD 20.00/hour) misses the SLO"));
  }
  // The one simulation, again through evaluate_given_fleet: the same numbers.
  const FleetEvaluation e = evaluate_given_fleet(s, c);
  EXPECT_EQ(e.metrics.ttft.p99_s, row.metrics.ttft.p99_s);
  EXPECT_EQ(e.metrics.tpot.p99_s, row.metrics.tpot.p99_s);
}

/// Prefill on one 1-GPU instance, decode on another; the network of every instance set to
/// `bandwidth`.
Scenario disaggregated_scenario() {
  Scenario s = test_scenario();
  s.fleet = FleetSpec{};
  s.fleet->disaggregated = true;
  s.fleet->groups = {fleet_group(s, "fleet.prefill[0]", "gpu-1x", 1, sim::ReplicaRole::kPrefill),
                     fleet_group(s, "fleet.decode[0]", "gpu-1x", 1, sim::ReplicaRole::kDecode)};
  return s;
}

model::Catalog catalog_with_network(double bandwidth_bytes_per_s) {
  model::Catalog c;
  c.add_hardware(testing::synthetic_gpu("big", int64_t{80} << 30, 2e12, 5e14));
  model::InstanceType i = gpu_instance("gpu-1x", 1, 2.0);
  i.network_bandwidth_bytes_per_s = bandwidth_bytes_per_s;
  c.add_instance(i);
  return c;
}

TEST(GivenFleet, DisaggregatedFleetMovesEachPromptsKvOverTheNetwork) {
  const Scenario s = disaggregated_scenario();
  const model::Catalog c = catalog_with_network(3.125e9);
  const PlanRow row = plan(s, c).rows.at(0);
  EXPECT_EQ(row.instance_type, "fleet: 1 x gpu-1x prefill + 1 x gpu-1x decode");
  EXPECT_EQ(row.instance_name, "disaggregated fleet");
  EXPECT_EQ(row.usd_per_hour, 4.0);
  ASSERT_EQ(row.groups.size(), 2u);
  EXPECT_EQ(row.groups[0].role, "prefill");
  EXPECT_EQ(row.groups[1].role, "decode");
  EXPECT_EQ(row.groups[0].network_bandwidth_bytes_per_s, 3.125e9);  // 1 replica per instance
  // Every request with a second token moved prompt x 131,072 bytes (Llama-3.1-8B: 32 layers x
  // 8 KV heads x 128 x K and V x 2 bytes).
  const sim::Workload w = load_workload(s.workload, s.seed);
  int64_t num_moved = 0;
  int64_t bytes = 0;
  for (const sim::RequestSpec& r : w.open_loop) {
    if (r.num_output_tokens < 2) continue;
    ++num_moved;
    bytes += r.num_prompt_tokens * 131072;
  }
  EXPECT_EQ(row.num_kv_transfers, num_moved);
  EXPECT_EQ(row.kv_transfer_bytes, bytes);
  EXPECT_EQ(row.metrics.num_completed, 300);
  // A network 10 times slower: the moves take longer, and the gap after the first token
  // with them.
  const PlanRow slow = plan(s, catalog_with_network(3.125e8)).rows.at(0);
  EXPECT_GT(slow.metrics.e2e_latency.mean_s, row.metrics.e2e_latency.mean_s);
  EXPECT_GT(slow.metrics.tpot.mean_s, row.metrics.tpot.mean_s);
}

// The shipped example (data/scenarios/disaggregated-llama3.1-8b.json) meets its SLO on the
// shipped catalog: its type's network (the EC2 API's baseline, docs/catalog.md) carries the
// caches. g6e.xlarge's 2.5 Gbit/s baseline would not (issue 30, item 4).
TEST(GivenFleet, ShippedDisaggregatedExampleMeetsItsSlo) {
  const Scenario s =
      load_scenario(llmcap::testing::data_dir() / "scenarios" / "disaggregated-llama3.1-8b.json",
                    llmcap::testing::data_dir());
  const model::Catalog c = model::Catalog::load(llmcap::testing::data_dir());
  const PlanRow row = plan(s, c).rows.at(0);
  EXPECT_TRUE(row.feasible) << row.infeasible_reason;
  EXPECT_GT(row.groups.at(0).network_bandwidth_bytes_per_s, 1e9);
}

TEST(GivenFleet, DisaggregationNeedsNetworkFigures) {
  const Scenario s = disaggregated_scenario();
  model::Catalog c;
  c.add_hardware(testing::synthetic_gpu("big", int64_t{80} << 30, 2e12, 5e14));
  model::InstanceType i = gpu_instance("gpu-1x", 1, 2.0);
  i.network_bandwidth_bytes_per_s = 0;
  c.add_instance(i);
  try {
    plan(s, c);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "test-scenario.json: field \"fleet.prefill[0].instance\": instance \"gpu-1x\" has no "
              "network figures in instances/instances.json (field \"network\"); a disaggregated "
              "fleet needs them to move KV caches");
  }
}

TEST(GivenFleet, UnknownInstanceIsNamed) {
  Scenario s = disaggregated_scenario();
  s.fleet->groups[1].instance = "gpu-9x";
  try {
    plan(s, catalog_with_network(1e9));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "test-scenario.json: field \"fleet.decode[0].instance\": unknown instance type "
              "\"gpu-9x\"; known: gpu-1x");
  }
}

}  // namespace
}  // namespace llmcap::plan
