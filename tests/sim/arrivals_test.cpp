// Arrival processes (Poisson, Gamma, Weibull), the 24-hour load profile, client-class merging
// and the random transforms behind them (sim/random.h, sim/workload.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <memory>
#include <numbers>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "sim/input_error.h"
#include "sim/prefix_keys.h"
#include "sim/random.h"
#include "sim/workload.h"
#include "test_util.h"

namespace llmcap::sim {
namespace {

using ::testing::HasSubstr;

/// Statistical checks allow this many standard deviations of the estimate: with a dozen
/// such checks on fixed seeds, a correct sampler fails none of them by chance (and, being
/// seeded, either always passes or always fails).
constexpr double kSigmas = 5.0;

/// The message of the InputError thrown by `f`; fails the test if none is thrown.
template <typename F>
std::string error_of(F&& f) {
  return llmcap::testing::error_message<InputError>(std::forward<F>(f));
}

struct Moments {
  double mean = 0;
  double cv = 0;  ///< sample standard deviation / mean
};

Moments moments(const std::vector<double>& xs) {
  double sum = 0;
  for (const double x : xs) sum += x;
  const double mean = sum / static_cast<double>(xs.size());
  double sum_sq = 0;
  for (const double x : xs) sum_sq += (x - mean) * (x - mean);
  return {mean, std::sqrt(sum_sq / static_cast<double>(xs.size() - 1)) / mean};
}

/// Gaps between consecutive arrivals, the first measured from 0, in seconds.
std::vector<double> gaps_s(const std::vector<RequestSpec>& requests) {
  std::vector<double> gaps;
  SimTime previous = SimTime::Zero();
  for (const RequestSpec& r : requests) {
    gaps.push_back((r.arrival - previous).seconds());
    previous = r.arrival;
  }
  return gaps;
}

const std::vector<LengthSample> kLengths = {{10, 20}, {30, 40}, {50, 60}};

ArrivalOptions options(ArrivalProcessKind kind, double rate_per_s, int64_t num_requests) {
  ArrivalOptions o;
  o.process.kind = kind;
  o.rate_per_s = rate_per_s;
  o.num_requests = num_requests;
  return o;
}

// ---- the transforms ---------------------------------------------------------------------------

TEST(RandomStreamTest, GammaHasShapeTimesScaleMeanBelowAndAboveShapeOne) {
  // Shape < 1 goes through the boost U^(1/alpha); shape >= 1 through Marsaglia-Tsang directly.
  constexpr int kNum = 200'000;
  for (const double alpha : {0.25, 1.0, 4.5}) {
    SCOPED_TRACE(alpha);
    RandomStream stream(3, Stream::kInterArrival);
    constexpr double kTheta = 0.2;
    std::vector<double> xs;
    for (int i = 0; i < kNum; ++i) xs.push_back(stream.gamma(alpha, kTheta));
    const Moments m = moments(xs);
    const double expected_cv = 1.0 / std::sqrt(alpha);
    // The sample mean has relative sd cv / sqrt(n) (0.45% at alpha 0.25).
    EXPECT_NEAR(m.mean, alpha * kTheta, kSigmas * expected_cv / std::sqrt(kNum) * alpha * kTheta);
    // The sample CV: relative sd about sqrt((kurtosis - 1) / n) / 2 + that of the mean, with
    // kurtosis 3 + 6 / alpha: 1.0% at alpha 0.25. 4% covers every shape here.
    constexpr double kCvRelTolerance = 0.04;
    EXPECT_NEAR(m.cv, expected_cv, kCvRelTolerance * expected_cv);
  }
}

TEST(RandomStreamTest, WeibullMeanAndCvFollowTheGammaFunction) {
  constexpr int kNum = 200'000;
  constexpr double kLambda = 3.0;
  for (const double k : {0.5, 1.0, 2.0}) {
    SCOPED_TRACE(k);
    RandomStream stream(5, Stream::kInterArrival);
    std::vector<double> xs;
    for (int i = 0; i < kNum; ++i) xs.push_back(stream.weibull(k, kLambda));
    const Moments m = moments(xs);
    // k = 0.5: mean 2 lambda, CV sqrt(Gamma(5) / Gamma(3)^2 - 1) = sqrt(5); k = 1: mean
    // lambda, CV 1; k = 2: mean lambda sqrt(pi) / 2, CV sqrt(4 / pi - 1).
    const double g1 = std::tgamma(1 + 1 / k);
    const double g2 = std::tgamma(1 + 2 / k);
    const double expected_cv = std::sqrt(g2 / (g1 * g1) - 1);
    EXPECT_NEAR(m.mean, kLambda * g1, kSigmas * expected_cv / std::sqrt(kNum) * kLambda * g1);
    // Worst case k = 0.5: kurtosis 87.7, so the sample CV has relative sd ~1.6%.
    constexpr double kCvRelTolerance = 0.08;
    EXPECT_NEAR(m.cv, expected_cv, kCvRelTolerance * expected_cv);
  }
}

TEST(RandomStreamTest, StandardNormalHasZeroMeanUnitVariance) {
  constexpr int kNum = 200'000;
  RandomStream stream(9, Stream::kInterArrival);
  double sum = 0, sum_sq = 0;
  for (int i = 0; i < kNum; ++i) {
    const double x = stream.standard_normal();
    sum += x;
    sum_sq += x * x;
  }
  // Mean: sd 1/sqrt(n). Variance: sd sqrt(2/n).
  EXPECT_NEAR(sum / kNum, 0.0, kSigmas / std::sqrt(kNum));
  EXPECT_NEAR(sum_sq / kNum, 1.0, kSigmas * std::sqrt(2.0 / kNum));
}

TEST(RandomStreamTest, SubstreamZeroIsTheSeedItself) {
  EXPECT_EQ(substream_seed(42, 0), 42u);
  EXPECT_NE(substream_seed(42, 1), 42u);
  EXPECT_NE(substream_seed(42, 1), substream_seed(42, 2));
  EXPECT_NE(substream_seed(42, 1), substream_seed(43, 1));
}

// ---- arrival processes ------------------------------------------------------------------------

struct ProcessCase {
  const char* name;
  ArrivalProcess process;
  double expected_cv;  ///< CV of the gaps
  double cv_rel_tolerance;
};

void PrintTo(const ProcessCase& c, std::ostream* os) { *os << c.name; }

class ArrivalProcessTest : public ::testing::TestWithParam<ProcessCase> {};

TEST_P(ArrivalProcessTest, MeanRateAndGapCvMatchRequested) {
  const ProcessCase& c = GetParam();
  constexpr int64_t kNum = 200'000;
  constexpr double kRate = 10.0;
  ArrivalOptions o = options(c.process.kind, kRate, kNum);
  o.process = c.process;
  const auto requests = generate_arrivals(o, kLengths, 17);
  ASSERT_EQ(requests.size(), static_cast<size_t>(kNum));
  const Moments m = moments(gaps_s(requests));
  // The mean gap of n gaps has relative sd cv / sqrt(n): 0.45% at CV 2.
  const double mean_rel_tolerance = kSigmas * c.expected_cv / std::sqrt(kNum);
  EXPECT_NEAR(m.mean, 1.0 / kRate, mean_rel_tolerance / kRate);
  // The rate is 1 / mean gap: a relative error d of the mean is one of d / (1 - d) at most.
  const double measured_rate = kNum / requests.back().arrival.seconds();
  EXPECT_NEAR(measured_rate, kRate, kRate * mean_rel_tolerance / (1 - mean_rel_tolerance));
  EXPECT_NEAR(m.cv, c.expected_cv, c.cv_rel_tolerance * c.expected_cv);
  // Lengths are drawn uniformly from the sample and stay paired.
  int64_t num_first = 0;
  for (const RequestSpec& r : requests) {
    EXPECT_EQ(r.num_output_tokens, r.num_prompt_tokens + 10);
    EXPECT_EQ(r.client_class, 0);
    num_first += r.num_prompt_tokens == 10;
  }
  // Binomial(n, 1/3): sd sqrt(n * 2/9) = 211.
  EXPECT_NEAR(num_first, kNum / 3, kSigmas * std::sqrt(kNum * 2.0 / 9.0));
}

INSTANTIATE_TEST_SUITE_P(
    Processes, ArrivalProcessTest,
    ::testing::Values(
        // Exponential gaps: CV 1; the sample CV has relative sd ~0.35% (kurtosis 9).
        ProcessCase{"Poisson", {ArrivalProcessKind::kPoisson, 1.0, 1.0}, 1.0, 0.02},
        // Gamma, CV 2 (shape 0.25): sample CV relative sd ~1.0%.
        ProcessCase{"GammaCv2", {ArrivalProcessKind::kGamma, 2.0, 1.0}, 2.0, 0.04},
        // Gamma, CV 0.5 (shape 4): more regular than Poisson; relative sd ~0.3%.
        ProcessCase{"GammaCvHalf", {ArrivalProcessKind::kGamma, 0.5, 1.0}, 0.5, 0.02},
        // Weibull k = 0.5: CV sqrt(5); relative sd ~1.6% (kurtosis 87.7).
        ProcessCase{
            "WeibullShapeHalf", {ArrivalProcessKind::kWeibull, 1.0, 0.5}, std::sqrt(5.0), 0.08},
        // Weibull k = 2: CV sqrt(4/pi - 1) = 0.523.
        ProcessCase{"WeibullShape2",
                    {ArrivalProcessKind::kWeibull, 1.0, 2.0},
                    std::sqrt(4.0 / std::numbers::pi - 1.0),
                    0.02}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(GenerateArrivalsTest, PoissonIsExactlyPoissonArrivals) {
  // poisson_arrivals is the kPoisson case: the same streams, the same numbers.
  const auto a = poisson_arrivals(4.0, 2000, kLengths, 99);
  const auto b = generate_arrivals(options(ArrivalProcessKind::kPoisson, 4.0, 2000), kLengths, 99);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].arrival, b[i].arrival) << i;
    ASSERT_EQ(a[i].num_prompt_tokens, b[i].num_prompt_tokens) << i;
  }
}

TEST(GenerateArrivalsTest, SameSeedSameArrivalsOtherSeedOthers) {
  for (const ArrivalProcessKind kind :
       {ArrivalProcessKind::kPoisson, ArrivalProcessKind::kGamma, ArrivalProcessKind::kWeibull}) {
    SCOPED_TRACE(std::string(to_string(kind)));
    ArrivalOptions o = options(kind, 2.0, 3000);
    o.process.cv = 3.0;
    o.process.weibull_shape = 0.7;
    o.hourly_multipliers.assign(kHoursPerDay, 1.0);
    o.hourly_multipliers[0] = 5.0;
    const auto a = generate_arrivals(o, kLengths, 7);
    const auto b = generate_arrivals(o, kLengths, 7);
    const auto c = generate_arrivals(o, kLengths, 8);
    ASSERT_EQ(a.size(), b.size());
    int64_t num_same_in_c = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(a[i].arrival, b[i].arrival) << i;
      ASSERT_EQ(a[i].num_prompt_tokens, b[i].num_prompt_tokens) << i;
      num_same_in_c += a[i].arrival == c[i].arrival;
    }
    EXPECT_EQ(num_same_in_c, 0);
    // Arrival times have their own stream: another length sample leaves them unchanged.
    const auto d = generate_arrivals(o, {{7, 7}}, 7);
    for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i].arrival, d[i].arrival) << i;
  }
}

