// A scenario's "engine": the candidates of each device kind priced with an engine profile (and
// CPUs with the CPU model), the engine named in each row, and bad engine ids refused before
// any simulation.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "model/engine_profile.h"
#include "model/input_error.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

using ::testing::HasSubstr;

Scenario engine_scenario() {
  Scenario s;
  s.file = "engine-scenario.json";
  s.name = "engine";
  s.model_config = llmcap::testing::data_dir() / "models" / "llama-3.1-8b.json";
  s.workload.kind = WorkloadSpec::Kind::kPoisson;
  s.workload.path = std::filesystem::path(LLMCAP_TEST_DATA_DIR) / "lengths.csv";
  s.workload.rate_per_s = 2.0;
  s.workload.num_requests = 100;
  s.slo.ttft_s = 5.0;
  s.slo.tpot_s = 0.5;
  s.seed = 3;
  s.max_instances = 16;
  s.candidates = {"aws-p5.48xlarge", "aws-m7i.8xlarge"};
  return s;
}

const PlanRow& row_of(const PlanResult& r, const std::string& id) {
  for (const auto& row : r.rows) {
    if (row.instance_type == id) return row;
  }
  throw std::runtime_error("no row " + id);
}

TEST(PlanEngine, EachKindIsPricedWithItsEngineAndTheRowSaysWhich) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario datasheet = engine_scenario();
  datasheet.gpu_engine = kDatasheetEngine;
  datasheet.cpu_engine = kDatasheetEngine;
  const PlanResult plain = plan(datasheet, catalog);
  Scenario s = engine_scenario();
  s.gpu_engine = "vllm";
  s.cpu_engine = "llama.cpp";
  const PlanResult with = plan(s, catalog);

  const PlanRow& gpu = row_of(with, "aws-p5.48xlarge");
  EXPECT_THAT(gpu.predictor, HasSubstr("engine vllm (vLLM"));
  EXPECT_EQ(row_of(plain, "aws-p5.48xlarge").predictor, "roofline (datasheet defaults)");
  // vLLM's profile: 10.8 us per kernel and no step overhead, against 2 ms per step.
  EXPECT_NE(gpu.tpot_floor_s, row_of(plain, "aws-p5.48xlarge").tpot_floor_s);

  const PlanRow& cpu = row_of(with, "aws-m7i.8xlarge");
  EXPECT_THAT(cpu.predictor, HasSubstr("engine llama.cpp"));
  // The CPU model: 16 cores of a Sapphire Rapids socket at 17.5 GB/s each, and llama.cpp's
  // AVX-512 peaks.
  EXPECT_THAT(cpu.deployment_rule, HasSubstr("read bandwidth min(16 cores x"));
  EXPECT_THAT(cpu.deployment_rule, HasSubstr("avx512 peaks of 16 cores"));
  // A rented slice (32 of the socket's 96 vCPUs) counts on its share of the socket at most.
  EXPECT_THAT(cpu.deployment_rule, HasSubstr("the slice's 33.3% of the socket at most"));
  EXPECT_GT(cpu.ttft_floor_s, row_of(plain, "aws-m7i.8xlarge").ttft_floor_s);
}

TEST(PlanEngine, AScenarioNamingNoEngineIsPricedWithEachKindsDefault) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  const PlanResult defaults = plan(engine_scenario(), catalog);
  EXPECT_EQ(row_of(defaults, "aws-p5.48xlarge").engine, kDefaultGpuEngine);
  EXPECT_EQ(row_of(defaults, "aws-m7i.8xlarge").engine, kDefaultCpuEngine);
  Scenario s = engine_scenario();
  s.gpu_engine = "vllm";
  s.cpu_engine = "llama.cpp";
  EXPECT_EQ(row_of(defaults, "aws-p5.48xlarge").tpot_floor_s,
            row_of(plan(s, catalog), "aws-p5.48xlarge").tpot_floor_s);
  // A catalog without those profiles falls back to the datasheet roofline.
  EXPECT_EQ(engine_id(engine_scenario(), model::DeviceKind::kGpu, catalog), "vllm");
  EXPECT_EQ(engine_id(engine_scenario(), model::DeviceKind::kGpu, model::Catalog()), "");
}

TEST(PlanEngine, AnEnginesFrontEndLatencyIsInTheTtftFloorAndTheSimulation) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario s = engine_scenario();
  s.gpu_engine = "tensorrt-llm";
  const double latency_s = catalog.find_engine("tensorrt-llm")->frontend_latency_s.value;
  ASSERT_GT(latency_s, 0);
  const PlanResult with = plan(s, catalog);
  model::Catalog without_catalog = catalog;
  model::EngineProfile e = *catalog.find_engine("tensorrt-llm");
  e.frontend_latency_s.value = 0;
  without_catalog.add_engine(e);
  const PlanResult without = plan(s, without_catalog);
  const PlanRow& a = row_of(with, "aws-p5.48xlarge");
  const PlanRow& b = row_of(without, "aws-p5.48xlarge");
  EXPECT_NEAR(a.ttft_floor_s - b.ttft_floor_s, latency_s, 1e-12);
  EXPECT_GE(a.metrics.ttft.p50_s, b.metrics.ttft.p50_s + latency_s * 0.99);
}

