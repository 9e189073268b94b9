// `llmcap validate`: real decode steps of a tiny Llama-shaped model against a profile measured
// just before (the test sweep), checked for the JSON keys and sane values; and its errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "app/decoder_support.h"
#include "cli/cli.h"
#include "reference_decoder_fixtures.h"
#include "run_cli.h"
#include "store/results_store.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using app::benchmark_profile;
using app::BenchmarkProfileOptions;

using llmcap::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

using testing::kTinyLlama;
using testing::test_profile;

/// config.json of a two-layer OLMoE-shaped mixture of experts (8 experts, top-2).
constexpr const char* kTinyMoe = R"({"model_type": "olmoe", "hidden_size": 128,
  "intermediate_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4,
  "num_key_value_heads": 4, "num_experts": 8, "num_experts_per_tok": 2, "vocab_size": 512,
  "max_position_embeddings": 2048})";

TEST(CliValidate, MixtureOfExpertsRowsSitInTheTableWithFiniteErrors) {
  TempDir dir;
  const auto dense = dir.write("tiny.json", kTinyLlama);
  const auto moe = dir.write("tiny-moe.json", kTinyMoe);
  const auto profile = test_profile(dir);
  const auto json_path = dir.path() / "validate.json";
  std::ostringstream out, err;
  const int code = run({"validate", "--model", dense.string(), "--model", moe.string(), "--profile",
                        profile.string(), "--formats", "int8", "--batches", "1,3", "--contexts",
                        "16", "--runs", "2", "--json", json_path.string(), "--quiet", "--no-store"},
                       out, err);
  ASSERT_EQ(code, kExitOk) << err.str();
  std::ifstream f(json_path);
  const auto doc = nlohmann::json::parse(f);
  int moe_rows = 0, dense_rows = 0;
  for (const auto& p : doc.at("points")) {
    EXPECT_TRUE(std::isfinite(p.at("error").get<double>()));
    EXPECT_GT(p.at("predicted_s").get<double>(), 0);
    EXPECT_GT(p.at("sections").at("mlp").at("predicted_s").get<double>(), 0);
    if (p.at("model") == "tiny") {
      ++dense_rows;
      EXPECT_FALSE(p.contains("experts_hit"));
      continue;
    }
    ++moe_rows;
    EXPECT_EQ(p.at("model"), "tiny-moe");
    // Distinct experts per layer: k for one sequence, at most batch x k of the 8.
    const double hit = p.at("experts_hit").get<double>();
    const double expected = p.at("experts_expected").get<double>();
    if (p.at("batch") == 1) {
      EXPECT_DOUBLE_EQ(hit, 2);
      EXPECT_NEAR(expected, 2, 1e-9);
    } else {
      EXPECT_GE(hit, 2);
      EXPECT_LE(hit, 6);
      EXPECT_NEAR(expected, 8 * (1 - std::pow(0.75, 3)), 1e-9);
    }
  }
  EXPECT_EQ(moe_rows, 2);
  EXPECT_EQ(dense_rows, 2);
  EXPECT_THAT(out.str(), HasSubstr("tiny-moe"));
  EXPECT_THAT(out.str(), HasSubstr("mixture-of-experts rows: |error| median "));
  EXPECT_THAT(out.str(), HasSubstr("distinct experts per layer"));
}

TEST(CliValidate, RefusesADescribedModelTheDecoderCannotRun) {
  TempDir dir;
  // Sliding-window layers: not a model the reference decoder runs.
  const auto model = dir.write("gemma.json", R"({"model_type": "gemma2", "hidden_size": 128,
    "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
    "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 512, "sliding_window": 64,
    "max_position_embeddings": 2048})");
  const auto profile = test_profile(dir);
  std::ostringstream out, err;
  const int code =
      run({"validate", "--model", model.string(), "--profile", profile.string(), "--formats",
           "int8", "--batches", "1", "--contexts", "16", "--runs", "1", "--quiet", "--no-store"},
          out, err);
  EXPECT_NE(code, kExitOk);
  EXPECT_THAT(err.str(), HasSubstr("gemma.json: the reference decoder runs"));
  EXPECT_THAT(err.str(), HasSubstr("got model_type \"gemma2\""));
}

