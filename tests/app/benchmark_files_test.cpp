#include "app/benchmark_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/error.h"
#include "benchmark_file_writer.h"
#include "test_util.h"

namespace llmcap::app {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing::TempDir;
using Json = nlohmann::ordered_json;

std::filesystem::path fixture(const std::string& name) {
  return testing::test_data("benchmarks/" + name);
}

/// The fixture `name` (JSON) with `edit` applied, as text.
std::string edited(const std::string& name, const std::function<void(Json&)>& edit) {
  Json doc = Json::parse(testing::read_text(fixture(name)));
  edit(doc);
  return doc.dump(2);
}

/// The one point of `file` read at `where` for (metric, statistic); fails the test when there is
/// not exactly one.
BenchmarkPoint point(const BenchmarkFile& file, const std::string& where, const std::string& metric,
                     const std::string& statistic) {
  std::vector<BenchmarkPoint> found;
  for (const BenchmarkPoint& p : file.points) {
    if (p.where == where && p.metric == metric && p.statistic == statistic) found.push_back(p);
  }
  EXPECT_EQ(found.size(), 1u) << where << " " << metric << " " << statistic;
  return found.empty() ? BenchmarkPoint{} : found.front();
}

/// Every point of `file` read at `where` has this load, these lengths and these threads.
void expect_run(const BenchmarkFile& file, const std::string& where, const BenchmarkPoint& shape) {
  int count = 0;
  for (const BenchmarkPoint& p : file.points) {
    if (p.where != where) continue;
    ++count;
    EXPECT_EQ(p.batch, shape.batch) << where;
    EXPECT_EQ(p.offline_requests, shape.offline_requests) << where;
    EXPECT_EQ(p.concurrency, shape.concurrency) << where;
    EXPECT_EQ(p.request_rate_per_s, shape.request_rate_per_s) << where;
    EXPECT_EQ(p.num_requests, shape.num_requests) << where;
    EXPECT_EQ(p.prompt_tokens, shape.prompt_tokens) << where;
    EXPECT_EQ(p.output_tokens, shape.output_tokens) << where;
    EXPECT_EQ(p.threads, shape.threads) << where;
  }
  EXPECT_GT(count, 0) << "no point at " << where;
}

BenchmarkPoint shape(int64_t prompt, int64_t output) {
  BenchmarkPoint p;
  p.prompt_tokens = prompt;
  p.output_tokens = output;
  return p;
}

class BenchmarkFiles : public ::testing::Test {
 protected:
  /// The message of the InputError reading `text` written as `name`.
  std::string error(const std::string& name, const std::string& text) {
    const std::filesystem::path file = dir_.write(name, text);
    return testing::error_message<base::InputError>([&] { read_benchmark_file(file); });
  }
  BenchmarkFile read(const std::string& name, const std::string& text) {
    return read_benchmark_file(dir_.write(name, text));
  }
  /// The path of `name` in the scratch folder, as messages name it.
  std::string in_dir(const std::string& name) const { return (dir_.path() / name).string(); }

  TempDir dir_;
};

// ---------------------------------------------------------------------------------------------
// vLLM and SGLang

TEST_F(BenchmarkFiles, VllmPoissonRunGivesOnePointPerFigure) {
  const BenchmarkFile f = read_benchmark_file(fixture("vllm_poisson.json"));
  EXPECT_EQ(f.tool, "vllm-bench-serve");
  EXPECT_EQ(f.model, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(f.machine, "");
  ASSERT_EQ(f.points.size(), 7u);
  BenchmarkPoint poisson = shape(1024, 128);
  poisson.request_rate_per_s = 4;
  poisson.num_requests = 8;
  expect_run(f, "run 1", poisson);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "ttft", "mean").value, 45.25 / 1e3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "ttft", "median").value, 41.5 / 1e3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "ttft", "p99").value, 60.5 / 1e3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "tpot", "mean").value, 12.5 / 1e3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "tpot", "median").value, 12.25 / 1e3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "tpot", "p99").value, 14.75 / 1e3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "throughput", "total").value, 409.6);
}