TEST(GenerateArrivalsTest, DurationStopsBeforeItAndCountStopsAtIt) {
  ArrivalOptions o;
  o.process.kind = ArrivalProcessKind::kGamma;
  o.process.cv = 2.0;
  o.rate_per_s = 50.0;
  o.duration_s = 100.0;
  const auto by_time = generate_arrivals(o, kLengths, 1);
  ASSERT_FALSE(by_time.empty());
  EXPECT_LT(by_time.back().arrival, SimTime::Seconds(100));
  // 5,000 expected; a renewal count has variance ~ cv^2 * mean: sd 141.
  EXPECT_NEAR(static_cast<double>(by_time.size()), 5000, kSigmas * 2 * std::sqrt(5000));
  // With a count as well, whichever comes first: the first 10 of the same arrivals.
  o.num_requests = 10;
  const auto by_count = generate_arrivals(o, kLengths, 1);
  ASSERT_EQ(by_count.size(), 10u);
  for (size_t i = 0; i < 10; ++i) EXPECT_EQ(by_count[i].arrival, by_time[i].arrival);
  o.num_requests = 1'000'000;
  EXPECT_EQ(generate_arrivals(o, kLengths, 1).size(), by_time.size());
}

// ---- the 24-hour load profile -----------------------------------------------------------------

