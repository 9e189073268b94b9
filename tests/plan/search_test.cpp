// The configuration search: the spec parsers, the enumeration, the Pareto frontier, the
// analytic fleet bound, and the search itself against exhaustive enumeration on small
// hand-built cases.
#include "plan/search.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "plan/analysis.h"
#include "plan/spec_parsers.h"
#include "synthetic_catalog.h"
#include "test_util.h"

namespace llmcap::plan {
namespace {

using llmcap::testing::error_message;
using ::testing::HasSubstr;
using testing::synthetic_gpu;
using testing::synthetic_gpu_instance;

/// Two instance types: one 40 GB GPU at USD 1/h, and two of them at USD 1.9/h (tp 1 or 2).
model::Catalog two_type_catalog() {
  model::Catalog c;
  c.add_hardware(synthetic_gpu("g40", int64_t{40} << 30, 1e12, 3e14));
  c.add_instance(synthetic_gpu_instance("one-gpu", "g40", 1, 1.0));
  c.add_instance(synthetic_gpu_instance("two-gpu", "g40", 2, 1.9));
  return c;
}

Scenario small_scenario() {
  Scenario s;
  s.file = "search-test.json";
  s.name = "search-test";
  s.model_config = llmcap::testing::data_dir() / "models" / "llama-3.1-8b.json";
  s.workload.kind = WorkloadSpec::Kind::kArrivalProcess;
  s.workload.path = llmcap::testing::test_data("lengths.csv");
  s.workload.rate_per_s = 14.0;
  s.workload.num_requests = 400;
  s.slo.ttft_s = 1.0;
  s.slo.tpot_s = 0.04;
  s.seed = 5;
  s.max_instances = 32;
  s.search.enabled = true;
  s.search.tp_search = true;
  s.search.max_num_seqs = {4, 64};
  s.search.weight_formats = {model::WeightFormat::kBf16, model::WeightFormat::kInt8};
  s.search.max_rate = false;
  return s;
}

/// The cheapest fleet of each configuration by linear scan over sizes 1..max_instances (no
/// bisection, no bounds), and the cheapest configuration per type (ties: the lower index).
struct Exhaustive {
  std::vector<int64_t> sizes;  ///< per configuration; 0: none meets the SLO
  int64_t best = -1;
};
Exhaustive exhaustive(const PlanSession& session, const model::InstanceType& instance,
                      const std::vector<ServingChoice>& choices) {
  Exhaustive e;
  double best_cost = 0;
  for (size_t i = 0; i < choices.size(); ++i) {
    const PreparedType t = session.prepare(instance, choices[i]);
    int64_t size = 0;
    if (t.ready()) {
      for (int64_t n = 1; n <= session.scenario().max_instances; ++n) {
        if (meets_class_slos(session.evaluate(t, n), session.scenario().class_slos())) {
          size = n;
          break;
        }
      }
    }
    e.sizes.push_back(size);
    const double cost = static_cast<double>(size) * instance.usd_per_hour;
    if (size > 0 && (e.best < 0 || cost < best_cost)) {
      e.best = static_cast<int64_t>(i);
      best_cost = cost;
    }
  }
  return e;
}

TEST(Search, FindsTheKnownOptimumOfExhaustiveEnumeration) {
  const model::Catalog catalog = two_type_catalog();
  const Scenario s = small_scenario();
  const PlanSession session(s, catalog);
  const SearchResult pruned = run_search(s, catalog);
  ASSERT_EQ(pruned.types.size(), 2u);
  bool any_pruned_or_cut = false;
  for (const TypeSearchResult& t : pruned.types) {
    SCOPED_TRACE(t.instance_type);
    const model::InstanceType& instance = catalog.instance(t.instance_type, "test");
    const std::vector<ServingChoice> choices =
        search_configs(s.search, session.default_choice(instance.id),
                       tp_options(instance, catalog, session.model()));
    ASSERT_EQ(t.configs.size(), choices.size());
    const Exhaustive e = exhaustive(session, instance, choices);
    ASSERT_GE(e.best, 0) << "the case should have a feasible configuration";
    EXPECT_EQ(t.best, e.best) << t.configs[static_cast<size_t>(e.best)].label;
    EXPECT_EQ(t.best_row.num_instances, e.sizes[static_cast<size_t>(e.best)]);
    EXPECT_DOUBLE_EQ(
        t.best_row.usd_per_hour,
        static_cast<double>(e.sizes[static_cast<size_t>(e.best)]) * instance.usd_per_hour);
    // Every configuration searched to the end found the exhaustive size; the analytic bound
    // never exceeds it.
    for (size_t i = 0; i < t.configs.size(); ++i) {
      const ConfigResult& c = t.configs[i];
      SCOPED_TRACE(c.label);
      if (c.outcome == ConfigResult::Outcome::kFeasible) {
        EXPECT_EQ(c.num_instances, e.sizes[i]);
      }
      if (e.sizes[i] > 0) {
        EXPECT_LE(c.lower_bound_instances, e.sizes[i]);
      }
      if (c.outcome == ConfigResult::Outcome::kPrunedBound ||
          c.outcome == ConfigResult::Outcome::kCut) {
        any_pruned_or_cut = true;
        // What was skipped could not have been cheaper.
        if (e.sizes[i] > 0) {
          EXPECT_GE(static_cast<double>(e.sizes[i]) * instance.usd_per_hour,
                    t.best_row.usd_per_hour);
        }
      }
    }
  }
  EXPECT_TRUE(any_pruned_or_cut) << "the case should exercise the pruning";
}

TEST(Search, PruningNeverChangesTheAnswerAndSavesSimulations) {
  const model::Catalog catalog = two_type_catalog();
  Scenario s = small_scenario();
  for (const double rate : {6.0, 30.0}) {
    SCOPED_TRACE("rate " + std::to_string(rate));
    s.workload.rate_per_s = rate;
    s.search.prune = true;
    const SearchResult pruned = run_search(s, catalog);
    s.search.prune = false;
    const SearchResult full = run_search(s, catalog);
    ASSERT_EQ(pruned.types.size(), full.types.size());
    for (size_t k = 0; k < full.types.size(); ++k) {
      const TypeSearchResult& p = pruned.types[k];
      const TypeSearchResult& f = full.types[k];
      SCOPED_TRACE(f.instance_type);
      EXPECT_EQ(p.best, f.best);
      EXPECT_EQ(p.best_row.num_instances, f.best_row.num_instances);
      EXPECT_DOUBLE_EQ(p.best_row.usd_per_hour, f.best_row.usd_per_hour);
      EXPECT_EQ(f.num_configs_pruned, 0) << "unpruned: only deploy/floor failures skip";
    }
    EXPECT_LE(pruned.num_simulations, full.num_simulations);
  }
}

TEST(Search, LowerBoundIsAtMostTheSmallestFleetAndStartsTheSearch) {
  const model::Catalog catalog = two_type_catalog();
  Scenario s = small_scenario();
  s.workload.rate_per_s = 40.0;  // heavy enough that the bound is above 1
  s.search.tp_search = false;
  s.search.weight_formats = {model::WeightFormat::kBf16};
  s.search.max_num_seqs = {64};
  const PlanSession session(s, catalog);
  const model::InstanceType& instance = catalog.instance("one-gpu", "test");
  const PreparedType t = session.prepare(instance, session.default_choice("one-gpu"));
  ASSERT_TRUE(t.ready()) << t.row.infeasible_reason;
  const FleetBound b = fleet_lower_bound(session, t);
  const Exhaustive e = exhaustive(session, instance, {session.default_choice("one-gpu")});
  ASSERT_GT(e.sizes[0], 0);
  EXPECT_GE(b.num_instances, 2) << "work " << b.work_s << " s over " << b.horizon_s << " s";
  EXPECT_LE(b.num_instances, e.sizes[0]);
  EXPECT_GT(b.prefill_s_per_token, 0);
  EXPECT_GE(b.decode_s_per_token, b.prefill_s_per_token)
      << "decode steps hold fewer tokens, so their per-token floor is no lower";
  SizeSearch from_bound;
  from_bound.lower_bound = b.num_instances;
  const PlanRow r = session.search_size(t, from_bound);
  ASSERT_TRUE(r.feasible);
  EXPECT_EQ(r.num_instances, e.sizes[0]);
  EXPECT_LT(r.num_simulations, session.search_size(t).num_simulations + 1);
}

TEST(Search, SizeSearchFromAHintFindsTheSameFleet) {
  const model::Catalog catalog = two_type_catalog();
  Scenario s = small_scenario();
  s.workload.rate_per_s = 40.0;
  const PlanSession session(s, catalog);
  const PreparedType t =
      session.prepare(catalog.instance("one-gpu", "test"), session.default_choice("one-gpu"));
  const PlanRow plain = session.search_size(t);
  ASSERT_TRUE(plain.feasible);
  for (const int64_t start :
       {int64_t{1}, plain.num_instances, plain.num_instances + 5, int64_t{30}}) {
    SCOPED_TRACE("start " + std::to_string(start));
    SizeSearch h;
    h.start = start;
    h.first_step = 1;
    const PlanRow r = session.search_size(t, h);
    ASSERT_TRUE(r.feasible);
    EXPECT_EQ(r.num_instances, plain.num_instances);
  }
  SizeSearch capped;
  capped.cap = std::max<int64_t>(plain.num_instances - 1, 1);
  if (plain.num_instances > 1) {
    const PlanRow r = session.search_size(t, capped);
    EXPECT_FALSE(r.feasible);
    EXPECT_THAT(r.infeasible_reason, HasSubstr("the largest size tried"));
  }
}

TEST(Search, MaxSustainableRateIsBracketedByOneInstance) {
  const model::Catalog catalog = two_type_catalog();
  Scenario s = small_scenario();
  s.workload.rate_per_s = 10.0;
  const PlanSession session(s, catalog);
  const ServingChoice choice = session.default_choice("one-gpu");
  const MaxRate r = max_sustainable_rate(s, catalog, "one-gpu", choice, {}, 1.0, 0.02);
  ASSERT_GT(r.load_multiplier, 0);
  EXPECT_GT(r.num_simulations, 2);
  const double base_rate =
      static_cast<double>(session.summary().num_requests) / session.summary().span_s;
  EXPECT_NEAR(r.requests_per_s, r.load_multiplier * base_rate, 1e-9 * r.requests_per_s);
  auto meets_at = [&](double m) {
    const PlanSession at(with_load_multiplier(s, m), catalog);
    const PreparedType t = at.prepare(catalog.instance("one-gpu", "test"), choice);
    return meets_class_slos(at.evaluate(t, 1), at.scenario().class_slos());
  };
  EXPECT_TRUE(meets_at(r.load_multiplier));
  EXPECT_FALSE(meets_at(r.load_multiplier * 1.5));
}

TEST(Search, EnumeratesConfigurationsInOrderSkippingInvalidOnes) {
  SearchSpec spec;
  spec.enabled = true;
  spec.tp_degrees = {1, 2, 4};
  spec.weight_formats = {model::WeightFormat::kBf16, model::WeightFormat::kInt8};
  spec.policies = {sim::BatchingPolicy::kContinuous, sim::BatchingPolicy::kChunkedPrefill};
  spec.max_num_seqs = {64, 256};
  spec.chunk_sizes_tokens = {128, 1024};
  ServingChoice base;
  base.serving.max_num_batched_tokens = 4096;
  // Degrees 1 and 2 allowed: 2 x 2 x (2 continuous + 3 valid chunked) = 20.
  const std::vector<ServingChoice> c = search_configs(spec, base, {1, 2});
  ASSERT_EQ(c.size(), 20u);
  EXPECT_EQ(config_label(c[0]), "tp=1 bf16 continuous max_num_seqs=64");
  EXPECT_EQ(c[0].serving.max_num_batched_tokens, 4096);
  EXPECT_EQ(config_label(c[1]), "tp=1 bf16 continuous max_num_seqs=256");
  EXPECT_EQ(config_label(c[2]), "tp=1 bf16 chunked_prefill chunk=128 max_num_seqs=64");
  EXPECT_EQ(config_label(c[3]), "tp=1 bf16 chunked_prefill chunk=1024 max_num_seqs=64");
  EXPECT_EQ(config_label(c[4]), "tp=1 bf16 chunked_prefill chunk=1024 max_num_seqs=256");
  EXPECT_EQ(config_label(c[19]), "tp=2 int8 chunked_prefill chunk=1024 max_num_seqs=256");
  // Nothing listed: the base alone.
  const std::vector<ServingChoice> one = search_configs(SearchSpec{}, base, {1, 2});
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(config_label(one[0]), "tp=auto bf16 continuous max_num_seqs=256");
}

TEST(Search, TensorParallelismMayDifferByDeviceKind) {
  const model::Catalog catalog = two_type_catalog();
  Scenario sc = small_scenario();
  sc.search.weight_formats = {model::WeightFormat::kBf16};
  sc.search.max_num_seqs = {64};
  const auto degrees_of_two_gpu = [&](const Scenario& s) {
    const SearchResult r = run_search(s, catalog, PlanOptions{});
    std::vector<std::string> labels;
    for (const TypeSearchResult& t : r.types) {
      if (t.instance_type != "two-gpu") continue;
      for (const ConfigResult& c : t.configs) labels.push_back(c.label.substr(0, 4));
    }
    return labels;
  };
  // GPUs search every degree (1 and 2), CPUs only 1: the GPU type tries both.
  sc.search.tp_by_kind = true;
  sc.search.tp_search = true;
  sc.search.cpu_tp_search = false;
  sc.search.cpu_tp_degrees = {1};
  EXPECT_EQ(degrees_of_two_gpu(sc), (std::vector<std::string>{"tp=1", "tp=2"}));
  // The other way round: the GPU type keeps degree 1 only.
  sc.search.tp_search = false;
  sc.search.tp_degrees = {1};
  sc.search.cpu_tp_search = true;
  sc.search.cpu_tp_degrees.clear();
  EXPECT_EQ(degrees_of_two_gpu(sc), (std::vector<std::string>{"tp=1"}));
}

TEST(Pareto, KeepsExactlyTheUndominatedPoints) {
  // cost, p99 TTFT, p99 TPOT
  const std::vector<CostLatencyPoint> points = {
      {10, 1.0, 0.040},  // 0: cheapest
      {12, 0.5, 0.030},  // 1: dearer, faster in both
      {12, 0.6, 0.030},  // 2: dominated by 1
      {15, 0.5, 0.020},  // 3: dearest, best TPOT
      {11, 1.2, 0.050},  // 4: dominated by 0
      {10, 1.0, 0.040},  // 5: equal to 0 (the first is kept)
      {20, 0.4, 0.045},  // 6: best TTFT, worse TPOT than 0: undominated
  };
  const std::vector<size_t> f = pareto_frontier(points);
  EXPECT_EQ(f, (std::vector<size_t>{0, 1, 3, 6}));
  EXPECT_TRUE(pareto_frontier({}).empty());
}

// ---- parsers ----------------------------------------------------------------------------------

SearchSpec parse_search(const std::string& text) {
  return parse_search_spec(nlohmann::json::parse(text), "s.json");
}
UncertaintySpec parse_uncertainty(const std::string& text) {
  return parse_uncertainty_spec(nlohmann::json::parse(text), "s.json");
}

TEST(SearchSpecParser, ReadsEveryFieldAndDefaults) {
  EXPECT_FALSE(parse_search("{}").enabled);
  const SearchSpec s = parse_search(
      R"({"search": {"tensor_parallel": [1, 2], "weight_formats": ["bf16", "int4"],
          "batching": ["static", "chunked_prefill"], "max_num_seqs": [8, 16],
          "chunk_sizes_tokens": [256], "prune": false, "max_rate": false}})");
  EXPECT_TRUE(s.enabled);
  EXPECT_FALSE(s.tp_search);
  EXPECT_EQ(s.tp_degrees, (std::vector<int>{1, 2}));
  EXPECT_EQ(s.weight_formats,
            (std::vector{model::WeightFormat::kBf16, model::WeightFormat::kInt4}));
  EXPECT_EQ(s.policies,
            (std::vector{sim::BatchingPolicy::kStatic, sim::BatchingPolicy::kChunkedPrefill}));
  EXPECT_EQ(s.max_num_seqs, (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(s.chunk_sizes_tokens, (std::vector<int64_t>{256}));
  EXPECT_FALSE(s.prune);
  EXPECT_FALSE(s.max_rate);
  const SearchSpec t = parse_search(R"({"search": {"tensor_parallel": "search"}})");
  EXPECT_TRUE(t.enabled && t.tp_search && t.prune && t.max_rate);
  EXPECT_FALSE(t.tp_by_kind);
  // One choice per device kind.
  const SearchSpec k =
      parse_search(R"({"search": {"tensor_parallel": {"gpu": "search", "cpu": [1]}}})");
  EXPECT_TRUE(k.tp_by_kind && k.tp_search && !k.cpu_tp_search);
  EXPECT_TRUE(k.tp_degrees.empty());
  EXPECT_EQ(k.cpu_tp_degrees, (std::vector<int>{1}));

  const UncertaintySpec d = parse_uncertainty("{}");
  EXPECT_EQ(d.confidence, 0.95);
  EXPECT_FALSE(d.step_time_error_fraction.has_value());
  EXPECT_EQ(d.price_error_fraction, 0);
  const UncertaintySpec u = parse_uncertainty(
      R"({"uncertainty": {"confidence": 0.9, "step_time_error_fraction": 0.1,
          "price_error_fraction": 0.05}})");
  EXPECT_EQ(u.confidence, 0.9);
  EXPECT_EQ(u.step_time_error_fraction, 0.1);
  EXPECT_EQ(u.price_error_fraction, 0.05);
}

