#include "plan/scenario.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "plan/candidates.h"
#include "sim/input_error.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

using llmcap::testing::data_dir;
using llmcap::testing::read_text;
using llmcap::testing::TempDir;
using ::testing::HasSubstr;

constexpr double kExact = 0.0;

/// A valid scenario body with some top-level fields replaced: patches maps "slo", "workload",
/// "serving" or "weight_format" to the JSON text standing for it ("" drops the field).
std::string scenario_with(const std::map<std::string, std::string>& patches) {
  std::map<std::string, std::string> fields = {
      {"slo", R"("slo": {"ttft_p99_s": 2.0, "tpot_p99_s": 0.05})"},
      {"workload",
       R"("workload": {"kind": "trace", "path": "t.csv", "rate_multiplier": 1.5, "window_s": 60})"},
      {"serving", R"("serving": {"max_num_seqs": 64, "router": "round_robin"})"},
      {"weight_format", R"("weight_format": "int8")"},
  };
  for (const auto& [field, patch] : patches) fields[field] = patch;
  std::string body = "{\"name\": \"t\", \"model\": \"m.json\"";
  for (const char* field : {"weight_format", "workload", "slo", "serving"}) {
    if (!fields[field].empty()) body += ", " + fields[field];
  }
  return body + ", \"candidates\": [\"a\", \"b\"], \"seed\": 7}";
}

/// A valid scenario body with one field replaced by `patch` (a JSON fragment for that field).
std::string scenario_json(const std::string& field = "", const std::string& patch = "") {
  if (field.empty()) return scenario_with({});
  return scenario_with({{field, patch}});
}

/// A "workload" of two client classes: `first` and `second` are the JSON objects of the classes.
std::string classes_workload(const std::string& first, const std::string& second) {
  return R"("workload": {"kind": "classes", "classes": [)" + first + ", " + second + "]}";
}

const std::string kChatClass =
    R"({"name": "chat", "kind": "gamma", "cv": 2, "lengths_path": "l.csv", "rate_per_s": 1,
        "num_requests": 10, "slo": {"ttft_p99_s": 1.5, "tpot_p99_s": 0.08}})";
const std::string kBatchClass =
    R"({"name": "batch", "kind": "trace", "path": "t.csv",
        "slo": {"ttft_p99_s": 30, "tpot_p99_s": 0.04}})";

/// An arrival-process "workload" with `extra` (JSON members, leading comma included) added.
std::string process_workload(const std::string& kind, const std::string& extra) {
  return R"("workload": {"kind": ")" + kind +
         R"(", "lengths_path": "l.csv", "rate_per_s": 2, "num_requests": 100)" + extra + "}";
}

