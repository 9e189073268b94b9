// A scenario's file fields by id and by path (plan/scenario_files.h, docs/scenarios.md "Files:
// ids and paths").
#include "plan/scenario_files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "plan/scenario.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

namespace fs = std::filesystem;
using llmcap::testing::data_dir;
using llmcap::testing::error_message;
using llmcap::testing::TempDir;
using ::testing::HasSubstr;

/// A scenario whose "model" is `model` and whose gamma workload draws lengths from `lengths`.
std::string scenario_naming(const std::string& model, const std::string& lengths) {
  return R"({"name": "ids", "model": ")" + model +
         R"(", "workload": {"kind": "poisson", "lengths_path": ")" + lengths +
         R"(", "rate_per_s": 1, "num_requests": 10},
            "slo": {"ttft_p99_s": 2, "tpot_p99_s": 0.05}})";
}

TEST(ScenarioFiles, ModelAndLengthsByIdAreTheDataFoldersFiles) {
  TempDir dir;
  const Scenario s = load_scenario(
      dir.write("s.json", scenario_naming("llama-3.1-8b", "azure-2023-conversation")), data_dir());
  EXPECT_EQ(s.model_config, data_dir() / "models" / "llama-3.1-8b.json");
  EXPECT_EQ(s.workload.path, data_dir() / "workloads" / "azure-2023-conversation.json");
  EXPECT_TRUE(s.missing_files.empty());
  EXPECT_NO_THROW(check_scenario_files(s));
}

TEST(ScenarioFiles, ModelIdOfAFamilyDescription) {
  TempDir dir;
  const Scenario s = load_scenario(
      dir.write("s.json", scenario_naming("qwen3-30b-a3b", "sharegpt-8k")), data_dir());
  EXPECT_EQ(s.model_config, data_dir() / "models" / "families" / "qwen3-30b-a3b.json");
  EXPECT_EQ(s.workload.path, data_dir() / "workloads" / "sharegpt-8k.json");
}

TEST(ScenarioFiles, IdWithItsJsonSuffixNamesTheSameFile) {
  TempDir dir;
  const Scenario s = load_scenario(
      dir.write("s.json", scenario_naming("llama-3.1-8b.json", "sharegpt-8k.json")), data_dir());
  EXPECT_EQ(s.model_config, data_dir() / "models" / "llama-3.1-8b.json");
  EXPECT_EQ(s.workload.path, data_dir() / "workloads" / "sharegpt-8k.json");
}

TEST(ScenarioFiles, AFileBesideTheScenarioComesBeforeTheId) {
  TempDir dir;
  const fs::path own = dir.write("llama-3.1-8b", "{}");
  const Scenario s = load_scenario(
      dir.write("s.json", scenario_naming("llama-3.1-8b", "sharegpt-8k")), data_dir());
  EXPECT_EQ(s.model_config, own);
}

TEST(ScenarioFiles, RelativePathsResolveAgainstTheScenariosFolder) {
  TempDir dir;
  fs::create_directories(dir.path() / "scenarios" / "models");
  dir.write("scenarios/models/m.json", "{}");
  dir.write("l.csv", "1,1\n");
  const Scenario s = load_scenario(
      dir.write("scenarios/s.json", scenario_naming("models/m.json", "../l.csv")), data_dir());
  EXPECT_EQ(s.model_config, dir.path() / "scenarios" / "models" / "m.json");
  EXPECT_EQ(s.workload.path, dir.path() / "scenarios" / ".." / "l.csv");
  EXPECT_TRUE(s.missing_files.empty());
}

TEST(ScenarioFiles, APathWithAFolderIsNeverLookedUpAsAnId) {
  TempDir dir;
  const ScenarioFileLookup found =
      find_scenario_file("models/llama-3.1-8b", ScenarioFileKind::kModel, dir.path(), data_dir());
  EXPECT_FALSE(found.found);
  ASSERT_EQ(found.looked.size(), 1u);
  EXPECT_EQ(found.path, dir.path() / "models" / "llama-3.1-8b");
}

TEST(ScenarioFiles, TraceIdIsAFileNameInTheTracesFolder) {
  TempDir data;
  fs::create_directories(data.path() / "traces");
  data.write("traces/conv.csv", "x");
  TempDir dir;
  const ScenarioFileLookup found =
      find_scenario_file("conv.csv", ScenarioFileKind::kTrace, dir.path(), data.path());
  EXPECT_TRUE(found.found);
  EXPECT_EQ(found.path, data.path() / "traces" / "conv.csv");
  EXPECT_EQ(found.looked, (std::vector<fs::path>{dir.path() / "conv.csv", found.path}));
}