TEST(CliValidate, TimesEachGridPointAndWritesTheErrors) {
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  const auto profile = test_profile(dir);
  const auto json_path = dir.path() / "validate.json";
  std::ostringstream out, err;
  const int code = run({"validate", "--model", model.string(), "--profile", profile.string(),
                        "--formats", "bf16,int8", "--batches", "1,3", "--contexts", "16,40",
                        "--runs", "1", "--json", json_path.string(), "--quiet"},
                       out, err);
  ASSERT_EQ(code, kExitOk) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("|error| over 8 points: median "));
  std::ifstream f(json_path);
  const auto doc = nlohmann::json::parse(f);
  ASSERT_EQ(doc.at("points").size(), 8u);  // 2 formats x 2 batches x 2 contexts
  for (const auto& p : doc.at("points")) {
    for (const char* key :
         {"model", "format", "batch", "context_tokens", "measured_s", "predicted_s"}) {
      EXPECT_TRUE(p.contains(key)) << key;
    }
    EXPECT_EQ(p.at("model"), "tiny");
    EXPECT_GT(p.at("measured_s").get<double>(), 0);
    EXPECT_GT(p.at("predicted_s").get<double>(), 0);
    // The uncontended comparison: the fastest run, and rates fitted to the fastest kernel times.
    EXPECT_GT(p.at("measured_min_s").get<double>(), 0);
    EXPECT_LE(p.at("measured_min_s").get<double>(), p.at("measured_s").get<double>());
    EXPECT_GT(p.at("predicted_min_s").get<double>(), 0);
    // Sections: every operator of the step, measured and predicted, the measured ones within
    // the step (they tile it; the step's median is taken over the same runs: one run here).
    const auto& sections = p.at("sections");
    ASSERT_EQ(sections.size(), 8u);
    double measured_sum = 0;
    for (const char* name : {"input_norm", "qkv_proj", "rope_kv_append", "attention", "out_proj",
                             "post_attention_norm", "mlp", "lm_head"}) {
      ASSERT_TRUE(sections.contains(name)) << name;
      EXPECT_GT(sections.at(name).at("measured_s").get<double>(), 0) << name;
      if (std::string(name) == "rope_kv_append") {
        // No operator of the predictor's layer graph: measured only (docs/model.md).
        EXPECT_EQ(sections.at(name).at("predicted_s").get<double>(), 0);
      } else {
        EXPECT_GT(sections.at(name).at("predicted_s").get<double>(), 0) << name;
      }
      measured_sum += sections.at(name).at("measured_s").get<double>();
    }
    EXPECT_LE(measured_sum, p.at("measured_s").get<double>());
  }
  EXPECT_GE(doc.at("median_abs_error").get<double>(), 0);
  EXPECT_GE(doc.at("p95_abs_error").get<double>(), doc.at("median_abs_error").get<double>());
  EXPECT_GT(doc.at("read_bandwidth_bytes_per_s").at("profile").get<double>(), 0);
  EXPECT_GT(doc.at("read_bandwidth_bytes_per_s").at("during_validation").get<double>(), 0);
  EXPECT_THAT(out.str(), HasSubstr("By operator"));
  const auto& fastest = doc.at("min_statistic");
  EXPECT_GE(fastest.at("p95_abs_error").get<double>(),
            fastest.at("median_abs_error").get<double>());
  EXPECT_THAT(out.str(), HasSubstr("min ms"));
  EXPECT_THAT(out.str(), HasSubstr("(median); median "));
  // The same points without the profile's measured shapes (the fit over all shapes alone).
  for (const auto& p : doc.at("points")) {
    EXPECT_GT(p.at("predicted_fit_only_s").get<double>(), 0);
  }
  EXPECT_GE(doc.at("fit_only").at("p95_abs_error").get<double>(),
            doc.at("fit_only").at("median_abs_error").get<double>());
  EXPECT_THAT(out.str(), HasSubstr("without the measured model shapes"));
  // The steps' own spread over the runs, per point and over the points.
  std::vector<double> spreads;
  for (const auto& p : doc.at("points")) {
    const double spread = p.at("measured_spread").get<double>();
    EXPECT_GE(spread, 0);
    EXPECT_LT(spread, 1e3);  // finite: a relative deviation of positive step times
    spreads.push_back(spread);
  }
  std::sort(spreads.begin(), spreads.end());
  EXPECT_DOUBLE_EQ(doc.at("measured_spread").at("median").get<double>(),
                   spreads[(spreads.size() - 1) / 2]);
  EXPECT_DOUBLE_EQ(doc.at("measured_spread").at("p95").get<double>(), spreads.back());
  EXPECT_THAT(out.str(), HasSubstr("the steps' own spread over the runs"));
  // The model's kernels re-timed between the rounds: a third prediction per point and section.
  for (const auto& p : doc.at("points")) {
    EXPECT_GT(p.at("predicted_retimed_s").get<double>(), 0);
    EXPECT_DOUBLE_EQ(
        p.at("retimed_error").get<double>(),
        p.at("predicted_retimed_s").get<double>() / p.at("measured_s").get<double>() - 1);
    EXPECT_GT(p.at("sections").at("mlp").at("retimed_s").get<double>(), 0);
  }
  EXPECT_GE(doc.at("retimed").at("p95_abs_error").get<double>(),
            doc.at("retimed").at("median_abs_error").get<double>());
  EXPECT_THAT(out.str(), HasSubstr("re-timed"));
  // Paired by round: per point the median of the rounds' errors, summarised over the points as
  // the other columns are (nearest-rank median and p95 of the absolute values).
  std::vector<double> paired;
  for (const auto& p : doc.at("points")) {
    const double e = p.at("retimed_paired_error").get<double>();
    EXPECT_GT(e, -1.0);  // a positive predicted time against a positive step
    EXPECT_LT(e, 1e3);
    paired.push_back(std::fabs(e));
  }
  std::sort(paired.begin(), paired.end());
  const auto nearest_rank = [&](double q) {
    const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(paired.size())));
    return paired[std::max<size_t>(rank, 1) - 1];
  };
  EXPECT_DOUBLE_EQ(doc.at("retimed").at("paired_median_abs_error").get<double>(),
                   nearest_rank(0.5));
  EXPECT_DOUBLE_EQ(doc.at("retimed").at("paired_p95_abs_error").get<double>(), nearest_rank(0.95));
  EXPECT_THAT(out.str(), HasSubstr("paired by round"));
}

