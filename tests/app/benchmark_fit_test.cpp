#include "app/benchmark_fit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "app/benchmark_file_writer.h"
#include "app/published.h"
#include "base/error.h"
#include "model/engine_profile.h"
#include "model/model_spec.h"
#include "test_util.h"

namespace llmcap::app {
namespace {

using ::testing::HasSubstr;

/// The target: the fit recovers the parameters the synthetic results were made with
/// within 2%.
constexpr double kRecoveryTolerance = 0.02;

/// A run of a synthetic benchmark: load and lengths.
struct SyntheticRun {
  int64_t batch = 0, concurrency = 0, offline_requests = 0;
  int64_t prompt_tokens = 0, output_tokens = 0;
  int64_t threads = 0;
  /// Concurrency runs: the requests the benchmark sent (0: not recorded, the replay's default
  /// of kClosedLoopRequestsPerUser per client).
  int64_t num_requests = 0;
};

class BenchmarkFitTest : public ::testing::Test {
 protected:
  /// A result file whose figures (mean TTFT, mean TPOT, throughput of each run) are what the
  /// simulator gives with `truth` on `setup`'s machine: what the benchmark tool would have
  /// measured if llmcap's model were exact.
  BenchmarkFile synthetic(const BenchmarkSetup& setup, const model::EngineProfile& truth,
                          const std::vector<SyntheticRun>& runs,
                          const std::vector<std::string>& metrics) const {
    const model::ModelSpec spec = model::load_model_spec(setup.model_file);
    const model::HardwareSpec& hw = catalog_.hardware(setup.hardware, "test");
    BenchmarkFile file;
    file.file = "synthetic.json";
    file.tool = "vllm-bench-serve";
    file.model = "test-model";
    int i = 0;
    for (const SyntheticRun& run : runs) {
      PublishedRow row;
      row.id = "run " + std::to_string(++i);
      row.device_kind = std::string(model::to_string(hw.kind));
      row.engine = setup.engine;
      row.hardware = setup.hardware;
      row.device_count = setup.device_count;
      row.tensor_parallel = setup.device_count;
      row.cores_used = static_cast<int>(run.threads);
      row.weight_format = setup.weight_format;
      row.kv_format = setup.kv_format;
      row.batch = run.batch;
      row.concurrency = run.concurrency;
      row.offline_requests = run.offline_requests;
      if (run.num_requests > 0) {
        row.requests_per_user =
            static_cast<double>(run.num_requests) / static_cast<double>(run.concurrency);
      }
      row.prompt_tokens = run.prompt_tokens;
      row.output_tokens = run.output_tokens;
      const sim::SimResult result = simulate_published_row(row, spec, catalog_, &truth, 1).result;
      for (const std::string& metric : metrics) {
        row.metric = metric;
        row.statistic = metric == "throughput" ? "total" : "mean";
        BenchmarkPoint p;
        p.where = row.id;
        p.batch = run.batch;
        p.concurrency = run.concurrency;
        p.offline_requests = run.offline_requests;
        p.num_requests = run.num_requests;
        p.prompt_tokens = run.prompt_tokens;
        p.output_tokens = run.output_tokens;
        p.threads = run.threads;
        p.metric = metric;
        p.statistic = row.statistic;
        p.value = published_figure(row, result);
        file.points.push_back(p);
      }
    }
    return file;
  }

  const FittedParameter& param(const BenchmarkFit& fit, const std::string& name) const {
    for (const FittedParameter& p : fit.parameters) {
      if (p.name == name) return p;
    }
    throw std::runtime_error("no parameter " + name);
  }

  BenchmarkSetup gpu_setup() const {
    BenchmarkSetup s;
    s.engine = "vllm";
    s.hardware = "h100-sxm";
    s.model_file = testing::data_dir() / "models" / "llama-3.1-8b.json";
    return s;
  }

