#include "sim/workload.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "sim/input_error.h"
#include "sim_test_helpers.h"
#include "test_util.h"

namespace llmcap::sim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

const std::filesystem::path kTestData = LLMCAP_TEST_DATA_DIR;
const std::filesystem::path kTraces = llmcap::testing::shared_traces_dir();

/// Writes `content` byte for byte to a fresh file in a scratch folder removed at exit.
using testing::error_of;
using testing::write_temp;

constexpr int64_t kNsPerMs = 1'000'000;

TraceOptions options(double rate_multiplier, std::optional<double> window_s = std::nullopt) {
  TraceOptions o;
  o.rate_multiplier = rate_multiplier;
  o.window_s = window_s;
  return o;
}

// ---- small fixtures --------------------------------------------------------------------------

TEST(LoadTraceTest, ReadsAzureWithCrlfAndNoFinalNewline) {
  // azure_small.csv: CRLF line ends, no newline after the last row, one row out of order, one
  // row with 0 generated tokens.
  const auto requests = load_trace(kTestData / "azure_small.csv");
  ASSERT_EQ(requests.size(), 4u);
  // Sorted (stably) by arrival; offsets from the earliest timestamp 09:00:00.2500000.
  EXPECT_EQ(requests[0].arrival.ns(), 0);
  EXPECT_EQ(requests[0].num_prompt_tokens, 512);
  EXPECT_EQ(requests[0].num_output_tokens, 64);
  EXPECT_EQ(requests[1].arrival.ns(), 0);
  EXPECT_EQ(requests[1].num_prompt_tokens, 10);
  EXPECT_EQ(requests[1].num_output_tokens, 1);         // 0 generated tokens reads as 1
  EXPECT_EQ(requests[2].arrival.ns(), 1'319'410'000);  // 01.5694100 - 00.2500000
  EXPECT_EQ(requests[2].num_prompt_tokens, 5);
  EXPECT_EQ(requests[2].num_output_tokens, 6);
  EXPECT_EQ(requests[3].arrival.ns(), 4'314'579'000);  // 04.5645790 - 00.2500000
  EXPECT_EQ(requests[3].num_prompt_tokens, 300);
  EXPECT_EQ(requests[3].num_output_tokens, 120);
}

TEST(LoadTraceTest, ReadsVidurFormatLikeAzure) {
  const auto azure = load_trace(kTestData / "azure_small.csv");
  const auto vidur = load_trace(kTestData / "vidur_small.csv");
  ASSERT_EQ(vidur.size(), azure.size());
  for (size_t i = 0; i < azure.size(); ++i) {
    EXPECT_EQ(vidur[i].arrival, azure[i].arrival) << i;
    EXPECT_EQ(vidur[i].num_prompt_tokens, azure[i].num_prompt_tokens) << i;
    EXPECT_EQ(vidur[i].num_output_tokens, azure[i].num_output_tokens) << i;
  }
}

TEST(LoadTraceTest, CrlfAndLfAndTrailingNewlineReadTheSame) {
  const std::string rows[] = {"arrived_at,num_prefill_tokens,num_decode_tokens", "0.5,3,4",
                              "1.25,5,6"};
  const auto lf = load_trace(write_temp("lf.csv", rows[0] + "\n" + rows[1] + "\n" + rows[2]));
  const auto crlf =
      load_trace(write_temp("crlf.csv", rows[0] + "\r\n" + rows[1] + "\r\n" + rows[2] + "\r\n"));
  ASSERT_EQ(lf.size(), 2u);
  ASSERT_EQ(crlf.size(), 2u);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(lf[i].arrival, crlf[i].arrival);
    EXPECT_EQ(lf[i].num_prompt_tokens, crlf[i].num_prompt_tokens);
  }
  EXPECT_EQ(lf[1].arrival.ns(), 1'250'000'000);
  EXPECT_EQ(lf[1].num_output_tokens, 6);
}

TEST(LoadTraceTest, AzureTimestampsAcrossMidnightAndLeapDay) {
  const auto requests =
      load_trace(write_temp("azure_dates.csv",
                            "TIMESTAMP,ContextTokens,GeneratedTokens\n2024-02-28 23:59:59.5,1,1\n"
                            "2024-03-01 00:00:00,2,2\n2024-03-01 00:00:00.000000001,3,3\n"));
  ASSERT_EQ(requests.size(), 3u);
  // 2024 is a leap year: Feb 29 lies between, so 1 day + 0.5 s.
  EXPECT_EQ(requests[1].arrival.ns(), 86'400'500'000'000);
  EXPECT_EQ(requests[2].arrival.ns(), 86'400'500'000'001);
}

TEST(LoadLengthsTest, ReadsLengthFileAndIgnoresExtraColumns) {
  const auto lengths = load_lengths(kTestData / "lengths_small.csv");
  ASSERT_EQ(lengths.size(), 3u);
  EXPECT_EQ(lengths[0].num_prompt_tokens, 120);
  EXPECT_EQ(lengths[0].num_output_tokens, 800);
  EXPECT_EQ(lengths[2].num_prompt_tokens, 1500);
  EXPECT_EQ(lengths[2].num_output_tokens, 1);  // 0 reads as 1
}

TEST(LoadLengthsTest, ReadsLengthsFromTraces) {
  const auto lengths = load_lengths(kTestData / "azure_small.csv");
  ASSERT_EQ(lengths.size(), 4u);
  EXPECT_EQ(lengths[3].num_prompt_tokens, 5);  // file order, not arrival order
  EXPECT_EQ(lengths[3].num_output_tokens, 6);
}

// ---- real traces -----------------------------------------------------------------------------

TEST(RealTraceTest, BothFormsOfTheConvTraceAgree) {
  LLMCAP_SKIP_WITHOUT_SHARED_TRACE("AzureLLMInferenceTrace_conv.csv");
  LLMCAP_SKIP_WITHOUT_SHARED_TRACE("splitwise_conv.csv");
  const auto azure = load_trace(kTraces / "AzureLLMInferenceTrace_conv.csv");
  const auto vidur = load_trace(kTraces / "splitwise_conv.csv");
  ASSERT_EQ(azure.size(), 19'366u);
  ASSERT_EQ(vidur.size(), 19'366u);
  constexpr int64_t kArrivalToleranceNs =
      1 * kNsPerMs;  // ../shared/data/traces/SOURCES.md: equal within 1 ms
  int64_t max_difference_ns = 0;
  for (size_t i = 0; i < azure.size(); ++i) {
    ASSERT_EQ(azure[i].num_prompt_tokens, vidur[i].num_prompt_tokens) << i;
    ASSERT_EQ(azure[i].num_output_tokens, vidur[i].num_output_tokens) << i;
    max_difference_ns =
        std::max(max_difference_ns, std::abs((azure[i].arrival - vidur[i].arrival).ns()));
  }
  EXPECT_LE(max_difference_ns, kArrivalToleranceNs);
  // The last arrival of the conv trace is at 3,501.722 s (SOURCES.md).
  EXPECT_NEAR(azure.back().arrival.seconds(), 3501.722, 1e-3);
}

TEST(RealTraceTest, CodeTraceAndShareGptLengths) {
  LLMCAP_SKIP_WITHOUT_SHARED_TRACE("AzureLLMInferenceTrace_code.csv");
  LLMCAP_SKIP_WITHOUT_SHARED_TRACE("sharegpt_8k_filtered_stats_llama2_tokenizer.csv");
  const auto code = load_trace(kTraces / "AzureLLMInferenceTrace_code.csv");
  EXPECT_EQ(code.size(), 8'819u);
  EXPECT_EQ(code.front().arrival.ns(), 0);
  const auto sharegpt = load_lengths(kTraces / "sharegpt_8k_filtered_stats_llama2_tokenizer.csv");
  EXPECT_EQ(sharegpt.size(), 30'731u);
  EXPECT_EQ(sharegpt.front().num_prompt_tokens, 74);
  EXPECT_EQ(sharegpt.front().num_output_tokens, 918);
}

TEST(RealTraceTest, ArxivSummarizationLengths) {
  LLMCAP_SKIP_WITHOUT_SHARED_TRACE("arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv");
  // Header "num_prefill_tokens,num_decode_tokens,num_total_tokens,pd_ratio" (the ShareGPT
  // file's); the figures below are those of ../shared/data/traces/SOURCES.md.
  const auto arxiv =
      load_lengths(kTraces / "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv");
  ASSERT_EQ(arxiv.size(), 28'257u);
  EXPECT_EQ(arxiv.front().num_prompt_tokens, 3772);  // first row: 3772,54,3826,69.85...
  EXPECT_EQ(arxiv.front().num_output_tokens, 54);
  EXPECT_EQ(arxiv.back().num_prompt_tokens, 3178);  // last row: 3178,313,3491,10.15...
  EXPECT_EQ(arxiv.back().num_output_tokens, 313);
  int64_t max_prompt = 0, max_total = 0;
  double sum_prompt = 0, sum_output = 0;
  for (const LengthSample& l : arxiv) {
    max_prompt = std::max(max_prompt, l.num_prompt_tokens);
    max_total = std::max(max_total, l.num_prompt_tokens + l.num_output_tokens);
    sum_prompt += static_cast<double>(l.num_prompt_tokens);
    sum_output += static_cast<double>(l.num_output_tokens);
  }
  EXPECT_EQ(max_prompt, 4054);
  EXPECT_EQ(max_total, 4096);                    // filtered to a 4k context
  constexpr double kRoundedMeanTolerance = 0.5;  // SOURCES.md rounds means to whole tokens
  EXPECT_NEAR(sum_prompt / static_cast<double>(arxiv.size()), 2588, kRoundedMeanTolerance);
  EXPECT_NEAR(sum_output / static_cast<double>(arxiv.size()), 291, kRoundedMeanTolerance);
  // Not an arrival trace.
  EXPECT_THAT(error_of([] {
                load_trace(kTraces / "arxiv_summarization_stats_llama2_tokenizer_filtered_v2.csv");
              }),
              HasSubstr("without arrival times"));
}

TEST(RealTraceTest, RateMultiplierTwoHalvesOffsets) {
  LLMCAP_SKIP_WITHOUT_SHARED_TRACE("AzureLLMInferenceTrace_conv.csv");
  const auto path = kTraces / "AzureLLMInferenceTrace_conv.csv";
  const auto base = load_trace(path);
  const auto fast = load_trace(path, options(2.0));
  ASSERT_EQ(fast.size(), base.size());
  for (size_t i = 0; i < base.size(); ++i) {
    // Halving an integer count of ns rounds to the nearest ns.
    ASSERT_LE(std::abs(fast[i].arrival.ns() * 2 - base[i].arrival.ns()), 1) << i;
    ASSERT_EQ(fast[i].num_prompt_tokens, base[i].num_prompt_tokens);
  }
}

TEST(RealTraceTest, WindowKeepsOnlyArrivalsBeforeIt) {
  LLMCAP_SKIP_WITHOUT_SHARED_TRACE("splitwise_conv.csv");
  const auto path = kTraces / "splitwise_conv.csv";
  const auto all = load_trace(path);
  const auto first_minute = load_trace(path, options(1.0, 60.0));
  size_t expected = 0;
  while (expected < all.size() && all[expected].arrival < SimTime::Seconds(60)) ++expected;
  ASSERT_GT(expected, 0u);
  ASSERT_LT(expected, all.size());
  EXPECT_EQ(first_minute.size(), expected);
  EXPECT_LT(first_minute.back().arrival, SimTime::Seconds(60));
  // With a rate multiplier the window applies to the scaled offsets: twice as many fit.
  const auto scaled = load_trace(path, options(2.0, 30.0));
  EXPECT_EQ(scaled.size(), expected);
}

// ---- bad input: every error names the file, the place and the value --------------------------

TEST(WorkloadErrorTest, MissingFile) {
  const std::string message = error_of([] { load_trace("no/such/dir/x.csv"); });
  EXPECT_THAT(message, HasSubstr("no/such/dir/x.csv: cannot open file"));
  EXPECT_THAT(error_of([] { load_lengths("nope.csv"); }), HasSubstr("nope.csv: cannot open file"));
}

TEST(WorkloadErrorTest, UnreadableFile) {
  // A directory opens but cannot be read as a file.
  const auto dir = write_temp("placeholder.csv", "").parent_path();
  EXPECT_THAT(error_of([&] { load_trace(dir); }),
              HasSubstr(dir.string() + ": cannot read file: it is a directory"));
}

TEST(WorkloadErrorTest, UnknownHeaderListsKnownOnes) {
  const auto path = write_temp("unknown.csv", "a,b\n1,2\n");
  const std::string message = error_of([&] { load_lengths(path); });
  EXPECT_THAT(message, HasSubstr(path.string() + ": line 1: unrecognised header (2 columns, not "
                                                 "shown: not a known trace format)"));
  EXPECT_THAT(message, HasSubstr("\"TIMESTAMP,ContextTokens,GeneratedTokens\" (Azure 2023), "
                                 "\"arrived_at,num_prefill_tokens,num_decode_tokens\" (Vidur), "
                                 "\"num_prefill_tokens,num_decode_tokens,...\" (lengths)"));
  EXPECT_THAT(error_of([&] { load_trace(path); }), HasSubstr("unrecognised header (2 columns"));
  EXPECT_THAT(message, Not(HasSubstr("a,b")));
  EXPECT_EQ(message.find('\n'), std::string::npos);  // one line
}

TEST(WorkloadErrorTest, LengthFileIsNotAnArrivalTrace) {
  const std::string message = error_of([] { load_trace(kTestData / "lengths_small.csv"); });
  EXPECT_THAT(message, HasSubstr("lengths_small.csv: line 1: header "));
  EXPECT_THAT(message, HasSubstr("without arrival times"));
}

TEST(WorkloadErrorTest, EmptyFileAndHeaderOnly) {
  EXPECT_THAT(error_of([] { load_trace(write_temp("empty.csv", "")); }),
              HasSubstr("empty.csv: empty file; expected a header line"));
  EXPECT_THAT(
      error_of([] {
        load_trace(write_temp("header.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\r\n"));
      }),
      HasSubstr("header.csv: no rows after the header"));
}

TEST(WorkloadErrorTest, MissingColumn) {
  const auto path = write_temp("short.csv",
                               "TIMESTAMP,ContextTokens,GeneratedTokens\r\n"
                               "2026-01-05 09:00:00.25,512,64\r\n"
                               "2026-01-05 09:00:07.0,512,64\r\n"
                               "2026-01-05 09:00:08.0,512,64\r\n"
                               "2026-01-05 09:00:09.0,512");
  EXPECT_THAT(error_of([&] { load_trace(path); }),
              HasSubstr(path.string() + ": line 5: expected 3 columns, got 2"));
  const auto extra = write_temp("long.csv",
                                "arrived_at,num_prefill_tokens,num_decode_tokens\n"
                                "0.0,1,1,9\n");
  EXPECT_THAT(error_of([&] { load_trace(extra); }),
              HasSubstr(extra.string() + ": line 2: expected 3 columns, got 4"));
  const auto lengths = write_temp("short_lengths.csv", "num_prefill_tokens,num_decode_tokens\n5\n");
  EXPECT_THAT(error_of([&] { load_lengths(lengths); }),
              HasSubstr("short_lengths.csv: line 2: expected 2 columns, got 1"));
}

TEST(WorkloadErrorTest, NonNumericAndNegativeTokenCounts) {
  const std::string header = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  const std::string row = "2023-11-16 18:15:46.6805900,";
  const auto not_a_number = write_temp("abc.csv", header + row + "1,1\n" + row + "abc,1\n");
  EXPECT_THAT(error_of([&] { load_trace(not_a_number); }),
              HasSubstr(not_a_number.string() +
                        ": line 3, column 2 (\"ContextTokens\"): expected a non-negative "
                        "integer, got \"abc\""));
  const auto negative = write_temp("neg.csv", header + row + "7,-4\n");
  EXPECT_THAT(error_of([&] { load_trace(negative); }),
              HasSubstr(": line 2, column 3 (\"GeneratedTokens\"): expected a non-negative "
                        "integer, got \"-4\""));
  const auto fractional = write_temp("frac.csv", header + row + "7.5,4\n");
  EXPECT_THAT(
      error_of([&] { load_trace(fractional); }),
      HasSubstr("column 2 (\"ContextTokens\"): expected a non-negative integer, got \"7.5\""));
  const auto empty_prompt = write_temp("zero.csv", header + row + "0,4\n");
  EXPECT_THAT(
      error_of([&] { load_trace(empty_prompt); }),
      HasSubstr("line 2, column 2 (\"ContextTokens\"): expected a positive integer, got \"0\""));
  const auto lengths = write_temp("badlen.csv", "num_prefill_tokens,num_decode_tokens\n3,x1\n");
  EXPECT_THAT(error_of([&] { load_lengths(lengths); }),
              HasSubstr("line 2, column 2 (\"num_decode_tokens\"): expected a non-negative "
                        "integer, got \"x1\""));
}

TEST(WorkloadErrorTest, BadTimestamp) {
  const std::string header = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
  for (const std::string bad :
       {"2023-13-16 18:15:46.68", "2023-02-29 00:00:00", "2023-11-16T18:15:46",
        "2023-11-16 18:15:46.", "2023-11-16 18:15:46.1234567890", "yesterday",
        "7548-11-16 18:17:03.9799600", "1969-12-31 23:59:59"}) {
    const auto path = write_temp("ts.csv", header + "2023-11-16 18:15:46,1,1\n" + bad + ",1,1\n");
    EXPECT_THAT(error_of([&] { load_trace(path); }),
                HasSubstr("line 3, column 1 (\"TIMESTAMP\"): expected a timestamp "
                          "YYYY-MM-DD HH:MM:SS[.fffffff], got \"" +
                          bad + "\""))
        << bad;
  }
}

TEST(WorkloadErrorTest, BadVidurArrival) {
  const std::string header = "arrived_at,num_prefill_tokens,num_decode_tokens\n";
  for (const std::string bad : {"-1", "x", "nan", ""}) {
    const auto path = write_temp("vidur_bad.csv", header + "0.0,1,1\n" + bad + ",1,1\n");
    EXPECT_THAT(error_of([&] { load_trace(path); }),
                HasSubstr("line 3, column 1 (\"arrived_at\"): expected a non-negative number of "
                          "seconds, got \"" +
                          bad + "\""))
        << bad;
  }
}

TEST(WorkloadErrorTest, BadRateMultiplierAndWindow) {
  const auto path = kTestData / "vidur_small.csv";
  EXPECT_THAT(error_of([&] { load_trace(path, options(-1)); }),
              HasSubstr("vidur_small.csv: rate_multiplier: expected a positive number, got -1"));
  EXPECT_THAT(error_of([&] { load_trace(path, options(0)); }),
              HasSubstr("rate_multiplier: expected a positive number, got 0"));
  EXPECT_THAT(error_of([&] { load_trace(path, options(1.0, -2.5)); }),
              HasSubstr("vidur_small.csv: window_s: expected a positive number, got -2.5"));
}

// ---- Poisson arrivals ------------------------------------------------------------------------

TEST(PoissonArrivalsTest, RateMatchesRequested) {
  const std::vector<LengthSample> lengths = {{10, 20}, {30, 40}};
  constexpr int64_t kNum = 100'000;
  constexpr double kRate = 20.0;
  const auto requests = poisson_arrivals(kRate, kNum, lengths, 42);
  ASSERT_EQ(requests.size(), static_cast<size_t>(kNum));
  // The mean gap of n exponential gaps has relative standard deviation 1/sqrt(n) = 0.32%;
  // 1.5% is about 5 sigma.
  constexpr double kRateRelTolerance = 0.015;
  const double measured_rate = kNum / requests.back().arrival.seconds();
  EXPECT_NEAR(measured_rate, kRate, kRate * kRateRelTolerance);
  // Exponential gaps: the coefficient of variation is 1 (sd of the estimate ~0.5%).
  double sum = 0, sum_sq = 0;
  SimTime previous = SimTime::Zero();
  int64_t num_first = 0;
  for (const RequestSpec& r : requests) {
    ASSERT_GE(r.arrival, previous);
    const double gap = (r.arrival - previous).seconds();
    previous = r.arrival;
    sum += gap;
    sum_sq += gap * gap;
    if (r.num_prompt_tokens == 10) {
      ++num_first;
      EXPECT_EQ(r.num_output_tokens, 20);
    }
  }
  const double mean = sum / kNum;
  const double cv = std::sqrt(sum_sq / kNum - mean * mean) / mean;
  constexpr double kCvTolerance = 0.03;
  EXPECT_NEAR(cv, 1.0, kCvTolerance);
  // Lengths uniform over the two samples: sd of the count is sqrt(n)/2 = 158; allow 6 sigma.
  EXPECT_NEAR(num_first, kNum / 2, 1000);
}

TEST(PoissonArrivalsTest, DeterministicPerSeedWithIndependentStreams) {
  const std::vector<LengthSample> lengths = {{1, 1}, {2, 2}, {3, 3}};
  const auto a = poisson_arrivals(5.0, 1000, lengths, 7);
  const auto b = poisson_arrivals(5.0, 1000, lengths, 7);
  const auto c = poisson_arrivals(5.0, 1000, lengths, 8);
  int64_t num_same_arrivals_c = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].arrival, b[i].arrival);
    EXPECT_EQ(a[i].num_prompt_tokens, b[i].num_prompt_tokens);
    num_same_arrivals_c += a[i].arrival == c[i].arrival;
  }
  EXPECT_EQ(num_same_arrivals_c, 0);
  // Arrival times come from their own stream: other length samples leave them unchanged.
  const auto d = poisson_arrivals(5.0, 1000, {{9, 9}}, 7);
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].arrival, d[i].arrival);
}

TEST(PoissonArrivalsTest, BadArguments) {
  const std::vector<LengthSample> lengths = {{1, 1}};
  EXPECT_THAT(error_of([&] { poisson_arrivals(0, 10, lengths, 1); }),
              HasSubstr("poisson_arrivals: rate_per_s: expected a positive number, got 0"));
  EXPECT_THAT(error_of([&] { poisson_arrivals(1, -3, lengths, 1); }),
              HasSubstr("poisson_arrivals: num_requests: expected a non-negative integer, got -3"));
  EXPECT_THAT(error_of([&] { poisson_arrivals(1, 10, {}, 1); }),
              HasSubstr("poisson_arrivals: lengths: expected at least one sample, got none"));
}

}  // namespace
}  // namespace llmcap::sim