TEST(CliValidate, ReTimedPredictionsUseTheKernelsTimedBetweenTheSteps) {
  // A profile with the model's own shapes whose samples were made 20x slower: the profile's
  // prediction follows them, the re-timed one replaces them with times taken now.
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  const auto profile = dir.path() / "profile.json";
  std::ostringstream cal_out, cal_err;
  ASSERT_EQ(run({"calibrate", "--test-sweep", "--threads", "1", "--model", model.string(), "--out",
                 profile.string(), "--quiet"},
                cal_out, cal_err),
            kExitOk)
      << cal_err.str();
  nlohmann::json doc;
  {
    std::ifstream f(profile);
    doc = nlohmann::json::parse(f);
  }
  // The tiny model's calls (rows x cols): QKV, output, gate/up, down, LM head; its attention
  // layout: 2 KV heads x 32 dims under 4 query heads.
  const std::set<std::pair<int64_t, int64_t>> calls = {
      {256, 128}, {128, 128}, {512, 128}, {128, 256}, {512, 128}};
  int slowed = 0;
  for (auto& k : doc.at("kernels")) {
    const bool mine = (k.at("op") == "matmul" && calls.count({k.at("rows").get<int64_t>(),
                                                              k.at("cols").get<int64_t>()}) > 0) ||
                      (k.at("op") == "attention" && k.at("rows") == 64 && k.at("batch") == 4);
    if (!mine) continue;
    for (const char* key : {"median_s", "min_s"}) k[key] = k.at(key).get<double>() * 20;
    k["bytes_per_s"] = k.at("bytes_per_s").get<double>() / 20;
    ++slowed;
  }
  ASSERT_GT(slowed, 0);
  {
    std::ofstream f(profile);
    f << doc.dump();
  }
  const auto json_path = dir.path() / "validate.json";
  std::ostringstream out, err;
  // Three runs per point: the median step (and each figure compared below) then withstands one
  // step that the machine preempted (a 2-run median took an 8 ms hiccup for a 24 us step).
  ASSERT_EQ(run({"validate", "--model", model.string(), "--profile", profile.string(), "--formats",
                 "int8", "--batches", "1,3", "--contexts", "16", "--runs", "3", "--json",
                 json_path.string(), "--quiet", "--no-store"},
                out, err),
            kExitOk)
      << err.str();
  std::ifstream f(json_path);
  const auto result = nlohmann::json::parse(f);
  for (const auto& p : result.at("points")) {
    EXPECT_LT(p.at("predicted_retimed_s").get<double>() * 3, p.at("predicted_s").get<double>())
        << p.dump();
    // Paired by round, each round's predictor also takes its kernels from that round.
    EXPECT_LT((1 + p.at("retimed_paired_error").get<double>()) * 3, 1 + p.at("error").get<double>())
        << p.dump();
  }
}

