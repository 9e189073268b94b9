#include "serve/serving_loop.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "serve/scheduler.h"
#include "sim/input_error.h"

namespace llmcap::serve {

using sim::SimTime;

void validate_serve(const std::vector<sim::RequestSpec>& arrivals, const ServeConfig& config) {
  const std::pair<const char*, int64_t> limits[] = {
      {"max_num_seqs", config.max_num_seqs},
      {"max_num_batched_tokens", config.max_num_batched_tokens},
      {"block_size_tokens", config.block_size_tokens},
      {"num_kv_blocks", config.num_kv_blocks}};
  for (const auto& [name, value] : limits) {
    if (value < 1) {
      throw sim::InputError(std::string("serve: ") + name + ": expected a positive integer, got " +
                            std::to_string(value));
    }
  }
  const auto policy = static_cast<int>(config.policy);
  if (policy < static_cast<int>(sim::BatchingPolicy::kStatic) ||
      policy > static_cast<int>(sim::BatchingPolicy::kChunkedPrefill)) {
    throw sim::InputError(
        "serve: policy: expected static, continuous or chunked_prefill, got value " +
        std::to_string(policy));
  }
  if (config.policy == sim::BatchingPolicy::kChunkedPrefill &&
      config.max_num_batched_tokens < config.max_num_seqs) {
    throw sim::InputError(
        "serve: max_num_batched_tokens: chunked_prefill gives every running decode one token of "
        "the step's budget, so it must be >= max_num_seqs (" +
        std::to_string(config.max_num_seqs) + "), got " +
        std::to_string(config.max_num_batched_tokens));
  }
  for (size_t i = 0; i < arrivals.size(); ++i) {
    const sim::RequestSpec& r = arrivals[i];
    if (r.arrival < SimTime::Zero() || r.num_prompt_tokens < 1 || r.num_output_tokens < 1) {
      throw sim::InputError("serve: arrivals[" + std::to_string(i) +
                            "]: expected arrival >= 0 and prompt and output tokens >= 1, got "
                            "arrival " +
                            std::to_string(r.arrival.ns()) + " ns, " +
                            std::to_string(r.num_prompt_tokens) + " and " +
                            std::to_string(r.num_output_tokens) + " tokens");
    }
    const sim::PrefixIdentity& prefix = r.prefix;
    if (config.prefix_caching && prefix.keyed()) {
      const int64_t block = prefix.block_tokens, engine = config.block_size_tokens;
      if (block % engine != 0 && engine % block != 0) {
        throw sim::InputError("serve: arrivals[" + std::to_string(i) +
                              "].prefix.block_tokens: " + std::to_string(block) +
                              " tokens per keyed block neither divides nor is a multiple of "
                              "block_size_tokens " +
                              std::to_string(engine));
      }
      const int64_t hashed = prefix.hashes ? static_cast<int64_t>(prefix.hashes->size()) : 0;
      if (prefix.count < 0 || prefix.begin < 0 || prefix.begin + prefix.count > hashed) {
        throw sim::InputError("serve: arrivals[" + std::to_string(i) + "].prefix: hashes [" +
                              std::to_string(prefix.begin) + ", " +
                              std::to_string(prefix.begin + prefix.count) + ") outside the " +
                              std::to_string(hashed) + " hashes given");
      }
    }
    if (i > 0 && r.arrival < arrivals[i - 1].arrival) {
      throw sim::InputError("serve: arrivals[" + std::to_string(i) +
                            "]: not sorted (arrives before arrivals[" + std::to_string(i - 1) +
                            "])");
    }
  }
}

ServeResult serve(const std::vector<sim::RequestSpec>& arrivals, const ServeConfig& config,
                  StepExecutor& executor, ServeClock& clock) {
  validate_serve(arrivals, config);
  ServeResult result;
  Scheduler scheduler(arrivals, config, result.records);
  const auto n = static_cast<int64_t>(arrivals.size());
  int64_t next = 0;  // next arrival to take in
  SimTime end_time = SimTime::Zero();
  double overhead_sum_s = 0;
  int64_t overhead_count = 0;
  bool previous_busy = false;  // the previous iteration ran a step and no wait followed
  while (scheduler.num_done() < n) {
    const SimTime now = clock.now();
    for (; next < n && arrivals[static_cast<size_t>(next)].arrival <= now; ++next) {
      scheduler.arrive(next);
      end_time = std::max(end_time, arrivals[static_cast<size_t>(next)].arrival);
    }
    if (scheduler.idle()) {
      if (next >= n) {
        if (scheduler.num_done() < n) {
          throw std::logic_error("serve: requests left with nothing to run");
        }
        break;
      }
      clock.wait_until(arrivals[static_cast<size_t>(next)].arrival);
      previous_busy = false;
      continue;
    }
    if (previous_busy) {
      const ServeStepLog& prev = result.steps.back();
      overhead_sum_s += (now - prev.start).seconds() - (prev.end - prev.exec_start).seconds();
      ++overhead_count;
    }
    const ServeStep step = scheduler.compose(now);
    ServeStepLog log;
    log.start = now;
    log.prefill = step.shape.num_prefill_seqs > 0;
    log.shape = step.shape;
    for (const ServeStepItem& item : step.items) log.requests.push_back(item.request);
    log.exec_start = clock.now();
    executor.execute(step);
    const SimTime end = clock.now();
    log.end = end;
    result.steps.push_back(std::move(log));
    ++result.records.num_steps;
    scheduler.finish_step(step, end);
    end_time = std::max(end_time, end);
    previous_busy = true;
  }
  scheduler.check_blocks_returned();
  result.records.end_time = end_time;
  result.loop_overhead_s = overhead_count > 0 ? overhead_sum_s / overhead_count : 0.0;
  return result;
}

}  // namespace llmcap::serve
