// The one input error type as the scenario readers throw it: the same type behind every alias,
// and the file, field path, value and expected text carried beside the message, so that a front
// end can find the field without reading the message.
#include "model/input_error.h"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "base/error.h"
#include "plan/scenario.h"
#include "sim/input_error.h"

namespace llmcap::plan {
namespace {

static_assert(std::is_same_v<model::InputError, base::InputError>);
static_assert(std::is_same_v<sim::InputError, base::InputError>);
static_assert(std::is_same_v<plan::InputError, base::InputError>);

/// The InputError that reading `body` as the scenario "dir/s.json" throws.
base::InputError error_of(const std::string& body) {
  try {
    load_scenario_text(body, "dir/s.json");
  } catch (const base::InputError& e) {
    return e;
  }
  ADD_FAILURE() << "expected an InputError";
  return base::InputError("");
}

std::string scenario_body(const std::string& workload, const std::string& extra = "") {
  return R"({"name": "s", "model": "m.json", "workload": )" + workload +
         R"(, "slo": {"ttft_p99_s": 2, "tpot_p99_s": 0.05})" + extra + "}";
}

const char* kTrace = R"({"kind": "trace", "path": "t.csv"})";

TEST(ScenarioInputError, ABadNumberCarriesItsFieldPathValueAndExpectation) {
  const base::InputError e =
      error_of(scenario_body(R"({"kind": "trace", "path": "t.csv", "rate_multiplier": -2})"));
  EXPECT_STREQ(
      e.what(),
      "dir/s.json: field \"workload.rate_multiplier\": expected a positive number, got -2");
  EXPECT_EQ(e.file(), "dir/s.json");
  EXPECT_EQ(e.field_path(), "workload.rate_multiplier");
  EXPECT_EQ(e.value(), "-2");
  EXPECT_EQ(e.expected(), "a positive number");
}

TEST(ScenarioInputError, AFleetGroupFieldCarriesTheGroupIndexInItsPath) {
  const base::InputError e =
      error_of(scenario_body(kTrace,
                             R"(, "fleet": {"groups": [{"instance": "a", "count": 1},
                                {"instance": "b", "count": 1, "serving": {"max_num_seqs": 0}}]})"));
  EXPECT_EQ(e.field_path(), "fleet.groups[1].serving.max_num_seqs");
  EXPECT_EQ(e.value(), "0");
  EXPECT_EQ(e.expected(), "a positive integer");
}

TEST(ScenarioInputError, AMissingFieldCarriesItsPath) {
  const base::InputError e = error_of(R"({"name": "s", "model": "m.json", "workload": {}})");
  EXPECT_STREQ(e.what(), "dir/s.json: field \"workload.kind\": missing");
  EXPECT_EQ(e.field_path(), "workload.kind");
}

TEST(ScenarioInputError, TcoAndSearchFieldsCarryTheirPaths) {
  EXPECT_EQ(error_of(scenario_body(kTrace, R"(, "tco": {"hours_per_day": 30})")).field_path(),
            "tco.hours_per_day");
  EXPECT_EQ(error_of(scenario_body(kTrace, R"(, "tco": {"spto": {}})")).field_path(), "tco.spto");
  EXPECT_EQ(error_of(scenario_body(kTrace, R"(, "search": {"max_num_seqs": [0]})")).field_path(),
            "search.max_num_seqs[0]");
}

TEST(ScenarioInputError, AnUnknownNameFromAnotherLibraryPassesThroughUnchanged) {
  // model::parse_weight_format throws model::InputError, which is plan::InputError now.
  const base::InputError e = error_of(scenario_body(kTrace, R"(, "weight_format": "fp3")"));
  EXPECT_STREQ(e.what(),
               "dir/s.json: field \"weight_format\": unknown weight format \"fp3\"; known: f32, "
               "bf16, fp8, int8, int4, fp8-block, q4_0, q8_0, q4_k_m, q5_k_m, q6_k, gptq-int4, "
               "awq-int4, mxfp4, mxfp4-experts, nvfp4");
}

TEST(ScenarioInputError, FileErrorsNameTheFile) {
  try {
    load_scenario("/nonexistent/s.json");
    FAIL() << "expected an InputError";
  } catch (const base::InputError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/s.json: cannot open file");
    EXPECT_EQ(e.file(), "/nonexistent/s.json");
  }
  const base::InputError top = error_of("[1]");
  EXPECT_STREQ(top.what(), "dir/s.json: expected a JSON object at the top level");
}

}  // namespace
}  // namespace llmcap::plan
