// `llmcap bench-sim`: output, JSON and bad input. Timing itself is never asserted (speed is
// a benchmark figure, not a test); these runs are small.
#include "cli/bench_sim.h"

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

}  // namespace
}  // namespace llmcap::cli
