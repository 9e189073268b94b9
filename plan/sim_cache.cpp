#include "plan/sim_cache.h"

#include <cstring>
#include <exception>
#include <filesystem>
#include <system_error>
#include <type_traits>
#include <utility>

namespace llmcap::plan::detail {
namespace {

/// Appends the bytes of values to a key: exact (a double's bits, not a decimal rounding).
class KeyWriter {
 public:
  template <typename T>
  KeyWriter& add(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    char bytes[sizeof(T)];
    std::memcpy(bytes, &v, sizeof(T));
    key_.append(bytes, sizeof(T));
    return *this;
  }
  KeyWriter& add(const std::string& s) {
    add(s.size());
    key_ += s;
    return *this;
  }
  std::string take() { return std::move(key_); }

 private:
  std::string key_;
};

/// A model file's size and last write time (none for an empty path or a missing file): a file
/// rewritten while a SharedSimulations is held (the GUI keeps one per window) is another context.
void add_file_stamp(KeyWriter& k, const std::filesystem::path& file) {
  std::error_code error;
  if (file.empty() || !std::filesystem::is_regular_file(file, error)) {
    k.add(int64_t{-1});
    return;
  }
  std::error_code size_error, time_error;
  const auto size = std::filesystem::file_size(file, size_error);
  const auto written = std::filesystem::last_write_time(file, time_error);
  k.add(static_cast<int64_t>(size_error ? 0 : size))
      .add(static_cast<int64_t>(time_error ? 0 : written.time_since_epoch().count()));
}

}  // namespace

std::string simulation_key(const model::Deployment& d, const model::Efficiency& e,
                           model::WeightFormat weight_format, const sim::FleetConfig& fleet,
                           int64_t num_replicas, bool stop_at_certain_miss) {
  if (e.calibrated.has_value() || !fleet.groups.empty()) return "";
  // A field added to one of these structs must be added to the key: these sizes say so.
  static_assert(sizeof(model::Efficiency) == 8 * sizeof(double) + sizeof(e.calibrated),
                "simulation_key: add the new Efficiency field to the key");
  static_assert(sizeof(sim::ServingConfig) ==
                    sizeof(sim::BatchingPolicy) + 4 + 4 * sizeof(int64_t) + sizeof(sim::KvLayout) +
                        8 +  // prefix_caching, longest_prefix_first, allocate_per_chunk, padded
                        sizeof(sim::KvOffloadConfig) + sizeof(sim::SpeculativeConfig),
                "simulation_key: add the new ServingConfig field to the key");
  KeyWriter k;
  k.add(d.kind).add(d.tp_degree).add(d.memory_bandwidth_bytes_per_s);
  k.add(d.peak_flops_per_s.size());
  for (const auto& [dtype, flops] : d.peak_flops_per_s) k.add(dtype).add(flops);
  k.add(d.link_bandwidth_bytes_per_s).add(d.memory_bytes).add(d.weight_bytes);
  k.add(d.kv_cache_bytes).add(d.expert_parallel);
  k.add(e.memory_bandwidth_fraction).add(e.compute_fraction).add(e.link_bandwidth_fraction);
  k.add(e.all_reduce_latency_s).add(e.step_overhead_s).add(e.kernel_overhead_s);
  k.add(e.decode_compute_fraction).add(e.usable_memory_fraction);
  k.add(weight_format);
  const sim::ServingConfig& s = fleet.serving;
  k.add(s.policy).add(s.max_num_seqs).add(s.max_num_batched_tokens).add(s.block_size_tokens);
  k.add(s.num_kv_blocks).add(s.kv_layout.full_units_per_block).add(s.kv_layout.windows.size());
  for (const sim::KvWindowGroup& w : s.kv_layout.windows) {
    k.add(w.window_blocks).add(w.units_per_block);
  }
  k.add(s.prefix_caching).add(s.longest_prefix_first).add(s.allocate_per_chunk);
  static_assert(sizeof(sim::KvOffloadConfig) == 3 * 8, "simulation_key: add the new field");
  k.add(s.kv_offload.num_host_blocks).add(s.kv_offload.host_link_bytes_per_s);
  k.add(s.kv_offload.block_bytes);
  static_assert(sizeof(sim::SpeculativeConfig) == sizeof(int64_t) + sizeof(std::vector<double>),
                "simulation_key: add the new SpeculativeConfig field to the key");
  k.add(s.speculative.num_draft_tokens).add(s.speculative.acceptance_rates.size());
  for (const double a : s.speculative.acceptance_rates) k.add(a);
  k.add(fleet.router).add(fleet.decode_router).add(fleet.kv_bytes_per_token);
  k.add(fleet.frontend_latency.ns());
  k.add(num_replicas).add(stop_at_certain_miss);
  return k.take();
}

FleetEvaluation SimulationCache::get_or_run(const std::string& key,
                                            const std::function<FleetEvaluation()>& run) {
  if (key.empty()) return run();
  std::promise<FleetEvaluation> promise;
  std::shared_future<FleetEvaluation> future;
  {
    const std::lock_guard lock(mutex_);
    const auto it = runs_.find(key);
    if (it != runs_.end()) {
      future = it->second;
    } else {
      runs_.emplace(key, promise.get_future().share());
    }
  }
  if (future.valid()) return future.get();  // run (or running) elsewhere: wait for it
  try {
    FleetEvaluation e = run();
    promise.set_value(e);
    return e;
  } catch (...) {
    {
      const std::lock_guard lock(mutex_);
      runs_.erase(key);
    }
    promise.set_exception(std::current_exception());
    throw;
  }
}

std::string context_fingerprint(const Scenario& scenario, const model::ModelSpec& model,
                                const sim::Workload& workload,
                                const std::vector<sim::Slo>& class_slos, double step_time_scale,
                                bool record_itl, const model::CalibrationProfile* calibration) {
  if (workload.closed_loop) return "";
  KeyWriter k;
  k.add(scenario.model_config.string()).add(model.id).add(model.num_params());
  add_file_stamp(k, scenario.model_config);
  k.add(scenario.kv_format).add(scenario.seed).add(step_time_scale).add(record_itl);
  // The draft that prices speculative decoding (the serving key has k and the rates).
  const SpeculativeSpec& spec = scenario.speculative;
  k.add(spec.on()).add(spec.method).add(spec.draft_layers).add(spec.draft_model_config.string());
  add_file_stamp(k, spec.draft_model_config);
  k.add(reinterpret_cast<uintptr_t>(calibration));
  k.add(class_slos.size());
  for (const sim::Slo& slo : class_slos) k.add(slo.ttft_s).add(slo.tpot_s);
  // The requests as a 64-bit FNV-1a hash and their count.
  uint64_t h = 14695981039346656037ULL;
  const auto mix = [&h](int64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= static_cast<uint64_t>(v >> (8 * i)) & 0xff;
      h *= 1099511628211ULL;
    }
  };
  for (const sim::RequestSpec& r : workload.open_loop) {
    mix(r.arrival.ns());
    mix(r.num_prompt_tokens);
    mix(r.num_output_tokens);
    mix(r.client_class);
    mix(r.prefix.block_tokens);
    if (r.prefix.keyed()) {
      mix(static_cast<int64_t>(r.prefix.stream));
      mix(r.prefix.count);
      for (int64_t j = 0; j < r.prefix.count; ++j) {
        mix(static_cast<int64_t>((*r.prefix.hashes)[r.prefix.begin + j]));
      }
    }
  }
  k.add(workload.open_loop.size()).add(h);
  return k.take();
}

int64_t SimulationCache::num_run() const {
  const std::lock_guard lock(mutex_);
  return static_cast<int64_t>(runs_.size());
}

}  // namespace llmcap::plan::detail

namespace llmcap::plan {

detail::SimulationCache& SharedSimulations::for_context(const std::string& fingerprint) {
  const std::lock_guard lock(mutex_);
  std::unique_ptr<detail::SimulationCache>& cache = caches_[fingerprint];
  if (cache == nullptr) cache = std::make_unique<detail::SimulationCache>();
  return *cache;
}

size_t SharedSimulations::num_contexts() const {
  const std::lock_guard lock(mutex_);
  return caches_.size();
}

int64_t SharedSimulations::num_run() const {
  const std::lock_guard lock(mutex_);
  int64_t n = 0;
  for (const auto& [fingerprint, cache] : caches_) n += cache->num_run();
  return n;
}

std::shared_ptr<SharedSimulations> make_shared_simulations() {
  return std::make_shared<SharedSimulations>();
}

}  // namespace llmcap::plan