/// `num_hours` hourly multipliers of 1 with entry `hour` replaced by `value` (JSON text).
std::string profile_json(int hour = -1, const std::string& value = "", int num_hours = 24) {
  std::string out = "[";
  for (int h = 0; h < num_hours; ++h) {
    out += (h ? ", " : "") + (h == hour ? value : std::string("1"));
  }
  return out + "]";
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

TEST(LoadScenario, ReadsArrivalProcessesAndTheirParameters) {
  TempDir dir;
  const Scenario g = load_scenario(dir.write(
      "g.json",
      scenario_json("workload", process_workload("gamma", R"(, "cv": 2.5, "duration_s": 600)"))));
  EXPECT_EQ(g.workload.kind, WorkloadSpec::Kind::kArrivalProcess);
  EXPECT_EQ(g.workload.kind, WorkloadSpec::Kind::kPoisson);  // the old name of the same kind
  EXPECT_EQ(g.workload.arrival.kind, sim::ArrivalProcessKind::kGamma);
  EXPECT_DOUBLE_EQ(g.workload.arrival.cv, 2.5);
  EXPECT_EQ(g.workload.path, dir.path() / "l.csv");
  EXPECT_DOUBLE_EQ(g.workload.rate_per_s, 2.0);
  EXPECT_EQ(g.workload.num_requests, 100);
  EXPECT_DOUBLE_EQ(g.workload.duration_s, 600.0);
  EXPECT_TRUE(g.workload.load_profile.empty());
  EXPECT_TRUE(g.workload.classes.empty());

  const Scenario w = load_scenario(
      dir.write("w.json", scenario_json("workload", process_workload("weibull", R"(, "shape": 0.7,
          "load_profile": )" + profile_json(3, "0.5")))));
  EXPECT_EQ(w.workload.arrival.kind, sim::ArrivalProcessKind::kWeibull);
  EXPECT_DOUBLE_EQ(w.workload.arrival.weibull_shape, 0.7);
  ASSERT_EQ(w.workload.load_profile.size(), 24u);
  EXPECT_DOUBLE_EQ(w.workload.load_profile[3], 0.5);
  EXPECT_DOUBLE_EQ(w.workload.load_profile[4], 1.0);

  // Poisson bounded by time alone.
  const Scenario p =
      load_scenario(dir.write("p.json", scenario_json("workload", R"("workload": {"kind": "poisson",
          "lengths_path": "l.csv", "rate_per_s": 0.5, "duration_s": 3600})")));
  EXPECT_EQ(p.workload.arrival.kind, sim::ArrivalProcessKind::kPoisson);
  EXPECT_EQ(p.workload.num_requests, 0);
  EXPECT_DOUBLE_EQ(p.workload.duration_s, 3600.0);
}

TEST(LoadScenario, ReadsClientClassesEachWithItsOwnSlo) {
  TempDir dir;
  const Scenario s = load_scenario(dir.write(
      "c.json",
      scenario_with({{"workload", classes_workload(kChatClass, kBatchClass)}, {"slo", ""}})));
  ASSERT_EQ(s.workload.classes.size(), 2u);
  const ClientClassSpec& chat = s.workload.classes[0];
  const ClientClassSpec& batch = s.workload.classes[1];
  EXPECT_EQ(chat.name, "chat");
  EXPECT_EQ(chat.workload.kind, WorkloadSpec::Kind::kArrivalProcess);
  EXPECT_EQ(chat.workload.arrival.kind, sim::ArrivalProcessKind::kGamma);
  EXPECT_DOUBLE_EQ(chat.workload.arrival.cv, 2.0);
  EXPECT_EQ(chat.workload.path, dir.path() / "l.csv");
  EXPECT_DOUBLE_EQ(chat.slo.ttft_s, 1.5);
  EXPECT_DOUBLE_EQ(chat.slo.tpot_s, 0.08);
  EXPECT_EQ(batch.name, "batch");
  EXPECT_EQ(batch.workload.kind, WorkloadSpec::Kind::kTrace);
  EXPECT_EQ(batch.workload.path, dir.path() / "t.csv");
  EXPECT_DOUBLE_EQ(batch.slo.ttft_s, 30.0);
  EXPECT_DOUBLE_EQ(batch.slo.tpot_s, 0.04);
  // kind and path mirror the first class; the scenario SLO is the tightest bound of each.
  EXPECT_EQ(s.workload.kind, WorkloadSpec::Kind::kArrivalProcess);
  EXPECT_EQ(s.workload.path, dir.path() / "l.csv");
  EXPECT_DOUBLE_EQ(s.slo.ttft_s, 1.5);
  EXPECT_DOUBLE_EQ(s.slo.tpot_s, 0.04);
  const std::vector<sim::Slo> slos = s.class_slos();
  ASSERT_EQ(slos.size(), 2u);
  EXPECT_DOUBLE_EQ(slos[0].ttft_s, 1.5);
  EXPECT_DOUBLE_EQ(slos[1].tpot_s, 0.04);

  // Without classes: one class, the scenario's SLO.
  const Scenario single = load_scenario(dir.write("s.json", scenario_json()));
  ASSERT_EQ(single.class_slos().size(), 1u);
  EXPECT_DOUBLE_EQ(single.class_slos()[0].ttft_s, 2.0);
}

TEST(LoadScenario, ReadsBatchingPolicy) {
  TempDir dir;
  EXPECT_EQ(load_scenario(dir.write("d.json", scenario_json())).serving.policy,
            sim::BatchingPolicy::kContinuous);  // default
  const Scenario chunked = load_scenario(
      dir.write("c.json", scenario_json("serving", R"("serving": {"batching": "chunked_prefill",
          "max_num_batched_tokens": 512, "router": "power_of_two"})")));
  EXPECT_EQ(chunked.serving.policy, sim::BatchingPolicy::kChunkedPrefill);
  EXPECT_EQ(chunked.serving.max_num_batched_tokens, 512);
  EXPECT_EQ(chunked.router, sim::RouterKind::kPowerOfTwo);
  EXPECT_EQ(
      load_scenario(
          dir.write("s.json", scenario_json("serving", R"("serving": {"batching": "static"})")))
          .serving.policy,
      sim::BatchingPolicy::kStatic);
}

TEST(LoadScenario, ReadsKvOffloadBytesAndRefusesANegativeOne) {
  TempDir dir;
  EXPECT_EQ(load_scenario(dir.write("k.json", scenario_json("serving", R"("serving": {
                "kv_offload_bytes": 2e11})")))
                .kv_offload_bytes,
            200'000'000'000);
  EXPECT_EQ(load_scenario(dir.write("d.json", scenario_json())).kv_offload_bytes, 0);
  const std::filesystem::path bad =
      dir.write("b.json", scenario_json("serving", R"("serving": {"kv_offload_bytes": -1})"));
  EXPECT_THAT(llmcap::testing::error_message<InputError>([&] { load_scenario(bad); }),
              HasSubstr("field \"serving.kv_offload_bytes\": expected a number of bytes in [0, "
                        "9e18] (0: no KV offload), got -1"));
}

TEST(LoadScenario, ReadsPrefixCachingAndRefusesANonBoolean) {
  TempDir dir;
  const Scenario off = load_scenario(
      dir.write("p.json", scenario_json("serving", R"("serving": {"prefix_caching": false,
          "router": "prefix_aware"})")));
  EXPECT_FALSE(off.serving.prefix_caching);
  EXPECT_TRUE(off.prefix_caching_set);
  EXPECT_EQ(off.router, sim::RouterKind::kPrefixAware);
  EXPECT_FALSE(load_scenario(dir.write("d.json", scenario_json())).prefix_caching_set);
  const std::filesystem::path bad =
      dir.write("b.json", scenario_json("serving", R"("serving": {"prefix_caching": "yes"})"));
  try {
    load_scenario(bad);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("serving.prefix_caching"));
    EXPECT_THAT(e.what(), HasSubstr("\"yes\""));
  }
}

TEST(LoadScenario, ReadsExpertParallelOffByDefault) {
  TempDir dir;
  EXPECT_FALSE(load_scenario(dir.write("d.json", scenario_json())).expert_parallel);
  EXPECT_TRUE(load_scenario(dir.write("e.json", scenario_json("serving", R"("serving": {
                                          "expert_parallel": true})")))
                  .expert_parallel);
  const std::string bad = dir.write("b.json", scenario_json("serving", R"("serving": {
                                         "expert_parallel": "yes"})"))
                              .string();
  try {
    load_scenario(bad);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(std::string(e.what()), HasSubstr(bad + ": field \"serving.expert_parallel\""));
    EXPECT_THAT(std::string(e.what()), HasSubstr("got \"yes\""));
  }
}

TEST(LoadScenario, ShippedScenariosKeepTheirMeaning) {
  const Scenario chat =
      load_scenario(data_dir() / "scenarios" / "chat-llama3.1-8b.json", data_dir());
  EXPECT_EQ(chat.workload.kind, WorkloadSpec::Kind::kArrivalProcess);
  EXPECT_EQ(chat.workload.arrival.kind, sim::ArrivalProcessKind::kGamma);
  EXPECT_DOUBLE_EQ(chat.workload.duration_s, 3600.0);
  EXPECT_TRUE(chat.workload.classes.empty());
  EXPECT_TRUE(chat.workload.load_profile.empty());
  EXPECT_EQ(chat.serving.policy, sim::BatchingPolicy::kContinuous);
  EXPECT_EQ(chat.serving.max_num_seqs, 256);
  EXPECT_EQ(chat.serving.max_num_batched_tokens, 16384);
  EXPECT_EQ(chat.serving.block_size_tokens, 16);
  EXPECT_EQ(chat.router, sim::RouterKind::kLeastOutstanding);
  EXPECT_EQ(chat.seed, 1u);
  EXPECT_EQ(chat.max_instances, 256);
  const Scenario code =
      load_scenario(data_dir() / "scenarios" / "code-llama3.1-8b.json", data_dir());
  EXPECT_EQ(code.workload.kind, WorkloadSpec::Kind::kArrivalProcess);
  EXPECT_EQ(code.workload.path.filename(), "azure-2023-code.json");
  const Scenario finance =
      load_scenario(data_dir() / "scenarios" / "finance-llama3-70b.json", data_dir());
  EXPECT_EQ(finance.workload.kind, WorkloadSpec::Kind::kClosedLoop);
  EXPECT_EQ(finance.workload.path.filename(), "azure-2023-conversation.json");
  EXPECT_DOUBLE_EQ(finance.workload.think_time_s, 10.0);
  EXPECT_DOUBLE_EQ(finance.workload.duration_s, 600.0);
  EXPECT_EQ(finance.max_instances, 64);
  EXPECT_EQ(finance.serving.policy, sim::BatchingPolicy::kContinuous);
}

TEST(LoadScenario, MixedClassesExampleIsADayOfChatAndSummarization) {
  const Scenario s =
      load_scenario(data_dir() / "scenarios" / "mixed-classes-llama3.1-8b.json", data_dir());
  ASSERT_EQ(s.workload.classes.size(), 2u);
  const ClientClassSpec& chat = s.workload.classes[0];
  const ClientClassSpec& summarization = s.workload.classes[1];
  EXPECT_EQ(chat.name, "chat");
  EXPECT_EQ(chat.workload.arrival.kind, sim::ArrivalProcessKind::kGamma);
  EXPECT_DOUBLE_EQ(chat.workload.arrival.cv, 2.0);
  EXPECT_EQ(chat.workload.path.filename(), "sharegpt-8k.json");
  EXPECT_EQ(summarization.name, "summarization");
  EXPECT_EQ(summarization.workload.arrival.kind, sim::ArrivalProcessKind::kPoisson);
  EXPECT_EQ(summarization.workload.path.filename(), "arxiv-summarization.json");
  for (const ClientClassSpec* c : {&chat, &summarization}) {
    EXPECT_TRUE(std::filesystem::exists(c->workload.path)) << c->workload.path;
    ASSERT_EQ(c->workload.load_profile.size(), 24u);
    double sum = 0;
    for (const double m : c->workload.load_profile) sum += m;
    EXPECT_NEAR(sum, 24.0, 1e-9) << c->name;  // profiles average 1: rate_per_s is the day's mean
    EXPECT_DOUBLE_EQ(c->workload.duration_s, 86400.0);
  }
  // The summarization SLO is the looser one; the scenario SLO is the tightest of both.
  EXPECT_LT(chat.slo.ttft_s, summarization.slo.ttft_s);
  EXPECT_LT(chat.slo.tpot_s, summarization.slo.tpot_s);
  EXPECT_DOUBLE_EQ(s.slo.ttft_s, chat.slo.ttft_s);
  EXPECT_DOUBLE_EQ(s.slo.tpot_s, chat.slo.tpot_s);
  EXPECT_EQ(s.serving.policy, sim::BatchingPolicy::kChunkedPrefill);

  const sim::Workload w = load_workload(s.workload, s.seed);
  ASSERT_FALSE(w.closed_loop.has_value());
  std::vector<sim::RequestSpec> by_class[2];
  for (size_t i = 0; i < w.open_loop.size(); ++i) {
    const sim::RequestSpec& r = w.open_loop[i];
    if (i > 0) {
      ASSERT_LE(w.open_loop[i - 1].arrival, r.arrival) << i;
    }
    ASSERT_TRUE(r.client_class == 0 || r.client_class == 1) << i;
    ASSERT_LT(r.arrival, sim::SimTime::Seconds(86400)) << i;
    by_class[r.client_class].push_back(r);
  }
  // Requests per day: rate_per_s x 86,400 s. Chat is Gamma with CV 2: count sd ~ 2 sqrt(n);
  // summarization is Poisson: sd sqrt(n). Five sd either way.
  constexpr double kSigmas = 5.0;
  const double chat_expected = chat.workload.rate_per_s * 86400;
  const double summarization_expected = summarization.workload.rate_per_s * 86400;
  EXPECT_NEAR(static_cast<double>(by_class[0].size()), chat_expected,
              kSigmas * 2 * std::sqrt(chat_expected));
  EXPECT_NEAR(static_cast<double>(by_class[1].size()), summarization_expected,
              kSigmas * std::sqrt(summarization_expected));
  // Summarization lengths come from the arXiv length model (its longest prompt has 4,054
  // tokens, its longest output 4,056; drawn independently, so the file's 4,096-token total is
  // not kept).
  for (const sim::RequestSpec& r : by_class[1]) {
    ASSERT_LE(r.num_prompt_tokens, 4054);
    ASSERT_LE(r.num_output_tokens, 4056);
  }
  // Class 0 draws exactly what it would alone.
  const sim::Workload chat_alone = load_workload(chat.workload, s.seed);
  ASSERT_EQ(chat_alone.open_loop.size(), by_class[0].size());
  for (size_t i = 0; i < by_class[0].size(); ++i) {
    ASSERT_EQ(chat_alone.open_loop[i].arrival, by_class[0][i].arrival) << i;
    ASSERT_EQ(chat_alone.open_loop[i].num_prompt_tokens, by_class[0][i].num_prompt_tokens) << i;
  }
}

TEST(LoadScenario, ShippedScenariosLoadAndPointAtExistingFiles) {
  for (const char* name : {"chat-llama3.1-8b.json", "code-llama3.1-8b.json",
                           "finance-llama3-70b.json", "mixed-classes-llama3.1-8b.json"}) {
    SCOPED_TRACE(name);
    const Scenario s = load_scenario(data_dir() / "scenarios" / name, data_dir());
    EXPECT_TRUE(std::filesystem::exists(s.model_config)) << s.model_config;
    EXPECT_TRUE(std::filesystem::exists(s.workload.path)) << s.workload.path;
    EXPECT_TRUE(s.missing_files.empty());
    EXPECT_DOUBLE_EQ(s.slo.tpot_s, 0.05);
  }
}

TEST(LoadScenario, DefaultScenarioIsTheAzureChatWorkloadModelWithAllCandidates) {
  const Scenario s = load_scenario(data_dir() / "scenarios" / "chat-llama3.1-8b.json", data_dir());
  EXPECT_EQ(s.workload.path.filename(), "azure-2023-conversation.json");
  EXPECT_TRUE(s.candidates.empty());
  EXPECT_DOUBLE_EQ(s.slo.ttft_s, 2.0);
}

// A shipped scenario whose arrivals stand for a trace's (gamma at its mean rate with the CV of
// its gaps) takes both figures from the length model it draws lengths from, never its own.
TEST(LoadScenario, ShippedArrivalRatesAreTheirLengthModelsPublishedFigures) {
  int checked = 0;
  for (const auto& entry : std::filesystem::directory_iterator(data_dir() / "scenarios")) {
    SCOPED_TRACE(entry.path().filename().string());
    const Scenario s = load_scenario(entry.path(), data_dir());
    const WorkloadSpec& w = s.workload;
    if (w.kind != WorkloadSpec::Kind::kArrivalProcess || w.path.extension() != ".json") continue;
    const nlohmann::json model = nlohmann::json::parse(read_text(w.path));
    if (!model.contains("arrivals")) continue;
    EXPECT_DOUBLE_EQ(w.rate_per_s, model["arrivals"]["rate_per_s"].get<double>());
    EXPECT_EQ(w.arrival.kind, sim::ArrivalProcessKind::kGamma);
    EXPECT_DOUBLE_EQ(w.arrival.cv, model["arrivals"]["interarrival_cv"].get<double>());
    ++checked;
  }
  EXPECT_GE(checked, 9);  // every scenario on the Azure conversation or code service
}

TEST(LoadScenario, FinanceScenarioIsAClosedLoopOf200Users) {
  const Scenario s =
      load_scenario(data_dir() / "scenarios" / "finance-llama3-70b.json", data_dir());
  EXPECT_EQ(s.workload.kind, WorkloadSpec::Kind::kClosedLoop);
  EXPECT_EQ(s.workload.num_users, 200);
}

struct BadCase {
  const char* name;
  std::string field;
  std::string patch;
  std::vector<std::string> expected;              // substrings of the message
  std::optional<std::string> slo = std::nullopt;  // replaces "slo" when set ("" drops it)
};

/// Names the case in test listings (gtest would otherwise print the struct's raw bytes).
void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name; }

class LoadScenarioBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(LoadScenarioBadInput, NamesFileFieldAndValue) {
  const BadCase& c = GetParam();
  TempDir dir;
  std::map<std::string, std::string> patches = {{c.field, c.patch}};
  if (c.slo) patches["slo"] = *c.slo;
  const auto path = dir.write("bad.json", scenario_with(patches));
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
        BadCase{"MissingSlo", "slo", R"("seed": 7)", {"field \"slo\": missing"}},
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
                {"field \"workload.kind\": expected one of: trace, poisson, gamma, weibull, "
                 "closed_loop, classes, got \"bursty\""}},
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
                {"field \"serving.max_num_seqs\"", "expected a positive integer", "2.5"}},
        // ---- arrival processes
        BadCase{"GammaWithoutCv",
                "workload",
                process_workload("gamma", ""),
                {"field \"workload.cv\": missing"}},
        BadCase{"ZeroCv",
                "workload",
                process_workload("gamma", R"(, "cv": 0)"),
                {"field \"workload.cv\": expected a positive number, got 0"}},
        BadCase{"CvOnPoisson",
                "workload",
                process_workload("poisson", R"(, "cv": 2)"),
                {"field \"workload.cv\": not allowed with kind \"poisson\" (only with \"gamma\")"}},
        BadCase{"NegativeWeibullShape",
                "workload",
                process_workload("weibull", R"(, "shape": -1)"),
                {"field \"workload.shape\": expected a positive number, got -1"}},
        BadCase{"TinyWeibullShape",
                "workload",
                process_workload("weibull", R"(, "shape": 0.001)"),
                {"field \"workload.shape\": expected a number >= 0.006, got 0.001"}},
        BadCase{"RateAboveOnePerNs",
                "workload",
                R"("workload": {"kind": "poisson", "lengths_path": "l.csv", "rate_per_s": 2e9,
                    "num_requests": 5})",
                {"field \"workload.rate_per_s\": expected a positive number up to 1e9 (one "
                 "request per ns), got 2000000000.0"}},
        BadCase{"DurationPastTheEndOfTime",
                "workload",
                process_workload("poisson", R"(, "duration_s": 1e10)"),
                {"field \"workload.duration_s\": expected a positive number below 9.2e9 (the end "
                 "of simulated time), got 10000000000.0"}},
        BadCase{"ShapeOnGamma",
                "workload",
                process_workload("gamma", R"(, "cv": 2, "shape": 0.5)"),
                {"field \"workload.shape\": not allowed with kind \"gamma\" (only with "
                 "\"weibull\")"}},
        BadCase{"NeitherCountNorDuration",
                "workload",
                R"("workload": {"kind": "weibull", "shape": 0.5, "lengths_path": "l.csv",
                    "rate_per_s": 2})",
                {"field \"workload.num_requests\": missing; expected num_requests (an integer > "
                 "0), duration_s (a number > 0) or both"}},
        BadCase{"NegativeDuration",
                "workload",
                process_workload("poisson", R"(, "duration_s": -5)"),
                {"field \"workload.duration_s\": expected a positive number, got -5"}},
        BadCase{"ZeroRateGamma",
                "workload",
                R"("workload": {"kind": "gamma", "cv": 2, "lengths_path": "l.csv",
                    "rate_per_s": 0, "duration_s": 60})",
                {"field \"workload.rate_per_s\": expected a positive number, got 0"}},
        // ---- load profile
        BadCase{"ProfileOf23Hours",
                "workload",
                process_workload("poisson", R"(, "load_profile": )" + profile_json(-1, "", 23)),
                {"field \"workload.load_profile\": expected 24 hourly multipliers (one per hour "
                 "of the day), got 23 entries"}},
        BadCase{
            "ProfileWithNegativeHour",
            "workload",
            process_workload("gamma", R"(, "cv": 2, "load_profile": )" + profile_json(3, "-0.5")),
            {"field \"workload.load_profile[3]\": expected a non-negative number, got -0.5"}},
        BadCase{"ProfileWithTextHour",
                "workload",
                process_workload("poisson", R"(, "load_profile": )" + profile_json(23, "\"x\"")),
                {"field \"workload.load_profile[23]\": expected a non-negative number, got "
                 "\"x\""}},
        BadCase{"ProfileNotAList",
                "workload",
                process_workload("poisson", R"(, "load_profile": 2)"),
                {"field \"workload.load_profile\": expected a list of 24 hourly multipliers, "
                 "got 2"}},
        BadCase{"ProfileAllZero",
                "workload",
                process_workload("poisson", R"(, "load_profile": [0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                    0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])"),
                {"field \"workload.load_profile\": expected at least one positive multiplier, "
                 "got all 0"}},
        BadCase{"ProfileOnTrace",
                "workload",
                R"("workload": {"kind": "trace", "path": "t.csv", "load_profile": [1]})",
                {"field \"workload.load_profile\": not allowed with kind \"trace\" (only with an "
                 "arrival process: poisson, gamma, weibull)"}},
        // ---- client classes
        BadCase{
            "ClassWithoutSlo",
            "workload",
            classes_workload(kChatClass, R"({"name": "batch", "kind": "trace", "path": "t.csv"})"),
            {"field \"workload.classes[1].slo\": missing; every client class needs its own "
             "SLO (ttft_p99_s, tpot_p99_s)"},
            ""},
        BadCase{"ClassWithBadSlo",
                "workload",
                classes_workload(kChatClass, R"({"name": "batch", "kind": "trace", "path": "t.csv",
                    "slo": {"ttft_p99_s": -1, "tpot_p99_s": 0.1}})"),
                {"field \"workload.classes[1].slo.ttft_p99_s\": expected a positive number, got "
                 "-1"},
                ""},
        BadCase{"ScenarioSloBesideClasses",
                "workload",
                classes_workload(kChatClass, kBatchClass),
                {"field \"slo\": not allowed with workload.kind \"classes\"; each class has its "
                 "own (workload.classes[i].slo)"}},
        BadCase{"NoClasses",
                "workload",
                R"("workload": {"kind": "classes", "classes": []})",
                {"field \"workload.classes\": expected a non-empty list of client classes, got []"},
                ""},
        BadCase{"ClassNotAnObject",
                "workload",
                R"("workload": {"kind": "classes", "classes": [3]})",
                {"field \"workload.classes[0]\": expected an object, got 3"},
                ""},
        BadCase{"ClassWithoutName",
                "workload",
                classes_workload(R"({"kind": "trace", "path": "t.csv",
                    "slo": {"ttft_p99_s": 1, "tpot_p99_s": 1}})",
                                 kBatchClass),
                {"field \"workload.classes[0].name\": missing"},
                ""},
        BadCase{"EmptyClassName",
                "workload",
                classes_workload(R"({"name": "", "kind": "trace", "path": "t.csv",
                    "slo": {"ttft_p99_s": 1, "tpot_p99_s": 1}})",
                                 kBatchClass),
                {"field \"workload.classes[0].name\": expected a non-empty string, got \"\""},
                ""},
        BadCase{"DuplicateClassName",
                "workload",
                classes_workload(kChatClass, kChatClass),
                {"field \"workload.classes[1].name\": expected a name no other class has, got "
                 "\"chat\" again"},
                ""},
        BadCase{"ClosedLoopClass",
                "workload",
                classes_workload(kChatClass, R"({"name": "users", "kind": "closed_loop",
                    "lengths_path": "l.csv", "num_users": 5, "think_time_s": 1, "duration_s": 9,
                    "slo": {"ttft_p99_s": 1, "tpot_p99_s": 1}})"),
                {"field \"workload.classes[1].kind\": expected one of: trace, poisson, gamma, "
                 "weibull, got \"closed_loop\""},
                ""},
        BadCase{"ClassBadProfileHour",
                "workload",
                classes_workload(R"({"name": "chat", "kind": "poisson", "lengths_path": "l.csv",
                    "rate_per_s": 1, "duration_s": 60, "load_profile": )" +
                                     profile_json(7, "-2") +
                                     R"(, "slo": {"ttft_p99_s": 1, "tpot_p99_s": 1}})",
                                 kBatchClass),
                {"field \"workload.classes[0].load_profile[7]\": expected a non-negative number, "
                 "got -2"},
                ""},
        BadCase{"ProfileBesideClasses",
                "workload",
                R"("workload": {"kind": "classes", "load_profile": [1], "classes": []})",
                {"field \"workload.load_profile\": not allowed with kind \"classes\" (only with "
                 "an arrival process: poisson, gamma, weibull; give each class its own)"},
                ""},
        BadCase{"ClassesOnPoisson",
                "workload",
                process_workload("poisson", R"(, "classes": [])"),
                {"field \"workload.classes\": not allowed with kind \"poisson\""}},
        // ---- batching policy
        BadCase{"UnknownBatching",
                "serving",
                R"("serving": {"batching": "fcfs"})",
                {"field \"serving.batching\": unknown batching policy \"fcfs\"; known: static, "
                 "continuous, chunked_prefill"}},
        BadCase{"MistypedBatching",
                "serving",
                R"("serving": {"batching": 3})",
                {"field \"serving.batching\": expected a string, got 3"}}),
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

