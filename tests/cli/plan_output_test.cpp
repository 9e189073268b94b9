#include "cli/plan_output.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "app/plan_output.h"
#include "cli/text_layout.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using app::plan_to_csv;
using app::plan_to_json;
using app::write_file_atomically;

using ::testing::HasSubstr;
using ::testing::Not;

plan::PlanResult two_rows() {
  plan::PlanResult r;
  r.model_id = "m";
  plan::PlanRow ok;
  ok.instance_type = "gpu-a";
  ok.device_kind = model::DeviceKind::kGpu;
  ok.feasible = true;
  ok.num_instances = 3;
  ok.usd_per_hour = 6.0;
  ok.annual_usd = 52560.0;
  ok.usd_per_million_output_tokens = 1.25;
  ok.metrics.ttft.p50_s = 0.1;
  ok.metrics.ttft.p99_s = 0.9;
  ok.metrics.tpot.p50_s = 0.02;
  ok.metrics.tpot.p99_s = 0.04;
  plan::PlanRow bad;
  bad.instance_type = "cpu-b";
  bad.device_kind = model::DeviceKind::kCpu;
  bad.infeasible_reason = "TPOT floor at batch 1 is 0.21 s > SLO 0.05 s, \"quoted\"";
  r.rows = {bad, ok};
  return r;
}

TEST(PlanToJson, HasTheDocumentedKeysAndNullsForInfeasibleRows) {
  plan::Scenario s;
  s.name = "x";
  const auto doc = nlohmann::json::parse(plan_to_json(s, two_rows()));
  const auto& bad = doc.at("results").at(0);
  EXPECT_FALSE(bad.at("feasible").get<bool>());
  EXPECT_TRUE(bad.at("num_instances").is_null());
  EXPECT_THAT(bad.at("infeasible_reason").get<std::string>(), HasSubstr("0.21 s"));
  const auto& ok = doc.at("results").at(1);
  EXPECT_EQ(ok.at("num_instances").get<int64_t>(), 3);
  EXPECT_DOUBLE_EQ(ok.at("usd_per_hour").get<double>(), 6.0);
  EXPECT_DOUBLE_EQ(ok.at("ttft_p99_s").get<double>(), 0.9);
  EXPECT_DOUBLE_EQ(ok.at("tpot_p50_s").get<double>(), 0.02);
  EXPECT_TRUE(ok.at("infeasible_reason").is_null());
}

TEST(PlanToCsv, QuotesReasonsAndKeepsOneLinePerRow) {
  const std::string csv = plan_to_csv(two_rows());
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_THAT(csv, HasSubstr("\"TPOT floor at batch 1 is 0.21 s > SLO 0.05 s, \"\"quoted\"\"\""));
  EXPECT_THAT(csv, HasSubstr("gpu-a,gpu,true,3,6,1.25,52560,0.1,0.9,0.02,0.04,"));
}

TEST(HardwareEssentials, DropsVendorWordsAndNotes) {
  EXPECT_EQ(hardware_essentials("8 x NVIDIA H100 SXM5 80GB"), "8x H100 SXM5 80GB");
  EXPECT_EQ(hardware_essentials("Intel Xeon Platinum 8488C (AWS custom), 32 vCPU"),
            "Xeon 8488C, 32 vCPU");
  EXPECT_EQ(hardware_essentials("AMD EPYC 9R14 (AWS custom, Genoa), 16 vCPU"),
            "EPYC 9R14, 16 vCPU");
  EXPECT_EQ(hardware_essentials("1 x NVIDIA A10G (AWS variant)"), "1x A10G");
}

TEST(HardwareEssentials, AGivenFleetKeepsEachGroupsEssentials) {
  EXPECT_EQ(
      fleet_hardware_essentials("2 x (1 x NVIDIA L40S) + 1 x (Intel Xeon 6975P-C (AWS custom, "
                                "Granite Rapids), 384 vCPU)"),
      "2x (1x L40S) + 1x (Xeon 6975P-C, 384 vCPU)");
  EXPECT_EQ(fleet_hardware_essentials("3 x (8 x NVIDIA H100 SXM5 80GB)"), "3x (8x H100 SXM5 80GB)");
}