constexpr double kSecondsPerHour = 3600;

/// A day with a night trough (two empty hours), a morning ramp and an evening peak.
std::vector<double> day_profile() {
  return {0.5, 0.5, 0.25, 0, 0,   0.25, 0.5, 1,   1.5, 2,   2, 2,
          1.5, 1.5, 2,    2, 2.5, 3,    3,   2.5, 2,   1.5, 1, 0.75};
}

/// Arrivals per hour of a run of `num_days` days.
std::vector<int64_t> per_hour(const std::vector<RequestSpec>& requests, int num_days) {
  std::vector<int64_t> counts(static_cast<size_t>(kHoursPerDay * num_days), 0);
  for (const RequestSpec& r : requests) {
    const auto hour = static_cast<size_t>(r.arrival.seconds() / kSecondsPerHour);
    EXPECT_LT(hour, counts.size());
    if (hour < counts.size()) ++counts[hour];
  }
  return counts;
}

TEST(LoadProfileTest, PoissonArrivalsPerHourFollowTheMultipliers) {
  constexpr int kDays = 2;
  ArrivalOptions o;
  o.rate_per_s = 1.0;
  o.duration_s = kDays * kHoursPerDay * kSecondsPerHour;
  o.hourly_multipliers = day_profile();
  const auto requests = generate_arrivals(o, kLengths, 21);
  const auto counts = per_hour(requests, kDays);
  for (size_t h = 0; h < counts.size(); ++h) {
    const double expected = 1.0 * kSecondsPerHour * o.hourly_multipliers[h % kHoursPerDay];
    // A Poisson count: sd sqrt(expected) (60 at multiplier 1). Empty hours get exactly none.
    EXPECT_NEAR(static_cast<double>(counts[h]), expected, kSigmas * std::sqrt(expected)) << h;
  }
}