TEST(LoadWorkload, GeneratedWorkloadFollowsTheSpec) {
  WorkloadSpec spec;
  spec.kind = WorkloadSpec::Kind::kArrivalProcess;
  spec.arrival.kind = sim::ArrivalProcessKind::kWeibull;
  spec.arrival.weibull_shape = 0.5;
  spec.path = std::filesystem::path(LLMCAP_TEST_DATA_DIR) / "lengths.csv";
  spec.rate_per_s = 4.0;
  spec.duration_s = 60;
  spec.load_profile.assign(24, 0.0);
  spec.load_profile[0] = 2.0;
  const sim::Workload w = load_workload(spec, 3);
  // The same as sim::generate_arrivals on the same options and lengths.
  sim::ArrivalOptions options;
  options.process = spec.arrival;
  options.rate_per_s = 4.0;
  options.duration_s = 60;
  options.hourly_multipliers = spec.load_profile;
  const auto expected = sim::generate_arrivals(options, sim::load_lengths(spec.path), 3);
  ASSERT_EQ(w.open_loop.size(), expected.size());
  ASSERT_FALSE(expected.empty());
  for (size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(w.open_loop[i].arrival, expected[i].arrival) << i;
    EXPECT_EQ(w.open_loop[i].num_output_tokens, expected[i].num_output_tokens) << i;
  }
}

