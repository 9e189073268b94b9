// A scenario's "serving.speculative": read and refused as documented, and planned with the
// draft priced and its weights taken from the KV cache.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "model/hardware.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

using llmcap::testing::TempDir;
using ::testing::HasSubstr;

/// A scenario file naming a shipped model by id, with `speculative` (a JSON object) as its
/// serving.speculative.
std::string scenario_text(const std::string& speculative) {
  return R"({"name": "s", "model": "llama-3.1-8b",
    "workload": {"kind": "poisson", "lengths_path": "l.csv", "rate_per_s": 1, "num_requests": 10},
    "slo": {"ttft_p99_s": 2, "tpot_p99_s": 0.05},
    "serving": {"speculative": )" +
         speculative + "}}";
}

Scenario load(TempDir& dir, const std::string& speculative) {
  return load_scenario(dir.write("s.json", scenario_text(speculative)),
                       llmcap::testing::data_dir());
}

std::string error_of(TempDir& dir, const std::string& speculative) {
  try {
    load(dir, speculative);
  } catch (const InputError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an InputError for " << speculative;
  return "";
}

TEST(LoadScenario, ReadsSpeculativeDecodingIntoEveryReplicasServing) {
  TempDir dir;
  const Scenario s = load(dir, R"({"method": "mtp", "num_draft_tokens": 2,
      "acceptance_rates": [0.8, 0.5], "source": "measured"})");
  EXPECT_TRUE(s.speculative.on());
  EXPECT_EQ(s.speculative.method, SpeculativeSpec::Method::kMtp);
  EXPECT_EQ(s.speculative.draft_layers, 1);
  EXPECT_EQ(s.speculative.source, "measured");
  EXPECT_EQ(s.serving.speculative.num_draft_tokens, 2);
  EXPECT_DOUBLE_EQ(s.serving.speculative.tokens_per_step(), 2.3);
  const Scenario d = load(dir, R"({"method": "draft_model", "draft_model": "llama-3.2-1b",
      "num_draft_tokens": 1, "acceptance_rates": [0.7]})");
  ASSERT_NE(d.speculative.draft_model, nullptr);
  EXPECT_EQ(d.speculative.draft_model->num_layers, 16);
}

TEST(LoadScenario, RefusesSpeculativeFieldsOutsideTheirRange) {
  TempDir dir;
  EXPECT_THAT(error_of(dir, R"({"method": "mtp", "num_draft_tokens": 2,
      "acceptance_rates": [0.5, 0.7]})"),
              HasSubstr("field \"serving.speculative.acceptance_rates\": expected one fraction "
                        "in [0, 1] per draft token (2), non-increasing (a draft position is "
                        "accepted only when every earlier one is), got [0.5,0.7]"));
  EXPECT_THAT(error_of(dir, R"({"method": "mtp", "num_draft_tokens": 1,
      "acceptance_rates": [1.5]})"),
              HasSubstr("got [1.5]"));
  EXPECT_THAT(error_of(dir, R"({"method": "mtp", "num_draft_tokens": 0,
      "acceptance_rates": []})"),
              HasSubstr("field \"serving.speculative.num_draft_tokens\""));
  EXPECT_THAT(error_of(dir, R"({"method": "medusa", "num_draft_tokens": 1,
      "acceptance_rates": [0.5]})"),
              HasSubstr("field \"serving.speculative.method\": expected \"mtp\", \"eagle\", "
                        "\"draft_model\" or \"ngram\", got \"medusa\""));
  EXPECT_THAT(error_of(dir, R"({"method": "draft_model", "num_draft_tokens": 1,
      "acceptance_rates": [0.5]})"),
              HasSubstr("field \"serving.speculative.draft_model\""));
  EXPECT_THAT(error_of(dir, R"({"method": "ngram", "num_draft_tokens": 1,
      "acceptance_rates": [0.5], "draft_layers": 2})"),
              HasSubstr("field \"serving.speculative.draft_layers\""));
}

/// Llama-3.1-8B on one instance type at a low rate (a TPOT the batch-1 step sets).
Scenario low_load(const std::string& instance) {
  Scenario s;
  s.file = "speculative.json";
  s.name = "speculative";
  s.model_config = llmcap::testing::data_dir() / "models" / "llama-3.1-8b.json";
  s.workload.kind = WorkloadSpec::Kind::kPoisson;
  s.workload.path = std::filesystem::path(LLMCAP_TEST_DATA_DIR) / "lengths.csv";
  s.workload.rate_per_s = 0.2;
  s.workload.num_requests = 40;
  s.slo.ttft_s = 5.0;
  s.slo.tpot_s = 0.5;
  s.seed = 3;
  s.max_instances = 4;
  s.candidates = {instance};
  return s;
}

void speculate(Scenario& s, SpeculativeSpec::Method method, std::vector<double> rates) {
  s.speculative.method = method;
  s.speculative.config.num_draft_tokens = static_cast<int64_t>(rates.size());
  s.speculative.config.acceptance_rates = std::move(rates);
  s.serving.speculative = s.speculative.config;
}

