#include "model/audit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/calibration.h"
#include "model/input_error.h"
#include "model/roofline.h"
#include "test_util.h"

namespace llmcap::model {
namespace {

using llmcap::testing::error_message;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr double kRelTol = 1e-12;  // same arithmetic, different order of operations

// A tiny Llama-shaped model whose byte and FLOP counts are easy to work by hand:
// per layer q 64x64, k 32x64, v 32x64, o 64x64, gate/up 128x64, down 64x128 = 36,864 weights;
// 2 layers = 73,728; embedding and LM head 256x64 = 16,384 each (untied); norms 2 x 64 per layer
// + 64 = 320 weights (bf16).
ModelSpec tiny_model() {
  ModelSpec m;
  m.id = "tiny";
  m.architecture = Architecture::kLlama;
  m.hidden_size = 64;
  m.intermediate_size = 128;
  m.num_layers = 2;
  m.num_attention_heads = 4;
  m.num_kv_heads = 2;
  m.head_dim = 16;
  m.vocab_size = 256;
  m.max_position_embeddings = 4096;
  return m;
}

HardwareSpec cpu_spec(const std::string& id, double bf16_flops_per_s) {
  HardwareSpec h;
  h.id = id;
  h.name = "Test CPU " + id;
  h.kind = DeviceKind::kCpu;
  h.num_cores = 10;
  h.threads_per_core = 2;
  h.memory_channels = 2;
  h.peak_memory_bandwidth_bytes_per_s = 1e9;  // 2 channels x 62.5 MT/s x 8 bytes
  h.peak_flops_per_s = {{"f32", bf16_flops_per_s / 2}, {"bf16", bf16_flops_per_s}};
  h.source = "test";
  h.as_of = "2026-11-30";
  return h;
}

InstanceType cpu_instance(const std::string& id, const std::string& cpu, int vcpus,
                          int64_t memory_bytes) {
  InstanceType i;
  i.id = id;
  i.provider = "Test";
  i.name = id;
  i.kind = DeviceKind::kCpu;
  i.cpu_id = cpu;
  i.vcpus = vcpus;
  i.memory_bytes = memory_bytes;
  i.usd_per_hour = 1;
  i.source = "test";
  i.as_of = "2026-11-30";
  return i;
}

Catalog test_catalog() {
  Catalog c;
  c.add_hardware(cpu_spec("test-cpu", 1e12));
  c.add_hardware(cpu_spec("slow-cpu", 1e8));
  HardwareSpec gpu;
  gpu.id = "test-gpu";
  gpu.name = "Test GPU";
  gpu.kind = DeviceKind::kGpu;
  gpu.memory_bytes = 1'000'000;
  gpu.peak_memory_bandwidth_bytes_per_s = 1e10;
  gpu.peak_flops_per_s = {{"bf16", 1e13}};
  gpu.interconnect_bandwidth_bytes_per_s = 1e10;
  gpu.source = "test";
  gpu.as_of = "2026-11-30";
  c.add_hardware(gpu);
  c.add_instance(cpu_instance("test-slice", "test-cpu", 10, 4'000'000'000));  // 10 of 20 threads
  c.add_instance(cpu_instance("test-2s", "test-cpu", 40, 8'000'000'000));     // two whole sockets
  // Holds the tiny model physically, but not the planner's 1 GiB activation reserve.
  c.add_instance(cpu_instance("test-small-ram", "test-cpu", 10, 10'000'000));
  return c;
}

/// A latency claim of the tiny model: bf16 weights and KV cache, batch 2, context 100 tokens.
Claim tiny_claim(const std::string& hardware, double tpot_s) {
  Claim c;
  c.id = "c1";
  c.kind = ClaimKind::kTpot;
  c.hardware = hardware;
  c.model = "tiny";
  c.weight_format = WeightFormat::kBf16;
  c.kv_format = KvFormat::kBf16;
  c.batch = 2;
  c.context_tokens = 100;
  c.tpot_s = tpot_s;
  c.source = "test";
  c.as_of = "2026-11-30";
  return c;
}

// Hand-worked for tiny_claim:
//  weights (bf16) = 2 x (73,728 + 2 x 16,384) + 2 x 320 = 213,632 bytes;
//  read per step = 213,632 - 32,768 (input embedding) + 2 x 100 x 256 (KV: 2 x 2 layers x
//  2 heads x 16 x 2 bytes) = 180,864 + 51,200 = 232,064 bytes;
//  FLOPs = 2 x 2 x (73,728 + 16,384) + 4 x 2 x 100 x 2 layers x 64 = 360,448 + 102,400 = 462,848.
constexpr int64_t kTinyWeightBytes = 213'632;
constexpr int64_t kTinyBytesPerStep = 232'064;
constexpr double kTinyFlopsPerStep = 462'848;

double decode_step_s(const ModelSpec& m, const Deployment& d, const Efficiency& e) {
  const RooflinePredictor p(m, WeightFormat::kBf16, KvFormat::kBf16, d, e);
  BatchShape b;
  b.num_decode_seqs = 2;
  b.num_decode_context_tokens = 200;
  return p.step_time_s(b);
}

/// The planner's deployment of half a test-cpu socket (make_deployment's slice rule).
Deployment half_socket() {
  Deployment d;
  d.kind = DeviceKind::kCpu;
  d.memory_bandwidth_bytes_per_s = 0.5e9;
  d.peak_flops_per_s = {{"f32", 0.25e12}, {"bf16", 0.5e12}};
  return d;
}

TEST(AuditBound, IsBytesOverTheWholeSocketsBandwidthForASlice) {
  const std::vector<ModelSpec> models = {tiny_model()};
  ASSERT_EQ(models[0].weight_bytes(WeightFormat::kBf16), kTinyWeightBytes);
  Claim c = tiny_claim("test-cpu", 1.0);
  c.num_cores = 5;
  const ClaimAudit a = audit_claim(c, test_catalog(), models);
  EXPECT_EQ(a.weight_bytes, kTinyWeightBytes);
  EXPECT_EQ(a.bytes_per_step, kTinyBytesPerStep);
  EXPECT_DOUBLE_EQ(a.flops_per_step, kTinyFlopsPerStep);
  EXPECT_DOUBLE_EQ(a.bound_bandwidth_bytes_per_s, 1e9);  // the whole socket, not half of it
  EXPECT_DOUBLE_EQ(a.bound_flops_per_s, 0.5e12);         // 5 of 10 cores' bf16 peak
  ASSERT_TRUE(a.lower_bound_s.has_value());
  EXPECT_NEAR(*a.lower_bound_s, 232'064 / 1e9, kRelTol * 232e-6);  // memory term
  EXPECT_THAT(a.explanation, HasSubstr("0.2321 ms"));
  EXPECT_THAT(a.explanation, HasSubstr("whole socket's peak memory bandwidth"));
  EXPECT_THAT(a.explanation, HasSubstr("5 of the 10 cores"));
  EXPECT_THAT(a.explanation, HasSubstr("(memory)"));
}

TEST(AuditBound, IsFlopsOverPeakWhenComputeDominates) {
  const std::vector<ModelSpec> models = {tiny_model()};
  const ClaimAudit a = audit_claim(tiny_claim("slow-cpu", 1.0), test_catalog(), models);
  // 462,848 FLOP / 1e8 FLOP/s = 4.62848 ms > 232,064 bytes / 1e9 B/s = 0.232 ms.
  EXPECT_NEAR(*a.lower_bound_s, 462'848 / 1e8, kRelTol * 4.6e-3);
  EXPECT_THAT(a.explanation, HasSubstr("4.628 ms (compute)"));
}

TEST(AuditVerdict, AtTheBoundIsNotImpossibleBelowItIsAndWellAboveIsPlausible) {
  const std::vector<ModelSpec> models = {tiny_model()};
  const Catalog catalog = test_catalog();
  const double bound_s = 232'064 / 1e9;
  // The prediction (half the socket at 70% of its bandwidth, plus 1 ms step overhead) is far
  // above the bound, so a claim at the bound is possible but optimistic.
  const ClaimAudit at = audit_claim(tiny_claim("test-slice", bound_s), catalog, models);
  ASSERT_TRUE(at.predicted_s.has_value()) << at.explanation;
  EXPECT_EQ(at.verdict, Verdict::kOptimistic);
  ASSERT_TRUE(at.factor.has_value());
  EXPECT_NEAR(*at.factor, *at.predicted_s / bound_s, kRelTol);
  EXPECT_GT(*at.factor, kOptimisticTolerance);
  EXPECT_THAT(at.explanation, HasSubstr("optimistic"));

  const ClaimAudit below = audit_claim(tiny_claim("test-slice", 0.999 * bound_s), catalog, models);
  EXPECT_EQ(below.verdict, Verdict::kImpossible);
  EXPECT_THAT(below.explanation, HasSubstr("is below the bound 0.2321 ms: impossible"));
  // Reading 232,064 bytes in 0.2318 ms needs 1.001 GB/s, 1.00x the peak.
  EXPECT_THAT(below.explanation, HasSubstr("1.001 GB/s"));

  const double predicted_s = *at.predicted_s;
  const ClaimAudit well_above =
      audit_claim(tiny_claim("test-slice", 10 * predicted_s), catalog, models);
  EXPECT_EQ(well_above.verdict, Verdict::kPlausible);
  EXPECT_NEAR(*well_above.factor, 0.1, kRelTol);

  const ClaimAudit within =
      audit_claim(tiny_claim("test-slice", predicted_s / 1.2), catalog, models);
  EXPECT_EQ(within.verdict, Verdict::kPlausible);
  const ClaimAudit beyond =
      audit_claim(tiny_claim("test-slice", predicted_s / 1.3), catalog, models);
  EXPECT_EQ(beyond.verdict, Verdict::kOptimistic);
  EXPECT_NEAR(*beyond.factor, 1.3, 1e-9);
  EXPECT_THAT(beyond.explanation, HasSubstr("1.3x faster than predicted"));
  EXPECT_THAT(beyond.explanation, HasSubstr("tolerance 1.25x"));

  AuditOptions loose;
  loose.tolerance = 1.5;
  EXPECT_EQ(
      audit_claim(tiny_claim("test-slice", predicted_s / 1.3), catalog, models, loose).verdict,
      Verdict::kPlausible);
}

TEST(AuditPrediction, ASliceGetsItsShareOfTheSocketAsThePlannerGivesIt) {
  const std::vector<ModelSpec> models = {tiny_model()};
  const Catalog catalog = test_catalog();
  const double expected =
      decode_step_s(models[0], half_socket(), default_efficiency(DeviceKind::kCpu));
  Claim by_cores = tiny_claim("test-cpu", 1.0);
  by_cores.num_cores = 5;
  const ClaimAudit a = audit_claim(by_cores, catalog, models);
  ASSERT_TRUE(a.predicted_s.has_value());
  EXPECT_NEAR(*a.predicted_s, expected, kRelTol * expected);
  EXPECT_THAT(a.predictor, HasSubstr("datasheet defaults"));
  // The instance test-slice (10 of 20 vCPUs) is the same half socket, placed by make_deployment.
  const ClaimAudit b = audit_claim(tiny_claim("test-slice", 1.0), catalog, models);
  ASSERT_TRUE(b.predicted_s.has_value()) << b.explanation;
  EXPECT_NEAR(*b.predicted_s, expected, kRelTol * expected);
  EXPECT_DOUBLE_EQ(b.bound_bandwidth_bytes_per_s, 1e9);
  EXPECT_DOUBLE_EQ(b.bound_flops_per_s, 0.5e12);
  EXPECT_EQ(b.memory_bytes, 4'000'000'000);  // the instance's memory
}

TEST(AuditPrediction, UsesTheProfileTransferredToTheClaimsCpu) {
  const std::vector<ModelSpec> models = {tiny_model()};
  const Catalog catalog = test_catalog();
  CalibrationProfile profile;
  profile.machine.cpu_model = "Measuring CPU";
  profile.machine.read_bandwidth_bytes_per_s = {{2, 10e9}};
  profile.fit.threads = 2;
  RateFit bf16;
  bf16.overhead_s = 2e-6;
  bf16.bytes_per_s = 8e9;
  bf16.num_samples = 4;
  profile.fit.matmul["bf16"] = bf16;
  AuditOptions options;
  options.profile = &profile;
  Claim c = tiny_claim("test-cpu", 1.0);
  c.num_cores = 5;
  const ClaimAudit a = audit_claim(c, catalog, models, options);
  ASSERT_TRUE(a.predicted_s.has_value());
  const Efficiency transferred =
      transfer_efficiency(profile, *catalog.find_hardware("test-cpu"), 0.5);
  const double expected = decode_step_s(models[0], half_socket(), transferred);
  EXPECT_NEAR(*a.predicted_s, expected, kRelTol * expected);
  EXPECT_THAT(a.predictor, StartsWith("calibrated: "));
  EXPECT_NE(*a.predicted_s,
            decode_step_s(models[0], half_socket(), default_efficiency(DeviceKind::kCpu)));
}

TEST(AuditPrediction, NoneWhenThePlannerWouldNotPlaceTheModelAndTheBoundDecides) {
  const std::vector<ModelSpec> models = {tiny_model()};
  const ClaimAudit a = audit_claim(tiny_claim("test-small-ram", 1.0), test_catalog(), models);
  EXPECT_TRUE(a.fits);  // 264,832 bytes of weights and KV in 10 MB
  EXPECT_FALSE(a.predicted_s.has_value());
  EXPECT_FALSE(a.factor.has_value());
  EXPECT_EQ(a.verdict, Verdict::kPlausible);
  EXPECT_THAT(a.explanation, HasSubstr("No prediction: the planner's placement rule does not "
                                       "place the model here (model \"tiny\" on instance "
                                       "\"test-small-ram\": weights need"));
  EXPECT_THAT(a.explanation, HasSubstr("is not below the bound: plausible"));
  EXPECT_EQ(audit_claim(tiny_claim("test-small-ram", 1e-4), test_catalog(), models).verdict,
            Verdict::kImpossible);
}

TEST(AuditPrediction, SaysSoWhenAProfilePredictsBelowThePhysicalBound) {
  const std::vector<ModelSpec> models = {tiny_model()};
  const Catalog catalog = test_catalog();
  CalibrationProfile profile;  // rates of data that fit the caches: 100x the socket's peak
  profile.machine.read_bandwidth_bytes_per_s = {{2, 1e9}};
  profile.fit.threads = 2;
  RateFit bf16;
  bf16.bytes_per_s = 1e11;
  bf16.num_samples = 4;
  profile.fit.matmul["bf16"] = bf16;
  profile.fit.attention["bf16"] = bf16;
  AuditOptions options;
  options.profile = &profile;
  // A long context, so that the bound (2 x 1e6 tokens x 256 bytes of KV at 1 GB/s = 0.512 s)
  // dwarfs the 1 ms step overhead.
  Claim c = tiny_claim("test-cpu", 1.0);
  c.context_tokens = 1'000'000;
  const ClaimAudit a = audit_claim(c, catalog, models, options);
  ASSERT_TRUE(a.predicted_s.has_value());
  EXPECT_GT(*a.lower_bound_s, 0.512);
  EXPECT_LT(*a.predicted_s, *a.lower_bound_s);
  EXPECT_THAT(a.explanation, HasSubstr("The prediction is below the physical bound"));
}

TEST(AuditBound, TwoSocketInstanceMayUseBothSocketsBandwidth) {
  const std::vector<ModelSpec> models = {tiny_model()};
  const ClaimAudit a = audit_claim(tiny_claim("test-2s", 1.0), test_catalog(), models);
  EXPECT_DOUBLE_EQ(a.bound_bandwidth_bytes_per_s, 2e9);
  EXPECT_DOUBLE_EQ(a.bound_flops_per_s, 2e12);
  EXPECT_NEAR(*a.lower_bound_s, 232'064 / 2e9, kRelTol);
  EXPECT_THAT(a.explanation, HasSubstr("2 sockets together"));
}

TEST(AuditBound, GpuIdUsesTheDevicesBandwidthAndMemory) {
  const std::vector<ModelSpec> models = {tiny_model()};
  const ClaimAudit a = audit_claim(tiny_claim("test-gpu", 1.0), test_catalog(), models);
  EXPECT_DOUBLE_EQ(a.bound_bandwidth_bytes_per_s, 1e10);
  EXPECT_EQ(a.memory_bytes, 1'000'000);
  EXPECT_TRUE(a.fits);
  EXPECT_NEAR(*a.lower_bound_s, 232'064 / 1e10, kRelTol);
  ASSERT_TRUE(a.predicted_s.has_value());
  EXPECT_THAT(a.predictor, HasSubstr("GPU datasheet defaults"));
}

TEST(AuditMemory, WeightsThatDoNotFitAreImpossibleWithBothNumbers) {
  const std::vector<ModelSpec> models = {tiny_model()};
  Claim c = tiny_claim("test-cpu", 1.0);  // slow enough to be plausible otherwise
  c.memory_bytes = 200'000;
  const ClaimAudit a = audit_claim(c, test_catalog(), models);
  EXPECT_EQ(a.verdict, Verdict::kImpossible);
  EXPECT_FALSE(a.fits);
  EXPECT_THAT(a.explanation,
              HasSubstr("the weights alone need 213632 bytes, more than the 200000 bytes"));

  // Weights fit, but not with the batch's 51,200 bytes of KV cache.
  c.memory_bytes = kTinyWeightBytes + 51'200 - 1;
  const ClaimAudit kv = audit_claim(c, test_catalog(), models);
  EXPECT_EQ(kv.verdict, Verdict::kImpossible);
  EXPECT_THAT(kv.explanation, HasSubstr("the weights (213632 bytes) and the batch's KV cache "
                                        "(51200 bytes) need more than the 264831 bytes"));
  c.memory_bytes = kTinyWeightBytes + 51'200;
  EXPECT_EQ(audit_claim(c, test_catalog(), models).verdict, Verdict::kPlausible);
}

TEST(AuditFormats, UnstatedFormatsAreTheMostFavourableAndSaidSo) {
  const std::vector<ModelSpec> models = {tiny_model()};
  Claim c = tiny_claim("test-cpu", 1.0);
  c.weight_format.reset();
  c.kv_format.reset();
  const ClaimAudit a = audit_claim(c, test_catalog(), models);
  EXPECT_EQ(a.weight_format, WeightFormat::kInt4);
  EXPECT_TRUE(a.weight_format_assumed);
  EXPECT_EQ(a.kv_format, KvFormat::kFp8);
  EXPECT_TRUE(a.kv_format_assumed);
  // int4 (blocks of 32, bf16 scale): a [out, 64] matrix is out x (32 + 4) bytes, [64, 128] is
  // 64 x (64 + 8): per layer 36 x (64+32+32+64+128+128) + 4,608 = 20,736; 2 layers 41,472;
  // embedding and LM head 256 x 36 = 9,216 each; norms 640 => 60,544 bytes. Read per step:
  // 60,544 - 9,216 + 2 x 100 x 128 (fp8 KV: 2 x 2 x 2 x 16 x 1) = 76,928.
  EXPECT_EQ(a.weight_bytes, 60'544);
  EXPECT_EQ(a.bytes_per_step, 76'928);
  EXPECT_THAT(a.explanation, HasSubstr("int4 (assumed: the claim names no weight format; 4-bit "
                                       "is the most favourable the model could use)"));
  EXPECT_THAT(a.explanation, HasSubstr("fp8 KV cache (assumed"));
}

TEST(AuditThroughput, ClaimedTokensPerSecondBecomeTheStepTime) {
  const std::vector<ModelSpec> models = {tiny_model()};
  Claim c = tiny_claim("test-cpu", 0);
  c.kind = ClaimKind::kThroughput;
  c.output_tokens_per_s = 100;  // over a batch of 2: one step every 20 ms
  const ClaimAudit a = audit_claim(c, test_catalog(), models);
  EXPECT_NEAR(*a.claimed_s, 0.02, kRelTol);
  EXPECT_THAT(a.explanation, HasSubstr("one decode step every 20 ms"));
}

Claim bandwidth_claim(double bytes_per_s) {
  Claim c;
  c.id = "bw";
  c.kind = ClaimKind::kMemoryBandwidth;
  c.memory_type = "DDR5-5600";
  c.memory_transfer_rate_mts = 5600;
  c.memory_bandwidth_bytes_per_s = bytes_per_s;
  return c;
}

TEST(AuditBandwidth, SaysWhatTheFigureIsInChannels) {
  Catalog catalog = test_catalog();
  HardwareSpec server = cpu_spec("server-cpu", 1e12);
  server.name = "Server CPU";
  server.memory_channels = 8;
  server.peak_memory_bandwidth_bytes_per_s = 307.2e9;  // 8 x 4800 MT/s x 8 bytes
  catalog.add_hardware(server);
  const ClaimAudit a = audit_claim(bandwidth_claim(89.6e9), catalog, {});
  EXPECT_EQ(a.verdict, Verdict::kPlausible);
  EXPECT_NEAR(a.implied_channels, 2.0, 1e-12);  // 89.6e9 / (5600e6 x 8)
  EXPECT_FALSE(a.claimed_s.has_value());
  EXPECT_FALSE(a.peak_bytes_per_s.has_value());
  EXPECT_THAT(a.explanation,
              HasSubstr("89.6 GB/s of DDR5-5600 = 2 channels x 5600 MT/s x 8 bytes"));
  EXPECT_THAT(a.explanation, HasSubstr("desktop or laptop (dual-channel) platform, not a server"));
  EXPECT_THAT(a.explanation, HasSubstr("8 channels (e.g. Server CPU: 8 x 4800 MT/s x 8 bytes = "
                                       "307.2 GB/s)"));
  EXPECT_THAT(a.explanation, HasSubstr("8 channels give 358.4 GB/s"));
}

TEST(AuditBandwidth, AboveTheNamedHardwaresOrChannelsPeakIsImpossible) {
  const Catalog catalog = test_catalog();
  Claim c = bandwidth_claim(1.5e9);
  c.hardware = "test-cpu";  // 1 GB/s peak
  const ClaimAudit a = audit_claim(c, catalog, {});
  EXPECT_EQ(a.verdict, Verdict::kImpossible);
  EXPECT_DOUBLE_EQ(*a.peak_bytes_per_s, 1e9);
  EXPECT_THAT(a.explanation, HasSubstr("the claim is 150.0% of it"));
  EXPECT_THAT(a.explanation, HasSubstr("not 5600"));

  Claim one = bandwidth_claim(89.6e9);
  one.num_channels = 1;  // 44.8 GB/s
  const ClaimAudit b = audit_claim(one, catalog, {});
  EXPECT_EQ(b.verdict, Verdict::kImpossible);
  EXPECT_DOUBLE_EQ(*b.peak_bytes_per_s, 44.8e9);
  one.num_channels = 2;
  EXPECT_EQ(audit_claim(one, catalog, {}).verdict, Verdict::kPlausible);
}

// ---- Reading claims -------------------------------------------------------------------------

const char* kGoodClaim = R"({"claims": [{"id": "c1", "hardware": "test-cpu", "num_cores": 5,
  "model": "tiny", "batch": 2, "context_tokens": 100, "tpot_s": 0.05,
  "source": "test", "as_of": "2026-11-30"}]})";

std::string parse_error(const std::string& text) {
  const std::vector<ModelSpec> models = {tiny_model()};
  const Catalog catalog = test_catalog();
  return llmcap::testing::error_message<InputError>(
      [&] { parse_claims(text, "claims.json", catalog, models); });
}

TEST(AuditClaimsFile, ParsesAClaim) {
  const std::vector<ModelSpec> models = {tiny_model()};
  const std::vector<Claim> claims = parse_claims(kGoodClaim, "claims.json", test_catalog(), models);
  ASSERT_EQ(claims.size(), 1u);
  EXPECT_EQ(claims[0].id, "c1");
  EXPECT_EQ(claims[0].kind, ClaimKind::kTpot);
  EXPECT_EQ(claims[0].num_cores, 5);
  EXPECT_FALSE(claims[0].weight_format.has_value());
  EXPECT_DOUBLE_EQ(claims[0].tpot_s, 0.05);
}

TEST(AuditClaimsFile, UnknownHardwareNamesFileClaimFieldValueAndKnownIds) {
  const std::string m =
      parse_error(llmcap::testing::replace_once(kGoodClaim, "\"test-cpu\"", "\"xeon-9999\""));
  EXPECT_THAT(m, StartsWith("claims.json: claim \"c1\": field \"hardware\": unknown hardware or "
                            "instance \"xeon-9999\"; known CPUs: test-cpu, slow-cpu; GPUs: "
                            "test-gpu; instances: test-slice, test-2s"));
}

TEST(AuditClaimsFile, UnknownModelListsKnownModels) {
  EXPECT_EQ(parse_error(llmcap::testing::replace_once(kGoodClaim, "\"tiny\"", "\"llama-9\"")),
            "claims.json: claim \"c1\": field \"model\": unknown model \"llama-9\"; known: tiny");
}

TEST(AuditClaimsFile, RejectsBadFieldsWithTheirNames) {
  using llmcap::testing::replace_once;
  EXPECT_EQ(parse_error(replace_once(kGoodClaim, "\"batch\": 2", "\"batch\": 0")),
            "claims.json: claim \"c1\": field \"batch\": expected a positive integer, got 0");
  EXPECT_EQ(
      parse_error(replace_once(kGoodClaim, "\"tpot_s\": 0.05", "\"tpot_s\": \"fast\"")),
      "claims.json: claim \"c1\": field \"tpot_s\": expected a positive number, got \"fast\"");
  EXPECT_THAT(parse_error(replace_once(kGoodClaim, "\"tpot_s\": 0.05,",
                                       "\"tpot_s\": 0.05, \"output_tokens_per_s\": 20,")),
              HasSubstr("claim \"c1\": expected exactly one of the fields \"tpot_s\""));
  EXPECT_THAT(parse_error(replace_once(kGoodClaim, "\"tpot_s\": 0.05,", "")),
              HasSubstr("expected exactly one of the fields"));
  EXPECT_THAT(parse_error(replace_once(kGoodClaim, "\"num_cores\": 5", "\"num_cores\": 11")),
              HasSubstr("field \"num_cores\": expected at most the 10 cores of one Test CPU "
                        "test-cpu socket, got 11"));
  EXPECT_THAT(parse_error(replace_once(kGoodClaim, "\"test-cpu\"", "\"test-slice\"")),
              HasSubstr("field \"num_cores\": expected no such field unless \"hardware\" is a "
                        "CPU id"));
  EXPECT_EQ(parse_error(replace_once(kGoodClaim, "\"batch\"",
                                     "\"weight_format\": \"int3\", "
                                     "\"batch\"")),
            "claims.json: claim \"c1\": field \"weight_format\": unknown weight format "
            "\"int3\"; known: f32, bf16, fp8, int8, int4, fp8-block, q4_0, q8_0, q4_k_m, q5_k_m, "
            "q6_k, gptq-int4, awq-int4, mxfp4, mxfp4-experts, nvfp4");
  EXPECT_THAT(parse_error(replace_once(kGoodClaim, "\"batch\"", "\"bacth\": 1, \"batch\"")),
              HasSubstr("claims.json: claim \"c1\": unknown field \"bacth\"; known: "));
  EXPECT_THAT(parse_error(replace_once(kGoodClaim, "\"source\": \"test\", ", "")),
              HasSubstr("field \"source\": expected a non-empty string, got nothing (missing)"));
  EXPECT_THAT(parse_error(R"({"claims": [{"id": "bw", "memory_type": "DDR5",
      "memory_bandwidth_bytes_per_s": 1e9, "source": "t", "as_of": "t"}]})"),
              HasSubstr("claim \"bw\": field \"memory_type\": expected a DDR memory type with "
                        "its transfer rate, e.g. \"DDR5-5600\", got \"DDR5\""));
}

TEST(AuditClaimsFile, RejectsFieldsOfTheOtherKindOfClaimAndBadShapes) {
  using llmcap::testing::replace_once;
  const std::string bw = R"({"claims": [{"id": "bw", "memory_type": "DDR5-5600",
      "memory_bandwidth_bytes_per_s": 1e9, "source": "t", "as_of": "t"}]})";
  EXPECT_EQ(parse_error(replace_once(bw, "\"source\"", "\"model\": \"tiny\", \"source\"")),
            "claims.json: claim \"bw\": field \"model\": expected no such field on a "
            "memory-bandwidth claim, got \"tiny\"");
  EXPECT_EQ(parse_error(replace_once(bw, "\"source\"", "\"hardware\": \"test-gpu\", \"source\"")),
            "claims.json: claim \"bw\": field \"hardware\": expected a CPU or a CPU instance (a "
            "DDR memory-bandwidth claim), got \"test-gpu\" (a GPU)");
  EXPECT_EQ(parse_error(replace_once(kGoodClaim, "\"batch\"", "\"num_channels\": 2, \"batch\"")),
            "claims.json: claim \"c1\": field \"num_channels\": expected no such field on a "
            "latency or throughput claim, got 2");
  EXPECT_EQ(parse_error(replace_once(kGoodClaim, "\"batch\"", "\"memory_bytes\": 1.5, \"batch\"")),
            "claims.json: claim \"c1\": field \"memory_bytes\": expected a positive integer, "
            "got 1.5");
  EXPECT_EQ(
      parse_error(replace_once(kGoodClaim, "\"batch\"", "\"kv_format\": \"int4\", \"batch\"")),
      "claims.json: claim \"c1\": field \"kv_format\": unknown KV-cache format \"int4\"; "
      "known: f32, bf16, fp8, int8");
  EXPECT_EQ(parse_error(replace_once(kGoodClaim, "\"id\": \"c1\", ", "")),
            "claims.json: claim 0: field \"id\": expected a non-empty string, got nothing "
            "(missing)");
  EXPECT_EQ(parse_error(replace_once(bw, "\"source\"", "\"num_channels\": 65, \"source\"")),
            "claims.json: claim \"bw\": field \"num_channels\": expected at most 64, got 65");
  EXPECT_EQ(parse_error(R"({"claims": [3]})"),
            "claims.json: claim 0: field \"claims[0]\": expected an object, got 3");
  EXPECT_EQ(parse_error(R"({"claims": [], "author": "x"})"),
            "claims.json: unknown top-level field \"author\"; known: claims, source, as_of, note");
}

TEST(AuditClaimsFile, ModelsFolderAndToleranceErrors) {
  EXPECT_THAT(error_message<InputError>([] { load_models("/nonexistent/models"); }),
              StartsWith("/nonexistent/models: cannot read the models folder: "));
  const std::vector<ModelSpec> models = {tiny_model()};
  AuditOptions options;
  options.tolerance = 0.9;
  EXPECT_EQ(error_message<InputError>(
                [&] { audit_claim(tiny_claim("test-cpu", 1.0), test_catalog(), models, options); }),
            "claim \"c1\": tolerance: expected a factor >= 1, got 0.9");
  Claim unknown = tiny_claim("test-cpu", 1.0);
  unknown.model = "huge";
  EXPECT_EQ(error_message<InputError>([&] { audit_claim(unknown, test_catalog(), models); }),
            "claim \"c1\": field \"model\": unknown model \"huge\"; known: tiny");
}

TEST(AuditClaimsFile, RejectsDuplicateIdsAndMalformedFiles) {
  const std::string dup = R"({"claims": [
    {"id": "a", "memory_type": "DDR5-5600", "memory_bandwidth_bytes_per_s": 1e9, "source": "t",
     "as_of": "t"},
    {"id": "a", "memory_type": "DDR5-5600", "memory_bandwidth_bytes_per_s": 1e9, "source": "t",
     "as_of": "t"}]})";
  EXPECT_EQ(parse_error(dup), "claims.json: claim \"a\": field \"id\": duplicate claim id \"a\"");
  EXPECT_THAT(parse_error("{\"claims\": [}"), StartsWith("claims.json: malformed JSON: "));
  EXPECT_EQ(parse_error("{\"claim\": []}"),
            "claims.json: field \"claims\": expected an array of claims, got nothing");
  const std::vector<ModelSpec> models = {tiny_model()};
  EXPECT_EQ(error_message<InputError>(
                [&] { read_claims("/nonexistent/claims.json", test_catalog(), models); }),
            "/nonexistent/claims.json: cannot open file");
}

