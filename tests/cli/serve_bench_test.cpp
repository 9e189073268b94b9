// `llmcap serve-bench`: the command end to end on a tiny model (the schema of its JSON and CSV
// files, the stored run) and its option errors. The engine's workload scaling and the report's
// JSON and CSV forms: tests/app/serve_bench_test.cpp, tests/app/serve_bench_output_test.cpp.
#include "cli/serve_bench.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.h"
#include "reference_decoder_fixtures.h"
#include "run_cli.h"
#include "store/results_store.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using llmcap::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// ---- the command -------------------------------------------------------------------------------

using testing::kTinyLlama;
using testing::test_profile;

TEST(CliServeBench, ServesATinyModelAndWritesTheSideBySideRows) {
  // The first 30 s of the trace fixture at 100x: a fraction of a second of real serving. Only
  // the schema and the request count are checked (timings depend on the machine).
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  const auto profile = test_profile(dir);
  const auto trace = llmcap::testing::test_data("conv_model300.csv");
  const auto json_path = dir.path() / "serve.json";
  const auto steps_path = dir.path() / "steps.csv";
  const auto requests_path = dir.path() / "requests.csv";
  const std::vector<std::string> args = {"serve-bench",
                                         "--model",
                                         model.string(),
                                         "--format",
                                         "bf16",
                                         "--profile",
                                         profile.string(),
                                         "--trace",
                                         trace.string(),
                                         "--trace-start-s",
                                         "0",
                                         "--rate-multiplier",
                                         "100",
                                         "--duration-s",
                                         "0.3",
                                         "--max-num-seqs",
                                         "4",
                                         "--json",
                                         json_path.string(),
                                         "--steps-csv",
                                         steps_path.string(),
                                         "--requests-csv",
                                         requests_path.string(),
                                         "--quiet"};
  std::ostringstream out, err;
  const int code = run(args, out, err);
  ASSERT_EQ(code, kExitOk) << err.str();
  int64_t expected_requests = 0;  // rows of the fixture arriving before 30 s
  {
    std::ifstream f(trace);
    std::string line;
    std::getline(f, line);
    while (std::getline(f, line)) {
      if (std::stod(line.substr(0, line.find(','))) < 30.0) ++expected_requests;
    }
  }
  std::ifstream f(json_path);
  const auto doc = nlohmann::json::parse(f);
  ASSERT_EQ(doc.at("rows").size(), 6u);  // one load x {ttft, tpot} x {p50, p90, p99}
  const std::vector<std::pair<std::string, std::string>> order = {{"ttft", "p50"}, {"ttft", "p90"},
                                                                  {"ttft", "p99"}, {"tpot", "p50"},
                                                                  {"tpot", "p90"}, {"tpot", "p99"}};
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& row = doc.at("rows")[i];
    EXPECT_EQ(row.size(), 5u);
    EXPECT_EQ(row.at("metric"), order[i].first);
    EXPECT_EQ(row.at("quantile"), order[i].second);
    EXPECT_GT(row.at("measured_s").get<double>(), 0);
    EXPECT_GT(row.at("simulated_s").get<double>(), 0);
    EXPECT_GT(row.at("load").get<double>(), 0);
  }
  ASSERT_EQ(doc.at("runs").size(), 1u);  // one load, one run
  const auto& run0 = doc.at("runs")[0];
  EXPECT_EQ(run0.at("num_requests").get<int64_t>(), expected_requests);
  EXPECT_EQ(run0.at("rate_multiplier").get<double>(), 100.0);
  EXPECT_GT(run0.at("measured_steps").get<int64_t>(), 0);
  EXPECT_EQ(doc.at("model"), "tiny");
  EXPECT_EQ(doc.at("config").at("max_num_seqs"), 4);
  EXPECT_EQ(doc.at("config").at("num_kv_blocks"), 4 * (512 + 64) / 16);
  EXPECT_THAT(out.str(), HasSubstr("measured s simulated s"));
  EXPECT_EQ(doc.at("rows_probe_rescaled").size(), 6u);
  EXPECT_EQ(doc.at("rows_step_corrected").size(), 6u);
  EXPECT_THAT(out.str(), HasSubstr("sensitivity: simulated again with every predicted step 5%"));
  for (const char* key : {"rows_steps_5pct_faster", "rows_steps_5pct_slower"}) {
    ASSERT_EQ(doc.at(key).size(), 6u) << key;
    for (size_t i = 0; i < 6; ++i) {
      EXPECT_EQ(doc.at(key)[i].at("measured_s"), doc.at("rows")[i].at("measured_s")) << key;
      EXPECT_GT(doc.at(key)[i].at("simulated_s").get<double>(), 0) << key;
    }
  }
  // --steps-csv: a header and one line per step of the real run.
  std::ifstream steps(steps_path);
  std::string header;
  std::getline(steps, header);
  EXPECT_EQ(header,
            "load,kind,start_s,exec_start_s,end_s,num_seqs,num_new_tokens,num_context_tokens,"
            "num_attention_pairs,measured_s,predicted_s");
  int64_t num_lines = 0;
  for (std::string line; std::getline(steps, line);) ++num_lines;
  EXPECT_EQ(num_lines, run0.at("measured_steps").get<int64_t>());
  // --requests-csv: a header and one line per request in id order, 14 fields, the run's load
  // and a measured and simulated TTFT.
  std::ifstream requests(requests_path);
  std::getline(requests, header);
  EXPECT_THAT(header, StartsWith("load,id,arrival_s,prompt_tokens,output_tokens,measured_ttft_s,"));
  int64_t num_requests = 0;
  for (std::string line; std::getline(requests, line); ++num_requests) {
    ASSERT_EQ(std::count(line.begin(), line.end(), ','), 13) << line;  // 14 fields
    std::vector<std::string> fields;
    std::istringstream in(line);
    for (std::string field; std::getline(in, field, ',');) fields.push_back(field);
    ASSERT_GE(fields.size(), 12u) << line;  // nothing rejected: every TTFT is there
    EXPECT_NEAR(std::stod(fields[0]), run0.at("load").get<double>(), 1e-6) << line;
    EXPECT_EQ(std::stoll(fields[1]), num_requests) << line;
    EXPECT_GT(std::stod(fields[5]), 0) << line;   // measured TTFT
    EXPECT_GT(std::stod(fields[8]), 0) << line;   // simulated TTFT
    EXPECT_GT(std::stod(fields[11]), 0) << line;  // step-corrected TTFT
  }
  EXPECT_EQ(num_requests, expected_requests);
}

