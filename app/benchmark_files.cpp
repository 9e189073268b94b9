#include "app/benchmark_files.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <utility>

#include "base/error.h"
#include "base/json_reader.h"

namespace llmcap::app {
namespace {

using base::InputError;
using base::JsonReader;
using nlohmann::json;

constexpr const char* kVllm = "vllm-bench-serve";
constexpr const char* kSglang = "sglang-bench-serving";
constexpr const char* kLlamaBench = "llama-bench";
constexpr const char* kGenaiPerf = "genai-perf";
constexpr const char* kAiperf = "aiperf";
constexpr const char* kTrtllm = "trtllm-bench";

/// The tools write null for options not given (vLLM's max_concurrency): null counts as absent.
base::JsonReaderStyle reader_style() {
  base::JsonReaderStyle style;
  style.null_is_missing = true;
  style.max_shown_chars = 80;
  return style;
}

std::string json_text(const std::string& s) { return json(s).dump(); }

// ---------------------------------------------------------------------------------------------
// The file as text: one JSON document, or JSON Lines (one run per line).

/// `text` with the bare constants Python's json module writes for non-finite floats (Infinity,
/// -Infinity, NaN) turned into strings outside string literals, so that a JSON parser takes them
/// (SGLang writes `"request_rate": Infinity` for an infinite rate).
std::string quote_python_constants(const std::string& text) {
  static const char* const kWords[] = {"-Infinity", "Infinity", "NaN"};
  std::string out;
  out.reserve(text.size() + 16);
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      ++i;
      continue;
    }
    const char* word = nullptr;
    for (const char* w : kWords) {
      if (text.compare(i, std::strlen(w), w) == 0) {
        word = w;
        break;
      }
    }
    if (word != nullptr) {
      out += '"' + std::string(word) + '"';
      i += std::strlen(word);
      continue;
    }
    in_string = c == '"';
    out += c;
    ++i;
  }
  return out;
}

/// `text` parsed (Python's non-finite constants read as strings), or nullopt with the parser's
/// message about the text as written in `error`.
/// Nesting and numbers beyond the bounds of base/json_reader.h throw InputError naming `file`.
std::optional<json> parse(const std::string& text, const std::string& file, std::string* error) {
  if (std::optional<json> doc = base::try_parse_json(text, file, error)) return doc;
  return base::try_parse_json(quote_python_constants(text), file, nullptr);
}

/// The values of a file: `whole` when the text is one JSON value, else one per non-blank line
/// (with its 1-based line number) when it is JSON Lines.
struct Document {
  std::optional<json> whole;
  std::vector<std::pair<size_t, json>> lines;
};

Document read_document(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(file, ec)) {
    throw InputError::unreadable_file(file.string());
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  Document doc;
  std::string error;
  doc.whole = parse(text, file.string(), &error);
  if (doc.whole) return doc;
  // JSON Lines: SGLang's --output-file, vLLM's --append-result, llama-bench -o jsonl.
  std::vector<std::pair<size_t, std::string>> lines;
  std::istringstream stream(text);
  std::string line;
  for (size_t n = 1; std::getline(stream, line); ++n) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.emplace_back(n, line);
  }
  if (lines.size() < 2 ||
      !parse(lines.front().second, file.string() + ": line " + std::to_string(lines.front().first),
             nullptr)) {
    throw InputError::malformed_json(file.string(), error);
  }
  for (const auto& [n, text_line] : lines) {
    std::string line_error;
    std::optional<json> value =
        parse(text_line, file.string() + ": line " + std::to_string(n), &line_error);
    if (!value) {
      throw InputError(file.string() + ": line " + std::to_string(n) +
                       ": malformed JSON: " + line_error);
    }
    doc.lines.emplace_back(n, std::move(*value));
  }
  return doc;
}

// ---------------------------------------------------------------------------------------------
// Shared pieces of the readers.

/// One run read: its points, and what it names that must agree across the runs of a file
/// (field, value), the model and the machine.
struct Run {
  std::vector<BenchmarkPoint> points;
  std::vector<std::pair<std::string, std::string>> identity;
  std::string model;
  std::string machine;
};