TEST(LoadProfileTest, GammaArrivalsPerHourFollowTheMultipliers) {
  ArrivalOptions o;
  o.process.kind = ArrivalProcessKind::kGamma;
  o.process.cv = 2.0;
  o.rate_per_s = 2.0;
  o.duration_s = kHoursPerDay * kSecondsPerHour;
  o.hourly_multipliers = day_profile();
  const auto counts = per_hour(generate_arrivals(o, kLengths, 22), 1);
  for (size_t h = 0; h < counts.size(); ++h) {
    const double expected = 2.0 * kSecondsPerHour * o.hourly_multipliers[h];
    // A renewal count over a long window has variance ~ cv^2 * expected: sd 2 sqrt(expected).
    EXPECT_NEAR(static_cast<double>(counts[h]), expected, kSigmas * 2 * std::sqrt(expected)) << h;
  }
}

TEST(LoadProfileTest, TimeRescalingMapsOperationalTimeHourByHour) {
  // Hand-worked map for m = {2, 0, 1, 1, ...}: Lambda(t) = 2t in hour 0, flat in hour 1, then
  // grows at 1. An operational time tau < 7200 s lands at tau / 2 (hour 0 runs twice as fast);
  // tau >= 7200 s lands at 7200 + (tau - 7200) = tau (hour 2 on); nothing lands in hour 1.
  std::vector<double> profile(kHoursPerDay, 1.0);
  profile[0] = 2.0;
  profile[1] = 0.0;
  ArrivalOptions flat = options(ArrivalProcessKind::kGamma, 1.0, 12'000);
  flat.process.cv = 1.5;
  ArrivalOptions shaped = flat;
  shaped.hourly_multipliers = profile;
  const auto tau = generate_arrivals(flat, kLengths, 5);
  const auto real = generate_arrivals(shaped, kLengths, 5);
  ASSERT_EQ(tau.size(), real.size());
  constexpr int64_t kTwoHoursNs = 7200LL * 1'000'000'000;
  int64_t num_first_hour = 0;
  for (size_t i = 0; i < tau.size(); ++i) {
    const int64_t tau_ns = tau[i].arrival.ns();
    const int64_t expected_ns = tau_ns < kTwoHoursNs ? tau_ns / 2 : tau_ns;
    // Halving rounds to the nearest ns, integer division truncates: at most 1 ns apart.
    ASSERT_LE(std::abs(real[i].arrival.ns() - expected_ns), 1) << i;
    ASSERT_FALSE(real[i].arrival >= SimTime::Seconds(3600) &&
                 real[i].arrival < SimTime::Seconds(7200))
        << i;
    num_first_hour += real[i].arrival < SimTime::Seconds(3600);
    EXPECT_EQ(real[i].num_prompt_tokens, tau[i].num_prompt_tokens);
  }
  EXPECT_GT(num_first_hour, 0);
}

TEST(LoadProfileTest, FlatProfileOfOnesChangesNothing) {
  ArrivalOptions flat = options(ArrivalProcessKind::kWeibull, 3.0, 5000);
  flat.process.weibull_shape = 0.6;
  ArrivalOptions ones = flat;
  ones.hourly_multipliers.assign(kHoursPerDay, 1.0);
  const auto a = generate_arrivals(flat, kLengths, 2);
  const auto b = generate_arrivals(ones, kLengths, 2);
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a[i].arrival, b[i].arrival) << i;
}

