// The GUI's scenario draft with model and workload ids (plan/scenario_files.h): opened, saved
// elsewhere and given a model from the data folder, a scenario keeps naming the data folder's
// files by id.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "gui/scenario_draft.h"
#include "plan/scenario.h"
#include "test_util.h"

namespace llmcap::gui {
namespace {

namespace fs = std::filesystem;
using llmcap::testing::data_dir;
using llmcap::testing::fresh_temp_dir;
using llmcap::testing::write_text;

TEST(ScenarioDraftIds, TheShippedScenarioOpensWithItsIdsResolved) {
  const ScenarioDraft d =
      ScenarioDraft::from_file(data_dir() / "scenarios" / "chat-llama3.1-8b.json", data_dir());
  EXPECT_EQ(d.model_path(), data_dir() / "models" / "llama-3.1-8b.json");
  const plan::Scenario s = d.scenario();
  EXPECT_TRUE(s.missing_files.empty());
  EXPECT_EQ(s.workload.path, data_dir() / "workloads" / "azure-2023-conversation.json");
}

TEST(ScenarioDraftIds, SaveAsElsewhereKeepsIdsAsTheyAre) {
  ScenarioDraft d =
      ScenarioDraft::from_file(data_dir() / "scenarios" / "chat-llama3.1-8b.json", data_dir());
  const fs::path dir = fresh_temp_dir();
  d.rebase(dir / "sub" / "moved.json");
  EXPECT_EQ(d.json()["model"], "llama-3.1-8b");
  EXPECT_EQ(d.json()["workload"]["lengths_path"], "azure-2023-conversation");
  fs::create_directories(dir / "sub");
  write_text(dir / "sub" / "moved.json", d.text());
  const plan::Scenario moved = plan::load_scenario(dir / "sub" / "moved.json", data_dir());
  EXPECT_TRUE(moved.missing_files.empty());
  EXPECT_EQ(moved.model_config, data_dir() / "models" / "llama-3.1-8b.json");
}

TEST(ScenarioDraftIds, AModelChosenFromTheDataFolderIsStoredById) {
  ScenarioDraft d =
      ScenarioDraft::from_file(data_dir() / "scenarios" / "chat-llama3.1-8b.json", data_dir());
  d.set_model_path(data_dir() / "models" / "qwen2.5-7b.json");
  EXPECT_EQ(d.json()["model"], "qwen2.5-7b");
  d.set_model_path(data_dir() / "models" / "families" / "qwen3-8b.json");
  EXPECT_EQ(d.json()["model"], "qwen3-8b");
  EXPECT_EQ(d.model_path(), data_dir() / "models" / "families" / "qwen3-8b.json");
}

TEST(ScenarioDraftIds, AModelElsewhereIsStoredByPath) {
  const fs::path dir = fresh_temp_dir();
  const fs::path scenario = dir / "s.json";
  fs::copy_file(data_dir() / "scenarios" / "chat-llama3.1-8b.json", scenario);
  ScenarioDraft d = ScenarioDraft::from_file(scenario, data_dir());
  fs::create_directories(dir / "mine");
  fs::copy_file(data_dir() / "models" / "llama-3.1-8b.json", dir / "mine" / "llama-3.1-8b.json");
  d.set_model_path(dir / "mine" / "llama-3.1-8b.json");
  EXPECT_EQ(d.json()["model"], "mine/llama-3.1-8b.json");
}

}  // namespace
}  // namespace llmcap::gui