/// The figures of one run, one BenchmarkPoint each, sharing the run's load and lengths (`base`).
class RunPoints {
 public:
  explicit RunPoints(BenchmarkPoint base) : base_(std::move(base)) {}
  const BenchmarkPoint& base() const { return base_; }
  void add(const std::string& metric, const std::string& statistic, double value) {
    BenchmarkPoint p = base_;
    p.metric = metric;
    p.statistic = statistic;
    p.value = value;
    points_.push_back(std::move(p));
  }
  /// The points; throws when the run measured nothing (`fields` names what was looked for).
  std::vector<BenchmarkPoint> take(const JsonReader& r, const std::string& fields) {
    if (points_.empty()) {
      throw InputError(r.file() + ": " + r.record() +
                       ": no measured figure; expected at least one of " + fields);
    }
    return std::move(points_);
  }

 private:
  BenchmarkPoint base_;
  std::vector<BenchmarkPoint> points_;
};

/// The mean length `total_key` / `count` in whole tokens (rounded, at least 1).
int64_t mean_tokens(const JsonReader& r, const std::string& total_key, int64_t count) {
  const int64_t total = r.positive_int(total_key);
  return std::max<int64_t>(1, std::llround(static_cast<double>(total) / count));
}

/// The positive number `key` rounded to a whole count (at least 1): a mean length in tokens, or
/// a request count written as a float.
int64_t rounded_count(const JsonReader& r, const std::string& key) {
  return std::max<int64_t>(1, std::llround(r.positive_number(key)));
}

/// The one model named by `key`: a string, or an array of equal strings ("" when absent).
std::string single_model(const JsonReader& r, const std::string& key) {
  if (!r.has(key)) return "";
  const json& v = r.at(key);
  if (v.is_string()) return v.get<std::string>();
  const std::string expected = "a model name or a list of one (one file, one model)";
  if (!v.is_array()) r.fail(key, expected, r.got(key));
  std::string model;
  for (size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string() || (i > 0 && v[i].get<std::string>() != model)) {
      r.fail(key, expected, r.got(key));
    }
    model = v[i].get<std::string>();
  }
  return model;
}

// ---------------------------------------------------------------------------------------------
// vLLM `vllm bench serve --save-result` and SGLang `python -m sglang.bench_serving --output-file`.

/// `request_rate`: a positive number, or infinite (0 here): vLLM writes the string "inf", SGLang
/// the bare Infinity of Python's json module (both are read).
double request_rate(const JsonReader& r) {
  const std::string expected = "a positive number or \"inf\"";
  const json& v = r.at("request_rate");
  if (v.is_string()) {
    const std::string s = v.get<std::string>();
    if (s != "inf" && s != "Infinity") r.fail("request_rate", expected, r.got("request_rate"));
    return 0;
  }
  return r.number(
      "request_rate", [](double x) { return x > 0; }, expected);
}

/// The time statistics `<mean|median|p90|p99>_<metric>_ms` of a serving run present in `r`.
void serving_times(const JsonReader& r, const std::string& metric, RunPoints& points) {
  static const std::pair<const char*, const char*> kStats[] = {
      {"mean", "mean"}, {"median", "median"}, {"p90", "p90"}, {"p99", "p99"}};
  for (const auto& [prefix, statistic] : kStats) {
    const std::string key = std::string(prefix) + "_" + metric + "_ms";
    if (r.has(key)) points.add(metric, statistic, r.positive_number(key) / 1e3);
  }
}