  /// vLLM on an H100 with figures unlike its profile's, and serving runs at five
  /// concurrencies, long prompts (compute) to short ones (bandwidth).
  model::EngineProfile gpu_truth() const {
    model::EngineProfile truth = *catalog_.find_engine("vllm");
    truth.kernel_overhead_s.value = 6e-6;
    truth.memory_bandwidth_fraction.value = 0.82;
    truth.compute_fraction.value = 0.52;
    truth.frontend_latency_s.value = 0.004;
    return truth;
  }
  static std::vector<SyntheticRun> gpu_runs() {
    return {{.concurrency = 1, .prompt_tokens = 4096, .output_tokens = 32},
            {.concurrency = 4, .prompt_tokens = 512, .output_tokens = 128},
            {.concurrency = 16, .prompt_tokens = 1024, .output_tokens = 64},
            {.concurrency = 8, .prompt_tokens = 256, .output_tokens = 128},
            {.concurrency = 2, .prompt_tokens = 2048, .output_tokens = 64}};
  }
  /// llama.cpp on a Sapphire Rapids socket (int8 weights) with figures unlike its profile's,
  /// and llama-bench runs: batch-1 prompt processing (TTFT) and generation (TPOT) tests at 4, 8
  /// and 56 threads; the thread count moves the bandwidth (the per-core limit), which separates
  /// the per-step time from the bandwidth.
  BenchmarkSetup cpu_setup() const {
    BenchmarkSetup setup;
    setup.engine = "llama.cpp";
    setup.hardware = "xeon-8480plus";
    setup.model_file = testing::data_dir() / "models" / "llama-3.1-8b.json";
    setup.weight_format = "int8";
    return setup;
  }
  model::EngineProfile cpu_truth() const {
    model::EngineProfile truth = *catalog_.find_engine("llama.cpp");
    truth.kernel_overhead_s.value = 20e-6;
    truth.memory_bandwidth_fraction.value = 0.6;
    truth.compute_fraction.value = 0.03;
    truth.decode_compute_fraction.value = 0.04;
    return truth;
  }
  static std::vector<SyntheticRun> cpu_runs() {
    std::vector<SyntheticRun> runs;
    for (int64_t threads : {4, 56, 8}) {
      runs.push_back({.batch = 1, .prompt_tokens = 512, .output_tokens = 1, .threads = threads});
      runs.push_back({.batch = 1, .prompt_tokens = 1, .output_tokens = 128, .threads = threads});
    }
    return runs;
  }
  /// llama-bench reports no TPOT for a pp test and no TTFT for a tg test.
  static void keep_llama_bench_figures(BenchmarkFile& file) {
    std::erase_if(file.points, [](const BenchmarkPoint& p) {
      return (p.metric == "tpot") == (p.output_tokens == 1);
    });
  }

