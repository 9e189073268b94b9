// `--set` overrides of a scenario's fields (app/scenario_overrides.h): which override set a
// field that the scenario's checks refused.
#include "app/scenario_overrides.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace llmcap::app {
namespace {

TEST(OverrideOfField, FindsTheOverrideThatSetTheFieldOrAFieldAroundIt) {
  const std::vector<std::string> overrides = {"slo={\"p50\": 1}", "serving.max_num_seqs=abc",
                                              "workload.classes.0.rate_per_s=-1"};
  EXPECT_EQ(override_of_field(overrides, "serving.max_num_seqs"), "serving.max_num_seqs=abc");
  EXPECT_EQ(override_of_field(overrides, "slo.p50"), "slo={\"p50\": 1}");
  // A scenario's errors name array elements with brackets; the keys with dots.
  EXPECT_EQ(override_of_field(overrides, "workload.classes[0].rate_per_s"),
            "workload.classes.0.rate_per_s=-1");
}

TEST(OverrideOfField, LeavesTheFilesOwnFieldsAlone) {
  const std::vector<std::string> overrides = {"serving.max_num_seqs=8",
                                              "workload.classes.0.rate_per_s=2"};
  EXPECT_EQ(override_of_field(overrides, "serving.max_num_batched_tokens"), "");
  EXPECT_EQ(override_of_field(overrides, "serving"), "");  // a field around the override's
  EXPECT_EQ(override_of_field(overrides, "serving.max_num_seqs_extra"), "");
  EXPECT_EQ(override_of_field(overrides, "workload.classes[1].rate_per_s"), "");
  EXPECT_EQ(override_of_field(overrides, ""), "");
}

TEST(OverrideOfField, TheLastOverrideOfAFieldIsTheOneThatCounts) {
  const std::vector<std::string> overrides = {"tco.currency=EUR", "tco.currency=XYZ"};
  EXPECT_EQ(override_of_field(overrides, "tco.currency"), "tco.currency=XYZ");
}

}  // namespace
}  // namespace llmcap::app