/// One run of vLLM's `vllm bench serve --save-result` (`vllm` true) or of SGLang's
/// `bench_serving --output-file`.
/// Source (vLLM): vllm-project/vllm vllm/benchmarks/serve.py @
/// 009e6d4a1cd6ba3fb2a9fc00f4ec06f5297232a1
///   (main(): result_json; benchmark(): result and process_one_metric).
/// Source (SGLang): sgl-project/sglang python/sglang/bench_serving.py
///   @ 0033168f0f58b2bc05aa0273bd475d9c01bafb1c (benchmark(): result, written as one JSON line).
/// SGLang's line names neither the model nor the number of prompts: its requests are `completed`.
Run read_serving_run(const JsonReader& r, bool vllm) {
  BenchmarkPoint base;
  base.where = r.record();
  const int64_t completed = r.positive_int("completed");
  const double rate = request_rate(r);
  if (vllm) {
    r.refuse("ramp_up_strategy",
             "a request rate that ramps up cannot be replayed (the simulator replays one rate)");
    if (rate > 0 && r.has("burstiness") && r.positive_number("burstiness") != 1.0) {
      r.fail("burstiness", "1 (Poisson arrivals; the simulator replays no other arrival process)",
             r.got("burstiness"));
    }
  }
  const int64_t requests = vllm ? r.positive_int("num_prompts") : completed;
  if (rate > 0) {
    if (r.has("max_concurrency")) {
      r.fail_refused("max_concurrency",
                     "not allowed with a finite request_rate (" + r.got("request_rate") +
                         "): arrivals at a rate held to a concurrency limit cannot be replayed; "
                         "rerun with a request rate or a concurrency");
    }
    base.request_rate_per_s = rate;
    base.num_requests = requests;
  } else if (r.has("max_concurrency")) {
    base.concurrency = r.positive_int("max_concurrency");
    base.num_requests = requests;
  } else {
    base.offline_requests = requests;
  }
  base.prompt_tokens = mean_tokens(r, "total_input_tokens", completed);
  base.output_tokens = mean_tokens(r, "total_output_tokens", completed);
  RunPoints points(base);
  serving_times(r, "ttft", points);
  // TPOT is undefined for one-token outputs (the tools write 0 for it).
  if (base.output_tokens >= 2) serving_times(r, "tpot", points);
  if (r.has("output_throughput")) {
    points.add("throughput", "total", r.positive_number("output_throughput"));
  }
  Run run;
  run.points = points.take(r,
                           "mean_ttft_ms, median_ttft_ms, p90_ttft_ms, p99_ttft_ms, "
                           "mean_tpot_ms, median_tpot_ms, p90_tpot_ms, p99_tpot_ms, "
                           "output_throughput");
  if (vllm) {
    run.model = r.string("model_id");
    run.identity.emplace_back("model_id", run.model);
  }
  return run;
}

// ---------------------------------------------------------------------------------------------
// llama.cpp `llama-bench -o json` (or -o jsonl).

/// One entry (test) of llama-bench: a pp test (n_prompt > 0, n_gen 0) is the TTFT of a batch-1
/// prompt of n_prompt tokens, avg_ns / 1e9; a tg test (n_prompt 0, n_gen > 0) the TPOT of n_gen
/// tokens generated one at a time, 1 / avg_ts (avg_ts is the mean over the samples of
/// n_gen / sample time). A tg test is read with a prompt of 1 token: the simulator needs one.
/// Refused: pg tests (both > 0: prompt and generation timed together), tests at a depth
/// (n_depth > 0: a context already in the KV cache) and tg tests of one token.
/// Source: ggml-org/llama.cpp tools/llama-bench/llama-bench.cpp
///   @ 0104b151c56d54143e2e3554aabe9e2b2b8dbdba (struct test: get_fields, get_field_type,
///   avg_ns, get_ts, avg_ts; json_printer, jsonl_printer).
Run read_llama_entry(const JsonReader& r) {
  const int64_t n_prompt = r.non_negative_int("n_prompt");
  const int64_t n_gen = r.non_negative_int("n_gen");
  if (r.has("n_depth") && r.non_negative_int("n_depth") > 0) {
    r.fail("n_depth",
           "0 (a test at a depth runs on a context already in the KV cache, which the simulator "
           "does not replay)",
           r.got("n_depth"));
  }
  if (n_prompt > 0 && n_gen > 0) {
    r.fail_refused("n_gen", "a pg test (n_prompt " + std::to_string(n_prompt) + ", n_gen " +
                                std::to_string(n_gen) +
                                ") times prompt and generation together; only pp tests (-p) "
                                "and tg tests (-n) can be read");
  }
  if (n_prompt == 0 && n_gen == 0) {
    r.fail("n_prompt", "a pp test (n_prompt > 0) or a tg test (n_gen > 0)", "0 and n_gen 0");
  }
  if (n_gen == 1) {
    r.fail("n_gen", "at least 2 in a tg test (a time per output token needs two tokens)",
           r.got("n_gen"));
  }
  BenchmarkPoint base;
  base.batch = 1;
  base.threads = r.positive_int("n_threads");
  const bool pp = n_prompt > 0;
  base.where = r.record() + (pp ? " (pp" + std::to_string(n_prompt) + ")"
                                : " (tg" + std::to_string(n_gen) + ")");
  base.prompt_tokens = pp ? n_prompt : 1;
  base.output_tokens = pp ? 1 : n_gen;
  RunPoints points(base);
  if (pp) {
    points.add("ttft", "mean", r.positive_number("avg_ns") / 1e9);
  } else {
    points.add("tpot", "mean", 1 / r.positive_number("avg_ts"));
  }
  Run run;
  run.points = points.take(r, "avg_ns, avg_ts");
  const std::string type = r.string_or("model_type", "");
  run.model = type.empty() ? r.string_or("model_filename", "") : type;
  const std::string cpu = r.string_or("cpu_info", "");
  const std::string gpu = r.string_or("gpu_info", "");
  run.machine = gpu.empty() ? cpu : cpu + " + " + gpu;
  run.identity = {{type.empty() ? "model_filename" : "model_type", run.model},
                  {"cpu_info", cpu},
                  {"gpu_info", gpu}};
  return run;
}

