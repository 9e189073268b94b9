#include "cli/model_cmd.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/cli.h"
#include "run_cli.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using llmcap::cli::testing::CliRun;
using llmcap::cli::testing::run_cli;
using llmcap::testing::TempDir;
using ::testing::HasSubstr;

std::string family(const std::string& name) {
  return (llmcap::testing::data_dir() / "models" / "families" / (name + ".json")).string();
}

TEST(CliModel, PrintsDeepSeekV3LayerGroupsAndKv) {
  const CliRun r = run_cli({"model", family("deepseek-v3"), "--context", "4096"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("671,026,419,200 total"));
  EXPECT_THAT(r.out, HasSubstr("layers 0-2 (3): dense gated MLP 18,432; MLA (kv_lora_rank 512, "
                               "q_lora_rank 1536, qk_rope 64, qk_nope 128, v 128), 128 heads"));
  EXPECT_THAT(r.out, HasSubstr("layers 3-60 (58): MoE 256 experts top-8 (width 2,048) + 1 shared "
                               "(width 2,048); MLA"));
  // 61 x 576 x 2 bytes per token; 4,096 tokens of it.
  EXPECT_THAT(r.out, HasSubstr("bf16: 70,272 per token, 287,834,112 at 4,096"));
  EXPECT_THAT(r.out, HasSubstr("fields read: model_type hidden_size"));
}

TEST(CliModel, WritesJsonWithWindowAwareKvAtTheDefaultContext) {
  TempDir dir;
  const auto json_path = dir.path() / "gemma.json";
  const CliRun r = run_cli({"model", family("gemma-2-9b"), "--json", json_path.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const nlohmann::json j = nlohmann::json::parse(llmcap::testing::read_text(json_path));
  EXPECT_EQ(j.at("model_type"), "gemma2");
  EXPECT_EQ(j.at("total_params"), 9'241'705'984);
  EXPECT_EQ(j.at("active_params"), 9'241'705'984);
  EXPECT_EQ(j.at("weight_bytes").at("bf16"), 2 * 9'241'705'984LL);
  EXPECT_EQ(j.at("kv_cache_bytes_per_token").at("bf16"), 344'064);
  // Default context 8,192 (max_position_embeddings): 21 x 8,192 + 21 x 4,096 tokens x 8,192 B.
  EXPECT_EQ(j.at("context_tokens"), 8192);
  EXPECT_EQ(j.at("kv_cache_bytes_at_context").at("bf16"), 2'113'929'216);
  EXPECT_EQ(j.at("kv_cache_bytes_at_context").at("fp8"), 1'056'964'608);
  ASSERT_EQ(j.at("layers").size(), 2u);  // sliding (even layers) and full (odd layers)
  EXPECT_EQ(j.at("layers")[0].at("layers").size(), 21u);
  EXPECT_EQ(j.at("layers")[0].at("layers")[1], 2);
}

TEST(CliModel, DescribesEveryShippedConfig) {
  const std::filesystem::path models = llmcap::testing::data_dir() / "models";
  int num_configs = 0;
  for (const auto& dir : {models, models / "families"}) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (entry.path().extension() != ".json") continue;
      ++num_configs;
      // 2,048 tokens: within every shipped model's max_position_embeddings.
      const CliRun r = run_cli({"model", entry.path().string(), "--context", "2048"});
      EXPECT_EQ(r.code, kExitOk) << entry.path() << ": " << r.err;
      EXPECT_THAT(r.out, HasSubstr("active per decode token")) << entry.path();
    }
  }
  EXPECT_GE(num_configs, 30);  // 11 dense configs in data/models, 19 in data/models/families
}

TEST(CliModel, AContextBeyondTheModelsPositionsIsRefused) {
  const auto config = llmcap::testing::data_dir() / "models" / "gpt-neox-20b.json";
  for (const char* context : {"4096", "0"}) {
    const CliRun r = run_cli({"model", config.string(), "--context", context});
    EXPECT_EQ(r.code, 2) << context;
    EXPECT_THAT(r.err, HasSubstr("--context: expected a number of tokens from 1 to the model's "
                                 "max_position_embeddings (2048), got " +
                                 std::string(context)));
  }
}

TEST(CliModel, BadConfigExitsTwoAndWritesNothing) {
  TempDir dir;
  const auto bad = dir.write("bad.json", R"({"model_type": "mamba"})");
  const auto json_path = dir.path() / "out.json";
  const CliRun r = run_cli({"model", bad.string(), "--json", json_path.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr(bad.string() +
                               ": field \"model_type\": unknown model type \"mamba\"; known: "));
  EXPECT_FALSE(std::filesystem::exists(json_path));
}

TEST(CliModel, NonPositiveContextRefused) {
  const CliRun r = run_cli({"model", family("mixtral-8x7b"), "--context", "0"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("--context"));
}

}  // namespace
}  // namespace llmcap::cli