TEST(ScenarioFiles, AFileNotFoundIsRefusedWhenPlanningWithEveryPlaceLooked) {
  TempDir dir;
  const fs::path file = dir.write("s.json", scenario_naming("llama-9b", "azure-2023-conversation"));
  const Scenario s = load_scenario(file, data_dir());  // read: the GUI and sweeps edit it
  ASSERT_EQ(s.missing_files.size(), 1u);
  const fs::path models = data_dir() / "models";
  EXPECT_EQ(error_message<InputError>([&] { check_scenario_files(s); }),
            file.string() + ": field \"model\": no file \"llama-9b\" (looked for " +
                (dir.path() / "llama-9b").string() + ", " + (models / "llama-9b.json").string() +
                ", " + (models / "families" / "llama-9b.json").string() +
                "); expected a model id (<id>.json in <data-dir>/models/ or models/families/) "
                "or the path of a model file (relative: to the scenario's folder)");
}

TEST(ScenarioFiles, AMissingClassLengthsFileNamesTheClassField) {
  TempDir dir;
  const fs::path file = dir.write("s.json", R"({"name": "c", "model": "llama-3.1-8b",
      "workload": {"kind": "classes", "classes": [
        {"name": "a", "kind": "poisson", "lengths_path": "sharegpt-8k", "rate_per_s": 1,
         "num_requests": 5, "slo": {"ttft_p99_s": 1, "tpot_p99_s": 0.1}},
        {"name": "b", "kind": "poisson", "lengths_path": "no-such-lengths", "rate_per_s": 1,
         "num_requests": 5, "slo": {"ttft_p99_s": 1, "tpot_p99_s": 0.1}}]}})");
  const Scenario s = load_scenario(file, data_dir());
  const std::string message = error_message<InputError>([&] { check_scenario_files(s); });
  EXPECT_THAT(message,
              HasSubstr(file.string() + ": field \"workload.classes[1].lengths_path\": no file "
                                        "\"no-such-lengths\" (looked for "));
  EXPECT_THAT(message, HasSubstr((data_dir() / "workloads" / "no-such-lengths.json").string()));
  EXPECT_THAT(message,
              HasSubstr("expected a length model id (<id>.json in <data-dir>/workloads/)"));
}

TEST(ScenarioFiles, WithoutADataFolderTheMessageSaysIdsWereNotLookedUp) {
  TempDir dir;
  const fs::path file = dir.write("s.json", scenario_naming("llama-3.1-8b", "sharegpt-8k"));
  const Scenario s = load_scenario(file);
  EXPECT_EQ(s.model_config, dir.path() / "llama-3.1-8b");
  EXPECT_THAT(error_message<InputError>([&] { check_scenario_files(s); }),
              HasSubstr("(looked for " + (dir.path() / "llama-3.1-8b").string() +
                        "; no data folder was given to look ids up in)"));
}

TEST(ScenarioFiles, AnEmptyValueIsRefusedWhenRead) {
  TempDir dir;
  const fs::path file = dir.write("s.json", scenario_naming("", "sharegpt-8k"));
  EXPECT_EQ(error_message<InputError>([&] { load_scenario(file, data_dir()); }),
            file.string() +
                ": field \"model\": expected a model id (<id>.json in <data-dir>/models/ or "
                "models/families/) or the path of a model file (relative: to the scenario's "
                "folder), got \"\"");
}

TEST(ScenarioFiles, AShippedScenarioCopiedElsewhereFindsItsFiles) {
  TempDir dir;
  const fs::path copy = dir.path() / "chat.json";
  fs::copy_file(data_dir() / "scenarios" / "chat-llama3.1-8b.json", copy);
  const Scenario s = load_scenario(copy, data_dir());
  EXPECT_TRUE(s.missing_files.empty());
  EXPECT_EQ(s.model_config, data_dir() / "models" / "llama-3.1-8b.json");
  EXPECT_EQ(s.workload.path, data_dir() / "workloads" / "azure-2023-conversation.json");
}

}  // namespace
}  // namespace llmcap::plan
