// JSON Lines (Mooncake) traces: the real conversation trace (skipped where
// ../shared/data/traces/ is absent), small hand-written files and every error path's message.
#include "sim/trace_jsonl.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <unordered_set>

#include "sim/input_error.h"
#include "sim/workload.h"
#include "sim_test_helpers.h"
#include "test_util.h"

namespace llmcap::sim {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kTraces = llmcap::testing::shared_traces_dir();
constexpr const char* kMooncake = "mooncake_conversation_trace.jsonl";

using testing::error_of;
using testing::write_temp;

/// The message load_trace throws for a .jsonl file holding `content`, less its path.
std::string jsonl_error(const std::string& content, const TraceOptions& options = {}) {
  const auto path = write_temp("t.jsonl", content);
  std::string message = error_of([&] { load_trace(path, options); });
  const std::string file = path.string();
  if (message.compare(0, file.size(), file) == 0) message = "<file>" + message.substr(file.size());
  return message;
}

const std::string kRow1 =
    R"({"timestamp": 0, "input_length": 1030, "output_length": 7, "hash_ids": [0, 1, 2]})";
const std::string kRow2 =
    R"({"timestamp": 1500, "input_length": 512, "output_length": 0, "hash_ids": [0]})";

// ---- the real trace ---------------------------------------------------------------------------

TEST(JsonlTraceTest, ReadsTheMooncakeConversationTrace) {
  LLMCAP_SKIP_WITHOUT_SHARED_TRACE(kMooncake);
  const auto requests = load_trace(kTraces / kMooncake);
  ASSERT_EQ(requests.size(), 12'031u);  // SOURCES.md
  // First rows: {"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids":
  // [0, ..., 13]} and {"timestamp": 0, "input_length": 7322, "output_length": 490, "hash_ids":
  // [0, 14, ..., 27]}.
  const PrefixIdentity& p0 = requests[0].prefix;
  EXPECT_EQ(requests[0].arrival.ns(), 0);
  EXPECT_EQ(requests[0].num_prompt_tokens, 6758);
  EXPECT_EQ(requests[0].num_output_tokens, 500);
  EXPECT_EQ(p0.block_tokens, 512);
  EXPECT_EQ(p0.begin, 0);
  ASSERT_EQ(p0.count, 14);
  for (int j = 0; j < 14; ++j) EXPECT_EQ((*p0.hashes)[p0.begin + j], static_cast<uint64_t>(j));
  const PrefixIdentity& p1 = requests[1].prefix;
  EXPECT_EQ(requests[1].num_prompt_tokens, 7322);
  EXPECT_EQ(requests[1].num_output_tokens, 490);
  EXPECT_EQ(p1.hashes, p0.hashes);  // one shared pool
  EXPECT_EQ(p1.begin, 14);
  ASSERT_EQ(p1.count, 15);
  EXPECT_EQ((*p1.hashes)[p1.begin], 0u);
  EXPECT_EQ((*p1.hashes)[p1.begin + 1], 14u);
  EXPECT_NE(p0.stream, p1.stream);
  // The two share their first 512-token block and nothing after it.
  std::vector<uint64_t> k0, k1;
  append_prefix_keys(p0, requests[0].num_prompt_tokens, 2, k0);
  append_prefix_keys(p1, requests[1].num_prompt_tokens, 2, k1);
  EXPECT_EQ(k0[0], k1[0]);
  EXPECT_NE(k0[1], k1[1]);
  // The last row arrives at 3,536,999 ms (SOURCES.md).
  EXPECT_EQ(requests.back().arrival.ns(), 3'536'999'000'000);
}

TEST(JsonlTraceTest, RepeatedBlockReferencesMatchSources) {
  LLMCAP_SKIP_WITHOUT_SHARED_TRACE(kMooncake);
  const auto requests = load_trace(kTraces / kMooncake);
  // SOURCES.md: 288,500 block references, 182,790 distinct ids, 36.6% repeats (rounded to
  // 0.1 percentage point, hence the tolerance).
  constexpr double kRepeatFraction = 0.366;
  constexpr double kRoundingTolerance = 0.0005;
  int64_t references = 0;
  std::unordered_set<uint64_t> distinct;
  for (const RequestSpec& r : requests) {
    references += r.prefix.count;
    for (int32_t j = 0; j < r.prefix.count; ++j) {
      distinct.insert((*r.prefix.hashes)[r.prefix.begin + j]);
    }
  }
  EXPECT_EQ(references, 288'500);
  EXPECT_EQ(distinct.size(), 182'790u);
  const double repeats =
      static_cast<double>(references - static_cast<int64_t>(distinct.size())) / references;
  EXPECT_NEAR(repeats, kRepeatFraction, kRoundingTolerance);
}

TEST(JsonlTraceTest, MooncakeLengthsReadAsALengthFile) {
  LLMCAP_SKIP_WITHOUT_SHARED_TRACE(kMooncake);
  const auto lengths = load_lengths(kTraces / kMooncake);
  ASSERT_EQ(lengths.size(), 12'031u);
  EXPECT_EQ(lengths.front().num_prompt_tokens, 6758);
  EXPECT_EQ(lengths.back().num_prompt_tokens, 20774);  // the last row's input_length
  EXPECT_EQ(lengths.back().num_output_tokens, 508);
}

// ---- small files ------------------------------------------------------------------------------

TEST(JsonlTraceTest, ReadsRowsWithScalingWindowAndBlockSize) {
  const std::string text = "\xEF\xBB\xBF" + kRow1 + "\r\n\n" + kRow2;  // BOM, CRLF, blank line
  const auto path = write_temp("small.jsonl", text);
  const auto requests = load_trace(path);
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[1].arrival.ns(), 1'500'000'000);
  EXPECT_EQ(requests[1].num_output_tokens, 1);  // output_length 0 reads as 1
  EXPECT_EQ(requests[1].prefix.begin, 3);
  EXPECT_EQ(requests[1].prefix.count, 1);
  EXPECT_EQ(requests[0].prefix.stream, prefix_chain(kJsonlTraceStreamSalt, 1));
  EXPECT_EQ(requests[1].prefix.stream, prefix_chain(kJsonlTraceStreamSalt, 2));

  TraceOptions twice;
  twice.rate_multiplier = 2.0;
  EXPECT_EQ(load_trace(path, twice)[1].arrival.ns(), 750'000'000);
  TraceOptions window;
  window.window_s = 1.0;
  EXPECT_EQ(load_trace(path, window).size(), 1u);

  // The same lengths with 1024-token blocks: ceil(1030 / 1024) = 2 and 1 hash ids.
  const auto big =
      write_temp("big.jsonl",
                 R"({"timestamp": 0, "input_length": 1030, "output_length": 7, "hash_ids": [5, 6]})"
                 "\n");
  TraceOptions blocks;
  blocks.hash_block_tokens = 1024;
  const auto read = load_trace(big, blocks);
  ASSERT_EQ(read.size(), 1u);
  EXPECT_EQ(read[0].prefix.block_tokens, 1024);
  EXPECT_EQ(read[0].prefix.count, 2);
}

TEST(JsonlTraceTest, IgnoresOtherKeysWhateverTheirValues) {
  const auto path = write_temp(
      "extra.jsonl",
      R"({"meta": {"a": [1, {"b": null}], "c": "x"}, "timestamp": 3, "input_length": 10, )"
      R"("output_length": 2, "hash_ids": [9], "note": -1.5})"
      "\n");
  const auto requests = load_trace(path);
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].num_prompt_tokens, 10);
  EXPECT_EQ((*requests[0].prefix.hashes)[0], 9u);
}

TEST(JsonlTraceTest, EveryWayOfWritingARowReadsTheSame) {
  // The first line takes the fast path; the others (key order, whitespace, an escaped key, an
  // unknown key) the general JSON parser: all read alike.
  const std::string rows =
      R"({"timestamp": 7, "input_length": 1030, "output_length": 2, "hash_ids": [4, 5, 6]})"
      "\n"
      R"({ "hash_ids" : [ 4 ,5,	6 ] , "output_length":2,"input_length" :1030, "timestamp": 7 })"
      "\n"
      R"({"\u0074imestamp": 7, "input_length": 1030, "output_length": 2, "hash_ids": [4, 5, 6]})"
      "\n"
      R"({"timestamp": 7, "x": 1, "input_length": 1030, "output_length": 2, "hash_ids": [4, 5, 6]})"
      "\n";
  const auto requests = load_trace(write_temp("ways.jsonl", rows));
  ASSERT_EQ(requests.size(), 4u);
  for (size_t i = 0; i < requests.size(); ++i) {
    const PrefixIdentity& p = requests[i].prefix;
    EXPECT_EQ(requests[i].arrival.ns(), 0) << i;
    EXPECT_EQ(requests[i].num_prompt_tokens, 1030) << i;
    EXPECT_EQ(requests[i].num_output_tokens, 2) << i;
    EXPECT_EQ(p.begin, static_cast<int64_t>(3 * i)) << i;
    ASSERT_EQ(p.count, 3) << i;
    for (int j = 0; j < 3; ++j) EXPECT_EQ((*p.hashes)[p.begin + j], 4u + j) << i;
  }
  EXPECT_EQ(requests[0].prefix.hashes->size(), 12u);  // a failed fast path leaves nothing
}

// ---- errors -----------------------------------------------------------------------------------

TEST(JsonlTraceErrorTest, MalformedJson) {
  EXPECT_EQ(jsonl_error(kRow1 + "\n{\"timestamp\": 5,\n"),
            "<file>: line 2: malformed JSON at byte 17 (not shown); expected one JSON object per "
            "line, {\"timestamp\": <ms>, \"input_length\": <tokens>, \"output_length\": <tokens>, "
            "\"hash_ids\": [<int>, ...]}");
  EXPECT_THAT(jsonl_error("[1, 2]\n"), HasSubstr("<file>: line 1: expected a JSON object, "));
  EXPECT_THAT(jsonl_error(kRow1 + " 5\n"), HasSubstr("<file>: line 1: malformed JSON at byte"));
}

TEST(JsonlTraceErrorTest, MissingRepeatedOrNonIntegerField) {
  EXPECT_THAT(jsonl_error(R"({"timestamp": 0, "input_length": 10, "output_length": 1})"),
              HasSubstr("<file>: line 1: field \"hash_ids\": missing; expected {\"timestamp\""));
  EXPECT_EQ(jsonl_error(R"({"timestamp": 0, "timestamp": 1, "input_length": 10})"),
            "<file>: line 1, field \"timestamp\": expected one value, got a second one");
  EXPECT_EQ(jsonl_error(R"({"timestamp": 1.5, "input_length": 10})"),
            "<file>: line 1, field \"timestamp\": expected a non-negative integer, got 1.5");
  EXPECT_EQ(jsonl_error(R"({"input_length": "10"})"),
            "<file>: line 1, field \"input_length\": expected a non-negative integer, got \"10\"");
  EXPECT_EQ(jsonl_error(R"({"output_length": [3]})"),
            "<file>: line 1, field \"output_length\": expected a non-negative integer, got a list");
  EXPECT_EQ(jsonl_error(R"({"hash_ids": 4})"),
            "<file>: line 1, field \"hash_ids\": expected a list of hash ids, got 4");
  EXPECT_EQ(jsonl_error(R"({"output_length": 9223372036854775808})"),
            "<file>: line 1, field \"output_length\": expected an integer up to 2^63 - 1, got "
            "9223372036854775808");
}

TEST(JsonlTraceErrorTest, HashIdThatIsNotANonNegativeInteger) {
  EXPECT_EQ(jsonl_error(R"({"hash_ids": [1, -2]})"),
            "<file>: line 1, field \"hash_ids[1]\": expected a non-negative integer (a block "
            "hash id), got -2");
  EXPECT_EQ(jsonl_error(R"({"hash_ids": [1, 2, "abc"]})"),
            "<file>: line 1, field \"hash_ids[2]\": expected a non-negative integer (a block "
            "hash id), got \"abc\"");
  EXPECT_EQ(jsonl_error(R"({"hash_ids": [0.5]})"),
            "<file>: line 1, field \"hash_ids[0]\": expected a non-negative integer (a block "
            "hash id), got 0.5");
  EXPECT_EQ(jsonl_error(R"({"hash_ids": [[1]]})"),
            "<file>: line 1, field \"hash_ids[0]\": expected a non-negative integer (a block "
            "hash id), got a list");
}

TEST(JsonlTraceErrorTest, BlockSizeThatContradictsTheLengths) {
  EXPECT_EQ(
      jsonl_error(
          R"({"timestamp": 0, "input_length": 1025, "output_length": 1, "hash_ids": [1, 2]})"),
      "<file>: line 1, field \"hash_ids\": expected 3 hash ids, ceil(input_length 1025 / block "
      "512 tokens) (the block size contradicts its lengths), got 2 hash ids");
  TraceOptions blocks;
  blocks.hash_block_tokens = 16;
  EXPECT_THAT(jsonl_error(kRow1, blocks),
              HasSubstr("expected 65 hash ids, ceil(input_length 1030 / block 16 tokens)"));
}

TEST(JsonlTraceErrorTest, BadTimestampsAndLengths) {
  EXPECT_EQ(
      jsonl_error(R"({"timestamp": -1, "input_length": 1, "output_length": 1, "hash_ids": [1]})"),
      "<file>: line 1, field \"timestamp\": expected a non-negative integer, got -1");
  EXPECT_EQ(
      jsonl_error(
          R"({"timestamp": 9200000000001, "input_length": 1, "output_length": 1, "hash_ids": [1]})"),
      "<file>: line 1, field \"timestamp\": expected milliseconds up to 9200000000000 (the end "
      "of simulated time), got 9200000000001");
  EXPECT_EQ(
      jsonl_error(R"({"timestamp": 0, "input_length": 0, "output_length": 1, "hash_ids": []})"),
      "<file>: line 1, field \"input_length\": expected a positive integer, got 0");
  EXPECT_EQ(
      jsonl_error(R"({"timestamp": 0, "input_length": 5, "output_length": -3, "hash_ids": [1]})"),
      "<file>: line 1, field \"output_length\": expected a non-negative integer, got -3");
  EXPECT_EQ(jsonl_error(kRow2 + "\n" + kRow1 + "\n"),
            "<file>: line 2, field \"timestamp\": expected rows in time order (at least 1500, the "
            "previous row's), got 0");
}

TEST(JsonlTraceErrorTest, EmptyFileAndBadOptions) {
  EXPECT_THAT(jsonl_error("\n  \n"),
              HasSubstr("<file>: no rows; expected one JSON object per line"));
  TraceOptions bad;
  bad.hash_block_tokens = 0;
  EXPECT_EQ(jsonl_error(kRow1, bad),
            "<file>: hash_block_tokens: expected a positive integer, got 0");
  bad = {};
  bad.rate_multiplier = -1;
  EXPECT_EQ(jsonl_error(kRow1, bad), "<file>: rate_multiplier: expected a positive number, got -1");
  EXPECT_THAT(error_of([] { load_trace("/nonexistent/x.jsonl"); }),
              HasSubstr("/nonexistent/x.jsonl"));
}

}  // namespace
}  // namespace llmcap::sim