TEST(SearchSpecParser, RefusesBadInputWithTheFieldAndValue) {
  auto search_error = [](const std::string& text) {
    return error_message<InputError>([&] { parse_search(text); });
  };
  EXPECT_EQ(search_error(R"({"search": [1]})"),
            "s.json: field \"search\": expected an object, got [1]");
  EXPECT_EQ(search_error(R"({"search": {"speed": 1}})"),
            "s.json: field \"search.speed\": unknown field; known: tensor_parallel, "
            "weight_formats, batching, max_num_seqs, chunk_sizes_tokens, prune, max_rate");
  EXPECT_EQ(search_error(R"({"search": {"tensor_parallel": "auto"}})"),
            "s.json: field \"search.tensor_parallel\": expected \"search\", a non-empty list "
            "of positive integers, or one of those per device kind ({\"gpu\": ..., \"cpu\": "
            "...}), got \"auto\"");
  EXPECT_EQ(search_error(R"({"search": {"tensor_parallel": {"cpu": "all"}}})"),
            "s.json: field \"search.tensor_parallel.cpu\": expected \"search\", a non-empty "
            "list of positive integers, or one of those per device kind ({\"gpu\": ..., "
            "\"cpu\": ...}), got \"all\"");
  EXPECT_THAT(search_error(R"({"search": {"tensor_parallel": {"tpu": [1]}}})"),
              HasSubstr("field \"search.tensor_parallel.tpu\": unknown"));
  EXPECT_EQ(search_error(R"({"search": {"tensor_parallel": [1, 0]}})"),
            "s.json: field \"search.tensor_parallel[1]\": expected a positive integer, got 0");
  EXPECT_EQ(search_error(R"({"search": {"max_num_seqs": []}})"),
            "s.json: field \"search.max_num_seqs\": expected a non-empty list of positive "
            "integers, got []");
  EXPECT_EQ(search_error(R"({"search": {"chunk_sizes_tokens": [512, 512]}})"),
            "s.json: field \"search.chunk_sizes_tokens[1]\": expected a value not listed "
            "before, got 512");
  EXPECT_EQ(search_error(R"({"search": {"weight_formats": ["bf16", "int3"]}})"),
            "s.json: field \"search.weight_formats[1]\": unknown weight format \"int3\"; "
            "known: f32, bf16, fp8, int8, int4, fp8-block, q4_0, q8_0, q4_k_m, q5_k_m, q6_k, "
            "gptq-int4, awq-int4, mxfp4, mxfp4-experts, nvfp4");
  EXPECT_EQ(search_error(R"({"search": {"weight_formats": [8]}})"),
            "s.json: field \"search.weight_formats[0]\": expected a name (string), got 8");
  EXPECT_THAT(search_error(R"({"search": {"batching": ["greedy"]}})"),
              HasSubstr("s.json: field \"search.batching[0]\": unknown batching policy "
                        "\"greedy\"; known: static, continuous, chunked_prefill"));
  EXPECT_EQ(search_error(R"({"search": {"batching": ["static", "static"]}})"),
            "s.json: field \"search.batching[1]\": expected a name not listed before, got "
            "\"static\"");
  EXPECT_EQ(search_error(R"({"search": {"prune": "yes"}})"),
            "s.json: field \"search.prune\": expected true or false, got \"yes\"");

  auto uncertainty_error = [](const std::string& text) {
    return error_message<InputError>([&] { parse_uncertainty(text); });
  };
  EXPECT_EQ(uncertainty_error(R"({"uncertainty": 0.95})"),
            "s.json: field \"uncertainty\": expected an object, got 0.95");
  EXPECT_EQ(uncertainty_error(R"({"uncertainty": {"confidence": 1}})"),
            "s.json: field \"uncertainty.confidence\": expected a number between 0 and 1 "
            "(exclusive), e.g. 0.95, got 1");
  EXPECT_EQ(uncertainty_error(R"({"uncertainty": {"step_time_error_fraction": 1.5}})"),
            "s.json: field \"uncertainty.step_time_error_fraction\": expected a fraction in "
            "[0, 0.9], got 1.5");
  EXPECT_EQ(uncertainty_error(R"({"uncertainty": {"price_error_fraction": -0.1}})"),
            "s.json: field \"uncertainty.price_error_fraction\": expected a fraction in "
            "[0, 0.9], got -0.1");
  EXPECT_EQ(uncertainty_error(R"({"uncertainty": {"seed": 1}})"),
            "s.json: field \"uncertainty.seed\": unknown field; known: confidence, "
            "step_time_error_fraction, price_error_fraction");
}