// ---- client classes ---------------------------------------------------------------------------

RequestSpec at_s(double arrival_s, int64_t prompt) {
  return {SimTime::Seconds(arrival_s), prompt, 1};
}

TEST(MergeClientClassesTest, ArrivalOrderTiesToLowerClassThenInputOrder) {
  const std::vector<std::vector<RequestSpec>> classes = {
      {at_s(1, 100), at_s(3, 101), at_s(3, 102)},
      {at_s(0, 200), at_s(3, 201), at_s(5, 202)},
      {},
  };
  const auto merged = merge_client_classes(classes);
  ASSERT_EQ(merged.size(), 6u);
  const int64_t expected_prompt[] = {200, 100, 101, 102, 201, 202};
  const int32_t expected_class[] = {1, 0, 0, 0, 1, 1};
  for (size_t i = 0; i < merged.size(); ++i) {
    EXPECT_EQ(merged[i].num_prompt_tokens, expected_prompt[i]) << i;
    EXPECT_EQ(merged[i].client_class, expected_class[i]) << i;
  }
  EXPECT_TRUE(merge_client_classes({}).empty());
}

TEST(MergeClientClassesTest, GeneratedClassesKeepTheirOwnArrivals) {
  ArrivalOptions chat = options(ArrivalProcessKind::kGamma, 5.0, 1000);
  chat.process.cv = 2.0;
  const ArrivalOptions batch = options(ArrivalProcessKind::kPoisson, 1.0, 300);
  const auto a = generate_arrivals(chat, kLengths, substream_seed(4, 0));
  const auto b = generate_arrivals(batch, {{4000, 200}}, substream_seed(4, 1));
  const auto merged = merge_client_classes({a, b});
  ASSERT_EQ(merged.size(), a.size() + b.size());
  size_t ia = 0, ib = 0;
  for (size_t i = 0; i < merged.size(); ++i) {
    if (i > 0) {
      ASSERT_LE(merged[i - 1].arrival, merged[i].arrival);
    }
    const RequestSpec& expected = merged[i].client_class == 0 ? a[ia++] : b[ib++];
    ASSERT_EQ(merged[i].arrival, expected.arrival) << i;
    ASSERT_EQ(merged[i].num_prompt_tokens, expected.num_prompt_tokens) << i;
  }
  EXPECT_EQ(ia, a.size());
  EXPECT_EQ(ib, b.size());
}

