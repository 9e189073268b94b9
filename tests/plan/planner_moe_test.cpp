// Plans of a mixture-of-experts model end to end: the shipped Qwen3-30B-A3B scenario.
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "model/roofline.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

using llmcap::testing::data_dir;

/// `moe` with every mixture-of-experts MLP replaced by a dense gated MLP of as many parameters
/// (inner width = experts x expert width + shared width): a dense model of the same size.
model::ModelSpec dense_twin(const model::ModelSpec& moe) {
  auto d = std::make_shared<model::ModelDescription>(*moe.description);
  for (model::LayerSpec& layer : d->layers) {
    model::MlpSpec& m = layer.mlp;
    if (m.kind != model::MlpKind::kMoe) continue;
    const int64_t width = m.num_experts * m.expert_intermediate_size + m.shared_intermediate_size;
    m = model::MlpSpec{};
    m.intermediate_size = width;
  }
  model::ModelSpec dense = moe;
  dense.description = d;
  return dense;
}

/// Bytes one step moves over the whole model (each breakdown entry x its layers).
double step_bytes(const model::RooflinePredictor& p, const model::BatchShape& b) {
  double sum = 0;
  for (const model::OpTime& op : p.breakdown(b)) sum += op.bytes * op.num_layers;
  return sum;
}

// The shipped scenario plans on a GPU and a CPU type; on the GPU's deployment a decode step of
// 16 sequences reads the 16 x 8 = at most 128 experts its tokens reach, 128 x (1 - (120/128)^16)
// = 82.4 of 128 per layer, and so fewer bytes (and less time) than a dense model of the same
// total parameters, which reads every weight.
TEST(PlanMoe, Qwen3MoeScenarioPlansAndItsDecodeReadsFewerBytesThanADenseTwin) {
  Scenario s = load_scenario(data_dir() / "scenarios" / "chat-qwen3-30b-a3b.json", data_dir());
  s.candidates = {"aws-g6e.xlarge", "aws-m8i.96xlarge"};
  const model::Catalog catalog = model::Catalog::load(data_dir());
  const PlanResult result = plan(s, catalog);
  ASSERT_EQ(result.rows.size(), 2u);
  for (const PlanRow& row : result.rows) {
    EXPECT_TRUE(row.feasible) << row.instance_type << ": " << row.infeasible_reason;
    EXPECT_LE(row.metrics.tpot.p99_s, s.slo.tpot_s) << row.instance_type;
  }

  const model::ModelSpec moe = model::load_model_spec(s.model_config);
  ASSERT_NE(moe.description, nullptr);
  const model::ModelSpec dense = dense_twin(moe);
  // The twin lacks only the routers: 48 layers x 128 x 2,048 = 12.6e6 of 30.5e9 parameters.
  constexpr double kRouterShare = 5e-4;
  EXPECT_NEAR(static_cast<double>(dense.num_params()), static_cast<double>(moe.num_params()),
              kRouterShare * static_cast<double>(moe.num_params()));
  const model::Efficiency e = model::default_efficiency(model::DeviceKind::kGpu);
  const model::Deployment d = model::make_deployment(catalog.instance("aws-g6e.xlarge", "test"),
                                                     catalog, moe, s.weight_format, s.kv_format, e);
  const model::RooflinePredictor moe_p(moe, s.weight_format, s.kv_format, d, e);
  const model::RooflinePredictor dense_p(dense, s.weight_format, s.kv_format, d, e);
  model::BatchShape decode;
  decode.num_decode_seqs = 16;
  decode.num_decode_context_tokens = 16 * 1000;
  const double moe_bytes = step_bytes(moe_p, decode);
  const double dense_bytes = step_bytes(dense_p, decode);
  EXPECT_LT(moe_bytes, 0.75 * dense_bytes);
  EXPECT_LT(moe_p.step_time_s(decode), dense_p.step_time_s(decode));
}

TEST(PlanMoe, ShippedMoeScenariosLoadWithTheirDescribedModels) {
  for (const char* name :
       {"chat-qwen3-30b-a3b.json", "deepseek-v3-8gpu.json", "gpt-oss-120b.json"}) {
    SCOPED_TRACE(name);
    const Scenario s = load_scenario(data_dir() / "scenarios" / name, data_dir());
    EXPECT_TRUE(std::filesystem::exists(s.workload.path)) << s.workload.path;
    EXPECT_NE(model::load_model_spec(s.model_config).description, nullptr);
  }
}

/// plan()'s InputError message for `s`, and whether any row was planned before it.
std::string plan_error_of(const Scenario& s, const model::Catalog& catalog, int* rows_done) {
  struct CountingObserver : PlanObserver {
    int calls = 0;
    void on_row_done(const PlanRow&, size_t, size_t) override { ++calls; }
  } observer;
  PlanOptions options;
  options.observer = &observer;
  std::string message = "no error";
  try {
    plan(s, catalog, options);
  } catch (const InputError& e) {
    message = e.what();
  }
  *rows_done = observer.calls;
  return message;
}

// Qwen1.5-MoE-A2.7B has 60 routed experts per layer: 8 GPUs cannot hold the same whole number
// of them, and the plan is refused before anything is simulated.
TEST(PlanMoe, AnExpertParallelDegreeThatDoesNotDivideTheExpertsIsRefusedBeforeTheRun) {
  Scenario s = load_scenario(data_dir() / "scenarios" / "chat-qwen3-30b-a3b.json", data_dir());
  s.model_config = data_dir() / "models" / "families" / "qwen1.5-moe-a2.7b.json";
  s.candidates = {"aws-p5.48xlarge"};
  s.expert_parallel = true;
  s.tensor_parallel.mode = TensorParallelSpec::Mode::kPerType;
  s.tensor_parallel.per_type = {{"aws-p5.48xlarge", 8}};
  const model::Catalog catalog = model::Catalog::load(data_dir());
  int rows_done = -1;
  EXPECT_EQ(plan_error_of(s, catalog, &rows_done),
            s.file.string() +
                ": field \"serving.tensor_parallel.aws-p5.48xlarge\": expected a degree dividing "
                "the 60 routed experts per layer of model \"qwen1.5-moe-a2.7b\" "
                "(serving.expert_parallel splits them whole over a replica's devices), got 8");
  EXPECT_EQ(rows_done, 0);
}

TEST(PlanMoe, ExpertParallelismOnADenseModelIsRefusedBeforeTheRun) {
  Scenario s = load_scenario(data_dir() / "scenarios" / "chat-llama3.1-8b.json", data_dir());
  s.expert_parallel = true;
  const model::Catalog catalog = model::Catalog::load(data_dir());
  int rows_done = -1;
  EXPECT_EQ(plan_error_of(s, catalog, &rows_done),
            s.file.string() +
                ": field \"serving.expert_parallel\": expected false for model \"llama-3.1-8b\", "
                "which has no routed experts (no mixture-of-experts layer), got true");
  EXPECT_EQ(rows_done, 0);
}

TEST(PlanMoe, TheDeepSeekScenarioSplitsItsExpertsOverItsGpus) {
  const Scenario s = load_scenario(data_dir() / "scenarios" / "deepseek-v3-8gpu.json", data_dir());
  EXPECT_TRUE(s.expert_parallel);
  EXPECT_FALSE(load_scenario(data_dir() / "scenarios" / "chat-qwen3-30b-a3b.json", data_dir())
                   .expert_parallel);
}

}  // namespace
}  // namespace llmcap::plan
