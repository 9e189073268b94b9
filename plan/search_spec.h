// The scenario's "search" and "uncertainty" sections: which serving configurations the planner
// tries per instance type, and how sure the answer is (issue 5, items 1 and 2; format in
// docs/scenarios.md).
#pragma once

#include <string>

namespace llmcap::plan {

/// The configuration search. Default: off (the scenario's one configuration per type).
struct SearchSpec {
  bool enabled = false;
  // Helper B extends this struct (formats, max_num_seqs, chunk sizes, policies, TP degrees).
};

/// The uncertainty carried to the answer.
struct UncertaintySpec {
  double confidence = 0.95;  ///< of the reported ranges
  // Helper B extends this struct (step-time error, price error).
};

}  // namespace llmcap::plan