/// Requests of a trace whose rows hash blocks of 4 tokens: rows[i] = (arrival s, hash ids).
std::vector<RequestSpec> hashed_trace(
    const std::vector<std::pair<double, std::vector<uint64_t>>>& rows) {
  auto pool = std::make_shared<std::vector<uint64_t>>();
  std::vector<RequestSpec> requests;
  for (const auto& [arrival_s, ids] : rows) {
    RequestSpec r = at_s(arrival_s, 4 * static_cast<int64_t>(ids.size()));
    r.prefix.begin = static_cast<int64_t>(pool->size());
    r.prefix.count = static_cast<int32_t>(ids.size());
    r.prefix.block_tokens = 4;
    r.prefix.stream = 1000 + requests.size();
    pool->insert(pool->end(), ids.begin(), ids.end());
    requests.push_back(r);
  }
  for (RequestSpec& r : requests) r.prefix.hashes = pool;
  return requests;
}

std::vector<uint64_t> keys_of(const RequestSpec& r) {
  std::vector<uint64_t> keys;
  append_prefix_keys(r.prefix, r.num_prompt_tokens, r.prefix.count, keys);
  return keys;
}

TEST(MergeClientClassesTest, TwoTracesShareNoBlockThoughTheirHashIdsMatch) {
  // Both traces number their blocks from 0, as Mooncake's files do: their id 0 is not one block.
  const auto a = hashed_trace({{0, {0, 1}}, {1, {0, 2}}});
  const auto b = hashed_trace({{0.5, {0, 1}}, {2, {3}}});
  const auto merged = merge_client_classes({a, b});
  ASSERT_EQ(merged.size(), 4u);
  ASSERT_EQ(merged[1].client_class, 1);
  // Before the merge, a's first request and b's first look like one prompt.
  EXPECT_EQ(keys_of(a[0]), keys_of(b[0]));
  // After it, they share nothing; within class 0, both requests still share block 0.
  EXPECT_NE(keys_of(merged[0])[0], keys_of(merged[1])[0]);
  EXPECT_NE(keys_of(merged[0])[1], keys_of(merged[1])[1]);
  EXPECT_EQ(keys_of(merged[0])[0], keys_of(merged[2])[0]);
  EXPECT_NE(keys_of(merged[0])[1], keys_of(merged[2])[1]);
  // One pool per trace after the merge, as before it.
  EXPECT_EQ(merged[0].prefix.hashes, merged[2].prefix.hashes);
  EXPECT_NE(merged[0].prefix.hashes, merged[1].prefix.hashes);
  EXPECT_EQ(merged[1].prefix.begin, b[0].prefix.begin);
}

