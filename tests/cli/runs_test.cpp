// `llmcap runs list|show|compare` and the storing of plan and calibration runs
// (cli/runs_cmd.h, docs/results-store.md).
//
// This file also keeps the whole cli_tests executable away from the user's results database:
// `llmcap plan` stores every run in $LLMCAP_DB (else ~/.local/share/llmcap/runs.sqlite), so the
// global environment below points LLMCAP_DB at a file in a per-process temporary folder before
// any test runs, and removes the folder after. Tests that look at stored runs still pass their own
// `--db`.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "app/run_store.h"
#include "cli/cli.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using app::store_calibration_run;
using app::summarize_plan_document;

using llmcap::testing::TempDir;
using nlohmann::json;

/// Points LLMCAP_DB at a temporary file for the whole cli_tests process.
class ResultsDbEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("llmcap-cli-tests-db-" + std::to_string(getpid()));
    std::filesystem::create_directories(dir_);
    setenv("LLMCAP_DB", (dir_ / "runs.sqlite").string().c_str(), 1);
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }

 private:
  std::filesystem::path dir_;
};

[[maybe_unused]] ::testing::Environment* const kResultsDbEnvironment =
    ::testing::AddGlobalTestEnvironment(new ResultsDbEnvironment);

struct Result {
  int code;
  std::string out;
  std::string err;
};

Result run_cli(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  const int code = run(args, out, err);
  return {code, out.str(), err.str()};
}

std::string small_scenario() { return llmcap::testing::test_data("small.json").string(); }

/// Plans small.json (no analyses, quiet) storing into `db`; returns the result.
Result plan_into(const std::filesystem::path& db, const std::string& scenario = small_scenario()) {
  return run_cli(
      {"plan", scenario, "--quiet", "--no-analysis", "--threads", "2", "--db", db.string()});
}

TEST(RunsCommand, LlmcapDbPointsAwayFromHome) {
  const char* db = std::getenv("LLMCAP_DB");
  ASSERT_NE(db, nullptr);
  EXPECT_EQ(std::string(db).rfind(std::filesystem::temp_directory_path().string(), 0), 0u) << db;
}

TEST(RunsCommand, PlanStoresItsRun) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  const Result r = plan_into(db);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.err.find("Stored as run 1 in " + db.string() + "\n"), std::string::npos) << r.err;

  const store::ResultsStore store = store::ResultsStore::open(db);
  const store::RunRecord run = store.get_run(1);
  EXPECT_EQ(run.kind, "plan");
  EXPECT_EQ(run.name, "cli-small");
  EXPECT_EQ(run.input_json, llmcap::testing::read_text(small_scenario()));
  EXPECT_NE(run.command_line.find("llmcap plan " + small_scenario()), std::string::npos);
  const json doc = json::parse(run.document_json);
  EXPECT_EQ(doc["format"], "llmcap-run");
  ASSERT_TRUE(doc["results"].is_array());
  EXPECT_EQ(doc["results"].size(), 2u);
  EXPECT_EQ(run.summary, summarize_plan_document(doc));
}