TEST_F(BenchmarkFiles, VllmConcurrencyRunIsAClosedLoop) {
  const BenchmarkFile f = read_benchmark_file(fixture("vllm_concurrency.json"));
  BenchmarkPoint closed = shape(512, 256);
  closed.concurrency = 16;
  closed.num_requests = 64;  // num_prompts: the fit replays as many
  expect_run(f, "run 1", closed);
  EXPECT_EQ(f.points.size(), 7u);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "tpot", "mean").value, 19.5 / 1e3);
}

TEST_F(BenchmarkFiles, VllmRunWithNeitherRateNorConcurrencyIsOffline) {
  const BenchmarkFile f = read_benchmark_file(fixture("vllm_offline.json"));
  BenchmarkPoint offline = shape(512, 256);
  offline.offline_requests = 100;
  expect_run(f, "run 1", offline);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "ttft", "mean").value, 2.5);
}

TEST_F(BenchmarkFiles, PythonsBareInfinityIsAnInfiniteRate) {
  const std::string text =
      testing::replace_once(testing::read_text(fixture("vllm_offline.json")),
                            R"("request_rate": "inf")", R"("request_rate": Infinity)");
  const BenchmarkFile f = read("r.json", text);
  BenchmarkPoint offline = shape(512, 256);
  offline.offline_requests = 100;
  expect_run(f, "run 1", offline);
}

/// The text of the one-line fixture `name` without its final newline, as json.dump writes it.
std::string one_line(const std::string& name) {
  std::string text = testing::read_text(fixture(name));
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

TEST_F(BenchmarkFiles, VllmAppendedRunsAreRunsNamedByTheirLine) {
  // --append-result writes a newline, then the next run's object.
  const BenchmarkFile f =
      read("r.json", one_line("vllm_poisson.json") + "\n" + one_line("vllm_concurrency.json"));
  EXPECT_EQ(f.points.size(), 14u);
  EXPECT_EQ(point(f, "run 1", "ttft", "mean").request_rate_per_s, 4);
  EXPECT_EQ(point(f, "run 2", "ttft", "mean").concurrency, 16);
}

TEST_F(BenchmarkFiles, SglangLinesAreRunsNamedByTheirLine) {
  const BenchmarkFile f = read_benchmark_file(fixture("sglang_runs.jsonl"));
  EXPECT_EQ(f.tool, "sglang-bench-serving");
  EXPECT_EQ(f.model, "");
  EXPECT_EQ(f.points.size(), 21u);
  BenchmarkPoint closed = shape(1024, 256);
  closed.concurrency = 8;
  closed.num_requests = 80;  // completed (SGLang names no prompt count)
  expect_run(f, "run 1", closed);
  BenchmarkPoint poisson = shape(1024, 256);
  poisson.request_rate_per_s = 2;
  poisson.num_requests = 100;
  expect_run(f, "run 3", poisson);
  BenchmarkPoint offline = shape(1024, 256);
  offline.offline_requests = 200;
  expect_run(f, "run 4", offline);
  EXPECT_DOUBLE_EQ(point(f, "run 3", "ttft", "p99").value, 70.0 / 1e3);
  EXPECT_DOUBLE_EQ(point(f, "run 4", "throughput", "total").value, 2048);
}

// ---------------------------------------------------------------------------------------------
// llama-bench

TEST_F(BenchmarkFiles, LlamaBenchPpTestIsATtftAndTgTestATpot) {
  const BenchmarkFile f = read_benchmark_file(fixture("llama_bench.json"));
  EXPECT_EQ(f.tool, "llama-bench");
  EXPECT_EQ(f.model, "llama 8B Q4_0");
  EXPECT_EQ(f.machine, "AMD EPYC 9654 96-Core Processor");
  ASSERT_EQ(f.points.size(), 2u);
  BenchmarkPoint pp = shape(512, 1);
  pp.batch = 1;
  pp.threads = 32;
  expect_run(f, "entry 1 (pp512)", pp);
  EXPECT_DOUBLE_EQ(point(f, "entry 1 (pp512)", "ttft", "mean").value, 2.56);
  BenchmarkPoint tg = shape(1, 128);
  tg.batch = 1;
  tg.threads = 32;
  expect_run(f, "entry 2 (tg128)", tg);
  EXPECT_DOUBLE_EQ(point(f, "entry 2 (tg128)", "tpot", "mean").value, 1 / 20.0);
}

TEST_F(BenchmarkFiles, LlamaBenchMachineIsTheCpuAndTheGpu) {
  const std::string text = edited("llama_bench.json", [](Json& doc) {
    for (Json& entry : doc) entry["gpu_info"] = "NVIDIA GeForce RTX 4090";
  });
  EXPECT_EQ(read("b.json", text).machine,
            "AMD EPYC 9654 96-Core Processor + NVIDIA GeForce RTX 4090");
}

TEST_F(BenchmarkFiles, LlamaBenchJsonLinesAreEntriesNamedByTheirLine) {
  const Json doc = Json::parse(testing::read_text(fixture("llama_bench.json")));
  const BenchmarkFile f = read("b.jsonl", doc[0].dump() + "\n" + doc[1].dump() + "\n");
  ASSERT_EQ(f.points.size(), 2u);
  EXPECT_EQ(f.points[1].where, "entry 2 (tg128)");
}

// ---------------------------------------------------------------------------------------------
// genai-perf and AIPerf

TEST_F(BenchmarkFiles, GenaiPerfExportIsAConcurrencyRunInSeconds) {
  const BenchmarkFile f = read_benchmark_file(fixture("genai_perf_profile_export.json"));
  EXPECT_EQ(f.tool, "genai-perf");
  EXPECT_EQ(f.model, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(f.points.size(), 9u);
  BenchmarkPoint closed = shape(512, 256);  // 512.3 and 255.6 rounded
  closed.concurrency = 4;
  expect_run(f, "run 1", closed);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "ttft", "mean").value, 35.5e-3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "ttft", "median").value, 34.0e-3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "ttft", "p90").value, 42.5e-3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "ttft", "p99").value, 52.0e-3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "tpot", "median").value, 9.55e-3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "throughput", "total").value, 409.6);
}

