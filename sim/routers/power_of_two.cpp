// kPowerOfTwo: power of two choices (Mitzenmacher, IEEE TPDS 2001). With one replica that can
// hold the request, it; otherwise, over the m that can, a = index(m), b = index(m - 1),
// b += (b >= a) from the router's stream (two distinct replicas), the one with fewer
// outstanding requests; ties go to the lower index.
#include <algorithm>
#include <memory>

#include "sim/random.h"
#include "sim/router.h"

namespace llmcap::sim {
namespace {

class PowerOfTwoRouter final : public Router {
 public:
  explicit PowerOfTwoRouter(uint64_t stream_seed) : stream_(stream_seed, Stream::kRouter) {}

  int64_t choose(const Pool& pool, const std::vector<Replica>& /*replicas*/,
                 int64_t tokens) override {
    // Two distinct replicas among those that fit (all of them, in a homogeneous fleet).
    const auto n = static_cast<int64_t>(pool.replicas.size());
    int64_t m = n;
    const int64_t* candidates = nullptr;
    if (!pool.all_fit(tokens)) {
      eligible_.clear();
      for (int64_t position = 0; position < n; ++position) {
        if (pool.fits(position, tokens)) eligible_.push_back(position);
      }
      m = static_cast<int64_t>(eligible_.size());
      candidates = eligible_.data();
    }
    const auto position = [&](int64_t k) { return candidates ? candidates[k] : k; };
    if (m == 1) return position(0);
    const auto a = static_cast<int64_t>(stream_.index(static_cast<uint64_t>(m)));
    auto b = static_cast<int64_t>(stream_.index(static_cast<uint64_t>(m - 1)));
    if (b >= a) ++b;
    const int64_t lo = position(std::min(a, b));
    const int64_t hi = position(std::max(a, b));
    return pool.outstanding[hi] < pool.outstanding[lo] ? hi : lo;
  }

 private:
  RandomStream stream_;
  std::vector<int64_t> eligible_;  ///< scratch: positions that can hold the request
};

}  // namespace

std::unique_ptr<Router> make_power_of_two_router(uint64_t stream_seed) {
  return std::make_unique<PowerOfTwoRouter>(stream_seed);
}

}  // namespace llmcap::sim