TEST(CliValidate, NoRetimeLeavesOutTheReTimedPrediction) {
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  const auto profile = test_profile(dir);
  const auto json_path = dir.path() / "validate.json";
  std::ostringstream out, err;
  ASSERT_EQ(run({"validate", "--model", model.string(), "--profile", profile.string(), "--formats",
                 "int8", "--batches", "1", "--contexts", "16", "--runs", "1", "--no-retime",
                 "--json", json_path.string(), "--quiet", "--no-store"},
                out, err),
            kExitOk)
      << err.str();
  std::ifstream f(json_path);
  const auto doc = nlohmann::json::parse(f);
  EXPECT_FALSE(doc.contains("retimed"));
  EXPECT_FALSE(doc.at("points").at(0).contains("predicted_retimed_s"));
  EXPECT_FALSE(doc.at("points").at(0).at("sections").at("mlp").contains("retimed_s"));
  EXPECT_THAT(out.str(), ::testing::Not(HasSubstr("re-timed")));
}

TEST(BenchmarkProfile, AQuickCalibrationIsWrittenWhereAsked) {
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  BenchmarkProfileOptions o;
  o.save_file = (dir.path() / "quick.json").string();
  o.models = {model};
  o.formats = {model::WeightFormat::kInt8};
  o.threads = 1;
  o.size = kernels::SweepSize::kTest;
  o.tool = "test";
  std::string lines;
  o.progress = [&](const std::string& line) { lines += line + "\n"; };
  std::string source;
  const model::CalibrationProfile p = benchmark_profile(o, source);
  EXPECT_EQ(lines, "no --profile: running a quick calibration first\n");
  EXPECT_EQ(source, "a quick calibration just now (" + o.save_file + ")");
  // The file holds that profile, the model's fused QKV (256x128) in int8 among its samples.
  const model::CalibrationProfile saved = model::read_profile_json(o.save_file);
  EXPECT_EQ(model::profile_to_json(saved), model::profile_to_json(p));
  bool qkv = false;
  for (const model::KernelSample& k : saved.kernels) {
    qkv = qkv || (k.op == "matmul" && k.format == "int8" && k.rows == 256 && k.cols == 128);
  }
  EXPECT_TRUE(qkv);
  // Read back through profile_file: the same profile, named by its file.
  BenchmarkProfileOptions again;
  again.profile_file = o.save_file;
  const model::CalibrationProfile read = benchmark_profile(again, source);
  EXPECT_EQ(source, o.save_file);
  EXPECT_EQ(model::profile_to_json(read), model::profile_to_json(p));
}

TEST(CliValidate, SaveProfileWithAProfileIsRefused) {
  TempDir dir;
  std::ostringstream out, err;
  EXPECT_EQ(run({"validate", "--profile", (dir.path() / "p.json").string(), "--save-profile",
                 (dir.path() / "q.json").string(), "--no-store"},
                out, err),
            kExitBadInput);
  EXPECT_THAT(err.str(), HasSubstr("--profile excludes --save-profile"));
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "q.json"));
}

TEST(CliValidate, GptNeoxIsRefusedWithTheReason) {
  TempDir dir;
  const auto model = dir.write("neox.json", R"({"model_type": "gpt_neox", "hidden_size": 128,
    "intermediate_size": 512, "num_hidden_layers": 2, "num_attention_heads": 4,
    "vocab_size": 512, "max_position_embeddings": 2048})");
  const auto profile = test_profile(dir);
  std::ostringstream out, err;
  EXPECT_EQ(run({"validate", "--model", model.string(), "--profile", profile.string(), "--formats",
                 "bf16", "--quiet"},
                out, err),
            kExitBadInput);
  EXPECT_THAT(err.str(), StartsWith("llmcap: error: " + model.string()));
  EXPECT_THAT(err.str(), HasSubstr("Llama-architecture"));
}

TEST(CliValidate, Fp8HasNoCpuKernel) {
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  const auto profile = test_profile(dir);
  std::ostringstream out, err;
  EXPECT_EQ(run({"validate", "--model", model.string(), "--profile", profile.string(), "--formats",
                 "fp8", "--quiet"},
                out, err),
            kExitBadInput);
  EXPECT_THAT(err.str(), HasSubstr("fp8"));
}

TEST(CliValidate, ProfileOfAnotherMachineIsRefused) {
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
  doc["machine"]["cpu_model"] = "Some Other CPU 9000";
  std::ofstream(profile) << doc.dump();
  std::ostringstream out, err;
  EXPECT_EQ(run({"validate", "--model", model.string(), "--profile", profile.string(), "--quiet"},
                out, err),
            kExitBadInput);
  EXPECT_THAT(err.str(), HasSubstr("Some Other CPU 9000"));
  EXPECT_THAT(err.str(), HasSubstr("--transfer"));
}

std::string fixed(double v, int precision) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