// ---------------------------------------------------------------------------------------------
// NVIDIA genai-perf and AIPerf: metric objects {"unit", "avg", "p50", "p90", "p99", ...}.

/// Seconds per unit of the time metric object `m`.
double time_scale(const JsonReader& m) {
  const std::string unit = m.string("unit");
  if (unit == "ms") return 1e-3;
  if (unit == "us") return 1e-6;
  if (unit == "ns") return 1e-9;
  if (unit == "s" || unit == "sec") return 1;
  m.fail("unit", "a time unit: ms, us, ns, s or sec", m.got("unit"));
}

/// The time statistics of the metric object `key` when present: avg as the mean, p50 as the
/// median, p90, p99, in seconds.
void metric_times(const JsonReader& r, const std::string& key, const std::string& metric,
                  RunPoints& points) {
  static const std::pair<const char*, const char*> kStats[] = {
      {"avg", "mean"}, {"p50", "median"}, {"p90", "p90"}, {"p99", "p99"}};
  if (!r.has(key)) return;
  const JsonReader m = r.object(key);
  const double scale = time_scale(m);
  for (const auto& [stat, statistic] : kStats) {
    if (m.has(stat)) points.add(metric, statistic, m.positive_number(stat) * scale);
  }
}

/// The lengths and figures of a genai-perf or AIPerf run whose load is in `base`. Their
/// inter_token_latency is, per request, (latency - TTFT) / (output tokens - 1), averaged: the
/// TPOT. Lengths and throughput are read in tokens whatever their "unit" says: genai-perf
/// labels every non-time metric "requests/sec" (statistics.py _add_units @ 4cc7650c).
Run metric_run(const JsonReader& r, BenchmarkPoint base, const std::string& model) {
  base.where = r.record();
  base.prompt_tokens = rounded_count(r.object("input_sequence_length"), "avg");
  base.output_tokens = rounded_count(r.object("output_sequence_length"), "avg");
  RunPoints points(base);
  metric_times(r, "time_to_first_token", "ttft", points);
  if (base.output_tokens >= 2) metric_times(r, "inter_token_latency", "tpot", points);
  if (r.has("output_token_throughput")) {
    points.add("throughput", "total", r.object("output_token_throughput").positive_number("avg"));
  }
  Run run;
  run.points = points.take(r, "time_to_first_token, inter_token_latency, output_token_throughput");
  run.model = model;
  return run;
}