TEST(LoadWorkload, ClassesMergeInArrivalOrderWithTheirIndex) {
  TempDir dir;
  dir.write("t.csv",
            "arrived_at,num_prefill_tokens,num_decode_tokens\n0.5,5000,7\n"
            "1.0,5001,8\n100.0,5002,9\n");
  dir.write("l.csv", "num_prefill_tokens,num_decode_tokens\n10,20\n30,40\n");
  const Scenario s = load_scenario(dir.write(
      "c.json",
      scenario_with({{"workload", classes_workload(kChatClass, kBatchClass)}, {"slo", ""}})));
  const sim::Workload w = load_workload(s.workload, 5);
  ASSERT_EQ(w.open_loop.size(), 13u);  // 10 generated + 3 trace rows
  const sim::Workload chat_alone = load_workload(s.workload.classes[0].workload, 5);
  size_t next_chat = 0;
  std::vector<int64_t> batch_prompts;
  for (size_t i = 0; i < w.open_loop.size(); ++i) {
    const sim::RequestSpec& r = w.open_loop[i];
    if (i > 0) {
      EXPECT_LE(w.open_loop[i - 1].arrival, r.arrival) << i;
    }
    if (r.client_class == 1) {
      batch_prompts.push_back(r.num_prompt_tokens);
      continue;
    }
    ASSERT_EQ(r.client_class, 0) << i;
    ASSERT_LT(next_chat, chat_alone.open_loop.size());
    EXPECT_EQ(r.arrival, chat_alone.open_loop[next_chat].arrival) << i;
    ++next_chat;
  }
  EXPECT_EQ(batch_prompts, (std::vector<int64_t>{5000, 5001, 5002}));
  // The same seed gives the same merged workload; another seed moves only class 0.
  const sim::Workload again = load_workload(s.workload, 5);
  ASSERT_EQ(again.open_loop.size(), w.open_loop.size());
  for (size_t i = 0; i < w.open_loop.size(); ++i) {
    EXPECT_EQ(again.open_loop[i].arrival, w.open_loop[i].arrival) << i;
    EXPECT_EQ(again.open_loop[i].client_class, w.open_loop[i].client_class) << i;
  }
}

