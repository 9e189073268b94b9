// `llmcap report`: every format from a run document file and from the results database, and
// each bad input as one line, exit 2, no file left behind.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "../cli/run_cli.h"
#include "app/plan_run.h"
#include "cli/cli.h"
#include "model/hardware.h"
#include "plan/scenario.h"
#include "report/report.h"
#include "store/results_store.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using llmcap::testing::read_text;
using llmcap::testing::TempDir;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

using llmcap::cli::testing::CliRun;
using llmcap::cli::testing::run_cli;

std::string fixture_path() { return llmcap::testing::test_data("plan-run.json").string(); }

/// Expects exit 2 with one error line containing each of `expected`, and no file at `out`.
void expect_bad_input(const std::vector<std::string>& args,
                      const std::vector<std::string>& expected, const std::filesystem::path& out) {
  const CliRun r = run_cli(args);
  EXPECT_EQ(r.code, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, StartsWith("llmcap: error: "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const std::string& e : expected) EXPECT_THAT(r.err, HasSubstr(e));
  EXPECT_FALSE(std::filesystem::exists(out)) << out;
  for (const auto& entry : std::filesystem::directory_iterator(out.parent_path())) {
    EXPECT_THAT(entry.path().filename().string(), Not(HasSubstr(out.filename().string())))
        << "temporary file left behind: " << entry.path();
  }
}

TEST(CliReport, WritesEveryFormatFromADocumentFile) {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> kMagic = {{"pdf", "%PDF-"},
                                                                   {"html", "<!DOCTYPE html>"},
                                                                   {"md", "# Capacity plan"},
                                                                   {"csv", "instance_type,"},
                                                                   {"json", "{"},
                                                                   {"xlsx", "PK"}};
  for (const auto& [ext, magic] : kMagic) {
    const auto out = dir.path() / ("report." + ext);
    const CliRun r = run_cli({"report", "--document", fixture_path(), "--out", out.string()});
    ASSERT_EQ(r.code, kExitOk) << ext << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("Wrote " + out.string() + " (" + ext + ", "));
    EXPECT_THAT(read_text(out), StartsWith(magic)) << ext;
  }
  // --format wins over the extension.
  const auto out = dir.path() / "report.txt";
  const CliRun r =
      run_cli({"report", "--document", fixture_path(), "--format", "markdown", "--out", out});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(read_text(out), StartsWith("# Capacity plan: chat-llama3.1-8b"));
}

TEST(CliReport, RendersAStoredRunByIdAndLatest) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  json doc = json::parse(read_text(fixture_path()));
  int64_t first = 0;
  {
    store::ResultsStore s = store::ResultsStore::open(db);
    store::RunRecord rec;
    rec.kind = "plan";
    rec.name = "first";
    rec.document_json = doc.dump();
    first = s.add_run(rec);
    doc["scenario"]["name"] = "second-run";
    rec.name = "second";
    rec.document_json = doc.dump();
    s.add_run(rec);
    // A calibration stored after the plans: "latest" still means the latest plan.
    store::RunRecord cal;
    cal.kind = "calibration";
    cal.name = "cpu";
    cal.document_json = "{}";
    s.add_run(cal);
  }
  const auto out = dir.path() / "r.md";
  CliRun r = run_cli({"report", std::to_string(first), "--db", db.string(), "--out", out});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(read_text(out), StartsWith("# Capacity plan: chat-llama3.1-8b\n"));
  r = run_cli({"report", "latest", "--db", db.string(), "--out", out});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(read_text(out), StartsWith("# Capacity plan: second-run\n"));
}