/// genai-perf's profile_export_genai_perf.json: the statistics and "input_config", the run's
/// options: in the command-line versions the flat argparse namespace (model: a list,
/// concurrency, request_rate), in the config-file versions nested sections (model_names,
/// perf_analyzer.stimulus: {"concurrency": N} or {"request_rate": R}). Only concurrency runs are
/// read: genai-perf never sets perf_analyzer's --request-distribution, whose default is
/// constant, so its request-rate runs send at a fixed interval, not as Poisson arrivals.
/// Source: triton-inference-server/perf_analyzer genai-perf/genai_perf/export_data/json_exporter.py
///   and genai_perf/metrics/statistics.py @ 263c5f6e0c7a6c15472a54409174981f67930cfe (config
///   sections: config/input/config_command.py, config_perf_analyzer.py) and
///   @ 4cc7650c23bc80d16a27c1049950d87f399c9b7a (flat args: parser.py _check_load_manager_args);
///   src/command_line_parser.cc @ 263c5f6e (--request-distribution, default constant).
Run read_genai_perf(const JsonReader& r) {
  const std::string constant_rate =
      "a genai-perf request-rate run sends at a constant interval (perf_analyzer's default "
      "--request-distribution constant), which the simulator does not replay (Poisson arrivals "
      "only); use a concurrency run";
  const JsonReader config = r.object("input_config");
  BenchmarkPoint base;
  std::string model;
  if (config.has("perf_analyzer")) {
    model = single_model(config, "model_names");
    const JsonReader stimulus = config.object("perf_analyzer").object("stimulus");
    stimulus.refuse("request_rate", constant_rate);
    stimulus.refuse("session_concurrency", "a multi-turn session run cannot be replayed");
    stimulus.refuse("session_request_rate", "a multi-turn session run cannot be replayed");
    base.concurrency = stimulus.positive_int("concurrency");
  } else {
    model = single_model(config, "model");
    config.refuse("request_rate", constant_rate);
    base.concurrency = config.positive_int("concurrency");
  }
  return metric_run(r, base, model);
}

/// AIPerf's profile_export_aiperf.json: genai-perf's metric objects, and "input_config", the
/// user's options as set (pydantic exclude_unset): endpoint.model_names, loadgen.concurrency,
/// loadgen.request_rate, loadgen.request_rate_mode ("poisson" unless set), input.fixed_schedule.
/// With neither concurrency nor request_rate AIPerf runs one user (concurrency 1).
/// Source: ai-dynamo/aiperf aiperf/exporters/json_exporter.py, aiperf/common/models/
///   export_models.py, aiperf/common/config/{user_config,loadgen_config,config_defaults}.py
///   @ db4f6397d11ee2d4cfbb41f70b2327315163dcf0.
Run read_aiperf(const JsonReader& r) {
  static const json kEmpty = json::object();
  const JsonReader config = r.object("input_config");
  const std::string model = single_model(config.object("endpoint"), "model_names");
  if (config.has("input")) {
    const JsonReader input = config.object("input");
    if (input.has("fixed_schedule") && input.boolean("fixed_schedule")) {
      input.fail_refused("fixed_schedule",
                         "a run on a trace's own timestamps cannot be replayed as one load");
    }
  }
  const JsonReader loadgen =
      config.has("loadgen")
          ? config.object("loadgen")
          : JsonReader(kEmpty, r.file(), "input_config.loadgen", reader_style(), r.record());
  BenchmarkPoint base;
  if (loadgen.has("request_rate")) {
    base.request_rate_per_s = loadgen.positive_number("request_rate");
    if (loadgen.string_or("request_rate_mode", "poisson") != "poisson") {
      loadgen.fail("request_rate_mode", "\"poisson\" (the simulator replays Poisson arrivals only)",
                   loadgen.got("request_rate_mode"));
    }
    if (loadgen.has("concurrency")) {
      loadgen.fail_refused("concurrency",
                           "not allowed with request_rate: arrivals at a rate held to a "
                           "concurrency limit cannot be replayed; rerun with one of the two");
    }
    base.num_requests = r.has("request_count") ? rounded_count(r.object("request_count"), "avg")
                                               : loadgen.positive_int_or("request_count", 10);
  } else {
    base.concurrency = loadgen.positive_int_or("concurrency", 1);
  }
  return metric_run(r, base, model);
}

// ---------------------------------------------------------------------------------------------
// TensorRT-LLM `trtllm-bench throughput --report_json FILE`.