TEST(CliServeBench, PrefixCachingOnAJsonlTraceReportsTheHitRate) {
  // A Mooncake-shaped JSON Lines trace: every prompt of 4 hash blocks starts with block 0,
  // then one of three second blocks, then blocks of its own; 512-token blocks scaled by 1/32
  // to 16 tokens (the engine's block). The real loop reuses the KV of shared blocks; the
  // simulator's side reports its own hit rate, or says it ran without a prefix cache.
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  const auto profile = test_profile(dir);
  std::ostringstream rows;
  for (int i = 0; i < 20; ++i) {
    rows << "{\"timestamp\": " << 1000 * i << ", \"input_length\": 2048, \"output_length\": 64, "
         << "\"hash_ids\": [0, " << 1 + i % 3 << ", " << 100 + i << ", " << 200 + i << "]}\n";
  }
  const auto trace = dir.write("m.jsonl", rows.str());
  const auto json_path = dir.path() / "serve.json";
  const std::vector<std::string> args = {"serve-bench",
                                         "--model",
                                         model.string(),
                                         "--format",
                                         "bf16",
                                         "--profile",
                                         profile.string(),
                                         "--trace",
                                         trace.string(),
                                         "--trace-start-s",
                                         "0",
                                         "--rate-multiplier",
                                         "100",
                                         "--duration-s",
                                         "0.3",
                                         "--max-num-seqs",
                                         "4",
                                         "--prompt-scale",
                                         "0.03125",
                                         "--prefix-caching",
                                         "--json",
                                         json_path.string(),
                                         "--quiet"};
  std::ostringstream out, err;
  ASSERT_EQ(run(args, out, err), kExitOk) << err.str();
  std::ifstream f(json_path);
  const auto doc = nlohmann::json::parse(f);
  const auto& run0 = doc.at("runs").at(0);
  EXPECT_EQ(run0.at("num_requests"), 20);
  EXPECT_TRUE(run0.at("prefix_caching").get<bool>());
  EXPECT_GT(run0.at("measured_prefix_cache_hit_rate").get<double>(), 0);
  EXPECT_GT(run0.at("measured_saved_prefill_tokens").get<int64_t>(), 0);
  EXPECT_THAT(out.str(), HasSubstr("prefix cache hit rate: measured "));
  EXPECT_THAT(out.str(), HasSubstr("hash blocks of 16 tokens; prefix caching on"));
  if (run0.at("simulated_prefix_caching").get<bool>()) {
    EXPECT_GT(run0.at("simulated_prefix_cache_hit_rate").get<double>(), 0);
  } else {
    EXPECT_THAT(out.str(), HasSubstr("NOTE: measured with prefix caching, simulated WITHOUT it"));
  }
}

