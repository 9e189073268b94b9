#include "model/deployment.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "model/input_error.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kRelTol = 1e-9;

ModelSpec load(const std::string& name) {
  return load_model_spec(llmcap::testing::test_data("models/" + name + ".json"));
}

Catalog fixture_catalog() { return Catalog::load(llmcap::testing::test_data("catalog")); }

TEST(MakeDeployment, CpuSliceGetsItsShareOfTheSocket) {
  const Catalog c = fixture_catalog();
  const ModelSpec m = load("llama-3.1-8b");
  const Deployment d = make_deployment(c.instance("test-cpu-slice", "t"), c, m, WeightFormat::kBf16,
                                       KvFormat::kBf16, default_efficiency(DeviceKind::kCpu));
  EXPECT_EQ(d.kind, DeviceKind::kCpu);
  EXPECT_EQ(d.tp_degree, 1);
  EXPECT_EQ(d.num_replicas, 1);
  // 48 of 56 cores x 2 threads = 48/112 = 3/7 of the socket.
  EXPECT_NEAR(d.memory_bandwidth_bytes_per_s, 307.2e9 * 3 / 7, 307.2e9 * kRelTol);
  EXPECT_NEAR(d.peak_flops_per_s.at("bf16"), 2.0e14 * 3 / 7, 2.0e14 * kRelTol);
  EXPECT_NEAR(d.peak_flops_per_s.at("int8"), 4.0e14 * 3 / 7, 4.0e14 * kRelTol);
  EXPECT_EQ(d.link_bandwidth_bytes_per_s, 0);
  EXPECT_EQ(d.memory_bytes, 206'158'430'208);  // 192 GiB
  EXPECT_EQ(d.weight_bytes, 16'060'522'496);
  // round(0.9 x 206,158,430,208 = 185,542,587,187.2) - weights - 1 GiB reserve.
  EXPECT_EQ(d.kv_cache_bytes, 185'542'587'187 - 16'060'522'496 - 1'073'741'824);
  EXPECT_THAT(d.rule, HasSubstr("slice of 48/112 vCPUs of one Intel Xeon Platinum 8480+ socket: "
                                "42.9% of 307.2 GB/s"));
}

TEST(MakeDeployment, CpuWholeSocketsGetOneReplicaEach) {
  const Catalog c = fixture_catalog();
  const Deployment d =
      make_deployment(c.instance("test-cpu-2socket", "t"), c, load("llama-3.1-8b"),
                      WeightFormat::kBf16, KvFormat::kBf16, default_efficiency(DeviceKind::kCpu));
  EXPECT_EQ(d.num_replicas, 2);  // floor(224 / 112)
  EXPECT_EQ(d.tp_degree, 1);
  EXPECT_EQ(d.memory_bandwidth_bytes_per_s, 307.2e9);
  EXPECT_EQ(d.peak_flops_per_s.at("bf16"), 2.0e14);
  EXPECT_EQ(d.memory_bytes, 549'755'813'888 / 2);
  // round(0.9 x 274,877,906,944 = 247,390,116,249.6) - weights - reserve.
  EXPECT_EQ(d.kv_cache_bytes, 247'390'116'250 - 16'060'522'496 - 1'073'741'824);
  EXPECT_THAT(d.rule, HasSubstr("2 replicas, one per whole Intel Xeon Platinum 8480+ socket "
                                "(112 of 224 vCPUs each)"));
}

TEST(MakeDeployment, VcpusPerSocketCountsSocketsWhenSmtIsOff) {
  // AWS m7a style: 192 vCPUs that are 192 whole cores of two 96-core sockets (SMT off). The
  // CPU record says 56 cores x 2 threads; the instance's vcpus_per_socket overrides it.
  Catalog c = fixture_catalog();
  InstanceType i = c.instance("test-cpu-2socket", "t");
  i.id = "test-cpu-smt-off";
  i.vcpus = 192;
  i.vcpus_per_socket = 96;
  c.add_instance(i);
  const Deployment whole =
      make_deployment(c.instance("test-cpu-smt-off", "t"), c, load("llama-3.1-8b"),
                      WeightFormat::kBf16, KvFormat::kBf16, default_efficiency(DeviceKind::kCpu));
  EXPECT_EQ(whole.num_replicas, 2);
  EXPECT_EQ(whole.memory_bandwidth_bytes_per_s, 307.2e9);
  i.id = "test-cpu-smt-off-slice";
  i.vcpus = 32;
  c.add_instance(i);
  const Deployment slice =
      make_deployment(c.instance("test-cpu-smt-off-slice", "t"), c, load("llama-3.1-8b"),
                      WeightFormat::kBf16, KvFormat::kBf16, default_efficiency(DeviceKind::kCpu));
  EXPECT_EQ(slice.num_replicas, 1);
  EXPECT_NEAR(slice.memory_bandwidth_bytes_per_s, 307.2e9 / 3, 307.2e9 * kRelTol);  // 32 / 96
  EXPECT_THAT(slice.rule, HasSubstr("slice of 32/96 vCPUs"));
}

TEST(MakeDeployment, GpuSmallModelRunsOneReplicaPerGpu) {
  const Catalog c = fixture_catalog();
  const Deployment d =
      make_deployment(c.instance("test-gpu-8xh100", "t"), c, load("llama-3.1-8b"),
                      WeightFormat::kBf16, KvFormat::kBf16, default_efficiency(DeviceKind::kGpu));
  EXPECT_EQ(d.kind, DeviceKind::kGpu);
  EXPECT_EQ(d.tp_degree, 1);
  EXPECT_EQ(d.num_replicas, 8);
  EXPECT_EQ(d.memory_bandwidth_bytes_per_s, 3.35e12);
  EXPECT_EQ(d.peak_flops_per_s.at("fp8"), 1.979e15);
  EXPECT_EQ(d.link_bandwidth_bytes_per_s, 0);  // tp 1
  EXPECT_EQ(d.memory_bytes, 85'899'345'920);
  // 0.9 x 85,899,345,920 = 77,309,411,328 - 16,060,522,496 - 1 GiB = 60,175,147,008.
  EXPECT_EQ(d.kv_cache_bytes, 60'175'147'008);
  EXPECT_THAT(d.rule, HasSubstr("1 of 8 NVIDIA H100 SXM 80GB GPUs per replica (tp=1), 8 replicas"));
}

TEST(MakeDeployment, Gpu70bNeedsTwoGpus) {
  const Catalog c = fixture_catalog();
  const Deployment d =
      make_deployment(c.instance("test-gpu-8xh100", "t"), c, load("llama-3.1-70b"),
                      WeightFormat::kBf16, KvFormat::kBf16, default_efficiency(DeviceKind::kGpu));
  // tp 1: 77.3e9 usable < 141.1e9 of weights. tp 2: 0.9 x 171,798,691,840 = 154,618,822,656
  // - 141,107,412,992 - 2 x 1 GiB = 11,363,926,016 >= 32768 x 327,680 = 10,737,418,240.
  EXPECT_EQ(d.tp_degree, 2);
  EXPECT_EQ(d.num_replicas, 4);
  EXPECT_EQ(d.memory_bytes, 171'798'691'840);
  EXPECT_EQ(d.kv_cache_bytes, 11'363'926'016);
  EXPECT_EQ(d.link_bandwidth_bytes_per_s, 4.5e11);
  EXPECT_THAT(d.rule, HasSubstr("(tp=2), 4 replicas"));
}

TEST(MakeDeployment, GpuTpGrowsUntilOneSequenceOfKvFits) {
  const Catalog c = fixture_catalog();
  // f32 KV: one 32768-token sequence needs 32768 x 655,360 = 21,474,836,480 bytes > the
  // 11,363,926,016 left at tp 2; tp 4 leaves 0.9 x 343,597,383,680 - 141,107,412,992 - 4 GiB
  // = 163,835,265,024.
  const Deployment d =
      make_deployment(c.instance("test-gpu-8xh100", "t"), c, load("llama-3.1-70b"),
                      WeightFormat::kBf16, KvFormat::kF32, default_efficiency(DeviceKind::kGpu));
  EXPECT_EQ(d.tp_degree, 4);
  EXPECT_EQ(d.num_replicas, 2);
  EXPECT_EQ(d.kv_cache_bytes, 163'835'265'024);
}

std::string infeasible_message(const std::string& instance, const std::string& model, KvFormat kv) {
  const Catalog c = fixture_catalog();
  const InstanceType& inst = c.instance(instance, "t");
  try {
    make_deployment(inst, c, load(model), WeightFormat::kBf16, kv, default_efficiency(inst.kind));
  } catch (const InfeasibleError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected InfeasibleError";
  return "";
}

TEST(MakeDeployment, Llama70bDoesNotFitA128GiBCpuInstance) {
  // 2 x 70,553,706,496 = 141,107,412,992 bytes of bf16 weights; 0.9 x 137,438,953,472 =
  // 123,695,058,124.8, rounded 123,695,058,125.
  EXPECT_EQ(infeasible_message("test-cpu-128g", "llama-3.1-70b", KvFormat::kBf16),
            "model \"llama-3.1-70b\" on instance \"test-cpu-128g\": weights need 141.1 GB "
            "(bf16), instance has 123.7 GB usable (0.9 x 137.4 GB) and keeps 1.074 GB for "
            "activations");
}

TEST(MakeDeployment, KvForOneSequenceMustFit) {
  // A10G: 0.9 x 25,769,803,776 = 23,192,823,398.4 usable; 16,060,522,496 weights + 1 GiB +
  // 32768 x 262,144 (f32 KV) = 25,724,198,912 > usable.
  const std::string msg = infeasible_message("test-gpu-1xa10g", "llama-3.1-8b", KvFormat::kF32);
  EXPECT_THAT(msg, HasSubstr("model \"llama-3.1-8b\" on instance \"test-gpu-1xa10g\""));
  EXPECT_THAT(msg, HasSubstr("8.59 GB of f32 KV cache for one 32768-token sequence = 25.72 GB"));
  EXPECT_THAT(msg, HasSubstr("instance has 23.19 GB usable (0.9 x 25.77 GB)"));
  EXPECT_THAT(msg, Not(HasSubstr("bytes")));  // decimal GB in every human-facing figure
}

TEST(MakeDeployment, ShortContextModelNeedsLessKv) {
  // GPT-NeoX-20B: max_position_embeddings 2048 < 32768 sets the sequence that must fit.
  const Catalog c = fixture_catalog();
  const Deployment d =
      make_deployment(c.instance("test-gpu-8xh100", "t"), c, load("gpt-neox-20b"),
                      WeightFormat::kBf16, KvFormat::kBf16, default_efficiency(DeviceKind::kGpu));
  EXPECT_EQ(d.tp_degree, 1);  // 41,109,135,360 + 1 GiB + 2048 x 1,081,344 < 77,309,411,328
  EXPECT_EQ(d.kv_cache_bytes, 77'309'411'328 - 41'109'135'360 - 1'073'741'824);
}

TEST(MakeDeployment, UnknownHardwareIsAnInputError) {
  const Catalog c = fixture_catalog();
  InstanceType inst = c.instance("test-gpu-1xa10g", "t");
  inst.gpu_id = "l4";
  try {
    make_deployment(inst, c, load("llama-3.1-8b"), WeightFormat::kBf16, KvFormat::kBf16,
                    default_efficiency(DeviceKind::kGpu));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()),
                HasSubstr("instance \"test-gpu-1xa10g\": unknown hardware \"l4\"; known: "));
  }
}

TEST(MakeDeployment, HardwareOfTheWrongKindIsAnInputError) {
  const Catalog c = fixture_catalog();
  InstanceType inst = c.instance("test-cpu-slice", "t");
  inst.cpu_id = "h100-sxm";
  try {
    make_deployment(inst, c, load("llama-3.1-8b"), WeightFormat::kBf16, KvFormat::kBf16,
                    default_efficiency(DeviceKind::kCpu));
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "instance \"test-cpu-slice\": field \"cpu\": expected the id "
              "of a CPU, got \"h100-sxm\" (a GPU)");
  }
}

TEST(ReplicaMemory, UsableIsTheRoundedFractionAndKvTheRest) {
  const ModelSpec m = load("llama-3.1-8b");
  const ReplicaMemory r = replica_memory(int64_t{192} << 30, kActivationReserveBytes, m,
                                         WeightFormat::kBf16, KvFormat::kBf16, 0.9);
  EXPECT_EQ(r.usable_bytes, 185'542'587'187);  // round(0.9 x 206,158,430,208)
  EXPECT_EQ(r.weight_bytes, 16'060'522'496);
  EXPECT_EQ(r.kv_cache_bytes, 185'542'587'187 - 16'060'522'496 - 1'073'741'824);
  EXPECT_EQ(r.fit_sequence_tokens, kMaxFitSequenceTokens);
  EXPECT_EQ(r.fit_sequence_kv_bytes,
            kMaxFitSequenceTokens * m.kv_cache_bytes_per_token(KvFormat::kBf16));
  EXPECT_TRUE(r.weights_fit());
  EXPECT_TRUE(r.sequence_fits());
  const ReplicaMemory small = replica_memory(int64_t{16} << 30, kActivationReserveBytes, m,
                                             WeightFormat::kBf16, KvFormat::kBf16, 0.9);
  EXPECT_FALSE(small.weights_fit());
  EXPECT_FALSE(small.sequence_fits());
}

TEST(SocketThreads, VcpusPerSocketWinsOverCoresTimesThreads) {
  HardwareSpec cpu;
  cpu.num_cores = 56;
  cpu.threads_per_core = 2;
  InstanceType slice;
  slice.vcpus = 48;
  EXPECT_EQ(socket_threads_of(slice, cpu), 112);
  EXPECT_EQ(whole_sockets_of(slice, cpu), 0);
  InstanceType two;
  two.vcpus = 224;
  EXPECT_EQ(whole_sockets_of(two, cpu), 2);
  two.vcpus_per_socket = 56;  // SMT off
  EXPECT_EQ(socket_threads_of(two, cpu), 56);
  EXPECT_EQ(whole_sockets_of(two, cpu), 4);
}

}  // namespace
}  // namespace llmcap::model
