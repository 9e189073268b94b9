// Length models (sim/length_model.h; docs/scenarios.md, "Length models"): the quantile reader,
// its errors, the stratified samples, and the shipped models of data/workloads/ against the
// public traces they were computed from (skipped where ../shared/data/traces/ is absent).
#include "sim/length_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/input_error.h"
#include "sim/workload.h"
#include "test_util.h"

namespace llmcap::sim {
namespace {

using llmcap::testing::data_dir;
using llmcap::testing::TempDir;
using ::testing::HasSubstr;

/// A small valid model: prompts uniform on [100, 300], outputs on [10, 30].
nlohmann::json small_model() {
  return nlohmann::json::parse(R"({
    "format": "llmcap-length-model", "id": "small", "source": "hand-written for this test",
    "as_of": "2026-12-02",
    "prompt_tokens": {"quantiles": [[0, 100], [1, 300]]},
    "output_tokens": {"quantiles": [[0, 10], [0.5, 20], [1, 30]]}})");
}

std::string error_of(const TempDir& dir, const nlohmann::json& doc) {
  const auto path = dir.write("m.json", doc.dump());
  try {
    read_length_model(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(LengthModel, QuantilesAreLinearBetweenTheirPoints) {
  TempDir dir;
  const LengthModel m = read_length_model(dir.write("m.json", small_model().dump()));
  EXPECT_EQ(m.id, "small");
  EXPECT_DOUBLE_EQ(m.prompt_tokens.at(0), 100);
  EXPECT_DOUBLE_EQ(m.prompt_tokens.at(0.25), 150);
  EXPECT_DOUBLE_EQ(m.prompt_tokens.at(1), 300);
  EXPECT_DOUBLE_EQ(m.output_tokens.at(0.75), 25);
}

TEST(LengthModel, StratifiedSamplesFollowTheQuantilesWithIndependentOutputs) {
  TempDir dir;
  const LengthModel m = read_length_model(dir.write("m.json", small_model().dump()));
  const std::vector<LengthSample> s = length_samples(m, 1000);
  ASSERT_EQ(s.size(), 1000u);
  // Sample i has the prompt quantile at (i + 0.5) / 1000: 100.1 rounds to 100, 299.9 to 300.
  EXPECT_EQ(s.front().num_prompt_tokens, 100);
  EXPECT_EQ(s.back().num_prompt_tokens, 300);
  double prompt_sum = 0, output_sum = 0, low_prompt_output_sum = 0;
  std::vector<int64_t> outputs;
  for (size_t i = 0; i < s.size(); ++i) {
    prompt_sum += static_cast<double>(s[i].num_prompt_tokens);
    output_sum += static_cast<double>(s[i].num_output_tokens);
    if (i < 500) low_prompt_output_sum += static_cast<double>(s[i].num_output_tokens);
    outputs.push_back(s[i].num_output_tokens);
  }
  constexpr double kMeanTolerance = 0.5;  // rounding to whole tokens
  EXPECT_NEAR(prompt_sum / 1000, 200, kMeanTolerance);
  EXPECT_NEAR(output_sum / 1000, 20, kMeanTolerance);
  // The outputs are a permutation of their own stratified quantiles...
  std::sort(outputs.begin(), outputs.end());
  EXPECT_EQ(outputs.front(), 10);
  EXPECT_EQ(outputs.back(), 30);
  // ...spread evenly over short and long prompts (independent of the prompt).
  constexpr double kIndependenceTolerance = 0.5;
  EXPECT_NEAR(low_prompt_output_sum / 500, 20, kIndependenceTolerance);
}

TEST(LengthModel, LoadLengthsReadsAJsonPathAsALengthModel) {
  TempDir dir;
  const auto path = dir.write("m.json", small_model().dump());
  EXPECT_EQ(load_lengths(path).size(), static_cast<size_t>(kLengthModelSamples));
}

TEST(LengthModel, BadModelsNameTheFileFieldAndValue) {
  TempDir dir;
  const std::string file = (dir.path() / "m.json").string();
  auto doc = small_model();
  doc["format"] = "csv";
  EXPECT_EQ(error_of(dir, doc),
            file + ": field \"format\": expected \"llmcap-length-model\", got \"csv\"");
  doc = small_model();
  doc["extra"] = 1;
  EXPECT_THAT(error_of(dir, doc), HasSubstr(file + ": field \"extra\": unknown"));
  doc = small_model();
  doc.erase("source");
  EXPECT_THAT(error_of(dir, doc), HasSubstr(file + ": field \"source\""));
  doc = small_model();
  doc["prompt_tokens"]["quantiles"] = {{0, 100}, {0.5, 90}, {1, 300}};
  EXPECT_EQ(error_of(dir, doc), file +
                                    ": field \"prompt_tokens.quantiles[1]\": expected token "
                                    "counts that do not fall, in [1, 16777216], got [0.5,90]");
  doc = small_model();
  doc["prompt_tokens"]["quantiles"] = {{0, 100}, {0.9, 300}};
  EXPECT_EQ(error_of(dir, doc),
            file +
                ": field \"prompt_tokens.quantiles[1]\": expected probabilities rising "
                "strictly from 0 (the first) to 1 (the last), got [0.9,300]");
  doc = small_model();
  doc["output_tokens"]["quantiles"] = {{0, 10}};
  EXPECT_THAT(error_of(dir, doc),
              HasSubstr(file + ": field \"output_tokens.quantiles\": expected at least two"));
  doc = small_model();
  doc["prompt_tokens"]["quantiles"] = {{0, 0}, {1, 300}};
  EXPECT_THAT(error_of(dir, doc), HasSubstr("prompt_tokens.quantiles[0]"));
  EXPECT_THROW(read_length_model(dir.path() / "none.json"), InputError);
}

/// The shipped models and the public files they were computed from (scripts/length_model.py).
struct ShippedModel {
  const char* id;
  const char* trace;
};
constexpr ShippedModel kShipped[] = {
    {"azure-2023-conversation", "AzureLLMInferenceTrace_conv.csv"},
    {"azure-2023-code", "AzureLLMInferenceTrace_code.csv"},
    {"sharegpt-8k", "sharegpt_8k_filtered_stats_llama2_tokenizer.csv"},
    {"arxiv-summarization", "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv"},
};

TEST(ShippedLengthModels, EachReadsAndCarriesItsSource) {
  for (const ShippedModel& s : kShipped) {
    SCOPED_TRACE(s.id);
    const LengthModel m =
        read_length_model(data_dir() / "workloads" / (std::string(s.id) + ".json"));
    EXPECT_EQ(m.id, s.id);
    EXPECT_THAT(m.source, HasSubstr(s.trace));
    EXPECT_FALSE(m.as_of.empty());
  }
}

// The stratified samples' mean lengths are those of the trace itself (prompt and output):
// the tail quantiles (per mille above the 99th percentile) keep the longest prompts' weight.
TEST(ShippedLengthModels, SampleMeansMatchTheTraceTheyCameFrom) {
  for (const ShippedModel& s : kShipped) {
    SCOPED_TRACE(s.id);
    LLMCAP_SKIP_WITHOUT_SHARED_TRACE(s.trace);
    const std::vector<LengthSample> trace =
        load_lengths(llmcap::testing::shared_traces_dir() / s.trace);
    const std::vector<LengthSample> model =
        load_lengths(data_dir() / "workloads" / (std::string(s.id) + ".json"));
    auto means = [](const std::vector<LengthSample>& v) {
      double p = 0, o = 0;
      for (const LengthSample& l : v) {
        p += static_cast<double>(l.num_prompt_tokens);
        o += static_cast<double>(l.num_output_tokens);
      }
      return std::pair{p / static_cast<double>(v.size()), o / static_cast<double>(v.size())};
    };
    const auto [trace_prompt, trace_output] = means(trace);
    const auto [model_prompt, model_output] = means(model);
    constexpr double kMeanRelTolerance = 0.02;  // measured: at most 1.5% (code outputs)
    EXPECT_NEAR(model_prompt, trace_prompt, kMeanRelTolerance * trace_prompt);
    EXPECT_NEAR(model_output, trace_output, kMeanRelTolerance * trace_output);
  }
}

}  // namespace
}  // namespace llmcap::sim