/// The mean (`avg_key`, ms) and the percentiles (`pct_key`: p50, p90, p99, ms) of one streaming
/// metric of trtllm-bench.
void trtllm_times(const JsonReader& s, const std::string& avg_key, const std::string& pct_key,
                  const std::string& metric, RunPoints& points) {
  static const std::pair<const char*, const char*> kStats[] = {
      {"p50", "median"}, {"p90", "p90"}, {"p99", "p99"}};
  if (s.has(avg_key)) points.add(metric, "mean", s.positive_number(avg_key) / 1e3);
  if (!s.has(pct_key)) return;
  const JsonReader p = s.object(pct_key);
  for (const auto& [stat, statistic] : kStats) {
    if (p.has(stat)) points.add(metric, statistic, p.positive_number(stat) / 1e3);
  }
}

/// trtllm-bench's report: engine.model, machine.name (the GPU), request_info (num_requests,
/// avg_input_length, avg_output_length), performance.system_output_throughput_tok_s (output
/// tokens, first included, over the whole run) and, when streamed, streaming_metrics (avg_ttft_ms,
/// avg_tpot_ms, ttft_percentiles, tpot_percentiles in ms). The report does not record
/// --concurrency: every report is read as an offline run (all num_requests submitted at once,
/// trtllm-bench throughput's default); a report of a --concurrency run is misread.
/// Source: NVIDIA/TensorRT-LLM tensorrt_llm/bench/dataclasses/reporting.py
///   @ 2787769cae353023784dce105d648bcd4d04f4d4 (get_statistics_dict), statistics.py
///   @ 77d7fe1eb2d89753ae33a0745d1083c133064f92 (PercentileStats), benchmark/throughput.py
///   @ 000a01de66f0eab4ab05640711f0253f50f5209c (report_json).
Run read_trtllm(const JsonReader& r) {
  const JsonReader info = r.object("request_info");
  BenchmarkPoint base;
  base.where = r.record();
  base.offline_requests = info.positive_int("num_requests");
  base.prompt_tokens = rounded_count(info, "avg_input_length");
  base.output_tokens = rounded_count(info, "avg_output_length");
  RunPoints points(base);
  if (r.has("streaming_metrics")) {
    const JsonReader s = r.object("streaming_metrics");
    trtllm_times(s, "avg_ttft_ms", "ttft_percentiles", "ttft", points);
    if (base.output_tokens >= 2) trtllm_times(s, "avg_tpot_ms", "tpot_percentiles", "tpot", points);
  }
  const JsonReader performance = r.object("performance");
  if (performance.has("system_output_throughput_tok_s")) {
    points.add("throughput", "total",
               performance.positive_number("system_output_throughput_tok_s"));
  }
  Run run;
  run.points = points.take(r,
                           "streaming_metrics.avg_ttft_ms, streaming_metrics.avg_tpot_ms, "
                           "performance.system_output_throughput_tok_s");
  run.model = r.has("engine") ? r.object("engine").string_or("model", "") : "";
  run.machine = r.has("machine") ? r.object("machine").string_or("name", "") : "";
  return run;
}

// ---------------------------------------------------------------------------------------------
// Recognising the tool.

bool has(const json& v, const char* key) { return v.is_object() && v.contains(key); }

/// The tool whose result `v` is, by its keys ("" when none).
std::string tool_of(const json& v) {
  if (has(v, "avg_ts") || (has(v, "n_prompt") && has(v, "n_gen") && has(v, "model_type"))) {
    return kLlamaBench;
  }
  if (has(v, "request_info") && has(v, "performance")) return kTrtllm;
  if (has(v, "input_config") && v.at("input_config").is_object()) {
    const json& config = v.at("input_config");
    const bool aiperf = has(v, "was_cancelled") || has(v, "error_summary") ||
                        has(config, "loadgen") || has(config, "cli_command");
    return aiperf ? kAiperf : kGenaiPerf;
  }
  if (has(v, "request_rate") && has(v, "model_id")) return kVllm;
  if (has(v, "request_rate") &&
      (has(v, "total_output_tokens_retokenized") || has(v, "dataset_name"))) {
    return kSglang;
  }
  return "";
}