/// A given fleet of a GPU type and a CPU type, infeasible.
plan::PlanRow mixed_fleet_row() {
  plan::PlanRow row;
  row.instance_type = "fleet: 2 x aws-g6e.xlarge + 1 x aws-m8i.96xlarge";
  row.device_kind = model::DeviceKind::kGpu;
  row.hardware_name =
      "2 x (1 x NVIDIA L40S) + 1 x (Intel Xeon 6975P-C (AWS custom, Granite Rapids), 384 vCPU)";
  row.infeasible_reason = "the given fleet (USD 24.04/hour) misses the SLO: p99 TTFT 31.5 s";
  plan::GroupRow gpu;
  gpu.field = "fleet.groups[0]";
  gpu.instance_type = "aws-g6e.xlarge";
  gpu.device_kind = model::DeviceKind::kGpu;
  gpu.role = "unified";
  gpu.num_instances = 2;
  plan::GroupRow cpu = gpu;
  cpu.field = "fleet.groups[1]";
  cpu.instance_type = "aws-m8i.96xlarge";
  cpu.device_kind = model::DeviceKind::kCpu;
  cpu.num_instances = 1;
  row.groups = {gpu, cpu};
  return row;
}

/// A plan of model "m" whose one row is mixed_fleet_row().
plan::PlanResult mixed_fleet_result() {
  plan::PlanResult r;
  r.model_id = "m";
  r.rows = {mixed_fleet_row()};
  return r;
}

plan::Scenario named_x() {
  plan::Scenario s;
  s.name = "x";
  return s;
}

TEST(PrintPlanTable, AMixedFleetsRowFitsTheWidthAndSaysMixed) {
  const plan::Scenario s = named_x();
  const plan::PlanResult r = mixed_fleet_result();
  for (const size_t width : {80, 100, 120}) {
    std::ostringstream out;
    print_plan_table(s, r, out, {width, false});
    // The table's lines (its header, rule and row; the prose around it is wrapped by the
    // caller) fit the width.
    std::istringstream lines(out.str());
    int table_lines = 0;
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("instance type", 0) == 0 || line.rfind("      ", 0) == 0 ||
          line.rfind("---", 0) == 0 || line.rfind("fleet: 2 x aws-g6", 0) == 0) {
        ++table_lines;
        EXPECT_LE(display_width(line), width) << width << ": " << line;
      }
      if (line.rfind("fleet: 2 x aws-g6", 0) == 0) {
        EXPECT_THAT(line, HasSubstr(" mixed 2x (1x L40S)"));
        EXPECT_THAT(line, HasSubstr("infeasible: the given fleet"));
      }
    }
    EXPECT_EQ(table_lines, 4) << out.str();
  }
  // The groups, listed below the row, carry the whole id.
  std::ostringstream wide;
  print_plan_table(s, r, wide, {160, false});
  EXPECT_THAT(wide.str(), HasSubstr("fleet: 2 x aws-g6e.xlarge + 1 x aws-m8i.96xlarge  mixed"));
}

TEST(PrintPlanTable, AGivenFleetsEnginesAreItsGroups) {
  plan::PlanResult r = mixed_fleet_result();
  r.rows[0].groups[0].engine = "vllm";
  r.rows[0].groups[1].engine = "llama.cpp";
  std::ostringstream out;
  print_plan_table(named_x(), r, out, {200, false});
  EXPECT_THAT(out.str(), HasSubstr("Engines (docs/engines.md): GPU vllm; CPU llama.cpp"));
}

TEST(PlanToJson, AMixedFleetsKindIsMixedAGpuOnlyFleetsGpu) {
  const plan::Scenario s = named_x();
  plan::PlanResult r = mixed_fleet_result();
  EXPECT_EQ(nlohmann::json::parse(plan_to_json(s, r)).at("results").at(0).at("device_kind"),
            "mixed");
  r.rows[0].groups[1].device_kind = model::DeviceKind::kGpu;
  EXPECT_EQ(nlohmann::json::parse(plan_to_json(s, r)).at("results").at(0).at("device_kind"), "gpu");
  EXPECT_THAT(plan_to_csv(r), HasSubstr(",gpu,false,"));
}

