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
  /// Requests the run sent: Poisson runs, and vLLM / SGLang concurrency runs (the fit replays
  /// that many); 0 when the file does not say.
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
                        ///< gpu_info, trtllm-bench's machine.name), "" when it does not
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
///
/// The file is one JSON document, or JSON Lines (one run per non-blank line: SGLang's
/// --output-file, vLLM's --append-result, llama-bench -o jsonl; a malformed line is named by its
/// number). Python's bare Infinity / NaN (SGLang's infinite request_rate) are read. `where` is
/// `run N` (N: the line of a JSON Lines file, else 1) or, for llama-bench, `entry N (pp512)` /
/// `entry N (tg128)` (N: the entry, 1-based). Per tool (the sources, repository path @ commit,
/// are named at each reader in benchmark_files.cpp):
/// - vLLM / SGLang: a finite request_rate is Poisson arrivals of num_prompts requests (SGLang:
///   its completed requests; vLLM's burstiness must be 1, a ramp-up is refused); rate "inf"
///   with max_concurrency is a closed loop of that many users, without it all requests offline;
///   a finite rate with max_concurrency is refused. Lengths: total_input_tokens and
///   total_output_tokens over completed, rounded. Figures: <mean|median|p90|p99>_ttft_ms and
///   _tpot_ms (ms), output_throughput ("total").
/// - llama-bench: a pp test is a batch-1 TTFT (avg_ns / 1e9, output 1 token); a tg test a
///   batch-1 TPOT (1 / avg_ts, after a 1-token prompt: the simulator needs one); threads =
///   n_threads; model = model_type (else model_filename); machine = cpu_info [+ " + " gpu_info].
///   Refused: pg tests, n_depth > 0, tg tests of one token, entries of other models or machines.
/// - genai-perf / AIPerf: time_to_first_token and inter_token_latency (the TPOT) objects, avg
///   as "mean", p50 as "median", p90, p99, in their "unit" (ms, us, ns, s or sec; others are
///   refused); output_token_throughput avg ("total"); lengths from input_/output_sequence_length
///   avg. genai-perf: concurrency runs only (its request-rate runs send at a constant interval).
///   AIPerf: concurrency (1 when neither option was set) or Poisson request_rate over
///   request_count requests; a constant rate, a rate with a concurrency and a fixed schedule are
///   refused.
/// - trtllm-bench: an offline run of request_info.num_requests (the report does not record
///   --concurrency, so a report of a --concurrency run is misread as offline); lengths
///   avg_input_length / avg_output_length; streaming_metrics avg_ttft_ms, avg_tpot_ms and their
///   percentiles (p50 as "median", p90, p99); performance.system_output_throughput_tok_s.
/// TPOT figures of runs whose mean output rounds to one token are not read (undefined there).
BenchmarkFile read_benchmark_file(const std::filesystem::path& file);

}  // namespace llmcap::app
