// `llmcap bench-sim`: output, JSON and bad input. Timing itself is never asserted (speed is
// a benchmark figure, not a test); these runs are small.
#include "cli/bench_sim.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/cli.h"
#include "run_cli.h"
#include "store/results_store.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using llmcap::testing::TempDir;
using ::testing::HasSubstr;

struct CliRun {
  int code;
  std::string out;
  std::string err;
};

CliRun run_cli(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  const int code = run(args, out, err);
  return {code, out.str(), err.str()};
}

TEST(CliBenchSim, PrintsTheFiguresAndWritesTheJson) {
  TempDir dir;
  const auto json_path = dir.path() / "bench.json";
  const CliRun r = run_cli({"bench-sim", "--requests", "3000", "--instances", "4", "--seed", "7",
                            "--json", json_path.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("bench-sim: 3000 requests on 4 replicas (seed 7)"));
  EXPECT_THAT(r.out, HasSubstr("roofline"));
  EXPECT_THAT(r.out, HasSubstr("llama-3.1-8b"));
  EXPECT_THAT(r.out, HasSubstr("requests simulated per second: "));
  EXPECT_THAT(r.out, HasSubstr("peak RSS: "));
  EXPECT_THAT(r.out, HasSubstr(" 0 rejected"));

  std::ifstream f(json_path);
  const auto doc = nlohmann::json::parse(f);
  EXPECT_EQ(doc.at("requests").get<int64_t>(), 3000);
  EXPECT_EQ(doc.at("instances").get<int64_t>(), 4);
  EXPECT_EQ(doc.at("seed").get<int64_t>(), 7);
  const double wall_s = doc.at("wall_s").get<double>();
  EXPECT_GT(wall_s, 0);
  constexpr double kRateRelTol = 1e-9;  // requests_per_s is requests / wall_s
  EXPECT_NEAR(doc.at("requests_per_s").get<double>(), 3000 / wall_s, kRateRelTol * 3000 / wall_s);
  EXPECT_GT(doc.at("peak_rss_bytes").get<int64_t>(), 0);
  EXPECT_GT(doc.at("num_steps").get<int64_t>(), 3000);
  EXPECT_GT(doc.at("simulated_s").get<double>(), 0);
}

TEST(CliBenchSim, LoadStaysBelowSaturation) {
  // The offered rate is kBenchLoadFraction of the estimated saturation rate: the fleet keeps
  // up (completions per second close to the offered rate) and no request queues for long.
  BenchSimArgs args;
  args.num_requests = 4000;
  args.num_instances = 2;
  const BenchSimReport report = run_bench_sim(args, llmcap::testing::data_dir());
  EXPECT_DOUBLE_EQ(report.offered_requests_per_s,
                   kBenchLoadFraction * 2 * report.capacity_requests_per_s);
  constexpr double kThroughputRelTol = 0.1;  // Poisson noise over 4000 arrivals and the edges
  EXPECT_NEAR(report.completed_requests_per_s, report.offered_requests_per_s,
              kThroughputRelTol * report.offered_requests_per_s);
  EXPECT_LT(report.queueing_delay_p99_s, 2.0);
  EXPECT_EQ(report.num_rejected, 0);
  EXPECT_EQ(report.num_preemptions, 0);
}

TEST(CliBenchSim, RefusesBadCountsAndMissingData) {
  TempDir dir;
  const auto json_path = dir.path() / "bench.json";
  CliRun r = run_cli({"bench-sim", "--requests", "0", "--json", json_path.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("--requests: expected a positive integer, got \"0\""));
  r = run_cli({"bench-sim", "--instances", "two"});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("--instances: expected a positive integer, got \"two\""));
  r = run_cli({"bench-sim", "--requests", "10", "--data-dir", (dir.path() / "nope").string(),
               "--json", json_path.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_THAT(r.err, HasSubstr("nope/hardware/cpus.json: cannot open file"));
  EXPECT_FALSE(std::filesystem::exists(json_path));  // nothing written on failure
}

std::string fixed(double v, int precision) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(precision) << v;
  return s.str();
}

TEST(CliBenchSim, StoresTheRunWithWhatJsonWroteAsItsDocument) {
  TempDir dir;
  const auto json_path = dir.path() / "bench.json";
  const auto db_path = dir.path() / "runs.sqlite";
  const CliRun r = run_cli({"bench-sim", "--requests", "2000", "--instances", "2", "--json",
                            json_path.string(), "--results-db", db_path.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.err, HasSubstr("Stored as run 1 in " + db_path.string()));

  const store::RunRecord run = llmcap::cli::testing::only_stored_run(db_path);
  ASSERT_FALSE(run.kind.empty());
  EXPECT_EQ(run.kind, "bench-sim");
  EXPECT_EQ(run.name, "2000 requests, 2 replicas");
  EXPECT_EQ(run.command_line, "llmcap bench-sim --requests 2000 --instances 2 --json " +
                                  json_path.string() + " --results-db " + db_path.string());
  const auto written = nlohmann::json::parse(llmcap::testing::read_text(json_path));
  EXPECT_EQ(nlohmann::json::parse(run.document_json), written);
  const auto input = nlohmann::json::parse(run.input_json);
  EXPECT_EQ(input.at("requests"), 2000);
  EXPECT_EQ(input.at("instances"), 2);
  EXPECT_EQ(input.at("seed"), 1);
  // The headline figures, as the command prints them.
  EXPECT_THAT(run.summary,
              HasSubstr(fixed(written.at("requests_per_s").get<double>(), 0) + " requests/s"));
  EXPECT_THAT(run.summary,
              HasSubstr("peak RSS " +
                        fixed(written.at("peak_rss_bytes").get<double>() / (1 << 20), 1) + " MiB"));
}

TEST(CliBenchSim, NoStoreLeavesNoRun) {
  TempDir dir;
  const auto db_path = dir.path() / "runs.sqlite";
  const CliRun r = run_cli({"bench-sim", "--requests", "2000", "--instances", "2", "--no-store",
                            "--results-db", db_path.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("Stored as run")));
  EXPECT_FALSE(std::filesystem::exists(db_path));
}

TEST(CliBenchSim, UnwritableResultsDbWarnsAndKeepsTheOutput) {
  TempDir dir;
  const auto json_path = dir.path() / "bench.json";
  const auto not_a_db = dir.write("not-a-db.sqlite", "this is not an SQLite database\n");
  const CliRun r = run_cli({"bench-sim", "--requests", "2000", "--instances", "2", "--json",
                            json_path.string(), "--results-db", not_a_db.string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.err, HasSubstr("llmcap: warning: run not stored: "));
  EXPECT_THAT(r.out, HasSubstr("requests simulated per second: "));
  EXPECT_TRUE(std::filesystem::exists(json_path));
}

TEST(CliBenchSim, FailedRunStoresNothing) {
  TempDir dir;
  const auto db_path = dir.path() / "runs.sqlite";
  const CliRun r = run_cli({"bench-sim", "--requests", "10", "--data-dir",
                            (dir.path() / "nope").string(), "--results-db", db_path.string()});
  EXPECT_EQ(r.code, kExitBadInput);
  EXPECT_FALSE(std::filesystem::exists(db_path));
}

}  // namespace
}  // namespace llmcap::cli
