// A seeded golden scenario: the simulator's results for every policy x router must match the
// stored values exactly (integer nanoseconds and counts).
//
// Regenerate (only after a deliberate change of simulator semantics, explained in the commit):
//   LLMCAP_PRINT_GOLDEN=1 build/tests/sim/sim_tests --gtest_filter='GoldenScenarioTest.*'
// prints the rows of kGolden below for the current simulator.
// LLMCAP_GOLDEN_RECORDS_DIR=DIR also writes every row's full request records to
// DIR/<policy>-<router>.csv (sim/records_csv.h), which tests/behaviour_unchanged.sh compares
// byte for byte between two builds.
//
// The scenario is loaded on purpose (25 requests/s on 3 replicas, mean TTFT of seconds): every
// continuous and chunked-prefill row preempts (183 to 274 times); static batching, whose batches
// the 1024-token prefill budget keeps small, saturates (four times the makespan) and never runs
// out of blocks.
//
// Provenance: computed once by this simulator when the batching policies and routers were
// added. The continuous x {round_robin, least_outstanding} rows are also what the simulator
// before that change (one object per running sequence, O(batch) per step; commit 5f06fd3)
// produces for the same inputs, so they pin the pre-existing behaviour across the rewrite.
#include <gtest/gtest.h>

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "sim/random.h"
#include "sim/records_csv.h"
#include "sim/simulator.h"