TEST(PrintPlanTable, CutsAReasonToItsFirstClauseUnlessVerbose) {
  plan::Scenario s;
  s.name = "x";
  plan::PlanResult r = two_rows();
  r.rows[0].infeasible_reason =
      "model \"m\" on instance \"cpu-b\": weights need 141.1 GB (bf16), instance has 123.7 GB "
      "usable (0.9 x 137.4 GB) and keeps 1.074 GB for activations";
  std::ostringstream cut;
  print_plan_table(s, r, cut, {100, false});
  EXPECT_THAT(cut.str(), HasSubstr("infeasible: weights need 141.1 GB (bf16)\n"));
  EXPECT_THAT(cut.str(), HasSubstr("--verbose prints them whole"));
  std::ostringstream whole;
  print_plan_table(s, r, whole, {100, true});
  EXPECT_THAT(whole.str(), HasSubstr("and keeps 1.074 GB for activations\n"));
  EXPECT_THAT(whole.str(), Not(HasSubstr("--verbose prints them whole")));
}

TEST(PrintPlanTable, ListsFeasibleRowsFirstAndNamesTheCheapest) {
  plan::Scenario s;
  s.name = "x";
  std::ostringstream out;
  print_plan_table(s, two_rows(), out);
  const std::string text = out.str();
  EXPECT_LT(text.find("gpu-a"), text.find("cpu-b"));
  EXPECT_THAT(text, HasSubstr("infeasible: TPOT floor at batch 1 is 0.21 s"));
  EXPECT_THAT(text, HasSubstr("52,560"));
  // The cheapest of each kind is the answer card's (print_answer), not the table's.
  EXPECT_THAT(text, Not(HasSubstr("Cheapest")));
}

TEST(PrintAnswer, ShowsTheFleetCostRangeBindingAndOtherKind) {
  plan::Answer a;
  a.feasible = true;
  a.currency = "CNY";
  a.recommended.instance_type = "gpu-a";
  a.recommended.hardware_name = "1 x L40S";
  a.recommended.num_instances = 2;
  a.recommended.num_instances_billed = 2;
  a.recommended.configuration = "tp=1 int8 chunked_prefill chunk=512 max_num_seqs=64";
  a.recommended.from_search = true;
  a.recommended.price_model = "reserved_1y";
  a.recommended.cost_per_hour = 16.7;
  a.recommended.cost_per_year = 146292;
  a.cost_per_month = 12191;
  a.has_range = true;
  a.cost_per_hour_low = 8.35;
  a.cost_per_hour_high = 25.05;
  a.dominant_assumption = "step_time";
  a.binding_text = "TPOT: p99 TPOT 38.9 ms against 50.0 ms (22% margin)";
  a.other_kind_text = "No CPU instance type meets the SLO (10 tried).";
  a.why_not = {"cpu-b: TPOT floor at batch 1 is 0.21 s > SLO 0.05 s"};
  std::ostringstream out;
  print_answer(a, out);
  const std::string text = out.str();
  EXPECT_EQ(text.rfind("Answer: 2 x gpu-a (1 x L40S), the search's best\n", 0), 0u) << text;
  EXPECT_THAT(text, HasSubstr("config       tp=1 int8 chunked_prefill chunk=512 max_num_seqs=64"));
  EXPECT_THAT(text, HasSubstr("cost         CNY 16.70/hour (reserved_1y), CNY 12,191/month, "
                              "CNY 146,292/year"));
  EXPECT_THAT(text, HasSubstr("95% range    CNY 8.35 to CNY 25.05/hour (dominant assumption: "
                              "step time)"));
  EXPECT_THAT(text, HasSubstr("binding      TPOT: p99 TPOT 38.9 ms against 50.0 ms"));
  EXPECT_THAT(text, HasSubstr("other kind   No CPU instance type meets the SLO (10 tried)."));
  EXPECT_THAT(text, HasSubstr("why not      cpu-b: TPOT floor"));
}

TEST(PrintPlanTable, AGivenFleetIsSummedUpAsItselfNotAsTheCheapestOfAKind) {
  plan::Scenario s;
  s.name = "x";
  plan::PlanResult r;
  r.model_id = "m";
  plan::PlanRow fleet;
  fleet.instance_type = "fleet: 2 x gpu-a + 1 x cpu-b";
  fleet.device_kind = model::DeviceKind::kGpu;  // a group has GPUs
  fleet.feasible = true;
  fleet.num_instances = 3;
  fleet.usd_per_hour = 24.04;
  fleet.annual_usd = 210590.4;
  fleet.groups.resize(2);
  r.rows = {fleet};
  std::ostringstream out;
  print_plan_table(s, r, out);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("Given fleet: 2 x gpu-a + 1 x cpu-b: 3 instances, USD 24.04/hour, "
                              "USD 210,590/year; meets the SLO."));
  EXPECT_THAT(text, Not(HasSubstr("Cheapest")));
  EXPECT_THAT(text, Not(HasSubstr("No CPU instance type")));
}

