// Result files of the benchmark tools users already run on their hardware, read into
// measurements llmcap can fit an engine profile to (`llmcap calibrate --from-benchmark`,
// docs/calibrate-from-benchmark.md). Each reader takes the file as the tool writes it and keeps
// what the fit needs: the load, the request lengths and the measured figures.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace llmcap::app {

/// One measured figure of a benchmark run. Times in seconds, throughput in output tokens per
/// second. The load is exactly one of: `batch` requests run together as one static batch (a
/// llama-bench test: batch 1); `offline_requests` submitted at once (request rate infinite, no
/// concurrency limit); `concurrency` clients each sending its next request when the last one
/// finished; `num_requests` Poisson arrivals at `request_rate_per_s`.
struct BenchmarkPoint {
  std::string where;  ///< e.g. `run 3` or `entry 2 (tg128)`: where in the file it was read
  int64_t batch = 0;
  int64_t offline_requests = 0;
  int64_t concurrency = 0;
  double request_rate_per_s = 0;
  int64_t num_requests = 0;
  int64_t prompt_tokens = 0;  ///< mean prompt length (rounded), >= 1
  int64_t output_tokens = 0;  ///< mean output length (rounded), >= 1
  /// CPU threads the run used when the file says (llama-bench's n_threads), else 0.
  int64_t threads = 0;
  std::string metric;     ///< "ttft" | "tpot" | "throughput"
  std::string statistic;  ///< "mean" | "median" | "p90" | "p99" (throughput: "total")
  double value = 0;       ///< > 0
};

/// The measurements of one result file.
struct BenchmarkFile {
  std::filesystem::path file;
  /// "vllm-bench-serve" | "sglang-bench-serving" | "llama-bench" | "genai-perf" | "aiperf" |
  /// "trtllm-bench".
  std::string tool;
  std::string model;    ///< the model as the file names it ("" when it does not)
  std::string machine;  ///< the machine as the file names it (llama-bench's cpu_info and
                        ///< gpu_info), "" when it does not
  std::vector<BenchmarkPoint> points;
};

/// The tools read_benchmark_file knows, for messages: "vllm bench serve --save-result (JSON),
/// SGLang bench_serving --output-file (JSON lines), llama-bench -o json, genai-perf
/// profile_export_genai_perf.json, AIPerf profile_export_aiperf.json, trtllm-bench
/// --report_json".
std::string known_benchmark_tools();

/// Reads one result file, recognising the tool by its keys. Throws base::InputError naming the
/// file (and the run or entry), the field, the value and what was expected for: an unreadable
/// file or malformed JSON; a file of no known tool (listing the known ones); a missing or
/// mistyped field; a load the simulator cannot replay (e.g. a bursty arrival process); a
/// non-positive length, count or figure; a run with no measured figure; and runs of one file
/// that name different models.
BenchmarkFile read_benchmark_file(const std::filesystem::path& file);

}  // namespace llmcap::app
