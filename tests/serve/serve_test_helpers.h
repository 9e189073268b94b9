// Helpers of the serving-loop tests (tests/serve/, tests/cli/serve_bench_test.cpp): a step-time
// predictor easy to work by hand and a request builder.
#pragma once

#include <cstdint>

#include "model/step_time.h"
#include "sim/sim_time.h"
#include "sim/workload.h"

namespace llmcap::serve::testing {

/// Step times that are easy to work by hand: a prefill step costs 10 ms + 1 ms per prompt
/// token, a decode step 5 ms + 1 ms per sequence (+ 1 us per context token and attention pair
/// when `with_context`, so that the randomised comparisons see every term of the shape).
class LinearPredictor final : public model::StepTimePredictor {
 public:
  explicit LinearPredictor(bool with_context = false) : with_context_(with_context) {}
  double step_time_s(const model::BatchShape& b) const override {
    const double c = with_context_ ? 1e-6 : 0.0;
    if (b.num_prefill_seqs > 0) {
      return 0.010 + 0.001 * static_cast<double>(b.num_prefill_tokens) +
             c * static_cast<double>(b.num_prefill_attention_pairs);
    }
    return 0.005 + 0.001 * static_cast<double>(b.num_decode_seqs) +
           c * static_cast<double>(b.num_decode_context_tokens);
  }

 private:
  bool with_context_;
};

inline sim::RequestSpec request(double arrival_s, int64_t prompt, int64_t output) {
  sim::RequestSpec r;
  r.arrival = sim::SimTime::Seconds(arrival_s);
  r.num_prompt_tokens = prompt;
  r.num_output_tokens = output;
  return r;
}

}  // namespace llmcap::serve::testing