// ---- tensor parallelism and given fleets ---------------------------------------------------

/// A scenario body without "candidates", with `extra` (JSON members, leading comma included).
std::string fleet_scenario(const std::string& extra) {
  return R"({"name": "f", "model": "m.json",
             "workload": {"kind": "trace", "path": "t.csv"},
             "slo": {"ttft_p99_s": 2.0, "tpot_p99_s": 0.05},
             "serving": {"max_num_seqs": 64, "router": "least_kv_load"})" +
         extra + "}";
}

/// The message of the InputError that loading `body` throws ("no error" if none).
std::string load_error(const std::string& body) {
  TempDir dir;
  try {
    load_scenario(dir.write("f.json", body));
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(LoadScenario, TensorParallelDefaultsToAuto) {
  TempDir dir;
  const Scenario s = load_scenario(dir.write("s.json", scenario_json()));
  EXPECT_EQ(s.tensor_parallel.mode, TensorParallelSpec::Mode::kAuto);
  EXPECT_TRUE(s.tensor_parallel.per_type.empty());
  EXPECT_FALSE(s.fleet.has_value());
}

TEST(LoadScenario, ReadsTensorParallelSearchAndPerType) {
  TempDir dir;
  Scenario s = load_scenario(
      dir.write("s.json", scenario_json("serving", R"("serving": {"tensor_parallel": "search"})")));
  EXPECT_EQ(s.tensor_parallel.mode, TensorParallelSpec::Mode::kSearch);
  s = load_scenario(dir.write(
      "s.json",
      scenario_json("serving",
                    R"("serving": {"tensor_parallel": {"aws-p5.48xlarge": 2, "m7i": 1}})")));
  EXPECT_EQ(s.tensor_parallel.mode, TensorParallelSpec::Mode::kPerType);
  EXPECT_EQ(s.tensor_parallel.per_type,
            (std::map<std::string, int>{{"aws-p5.48xlarge", 2}, {"m7i", 1}}));
  s = load_scenario(
      dir.write("s.json", scenario_json("serving", R"("serving": {"tensor_parallel": "auto"})")));
  EXPECT_EQ(s.tensor_parallel.mode, TensorParallelSpec::Mode::kAuto);
}

TEST(LoadScenario, RefusesBadTensorParallel) {
  TempDir dir;
  auto error = [&](const std::string& serving) {
    try {
      load_scenario(dir.write("s.json", scenario_json("serving", serving)));
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error(R"("serving": {"tensor_parallel": "max"})"),
              HasSubstr("field \"serving.tensor_parallel\": expected \"auto\", \"search\" or an "
                        "object of tensor-parallel degrees by instance id, e.g. "
                        "{\"aws-p5.48xlarge\": 2}, got \"max\""));
  EXPECT_THAT(error(R"("serving": {"tensor_parallel": {}})"),
              HasSubstr("field \"serving.tensor_parallel\": expected \"auto\", \"search\" or an "
                        "object"));
  EXPECT_THAT(error(R"("serving": {"tensor_parallel": {"gpu": 0}})"),
              HasSubstr("field \"serving.tensor_parallel.gpu\": expected a tensor-parallel "
                        "degree (an integer from 1 to 1024), got 0"));
  EXPECT_THAT(error(R"("serving": {"tensor_parallel": {"gpu": 1.5}})"),
              HasSubstr("field \"serving.tensor_parallel.gpu\": expected a tensor-parallel "
                        "degree (an integer from 1 to 1024), got 1.5"));
}

TEST(LoadScenario, ReadsAMixedFleet) {
  TempDir dir;
  const Scenario s = load_scenario(dir.write("f.json", fleet_scenario(R"(,
      "fleet": {"groups": [
        {"instance": "gpu-a", "count": 2},
        {"instance": "cpu-b", "count": 3, "tensor_parallel": 2,
         "serving": {"max_num_seqs": 16, "batching": "chunked_prefill",
                     "max_num_batched_tokens": 512}}]})")));
  ASSERT_TRUE(s.fleet.has_value());
  const FleetSpec& f = *s.fleet;
  EXPECT_FALSE(f.disaggregated);
  ASSERT_EQ(f.groups.size(), 2u);
  EXPECT_EQ(f.groups[0].field, "fleet.groups[0]");
  EXPECT_EQ(f.groups[0].instance, "gpu-a");
  EXPECT_EQ(f.groups[0].count, 2);
  EXPECT_EQ(f.groups[0].tensor_parallel, 0);
  EXPECT_EQ(f.groups[0].role, sim::ReplicaRole::kUnified);
  EXPECT_EQ(f.groups[0].serving.max_num_seqs, 64);  // the scenario's serving
  EXPECT_EQ(f.groups[0].serving.policy, sim::BatchingPolicy::kContinuous);
  EXPECT_EQ(f.groups[1].instance, "cpu-b");
  EXPECT_EQ(f.groups[1].count, 3);
  EXPECT_EQ(f.groups[1].tensor_parallel, 2);
  EXPECT_EQ(f.groups[1].serving.max_num_seqs, 16);  // the group's own
  EXPECT_EQ(f.groups[1].serving.policy, sim::BatchingPolicy::kChunkedPrefill);
  EXPECT_EQ(f.groups[1].serving.max_num_batched_tokens, 512);
  EXPECT_EQ(f.groups[1].serving.block_size_tokens, 16);
  EXPECT_EQ(s.router, sim::RouterKind::kLeastKvLoad);
}

TEST(LoadScenario, ReadsADisaggregatedFleet) {
  TempDir dir;
  Scenario s = load_scenario(dir.write("f.json", fleet_scenario(R"(,
      "fleet": {"prefill": [{"instance": "gpu-a", "count": 1}],
                "decode": [{"instance": "cpu-b", "count": 4}, {"instance": "gpu-a", "count": 1}],
                "decode_router": "power_of_two"})")));
  ASSERT_TRUE(s.fleet.has_value());
  EXPECT_TRUE(s.fleet->disaggregated);
  ASSERT_EQ(s.fleet->groups.size(), 3u);
  EXPECT_EQ(s.fleet->groups[0].field, "fleet.prefill[0]");
  EXPECT_EQ(s.fleet->groups[0].role, sim::ReplicaRole::kPrefill);
  EXPECT_EQ(s.fleet->groups[1].field, "fleet.decode[0]");
  EXPECT_EQ(s.fleet->groups[1].role, sim::ReplicaRole::kDecode);
  EXPECT_EQ(s.fleet->groups[1].count, 4);
  EXPECT_EQ(s.fleet->groups[2].field, "fleet.decode[1]");
  EXPECT_EQ(s.fleet->decode_router, sim::RouterKind::kPowerOfTwo);
  // Without "decode_router" the decode pool uses the scenario's router.
  s = load_scenario(dir.write("f.json", fleet_scenario(R"(,
      "fleet": {"prefill": [{"instance": "gpu-a", "count": 1}],
                "decode": [{"instance": "cpu-b", "count": 1}]})")));
  EXPECT_EQ(s.fleet->decode_router, sim::RouterKind::kLeastKvLoad);
}

TEST(LoadScenario, ShippedFleetAndTensorParallelScenariosLoad) {
  const Scenario search =
      load_scenario(data_dir() / "scenarios" / "chat-tp-search-llama3.1-8b.json", data_dir());
  EXPECT_EQ(search.tensor_parallel.mode, TensorParallelSpec::Mode::kSearch);
  EXPECT_EQ(search.candidates.size(), 4u);
  const Scenario mixed =
      load_scenario(data_dir() / "scenarios" / "mixed-fleet-llama3.1-8b.json", data_dir());
  ASSERT_TRUE(mixed.fleet.has_value());
  EXPECT_FALSE(mixed.fleet->disaggregated);
  ASSERT_EQ(mixed.fleet->groups.size(), 2u);
  EXPECT_EQ(mixed.fleet->groups[1].tensor_parallel, 2);
  const Scenario pools =
      load_scenario(data_dir() / "scenarios" / "disaggregated-llama3.1-8b.json", data_dir());
  ASSERT_TRUE(pools.fleet.has_value());
  EXPECT_TRUE(pools.fleet->disaggregated);
  EXPECT_EQ(pools.fleet->groups[0].serving.policy, sim::BatchingPolicy::kChunkedPrefill);
  EXPECT_EQ(pools.fleet->groups[1].serving.policy, sim::BatchingPolicy::kContinuous);
  EXPECT_EQ(pools.fleet->decode_router, sim::RouterKind::kLeastKvLoad);
}

TEST(LoadScenario, RefusesTheConfigurationSearchBesideAGivenFleet) {
  EXPECT_THAT(load_error(fleet_scenario(R"(, "fleet": {"groups": [{"instance": "a", "count": 1}]},
                                               "search": {"weight_formats": ["bf16", "int8"]})")),
              HasSubstr(": field \"search\": not allowed beside \"fleet\" (a given fleet is "
                        "evaluated as it is; the configuration search is over candidates)"));
}

TEST(LoadScenario, RefusesBadFleets) {
  EXPECT_THAT(load_error(fleet_scenario(R"(, "fleet": {})")),
              HasSubstr("field \"fleet\": expected \"groups\" (a mixed fleet) or \"prefill\" and "
                        "\"decode\" (disaggregated pools), got neither"));
  EXPECT_THAT(
      load_error(fleet_scenario(R"(, "fleet": {"prefill": [{"instance": "a", "count": 1}]})")),
      HasSubstr("field \"fleet.decode\": missing; a disaggregated fleet needs both a "
                "prefill and a decode pool"));
  EXPECT_THAT(load_error(fleet_scenario(R"(, "fleet": {"groups": [{"instance": "a", "count": 1}],
                                               "decode": [{"instance": "a", "count": 1}]})")),
              HasSubstr("field \"fleet.decode\": not allowed beside \"groups\""));
  EXPECT_THAT(load_error(fleet_scenario(R"(, "fleet": {"groups": []})")),
              HasSubstr("field \"fleet.groups\": expected a non-empty list of groups"));
  EXPECT_THAT(load_error(fleet_scenario(R"(, "fleet": {"groups": [{"count": 1}]})")),
              HasSubstr("field \"fleet.groups[0].instance\": missing"));
  EXPECT_THAT(
      load_error(fleet_scenario(R"(, "fleet": {"groups": [{"instance": "a", "count": 0}]})")),
      HasSubstr("field \"fleet.groups[0].count\": expected a positive integer, got 0"));
  EXPECT_THAT(
      load_error(fleet_scenario(
          R"(, "fleet": {"groups": [{"instance": "a", "count": 1, "tensor_parallel": 0}]})")),
      HasSubstr("field \"fleet.groups[0].tensor_parallel\": expected a tensor-parallel degree "
                "(an integer from 1 to 1024), got 0"));
  EXPECT_THAT(
      load_error(fleet_scenario(R"(, "fleet": {"groups": [{"instance": "a", "count": 1,
                                                          "serving": {"router": "round_robin"}}]})")),
      HasSubstr("field \"fleet.groups[0].serving.router\": not allowed in a group; routers are "
                "fleet-wide (serving.router, fleet.decode_router)"));
  EXPECT_THAT(
      load_error(fleet_scenario(R"(, "fleet": {"groups": [{"instance": "a", "count": 1,
                                                          "serving": {"batching": "fifo"}}]})")),
      HasSubstr("field \"fleet.groups[0].serving.batching\": unknown batching policy \"fifo\"; "
                "known: static, continuous, chunked_prefill"));
  EXPECT_THAT(
      load_error(fleet_scenario(R"(, "fleet": {"groups": [{"instance": "a", "count": 1}],
                                               "decode_router": "round_robin"})")),
      HasSubstr("field \"fleet.decode_router\": only with \"prefill\" and \"decode\" pools"));
  EXPECT_THAT(load_error(fleet_scenario(R"(, "fleet": {"prefill": [{"instance": "a", "count": 1}],
                                              "decode": [{"instance": "b", "count": 1}],
                                              "decode_router": "nearest"})")),
              HasSubstr("field \"fleet.decode_router\": unknown router \"nearest\"; known: "
                        "round_robin, least_outstanding, least_kv_load, power_of_two"));
  EXPECT_THAT(load_error(fleet_scenario(R"(, "candidates": ["x"],
                                           "fleet": {"groups": [{"instance": "a", "count": 1}]})")),
              HasSubstr("field \"candidates\": not allowed beside \"fleet\""));
  EXPECT_THAT(
      load_error(fleet_scenario(R"(, "fleet": {"prefill": [{"instance": "a", "count": 1}],
                                               "decode": [{"instance": "b", "count": 1,
                                                           "serving": {"batching": "static"}}]})")),
      HasSubstr("field \"fleet.decode[0].serving.batching\": \"static\" cannot serve the decode "
                "pool (fleet.decode[0]): prefilled requests arrive there one by one"));
  const std::string search =
      R"({"name": "f", "model": "m.json", "workload": {"kind": "trace", "path": "t.csv"},
          "slo": {"ttft_p99_s": 2.0, "tpot_p99_s": 0.05},
          "serving": {"tensor_parallel": "search"},
          "fleet": {"groups": [{"instance": "a", "count": 1}]}})";
  EXPECT_THAT(load_error(search),
              HasSubstr("field \"serving.tensor_parallel\": \"search\" is for the fleet-size "
                        "search over candidates"));
}

}  // namespace
}  // namespace llmcap::plan

namespace llmcap::plan {
namespace {

TEST(PriceOverrides, AreReadFromTheScenarioAndReplaceTheCatalogPrice) {
  llmcap::testing::TempDir dir;
  const std::string body = R"({"name": "t", "model": "m.json",
      "workload": {"kind": "trace", "path": "t.csv"},
      "slo": {"ttft_p99_s": 2.0, "tpot_p99_s": 0.05},
      "price_overrides": [{"instance": "gpu-a", "price_model": "on_demand", "usd_per_hour": 1.25,
                           "source": "our quote 42", "as_of": "2026-11-30"}]})";
  const Scenario s = load_scenario(dir.write("s.json", body));
  ASSERT_EQ(s.price_overrides.size(), 1u);
  EXPECT_EQ(s.price_overrides[0].source, "our quote 42");
  model::Catalog catalog;
  model::InstanceType a;
  a.id = "gpu-a";
  a.usd_per_hour = 2.0;
  a.source = "list price";
  a.as_of = "2026-01-01";
  catalog.add_instance(a);
  const model::Catalog priced = catalog_with_price_overrides(catalog, s.price_overrides, "s.json");
  EXPECT_DOUBLE_EQ(priced.find_instance("gpu-a")->usd_per_hour, 1.25);
  EXPECT_EQ(priced.find_instance("gpu-a")->source, "our quote 42");
}

// "candidates": "cpu" or "gpu" is every instance type of that device kind (issue 30, item 3).
TEST(LoadScenario, CandidatesOfOneDeviceKindAreEveryTypeOfThatKind) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  TempDir dir;
  size_t total = 0;
  for (const char* kind : {"cpu", "gpu"}) {
    SCOPED_TRACE(kind);
    const auto path = dir.write(std::string(kind) + ".json",
                                fleet_scenario(std::string(", \"candidates\": \"") + kind + "\""));
    const Scenario s = load_scenario(path);
    const std::vector<const model::InstanceType*> types = resolve_candidates(s, catalog);
    ASSERT_FALSE(types.empty());
    for (const model::InstanceType* t : types) EXPECT_EQ(model::to_string(t->kind), kind);
    total += types.size();
  }
  EXPECT_EQ(total, catalog.instances().size());
  EXPECT_THAT(load_error(fleet_scenario(R"(, "candidates": "tpu")")),
              HasSubstr("field \"candidates\": expected \"all\", \"cpu\", \"gpu\" or a "
                        "non-empty list of instance ids and device kinds, got \"tpu\""));
}

TEST(LoadScenario, ACandidateListMayNameDeviceKindsBesideIds) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  const model::InstanceType* first_gpu = nullptr;
  size_t num_cpus = 0;
  for (const auto& i : catalog.instances()) {
    if (i.kind == model::DeviceKind::kGpu && first_gpu == nullptr) first_gpu = &i;
    if (i.kind == model::DeviceKind::kCpu) ++num_cpus;
  }
  ASSERT_NE(first_gpu, nullptr);
  TempDir dir;
  // Every CPU type, one GPU type, and a CPU named twice (once by kind, once by id): each once.
  const std::string cpu_id = [&] {
    for (const auto& i : catalog.instances()) {
      if (i.kind == model::DeviceKind::kCpu) return i.id;
    }
    return std::string();
  }();
  const Scenario s = load_scenario(
      dir.write("s.json", fleet_scenario(R"(, "candidates": ["cpu", ")" + first_gpu->id +
                                         R"(", ")" + cpu_id + R"("])")));
  const std::vector<const model::InstanceType*> types = resolve_candidates(s, catalog);
  ASSERT_EQ(types.size(), num_cpus + 1);
  EXPECT_EQ(types.back()->id, first_gpu->id);
  EXPECT_THAT(load_error(fleet_scenario(R"(, "candidates": ["cpu", 3])")),
              HasSubstr("field \"candidates\": expected instance ids or device kinds"));
}

TEST(PriceOverrides, TheRepricedCatalogKeepsTheEnginesAndItsFolder) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  const model::InstanceType& first = catalog.instances().front();
  const PriceOverride p{first.id, first.price_model, 1.0, "2026-12-02"};
  const model::Catalog priced = catalog_with_price_overrides(catalog, {p}, "s.json");
  EXPECT_EQ(priced.engine_ids(), catalog.engine_ids());
  EXPECT_NE(priced.find_engine("vllm"), nullptr);
  EXPECT_EQ(priced.data_dir(), catalog.data_dir());
}