TEST_F(BenchmarkFiles, GenaiPerfCommandLineExportIsReadToo) {
  const BenchmarkFile f = read_benchmark_file(fixture("genai_perf_legacy_profile_export.json"));
  EXPECT_EQ(f.tool, "genai-perf");
  EXPECT_EQ(f.model, "gpt2");
  BenchmarkPoint closed = shape(200, 128);
  closed.concurrency = 2;
  expect_run(f, "run 1", closed);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "throughput", "total").value, 121.6);
}

TEST_F(BenchmarkFiles, TimesAreConvertedFromTheirUnit) {
  const std::string text = edited("genai_perf_profile_export.json", [](Json& doc) {
    doc["time_to_first_token"]["unit"] = "ns";
    doc["time_to_first_token"]["avg"] = 35500000.0;
    doc["inter_token_latency"]["unit"] = "sec";
    doc["inter_token_latency"]["avg"] = 0.0096;
  });
  const BenchmarkFile f = read("g.json", text);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "ttft", "mean").value, 35.5e-3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "tpot", "mean").value, 9.6e-3);
}

TEST_F(BenchmarkFiles, AiperfConcurrencyExport) {
  const BenchmarkFile f = read_benchmark_file(fixture("aiperf_profile_export.json"));
  EXPECT_EQ(f.tool, "aiperf");
  EXPECT_EQ(f.model, "Qwen/Qwen3-0.6B");
  EXPECT_EQ(f.points.size(), 9u);
  BenchmarkPoint closed = shape(1000, 200);
  closed.concurrency = 8;
  expect_run(f, "run 1", closed);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "ttft", "p90").value, 86.0e-3);
}

TEST_F(BenchmarkFiles, AiperfRequestRateRunIsPoissonOverItsRequests) {
  const std::string text = edited("aiperf_profile_export.json", [](Json& doc) {
    doc["input_config"]["loadgen"] = {{"request_rate", 5.0}, {"request_count", 100}};
  });
  BenchmarkPoint poisson = shape(1000, 200);
  poisson.request_rate_per_s = 5;
  poisson.num_requests = 100;
  expect_run(read("a.json", text), "run 1", poisson);
}

TEST_F(BenchmarkFiles, AiperfWithoutLoadOptionsRunsOneUser) {
  const std::string text =
      edited("aiperf_profile_export.json", [](Json& doc) { doc["input_config"].erase("loadgen"); });
  BenchmarkPoint closed = shape(1000, 200);
  closed.concurrency = 1;
  expect_run(read("a.json", text), "run 1", closed);
}

// ---------------------------------------------------------------------------------------------
// trtllm-bench