/// Runs serve-bench with `args` and returns (exit code, stderr).
/// `serve-bench ARGS --quiet`, on the trace fixture unless ARGS name a trace or arrivals (the
/// default trace, the Azure conversation trace, is not shipped).
std::pair<int, std::string> run_serve_bench(std::vector<std::string> args) {
  if (std::find(args.begin(), args.end(), "--trace") == args.end() &&
      std::find(args.begin(), args.end(), "--arrivals") == args.end()) {
    args.insert(args.end(), {"--trace", llmcap::testing::test_data("conv_model300.csv").string()});
    if (std::find(args.begin(), args.end(), "--trace-start-s") == args.end()) {
      args.insert(args.end(), {"--trace-start-s", "0"});  // the fixture spans 84 s
    }
  }
  args.insert(args.begin(), "serve-bench");
  args.push_back("--quiet");
  std::ostringstream out, err;
  const int code = run(args, out, err);
  return {code, err.str()};
}

TEST(CliServeBench, BadOptionsAreRefusedBeforeAnythingRuns) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--duration-s", "-1"}, "serve-bench: --duration-s: expected seconds in (0, 3600], got -1"},
      {{"--arrivals", "burst"},
       "serve-bench: --arrivals: unknown arrival process \"burst\"; known: trace, poisson"},
      {{"--loads", "0.5,-1"}, "serve-bench: --loads: expected fractions > 0, got -1"},
      {{"--rate-multiplier", "0"}, "serve-bench: --rate-multiplier: expected values > 0, got 0"},
      {{"--arrivals", "poisson", "--rate-multiplier", "2"},
       "serve-bench: --rate-multiplier: needs --arrivals trace"},
      {{"--max-num-seqs", "0"}, "serve-bench: --max-num-seqs: expected an integer >= 1, got 0"},
      {{"--block-size", "0"}, "serve-bench: --block-size: expected an integer >= 1, got 0"},
      {{"--kv-blocks", "3"},
       "serve-bench: --kv-blocks: expected at least 36 (the blocks of the longest request"},
      {{"--prompt-scale", "0"}, "serve-bench: --prompt-scale: expected a factor > 0, got 0"},
      {{"--trace-start-s", "-5"}, "serve-bench: --trace-start-s: expected seconds >= 0, got -5"},
      {{"--format", "fp4"}, "unknown weight format \"fp4\""},
      {{"--format", "fp8"}, "serve-bench: --format: weight format \"fp8\": no CPU kernel"},
      {{"--trace-start-s", "99999"},
       "serve-bench: --trace-start-s: expected an offset within the trace"},
      {{"--model", "/nonexistent/model.json"}, "/nonexistent/model.json"},
      {{"--trace", "/nonexistent/trace.csv"}, "/nonexistent/trace.csv"},
      {{"--profile", "/nonexistent/profile.json"}, "/nonexistent/profile.json"},
  };
  for (const auto& [args, message] : cases) {
    const auto [code, err] = run_serve_bench(args);
    EXPECT_EQ(code, kExitBadInput) << args.front();
    EXPECT_THAT(err, StartsWith("llmcap: error: ")) << args.front();
    EXPECT_THAT(err, HasSubstr(message)) << args.front();
  }
  // --loads and --rate-multiplier exclude each other (CLI11), as do --profile and
  // --save-profile.
  const auto [code, err] = run_serve_bench({"--loads", "0.5", "--rate-multiplier", "2"});
  EXPECT_EQ(code, kExitBadInput);
  EXPECT_THAT(err, HasSubstr("excludes"));
  const auto [code2, err2] = run_serve_bench(
      {"--profile", "/nonexistent/p.json", "--save-profile", "/nonexistent/q.json"});
  EXPECT_EQ(code2, kExitBadInput);
  EXPECT_THAT(err2, HasSubstr("--profile excludes --save-profile"));
}

