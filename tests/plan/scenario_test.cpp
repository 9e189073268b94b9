#include "plan/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "test_util.h"

namespace llmcap::plan {
namespace {

using llmcap::testing::data_dir;
using llmcap::testing::TempDir;
using ::testing::HasSubstr;

constexpr double kExact = 0.0;

/// A valid scenario body with one field replaced by `patch` (a JSON fragment for that field).
std::string scenario_json(const std::string& field = "", const std::string& patch = "") {
  std::string slo = R"("slo": {"ttft_p99_s": 2.0, "tpot_p99_s": 0.05})";
  std::string workload =
      R"("workload": {"kind": "trace", "path": "t.csv", "rate_multiplier": 1.5, "window_s": 60})";
  std::string serving = R"("serving": {"max_num_seqs": 64, "router": "round_robin"})";
  std::string wf = R"("weight_format": "int8")";
  if (field == "slo") slo = patch;
  if (field == "workload") workload = patch;
  if (field == "serving") serving = patch;
  if (field == "weight_format") wf = patch;
  return "{\"name\": \"t\", \"model\": \"m.json\", " + wf + ", " + workload + ", " + slo + ", " +
         serving + ", \"candidates\": [\"a\", \"b\"], \"seed\": 7}";
}

TEST(LoadScenario, ReadsEveryField) {
  TempDir dir;
  const Scenario s = load_scenario(dir.write("s.json", scenario_json()));
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.model_config, dir.path() / "m.json");
  EXPECT_EQ(s.weight_format, model::WeightFormat::kInt8);
  EXPECT_EQ(s.kv_format, model::KvFormat::kBf16);
  EXPECT_EQ(s.workload.kind, WorkloadSpec::Kind::kTrace);
  EXPECT_EQ(s.workload.path, dir.path() / "t.csv");
  EXPECT_DOUBLE_EQ(s.workload.rate_multiplier, 1.5);
  ASSERT_TRUE(s.workload.window_s.has_value());
  EXPECT_NEAR(*s.workload.window_s, 60.0, kExact);
  EXPECT_DOUBLE_EQ(s.slo.ttft_s, 2.0);
  EXPECT_DOUBLE_EQ(s.slo.tpot_s, 0.05);
  EXPECT_EQ(s.serving.max_num_seqs, 64);
  EXPECT_EQ(s.serving.max_num_batched_tokens, 16384);  // default kept
  EXPECT_EQ(s.router, sim::RouterKind::kRoundRobin);
  EXPECT_EQ(s.candidates, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(s.seed, 7u);
}

TEST(LoadScenario, ShippedScenariosLoadAndPointAtExistingFiles) {
  for (const char* name :
       {"chat-llama3.1-8b.json", "code-llama3.1-8b.json", "finance-llama3-70b.json"}) {
    SCOPED_TRACE(name);
    const Scenario s = load_scenario(data_dir() / "scenarios" / name);
    EXPECT_TRUE(std::filesystem::exists(s.model_config)) << s.model_config;
    EXPECT_TRUE(std::filesystem::exists(s.workload.path)) << s.workload.path;
    EXPECT_DOUBLE_EQ(s.slo.tpot_s, 0.05);
  }
}

TEST(LoadScenario, DefaultScenarioIsTheAzureChatTraceWithAllCandidates) {
  const Scenario s = load_scenario(data_dir() / "scenarios" / "chat-llama3.1-8b.json");
  EXPECT_EQ(s.workload.path.filename(), "AzureLLMInferenceTrace_conv.csv");
  EXPECT_TRUE(s.candidates.empty());
  EXPECT_DOUBLE_EQ(s.slo.ttft_s, 2.0);
}

TEST(LoadScenario, FinanceScenarioIsAClosedLoopOf200Users) {
  const Scenario s = load_scenario(data_dir() / "scenarios" / "finance-llama3-70b.json");
  EXPECT_EQ(s.workload.kind, WorkloadSpec::Kind::kClosedLoop);
  EXPECT_EQ(s.workload.num_users, 200);
}

struct BadCase {
  const char* name;
  std::string field;
  std::string patch;
  std::vector<std::string> expected;  // substrings of the message
};

/// Names the case in test listings (gtest would otherwise print the struct's raw bytes).
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class LoadScenarioBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(LoadScenarioBadInput, NamesFileFieldAndValue) {
  const BadCase& c = GetParam();
  TempDir dir;
  const auto path = dir.write("bad.json", scenario_json(c.field, c.patch));
  try {
    load_scenario(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path.string()));
    for (const auto& s : c.expected) EXPECT_THAT(e.what(), HasSubstr(s));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, LoadScenarioBadInput,
    ::testing::Values(
        BadCase{"MissingSlo", "slo", R"("x": 1)", {"field \"slo\": missing"}},
        BadCase{"MistypedTtft",
                "slo",
                R"("slo": {"ttft_p99_s": "2s", "tpot_p99_s": 0.05})",
                {"field \"slo.ttft_p99_s\"", "expected a positive number", "\"2s\""}},
        BadCase{"NegativeRate",
                "workload",
                R"("workload": {"kind": "trace", "path": "t.csv", "rate_multiplier": -2})",
                {"field \"workload.rate_multiplier\"", "expected a positive number", "-2"}},
        BadCase{"UnknownKind",
                "workload",
                R"("workload": {"kind": "bursty"})",
                {"field \"workload.kind\"", "trace, poisson, closed_loop", "\"bursty\""}},
        BadCase{"MissingTracePath",
                "workload",
                R"("workload": {"kind": "trace"})",
                {"field \"workload.path\": missing"}},
        BadCase{"ZeroUsers",
                "workload",
                R"("workload": {"kind": "closed_loop", "lengths_path": "l.csv", "num_users": 0,
                    "think_time_s": 1, "duration_s": 10})",
                {"field \"workload.num_users\"", "expected a positive integer", "0"}},
        BadCase{"UnknownWeightFormat",
                "weight_format",
                R"("weight_format": "int3")",
                {"weight_format", "int3", "bf16"}},
        BadCase{"UnknownRouter",
                "serving",
                R"("serving": {"router": "random"})",
                {"serving.router", "random", "round_robin", "least_outstanding"}},
        BadCase{"FractionalMaxSeqs",
                "serving",
                R"("serving": {"max_num_seqs": 2.5})",
                {"field \"serving.max_num_seqs\"", "expected a positive integer", "2.5"}}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(LoadScenario, MissingFileIsNamed) {
  try {
    load_scenario("/nonexistent/scenario.json");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/scenario.json: cannot open file");
  }
}

TEST(LoadScenario, MalformedJsonIsNamed) {
  TempDir dir;
  const auto path = dir.write("broken.json", "{\"name\": \"t\",");
  try {
    load_scenario(path);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr(path.string() + ": malformed JSON"));
  }
}

TEST(LoadWorkload, PoissonDrawsTheRequestedNumberDeterministically) {
  WorkloadSpec spec;
  spec.kind = WorkloadSpec::Kind::kPoisson;
  spec.path = std::filesystem::path(LLMCAP_TEST_DATA_DIR) / "lengths.csv";
  spec.rate_per_s = 3.0;
  spec.num_requests = 500;
  const sim::Workload a = load_workload(spec, 11);
  const sim::Workload b = load_workload(spec, 11);
  ASSERT_EQ(a.open_loop.size(), 500u);
  ASSERT_EQ(b.open_loop.size(), 500u);
  for (size_t i = 0; i < a.open_loop.size(); ++i) {
    EXPECT_EQ(a.open_loop[i].arrival, b.open_loop[i].arrival);
    EXPECT_EQ(a.open_loop[i].num_prompt_tokens, b.open_loop[i].num_prompt_tokens);
  }
}

}  // namespace
}  // namespace llmcap::plan