TEST(PrintPlanTable, ShowsEveryTensorParallelDegreeTriedAndMarksTheChosenOne) {
  plan::Scenario s;
  s.name = "x";
  plan::PlanResult r = two_rows();
  plan::PlanRow& ok = r.rows[1];
  ok.tp_degree = 2;
  plan::TpOptionRow tp1;
  tp1.tp_degree = 1;
  tp1.infeasible_reason = "TPOT floor at batch 1 is 0.07 s > SLO 0.05 s";
  plan::TpOptionRow tp2;
  tp2.tp_degree = 2;
  tp2.feasible = true;
  tp2.num_instances = 3;
  tp2.num_replicas_per_instance = 1;
  tp2.usd_per_hour = 6.0;
  tp2.ttft_p99_s = 0.9;
  tp2.tpot_p99_s = 0.04;
  ok.tp_options = {tp1, tp2};
  std::ostringstream out;
  print_plan_table(s, r, out);
  EXPECT_THAT(out.str(), HasSubstr("    tp 1: infeasible: TPOT floor at batch 1 is 0.07 s"));
  EXPECT_THAT(out.str(), HasSubstr("    tp 2: 3 x 1 replica(s) per instance, USD 6.00/hour, p99 "
                                   "TTFT 0.90 s, p99 TPOT 40.0 ms  <- chosen"));
}

TEST(PrintPlanTable, AGivenDisaggregatedFleetListsItsGroupsAndKvTransfers) {
  plan::Scenario s;
  s.name = "x";
  plan::PlanResult r;
  r.model_id = "m";
  plan::PlanRow fleet;
  fleet.instance_type = "fleet: 1 x gpu-a prefill + 2 x gpu-a decode";
  fleet.feasible = true;
  fleet.num_instances = 3;
  fleet.num_kv_transfers = 10;
  fleet.kv_transfer_bytes = 2'500'000'000;
  plan::GroupRow g;
  g.field = "fleet.prefill[0]";
  g.instance_type = "gpu-a";
  g.role = "prefill";
  g.num_instances = 1;
  g.tp_degree = 1;
  g.num_replicas_per_instance = 1;
  g.num_kv_blocks = 1000;
  g.usd_per_hour = 2.0;
  g.network_bandwidth_bytes_per_s = 1.25e9;
  fleet.groups = {g};
  r.rows = {fleet};
  std::ostringstream out;
  print_plan_table(s, r, out);
  EXPECT_THAT(out.str(), HasSubstr("    fleet.prefill[0] (prefill): 1 x gpu-a, tp 1, 1 replica(s) "
                                   "per instance, 1000 KV blocks per replica, USD 2.00/hour, "
                                   "network 1.25 GB/s per replica\n"));
  EXPECT_THAT(out.str(), HasSubstr("    KV transfers: 10 caches moved, 2.50 GB in all\n"));
}

TEST(PlanToCsv, WithoutClassesHasOnlyTheFixedColumns) {
  const std::string csv = plan_to_csv(two_rows());
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "instance_type,device_kind,feasible,num_instances,usd_per_hour,"
            "usd_per_million_output_tokens,annual_usd,ttft_p50_s,ttft_p99_s,tpot_p50_s,"
            "tpot_p99_s,infeasible_reason");
}

TEST(PlanToJson, WithoutClassesHasNoClassesKeys) {
  plan::Scenario s;
  s.name = "x";
  const auto doc = nlohmann::json::parse(plan_to_json(s, two_rows()));
  EXPECT_FALSE(doc.at("scenario").contains("classes"));
  EXPECT_FALSE(doc.at("workload").contains("classes"));
  EXPECT_FALSE(doc.at("results").at(1).contains("classes"));
}

/// A scenario of arrival process `kind` (gamma CV 2, weibull shape 0.5, or poisson).
plan::Scenario arrival_scenario(sim::ArrivalProcessKind kind) {
  plan::Scenario s;
  s.workload.kind = plan::WorkloadSpec::Kind::kArrivalProcess;
  s.workload.path = "lengths.csv";
  s.workload.arrival.kind = kind;
  s.workload.arrival.cv = 2.0;
  s.workload.arrival.weibull_shape = 0.5;
  return s;
}