TEST(CliServeBench, AnAbsentDefaultTraceSaysWhereToGetIt) {
  TempDir dir;  // a data folder without traces/
  const auto model = dir.write("tiny.json", kTinyLlama);
  std::ostringstream out, err;
  const int code =
      run({"serve-bench", "--model", model.string(), "--data-dir", dir.path().string(), "--quiet"},
          out, err);
  EXPECT_EQ(code, kExitBadInput);
  EXPECT_EQ(err.str(), "llmcap: error: " + (dir.path() / "traces").string() +
                           "/AzureLLMInferenceTrace_conv.csv: cannot open file; the default "
                           "--arrivals trace replays the Azure 2023 conversation trace, which "
                           "llmcap does not ship: download AzureLLMInferenceTrace_conv.csv into "
                           "that folder (docs/traces.md), pass --trace FILE, or use --arrivals "
                           "poisson\n");
}

TEST(CliServeBench, ProfileWithoutTheFormatOrOfAnotherMachineIsRefused) {
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  const auto profile = test_profile(dir);
  std::string text;
  {
    std::ifstream f(profile);
    std::stringstream buffer;
    buffer << f.rdbuf();
    text = buffer.str();
  }
  auto doc = nlohmann::json::parse(text);
  doc["fit"]["matmul"].erase("int4");
  std::ofstream(dir.path() / "no_int4.json") << doc.dump();
  auto [code, err] = run_serve_bench({"--model", model.string(), "--format", "int4", "--profile",
                                      (dir.path() / "no_int4.json").string()});
  EXPECT_EQ(code, kExitBadInput);
  EXPECT_THAT(err, HasSubstr("field \"fit.matmul\": no fitted rates for \"int4\" weights"));

  doc["machine"]["cpu_model"] = "Some Other CPU 9000";
  std::ofstream(dir.path() / "other.json") << doc.dump();
  std::tie(code, err) = run_serve_bench(
      {"--model", model.string(), "--profile", (dir.path() / "other.json").string()});
  EXPECT_EQ(code, kExitBadInput);
  EXPECT_THAT(err, HasSubstr("Some Other CPU 9000"));
}

