// Test-side writer of benchmark result files: renders BenchmarkPoints as the text one of the tools
// read by app/benchmark_files.h writes, so that read_benchmark_file of that text gives the same
// points back (load, lengths, threads, metric, statistic; values within 1e-12 relative; `where`
// is the reader's own). For synthetic-recovery tests of fits to benchmark files.
//
// Points are grouped into runs by identical load, lengths and threads, in order of first
// appearance; within a run each (metric, statistic) may occur once. llama-bench gets one entry
// per point. Each tool can express only some loads and figures (see write_benchmark_text);
// anything else throws std::invalid_argument. Values are written at full double precision
// (shortest round-trip text); the structure follows the sources named in
// tests/app/data/benchmarks/README.md, with fields the reader does not read left out or given
// plain placeholder values.
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/benchmark_files.h"

namespace llmcap::test {

namespace benchmark_writer_detail {

using Json = nlohmann::ordered_json;
using app::BenchmarkPoint;

/// The points of one run: one load, one pair of lengths.
struct Run {
  BenchmarkPoint shape;
  std::vector<BenchmarkPoint> points;

  /// The value of (metric, statistic), or NaN when the run has no such point.
  double figure(const std::string& metric, const std::string& statistic) const {
    for (const BenchmarkPoint& p : points) {
      if (p.metric == metric && p.statistic == statistic) return p.value;
    }
    return std::nan("");
  }
  bool has(const std::string& metric) const {
    for (const BenchmarkPoint& p : points) {
      if (p.metric == metric) return true;
    }
    return false;
  }
};

[[noreturn]] inline void refuse(const std::string& tool, const std::string& what) {
  throw std::invalid_argument("write_benchmark_text: " + tool + " cannot express " + what);
}

inline bool same_run(const BenchmarkPoint& a, const BenchmarkPoint& b) {
  return a.batch == b.batch && a.offline_requests == b.offline_requests &&
         a.concurrency == b.concurrency && a.request_rate_per_s == b.request_rate_per_s &&
         a.num_requests == b.num_requests && a.prompt_tokens == b.prompt_tokens &&
         a.output_tokens == b.output_tokens && a.threads == b.threads;
}

/// The points grouped into runs; checks each figure is one `tool` writes.
inline std::vector<Run> runs_of(const std::string& tool,
                                const std::vector<BenchmarkPoint>& points) {
  std::vector<Run> runs;
  for (const BenchmarkPoint& p : points) {
    const bool time = p.metric == "ttft" || p.metric == "tpot";
    const bool known_statistic = p.statistic == "mean" || p.statistic == "median" ||
                                 p.statistic == "p90" || p.statistic == "p99";
    if (!(time && known_statistic) && !(p.metric == "throughput" && p.statistic == "total")) {
      refuse(tool, "the figure " + p.metric + " " + p.statistic);
    }
    if (p.metric == "tpot" && p.output_tokens < 2) refuse(tool, "a tpot of one output token");
    if (!(p.value > 0)) refuse(tool, "a non-positive figure");
    Run* run = nullptr;
    for (Run& r : runs) {
      if (same_run(r.shape, p)) run = &r;
    }
    if (run == nullptr) {
      runs.push_back({p, {}});
      run = &runs.back();
    }
    if (!std::isnan(run->figure(p.metric, p.statistic))) {
      refuse(tool, "two " + p.metric + " " + p.statistic + " figures in one run");
    }
    run->points.push_back(p);
  }
  if (runs.empty()) refuse(tool, "an empty file");
  return runs;
}

/// Load checks shared by the tools but llama-bench: no static batch, no thread count.
inline void check_serving_load(const std::string& tool, const Run& run) {
  if (run.shape.batch > 0) refuse(tool, "a static batch");
  if (run.shape.threads != 0) refuse(tool, "a thread count");
}

/// Adds `<prefix>_<metric>_ms` for each time statistic of `metric` the run has.
inline void add_serving_times(Json& out, const Run& run, const std::string& metric) {
  for (const char* statistic : {"mean", "median", "p90", "p99"}) {
    const double v = run.figure(metric, statistic);
    if (!std::isnan(v)) out[std::string(statistic) + "_" + metric + "_ms"] = v * 1e3;
  }
}

/// The requests a serving run sent: its count, or for a concurrency run ten per user.
inline int64_t serving_requests(const Run& run) {
  if (run.shape.offline_requests > 0) return run.shape.offline_requests;
  if (run.shape.num_requests > 0) return run.shape.num_requests;
  return run.shape.concurrency * 10;
}

/// vLLM `vllm bench serve --save-result` (one object; several runs: --append-result's lines).
inline std::string vllm_text(const std::string& model, const std::vector<Run>& runs) {
  std::string text;
  for (const Run& run : runs) {
    check_serving_load("vllm-bench-serve", run);
    const int64_t n = serving_requests(run);
    const double throughput = run.figure("throughput", "total");
    const double duration_s = std::isnan(throughput)
                                  ? 100.0
                                  : static_cast<double>(n * run.shape.output_tokens) / throughput;
    Json o;
    o["date"] = "20250101-120000";
    o["endpoint_type"] = "vllm";
    o["backend"] = "vllm";
    o["label"] = nullptr;
    o["model_id"] = model;
    o["tokenizer_id"] = model;
    o["num_prompts"] = n;
    o["request_rate"] =
        run.shape.request_rate_per_s > 0 ? Json(run.shape.request_rate_per_s) : Json("inf");
    o["burstiness"] = 1.0;
    o["max_concurrency"] = run.shape.concurrency > 0 ? Json(run.shape.concurrency) : Json();
    o["duration"] = duration_s;
    o["completed"] = n;
    o["failed"] = 0;
    o["total_input_tokens"] = n * run.shape.prompt_tokens;
    o["total_output_tokens"] = n * run.shape.output_tokens;
    o["request_throughput"] = static_cast<double>(n) / duration_s;
    o["request_goodput"] = nullptr;
    if (!std::isnan(throughput)) o["output_throughput"] = throughput;
    add_serving_times(o, run, "ttft");
    add_serving_times(o, run, "tpot");
    if (!text.empty()) text += "\n";
    text += o.dump();
  }
  return text;
}

/// SGLang `bench_serving --output-file`: one JSON line per run; an infinite request rate is
/// Python's bare Infinity.
inline std::string sglang_text(const std::vector<Run>& runs) {
  const std::string infinity = "\"__infinity__\"";
  std::string text;
  for (const Run& run : runs) {
    check_serving_load("sglang-bench-serving", run);
    const int64_t n = serving_requests(run);
    const double throughput = run.figure("throughput", "total");
    const double duration_s = std::isnan(throughput)
                                  ? 100.0
                                  : static_cast<double>(n * run.shape.output_tokens) / throughput;
    Json o;
    o["backend"] = "sglang";
    o["dataset_name"] = "random";
    o["request_rate"] = run.shape.request_rate_per_s > 0 ? Json(run.shape.request_rate_per_s)
                                                         : Json("__infinity__");
    o["max_concurrency"] = run.shape.concurrency > 0 ? Json(run.shape.concurrency) : Json();
    o["sharegpt_output_len"] = nullptr;
    o["random_input_len"] = run.shape.prompt_tokens;
    o["random_output_len"] = run.shape.output_tokens;
    o["random_range_ratio"] = 1.0;
    o["duration"] = duration_s;
    o["completed"] = n;
    o["total_input_tokens"] = n * run.shape.prompt_tokens;
    o["total_output_tokens"] = n * run.shape.output_tokens;
    o["total_output_tokens_retokenized"] = n * run.shape.output_tokens;
    o["request_throughput"] = static_cast<double>(n) / duration_s;
    if (!std::isnan(throughput)) o["output_throughput"] = throughput;
    add_serving_times(o, run, "ttft");
    add_serving_times(o, run, "tpot");
    o["accept_length"] = nullptr;
    std::string line = o.dump();
    const auto at = line.find(infinity);
    if (at != std::string::npos) line.replace(at, infinity.size(), "Infinity");
    text += line + "\n";
  }
  return text;
}

/// llama-bench -o json: one entry per point; a ttft point is a pp test, a tpot point a tg test.
/// avg_ns keeps a fraction here so that the round trip is exact (llama-bench writes whole ns).
inline std::string llama_bench_text(const std::string& model, const std::vector<Run>& runs) {
  const std::string tool = "llama-bench";
  std::string text = "[\n";
  bool first = true;
  for (const Run& run : runs) {
    if (run.shape.batch != 1) refuse(tool, "a load other than batch 1");
    if (run.shape.threads < 1) refuse(tool, "a test without a thread count");
    for (const BenchmarkPoint& p : run.points) {
      const bool pp = p.metric == "ttft";
      if (p.statistic != "mean" || p.metric == "throughput") {
        refuse(tool, "the figure " + p.metric + " " + p.statistic);
      }
      if (pp && p.output_tokens != 1) refuse(tool, "a ttft with more than one output token");
      if (!pp && p.prompt_tokens != 1) refuse(tool, "a tpot after a prompt of many tokens");
      const int64_t n_prompt = pp ? p.prompt_tokens : 0;
      const int64_t n_gen = pp ? 0 : p.output_tokens;
      const double avg_ns = pp ? p.value * 1e9 : p.value * static_cast<double>(n_gen) * 1e9;
      const double avg_ts = pp ? static_cast<double>(n_prompt) / p.value : 1 / p.value;
      Json e;
      e["build_commit"] = "0000000";
      e["build_number"] = 1;
      e["cpu_info"] = "";
      e["gpu_info"] = "";
      e["backends"] = "CPU";
      e["model_filename"] = model;
      e["model_type"] = model;
      e["model_size"] = 0;
      e["model_n_params"] = 0;
      e["n_batch"] = 2048;
      e["n_ubatch"] = 512;
      e["n_threads"] = p.threads;
      e["cpu_mask"] = "0x0";
      e["cpu_strict"] = false;
      e["poll"] = 50;
      e["type_k"] = "f16";
      e["type_v"] = "f16";
      e["n_gpu_layers"] = 0;
      e["split_mode"] = "layer";
      e["main_gpu"] = 0;
      e["no_kv_offload"] = false;
      e["flash_attn"] = 0;
      e["n_prompt"] = n_prompt;
      e["n_gen"] = n_gen;
      e["n_depth"] = 0;
      e["test_time"] = "2025-01-01T12:00:00Z";
      e["avg_ns"] = avg_ns;
      e["stddev_ns"] = 0;
      e["avg_ts"] = avg_ts;
      e["stddev_ts"] = 0.0;
      e["samples_ns"] = Json::array({std::llround(avg_ns)});
      e["samples_ts"] = Json::array({avg_ts});
      if (!first) text += ",\n";
      text += e.dump(2);
      first = false;
    }
  }
  return text + "\n]\n";
}

/// A genai-perf / AIPerf metric object of the time statistics of `metric`, in ms.
inline Json metric_times(const Run& run, const std::string& metric) {
  Json m;
  m["unit"] = "ms";
  const std::pair<const char*, const char*> stats[] = {
      {"mean", "avg"}, {"median", "p50"}, {"p90", "p90"}, {"p99", "p99"}};
  for (const auto& [statistic, key] : stats) {
    const double v = run.figure(metric, statistic);
    if (!std::isnan(v)) m[key] = v * 1e3;
  }
  return m;
}

/// The statistics shared by genai-perf and AIPerf, in their order.
inline Json metric_statistics(const Run& run, const std::string& count_unit) {
  Json o;
  if (run.has("ttft")) o["time_to_first_token"] = metric_times(run, "ttft");
  if (run.has("tpot")) o["inter_token_latency"] = metric_times(run, "tpot");
  const double throughput = run.figure("throughput", "total");
  if (!std::isnan(throughput))
    o["output_token_throughput"] = {{"unit", "tokens/sec"}, {"avg", throughput}};
  o["output_sequence_length"] = {{"unit", "tokens"},
                                 {"avg", static_cast<double>(run.shape.output_tokens)}};
  o["input_sequence_length"] = {{"unit", "tokens"},
                                {"avg", static_cast<double>(run.shape.prompt_tokens)}};
  o["request_count"] = {{"unit", count_unit}, {"avg", static_cast<double>(serving_requests(run))}};
  return o;
}

/// genai-perf profile_export_genai_perf.json (config-file versions): concurrency runs only.
inline std::string genai_perf_text(const std::string& model, const std::vector<Run>& runs) {
  const std::string tool = "genai-perf";
  if (runs.size() != 1) refuse(tool, "more than one run in a file");
  const Run& run = runs.front();
  check_serving_load(tool, run);
  if (run.shape.concurrency < 1) refuse(tool, "a load other than a concurrency");
  Json o = metric_statistics(run, "count");
  o["input_config"] = {
      {"model_names", Json::array({model})},
      {"subcommand", "profile"},
      {"endpoint", {{"type", "chat"}, {"streaming", true}, {"url", "localhost:8000"}}},
      {"perf_analyzer",
       {{"path", "perf_analyzer"},
        {"stimulus", {{"concurrency", run.shape.concurrency}}},
        {"stability_percentage", 999}}},
      {"input", {{"num_dataset_entries", 100}}},
      {"output", {{"artifact_directory", "artifacts"}}},
      {"tokenizer", {{"name", model}}}};
  return o.dump(2);
}

/// AIPerf profile_export_aiperf.json: concurrency or Poisson-rate runs.
inline std::string aiperf_text(const std::string& model, const std::vector<Run>& runs) {
  const std::string tool = "aiperf";
  if (runs.size() != 1) refuse(tool, "more than one run in a file");
  const Run& run = runs.front();
  check_serving_load(tool, run);
  Json loadgen;
  if (run.shape.concurrency > 0) {
    loadgen["concurrency"] = run.shape.concurrency;
  } else if (run.shape.request_rate_per_s > 0) {
    loadgen["request_rate"] = run.shape.request_rate_per_s;
    loadgen["request_count"] = run.shape.num_requests;
  } else {
    refuse(tool, "an offline load");
  }
  Json o = metric_statistics(run, "requests");
  o["input_config"] = {{"endpoint", {{"model_names", Json::array({model})}, {"streaming", true}}},
                       {"loadgen", loadgen},
                       {"cli_command", "aiperf profile --model " + model}};
  o["was_cancelled"] = false;
  o["error_summary"] = Json::array();
  o["start_time"] = "2025-01-01T12:00:00";
  o["end_time"] = "2025-01-01T12:10:00";
  return o.dump(2);
}

/// trtllm-bench percentiles of one streaming metric, in ms.
inline Json trtllm_percentiles(const Run& run, const std::string& metric) {
  Json p = Json::object();
  for (const auto& [statistic, key] : {std::pair<const char*, const char*>{"median", "p50"},
                                       {"p90", "p90"},
                                       {"p99", "p99"},
                                       {"mean", "average"}}) {
    const double v = run.figure(metric, statistic);
    if (!std::isnan(v)) p[key] = v * 1e3;
  }
  return p;
}

/// trtllm-bench throughput --report_json: offline runs only (the report names no concurrency).
inline std::string trtllm_text(const std::string& model, const std::vector<Run>& runs) {
  const std::string tool = "trtllm-bench";
  if (runs.size() != 1) refuse(tool, "more than one run in a file");
  const Run& run = runs.front();
  check_serving_load(tool, run);
  if (run.shape.offline_requests < 1) refuse(tool, "a load other than offline requests");
  const int64_t n = run.shape.offline_requests;
  const double throughput = run.figure("throughput", "total");
  Json o;
  o["engine"] = {{"model", model},
                 {"model_path", "None"},
                 {"engine_dir", "None"},
                 {"version", "1.0.0"},
                 {"backend", "Pytorch"},
                 {"dtype", "bfloat16"},
                 {"kv_cache_dtype", nullptr},
                 {"quantization", nullptr}};
  o["machine"] = nullptr;
  o["world_info"] = {{"tp_size", 1},
                     {"pp_size", 1},
                     {"ep_size", 1},
                     {"world_size", 1},
                     {"max_batch_size", 2048},
                     {"max_num_tokens", 8192},
                     {"scheduling_policy", "GUARANTEED_NO_EVICT"},
                     {"kv_cache_percentage", 0.9},
                     {"issue_rate", 0.0}};
  o["request_info"] = {{"num_requests", n},
                       {"avg_num_concurrent_requests", static_cast<double>(n) / 2},
                       {"avg_input_length", static_cast<double>(run.shape.prompt_tokens)},
                       {"avg_output_length", static_cast<double>(run.shape.output_tokens)}};
  Json performance = {{"total_latency_ms", 100000.0}, {"avg_request_latency_ms", 50000.0}};
  if (!std::isnan(throughput)) performance["system_output_throughput_tok_s"] = throughput;
  o["performance"] = performance;
  if (run.has("ttft") || run.has("tpot")) {
    Json s;
    if (!std::isnan(run.figure("ttft", "mean")))
      s["avg_ttft_ms"] = run.figure("ttft", "mean") * 1e3;
    if (!std::isnan(run.figure("tpot", "mean")))
      s["avg_tpot_ms"] = run.figure("tpot", "mean") * 1e3;
    if (run.has("tpot")) s["tpot_percentiles"] = trtllm_percentiles(run, "tpot");
    if (run.has("ttft")) s["ttft_percentiles"] = trtllm_percentiles(run, "ttft");
    o["streaming_metrics"] = s;
  }
  o["dataset"] = {{"num_requests", n}};
  return o.dump(4);
}

}  // namespace benchmark_writer_detail

/// The text `tool` ("vllm-bench-serve", "sglang-bench-serving", "llama-bench", "genai-perf",
/// "aiperf", "trtllm-bench") would write for `points` measured on `model`. What each tool can
/// express: vLLM and SGLang offline, concurrency and Poisson-rate runs; genai-perf
/// one concurrency run; AIPerf one concurrency or Poisson-rate run; trtllm-bench one offline run
/// (these four: ttft and tpot mean/median/p90/p99, throughput total); llama-bench batch-1 mean
/// ttft with one output token (pp tests) and mean tpot after a one-token prompt (tg tests), with
/// a thread count. Throws std::invalid_argument for anything else.
inline std::string write_benchmark_text(const std::string& tool, const std::string& model,
                                        const std::vector<app::BenchmarkPoint>& points) {
  namespace d = benchmark_writer_detail;
  const std::vector<d::Run> runs = d::runs_of(tool, points);
  if (tool == "vllm-bench-serve") return d::vllm_text(model, runs);
  if (tool == "sglang-bench-serving") return d::sglang_text(runs);
  if (tool == "llama-bench") return d::llama_bench_text(model, runs);
  if (tool == "genai-perf") return d::genai_perf_text(model, runs);
  if (tool == "aiperf") return d::aiperf_text(model, runs);
  if (tool == "trtllm-bench") return d::trtllm_text(model, runs);
  d::refuse(tool, "anything: not a known tool");
}

}  // namespace llmcap::test
