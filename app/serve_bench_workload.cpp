// serve-bench's options and workload (app/serve_bench.h): the checks of the options, the
// default files, the serving configuration, the length and trace scaling and the saturation
// estimate.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <utility>

#include "app/serve_bench.h"
#include "base/text.h"
#include "sim/input_error.h"

namespace llmcap::app {
namespace {

using base::describe;
using sim::SimTime;

constexpr const char* kDefaultModel = "qwen2.5-0.5b.json";
constexpr const char* kDefaultTrace = "AzureLLMInferenceTrace_conv.csv";
constexpr const char* kDefaultLengths = "sharegpt-8k.json";  // a length model, data/workloads/

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

[[noreturn]] void bad_option(const std::string& option, const std::string& expected,
                             const std::string& got) {
  throw sim::InputError("serve-bench: " + option + ": expected " + expected + ", got " + got);
}

}  // namespace

void validate_serve_bench_options(const ServeBenchOptions& a) {
  if (a.arrivals != "trace" && a.arrivals != "poisson") {
    throw sim::InputError("serve-bench: --arrivals: unknown arrival process \"" + a.arrivals +
                          "\"; known: trace, poisson");
  }
  if (a.rate_multipliers.empty() && a.loads.empty()) {
    bad_option("--loads", "at least one load", "none");
  }
  for (const double f : a.loads) {
    if (!(f > 0) || !std::isfinite(f)) bad_option("--loads", "fractions > 0", describe(f));
  }
  for (const double m : a.rate_multipliers) {
    if (!(m > 0) || !std::isfinite(m)) bad_option("--rate-multiplier", "values > 0", describe(m));
  }
  if (!a.rate_multipliers.empty() && a.arrivals != "trace") {
    throw sim::InputError(
        "serve-bench: --rate-multiplier: needs --arrivals trace (Poisson "
        "arrivals are set by --loads)");
  }
  if (!(a.duration_s > 0) || !(a.duration_s <= 3600)) {
    bad_option("--duration-s", "seconds in (0, 3600]", describe(a.duration_s));
  }
  if (!(a.trace_start_s >= 0) || !std::isfinite(a.trace_start_s)) {
    bad_option("--trace-start-s", "seconds >= 0", describe(a.trace_start_s));
  }
  if (!(a.prompt_scale > 0) || !std::isfinite(a.prompt_scale)) {
    bad_option("--prompt-scale", "a factor > 0", describe(a.prompt_scale));
  }
  if (!(a.output_scale > 0) || !std::isfinite(a.output_scale)) {
    bad_option("--output-scale", "a factor > 0", describe(a.output_scale));
  }
  const std::pair<const char*, int64_t> counts[] = {
      {"--max-prompt-tokens", a.max_prompt_tokens},
      {"--max-output-tokens", a.max_output_tokens},
      {"--max-num-seqs", a.max_num_seqs},
      {"--max-num-batched-tokens", a.max_num_batched_tokens},
      {"--block-size", a.block_size_tokens}};
  for (const auto& [name, value] : counts) {
    if (value < 1) bad_option(name, "an integer >= 1", std::to_string(value));
  }
  if (a.max_num_seqs > 256)
    bad_option("--max-num-seqs", "at most 256", std::to_string(a.max_num_seqs));
  if (a.max_prompt_tokens + a.max_output_tokens > 32768) {
    bad_option("--max-prompt-tokens + --max-output-tokens", "at most 32768 tokens",
               std::to_string(a.max_prompt_tokens + a.max_output_tokens));
  }
  if (a.num_kv_blocks < 0) {
    bad_option("--kv-blocks", "an integer >= 0 (0: the default)", std::to_string(a.num_kv_blocks));
  }
  const int64_t longest = ceil_div(a.max_prompt_tokens + a.max_output_tokens, a.block_size_tokens);
  if (a.num_kv_blocks > 0 && a.num_kv_blocks < longest) {
    bad_option("--kv-blocks",
               "at least " + std::to_string(longest) +
                   " (the blocks of the longest request, --max-prompt-tokens + "
                   "--max-output-tokens)",
               std::to_string(a.num_kv_blocks));
  }
  if (a.threads < 0) bad_option("--threads", "an integer >= 1", std::to_string(a.threads));
  if (a.conversation_sample < 1) {
    bad_option("--conversation-sample", "an integer >= 1", std::to_string(a.conversation_sample));
  }
}

std::filesystem::path serve_bench_model_path(const ServeBenchOptions& a,
                                             const std::filesystem::path& data_dir) {
  return a.model.empty() ? data_dir / "models" / kDefaultModel : std::filesystem::path(a.model);
}

std::filesystem::path serve_bench_trace_path(const ServeBenchOptions& a,
                                             const std::filesystem::path& data_dir) {
  if (!a.trace.empty()) return a.trace;
  return a.arrivals == "trace" ? data_dir / "traces" / kDefaultTrace
                               : data_dir / "workloads" / kDefaultLengths;
}

serve::ServeConfig serve_bench_config(const ServeBenchOptions& a) {
  serve::ServeConfig config;
  config.max_num_seqs = a.max_num_seqs;
  config.max_num_batched_tokens = a.max_num_batched_tokens;
  config.block_size_tokens = a.block_size_tokens;
  config.prefix_caching = a.prefix_caching;
  const int64_t max_context = a.max_prompt_tokens + a.max_output_tokens;
  config.num_kv_blocks = a.num_kv_blocks > 0
                             ? a.num_kv_blocks
                             : a.max_num_seqs * ceil_div(max_context, a.block_size_tokens);
  return config;
}

sim::LengthSample scale_lengths(const sim::LengthSample& raw, const ServeBenchOptions& a) {
  const auto scale = [](int64_t n, double factor, int64_t cap) {
    const auto scaled = static_cast<int64_t>(std::llround(static_cast<double>(n) * factor));
    return std::clamp<int64_t>(scaled, 1, cap);
  };
  return {scale(raw.num_prompt_tokens, a.prompt_scale, a.max_prompt_tokens),
          scale(raw.num_output_tokens, a.output_scale, a.max_output_tokens)};
}

std::vector<sim::RequestSpec> scale_trace(const std::vector<sim::RequestSpec>& trace,
                                          double start_s, double rate_per_s, double rate_multiplier,
                                          double duration_s) {
  const SimTime start = SimTime::Seconds(start_s);
  const auto first =
      std::lower_bound(trace.begin(), trace.end(), start,
                       [](const sim::RequestSpec& r, SimTime t) { return r.arrival < t; });
  const auto available = static_cast<int64_t>(trace.end() - first);
  std::vector<sim::RequestSpec> out;
  if (available == 0) {
    throw sim::InputError(
        "serve-bench: --trace-start-s: no request of the trace arrives at or "
        "after " +
        describe(start_s) + " s");
  }
  const double base_s = first->arrival.seconds();
  if (rate_multiplier > 0) {
    for (auto it = first; it != trace.end(); ++it) {
      const double t = (it->arrival.seconds() - base_s) / rate_multiplier;
      if (t >= duration_s) break;
      sim::RequestSpec r = *it;
      r.arrival = SimTime::Seconds(t);
      out.push_back(r);
    }
    return out;
  }
  const int64_t n = std::max<int64_t>(1, std::llround(rate_per_s * duration_s));
  if (available < n + 1) {
    throw sim::InputError("serve-bench: the trace has " + std::to_string(available) +
                          " requests after --trace-start-s " + describe(start_s) + " s; " +
                          std::to_string(n + 1) + " are needed for " + describe(rate_per_s) +
                          " requests/s over --duration-s " + describe(duration_s) +
                          " (lower --trace-start-s, --duration-s or the load)");
  }
  const double span_s = first[n].arrival.seconds() - base_s;
  if (!(span_s > 0)) {
    throw sim::InputError("serve-bench: requests 1 and " + std::to_string(n + 1) +
                          " of the trace segment arrive at the same time; cannot scale it");
  }
  const double k = duration_s / span_s;
  for (int64_t i = 0; i < n; ++i) {
    sim::RequestSpec r = first[i];
    r.arrival = SimTime::Seconds((r.arrival.seconds() - base_s) * k);
    out.push_back(r);
  }
  return out;
}

void scale_prefix_blocks(sim::RequestSpec& r, const ServeBenchOptions& a) {
  if (!r.prefix.keyed()) return;
  const double tokens = static_cast<double>(r.prefix.block_tokens) * a.prompt_scale;
  const auto whole = static_cast<int64_t>(std::llround(tokens));
  if (whole < 1 || std::fabs(tokens - static_cast<double>(whole)) > 1e-9) {
    bad_option("--prompt-scale",
               "a factor that maps the trace's hash blocks of " +
                   std::to_string(r.prefix.block_tokens) + " tokens to a whole number of tokens",
               describe(a.prompt_scale) + " (" + describe(tokens) + " tokens)");
  }
  if (a.prefix_caching && whole % a.block_size_tokens != 0 && a.block_size_tokens % whole != 0) {
    bad_option("--block-size",
               "a divisor or multiple of the scaled hash blocks of " + std::to_string(whole) +
                   " tokens (--prefix-caching)",
               std::to_string(a.block_size_tokens));
  }
  r.prefix.block_tokens = static_cast<int32_t>(whole);
}

ServeBenchWorkload read_serve_bench_workload(const ServeBenchOptions& a,
                                             const std::filesystem::path& data_dir) {
  ServeBenchWorkload w;
  w.trace_arrivals = a.arrivals == "trace";
  w.trace_path = serve_bench_trace_path(a, data_dir);
  if (w.trace_arrivals) {
    std::error_code ec;
    if (a.trace.empty() && !std::filesystem::exists(w.trace_path, ec)) {
      // The public traces are not shipped (docs/traces.md says where to download them).
      throw sim::InputError(w.trace_path.string() +
                            ": cannot open file; the default --arrivals trace replays the Azure "
                            "2023 conversation trace, which llmcap does not ship: download "
                            "AzureLLMInferenceTrace_conv.csv into that folder (docs/traces.md), "
                            "pass --trace FILE, or use --arrivals poisson");
    }
    w.trace = sim::load_trace(w.trace_path);  // .jsonl: Mooncake rows with their hash blocks
    if (a.conversation_sample > 1) {
      // Whole conversations: the rows whose second hash id is a multiple of K.
      const auto drop = [&](const sim::RequestSpec& r) {
        if (!r.prefix.keyed()) {
          bad_option("--conversation-sample", "1 for a trace without hash blocks (a .jsonl one)",
                     std::to_string(a.conversation_sample));
        }
        const auto k = static_cast<uint64_t>(a.conversation_sample);
        return r.prefix.count < 2 || (*r.prefix.hashes)[r.prefix.begin + 1] % k != 0;
      };
      w.trace.erase(std::remove_if(w.trace.begin(), w.trace.end(), drop), w.trace.end());
      if (w.trace.empty()) {
        bad_option("--conversation-sample", "a sample that keeps some row of the trace",
                   std::to_string(a.conversation_sample));
      }
    }
    for (sim::RequestSpec& r : w.trace) {
      const sim::LengthSample s = scale_lengths({r.num_prompt_tokens, r.num_output_tokens}, a);
      r.num_prompt_tokens = s.num_prompt_tokens;
      r.num_output_tokens = s.num_output_tokens;
      scale_prefix_blocks(r, a);
      w.lengths.push_back(s);
    }
    if (!(SimTime::Seconds(a.trace_start_s) <= w.trace.back().arrival)) {
      bad_option("--trace-start-s",
                 "an offset within the trace (its last request arrives at " +
                     describe(w.trace.back().arrival.seconds()) + " s)",
                 describe(a.trace_start_s));
    }
  } else {
    for (const sim::LengthSample& s : sim::load_lengths(w.trace_path)) {
      w.lengths.push_back(scale_lengths(s, a));
    }
  }
  return w;
}

double estimate_saturation_requests_per_s(const std::vector<sim::LengthSample>& lengths,
                                          const serve::ServeConfig& config,
                                          const model::StepTimePredictor& predictor) {
  sim::Workload workload;
  workload.open_loop.reserve(lengths.size());
  for (const sim::LengthSample& s : lengths) {
    sim::RequestSpec r;
    r.num_prompt_tokens = s.num_prompt_tokens;
    r.num_output_tokens = s.num_output_tokens;
    workload.open_loop.push_back(r);
  }
  sim::FleetConfig fleet;
  fleet.serving = config.serving();
  sim::SimOptions options;
  options.record_itl_ns = false;
  const sim::SimResult result = sim::simulate(workload, fleet, predictor, 1, options);
  const auto completed = static_cast<double>(result.requests.size() - result.num_rejected);
  return result.end_time > SimTime::Zero() ? completed / result.end_time.seconds() : 0.0;
}

}  // namespace llmcap::app