TEST_F(BenchmarkFiles, TrtllmReportIsAnOfflineRun) {
  const BenchmarkFile f = read_benchmark_file(fixture("trtllm_bench_report.json"));
  EXPECT_EQ(f.tool, "trtllm-bench");
  EXPECT_EQ(f.model, "meta-llama/Llama-3.1-8B-Instruct");
  EXPECT_EQ(f.machine, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(f.points.size(), 9u);
  BenchmarkPoint offline = shape(128, 128);  // 127.6 rounded
  offline.offline_requests = 1000;
  expect_run(f, "run 1", offline);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "ttft", "mean").value, 6.1);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "ttft", "p90").value, 11.0);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "tpot", "mean").value, 37.5e-3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "tpot", "p99").value, 45.0e-3);
  EXPECT_DOUBLE_EQ(point(f, "run 1", "throughput", "total").value, 6076.190476190476);
}

TEST_F(BenchmarkFiles, TrtllmReportWithoutStreamingHasOnlyTheThroughput) {
  const std::string text =
      edited("trtllm_bench_report.json", [](Json& doc) { doc.erase("streaming_metrics"); });
  const BenchmarkFile f = read("t.json", text);
  ASSERT_EQ(f.points.size(), 1u);
  EXPECT_EQ(f.points[0].metric, "throughput");
}

// ---------------------------------------------------------------------------------------------
// The test-side writer: what it writes reads back as the same points.

/// A figure value with all 17 digits in use.
double value(double base) { return base * (1 + 1.0 / 3 * 1e-7); }

std::vector<BenchmarkPoint> figures(BenchmarkPoint load, const std::vector<std::string>& keys) {
  std::vector<BenchmarkPoint> out;
  double v = 0.0123456789;
  for (const std::string& key : keys) {
    BenchmarkPoint p = load;
    p.metric = key.substr(0, key.find(' '));
    p.statistic = key.substr(key.find(' ') + 1);
    p.value = p.metric == "throughput" ? value(1234.5) : value(v);
    v *= 1.37;
    out.push_back(p);
  }
  return out;
}