TEST(RunsCommand, NoStoreLeavesTheDatabaseAlone) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  const Result r = run_cli(
      {"plan", small_scenario(), "--quiet", "--no-analysis", "--no-store", "--db", db.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.err.find("Stored"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(db));
}

TEST(RunsCommand, PlanStoresInLlmcapDbByDefault) {
  const std::filesystem::path db = std::getenv("LLMCAP_DB");
  const Result r = run_cli({"plan", small_scenario(), "--quiet", "--no-analysis"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.err.find(" in " + db.string() + "\n"), std::string::npos) << r.err;
  EXPECT_EQ(store::ResultsStore::open(db).get_run(0).name, "cli-small");
}

TEST(RunsCommand, UnreadableDatabaseDoesNotFailThePlan) {
  TempDir dir;
  const auto db = dir.write("runs.sqlite", std::string(2048, 'x'));
  const Result r = plan_into(db);
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_NE(r.out.find("aws-g6e.xlarge"), std::string::npos);
  EXPECT_NE(r.err.find("llmcap: warning: run not stored: " + db.string() +
                       ": not a readable SQLite results database (file is not a database)"),
            std::string::npos)
      << r.err;
}

TEST(RunsCommand, ListShowsRunsNewestFirst) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  ASSERT_EQ(plan_into(db).code, kExitOk);
  ASSERT_EQ(plan_into(db).code, kExitOk);
  const Result r = run_cli({"runs", "list", "--db", db.string(), "--width", "200"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::string summary = store::ResultsStore::open(db).get_run(1).summary;
  const auto first = r.out.find("\n 2  plan  ");
  const auto second = r.out.find("\n 1  plan  ");
  ASSERT_NE(first, std::string::npos) << r.out;
  ASSERT_NE(second, std::string::npos) << r.out;
  EXPECT_LT(first, second);
  EXPECT_NE(r.out.find("cli-small  " + summary), std::string::npos) << r.out;
  // At 80 columns the summary is cut with "…" to fit.
  const Result narrow = run_cli({"runs", "list", "--db", db.string(), "--width", "80"});
  ASSERT_EQ(narrow.code, kExitOk) << narrow.err;
  EXPECT_NE(narrow.out.find("cli-small  " + summary.substr(0, 10)), std::string::npos)
      << narrow.out;
  EXPECT_NE(narrow.out.find("\xE2\x80\xA6\n"), std::string::npos) << narrow.out;

  const Result limited = run_cli({"runs", "list", "--limit", "1", "--db", db.string()});
  EXPECT_NE(limited.out.find("\n 2  plan  "), std::string::npos) << limited.out;
  EXPECT_EQ(limited.out.find("\n 1  plan  "), std::string::npos) << limited.out;
  EXPECT_NE(limited.out.find("(the newest 1 shown; --limit 0 lists all)"), std::string::npos);

  const Result none = run_cli({"runs", "list", "--kind", "calibration", "--db", db.string()});
  EXPECT_EQ(none.out, "No calibration runs in " + db.string() + "\n");
}

TEST(RunsCommand, ShowPrintsTheResultsOfARun) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  ASSERT_EQ(plan_into(db).code, kExitOk);
  const Result r = run_cli({"runs", "show", "latest", "--db", db.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_EQ(r.out.rfind("Run 1 (plan): cli-small\n", 0), 0u) << r.out;
  const json doc = json::parse(store::ResultsStore::open(db).get_run(1).document_json);
  for (const json& row : doc["results"]) {
    const std::string type = row["instance_type"];
    const auto at = r.out.find("\n" + type + " ");
    ASSERT_NE(at, std::string::npos) << r.out;
    const std::string line = r.out.substr(at + 1, r.out.find('\n', at + 1) - at - 1);
    if (row["feasible"].get<bool>()) {
      std::ostringstream usd;
      usd << std::fixed << std::setprecision(2) << row["usd_per_hour"].get<double>();
      EXPECT_NE(line.find("  yes  "), std::string::npos) << line;
      EXPECT_NE(line.find(" " + usd.str() + " "), std::string::npos) << line;
    } else {
      EXPECT_NE(line.find("  no  "), std::string::npos) << line;
    }
  }
  // By id, and as JSON with the whole document.
  EXPECT_EQ(run_cli({"runs", "show", "1", "--db", db.string()}).out, r.out);
  const Result j = run_cli({"runs", "show", "1", "--json", "--db", db.string()});
  ASSERT_EQ(j.code, kExitOk) << j.err;
  const json shown = json::parse(j.out);
  EXPECT_EQ(shown["id"], 1);
  EXPECT_EQ(shown["kind"], "plan");
  EXPECT_EQ(shown["document"], doc);
  EXPECT_EQ(shown["input"]["name"], "cli-small");
}

TEST(RunsCommand, ShowRefusesAnUnknownRun) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  ASSERT_EQ(plan_into(db).code, kExitOk);
  const Result r = run_cli({"runs", "show", "99", "--db", db.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: " + db.string() +
                       ": no run 99 (it holds 1 runs, ids 1 to 1; see llmcap runs list)\n");
  const Result bad = run_cli({"runs", "show", "first", "--db", db.string()});
  EXPECT_EQ(bad.code, kExitBadInput);
  EXPECT_EQ(bad.err,
            "llmcap: error: run \"first\": expected a run id (a positive integer, see llmcap runs "
            "list) or \"latest\"\n");
}

TEST(RunsCommand, RefusesABadDatabaseFile) {
  TempDir dir;
  const auto db = dir.write("notes.txt", "these are not runs\n" + std::string(1000, '-'));
  const Result r = run_cli({"runs", "list", "--db", db.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: " + db.string() +
                       ": not a readable SQLite results database (file is not a database)\n");
}

TEST(RunsCommand, CompareShowsDifferencesPerInstanceType) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  ASSERT_EQ(plan_into(db).code, kExitOk);
  // The same scenario at twice the load: fleets grow.
  const std::string doubled = llmcap::testing::replace_once(
      llmcap::testing::read_text(small_scenario()), R"("path": "conv_model300.csv"})",
      R"("path": "conv_model300.csv", "rate_multiplier": 2})");
  // Written to the temporary folder, so its relative paths are made absolute.
  const std::filesystem::path data = llmcap::testing::test_data("");
  std::string moved = llmcap::testing::replace_once(
      doubled, R"("../../../data/models/llama-3.1-8b.json")",
      json((data / "../../../data/models/llama-3.1-8b.json").lexically_normal().string()).dump());
  moved = llmcap::testing::replace_once(moved, R"("conv_model300.csv")",
                                        json((data / "conv_model300.csv").string()).dump());
  const auto scenario = dir.write("doubled.json", moved);
  const Result planned = plan_into(db, scenario.string());
  ASSERT_EQ(planned.code, kExitOk) << planned.err;

  const Result r = run_cli({"runs", "compare", "1", "latest", "--all", "--db", db.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("Inputs differ:\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\n  workload.rate_multiplier: (absent) -> 2\n"), std::string::npos)
      << r.out;
  const store::ResultsStore store = store::ResultsStore::open(db);
  const json a = json::parse(store.get_run(1).document_json);
  const json b = json::parse(store.get_run(2).document_json);
  const json& gpu_a = a["results"][0];
  const json& gpu_b = b["results"][0];
  ASSERT_EQ(gpu_a["instance_type"], "aws-g6e.xlarge");
  ASSERT_TRUE(gpu_a["feasible"].get<bool>() && gpu_b["feasible"].get<bool>());
  const int64_t na = gpu_a["num_instances"], nb = gpu_b["num_instances"];
  std::string delta = nb - na == 0 ? "0" : (nb > na ? "+" : "") + std::to_string(nb - na);
  EXPECT_TRUE(std::regex_search(r.out, std::regex("\naws-g6e\\.xlarge +feasible +yes +yes\n")))
      << r.out;
  const auto instances = r.out.find("instances");
  ASSERT_NE(instances, std::string::npos);
  const std::string line = r.out.substr(instances, r.out.find('\n', instances) - instances);
  EXPECT_NE(line.find(" " + std::to_string(na) + " "), std::string::npos) << line;
  EXPECT_NE(line.find(" " + std::to_string(nb) + " "), std::string::npos) << line;
  EXPECT_NE(line.find(delta), std::string::npos) << line;
  EXPECT_NE(r.out.find("aws-m7i.8xlarge"), std::string::npos);
  EXPECT_NE(r.out.find("USD/hour"), std::string::npos);
  EXPECT_NE(r.out.find("TTFT p99 ms"), std::string::npos);
  EXPECT_NE(r.out.find("TPOT p99 ms"), std::string::npos);

  // Without --all: the inputs that differ, the answer's change, and only the types whose
  // count, cost or feasibility changed, as before -> after.
  const Result brief = run_cli({"runs", "compare", "1", "latest", "--db", db.string()});
  ASSERT_EQ(brief.code, kExitOk) << brief.err;
  EXPECT_NE(brief.out.find("\n  workload.rate_multiplier: (absent) -> 2\n"), std::string::npos)
      << brief.out;
  EXPECT_NE(brief.out.find("\nAnswer: "), std::string::npos) << brief.out;
  EXPECT_EQ(brief.out.find("TTFT p99 ms"), std::string::npos) << brief.out;
  EXPECT_LT(std::count(brief.out.begin(), brief.out.end(), '\n'),
            std::count(r.out.begin(), r.out.end(), '\n'));
  if (na != nb) {
    EXPECT_NE(brief.out.find("\n  aws-g6e.xlarge: instances " + std::to_string(na) + " -> " +
                             std::to_string(nb) + ", USD/hour "),
              std::string::npos)
        << brief.out;
  }
  for (const json& row : b["results"]) {  // a type whose figures did not change is not listed
    const std::string t = row["instance_type"];
    const json* before = nullptr;
    for (const json& old : a["results"]) {
      if (old["instance_type"] == t) before = &old;
    }
    ASSERT_NE(before, nullptr);
    const bool same =
        (*before)["feasible"] == row["feasible"] &&
        (!row["feasible"].get<bool>() || ((*before)["num_instances"] == row["num_instances"] &&
                                          (*before)["usd_per_hour"] == row["usd_per_hour"]));
    EXPECT_EQ(brief.out.find("\n  " + t + ": ") == std::string::npos, same) << t << "\n"
                                                                            << brief.out;
  }
}

TEST(RunsCompare, SaysSoWhenNoFigureChanged) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  ASSERT_EQ(plan_into(db).code, kExitOk);
  ASSERT_EQ(plan_into(db).code, kExitOk);
  const Result r = run_cli({"runs", "compare", "1", "2", "--db", db.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_NE(r.out.find("Inputs: identical\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nAnswer: unchanged, "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("\nInstance types: no fleet size, cost or feasibility changed ("),
            std::string::npos)
      << r.out;
}

TEST(RunsCommand, CalibrationRunsAreStoredAndNotCompared) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  ASSERT_EQ(plan_into(db).code, kExitOk);
  const std::string profile = R"({"machine": {"cpu_model": "Test CPU", "num_cores": 8},)"
                              R"( "fit": {"median_rel_error": 0.031}})";
  std::ostringstream err;
  store_calibration_run(profile, "Test CPU", db.string(), false, "llmcap calibrate --quick", err);
  EXPECT_EQ(err.str(), "Stored as run 2 in " + db.string() + "\n");
  const store::RunRecord run = store::ResultsStore::open(db).get_run(2);
  EXPECT_EQ(run.kind, "calibration");
  EXPECT_EQ(run.name, "Test CPU");
  EXPECT_EQ(run.document_json, profile);
  EXPECT_EQ(run.summary, "Test CPU, 8 logical CPUs, fit median error 3.1%");

  std::ostringstream none;
  store_calibration_run(profile, "Test CPU", db.string(), true, "", none);
  EXPECT_EQ(none.str(), "");
  EXPECT_EQ(store::ResultsStore::open(db).list_runs().size(), 2u);

  const Result r = run_cli({"runs", "compare", "1", "2", "--db", db.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err,
            "llmcap: error: run 2 (calibration) has no plan results; compare takes runs of kind "
            "plan or sweep_point\n");
  const Result shown = run_cli({"runs", "show", "2", "--db", db.string()});
  EXPECT_NE(shown.out.find("document: " + std::to_string(profile.size()) + " bytes"),
            std::string::npos)
      << shown.out;
}

TEST(RunsCommand, SummaryNamesTheCheapestFleets) {
  const json doc = {{"results",
                     {{{"instance_type", "c1"},
                       {"device_kind", "cpu"},
                       {"feasible", true},
                       {"num_instances", 4},
                       {"usd_per_hour", 6.5}},
                      {{"instance_type", "c2"},
                       {"device_kind", "cpu"},
                       {"feasible", true},
                       {"num_instances", 3},
                       {"usd_per_hour", 5.25}},
                      {{"instance_type", "g1"}, {"device_kind", "gpu"}, {"feasible", false}}}}};
  EXPECT_EQ(summarize_plan_document(doc),
            "cheapest CPU: 3 x c2, 5.25 USD/h; cheapest GPU: none feasible");
  const json infeasible = {
      {"results", {{{"instance_type", "g1"}, {"device_kind", "gpu"}, {"feasible", false}}}}};
  EXPECT_EQ(summarize_plan_document(infeasible), "no feasible fleet among 1 instance type");
}

}  // namespace
}  // namespace llmcap::cli