TEST(PlanOutput, NamesTheArrivalProcessOfTheWorkload) {
  for (const auto& [kind, name] : std::vector<std::pair<sim::ArrivalProcessKind, std::string>>{
           {sim::ArrivalProcessKind::kPoisson, "poisson"},
           {sim::ArrivalProcessKind::kGamma, "gamma"},
           {sim::ArrivalProcessKind::kWeibull, "weibull"}}) {
    SCOPED_TRACE(name);
    const plan::Scenario s = arrival_scenario(kind);
    const auto doc = nlohmann::json::parse(plan_to_json(s, two_rows()));
    EXPECT_EQ(doc.at("scenario").at("workload_kind").get<std::string>(), name);
    std::ostringstream out;
    print_plan_table(s, two_rows(), out);
    EXPECT_THAT(out.str(), HasSubstr("Workload: lengths.csv (" + name + ")"));
  }
}

TEST(PlanOutput, TheWorkloadLineNamesMultiTurnSessions) {
  plan::Scenario s = arrival_scenario(sim::ArrivalProcessKind::kPoisson);
  std::ostringstream plain;
  print_plan_table(s, two_rows(), plain);
  EXPECT_THAT(plain.str(), Not(HasSubstr("multi-turn")));
  s.workload.sessions = sim::SessionOptions{};
  s.workload.sessions->think_time_s = 30;
  std::ostringstream out;
  print_plan_table(s, two_rows(), out);
  EXPECT_THAT(out.str(), HasSubstr("multi-turn sessions (mean 2 turns, think time 30 s)"));
}

TEST(PlanOutput, JsonRowsCarryTheKvOffloadLoads) {
  const plan::Scenario s = arrival_scenario(sim::ArrivalProcessKind::kPoisson);
  plan::PlanResult r = two_rows();
  for (plan::PlanRow& row : r.rows) {
    row.metrics.num_kv_offload_loaded_tokens = 404096;
    row.metrics.kv_offload_load_s = 1.655;
  }
  const auto doc = nlohmann::json::parse(plan_to_json(s, r));
  for (const auto& row : doc.at("results")) {
    if (row.at("feasible").get<bool>()) {
      EXPECT_EQ(row.at("kv_offload_loaded_tokens").get<int64_t>(), 404096);
      EXPECT_DOUBLE_EQ(row.at("kv_offload_load_s").get<double>(), 1.655);
    } else {
      EXPECT_TRUE(row.at("kv_offload_loaded_tokens").is_null());
      EXPECT_TRUE(row.at("kv_offload_load_s").is_null());
    }
  }
}

TEST(PlanOutput, SaysHowMuchOfThePromptsThePrefixCacheHeldOnlyWhenItHeldAny) {
  const plan::Scenario s = arrival_scenario(sim::ArrivalProcessKind::kPoisson);
  plan::PlanResult r = two_rows();
  std::ostringstream none;
  print_plan_table(s, r, none);
  EXPECT_THAT(none.str(), Not(HasSubstr("Prefix cache")));
  const auto feasible =
      std::find_if(r.rows.begin(), r.rows.end(), [](const plan::PlanRow& x) { return x.feasible; });
  const auto infeasible = std::find_if(r.rows.begin(), r.rows.end(),
                                       [](const plan::PlanRow& x) { return !x.feasible; });
  ASSERT_TRUE(feasible != r.rows.end() && infeasible != r.rows.end());
  feasible->metrics.prefix_cache_hit_rate = 0.2106;
  infeasible->metrics.prefix_cache_hit_rate = 0.151;
  // The infeasible row is left out: one rate, not a range.
  std::ostringstream out;
  print_plan_table(s, r, out);
  EXPECT_THAT(out.str(), HasSubstr("Prefix cache: 21.1% of prompt tokens cached, by type"));
  const auto doc = nlohmann::json::parse(plan_to_json(s, r));
  for (const auto& row : doc.at("results")) {
    if (row.at("feasible").get<bool>()) {
      EXPECT_NEAR(row.at("prefix_cache_hit_rate").get<double>(), 0.2106, 1e-12);
    } else {
      EXPECT_TRUE(row.at("prefix_cache_hit_rate").is_null());
    }
  }
  infeasible->feasible = true;
  std::ostringstream both;
  print_plan_table(s, r, both);
  EXPECT_THAT(both.str(), HasSubstr("Prefix cache: 15.1% to 21.1% of prompt tokens cached"));
}