TEST(MergeClientClassesTest, TwoClassesOfOneTraceStillShareItsBlocks) {
  const auto a = hashed_trace({{0, {0, 1}}, {1, {0, 2}}});
  const auto b = hashed_trace({{0, {0, 1}}, {1, {0, 2}}});  // the same file, read twice
  const auto merged = merge_client_classes({a, b, {at_s(3, 8)}});
  ASSERT_EQ(merged.size(), 5u);
  EXPECT_EQ(keys_of(merged[0]), keys_of(merged[1]));
  EXPECT_EQ(keys_of(merged[2]), keys_of(merged[3]));
  EXPECT_EQ(merged[4].prefix.hashes, nullptr);
}

TEST(MergeClientClassesTest, UnsortedClassIsRefused) {
  EXPECT_THAT(error_of([] {
                merge_client_classes({{at_s(0, 1)}, {at_s(2, 1), at_s(1, 1)}});
              }),
              HasSubstr("classes[1]: arrivals not sorted at request 1"));
}

// ---- bad input --------------------------------------------------------------------------------

TEST(ArrivalErrorTest, UnknownProcessNameListsTheKnownOnes) {
  EXPECT_EQ(parse_arrival_process("gamma", "ctx"), ArrivalProcessKind::kGamma);
  EXPECT_EQ(parse_arrival_process("weibull", "ctx"), ArrivalProcessKind::kWeibull);
  EXPECT_EQ(parse_arrival_process("poisson", "ctx"), ArrivalProcessKind::kPoisson);
  for (const ArrivalProcessKind kind :
       {ArrivalProcessKind::kPoisson, ArrivalProcessKind::kGamma, ArrivalProcessKind::kWeibull}) {
    EXPECT_EQ(parse_arrival_process(std::string(to_string(kind)), "ctx"), kind);
  }
  EXPECT_EQ(error_of([] { parse_arrival_process("bursty", "s.json: field \"arrival\""); }),
            "s.json: field \"arrival\": unknown arrival process \"bursty\"; known: poisson, "
            "gamma, weibull");
}

TEST(ArrivalErrorTest, BadParametersAreNamed) {
  ArrivalOptions gamma = options(ArrivalProcessKind::kGamma, 1.0, 10);
  gamma.process.cv = 0;
  EXPECT_THAT(error_of([&] { generate_arrivals(gamma, kLengths, 1); }),
              HasSubstr("arrivals: cv: expected a positive number, got 0"));
  gamma.process.cv = -1.5;
  EXPECT_THAT(error_of([&] { generate_arrivals(gamma, kLengths, 1); }),
              HasSubstr("arrivals: cv: expected a positive number, got -1.5"));
  ArrivalOptions weibull = options(ArrivalProcessKind::kWeibull, 1.0, 10);
  weibull.process.weibull_shape = -2;
  EXPECT_THAT(error_of([&] { generate_arrivals(weibull, kLengths, 1); }),
              HasSubstr("arrivals: weibull_shape: expected a positive number, got -2"));
  ArrivalOptions rate = options(ArrivalProcessKind::kWeibull, 0.0, 10);
  EXPECT_THAT(error_of([&] { generate_arrivals(rate, kLengths, 1); }),
              HasSubstr("arrivals: rate_per_s: expected a positive number, got 0"));
  ArrivalOptions count = options(ArrivalProcessKind::kPoisson, 1.0, -4);
  EXPECT_THAT(error_of([&] { generate_arrivals(count, kLengths, 1); }),
              HasSubstr("arrivals: num_requests: expected a non-negative integer, got -4"));
  ArrivalOptions neither = options(ArrivalProcessKind::kPoisson, 1.0, 0);
  neither.num_requests.reset();
  EXPECT_THAT(error_of([&] { generate_arrivals(neither, kLengths, 1); }),
              HasSubstr("arrivals: num_requests, duration_s: expected at least one, got neither"));
  ArrivalOptions duration = neither;
  duration.duration_s = -60;
  EXPECT_THAT(error_of([&] { generate_arrivals(duration, kLengths, 1); }),
              HasSubstr("arrivals: duration_s: expected a positive number, got -60"));
  EXPECT_THAT(
      error_of([&] { generate_arrivals(options(ArrivalProcessKind::kGamma, 1, 1), {}, 1); }),
      HasSubstr("arrivals: lengths: expected at least one sample, got none"));
}