TEST(PlanEngine, TheServingLimitsTheScenarioLeavesOpenAreTheEnginesSchedulerDefaults) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  const model::InstanceType& gpu = catalog.instance("aws-p5.48xlarge", "test");
  const model::InstanceType& cpu = catalog.instance("aws-m7i.8xlarge", "test");
  Scenario s = engine_scenario();
  // No "serving" limits: vLLM's on GPUs (chunked prefill, 1,024 sequences, 8,192 tokens per
  // step), llama.cpp's on CPUs (4 server slots, 2,048 tokens per batch).
  sim::ServingConfig g = serving_for(s, gpu, catalog);
  EXPECT_EQ(g.policy, sim::BatchingPolicy::kChunkedPrefill);
  EXPECT_EQ(g.max_num_seqs, 1024);
  EXPECT_EQ(g.max_num_batched_tokens, 8192);
  EXPECT_EQ(serving_for(s, cpu, catalog).max_num_seqs, 4);
  // What the scenario sets stays; a token budget below the sequences is raised to them.
  s.serving.max_num_seqs = 16384;
  s.max_num_seqs_set = true;
  g = serving_for(s, gpu, catalog);
  EXPECT_EQ(g.max_num_seqs, 16384);
  EXPECT_EQ(g.max_num_batched_tokens, 16384);
  // The datasheet roofline has no engine: the scenario's serving as it is.
  s.gpu_engine = kDatasheetEngine;
  EXPECT_EQ(serving_for(s, gpu, catalog).policy, s.serving.policy);
  EXPECT_EQ(serving_for(s, gpu, catalog).max_num_batched_tokens, s.serving.max_num_batched_tokens);
}

TEST(PlanEngine, PrefixCachingAndTheBlockSizeFollowTheEngineUnlessTheScenarioSetsThem) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  const model::InstanceType& gpu = catalog.instance("aws-p5.48xlarge", "test");
  const model::InstanceType& cpu = catalog.instance("aws-m7i.8xlarge", "test");
  Scenario s = engine_scenario();
  // vLLM caches prefixes by default in 16-token blocks; llama.cpp keeps no shared cache.
  EXPECT_TRUE(serving_for(s, gpu, catalog).prefix_caching);
  EXPECT_EQ(serving_for(s, gpu, catalog).block_size_tokens, 16);
  EXPECT_FALSE(serving_for(s, cpu, catalog).prefix_caching);
  // vLLM v1 takes a chunked prefill's blocks chunk by chunk; the others' presets do not say so.
  EXPECT_TRUE(serving_for(s, gpu, catalog).allocate_per_chunk);
  s.gpu_engine = "sglang";
  EXPECT_FALSE(serving_for(s, gpu, catalog).allocate_per_chunk);
  s.gpu_engine = "tensorrt-llm";
  EXPECT_EQ(serving_for(s, gpu, catalog).block_size_tokens, 32);
  s.serving.prefix_caching = false;
  s.prefix_caching_set = true;
  s.serving.block_size_tokens = 64;
  s.block_size_set = true;
  EXPECT_FALSE(serving_for(s, gpu, catalog).prefix_caching);
  EXPECT_EQ(serving_for(s, gpu, catalog).block_size_tokens, 64);
}

TEST(PlanEngine, UnknownOrMismatchedEnginesAreRefusedBeforeSimulating) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario s = engine_scenario();
  s.gpu_engine = "tgi";
  EXPECT_THAT(llmcap::testing::error_message<model::InputError>([&] { plan(s, catalog); }),
              HasSubstr(R"(engine-scenario.json: field "engine.gpu": unknown engine "tgi"; )"
                        R"(known: llama.cpp, llama.cpp-cuda, neural-speed)"));
  s.gpu_engine = "";
  s.cpu_engine = "vllm";
  EXPECT_THAT(llmcap::testing::error_message<model::InputError>([&] { plan(s, catalog); }),
              HasSubstr(R"(field "engine.cpu": "vllm" is an engine for gpu, not cpu)"));
}