TEST(PlanOutput, SaysHowBigTheKvOffloadTierIsAndWhatItLoadedBack) {
  plan::Scenario s = arrival_scenario(sim::ArrivalProcessKind::kPoisson);
  plan::PlanResult r = two_rows();
  std::ostringstream off;
  print_plan_table(s, r, off);
  EXPECT_THAT(off.str(), Not(HasSubstr("KV offload")));
  s.kv_offload_bytes = 24'000'000'000;
  std::ostringstream none;
  print_plan_table(s, r, none);
  EXPECT_THAT(none.str(), HasSubstr("KV offload (docs/simulator.md): 24 GB of each GPU "
                                    "instance's host memory behind its prefix cache; nothing was "
                                    "loaded back from it"));
  for (plan::PlanRow& row : r.rows) {
    if (!row.feasible) continue;
    row.device_kind = model::DeviceKind::kGpu;
    row.metrics.num_kv_offload_loaded_tokens = 404'096;
  }
  std::ostringstream out;
  print_plan_table(s, r, out);
  EXPECT_THAT(out.str(), HasSubstr("; 404,096 tokens loaded back, by GPU type (--json: "
                                   "kv_offload_loaded_tokens)."));
}

TEST(PlanOutput, NamesTheSpeculativeDecodingAndItsRatesInTheHeaderAndTheJson) {
  plan::Scenario s = arrival_scenario(sim::ArrivalProcessKind::kPoisson);
  std::ostringstream plain;
  print_plan_table(s, two_rows(), plain);
  EXPECT_THAT(plain.str(), Not(HasSubstr("Speculative")));
  s.speculative.method = plan::SpeculativeSpec::Method::kEagle;
  s.speculative.config.num_draft_tokens = 2;
  s.speculative.config.acceptance_rates = {0.7, 0.4};
  s.speculative.source = "our A/B test, 2026-11";
  std::ostringstream out;
  print_plan_table(s, two_rows(), out);
  EXPECT_THAT(out.str(), HasSubstr("Speculative decoding: eagle (1 draft layer), 2 draft tokens "
                                   "accepted at 0.7, 0.4: 2.1 tokens per decode step (rates: our "
                                   "A/B test, 2026-11)."));
  const auto doc = nlohmann::json::parse(plan_to_json(s, two_rows()));
  const auto& spec = doc.at("scenario").at("speculative");
  EXPECT_EQ(spec.at("method"), "eagle");
  EXPECT_EQ(spec.at("num_draft_tokens"), 2);
  EXPECT_NEAR(spec.at("tokens_per_step").get<double>(), 2.1, 1e-12);
  EXPECT_EQ(spec.at("draft_layers"), 1);
  EXPECT_EQ(spec.at("source"), "our A/B test, 2026-11");
}

/// Two client classes: "chat" (gamma, TTFT <= 2 s, TPOT <= 0.05 s) and "sum, \"docs\"" (a
/// name with a comma and quotes, trace, TTFT <= 10 s, TPOT <= 0.1 s), and a result with a
/// feasible row and an infeasible one, each with the classes' figures.
plan::Scenario class_scenario() {
  plan::Scenario s;
  s.name = "mixed";
  plan::ClientClassSpec chat;
  chat.name = "chat";
  chat.workload.kind = plan::WorkloadSpec::Kind::kArrivalProcess;
  chat.workload.arrival.kind = sim::ArrivalProcessKind::kGamma;
  chat.workload.path = "sharegpt.csv";
  chat.slo = {2.0, 0.05};
  plan::ClientClassSpec docs;
  docs.name = "sum, \"docs\"";
  docs.workload.kind = plan::WorkloadSpec::Kind::kTrace;
  docs.workload.path = "arxiv.csv";
  docs.slo = {10.0, 0.1};
  s.workload.classes = {chat, docs};
  s.workload.kind = chat.workload.kind;
  s.workload.arrival = chat.workload.arrival;
  s.workload.path = chat.workload.path;
  s.slo = {2.0, 0.05};
  return s;
}