[[noreturn]] void unknown_tool(const std::string& file, const json& v) {
  const json* object = v.is_object()                                           ? &v
                       : (v.is_array() && !v.empty() && v.front().is_object()) ? &v.front()
                                                                               : nullptr;
  std::string keys;
  if (object == nullptr) {
    keys = std::string("none (the file holds a JSON ") + v.type_name() + ")";
  } else {
    size_t n = 0;
    for (auto it = object->begin(); it != object->end(); ++it, ++n) {
      if (n == 20) {
        keys += ", ...";
        break;
      }
      keys += (n == 0 ? "" : ", ") + it.key();
    }
  }
  throw InputError(file + ": not a result file of a known benchmark tool (" +
                   known_benchmark_tools() + "); its keys: " + keys);
}

Run read_run(const std::string& tool, const JsonReader& r) {
  if (tool == kVllm) return read_serving_run(r, true);
  if (tool == kSglang) return read_serving_run(r, false);
  if (tool == kLlamaBench) return read_llama_entry(r);
  if (tool == kGenaiPerf) return read_genai_perf(r);
  if (tool == kAiperf) return read_aiperf(r);
  return read_trtllm(r);
}

}  // namespace

std::string known_benchmark_tools() {
  return "vllm bench serve --save-result (JSON), SGLang bench_serving --output-file (JSON lines), "
         "llama-bench -o json, genai-perf profile_export_genai_perf.json, AIPerf "
         "profile_export_aiperf.json, trtllm-bench --report_json";
}

BenchmarkFile read_benchmark_file(const std::filesystem::path& file) {
  const std::string name = file.string();
  const Document doc = read_document(file);
  // The records (runs, or llama-bench entries) with their 1-based numbers: the lines of JSON
  // Lines, the entries of an array, or the one object.
  std::vector<std::pair<size_t, const json*>> records;
  std::string tool;
  if (!doc.whole) {
    for (const auto& [n, value] : doc.lines) records.emplace_back(n, &value);
    tool = tool_of(doc.lines.front().second);
    if (tool.empty()) unknown_tool(name, doc.lines.front().second);
  } else if (doc.whole->is_array()) {
    if (doc.whole->empty()) throw InputError::bad_document(name, "a result file", "[]");
    for (size_t i = 0; i < doc.whole->size(); ++i) records.emplace_back(i + 1, &doc.whole->at(i));
    tool = tool_of(doc.whole->front());
    if (tool != kLlamaBench) unknown_tool(name, *doc.whole);
  } else {
    records.emplace_back(1, &*doc.whole);
    tool = tool_of(*doc.whole);
    if (tool.empty()) unknown_tool(name, *doc.whole);
  }
  const std::string noun = tool == kLlamaBench ? "entry " : "run ";
  BenchmarkFile out;
  out.file = file;
  out.tool = tool;
  std::vector<std::pair<std::string, std::string>> first_identity;
  std::string first_record;
  for (const auto& [n, value] : records) {
    const std::string record = noun + std::to_string(n);
    if (tool_of(*value) != tool) {
      throw InputError(name + ": " + record + ": expected a result of " + tool + " as in " + noun +
                       std::to_string(records.front().first) + ", got " +
                       (value->is_object()
                            ? "one of " + (tool_of(*value).empty() ? std::string("no known tool")
                                                                   : tool_of(*value))
                            : std::string("a JSON ") + value->type_name()));
    }
    const JsonReader r(*value, name, "", reader_style(), record);
    Run run = read_run(tool, r);
    if (first_record.empty()) {
      first_record = record;
      out.model = run.model;
      out.machine = run.machine;
      first_identity = run.identity;
    }
    for (size_t i = 0; i < run.identity.size() && i < first_identity.size(); ++i) {
      if (run.identity[i].second != first_identity[i].second) {
        throw InputError::bad_record_field(
            name, record, run.identity[i].first, json_text(run.identity[i].second),
            json_text(first_identity[i].second) + " as in " + first_record +
                " (one file measures one model on one machine)");
      }
    }
    out.points.insert(out.points.end(), run.points.begin(), run.points.end());
  }
  return out;
}

}  // namespace llmcap::app
