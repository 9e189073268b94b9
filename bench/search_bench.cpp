// search_bench: times the configuration search over every candidate instance type of a search
// scenario (default data/scenarios/search-llama3.1-8b.json, all catalog types), with and
// without pruning, and optionally plan + analyse on a scenario. Prints wall time,
// configurations tried and pruned, and simulations run. Speed is measured here, never in tests.
//
//   search_bench [--scenario FILE] [--threads N] [--no-unpruned] [--analyse FILE]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "model/hardware.h"
#include "plan/analysis.h"
#include "plan/planner.h"
#include "plan/scenario.h"
#include "plan/search.h"

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// CPU seconds (user + system) of this process so far: on a shared machine, wall time alone
/// says little.
double cpu_s() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

void run(const llmcap::plan::Scenario& scenario, const llmcap::model::Catalog& catalog, int threads,
         bool prune) {
  llmcap::plan::Scenario sc = scenario;
  sc.search.prune = prune;
  llmcap::plan::PlanOptions options;
  options.num_threads = threads;
  const auto t0 = Clock::now();
  const double c0 = cpu_s();
  const llmcap::plan::SearchResult r = llmcap::plan::run_search(sc, catalog, options);
  const double wall = since(t0);
  const double cpu = cpu_s() - c0;
  std::printf(
      "%-9s types %zu  configs %lld  tried %lld  pruned without simulation %lld  "
      "simulations %lld  wall %.2f s  cpu %.2f s\n",
      prune ? "pruned" : "unpruned", r.types.size(), static_cast<long long>(r.num_configs),
      static_cast<long long>(r.num_configs_tried), static_cast<long long>(r.num_configs_pruned),
      static_cast<long long>(r.num_simulations), wall, cpu);
  for (const auto& t : r.types) {
    if (t.best < 0) {
      std::printf("  %-28s no feasible configuration (%zu tried or pruned)\n",
                  t.instance_type.c_str(), t.configs.size());
      continue;
    }
    std::printf("  %-28s %3lld x  USD %8.2f/h  %-48s  max %.3g req/s per instance\n",
                t.instance_type.c_str(), static_cast<long long>(t.best_row.num_instances),
                t.best_row.usd_per_hour, t.configs[static_cast<size_t>(t.best)].label.c_str(),
                t.max_requests_per_s_per_instance);
  }
}

}  // namespace

int main(int argc, char** argv) {
  std::string scenario_path = std::string(LLMCAP_DATA_DIR) + "/scenarios/search-llama3.1-8b.json";
  std::string analyse_path;
  int threads = 2;
  bool unpruned = true;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--scenario" && i + 1 < argc) {
      scenario_path = argv[++i];
    } else if (a == "--threads" && i + 1 < argc) {
      threads = std::atoi(argv[++i]);
    } else if (a == "--no-unpruned") {
      unpruned = false;
    } else if (a == "--analyse" && i + 1 < argc) {
      analyse_path = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: search_bench [--scenario FILE] [--threads N] [--no-unpruned] "
                   "[--analyse FILE]\n");
      return 2;
    }
  }
  try {
    const auto catalog = llmcap::model::Catalog::load(LLMCAP_DATA_DIR);
    if (!analyse_path.empty()) {
      const auto scenario = llmcap::plan::load_scenario(analyse_path, LLMCAP_DATA_DIR);
      llmcap::plan::PlanOptions po;
      po.num_threads = threads;
      auto t0 = Clock::now();
      double c0 = cpu_s();
      const auto result = llmcap::plan::plan(scenario, catalog, po);
      const double plan_s = since(t0);
      const double plan_cpu = cpu_s() - c0;
      llmcap::plan::AnalysisOptions ao;
      ao.plan = po;
      t0 = Clock::now();
      c0 = cpu_s();
      const auto analysis = llmcap::plan::analyse(scenario, catalog, result, ao);
      const double analyse_s = since(t0);
      const double analyse_cpu = cpu_s() - c0;
      std::printf(
          "%s: plan %.2f s wall (%.2f s cpu), analyse %.2f s wall (%.2f s cpu, %lld "
          "simulations), threads %d\n",
          analyse_path.c_str(), plan_s, plan_cpu, analyse_s, analyse_cpu,
          static_cast<long long>(analysis.num_simulations), threads);
      for (const auto& u : analysis.uncertainty) {
        std::printf("  uncertainty %-26s %s; dominant: %s\n", u.instance_type.c_str(),
                    u.text.c_str(), u.dominant_assumption.c_str());
      }
      for (const auto& s : analysis.search) {
        std::printf("  rate %-26s %s: max %.3g req/s per instance (load x%.3g)\n",
                    s.instance_type.c_str(), s.best_config.c_str(),
                    s.max_requests_per_s_per_instance, s.max_load_multiplier_per_instance);
      }
      for (const auto& c : analysis.cost_vs_load) {
        std::printf("  cost vs load %-20s", c.instance_type.c_str());
        for (const auto& p : c.points) {
          std::printf("  x%.2g: %lld (USD %.2f)", p.load_multiplier,
                      static_cast<long long>(p.num_instances), p.usd_per_hour);
        }
        std::printf("\n");
      }
      std::printf("  recommendation: %s\n", analysis.recommendation.c_str());
      return 0;
    }
    const auto scenario = llmcap::plan::load_scenario(scenario_path, LLMCAP_DATA_DIR);
    std::printf("%s, %zu instance types in the catalog, %d threads\n", scenario_path.c_str(),
                catalog.instances().size(), threads);
    run(scenario, catalog, threads, true);
    if (unpruned) run(scenario, catalog, threads, false);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "search_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