/// The smallest grid (one point) of the tiny model, with `extra` arguments appended.
std::vector<std::string> one_point_validate(const std::filesystem::path& model,
                                            const std::filesystem::path& profile,
                                            const std::vector<std::string>& extra) {
  std::vector<std::string> args = {"validate",
                                   "--model",
                                   model.string(),
                                   "--profile",
                                   profile.string(),
                                   "--formats",
                                   "bf16",
                                   "--batches",
                                   "1",
                                   "--contexts",
                                   "16",
                                   "--runs",
                                   "1",
                                   "--quiet"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(CliValidate, StoresTheRunWithWhatJsonWroteAsItsDocument) {
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  const auto profile = test_profile(dir);
  const auto json_path = dir.path() / "validate.json";
  const auto db_path = dir.path() / "runs.sqlite";
  std::ostringstream out, err;
  const int code =
      run(one_point_validate(model, profile,
                             {"--json", json_path.string(), "--results-db", db_path.string()}),
          out, err);
  ASSERT_EQ(code, kExitOk) << err.str();
  EXPECT_THAT(err.str(), HasSubstr("Stored as run 1 in " + db_path.string()));

  const store::RunRecord stored = llmcap::cli::testing::only_stored_run(db_path);
  ASSERT_FALSE(stored.kind.empty());
  EXPECT_EQ(stored.kind, "validate");
  EXPECT_EQ(stored.name, "tiny");
  EXPECT_THAT(stored.command_line, StartsWith("llmcap validate --model " + model.string()));
  const auto written = nlohmann::json::parse(llmcap::testing::read_text(json_path));
  EXPECT_EQ(nlohmann::json::parse(stored.document_json), written);
  const auto input = nlohmann::json::parse(stored.input_json);
  EXPECT_EQ(input.at("models"), nlohmann::json::array({model.string()}));
  EXPECT_EQ(input.at("formats"), nlohmann::json::array({"bf16"}));
  EXPECT_EQ(input.at("profile"), profile.string());
  EXPECT_EQ(input.at("steady_steps"), 1);  // the default: one untimed step before each timed one
  // The headline figures: median and p95 |error|, as the command prints them.
  EXPECT_THAT(
      stored.summary,
      HasSubstr("median " + fixed(100 * written.at("median_abs_error").get<double>(), 1) + "%"));
  EXPECT_THAT(stored.summary,
              HasSubstr("p95 " + fixed(100 * written.at("p95_abs_error").get<double>(), 1) + "%"));
}

TEST(CliValidate, SteadyStepsAreStoredAndANegativeCountIsRefused) {
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  const auto profile = test_profile(dir);
  const auto db_path = dir.path() / "runs.sqlite";
  std::ostringstream out, err;
  ASSERT_EQ(run(one_point_validate(model, profile,
                                   {"--steady-steps", "3", "--results-db", db_path.string()}),
                out, err),
            kExitOk)
      << err.str();
  const store::RunRecord stored = llmcap::cli::testing::only_stored_run(db_path);
  EXPECT_EQ(nlohmann::json::parse(stored.input_json).at("steady_steps"), 3);

  std::ostringstream out2, err2;
  EXPECT_NE(
      run(one_point_validate(model, profile, {"--steady-steps", "-1", "--no-store"}), out2, err2),
      kExitOk);
  EXPECT_THAT(err2.str(), HasSubstr("--steady-steps"));
  EXPECT_THAT(err2.str(), HasSubstr("Value -1 not in range 0 to 100"));
}

TEST(CliValidate, NoStoreLeavesNoRun) {
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  const auto profile = test_profile(dir);
  const auto db_path = dir.path() / "runs.sqlite";
  std::ostringstream out, err;
  const int code =
      run(one_point_validate(model, profile, {"--no-store", "--results-db", db_path.string()}), out,
          err);
  ASSERT_EQ(code, kExitOk) << err.str();
  EXPECT_THAT(err.str(), ::testing::Not(HasSubstr("Stored as run")));
  EXPECT_FALSE(std::filesystem::exists(db_path));
}

TEST(CliValidate, RefusedRunStoresNothing) {
  TempDir dir;
  const auto model = dir.write("tiny.json", kTinyLlama);
  const auto db_path = dir.path() / "runs.sqlite";
  std::ostringstream out, err;
  EXPECT_EQ(run({"validate", "--model", model.string(), "--formats", "fp4", "--quiet",
                 "--results-db", db_path.string()},
                out, err),
            kExitBadInput);
  EXPECT_THAT(err.str(), HasSubstr("fp4"));
  EXPECT_FALSE(std::filesystem::exists(db_path));
}

}  // namespace
}  // namespace llmcap::cli
