// prefix_sim_bench: simulator speed with prefix caching on the Mooncake conversation trace
// (../shared/data/traces/mooncake_conversation_trace.jsonl, or the path given), repeated back
// to back until it holds --requests requests (each copy's hashes and streams made distinct,
// so copies share nothing), on a fleet of --replicas replicas with a linear step time (5 ms
// + 0.05 ms per new token, so the run's steps look like a GPU's), recording ITL as the
// planner does (one run of equal gaps per step). Prints, for prefix caching off and on, each
// with decode run-ahead (sim::SimOptions::decode_run_ahead) off and on, interleaved over
// --rounds rounds, the median wall time and requests simulated per second on one core, plus
// the hit rate. Speed is measured here, never in tests.
//
//   prefix_sim_bench [--trace FILE] [--requests N] [--replicas N] [--rounds N] [--router NAME]
//                    [--kv-blocks N] (16-token blocks per replica; default 27,000)
//                    [--only CACHING,RUN_AHEAD] (on or off each: that configuration alone)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "model/step_time.h"
#include "sim/simulator.h"
#include "sim/workload.h"

namespace {

using Clock = std::chrono::steady_clock;

class LinearPredictor final : public llmcap::model::StepTimePredictor {
 public:
  double step_time_s(const llmcap::model::BatchShape& b) const override {
    return 0.005 + 0.05e-3 * static_cast<double>(b.num_new_tokens());
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  std::string trace = "../shared/data/traces/mooncake_conversation_trace.jsonl";
  int64_t num_requests = 1000000;
  int64_t replicas = 8;
  int rounds = 3;
  std::string router = "prefix_aware";
  std::string only;  // "CACHING,RUN_AHEAD" (on or off each): that configuration alone
  // About an 80 GB GPU's KV room for an 8B model in bf16: ~55 GB at 128 KiB per token.
  int64_t kv_blocks = 27000;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--trace") trace = argv[i + 1];
    if (a == "--requests") num_requests = std::atoll(argv[i + 1]);
    if (a == "--replicas") replicas = std::atoll(argv[i + 1]);
    if (a == "--rounds") rounds = std::atoi(argv[i + 1]);
    if (a == "--router") router = argv[i + 1];
    if (a == "--kv-blocks") kv_blocks = std::atoll(argv[i + 1]);
    if (a == "--only") only = argv[i + 1];
  }
  using namespace llmcap;
  const auto t_load = Clock::now();
  const std::vector<sim::RequestSpec> base = sim::load_trace(trace);
  const double load_s = std::chrono::duration<double>(Clock::now() - t_load).count();
  if (base.empty()) return 1;
  const sim::SimTime span = base.back().arrival + sim::SimTime::Seconds(1);
  // Copies: hashes offset by copy x (max hash + 1), streams remixed, arrivals shifted.
  std::vector<uint64_t> pool;
  uint64_t max_hash = 0;
  for (const sim::RequestSpec& r : base) {
    for (int32_t j = 0; j < r.prefix.count; ++j) {
      max_hash = std::max(max_hash, (*r.prefix.hashes)[r.prefix.begin + j]);
    }
  }
  sim::Workload w;
  w.open_loop.reserve(static_cast<size_t>(num_requests));
  std::vector<std::pair<size_t, int64_t>> where;  // (request, pool offset)
  for (int64_t copy = 0; static_cast<int64_t>(w.open_loop.size()) < num_requests; ++copy) {
    for (const sim::RequestSpec& r : base) {
      if (static_cast<int64_t>(w.open_loop.size()) == num_requests) break;
      sim::RequestSpec c = r;
      c.arrival = r.arrival + sim::SimTime::Nanoseconds(span.ns() * copy);
      c.prefix.stream = sim::prefix_chain(r.prefix.stream, static_cast<uint64_t>(copy));
      where.emplace_back(w.open_loop.size(), static_cast<int64_t>(pool.size()));
      for (int32_t j = 0; j < r.prefix.count; ++j) {
        pool.push_back((*r.prefix.hashes)[r.prefix.begin + j] +
                       static_cast<uint64_t>(copy) * (max_hash + 1));
      }
      w.open_loop.push_back(std::move(c));
    }
  }
  const auto shared = std::make_shared<const std::vector<uint64_t>>(std::move(pool));
  for (const auto& [i, offset] : where) {
    w.open_loop[i].prefix.hashes = shared;
    w.open_loop[i].prefix.begin = offset;
  }
  std::printf(
      "trace %s: %zu rows read in %.3f s; simulating %zu requests on %lld replicas, "
      "router %s\n",
      trace.c_str(), base.size(), load_s, w.open_loop.size(), static_cast<long long>(replicas),
      router.c_str());
  const LinearPredictor predictor;
  // Four configurations, interleaved round by round: prefix caching off and on, each with
  // decode run-ahead (SimOptions::decode_run_ahead) off and on.
  struct Config {
    bool caching;
    bool run_ahead;
    std::vector<double> wall_s;
    int64_t steps = 0;
    double hit_rate = 0;
  };
  std::vector<Config> configs = {
      {false, false, {}}, {false, true, {}}, {true, false, {}}, {true, true, {}}};
  if (!only.empty()) {
    std::erase_if(configs, [&](const Config& c) {
      return only != std::string(c.caching ? "on" : "off") + "," + (c.run_ahead ? "on" : "off");
    });
    if (configs.empty()) {
      std::fprintf(stderr, "--only: expected on,on / on,off / off,on / off,off, got %s\n",
                   only.c_str());
      return 2;
    }
  }
  for (int round = 0; round < rounds; ++round) {
    for (Config& c : configs) {
      sim::FleetConfig fleet;
      fleet.num_replicas = replicas;
      fleet.serving.policy = sim::BatchingPolicy::kChunkedPrefill;
      fleet.serving.max_num_seqs = 256;
      fleet.serving.max_num_batched_tokens = 8192;
      fleet.serving.block_size_tokens = 16;
      fleet.serving.num_kv_blocks = kv_blocks;
      fleet.serving.prefix_caching = c.caching;
      fleet.router = sim::parse_router(router, "--router");
      sim::SimOptions options;
      options.decode_run_ahead = c.run_ahead;
      options.record_itl_ns = false;  // as the planner records ITL: one run of gaps per step
      options.record_itl_runs = true;
      const auto t0 = Clock::now();
      const sim::SimResult r = sim::simulate(w, fleet, predictor, 1, options);
      c.wall_s.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
      c.steps = r.num_steps;
      int64_t prompt = 0, cached = 0;
      for (const auto& st : r.prefix_cache) {
        prompt += st.num_prompt_tokens;
        cached += st.num_cached_prompt_tokens;
      }
      c.hit_rate = prompt > 0 ? static_cast<double>(cached) / static_cast<double>(prompt) : 0;
    }
  }
  const auto n = static_cast<double>(w.open_loop.size());
  for (const Config& c : configs) {
    const double s = median(c.wall_s);
    std::printf(
        "prefix caching %-3s run-ahead %-3s: median %.3f s, %.0f requests/s, %lld steps (%.0f "
        "ns each), hit rate %.1f%%\n",
        c.caching ? "on" : "off", c.run_ahead ? "on" : "off", s, n / s,
        static_cast<long long>(c.steps),
        1e9 * s / static_cast<double>(std::max<int64_t>(c.steps, 1)), 100 * c.hit_rate);
  }
  if (configs.size() == 4) {
    std::printf("run-ahead on / off wall time: caching off %.2f, caching on %.2f\n",
                median(configs[1].wall_s) / median(configs[0].wall_s),
                median(configs[3].wall_s) / median(configs[2].wall_s));
  }
  return 0;
}