// ---- The seed article ------------------------------------------------------------------------

TEST(AuditSeedArticle, VerdictsOfTheShippedClaims) {
  const Catalog catalog = Catalog::load(llmcap::testing::data_dir());
  const std::vector<ModelSpec> models = load_models(llmcap::testing::data_dir() / "models");
  const std::vector<Claim> claims =
      read_claims(llmcap::testing::data_dir() / "claims" / "seed-article.json", catalog, models);
  ASSERT_EQ(claims.size(), 4u);
  std::vector<ClaimAudit> audits;
  for (const Claim& c : claims) audits.push_back(audit_claim(c, catalog, models));

  // Llama-3-70B (Llama-3.1-70B shapes), int4 assumed, on a 24-core slice of a Xeon 8490H:
  // a step reads at least the int4 weights less the input embedding, by hand:
  //  per layer (8192 + 1024 + 1024 + 8192 + 28672 + 28672) x (4096 + 512) + 8192 x (14336 +
  //  1792) = 481,296,384 bytes; x 80 = 38,503,710,720; LM head 128256 x 4608 = 591,003,648;
  //  norms 161 x 8192 x 2 = 2,637,824; fp8 KV 2 x 80 x 8 x 128 x 128 tokens = 20,971,520.
  //  Total 39,118,323,712 bytes at 307.2 GB/s (the whole socket) = 127.3 ms > 42 ms claimed.
  const ClaimAudit& llama = audits[0];
  EXPECT_EQ(llama.id, "llama-3-70b-xeon-8490h-24c-42ms");
  EXPECT_EQ(llama.bytes_per_step, 39'118'323'712);
  EXPECT_NEAR(*llama.lower_bound_s, 39'118'323'712 / 307.2e9, 1e-12);
  EXPECT_EQ(llama.verdict, Verdict::kImpossible);
  EXPECT_TRUE(llama.fits);
  EXPECT_THAT(llama.explanation, HasSubstr("127.3 ms"));
  EXPECT_THAT(llama.explanation, HasSubstr("24 of the 60 cores of one Intel Xeon Platinum 8490H"));

  // Mistral-7B on 24 of 128 EPYC 9754 cores: possible (the bound is ~9 ms), but the slice
  // gets 24/128 of 460.8 GB/s in the prediction, so 38 ms is optimistic.
  const ClaimAudit& mistral = audits[1];
  EXPECT_EQ(mistral.verdict, Verdict::kOptimistic);
  EXPECT_LT(*mistral.lower_bound_s, 0.038);
  EXPECT_GT(*mistral.factor, kOptimisticTolerance);
  EXPECT_EQ(mistral.memory_bytes, 0);  // not stated

  // GPT-NeoX-20B on the same 8490H slice: above the bound (~38 ms), far below the prediction.
  const ClaimAudit& neox = audits[2];
  EXPECT_EQ(neox.verdict, Verdict::kOptimistic);
  EXPECT_LT(*neox.lower_bound_s, 0.045);
  EXPECT_GT(*neox.factor, kOptimisticTolerance);

  const ClaimAudit& ddr = audits[3];
  EXPECT_EQ(ddr.kind, ClaimKind::kMemoryBandwidth);
  EXPECT_EQ(ddr.verdict, Verdict::kPlausible);
  EXPECT_NEAR(ddr.implied_channels, 2.0, 1e-12);
  EXPECT_THAT(ddr.explanation, HasSubstr("not a server socket"));
}

}  // namespace
}  // namespace llmcap::model