plan::PlanResult class_rows() {
  plan::PlanResult r = two_rows();
  r.workload.num_requests = 300;
  r.workload.classes = {{"chat", 250, 800, 300, 4000}, {"sum, \"docs\"", 50, 9000, 200, 15000}};
  plan::PlanRow& bad = r.rows[0];
  plan::PlanRow& ok = r.rows[1];
  for (plan::PlanRow* row : {&bad, &ok}) {
    row->classes.resize(2);
    row->classes[0].name = "chat";
    row->classes[0].slo = {2.0, 0.05};
    row->classes[1].name = "sum, \"docs\"";
    row->classes[1].slo = {10.0, 0.1};
  }
  ok.classes[0].ttft_floor_s = 0.25;
  ok.classes[0].metrics.num_requests = 250;
  ok.classes[0].metrics.num_completed = 250;
  ok.classes[0].metrics.ttft.p99_s = 0.8;
  ok.classes[0].metrics.tpot.p99_s = 0.04;
  ok.classes[0].metrics.slo_attainment = 0.996;
  ok.classes[0].metrics.goodput_requests_per_s = 2.49;
  ok.classes[1].ttft_floor_s = 1.5;
  ok.classes[1].metrics.num_requests = 50;
  ok.classes[1].metrics.num_completed = 50;
  ok.classes[1].metrics.ttft.p99_s = 3.5;
  ok.classes[1].metrics.tpot.p99_s = 0.06;
  ok.classes[1].metrics.slo_attainment = 1.0;
  ok.classes[1].metrics.goodput_requests_per_s = 0.5;
  return r;
}

TEST(PlanToJson, ListsTheClassesInTheScenarioTheWorkloadAndEachResult) {
  const auto doc = nlohmann::json::parse(plan_to_json(class_scenario(), class_rows()));
  const auto& scenario = doc.at("scenario");
  EXPECT_EQ(scenario.at("workload_kind").get<std::string>(), "classes");
  ASSERT_EQ(scenario.at("classes").size(), 2u);
  EXPECT_EQ(scenario.at("classes").at(0).at("workload_kind").get<std::string>(), "gamma");
  EXPECT_EQ(scenario.at("classes").at(1).at("workload_kind").get<std::string>(), "trace");
  EXPECT_EQ(scenario.at("classes").at(1).at("workload_path").get<std::string>(), "arxiv.csv");
  EXPECT_DOUBLE_EQ(scenario.at("classes").at(1).at("slo").at("ttft_p99_s").get<double>(), 10.0);
  // The scenario-level "slo" key stays: the tightest bounds.
  EXPECT_DOUBLE_EQ(scenario.at("slo").at("ttft_p99_s").get<double>(), 2.0);

  const auto& workload = doc.at("workload").at("classes");
  ASSERT_EQ(workload.size(), 2u);
  EXPECT_EQ(workload.at(1).at("name").get<std::string>(), "sum, \"docs\"");
  EXPECT_EQ(workload.at(1).at("num_requests").get<int64_t>(), 50);
  EXPECT_EQ(workload.at(1).at("p99_prompt_tokens").get<int64_t>(), 15000);

  const auto& ok = doc.at("results").at(1);
  EXPECT_DOUBLE_EQ(ok.at("ttft_p99_s").get<double>(), 0.9);  // the row's own keys stay
  ASSERT_EQ(ok.at("classes").size(), 2u);
  const auto& chat = ok.at("classes").at(0);
  EXPECT_EQ(chat.at("name").get<std::string>(), "chat");
  EXPECT_DOUBLE_EQ(chat.at("slo").at("tpot_p99_s").get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(chat.at("ttft_floor_s").get<double>(), 0.25);
  EXPECT_EQ(chat.at("num_requests").get<int64_t>(), 250);
  EXPECT_DOUBLE_EQ(chat.at("ttft_p99_s").get<double>(), 0.8);
  EXPECT_DOUBLE_EQ(chat.at("tpot_p99_s").get<double>(), 0.04);
  EXPECT_DOUBLE_EQ(chat.at("slo_attainment").get<double>(), 0.996);
  EXPECT_DOUBLE_EQ(chat.at("goodput_requests_per_s").get<double>(), 2.49);
  EXPECT_DOUBLE_EQ(ok.at("classes").at(1).at("ttft_p99_s").get<double>(), 3.5);

  const auto& bad = doc.at("results").at(0).at("classes").at(1);
  EXPECT_EQ(bad.at("name").get<std::string>(), "sum, \"docs\"");
  EXPECT_DOUBLE_EQ(bad.at("slo").at("ttft_p99_s").get<double>(), 10.0);
  EXPECT_TRUE(bad.at("ttft_p99_s").is_null());
  EXPECT_TRUE(bad.at("slo_attainment").is_null());
  EXPECT_TRUE(bad.at("goodput_requests_per_s").is_null());
}

TEST(PlanToCsv, AppendsEightColumnsPerClassAfterTheFixedOnes) {
  const std::string csv = plan_to_csv(class_rows());
  std::vector<std::string> lines;
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0],
            "instance_type,device_kind,feasible,num_instances,usd_per_hour,"
            "usd_per_million_output_tokens,annual_usd,ttft_p50_s,ttft_p99_s,tpot_p50_s,"
            "tpot_p99_s,infeasible_reason,"
            "class_0_name,class_0_slo_ttft_p99_s,class_0_slo_tpot_p99_s,class_0_num_requests,"
            "class_0_ttft_p99_s,class_0_tpot_p99_s,class_0_slo_attainment,"
            "class_0_goodput_requests_per_s,"
            "class_1_name,class_1_slo_ttft_p99_s,class_1_slo_tpot_p99_s,class_1_num_requests,"
            "class_1_ttft_p99_s,class_1_tpot_p99_s,class_1_slo_attainment,"
            "class_1_goodput_requests_per_s");
  // The infeasible row: reason, then each class's name and SLO with empty metrics.
  EXPECT_THAT(lines[1], ::testing::EndsWith("\"quoted\"\"\",\"chat\",2,0.05,,,,,"
                                            ",\"sum, \"\"docs\"\"\",10,0.1,,,,,"));
  // The feasible row: the fixed columns as before, an empty reason, then the classes.
  EXPECT_EQ(lines[2],
            "gpu-a,gpu,true,3,6,1.25,52560,0.1,0.9,0.02,0.04,,"
            "\"chat\",2,0.05,250,0.8,0.04,0.996,2.49,"
            "\"sum, \"\"docs\"\"\",10,0.1,50,3.5,0.06,1,0.5");
}