TEST(PlanSpeculative, AOneLayerDraftHeadCutsTheTpotByAboutTheTokensPerStep) {
  // At batch 1 a decode step of an 8B model streams its 16.1 GB of weights; verifying 2 drafts
  // adds little. Each of the 2 draft passes streams the head's layer (0.44 GB) and the LM head
  // (1.05 GB), under 10% of the weights. With 2.3 tokens per step TPOT falls to between
  // 1.05 / 2.3 and 1.2 / 2.3 of the plain step's.
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario plain = low_load("aws-p5.4xlarge");
  Scenario head = plain;
  speculate(head, SpeculativeSpec::Method::kEagle, {0.8, 0.5});
  const PlanRow a = plan(plain, catalog).rows.at(0);
  const PlanRow b = plan(head, catalog).rows.at(0);
  ASSERT_TRUE(a.infeasible_reason.empty()) << a.infeasible_reason;
  ASSERT_TRUE(b.infeasible_reason.empty()) << b.infeasible_reason;
  EXPECT_LT(b.tpot_floor_s, a.tpot_floor_s * 1.2 / 2.3);
  EXPECT_GT(b.tpot_floor_s, a.tpot_floor_s * 1.05 / 2.3);
  EXPECT_LT(b.metrics.tpot.p50_s, 0.6 * a.metrics.tpot.p50_s);
  EXPECT_THAT(b.predictor, HasSubstr("speculative decoding: eagle, 2 draft tokens, 2.3 tokens "
                                     "per step"));
}

TEST(PlanSpeculative, MtpNeedsAModelTrainedWithMtpLayers) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario s = low_load("aws-p5.48xlarge");
  speculate(s, SpeculativeSpec::Method::kMtp, {0.8});
  // Llama-3.1-8B has none: refused before any simulation, naming the alternatives.
  EXPECT_THAT(llmcap::testing::error_message<InputError>(
                  [&] { (void)PlanSession(s, catalog, PlanOptions{}); }),
              HasSubstr("speculative.json: field \"serving.speculative.method\": \"mtp\": "
                        "\"llama-3.1-8b\" has no multi-token-prediction layers "
                        "(num_nextn_predict_layers of its config.json is 0 or absent); expected "
                        "\"eagle\", \"draft_model\" or \"ngram\" for it"));
  // DeepSeek-V3 has one (num_nextn_predict_layers: 1): a one-layer head is its own, two are not.
  s.model_config = llmcap::testing::data_dir() / "models" / "families" / "deepseek-v3.json";
  s.weight_format = model::WeightFormat::kFp8;
  EXPECT_NO_THROW((void)PlanSession(s, catalog, PlanOptions{}));
  s.speculative.draft_layers = 2;
  EXPECT_THAT(llmcap::testing::error_message<InputError>(
                  [&] { (void)PlanSession(s, catalog, PlanOptions{}); }),
              HasSubstr("field \"serving.speculative.draft_layers\": 2: \"deepseek-v3\" has 1 "
                        "multi-token-prediction layer (num_nextn_predict_layers); expected at most "
                        "that"));
}

TEST(PlanSpeculative, ADraftThatLeavesNoKvCacheMakesTheTypeInfeasible) {
  // An A10G holds Llama-3.1-8B's 16 GB of bf16 weights and about 6.5 GB of KV cache: not a
  // 20-layer draft head besides (20 x 0.44 GB).
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario s = low_load("aws-g5.xlarge");
  speculate(s, SpeculativeSpec::Method::kEagle, {0.6});
  s.speculative.draft_layers = 20;
  const PlanRow row = plan(s, catalog).rows.at(0);
  EXPECT_THAT(row.infeasible_reason, HasSubstr("the draft's weights (8.724 GB) leave no KV cache "
                                               "(a replica has 6.574 GB after the model's)"));
}

TEST(PlanSpeculative, ADraftModelOfAnotherVocabularyOrNotSmallerIsRefused) {
  const model::Catalog catalog = model::Catalog::load(llmcap::testing::data_dir());
  Scenario s = low_load("aws-p5.4xlarge");
  speculate(s, SpeculativeSpec::Method::kDraftModel, {0.6});
  const auto draft = [](const std::string& id) {
    return std::make_shared<const model::ModelSpec>(
        model::load_model_spec(llmcap::testing::data_dir() / "models" / (id + ".json")));
  };
  s.speculative.draft_model = draft("qwen2.5-0.5b");
  try {
    plan(s, catalog);
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("speculative.json: field \"serving.speculative.draft_model\": "
                                    "\"qwen2.5-0.5b\" has a vocabulary of 151936 tokens, "
                                    "\"llama-3.1-8b\" one of 128256; expected a draft of the "
                                    "model's tokenizer"));
  }
  s.speculative.draft_model = draft("llama-3.1-70b");
  try {
    plan(s, catalog);
    ADD_FAILURE() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_THAT(e.what(), HasSubstr("expected a smaller draft"));
  }
}

}  // namespace
}  // namespace llmcap::plan