TEST(SearchSpecParser, ScenarioFileCarriesTheSections) {
  const Scenario s =
      load_scenario(llmcap::testing::data_dir() / "scenarios" / "search-llama3.1-8b.json",
                    llmcap::testing::data_dir());
  EXPECT_TRUE(s.search.enabled);
  EXPECT_TRUE(s.search.tp_search);
  EXPECT_EQ(s.search.weight_formats.size(), 2u);
  EXPECT_EQ(s.uncertainty.price_error_fraction, 0.1);
}

TEST(Search, RefusesAGivenFleetAndAnEmptyConfigurationSet) {
  const model::Catalog catalog = two_type_catalog();
  Scenario s = small_scenario();
  s.search.tp_search = false;
  s.search.policies = {sim::BatchingPolicy::kChunkedPrefill};
  s.search.max_num_seqs = {256};
  s.search.chunk_sizes_tokens = {128};
  EXPECT_THAT(error_message<InputError>([&] { run_search(s, catalog); }),
              HasSubstr("search-test.json: field \"search\": no valid configuration"));
  Scenario f = small_scenario();
  f.fleet = FleetSpec{};
  EXPECT_THAT(error_message<InputError>([&] { run_search(f, catalog); }),
              HasSubstr("search-test.json: field \"search\": a given \"fleet\""));
}

}  // namespace
}  // namespace llmcap::plan