TEST(PrintPlanTable, ListsTheClassesAndEachClassResultUnderAFeasibleRow) {
  std::ostringstream out;
  print_plan_table(class_scenario(), class_rows(), out);
  const std::string text = out.str();
  EXPECT_THAT(text, HasSubstr("Workload: 2 client classes, 300 requests"));
  EXPECT_THAT(text, HasSubstr("  class chat: sharegpt.csv (gamma), 250 requests, mean prompt 800 "
                              "tokens, mean output 300 tokens; SLO: p99 TTFT <= 2 s, p99 TPOT "
                              "<= 50 ms\n"));
  EXPECT_THAT(text, HasSubstr("  class sum, \"docs\": arxiv.csv (trace), 50 requests"));
  EXPECT_THAT(text, HasSubstr("SLO: each class its own (above)"));
  EXPECT_THAT(text, HasSubstr("    class chat         p99 TTFT 0.80 s (SLO 2 s), p99 TPOT "
                              "40.0 ms (SLO 50 ms), SLO attainment 99.60%, goodput 2.490 "
                              "req/s, 250 requests\n"));
  EXPECT_THAT(text, HasSubstr("    class sum, \"docs\"  p99 TTFT 3.50 s (SLO 10 s)"));
  // Class lines follow the feasible row only.
  EXPECT_LT(text.find("gpu-a"), text.find("    class chat"));
  EXPECT_LT(text.find("    class chat"), text.find("cpu-b"));
  EXPECT_EQ(text.find("    class", text.find("cpu-b")), std::string::npos);
}

TEST(WriteFileAtomically, AMissingFolderIsAnErrorNamingThePath) {
  llmcap::testing::TempDir dir;
  const auto path = dir.path() / "no-such-folder" / "out.csv";
  try {
    write_file_atomically(path, "x\n");
    FAIL() << "expected InputError";
  } catch (const plan::InputError& e) {
    EXPECT_EQ(std::string(e.what()), path.string() +
                                         ": cannot write file: No such file or directory; no "
                                         "output was written");
  }
}

TEST(WriteFileAtomically, WritesTheContentsAndLeavesNoTemporaryFile) {
  llmcap::testing::TempDir dir;
  const auto path = dir.path() / "out.txt";
  write_file_atomically(path, "hello\n");
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  EXPECT_EQ(line, "hello");
  int num_files = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir.path()))
    ++num_files;
  EXPECT_EQ(num_files, 1);
}

}  // namespace
}  // namespace llmcap::cli
