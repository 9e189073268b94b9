// `llmcap sweep` (cli/sweep_cmd.h, docs/sweep.md): sweep files, points, parallel runs,
// resume after an interruption. The mpirun test is tests/store/sweep_mpi_test.cmake.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "app/plan_run.h"
#include "app/sweep_spec.h"
#include "cli/cli.h"
#include "model/hardware.h"
#include "plan/scenario.h"
#include "store/results_store.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using app::load_sweep;
using app::make_plan_run;
using app::PlanRun;
using app::PlanRunOptions;
using app::SweepPoint;
using app::SweepSpec;

using llmcap::testing::error_message;
using llmcap::testing::TempDir;
using nlohmann::json;

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

std::filesystem::path data_folder() { return llmcap::testing::test_data(""); }

/// A sweep file in `dir` over tests/cli/data/small.json (by absolute path) with `grid`.
std::filesystem::path write_sweep(const TempDir& dir, const std::string& name,
                                  const std::string& grid, const std::string& extra = "") {
  const std::string scenario = json((data_folder() / "small.json").string()).dump();
  return dir.write(name + ".json", R"({"name": ")" + name + R"(", "scenario": )" + scenario +
                                       extra + R"(, "grid": )" + grid + "}");
}

/// point_key -> run document, for the sweep's points in `db`.
std::map<std::string, std::string> stored_documents(const std::filesystem::path& db,
                                                    const std::string& sweep_id) {
  const store::ResultsStore store = store::ResultsStore::open(db);
  std::map<std::string, std::string> docs;
  for (const auto& [key, id] : store.sweep_points(sweep_id)) {
    docs[key] = store.get_run(id).document_json;
  }
  return docs;
}