TEST(ArrivalErrorTest, ParametersOutsideTheRepresentableRange) {
  ArrivalOptions fast = options(ArrivalProcessKind::kPoisson, 2e9, 10);
  EXPECT_THAT(error_of([&] { generate_arrivals(fast, kLengths, 1); }),
              HasSubstr("arrivals: rate_per_s: expected at most 1e+09 (one request per ns), got "
                        "2e+09"));
  ArrivalOptions tiny = options(ArrivalProcessKind::kWeibull, 1.0, 10);
  tiny.process.weibull_shape = 0.005;
  EXPECT_THAT(error_of([&] { generate_arrivals(tiny, kLengths, 1); }),
              HasSubstr("arrivals: weibull_shape: expected a shape whose Gamma(1 + 1/shape) is "
                        "finite (shape >= 0.006), got 0.005"));
  ArrivalOptions long_run = options(ArrivalProcessKind::kPoisson, 1.0, 10);
  long_run.duration_s = 1e10;
  EXPECT_THAT(error_of([&] { generate_arrivals(long_run, kLengths, 1); }),
              HasSubstr("arrivals: duration_s: expected less than 9.2e+09 s (the end of simulated "
                        "time), got 1e+10"));
}

TEST(GenerateArrivalsTest, StopsAtTheEndOfSimulatedTime) {
  // One request per ~32 years on average: 9.2e9 s of simulated time hold about 9 of them.
  const auto sparse =
      generate_arrivals(options(ArrivalProcessKind::kPoisson, 1e-9, 100), kLengths, 1);
  EXPECT_LT(sparse.size(), 100u);
  for (const RequestSpec& r : sparse) EXPECT_LT(r.arrival.ns(), 9'200'000'000'000'000'000);
  // A profile whose only busy hour is one in 1e6 of the day's rate: the same.
  ArrivalOptions quiet = options(ArrivalProcessKind::kPoisson, 1e-3, 1000);
  quiet.hourly_multipliers.assign(kHoursPerDay, 0.0);
  quiet.hourly_multipliers[12] = 1e-6;
  const auto rare = generate_arrivals(quiet, kLengths, 1);
  EXPECT_LT(rare.size(), 1000u);
  for (const RequestSpec& r : rare) EXPECT_LT(r.arrival.ns(), 9'200'000'000'000'000'000);
}

TEST(ArrivalErrorTest, BadLoadProfileIsNamedWithTheHour) {
  ArrivalOptions o = options(ArrivalProcessKind::kPoisson, 1.0, 10);
  o.hourly_multipliers.assign(23, 1.0);
  EXPECT_THAT(error_of([&] { generate_arrivals(o, kLengths, 1); }),
              HasSubstr("arrivals: hourly_multipliers: expected 24 hourly multipliers, got 23"));
  o.hourly_multipliers.assign(kHoursPerDay, 1.0);
  o.hourly_multipliers[5] = -0.5;
  EXPECT_THAT(error_of([&] { generate_arrivals(o, kLengths, 1); }),
              HasSubstr("arrivals: hourly_multipliers[5]: expected a non-negative number, got "
                        "-0.5"));
  o.hourly_multipliers[5] = NAN;
  EXPECT_THAT(error_of([&] { generate_arrivals(o, kLengths, 1); }),
              HasSubstr("arrivals: hourly_multipliers[5]: expected a non-negative number, got "
                        "nan"));
  o.hourly_multipliers.assign(kHoursPerDay, 0.0);
  EXPECT_THAT(error_of([&] { generate_arrivals(o, kLengths, 1); }),
              HasSubstr("arrivals: hourly_multipliers: expected at least one positive "
                        "multiplier, got all 0"));
}

}  // namespace
}  // namespace llmcap::sim
