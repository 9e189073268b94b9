// Helpers of the simulator tests: a predictor that records every step, shape builders and
// request builders.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "model/step_time.h"
#include "sim/input_error.h"
#include "sim/simulator.h"
#include "sim/workload.h"
#include "test_util.h"

namespace llmcap::sim::testing {

/// step time = base_s + per_token_s x (new tokens of the step). Records every shape and step
/// time it returns, in call order (= step order). Not thread-safe.
class RecordingPredictor : public model::StepTimePredictor {
 public:
  RecordingPredictor(double base_s, double per_token_s)
      : base_s_(base_s), per_token_s_(per_token_s) {}
  double step_time_s(const model::BatchShape& batch) const override {
    const double s = base_s_ + per_token_s_ * static_cast<double>(batch.num_new_tokens());
    shapes.push_back(batch);
    step_s.push_back(s);
    return s;
  }
  void clear() const {
    shapes.clear();
    step_s.clear();
  }
  mutable std::vector<model::BatchShape> shapes;
  mutable std::vector<double> step_s;

 private:
  double base_s_;
  double per_token_s_;
};

/// Whether two runs' records and counts (end time, steps, preemptions, rejections) agree.
inline bool same_records(const SimResult& a, const SimResult& b) {
  if (a.requests.size() != b.requests.size()) return false;
  for (size_t i = 0; i < a.requests.size(); ++i) {
    const RequestRecord& x = a.requests[i];
    const RequestRecord& y = b.requests[i];
    if (!(x.id == y.id && x.replica == y.replica && x.client_class == y.client_class &&
          x.arrival == y.arrival && x.first_scheduled == y.first_scheduled &&
          x.first_token == y.first_token && x.completion == y.completion &&
          x.num_prompt_tokens == y.num_prompt_tokens &&
          x.num_output_tokens == y.num_output_tokens && x.num_preemptions == y.num_preemptions &&
          x.max_itl == y.max_itl && x.rejected == y.rejected)) {
      return false;
    }
  }
  return a.end_time == b.end_time && a.num_steps == b.num_steps &&
         a.num_preemptions == b.num_preemptions && a.num_rejected == b.num_rejected;
}

/// Writes `content` to a fresh file of a scratch folder kept for the whole test program.
inline std::filesystem::path write_temp(const std::string& name, const std::string& content) {
  static const llmcap::testing::TempDir scratch;
  static std::atomic<int> counter{0};
  return scratch.write(std::to_string(counter++) + "_" + name, content);
}

/// The message of the InputError thrown by `f`; fails the test if none is thrown.
template <typename F>
std::string error_of(F&& f) {
  return llmcap::testing::error_message<InputError>(std::forward<F>(f));
}

inline SimTime ms(double v) { return SimTime::MilliSeconds(v); }

inline RequestSpec request(double arrival_ms, int64_t num_prompt_tokens,
                           int64_t num_output_tokens) {
  RequestSpec r;
  r.arrival = ms(arrival_ms);
  r.num_prompt_tokens = num_prompt_tokens;
  r.num_output_tokens = num_output_tokens;
  return r;
}

inline Workload open_loop(std::vector<RequestSpec> requests) {
  Workload w;
  w.open_loop = std::move(requests);
  return w;
}

inline FleetConfig one_replica(BatchingPolicy policy, int64_t block_size_tokens,
                               int64_t num_kv_blocks) {
  FleetConfig fleet;
  fleet.num_replicas = 1;
  fleet.serving.policy = policy;
  fleet.serving.block_size_tokens = block_size_tokens;
  fleet.serving.num_kv_blocks = num_kv_blocks;
  return fleet;
}

/// A step of prefill chunks only: `pairs` attention pairs, `cached` tokens before the chunks,
/// `completing` chunks that end their prefill.
inline model::BatchShape chunks(int64_t seqs, int64_t tokens, int64_t pairs, int64_t cached,
                                int64_t completing) {
  model::BatchShape s;
  s.num_prefill_seqs = seqs;
  s.num_prefill_tokens = tokens;
  s.num_prefill_attention_pairs = pairs;
  s.num_prefill_cached_tokens = cached;
  s.num_prefill_seqs_completing = completing;
  return s;
}

/// A step of whole prefills (no cached tokens, every one completing).
inline model::BatchShape prefill(int64_t seqs, int64_t tokens, int64_t pairs) {
  return chunks(seqs, tokens, pairs, 0, seqs);
}

inline model::BatchShape decode(int64_t seqs, int64_t context_tokens) {
  model::BatchShape s;
  s.num_decode_seqs = seqs;
  s.num_decode_context_tokens = context_tokens;
  return s;
}

/// `a` with the decode part of `d`: a mixed step.
inline model::BatchShape mixed(model::BatchShape a, const model::BatchShape& d) {
  a.num_decode_seqs = d.num_decode_seqs;
  a.num_decode_context_tokens = d.num_decode_context_tokens;
  a.num_decode_draft_tokens = d.num_decode_draft_tokens;
  a.num_decode_draft_attention_pairs = d.num_decode_draft_attention_pairs;
  return a;
}

/// A decode step of `seqs` sequences of `context_tokens` context in all, each verifying
/// `drafts` draft tokens (speculative decoding): drafts x context + seqs x drafts (drafts +
/// 1) / 2 draft attention pairs.
inline model::BatchShape verify(int64_t seqs, int64_t context_tokens, int64_t drafts) {
  model::BatchShape s = decode(seqs, context_tokens);
  s.num_decode_draft_tokens = seqs * drafts;
  s.num_decode_draft_attention_pairs = drafts * context_tokens + seqs * drafts * (drafts + 1) / 2;
  return s;
}

inline bool same_shape(const model::BatchShape& a, const model::BatchShape& b) {
  return a.num_prefill_seqs == b.num_prefill_seqs && a.num_prefill_tokens == b.num_prefill_tokens &&
         a.num_prefill_attention_pairs == b.num_prefill_attention_pairs &&
         a.num_prefill_cached_tokens == b.num_prefill_cached_tokens &&
         a.num_prefill_seqs_completing == b.num_prefill_seqs_completing &&
         a.num_decode_seqs == b.num_decode_seqs &&
         a.num_decode_context_tokens == b.num_decode_context_tokens &&
         a.num_decode_draft_tokens == b.num_decode_draft_tokens &&
         a.num_decode_draft_attention_pairs == b.num_decode_draft_attention_pairs;
}

inline std::ostream& print_shape(std::ostream& out, const model::BatchShape& s) {
  return out << "{prefill seqs " << s.num_prefill_seqs << ", tokens " << s.num_prefill_tokens
             << ", pairs " << s.num_prefill_attention_pairs << ", cached "
             << s.num_prefill_cached_tokens << ", completing " << s.num_prefill_seqs_completing
             << "; decode seqs " << s.num_decode_seqs << ", context " << s.num_decode_context_tokens
             << ", drafts " << s.num_decode_draft_tokens << ", draft pairs "
             << s.num_decode_draft_attention_pairs << "}";
}

inline void expect_shapes(const std::vector<model::BatchShape>& actual,
                          const std::vector<model::BatchShape>& expected) {
  ASSERT_EQ(actual.size(), expected.size()) << "number of steps";
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!same_shape(actual[i], expected[i])) {
      std::ostringstream got;
      std::ostringstream want;
      print_shape(got, actual[i]);
      print_shape(want, expected[i]);
      ADD_FAILURE() << "step " << i << ": got " << got.str() << ", expected " << want.str();
    }
  }
}

/// Output tokens the steps emitted: one per decode and one per completed prefill.
inline int64_t emitted_tokens(const std::vector<model::BatchShape>& shapes) {
  int64_t n = 0;
  for (const model::BatchShape& s : shapes) n += s.num_prefill_seqs_completing + s.num_decode_seqs;
  return n;
}

}  // namespace llmcap::sim::testing