TEST(CliReport, RendersADocumentMadeByThePlanner) {
  // A real (small) plan: whatever make_plan_run puts in the document today must render.
  const plan::Scenario scenario =
      plan::load_scenario(std::string(LLMCAP_TEST_DATA_DIR) + "/../../cli/data/small.json");
  const model::Catalog catalog = model::Catalog::load(LLMCAP_DATA_DIR);
  app::PlanRunOptions options;
  options.analysis = false;
  const app::PlanRun run = app::make_plan_run(scenario, catalog, options);
  TempDir dir;
  const auto doc_path = dir.write("run.json", run.document.dump());
  for (const char* ext : {"md", "html", "csv", "json", "xlsx", "pdf"}) {
    const auto out = dir.path() / (std::string("real.") + ext);
    const CliRun r = run_cli({"report", "--document", doc_path.string(), "--out", out});
    ASSERT_EQ(r.code, kExitOk) << ext << ": " << r.err;
  }
  const std::string md = read_text(dir.path() / "real.md");
  EXPECT_THAT(md, HasSubstr("# Capacity plan: cli-small"));
  EXPECT_THAT(md, HasSubstr("aws-g6e.xlarge"));
  EXPECT_THAT(md, HasSubstr("No CPU instance type meets the SLO."));
}

TEST(CliReport, UnknownFormatListsTheKnownOnes) {
  TempDir dir;
  const auto out = dir.path() / "r.docx";
  expect_bad_input({"report", "--document", fixture_path(), "--format", "docx", "--out", out},
                   {"unknown report format \"docx\" (known: pdf, html, md, csv, json, xlsx)"}, out);
  expect_bad_input({"report", "--document", fixture_path(), "--out", out},
                   {"--out " + out.string(), "extension \".docx\"", "give --format"}, out);
}

TEST(CliReport, UnknownRunIsNamed) {
  TempDir dir;
  const auto db = dir.path() / "runs.sqlite";
  {
    store::ResultsStore s = store::ResultsStore::open(db);
    store::RunRecord rec;
    rec.kind = "plan";
    rec.document_json = read_text(fixture_path());
    s.add_run(rec);
  }
  const auto out = dir.path() / "r.md";
  expect_bad_input({"report", "99", "--db", db.string(), "--out", out}, {"run 99: ", "99"}, out);
  expect_bad_input({"report", "first", "--db", db.string(), "--out", out},
                   {"run \"first\": expected a run id (a positive integer, see llmcap runs "
                    "list) or \"latest\""},
                   out);
  // An empty database has no latest run.
  const auto empty = dir.path() / "empty.sqlite";
  expect_bad_input({"report", "latest", "--db", empty.string(), "--out", out},
                   {"run latest: no plan run in ", "run llmcap plan first"}, out);
}

TEST(CliReport, ADocumentOfAnotherSchemaVersionIsRefused) {
  TempDir dir;
  json doc = json::parse(read_text(fixture_path()));
  doc["schema_version"] = 2;
  const auto path = dir.write("v2.json", doc.dump());
  const auto out = dir.path() / "r.pdf";
  expect_bad_input({"report", "--document", path.string(), "--out", out},
                   {path.string() + ": run document: \"schema_version\" is 2, expected 1"}, out);
  const auto bad = dir.write("bad.json", "{\"format\": ");
  expect_bad_input({"report", "--document", bad.string(), "--out", out},
                   {bad.string() + ": not JSON"}, out);
  expect_bad_input({"report", "--document", (dir.path() / "missing.json").string(), "--out", out},
                   {"missing.json: cannot open the run document"}, out);
}

TEST(CliReport, AnUnwritableOutPathLeavesNothing) {
  TempDir dir;
  const auto out = dir.path() / "no-such-folder" / "r.html";
  const CliRun r = run_cli({"report", "--document", fixture_path(), "--out", out.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("--out " + out.string() + ": cannot write the report"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(CliReport, AFailedReportKeepsThePreviousFile) {
  TempDir dir;
  const auto out = dir.write("r.md", "previous report\n");
  json doc = json::parse(read_text(fixture_path()));
  doc["results"][0]["usd_per_hour"] = "cheap";
  const auto path = dir.write("broken.json", doc.dump());
  const CliRun r = run_cli({"report", "--document", path.string(), "--out", out.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("results[0].usd_per_hour is \"cheap\""));
  EXPECT_EQ(read_text(out), "previous report\n");
}

TEST(CliReport, NeedsExactlyOneOfRunAndDocument) {
  TempDir dir;
  const auto out = dir.path() / "r.md";
  expect_bad_input({"report", "--out", out}, {"give a RUN"}, out);
  expect_bad_input({"report", "latest", "--document", fixture_path(), "--out", out}, {"not both"},
                   out);
}

}  // namespace
}  // namespace llmcap::cli