std::vector<BenchmarkPoint> joined(std::vector<std::vector<BenchmarkPoint>> parts) {
  std::vector<BenchmarkPoint> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

/// Every point of `written` occurs once in `read`, with a value within 1e-12 relative.
void expect_same_points(const std::vector<BenchmarkPoint>& written,
                        const std::vector<BenchmarkPoint>& read, const std::string& tool) {
  ASSERT_EQ(read.size(), written.size()) << tool;
  for (const BenchmarkPoint& w : written) {
    int matches = 0;
    for (const BenchmarkPoint& r : read) {
      if (r.batch == w.batch && r.offline_requests == w.offline_requests &&
          r.concurrency == w.concurrency && r.request_rate_per_s == w.request_rate_per_s &&
          r.num_requests == w.num_requests && r.prompt_tokens == w.prompt_tokens &&
          r.output_tokens == w.output_tokens && r.threads == w.threads && r.metric == w.metric &&
          r.statistic == w.statistic) {
        ++matches;
        EXPECT_NEAR(r.value / w.value, 1.0, 1e-12) << tool << " " << w.metric << " " << w.statistic;
      }
    }
    EXPECT_EQ(matches, 1) << tool << " " << w.metric << " " << w.statistic << " at prompt "
                          << w.prompt_tokens;
  }
}

TEST_F(BenchmarkFiles, WrittenFilesOfEveryToolReadBackAsTheSamePoints) {
  const std::vector<std::string> all = {"ttft mean", "ttft median", "ttft p90",
                                        "ttft p99",  "tpot mean",   "tpot median",
                                        "tpot p90",  "tpot p99",    "throughput total"};
  BenchmarkPoint poisson = shape(1000, 300);
  poisson.request_rate_per_s = 3.7000000000000002;
  poisson.num_requests = 200;
  BenchmarkPoint closed = shape(2048, 128);
  closed.concurrency = 8;
  closed.num_requests = 24;
  BenchmarkPoint offline = shape(100, 1);
  offline.offline_requests = 500;
  const std::vector<BenchmarkPoint> serving = joined(
      {figures(poisson, all), figures(closed, {"ttft mean", "tpot median", "throughput total"}),
       figures(offline, {"ttft p99", "throughput total"})});
  BenchmarkPoint pp = shape(512, 1);
  pp.batch = 1;
  pp.threads = 16;
  BenchmarkPoint tg = shape(1, 128);
  tg.batch = 1;
  tg.threads = 16;
  BenchmarkPoint pp8 = pp;
  pp8.prompt_tokens = 128;
  pp8.threads = 8;
  const std::vector<BenchmarkPoint> llama =
      joined({figures(pp, {"ttft mean"}), figures(tg, {"tpot mean"}), figures(pp8, {"ttft mean"})});
  BenchmarkPoint four = shape(512, 256);
  four.concurrency = 4;
  BenchmarkPoint thousand = shape(128, 128);
  thousand.offline_requests = 1000;

  const std::vector<std::pair<std::string, std::vector<BenchmarkPoint>>> cases = {
      {"vllm-bench-serve", serving},
      {"sglang-bench-serving", serving},
      {"llama-bench", llama},
      {"genai-perf", figures(four, all)},
      {"aiperf", figures(four, all)},
      {"aiperf", figures(poisson, all)},
      {"trtllm-bench", figures(thousand, all)}};
  for (const auto& [tool, points] : cases) {
    const BenchmarkFile f = read(tool + ".out", test::write_benchmark_text(tool, "m-7b", points));
    EXPECT_EQ(f.tool, tool);
    // SGLang's lines name no model.
    EXPECT_EQ(f.model, tool == "sglang-bench-serving" ? "" : "m-7b") << tool;
    expect_same_points(points, f.points, tool);
  }
}

TEST_F(BenchmarkFiles, WriterRefusesWhatTheToolCannotExpress) {
  BenchmarkPoint closed = shape(512, 256);
  closed.concurrency = 4;
  EXPECT_THROW(test::write_benchmark_text("trtllm-bench", "m", figures(closed, {"ttft mean"})),
               std::invalid_argument);
  EXPECT_THROW(test::write_benchmark_text("llama-bench", "m", figures(closed, {"ttft mean"})),
               std::invalid_argument);
}

// ---------------------------------------------------------------------------------------------
// Errors

TEST_F(BenchmarkFiles, UnreadableFileIsNamed) {
  const std::filesystem::path missing = dir_.path() / "missing.json";
  EXPECT_EQ(testing::error_message<base::InputError>([&] { read_benchmark_file(missing); }),
            missing.string() + ": cannot open file");
}

TEST_F(BenchmarkFiles, MalformedJsonIsNamed) {
  const std::string message = error("r.json", R"({"model_id": "m", "request_rate": })");
  EXPECT_THAT(message,
              StartsWith(in_dir("r.json") + ": malformed JSON: [json.exception.parse_error.101]"));
}

TEST_F(BenchmarkFiles, MalformedLineOfJsonLinesNamesTheLine) {
  const std::string text = testing::read_text(fixture("sglang_runs.jsonl"));
  const std::string message = error("r.jsonl", text.substr(0, text.size() - 40));
  EXPECT_THAT(message, StartsWith(in_dir("r.jsonl") +
                                  ": line 4: malformed JSON: [json.exception.parse_error"));
}

TEST_F(BenchmarkFiles, UnknownToolListsTheKnownToolsAndTheFileKeys) {
  EXPECT_EQ(error("r.json", R"({"rows": [], "as_of": "2025"})"),
            in_dir("r.json") +
                ": not a result file of a known benchmark tool (vllm bench serve --save-result "
                "(JSON), SGLang bench_serving --output-file (JSON lines), llama-bench -o json, "
                "genai-perf profile_export_genai_perf.json, AIPerf profile_export_aiperf.json, "
                "trtllm-bench --report_json); its keys: as_of, rows");
}

TEST_F(BenchmarkFiles, MissingFieldIsNamedWithItsRun) {
  const std::string text =
      edited("vllm_poisson.json", [](Json& doc) { doc.erase("total_input_tokens"); });
  EXPECT_EQ(error("r.json", text),
            in_dir("r.json") + ": run 1: field \"total_input_tokens\": missing");
}

TEST_F(BenchmarkFiles, MistypedFieldIsNamedWithItsValue) {
  const std::string text = edited("vllm_poisson.json", [](Json& doc) { doc["num_prompts"] = "8"; });
  EXPECT_EQ(
      error("r.json", text),
      in_dir("r.json") + ": run 1: field \"num_prompts\": expected a positive integer, got \"8\"");
}

TEST_F(BenchmarkFiles, NonPositiveLengthIsRefused) {
  const std::string text =
      edited("vllm_poisson.json", [](Json& doc) { doc["total_output_tokens"] = 0; });
  EXPECT_EQ(error("r.json", text),
            in_dir("r.json") +
                ": run 1: field \"total_output_tokens\": expected a positive integer, got 0");
}

TEST_F(BenchmarkFiles, NonPositiveCountIsRefused) {
  const std::string text = edited("trtllm_bench_report.json",
                                  [](Json& doc) { doc["request_info"]["num_requests"] = -5; });
  EXPECT_EQ(error("r.json", text), in_dir("r.json") +
                                       ": run 1: field \"request_info.num_requests\": expected a "
                                       "positive integer, got -5");
}

TEST_F(BenchmarkFiles, NonPositiveFigureIsRefused) {
  const std::string text =
      edited("vllm_poisson.json", [](Json& doc) { doc["mean_ttft_ms"] = -1.5; });
  EXPECT_EQ(
      error("r.json", text),
      in_dir("r.json") + ": run 1: field \"mean_ttft_ms\": expected a positive number, got -1.5");
}

TEST_F(BenchmarkFiles, BurstyArrivalsAreRefused) {
  const std::string text = edited("vllm_poisson.json", [](Json& doc) { doc["burstiness"] = 0.5; });
  EXPECT_EQ(error("r.json", text),
            in_dir("r.json") +
                ": run 1: field \"burstiness\": expected 1 (Poisson arrivals; the simulator "
                "replays no other arrival process), got 0.5");
}

TEST_F(BenchmarkFiles, RateWithConcurrencyIsRefused) {
  const std::string text =
      edited("vllm_poisson.json", [](Json& doc) { doc["max_concurrency"] = 16; });
  EXPECT_EQ(error("r.json", text),
            in_dir("r.json") +
                ": run 1: field \"max_concurrency\": not allowed with a finite request_rate "
                "(4.0): arrivals at a rate held to a concurrency limit cannot be replayed; rerun "
                "with a request rate or a concurrency");
}

TEST_F(BenchmarkFiles, AiperfRateWithConcurrencyIsRefused) {
  const std::string text = edited("aiperf_profile_export.json", [](Json& doc) {
    doc["input_config"]["loadgen"]["request_rate"] = 5.0;
  });
  EXPECT_EQ(error("a.json", text),
            in_dir("a.json") +
                ": run 1: field \"input_config.loadgen.concurrency\": not allowed with "
                "request_rate: arrivals at a rate held to a concurrency limit cannot be "
                "replayed; rerun with one of the two");
}

TEST_F(BenchmarkFiles, AiperfConstantRateIsRefused) {
  const std::string text = edited("aiperf_profile_export.json", [](Json& doc) {
    doc["input_config"]["loadgen"] = {{"request_rate", 5.0}, {"request_rate_mode", "constant"}};
  });
  EXPECT_EQ(error("a.json", text),
            in_dir("a.json") +
                ": run 1: field \"input_config.loadgen.request_rate_mode\": expected \"poisson\" "
                "(the simulator replays Poisson arrivals only), got \"constant\"");
}

TEST_F(BenchmarkFiles, GenaiPerfRequestRateRunIsRefused) {
  const std::string text = edited("genai_perf_profile_export.json", [](Json& doc) {
    doc["input_config"]["perf_analyzer"]["stimulus"] = {{"request_rate", 2.0}};
  });
  EXPECT_EQ(error("g.json", text),
            in_dir("g.json") +
                ": run 1: field \"input_config.perf_analyzer.stimulus.request_rate\": a "
                "genai-perf request-rate run sends at a constant interval (perf_analyzer's "
                "default --request-distribution constant), which the simulator does not replay "
                "(Poisson arrivals only); use a concurrency run");
}

TEST_F(BenchmarkFiles, LlamaBenchPgTestIsRefused) {
  const std::string text = edited("llama_bench.json", [](Json& doc) { doc[1]["n_prompt"] = 512; });
  EXPECT_EQ(error("b.json", text),
            in_dir("b.json") +
                ": entry 2: field \"n_gen\": a pg test (n_prompt 512, n_gen 128) times prompt and "
                "generation together; only pp tests (-p) and tg tests (-n) can be read");
}

TEST_F(BenchmarkFiles, LlamaBenchTestAtADepthIsRefused) {
  const std::string text = edited("llama_bench.json", [](Json& doc) { doc[0]["n_depth"] = 4096; });
  EXPECT_EQ(error("b.json", text),
            in_dir("b.json") +
                ": entry 1: field \"n_depth\": expected 0 (a test at a depth runs on a context "
                "already in the KV cache, which the simulator does not replay), got 4096");
}

TEST_F(BenchmarkFiles, LlamaBenchEntriesOfDifferentModelsAreRefused) {
  const std::string text =
      edited("llama_bench.json", [](Json& doc) { doc[1]["model_type"] = "qwen2 7B Q8_0"; });
  EXPECT_EQ(error("b.json", text),
            in_dir("b.json") +
                ": entry 2: field \"model_type\": expected \"llama 8B Q4_0\" as in entry 1 (one "
                "file measures one model on one machine), got \"qwen2 7B Q8_0\"");
}

TEST_F(BenchmarkFiles, LlamaBenchEntriesOnDifferentMachinesAreRefused) {
  const std::string text =
      edited("llama_bench.json", [](Json& doc) { doc[1]["gpu_info"] = "NVIDIA L4"; });
  EXPECT_EQ(error("b.json", text),
            in_dir("b.json") +
                ": entry 2: field \"gpu_info\": expected \"\" as in entry 1 (one file measures "
                "one model on one machine), got \"NVIDIA L4\"");
}

TEST_F(BenchmarkFiles, VllmRunsOfDifferentModelsAreRefused) {
  const std::string second =
      edited("vllm_concurrency.json", [](Json& doc) { doc["model_id"] = "Qwen/Qwen2.5-7B"; });
  const Json compact = Json::parse(second);
  EXPECT_EQ(error("r.json", one_line("vllm_poisson.json") + "\n" + compact.dump()),
            in_dir("r.json") +
                ": run 2: field \"model_id\": expected \"meta-llama/Llama-3.1-8B-Instruct\" as "
                "in run 1 (one file measures one model on one machine), got \"Qwen/Qwen2.5-7B\"");
}

TEST_F(BenchmarkFiles, RunWithNoMeasuredFigureIsRefused) {
  const std::string text = edited("vllm_poisson.json", [](Json& doc) {
    for (const char* key : {"mean_ttft_ms", "median_ttft_ms", "p99_ttft_ms", "mean_tpot_ms",
                            "median_tpot_ms", "p99_tpot_ms", "output_throughput"}) {
      doc.erase(key);
    }
  });
  EXPECT_EQ(error("r.json", text),
            in_dir("r.json") +
                ": run 1: no measured figure; expected at least one of mean_ttft_ms, "
                "median_ttft_ms, p90_ttft_ms, p99_ttft_ms, mean_tpot_ms, median_tpot_ms, "
                "p90_tpot_ms, p99_tpot_ms, output_throughput");
}

TEST_F(BenchmarkFiles, UnknownTimeUnitIsRefused) {
  const std::string text = edited("genai_perf_profile_export.json",
                                  [](Json& doc) { doc["time_to_first_token"]["unit"] = "min"; });
  EXPECT_EQ(error("g.json", text),
            in_dir("g.json") +
                ": run 1: field \"time_to_first_token.unit\": expected a time unit: ms, us, ns, "
                "s or sec, got \"min\"");
}

TEST_F(BenchmarkFiles, RampingRequestRateIsRefused) {
  const std::string text =
      edited("vllm_poisson.json", [](Json& doc) { doc["ramp_up_strategy"] = "linear"; });
  EXPECT_THAT(error("r.json", text),
              HasSubstr(": run 1: field \"ramp_up_strategy\": a request rate that ramps up"));
}

TEST_F(BenchmarkFiles, LinesOfDifferentToolsAreRefused) {
  const std::string text =
      one_line("vllm_poisson.json") + "\n" + testing::read_text(fixture("sglang_runs.jsonl"));
  EXPECT_EQ(error("r.jsonl", text),
            in_dir("r.jsonl") +
                ": run 2: expected a result of vllm-bench-serve as in run 1, got one of "
                "sglang-bench-serving");
}

}  // namespace
}  // namespace llmcap::app