/// serve-bench of the tiny model on the first 10 s of the trace fixture at 100x (a tenth of a
/// second of real serving), with `extra` arguments appended.
std::vector<std::string> tiny_serve_bench(const std::filesystem::path& model,
                                          const std::filesystem::path& profile,
                                          const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"serve-bench",
                                   "--model",
                                   model.string(),
                                   "--format",
                                   "bf16",
                                   "--profile",
                                   profile.string(),
                                   "--trace",
                                   llmcap::testing::test_data("conv_model300.csv").string(),
                                   "--trace-start-s",
                                   "0",
                                   "--rate-multiplier",
                                   "100",
                                   "--duration-s",
                                   "0.1",
                                   "--max-num-seqs",
                                   "4",
                                   "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::string percent(double fraction) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(1) << 100 * fraction << "%";
  return s.str();
}

TEST(CliServeBench, StoresTheRunWithWhatJsonWroteAsItsDocument) {
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  const auto profile = test_profile(dir);
  const auto json_path = dir.path() / "serve.json";
  const auto db_path = dir.path() / "runs.sqlite";
  std::ostringstream out, err;
  const int code =
      run(tiny_serve_bench(model, profile,
                           {"--json", json_path.string(), "--results-db", db_path.string()}),
          out, err);
  ASSERT_EQ(code, kExitOk) << err.str();
  EXPECT_THAT(err.str(), HasSubstr("Stored as run 1 in " + db_path.string()));

  const store::RunRecord stored = llmcap::cli::testing::only_stored_run(db_path);
  ASSERT_FALSE(stored.kind.empty());
  EXPECT_EQ(stored.kind, "serve-bench");
  EXPECT_EQ(stored.name, "tiny");
  EXPECT_THAT(stored.command_line, StartsWith("llmcap serve-bench --model " + model.string()));
  const auto written = nlohmann::json::parse(llmcap::testing::read_text(json_path));
  EXPECT_EQ(nlohmann::json::parse(stored.document_json), written);
  const auto input = nlohmann::json::parse(stored.input_json);
  EXPECT_EQ(input.at("model"), model.string());
  EXPECT_EQ(input.at("format"), "bf16");
  EXPECT_EQ(input.at("rate_multipliers"), nlohmann::json::array({100.0}));
  EXPECT_EQ(input.at("duration_s").get<double>(), 0.1);
  // The headline figures: the worst |simulated / measured - 1| at each quantile, over the rows
  // that --json wrote.
  ASSERT_EQ(written.at("rows").size(), 6u);
  for (const std::string quantile : {"p50", "p90", "p99"}) {
    double worst = -1;
    for (const auto& row : written.at("rows")) {
      const double measured = row.at("measured_s").get<double>();
      if (row.at("quantile") != quantile || !(measured > 0)) continue;
      worst = std::max(worst, std::fabs(row.at("simulated_s").get<double>() / measured - 1.0));
    }
    ASSERT_GE(worst, 0) << quantile;
    EXPECT_THAT(stored.summary, HasSubstr(quantile + " " + percent(worst))) << quantile;
  }
  EXPECT_THAT(stored.summary, HasSubstr("(TTFT and TPOT, 1 load)"));
}

TEST(CliServeBench, NoStoreLeavesNoRun) {
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  const auto profile = test_profile(dir);
  const auto db_path = dir.path() / "runs.sqlite";
  std::ostringstream out, err;
  const int code = run(
      tiny_serve_bench(model, profile, {"--no-store", "--results-db", db_path.string()}), out, err);
  ASSERT_EQ(code, kExitOk) << err.str();
  EXPECT_THAT(err.str(), ::testing::Not(HasSubstr("Stored as run")));
  EXPECT_FALSE(std::filesystem::exists(db_path));
}

TEST(CliServeBench, RefusedRunStoresNothing) {
  TempDir dir;
  const auto db_path = dir.path() / "runs.sqlite";
  const auto [code, err] =
      run_serve_bench({"--duration-s", "-1", "--results-db", db_path.string()});
  EXPECT_EQ(code, kExitBadInput) << err;
  EXPECT_FALSE(std::filesystem::exists(db_path));
}

}  // namespace
}  // namespace llmcap::cli