TEST(PriceOverrides, APriceWithoutItsDateOrForAnUnknownInstanceIsRefused) {
  llmcap::testing::TempDir dir;
  const std::string head = R"({"name": "t", "model": "m.json",
      "workload": {"kind": "trace", "path": "t.csv"},
      "slo": {"ttft_p99_s": 2.0, "tpot_p99_s": 0.05}, "price_overrides": )";
  EXPECT_THAT(llmcap::testing::error_message<InputError>([&] {
                load_scenario(dir.write("s.json", head + R"([{"instance": "gpu-a",
                    "price_model": "on_demand", "usd_per_hour": 1.25}]})"));
              }),
              ::testing::HasSubstr("s.json: field \"price_overrides[0].as_of\": missing"));
  model::Catalog catalog;
  PriceOverride p{"gpu-z", "on_demand", 1.0, "2026-11-30"};
  EXPECT_EQ(llmcap::testing::error_message<InputError>(
                [&] { catalog_with_price_overrides(catalog, {p}, "s.json"); }),
            "s.json: field \"price_overrides[0].instance\": unknown instance type \"gpu-z\"");
}

}  // namespace
}  // namespace llmcap::plan

namespace llmcap::plan {
namespace {

TEST(LoadScenario, WeightFormatMayDifferByDeviceKind) {
  TempDir dir;
  const Scenario one = load_scenario(dir.write("one.json", scenario_json()));
  EXPECT_FALSE(one.cpu_weight_format.has_value());
  EXPECT_EQ(weight_format_for(one, model::DeviceKind::kCpu), model::WeightFormat::kInt8);
  EXPECT_EQ(weight_format_for(one, model::DeviceKind::kGpu), model::WeightFormat::kInt8);

  const Scenario by_kind = load_scenario(dir.write(
      "kinds.json", scenario_json("weight_format", R"("weight_format": {"cpu": "int4"})")));
  EXPECT_EQ(weight_format_for(by_kind, model::DeviceKind::kCpu), model::WeightFormat::kInt4);
  EXPECT_EQ(weight_format_for(by_kind, model::DeviceKind::kGpu), model::WeightFormat::kBf16);
}

TEST(LoadScenario, BadPerKindWeightFormatsNameTheField) {
  EXPECT_THAT(load_error(scenario_json("weight_format", R"("weight_format": {"tpu": "int4"})")),
              HasSubstr("field \"weight_format.tpu\": unknown"));
  EXPECT_THAT(load_error(scenario_json("weight_format", R"("weight_format": {"cpu": "int3"})")),
              HasSubstr("field \"weight_format.cpu\""));
  EXPECT_THAT(load_error(scenario_json("weight_format", R"("weight_format": 4)")),
              HasSubstr("field \"weight_format\": expected a weight format name or an object"));
}

TEST(LoadScenario, SearchWeightFormatsMayBeGivenPerDeviceKind) {
  TempDir dir;
  const std::string body = scenario_json();
  const std::string with_search =
      body.substr(0, body.size() - 1) +
      R"(, "search": {"weight_formats": {"gpu": ["bf16", "fp8"], "cpu": ["q8_0", "int4"]}}})";
  const Scenario s = load_scenario(dir.write("s.json", with_search));
  EXPECT_TRUE(s.search.weight_formats_by_kind);
  EXPECT_EQ(s.search.weight_formats, (std::vector<model::WeightFormat>{model::WeightFormat::kBf16,
                                                                       model::WeightFormat::kFp8}));
  ASSERT_EQ(s.search.cpu_weight_formats.size(), 2u);
  EXPECT_EQ(s.search.cpu_weight_formats[1], model::WeightFormat::kInt4);
}

}  // namespace
}  // namespace llmcap::plan
