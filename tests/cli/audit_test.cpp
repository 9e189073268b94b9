#include "cli/audit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using llmcap::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

struct AuditRun {
  int code;
  std::string out;
  std::string err;
};

AuditRun run_cli(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = run(args, out, err);
  return {code, out.str(), err.str()};
}

std::string seed_claims() {
  return (llmcap::testing::data_dir() / "claims" / "seed-article.json").string();
}

TEST(CliAudit, AuditsTheSeedArticleAndWritesJson) {
  TempDir dir;
  const auto json_path = dir.path() / "audit.json";
  const AuditRun r = run_cli({"audit", seed_claims(), "--json", json_path.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  // The table row of each claim: its id, then its verdict.
  const auto row = [&](const std::string& id) {
    const auto at = r.out.find("\n" + id + " ");
    return at == std::string::npos ? std::string()
                                   : r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
  };
  EXPECT_THAT(row("llama-3-70b-xeon-8490h-24c-42ms"), HasSubstr(" impossible "));
  EXPECT_THAT(row("mistral-7b-epyc-9754-24c-38ms"), HasSubstr(" optimistic "));
  EXPECT_THAT(row("gpt-neox-20b-xeon-8490h-24c-45ms"), HasSubstr(" optimistic "));
  EXPECT_THAT(row("ddr5-5600-89.6gbps"), HasSubstr(" plausible "));
  EXPECT_THAT(row("llama-3-70b-xeon-8490h-24c-42ms"), HasSubstr("42 ms"));
  EXPECT_THAT(row("llama-3-70b-xeon-8490h-24c-42ms"), HasSubstr("127.3 ms"));
  EXPECT_THAT(r.out, HasSubstr("optimistic: predicted / claimed > 1.25"));
  EXPECT_THAT(r.out, HasSubstr("89.6 GB/s"));

  std::ifstream f(json_path);
  const auto doc = nlohmann::json::parse(f);
  EXPECT_DOUBLE_EQ(doc.at("tolerance").get<double>(), 1.25);
  const auto& claims = doc.at("claims");
  ASSERT_EQ(claims.size(), 4u);
  const std::vector<std::string> verdicts = {"impossible", "optimistic", "optimistic", "plausible"};
  for (std::size_t k = 0; k < claims.size(); ++k) {
    const auto& c = claims[k];
    for (const char* key :
         {"id", "verdict", "claimed_s", "lower_bound_s", "predicted_s", "explanation"}) {
      EXPECT_TRUE(c.contains(key)) << k << " " << key;
    }
    EXPECT_EQ(c.at("verdict"), verdicts[k]) << c.at("id");
    EXPECT_FALSE(c.at("explanation").get<std::string>().empty());
  }
  const auto& llama = claims[0];
  EXPECT_EQ(llama.at("id"), "llama-3-70b-xeon-8490h-24c-42ms");
  EXPECT_DOUBLE_EQ(llama.at("claimed_s").get<double>(), 0.042);
  EXPECT_NEAR(llama.at("lower_bound_s").get<double>(), 39'118'323'712 / 307.2e9, 1e-12);
  EXPECT_GT(llama.at("predicted_s").get<double>(), llama.at("lower_bound_s").get<double>());
  EXPECT_EQ(llama.at("weight_format"), "int4");
  EXPECT_TRUE(llama.at("weight_format_assumed").get<bool>());
  EXPECT_EQ(llama.at("kind"), "tpot");
  // The bandwidth claim: no times; its own keys.
  const auto& ddr = claims[3];
  EXPECT_EQ(ddr.at("kind"), "memory_bandwidth");
  EXPECT_TRUE(ddr.at("claimed_s").is_null());
  EXPECT_TRUE(ddr.at("lower_bound_s").is_null());
  EXPECT_TRUE(ddr.at("predicted_s").is_null());
  EXPECT_DOUBLE_EQ(ddr.at("claimed_bytes_per_s").get<double>(), 89.6e9);
  EXPECT_NEAR(ddr.at("implied_channels").get<double>(), 2.0, 1e-12);
  EXPECT_EQ(ddr.at("memory_transfer_rate_mts").get<int64_t>(), 5600);
}

TEST(CliAudit, AnEngineProfilePricesThePredictionAndIsNamed) {
  TempDir dir;
  const auto plain_path = dir.path() / "plain.json";
  const auto engine_path = dir.path() / "engine.json";
  ASSERT_EQ(run_cli({"audit", seed_claims(), "--json", plain_path.string()}).code, kExitOk);
  const AuditRun r = run_cli({"audit", seed_claims(), "--engine", "llama.cpp", "--engine", "vllm",
                              "--json", engine_path.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::ifstream pf(plain_path), ef(engine_path);
  const auto plain = nlohmann::json::parse(pf).at("claims");
  const auto with = nlohmann::json::parse(ef).at("claims");
  // The 24-core Xeon 8490H claim: llama.cpp's profile and the CPU model, named in the row and
  // the explanation; the bound does not depend on the engine.
  EXPECT_THAT(with[0].at("predictor").get<std::string>(), HasSubstr("engine llama.cpp"));
  EXPECT_THAT(with[0].at("explanation").get<std::string>(),
              HasSubstr("read bandwidth min(24 cores x"));
  EXPECT_NE(with[0].at("predicted_s"), plain[0].at("predicted_s"));
  EXPECT_EQ(with[0].at("lower_bound_s"), plain[0].at("lower_bound_s"));
}

TEST(CliAudit, AnUnknownEngineOrTwoOfOneKindExitTwo) {
  const AuditRun unknown = run_cli({"audit", seed_claims(), "--engine", "tgi"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_THAT(unknown.err,
              HasSubstr(R"(--engine: unknown engine "tgi"; known: llama.cpp, llama.cpp-cuda)"));
  const AuditRun two = run_cli({"audit", seed_claims(), "--engine", "vllm", "--engine", "sglang"});
  EXPECT_EQ(two.code, 2);
  EXPECT_THAT(two.err, HasSubstr(R"(--engine: "vllm" and "sglang" are both gpu engines; give )"
                                 R"(at most one per device kind)"));
}

TEST(CliAudit, UnknownHardwareExitsTwoNamingFileClaimFieldAndKnownIds) {
  TempDir dir;
  const std::string text =
      llmcap::testing::replace_once(llmcap::testing::read_text(seed_claims()),
                                    "\"hardware\": \"epyc-9754\"", "\"hardware\": \"epyc-9999\"");
  const auto claims = dir.write("claims.json", text);
  const auto json_path = dir.path() / "audit.json";
  const AuditRun r = run_cli({"audit", claims.string(), "--json", json_path.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, StartsWith("llmcap: error: " + claims.string() +
                                ": claim \"mistral-7b-epyc-9754-24c-38ms\": field \"hardware\": "
                                "unknown hardware or instance \"epyc-9999\"; known CPUs: "));
  EXPECT_THAT(r.err, HasSubstr("epyc-9754"));
  EXPECT_THAT(r.err, HasSubstr("instances: aws-g5.xlarge"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1);
  EXPECT_TRUE(r.out.empty());
  EXPECT_FALSE(std::filesystem::exists(json_path));
}

TEST(CliAudit, UnknownModelAndMissingFileExitTwo) {
  TempDir dir;
  const std::string text =
      llmcap::testing::replace_once(llmcap::testing::read_text(seed_claims()),
                                    "\"model\": \"gpt-neox-20b\"", "\"model\": \"gpt-neox-21b\"");
  const AuditRun bad = run_cli({"audit", dir.write("claims.json", text).string()});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_THAT(bad.err, HasSubstr(": claim \"gpt-neox-20b-xeon-8490h-24c-45ms\": field \"model\": "
                                 "unknown model \"gpt-neox-21b\"; known: "));
  // The known ids include the families folder's (data/models/families).
  EXPECT_THAT(bad.err, HasSubstr("gpt-neox-20b, "));
  EXPECT_THAT(bad.err, HasSubstr("qwen3-30b-a3b, "));
  const AuditRun missing = run_cli({"audit", (dir.path() / "none.json").string()});
  EXPECT_EQ(missing.code, kExitBadInput);
  EXPECT_THAT(missing.err, HasSubstr("none.json: cannot open file"));
}

TEST(CliAudit, ToleranceBelowOneIsRejected) {
  const AuditRun r = run_cli({"audit", seed_claims(), "--tolerance", "0.5"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("--tolerance"));
}

TEST(CliAudit, ALooserToleranceTurnsOptimisticIntoPlausible) {
  TempDir dir;
  const auto json_path = dir.path() / "audit.json";
  const AuditRun r =
      run_cli({"audit", seed_claims(), "--tolerance", "100", "--json", json_path.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::ifstream f(json_path);
  const auto doc = nlohmann::json::parse(f);
  EXPECT_EQ(doc.at("claims")[0].at("verdict"), "impossible");  // physics does not bend
  EXPECT_EQ(doc.at("claims")[1].at("verdict"), "plausible");
  EXPECT_EQ(doc.at("claims")[2].at("verdict"), "plausible");
}

}  // namespace
}  // namespace llmcap::cli