namespace llmcap::sim {
namespace {

/// Step time linear in every field of the shape, so that attention pairs, cached tokens and
/// decode contexts all move the golden values.
class LinearPredictor : public model::StepTimePredictor {
 public:
  double step_time_s(const model::BatchShape& b) const override {
    return 4e-3 + 3e-5 * static_cast<double>(b.num_prefill_tokens) +
           2e-9 * static_cast<double>(b.num_prefill_attention_pairs) +
           1e-6 * static_cast<double>(b.num_prefill_cached_tokens) +
           2e-4 * static_cast<double>(b.num_prefill_seqs_completing) +
           1.5e-4 * static_cast<double>(b.num_decode_seqs) +
           5e-8 * static_cast<double>(b.num_decode_context_tokens);
  }
};

/// 1500 Poisson arrivals at 25 requests/s and lengths from a fixed table, built here (not by
/// sim/workload.cpp) so that only the simulator is pinned: u_i = (splitmix64(i) >> 11) / 2^53,
/// gap_i = -ln(1 - u_i) / 25 s, lengths kLengths[splitmix64(i + 10^6) mod 8].
std::vector<RequestSpec> golden_arrivals() {
  constexpr int64_t kNumRequests = 1500;
  constexpr double kRatePerS = 25;
  static const int64_t kLengths[8][2] = {{12, 40},  {300, 150}, {1500, 60},  {80, 600},
                                         {700, 25}, {40, 8},    {2200, 200}, {150, 1}};
  std::vector<RequestSpec> out;
  double t_s = 0;
  for (int64_t i = 0; i < kNumRequests; ++i) {
    const double u = static_cast<double>(splitmix64(static_cast<uint64_t>(i)) >> 11) * 0x1.0p-53;
    t_s += -std::log(1.0 - u) / kRatePerS;
    const uint64_t pick = splitmix64(static_cast<uint64_t>(i) + 1'000'000) % 8;
    RequestSpec r;
    r.arrival = SimTime::Seconds(t_s);
    r.num_prompt_tokens = kLengths[pick][0];
    r.num_output_tokens = kLengths[pick][1];
    out.push_back(r);
  }
  return out;
}

FleetConfig golden_fleet(BatchingPolicy policy, RouterKind router) {
  FleetConfig fleet;
  fleet.num_replicas = 3;
  fleet.router = router;
  fleet.serving.policy = policy;
  fleet.serving.block_size_tokens = 16;
  fleet.serving.num_kv_blocks = 400;
  fleet.serving.max_num_seqs = 24;
  fleet.serving.max_num_batched_tokens = 1024;
  return fleet;
}

struct Golden {
  BatchingPolicy policy;
  RouterKind router;
  int64_t end_time_ns;
  int64_t num_steps;
  int64_t num_preemptions;
  int64_t sum_ttft_ns;
  int64_t p99_ttft_ns;  ///< nearest rank over the 1500 requests
  int64_t sum_e2e_latency_ns;
  int64_t max_itl_ns;
  uint64_t records_hash;  ///< FNV-1a over every record's reported fields
};

const char* enum_id(BatchingPolicy p) {
  switch (p) {
    case BatchingPolicy::kStatic:
      return "BatchingPolicy::kStatic";
    case BatchingPolicy::kContinuous:
      return "BatchingPolicy::kContinuous";
    case BatchingPolicy::kChunkedPrefill:
      return "BatchingPolicy::kChunkedPrefill";
    case BatchingPolicy::kPrefillFirst:
      return "BatchingPolicy::kPrefillFirst";
  }
  return "?";
}

const char* enum_id(RouterKind r) {
  switch (r) {
    case RouterKind::kRoundRobin:
      return "RouterKind::kRoundRobin";
    case RouterKind::kLeastOutstanding:
      return "RouterKind::kLeastOutstanding";
    case RouterKind::kLeastKvLoad:
      return "RouterKind::kLeastKvLoad";
    case RouterKind::kPowerOfTwo:
      return "RouterKind::kPowerOfTwo";
    case RouterKind::kPrefixAware:
      return "RouterKind::kPrefixAware";
  }
  return "?";
}

Golden measure(BatchingPolicy policy, RouterKind router) {
  std::vector<RequestSpec> arrivals = golden_arrivals();
  Workload w;
  w.open_loop = std::move(arrivals);
  LinearPredictor predictor;
  const SimResult r = simulate(w, golden_fleet(policy, router), predictor, 2024);
  if (const char* dir = std::getenv("LLMCAP_GOLDEN_RECORDS_DIR")) {
    std::ofstream out(
        std::string(dir) + "/" + batching_policy_name(policy) + "-" + router_name(router) + ".csv",
        std::ios::binary);
    write_request_records_csv(r, out);
  }
  Golden g{policy, router, r.end_time.ns(), r.num_steps, r.num_preemptions, 0, 0, 0, 0, 0};
  std::vector<int64_t> ttft;
  uint64_t hash = 14695981039346656037ULL;
  auto mix = [&hash](int64_t v) {
    for (int byte = 0; byte < 8; ++byte) {
      hash ^= (static_cast<uint64_t>(v) >> (8 * byte)) & 0xFF;
      hash *= 1099511628211ULL;
    }
  };
  for (const RequestRecord& rec : r.requests) {
    ttft.push_back((rec.first_token - rec.arrival).ns());
    g.sum_ttft_ns += ttft.back();
    g.sum_e2e_latency_ns += (rec.completion - rec.arrival).ns();
    g.max_itl_ns = std::max(g.max_itl_ns, rec.max_itl.ns());
    for (const int64_t v :
         {rec.id, rec.replica, rec.first_scheduled.ns(), rec.first_token.ns(), rec.completion.ns(),
          rec.num_preemptions, rec.max_itl.ns(), static_cast<int64_t>(rec.rejected)}) {
      mix(v);
    }
  }
  std::sort(ttft.begin(), ttft.end());
  g.p99_ttft_ns = ttft[static_cast<size_t>(std::ceil(0.99 * static_cast<double>(ttft.size()))) - 1];
  g.records_hash = hash;
  return g;
}

// clang-format off
const Golden kGolden[] = {
    // policy, router, end_time_ns, num_steps, num_preemptions, sum_ttft_ns, p99_ttft_ns,
    // sum_e2e_latency_ns, max_itl_ns, records_hash
    {BatchingPolicy::kStatic, RouterKind::kRoundRobin,
     248481738107, 162811, 0, 133992151976656, 184658793458,
     134872694914706, 5093050, 0x84286f0b0b82db90ULL},
    {BatchingPolicy::kStatic, RouterKind::kLeastOutstanding,
     248208188376, 160465, 0, 130694294436136, 181100189233,
     131576773455886, 5100650, 0xc3c05380b47599e2ULL},
    {BatchingPolicy::kStatic, RouterKind::kLeastKvLoad,
     242896741711, 158529, 0, 130748162933677, 180132104293,
     131632620121727, 5687850, 0xb5aa59e99a3d60a1ULL},
    {BatchingPolicy::kStatic, RouterKind::kPowerOfTwo,
     246959615476, 165781, 0, 138992138195743, 184118917228,
     139872138634493, 5253600, 0x953b3b3d4d5e9e90ULL},
    {BatchingPolicy::kContinuous, RouterKind::kRoundRobin,
     73737199678, 33768, 207, 7161953624439, 12914778099,
     8525053237695, 1008812912, 0xe3c3274823254ea4ULL},
    {BatchingPolicy::kContinuous, RouterKind::kLeastOutstanding,
     71680947092, 33813, 195, 7079260772063, 11413227213,
     8437912239771, 1230964906, 0xdf1d3db6169b1658ULL},
    {BatchingPolicy::kContinuous, RouterKind::kLeastKvLoad,
     71576766927, 33271, 233, 6652746937384, 10095319710,
     8030787762794, 931020306, 0x0bf9093359b21857ULL},
    {BatchingPolicy::kContinuous, RouterKind::kPowerOfTwo,
     71594983262, 33614, 274, 7041589374754, 11345262254,
     8433676106846, 1088126328, 0x0d02be4d1ebcdb69ULL},
    {BatchingPolicy::kChunkedPrefill, RouterKind::kRoundRobin,
     72858289196, 33227, 183, 6673597654043, 12077460430,
     8002153410743, 1503097158, 0xdc5152bcaedeecf3ULL},
    {BatchingPolicy::kChunkedPrefill, RouterKind::kLeastOutstanding,
     71263276653, 33215, 230, 6752125399984, 10844527333,
     8100757704736, 1225718138, 0x1c0294070bfb9b75ULL},
    {BatchingPolicy::kChunkedPrefill, RouterKind::kLeastKvLoad,
     70107779468, 32557, 204, 6331582616898, 10678988251,
     7668585533762, 1030905092, 0xffcac94f3bdae802ULL},
    {BatchingPolicy::kChunkedPrefill, RouterKind::kPowerOfTwo,
     71917283641, 33430, 226, 7134924092832, 12453508932,
     8480107667390, 1044868336, 0x44367d6f9b6842dcULL},
};
// clang-format on

TEST(GoldenScenarioTest, EveryPolicyAndRouterMatchesTheStoredValues) {
  const bool print = std::getenv("LLMCAP_PRINT_GOLDEN") != nullptr;
  for (const Golden& want : kGolden) {
    const Golden got = measure(want.policy, want.router);
    const std::string name =
        std::string(batching_policy_name(want.policy)) + " x " + router_name(want.router);
    if (print) {
      std::printf("    {%s, %s,\n     %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                  ",\n     %" PRId64 ", %" PRId64 ", 0x%016" PRIx64 "ULL},\n",
                  enum_id(want.policy), enum_id(want.router), got.end_time_ns, got.num_steps,
                  got.num_preemptions, got.sum_ttft_ns, got.p99_ttft_ns, got.sum_e2e_latency_ns,
                  got.max_itl_ns, got.records_hash);
    }
    EXPECT_EQ(got.end_time_ns, want.end_time_ns) << name;
    EXPECT_EQ(got.num_steps, want.num_steps) << name;
    EXPECT_EQ(got.num_preemptions, want.num_preemptions) << name;
    EXPECT_EQ(got.sum_ttft_ns, want.sum_ttft_ns) << name;
    EXPECT_EQ(got.p99_ttft_ns, want.p99_ttft_ns) << name;
    EXPECT_EQ(got.sum_e2e_latency_ns, want.sum_e2e_latency_ns) << name;
    EXPECT_EQ(got.max_itl_ns, want.max_itl_ns) << name;
    EXPECT_EQ(got.records_hash, want.records_hash) << name;
  }
}

}  // namespace
}  // namespace llmcap::sim