TEST(PlanEngine, TheScenarioReaderTakesAnObjectOfGpuAndCpu) {
  const std::string base = R"({"name": "x", "model": "m.json",
    "workload": {"kind": "poisson", "lengths_path": "l.csv", "rate_per_s": 1,
                 "num_requests": 10},
    "slo": {"ttft_p99_s": 1, "tpot_p99_s": 1}, ENGINE})";
  const auto with = [&](const std::string& engine) {
    return llmcap::testing::replace_once(base, "ENGINE", engine);
  };
  const Scenario s =
      load_scenario_text(with(R"("engine": {"gpu": "sglang", "cpu": "vllm-cpu"})"), "s.json");
  EXPECT_EQ(s.gpu_engine, "sglang");
  EXPECT_EQ(s.cpu_engine, "vllm-cpu");
  EXPECT_FALSE(s.max_num_seqs_set);
  const Scenario limited = load_scenario_text(
      with(R"("serving": {"max_num_seqs": 8}, "engine": {"gpu": "vllm"})"), "s.json");
  EXPECT_TRUE(limited.max_num_seqs_set);
  EXPECT_FALSE(limited.batching_set);
  EXPECT_FALSE(limited.max_num_batched_tokens_set);
  EXPECT_THAT(
      llmcap::testing::error_message<model::InputError>(
          [&] { load_scenario_text(with(R"("engine": {"tpu": "x"})"), "s.json"); }),
      HasSubstr(R"(s.json: field "engine.tpu": unknown; known fields: gpu, cpu, profiles)"));
  EXPECT_THAT(llmcap::testing::error_message<model::InputError>(
                  [&] { load_scenario_text(with(R"("engine": {})"), "s.json"); }),
              HasSubstr(R"(s.json: field "engine": expected an object with "gpu" and/or "cpu" )"
                        R"(engine ids or "profiles", got {})"));
  EXPECT_THAT(llmcap::testing::error_message<model::InputError>(
                  [&] { load_scenario_text(with(R"("engine": "vllm")"), "s.json"); }),
              HasSubstr(R"(s.json: field "engine": expected an object)"));
}

/// vLLM's profile fitted on `hardware` at `bandwidth_fraction`, written to `dir`.
std::filesystem::path fitted_vllm(const llmcap::testing::TempDir& dir, const std::string& name,
                                  const std::string& hardware, double bandwidth_fraction) {
  model::EngineProfile e = model::load_engine_profiles(llmcap::testing::data_dir()).at("vllm");
  e.hardware = hardware;
  e.memory_bandwidth_fraction.value = bandwidth_fraction;
  return dir.write(name, model::engine_profile_to_json(e, {{"summary", "fitted in a test"}}));
}

TEST(PlanEngine, AFittedProfilePricesTheCandidatesOnItsHardwareOnly) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  llmcap::testing::TempDir dir;
  Scenario s = engine_scenario();
  s.gpu_engine = "vllm";
  const PlanResult generic = plan(s, catalog);
  s.fitted_engines = model::load_fitted_engines({fitted_vllm(dir, "fit.json", "h100-sxm", 0.5)},
                                                "vllm", "", "test");
  const PlanResult fitted = plan(s, catalog);
  const PlanRow& gpu = row_of(fitted, "aws-p5.48xlarge");
  EXPECT_THAT(gpu.predictor, HasSubstr("engine vllm (vLLM"));
  EXPECT_THAT(gpu.predictor, HasSubstr("fitted in a test"));
  // Half the bandwidth of vLLM's 0.97: a decode step of one sequence, bandwidth-bound, takes
  // longer.
  EXPECT_GT(gpu.tpot_floor_s, 1.5 * row_of(generic, "aws-p5.48xlarge").tpot_floor_s);
  // The CPU candidate is not on that hardware: priced as before.
  EXPECT_EQ(row_of(fitted, "aws-m7i.8xlarge").tpot_floor_s,
            row_of(generic, "aws-m7i.8xlarge").tpot_floor_s);
}

TEST(PlanEngine, FittedProfilesOfAnotherEngineOrWithoutHardwareAreRefused) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  llmcap::testing::TempDir dir;
  const auto fit = fitted_vllm(dir, "fit.json", "h100-sxm", 0.5);
  EXPECT_EQ(llmcap::testing::error_message<model::InputError>(
                [&] { model::load_fitted_engines({fit}, "sglang", "", "s.json"); }),
            "s.json: " + fit.string() +
                R"(: fitted for engine "vllm", but the gpu engine is "sglang"; fit the same )"
                R"(engine or name "vllm")");
  const auto shipped = llmcap::testing::data_dir() / "engines" / "vllm.json";
  EXPECT_EQ(llmcap::testing::error_message<model::InputError>(
                [&] { model::load_fitted_engines({shipped}, "", "", "s.json"); }),
            "s.json: " + shipped.string() +
                R"(: expected a fitted engine profile (llmcap calibrate --from-benchmark )"
                R"(--out), got one without "hardware")");
  EXPECT_THAT(llmcap::testing::error_message<model::InputError>([&] {
                model::load_fitted_engines({fit, fitted_vllm(dir, "b.json", "h100-sxm", 0.6)}, "",
                                           "", "s.json");
              }),
              HasSubstr(R"(: a second fitted profile for "h100-sxm" (the first is )"));
  Scenario s = engine_scenario();
  s.fitted_engines =
      model::load_fitted_engines({fitted_vllm(dir, "c.json", "tpu-v5", 0.5)}, "", "", "s.json");
  EXPECT_THAT(
      llmcap::testing::error_message<model::InputError>([&] { plan(s, catalog); }),
      HasSubstr(R"(c.json: field "hardware": unknown hardware "tpu-v5" (not in the catalog's )"));
}

}  // namespace
}  // namespace llmcap::plan