TEST(SweepFile, AGridOfModelIdsReadsTheDataFoldersModels) {
  TempDir dir;
  const auto file = write_sweep(dir, "ids", R"({"model": ["llama-3.1-8b", "qwen2.5-0.5b"]})");
  const std::filesystem::path data = LLMCAP_DATA_DIR;
  const SweepSpec spec = load_sweep(file, data);
  ASSERT_EQ(spec.points.size(), 2u);
  const std::string qwen = (data / "models" / "qwen2.5-0.5b.json").string();
  EXPECT_TRUE(std::any_of(spec.input_files.begin(), spec.input_files.end(),
                          [&](const app::NamedPath& p) { return p.path == qwen; }))
      << "the second point's model is one of the sweep's input files";
  // Each point plans on the model its id names.
  const Result r = run_cli({"sweep", file.string(), "--db", (dir.path() / "runs.sqlite").string(),
                            "--data-dir", data.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const std::map<std::string, std::string> docs =
      stored_documents(dir.path() / "runs.sqlite", spec.sweep_id);
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(json::parse(docs.at(R"({"model":"qwen2.5-0.5b"})"))["scenario"]["model"],
            "qwen2.5-0.5b");
}

TEST(SweepFile, PointsAreTheCartesianProductWithCanonicalKeys) {
  const SweepSpec spec = load_sweep(llmcap::testing::test_data("sweep-small.json"));
  EXPECT_EQ(spec.name, "cli-sweep-small");
  EXPECT_EQ(spec.fields, (std::vector<std::string>{"workload.rate_multiplier", "slo.tpot_p99_s"}));
  ASSERT_EQ(spec.points.size(), 6u);
  // The last field varies fastest; keys sort the field names, labels keep the file's order.
  EXPECT_EQ(spec.points[0].key, R"({"slo.tpot_p99_s":0.03,"workload.rate_multiplier":0.5})");
  EXPECT_EQ(spec.points[0].label, "workload.rate_multiplier=0.5 slo.tpot_p99_s=0.03");
  EXPECT_EQ(spec.points[1].key, R"({"slo.tpot_p99_s":0.05,"workload.rate_multiplier":0.5})");
  EXPECT_EQ(spec.points[5].key, R"({"slo.tpot_p99_s":0.05,"workload.rate_multiplier":2})");
  // Each point is the base scenario with its values set.
  const json scenario = json::parse(spec.points[5].scenario_json);
  EXPECT_EQ(scenario["workload"]["rate_multiplier"], 2);
  EXPECT_EQ(scenario["slo"]["tpot_p99_s"], 0.05);
  EXPECT_EQ(scenario["slo"]["ttft_p99_s"], 2.0);
  EXPECT_EQ(scenario["name"], "cli-small");
  EXPECT_EQ(spec.sweep_id.rfind("cli-sweep-small-", 0), 0u);
  EXPECT_EQ(spec.sweep_id.size(), std::string("cli-sweep-small-").size() + 16);
}

TEST(SweepFile, IdDependsOnTheBaseScenarioNotOnTheGrid) {
  TempDir dir;
  const SweepSpec a = load_sweep(write_sweep(dir, "s", R"({"seed": [1, 2]})"));
  const SweepSpec b = load_sweep(write_sweep(dir, "s", R"({"seed": [1, 2, 3]})"));
  EXPECT_EQ(a.sweep_id, b.sweep_id);  // a grown grid keeps its stored points
  EXPECT_EQ(a.points[1].key, b.points[1].key);
  const SweepSpec c =
      load_sweep(write_sweep(dir, "s", R"({"seed": [1, 2]})", R"(, "analysis": true)"));
  EXPECT_NE(a.sweep_id, c.sweep_id);  // other options: another sweep
  // Grid order changes labels, not keys.
  const SweepSpec d = load_sweep(write_sweep(dir, "d", R"({"seed": [1], "max_instances": [8]})"));
  const SweepSpec e = load_sweep(write_sweep(dir, "e", R"({"max_instances": [8], "seed": [1]})"));
  EXPECT_EQ(d.points[0].key, e.points[0].key);
  EXPECT_NE(d.points[0].label, e.points[0].label);
}

TEST(SweepFile, SetsFieldsAbsentFromTheBaseAndListEntries) {
  TempDir dir;
  const SweepSpec spec = load_sweep(write_sweep(
      dir, "s", R"({"weight_format": ["bf16", "int8"], "candidates.0": ["aws-m7i.8xlarge"]})"));
  ASSERT_EQ(spec.points.size(), 2u);
  const json p = json::parse(spec.points[1].scenario_json);
  EXPECT_EQ(p["weight_format"], "int8");
  EXPECT_EQ(p["candidates"], json::array({"aws-m7i.8xlarge", "aws-m7i.8xlarge"}));
  EXPECT_EQ(spec.points[1].label, "weight_format=int8 candidates.0=aws-m7i.8xlarge");
}

TEST(SweepFile, ErrorsNameFileFieldValueAndExpectation) {
  TempDir dir;
  const auto message = [&](const std::string& text) {
    const auto path = dir.write("bad.json", text);
    return error_message<plan::InputError>([&] { load_sweep(path); });
  };
  const std::string file = (dir.path() / "bad.json").string();
  const std::string scenario = json((data_folder() / "small.json").string()).dump();
  const std::string base = R"({"scenario": )" + scenario + ", ";

  const std::string parse_error = error_message<json::parse_error>([] { json::parse("{").dump(); });
  EXPECT_EQ(message("{"), file + ": malformed JSON: " + parse_error);
  EXPECT_EQ(message(R"({"grid": {"seed": [1]}})"),
            file + ": field \"scenario\": missing (required)");
  EXPECT_EQ(message(base + R"("grid": {"seed": [1]}, "jobs": 4})"),
            file +
                ": field \"jobs\": unknown field; expected one of name, scenario, grid, "
                "analysis, profile");
  EXPECT_EQ(message(base + R"("grid": {"seed": 1}})"),
            file + ": field \"grid.seed\": expected a non-empty list of values, got 1");
  EXPECT_EQ(message(base + R"("grid": {}})"),
            file + ": field \"grid\": expected at least one field with values, got {}");
  EXPECT_EQ(message(base + R"("grid": {"seed": [1, 1]}})"),
            file + ": field \"grid.seed\": value 1 appears twice; expected distinct values");
  EXPECT_EQ(message(base + R"("grid": {"seed": [1]}, "analysis": "yes"})"),
            file + ": field \"analysis\": expected true or false, got \"yes\"");
  EXPECT_EQ(message(base + R"("grid": {"slo.tpot_p99": [0.1]}})"),
            file + ": field \"grid.slo.tpot_p99\": the scenario " +
                (data_folder() / "small.json").lexically_normal().string() +
                " does not read \"slo.tpot_p99\" (unknown field, or one its workload kind "
                "ignores); expected a scenario field (docs/scenarios.md)");
  EXPECT_EQ(message(base + R"("grid": {"seed.x": [1]}})"),
            file +
                ": field \"grid.seed.x\": the scenario's \"seed\" is 1, not an object or "
                "list, so it has no field \"x\"");
  EXPECT_EQ(message(base + R"("grid": {"slo..x": [1]}})"),
            file +
                ": field \"grid.slo..x\": expected a dotted scenario field like "
                "\"slo.tpot_p99_s\", got \"slo..x\"");
  // A value the scenario reader refuses: its own message (file, field, value, expectation).
  const std::string refused = message(base + R"("grid": {"slo.tpot_p99_s": [0.05, -1]}})");
  EXPECT_EQ(refused.rfind(file + ": field \"grid.slo.tpot_p99_s\": value -1 refused by the "
                                 "scenario reader: ",
                          0),
            0u)
      << refused;
  EXPECT_NE(refused.find("slo.tpot_p99_s"), refused.rfind("slo.tpot_p99_s")) << refused;
  EXPECT_NE(refused.find("-1"), std::string::npos);
  EXPECT_EQ(message(R"({"scenario": "missing.json", "grid": {"seed": [1]}})"),
            file + ": field \"scenario\": cannot open " + (dir.path() / "missing.json").string());
  EXPECT_EQ(error_message<plan::InputError>([&] { load_sweep(dir.path() / "none.json"); }),
            (dir.path() / "none.json").string() + ": cannot open the sweep file");
}

TEST(SweepCommand, StoresEveryPointAndPrintsTheTable) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  const std::string sweep = llmcap::testing::test_data("sweep-small.json").string();
  const Result r = run_cli({"sweep", sweep, "--db", db.string(), "--jobs", "2"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const SweepSpec spec = load_sweep(sweep);
  EXPECT_NE(r.err.find("Sweep " + spec.sweep_id + ": 6 points, 0 already stored in " + db.string() +
                       ", running 6 on 2 jobs x 1 thread\n"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("6 points planned now, 0 stored before"), std::string::npos) << r.out;

  const store::ResultsStore store = store::ResultsStore::open(db);
  const auto points = store.sweep_points(spec.sweep_id);
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(store.list_runs("sweep_point").size(), 6u);
  for (const SweepPoint& p : spec.points) {
    ASSERT_TRUE(points.count(p.key)) << p.key;
    const store::RunRecord run = store.get_run(points.at(p.key));
    EXPECT_EQ(run.kind, "sweep_point");
    EXPECT_EQ(run.sweep_id, spec.sweep_id);
    EXPECT_EQ(run.input_json, p.scenario_json);
    EXPECT_EQ(run.summary.rfind(p.label + ": ", 0), 0u) << run.summary;
    // One table row per point: its run id, then its values.
    const std::string row_start = std::string("\n") += std::to_string(run.id) + "  ";
    EXPECT_NE(r.out.find(row_start), std::string::npos) << r.out;
  }

  // A point's document is what planning that scenario directly gives.
  const SweepPoint& last = spec.points.back();
  const plan::Scenario scenario = plan::load_scenario_text(last.scenario_json, spec.scenario_path);
  PlanRunOptions options;
  options.analysis = false;
  options.plan.num_threads = 1;
  const PlanRun direct =
      make_plan_run(scenario, model::Catalog::load(llmcap::testing::data_dir()), options);
  EXPECT_EQ(json::parse(store.get_run(points.at(last.key)).document_json), direct.document);
}

TEST(SweepCommand, ResultsDoNotDependOnJobs) {
  TempDir dir;
  const std::string sweep = llmcap::testing::test_data("sweep-small.json").string();
  const auto one = dir.path() / "one.sqlite";
  const auto three = dir.path() / "three.sqlite";
  ASSERT_EQ(run_cli({"sweep", sweep, "--db", one.string(), "--jobs", "1", "--quiet"}).code,
            kExitOk);
  ASSERT_EQ(run_cli({"sweep", sweep, "--db", three.string(), "--jobs", "3", "--threads-per-point",
                     "2", "--quiet"})
                .code,
            kExitOk);
  const std::string id = load_sweep(sweep).sweep_id;
  const auto a = stored_documents(one, id);
  ASSERT_EQ(a.size(), 6u);
  EXPECT_EQ(a, stored_documents(three, id));
}

TEST(SweepCommand, ResumesRunningOnlyTheMissingPoints) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  const std::string sweep = llmcap::testing::test_data("sweep-small.json").string();
  const Result part = run_cli({"sweep", sweep, "--db", db.string(), "--max-points", "2"});
  ASSERT_EQ(part.code, kExitOk) << part.err;
  EXPECT_NE(part.out.find("2 points planned now, 0 stored before, 4 still to run (rerun to "
                          "continue)"),
            std::string::npos)
      << part.out;
  const std::string id = load_sweep(sweep).sweep_id;
  const auto before = store::ResultsStore::open(db).sweep_points(id);
  ASSERT_EQ(before.size(), 2u);

  const Result rest = run_cli({"sweep", sweep, "--db", db.string()});
  ASSERT_EQ(rest.code, kExitOk) << rest.err;
  EXPECT_NE(rest.err.find(": 6 points, 2 already stored in " + db.string() + ", running 4 on "),
            std::string::npos)
      << rest.err;
  EXPECT_NE(rest.out.find("4 points planned now, 2 stored before;"), std::string::npos);
  const auto after = store::ResultsStore::open(db).sweep_points(id);
  ASSERT_EQ(after.size(), 6u);
  for (const auto& [key, run_id] : before) EXPECT_EQ(after.at(key), run_id);  // kept as they were

  // A grown grid (same sweep name and base) runs only its new points. Written under the temp
  // folder, with the scenario's path made absolute.
  TempDir other;
  const std::string grown = llmcap::testing::replace_once(llmcap::testing::read_text(sweep),
                                                          "[0.5, 1, 2]", "[0.5, 1, 2, 4]");
  const std::string absolute = llmcap::testing::replace_once(
      grown, R"("small.json")", json((data_folder() / "small.json").string()).dump());
  const auto grown_file = other.write("sweep-small.json", absolute);
  const Result more = run_cli({"sweep", grown_file.string(), "--db", db.string(), "--quiet"});
  ASSERT_EQ(more.code, kExitOk) << more.err;
  EXPECT_NE(more.err.find(": 8 points, 6 already stored in "), std::string::npos) << more.err;
  EXPECT_EQ(store::ResultsStore::open(db).sweep_points(id).size(), 8u);
}

TEST(SweepCommand, KilledSweepKeepsFinishedPointsAndResumes) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  const auto sweep = write_sweep(
      dir, "killed", R"({"workload.rate_multiplier": [0.5, 1, 1.5, 2], "seed": [1, 2, 3]})");
  const std::string id = load_sweep(sweep).sweep_id;
  { store::ResultsStore::open(db); }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // the sweep, one point at a time, until killed
    std::ostringstream out, err;
    _exit(run({"sweep", sweep.string(), "--db", db.string(), "--jobs", "1", "--quiet"}, out, err));
  }
  // Kill it once a point is stored (polling the database it writes).
  size_t num_seen = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (num_seen == 0 && std::chrono::steady_clock::now() < deadline) {
    num_seen = store::ResultsStore::open(db).sweep_points(id).size();
    if (num_seen == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  kill(child, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_GE(num_seen, 1u);
  const auto kept = store::ResultsStore::open(db).sweep_points(id);
  EXPECT_EQ(store::ResultsStore::open(db).integrity_check(), "ok");
  EXPECT_TRUE(WIFSIGNALED(status)) << "the sweep finished before it was killed";
  EXPECT_LT(kept.size(), 12u);

  const Result resumed = run_cli({"sweep", sweep.string(), "--db", db.string(), "--quiet"});
  ASSERT_EQ(resumed.code, kExitOk) << resumed.err;
  EXPECT_NE(resumed.err.find(": 12 points, " + std::to_string(kept.size()) + " already stored in "),
            std::string::npos)
      << resumed.err;
  const store::ResultsStore store = store::ResultsStore::open(db);
  const auto all = store.sweep_points(id);
  EXPECT_EQ(all.size(), 12u);
  EXPECT_EQ(store.list_runs("sweep_point").size(), 12u);  // none twice
  for (const auto& [key, run_id] : kept) EXPECT_EQ(all.at(key), run_id);
}

TEST(SweepCommand, AFailingPointStopsTheSweepKeepingTheOthers) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  // An unknown instance id passes the scenario reader; the planner refuses it.
  const auto sweep =
      write_sweep(dir, "failing", R"({"candidates": [["aws-g6e.xlarge"], ["no-such-instance"]]})");
  const Result r = run_cli({"sweep", sweep.string(), "--db", db.string(), "--jobs", "1"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_NE(r.err.find("llmcap: error: " + sweep.string() +
                       ": point candidates=[\"no-such-instance\"]: "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("no-such-instance"), std::string::npos);
  EXPECT_EQ(store::ResultsStore::open(db).sweep_points(load_sweep(sweep).sweep_id).size(), 1u);
}

TEST(SweepCommand, MaxRequestsBoundsEveryPointAsPlanDoes) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  // The base's trace has 300 requests: under --max-requests 100 the first point is refused
  // with plan's message, and nothing is stored; at 300 the point plans.
  const auto sweep = write_sweep(dir, "limited", R"({"slo.tpot_p99_s": [0.05]})");
  const Result r = run_cli(
      {"sweep", sweep.string(), "--db", db.string(), "--jobs", "1", "--max-requests", "100"});
  EXPECT_EQ(r.code, kExitBadInput) << r.err;
  EXPECT_NE(r.err.find("field \"workload.path\": about 300 requests"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("expected at most 100 requests (raise the limit with --max-requests)"),
            std::string::npos)
      << r.err;
  const Result ok = run_cli(
      {"sweep", sweep.string(), "--db", db.string(), "--jobs", "1", "--max-requests", "300"});
  EXPECT_EQ(ok.code, kExitOk) << ok.err;
  EXPECT_EQ(store::ResultsStore::open(db).sweep_points(load_sweep(sweep).sweep_id).size(), 1u);
}

TEST(SweepCommand, BadSweepFileExitsTwo) {
  TempDir dir;
  const auto sweep = write_sweep(dir, "bad", R"({"slo.tpot_p99_s": []})");
  const Result r = run_cli({"sweep", sweep.string(), "--db", (dir.path() / "db").string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_EQ(r.err, "llmcap: error: " + sweep.string() +
                       ": field \"grid.slo.tpot_p99_s\": expected a non-empty list of values, "
                       "got []\n");
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "db"));
}

TEST(SweepCommand, HelpExplainsMpirun) {
  const Result r = run_cli({"sweep", "--help"});
  EXPECT_EQ(r.code, kExitOk);
  EXPECT_NE(r.out.find("mpirun -n N llmcap sweep SWEEP.json"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--jobs"), std::string::npos);
  EXPECT_NE(r.out.find("--threads-per-point"), std::string::npos);
}

}  // namespace
}  // namespace llmcap::cli