  model::Catalog catalog_ = model::Catalog::load(testing::data_dir());
};

TEST_F(BenchmarkFitTest, RecoversTheGpuParametersASyntheticServingBenchmarkWasMadeWith) {
  const BenchmarkSetup setup = gpu_setup();
  const BenchmarkFile file =
      synthetic(setup, gpu_truth(), gpu_runs(), {"ttft", "tpot", "throughput"});
  const BenchmarkFit fit = fit_benchmarks({file}, setup, catalog_);
  EXPECT_NEAR(param(fit, "kernel_overhead_s").value, 6e-6, 6e-6 * kRecoveryTolerance);
  EXPECT_NEAR(param(fit, "memory_bandwidth_fraction").value, 0.82, 0.82 * kRecoveryTolerance);
  EXPECT_NEAR(param(fit, "compute_fraction").value, 0.52, 0.52 * kRecoveryTolerance);
  EXPECT_NEAR(param(fit, "frontend_latency_s").value, 0.004, 0.004 * kRecoveryTolerance);
  EXPECT_EQ(fit.runs, 5);
  EXPECT_EQ(fit.left_out_runs, 5);  // each in turn
  EXPECT_LT(fit.left_out_max_abs_error, kRecoveryTolerance);
  EXPECT_EQ(fit.profile.hardware, "h100-sxm");
  EXPECT_NEAR(fit.profile.memory_bandwidth_fraction.value, 0.82, 0.82 * kRecoveryTolerance);
  EXPECT_THAT(fit.profile.memory_bandwidth_fraction.source,
              HasSubstr("calibrate --from-benchmark"));
}

TEST_F(BenchmarkFitTest, AParameterNoPointDependsOnIsKeptAndSaidSo) {
  // Decode steps of an 8B model on an H100 at 1-16 sequences are bandwidth-bound: the decode
  // compute fraction moves no figure.
  const BenchmarkSetup setup = gpu_setup();
  const model::EngineProfile truth = *catalog_.find_engine("vllm");
  const BenchmarkFile file =
      synthetic(setup, truth,
                {{.concurrency = 1, .prompt_tokens = 128, .output_tokens = 64},
                 {.concurrency = 2, .prompt_tokens = 128, .output_tokens = 64},
                 {.concurrency = 4, .prompt_tokens = 128, .output_tokens = 64},
                 {.concurrency = 8, .prompt_tokens = 128, .output_tokens = 64}},
                {"tpot"});
  const BenchmarkFit fit = fit_benchmarks({file}, setup, catalog_);
  EXPECT_FALSE(param(fit, "decode_compute_fraction").determined);
  EXPECT_EQ(param(fit, "decode_compute_fraction").value, truth.compute_fraction.value);
  EXPECT_EQ(fit.profile.decode_compute_fraction.value, truth.decode_compute_fraction.value);
}

/// Each tool's file format carries the synthetic runs to the fit: written as the tool writes
/// them (one file per run for the tools whose file holds one run), read back, fitted.
class BenchmarkFitThroughFiles : public BenchmarkFitTest,
                                 public ::testing::WithParamInterface<std::string> {};

TEST_P(BenchmarkFitThroughFiles, RecoversTheParametersFromTheToolsResultFiles) {
  const std::string tool = GetParam();
  const bool cpu = tool == "llama-bench";
  const BenchmarkSetup setup = cpu ? cpu_setup() : gpu_setup();
  const model::EngineProfile truth = cpu ? cpu_truth() : gpu_truth();
  std::vector<SyntheticRun> runs = cpu ? cpu_runs() : gpu_runs();
  if (tool == "trtllm-bench") {
    // trtllm-bench reports offline runs: all requests at once.
    for (SyntheticRun& r : runs) std::swap(r.concurrency, r.offline_requests);
  }
  if (tool == "vllm-bench-serve" || tool == "sglang-bench-serving") {
    // Their files say how many requests a concurrency run sent: three per client, replayed so.
    for (SyntheticRun& r : runs) r.num_requests = 3 * r.concurrency;
  }
  BenchmarkFile made = synthetic(setup, truth, runs,
                                 cpu ? std::vector<std::string>{"ttft", "tpot"}
                                     : std::vector<std::string>{"ttft", "tpot", "throughput"});
  if (cpu) keep_llama_bench_figures(made);
  const bool one_run_per_file = tool == "genai-perf" || tool == "aiperf" || tool == "trtllm-bench";
  std::vector<std::vector<BenchmarkPoint>> groups;
  for (const BenchmarkPoint& p : made.points) {
    if (groups.empty() || (one_run_per_file && groups.back().front().where != p.where)) {
      groups.emplace_back();
    }
    groups.back().push_back(p);
  }
  llmcap::testing::TempDir dir;
  std::vector<BenchmarkFile> files;
  for (size_t i = 0; i < groups.size(); ++i) {
    const auto path =
        dir.write("run" + std::to_string(i) + (tool == "sglang-bench-serving" ? ".jsonl" : ".json"),
                  test::write_benchmark_text(tool, "test-model", groups[i]));
    files.push_back(read_benchmark_file(path));
    EXPECT_EQ(files.back().tool, tool);
  }
  const BenchmarkFit fit = fit_benchmarks(files, setup, catalog_);
  EXPECT_EQ(fit.runs, static_cast<int64_t>(runs.size()));
  // A front-end latency of 0 (llama.cpp's) is recovered within 2% of the shortest TTFT it adds
  // to: a figure that moves no TTFT by more is not seen by the fit.
  double shortest_ttft_s = 1e30;
  for (const BenchmarkPoint& p : made.points) {
    if (p.metric == "ttft") shortest_ttft_s = std::min(shortest_ttft_s, p.value);
  }
  for (const auto& [name, value] :
       {std::pair{"kernel_overhead_s", truth.kernel_overhead_s.value},
        {"memory_bandwidth_fraction", truth.memory_bandwidth_fraction.value},
        {"compute_fraction", truth.compute_fraction.value},
        {"frontend_latency_s", truth.frontend_latency_s.value}}) {
    const double tolerance =
        value > 0 ? value * kRecoveryTolerance : kRecoveryTolerance * shortest_ttft_s;
    EXPECT_NEAR(param(fit, name).value, value, tolerance) << tool << " " << name;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryTool, BenchmarkFitThroughFiles,
                         ::testing::Values("vllm-bench-serve", "sglang-bench-serving",
                                           "llama-bench", "genai-perf", "aiperf", "trtllm-bench"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::erase(name, '-');
                           return name;
                         });

class BenchmarkFitErrors : public BenchmarkFitTest {
 protected:
  std::string error(const std::vector<BenchmarkFile>& files, const BenchmarkSetup& setup) {
    return testing::error_message<base::InputError>(
        [&] { fit_benchmarks(files, setup, catalog_); });
  }
  BenchmarkFile four_runs(const model::EngineProfile& truth) const {
    return synthetic(gpu_setup(), truth,
                     {{.concurrency = 1, .prompt_tokens = 128, .output_tokens = 32},
                      {.concurrency = 2, .prompt_tokens = 128, .output_tokens = 32},
                      {.concurrency = 4, .prompt_tokens = 128, .output_tokens = 32},
                      {.concurrency = 8, .prompt_tokens = 128, .output_tokens = 32}},
                     {"ttft", "tpot"});
  }
};

TEST_F(BenchmarkFitErrors, TooFewRunsSaysHowManyItHasAndNeeds) {
  BenchmarkFile file = four_runs(*catalog_.find_engine("vllm"));
  std::erase_if(file.points, [](const BenchmarkPoint& p) { return p.concurrency == 8; });
  EXPECT_EQ(error({file}, gpu_setup()),
            "calibrate --from-benchmark: synthetic.json: too few runs to fit: 3 distinct runs "
            "(loads or lengths, 6 figures); a fit needs at least 4 (each is left out in turn to "
            "check the fit)");
}

TEST_F(BenchmarkFitErrors, FilesOfDifferentModelsAreRefused) {
  BenchmarkFile a = four_runs(*catalog_.find_engine("vllm"));
  BenchmarkFile b = a;
  b.file = "other.json";
  b.model = "meta-llama/Llama-3.1-70B";
  EXPECT_EQ(error({a, b}, gpu_setup()),
            "other.json: field \"model\": expected the model of synthetic.json (\"test-model\"), "
            "got \"meta-llama/Llama-3.1-70B\": one fit takes the results of one model only");
}

TEST_F(BenchmarkFitErrors, FilesOfDifferentMachinesAreRefused) {
  BenchmarkFile a = four_runs(*catalog_.find_engine("vllm"));
  a.machine = "NVIDIA H100 80GB HBM3";
  BenchmarkFile b = a;
  b.file = "other.json";
  b.machine = "NVIDIA A100-SXM4-80GB";
  EXPECT_THAT(error({a, b}, gpu_setup()),
              HasSubstr("other.json: field \"machine\": expected the machine of synthetic.json"));
}

TEST_F(BenchmarkFitErrors, ALlamaBenchModelOfAnotherWeightFormatIsRefused) {
  BenchmarkFile file = four_runs(*catalog_.find_engine("vllm"));
  file.tool = "llama-bench";
  file.file = "bench.json";
  file.model = "llama 8B Q4_0";
  EXPECT_EQ(error({file}, gpu_setup()),
            "bench.json: field \"model_type\": \"llama 8B Q4_0\" has int4 weights, but "
            "--weight-format is bf16; pass --weight-format int4");
}

TEST_F(BenchmarkFitErrors, AnUnknownEngineListsTheKnownOnes) {
  BenchmarkSetup setup = gpu_setup();
  setup.engine = "vllm-nightly";
  EXPECT_THAT(error({four_runs(*catalog_.find_engine("vllm"))}, setup),
              HasSubstr("calibrate --from-benchmark: --engine: unknown engine \"vllm-nightly\"; "
                        "known: "));
}

TEST_F(BenchmarkFitErrors, AnEngineOfTheOtherDeviceKindIsRefused) {
  BenchmarkSetup setup = gpu_setup();
  setup.engine = "llama.cpp";
  EXPECT_EQ(error({four_runs(*catalog_.find_engine("vllm"))}, setup),
            "calibrate --from-benchmark: --engine \"llama.cpp\" is an engine for cpus, but "
            "--hardware \"h100-sxm\" is a gpu");
}

TEST_F(BenchmarkFitErrors, BandwidthAboveTheDatasheetPeakIsRefusedWithTheExcess) {
  // Results 30% faster than the H100's datasheet bandwidth allows (say, measured on an H200).
  model::EngineProfile truth = *catalog_.find_engine("vllm");
  truth.memory_bandwidth_fraction.value = 1.3;
  EXPECT_THAT(error({four_runs(truth)}, gpu_setup()),
              HasSubstr("synthetic.json: the fit puts memory_bandwidth_fraction at 1.300, 30.0% "
                        "above the datasheet peak of"));
}

}  // namespace
}  // namespace llmcap::app
