// Inputs at and beyond the bounds of the readers (issue 29, "Bounds at the edge" and "Semantic
// checks"): each case is refused before any simulation with one line naming the file, the
// field, the value and what was expected, exit code 2 and no output file; stored documents
// beyond the bounds are read without a crash.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "run_cli.h"
#include "store/results_store.h"
#include "test_util.h"

namespace llmcap::cli {
namespace {

using llmcap::cli::testing::CliRun;
using llmcap::cli::testing::run_cli;
using llmcap::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const std::string kModel = std::string(LLMCAP_DATA_DIR) + "/models/llama-3.1-8b.json";
const std::string kTrace = std::string(LLMCAP_TEST_DATA_DIR) + "/conv_model300.csv";

/// A scenario on the small trace with `workload` (the inside of the workload object) and
/// `extra` (more top-level fields, each with a leading comma).
std::string scenario(const std::string& workload, const std::string& extra = "",
                     const std::string& model = kModel) {
  return "{\"name\": \"bounds\", \"model\": \"" + model + "\", \"workload\": {" + workload +
         "}, \"slo\": {\"ttft_p99_s\": 2, \"tpot_p99_s\": 0.05}, \"candidates\": "
         "[\"aws-g6e.xlarge\"]" +
         extra + "}";
}

std::string trace_workload(const std::string& extra = "") {
  return "\"kind\": \"trace\", \"path\": \"" + kTrace + "\"" + extra;
}

/// Runs `plan` on `path` with --json and --csv (plus `flags`); expects exit 2, one error line
/// containing each of `expected`, nothing on stdout and neither output file.
void expect_refused(const std::filesystem::path& path, const std::vector<std::string>& expected,
                    const std::vector<std::string>& flags = {}) {
  TempDir out_dir;
  const auto json_path = out_dir.path() / "out.json";
  const auto csv_path = out_dir.path() / "out.csv";
  std::vector<std::string> args = {"plan",  path.string(),     "--json",  json_path.string(),
                                   "--csv", csv_path.string(), "--quiet", "--no-store"};
  args.insert(args.end(), flags.begin(), flags.end());
  const CliRun r = run_cli(args);
  EXPECT_EQ(r.code, kExitBadInput) << r.err;
  EXPECT_THAT(r.err, StartsWith("llmcap: error: "));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  for (const std::string& s : expected) EXPECT_THAT(r.err, HasSubstr(s));
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(std::filesystem::exists(json_path));
  EXPECT_FALSE(std::filesystem::exists(csv_path));
}

std::string deeply_nested(const std::string& key, int levels) {
  std::string text;
  for (int i = 0; i < levels; ++i) text += "{\"" + key + "\": ";
  return text + "1" + std::string(static_cast<size_t>(levels), '}');
}

TEST(CliBounds, DeeplyNestedJsonIsRefusedNotACrash) {
  TempDir dir;
  const auto p = dir.write("s.json", deeply_nested("a", 100000));
  expect_refused(p, {p.string() + ": field \"a.a.a.",
                     "...\": expected at most 64 levels of "
                     "nested objects and arrays, got level 65"});
  // The same in a model config.
  const auto model = dir.write("m.json", deeply_nested("x", 1000));
  const auto s = dir.write("s2.json", scenario(trace_workload(), "", model.string()));
  expect_refused(s, {model.string() + ": field \"x.x.", "got level 65"});
}

TEST(CliBounds, NumberBeyondDoubleRangeNamesFileAndField) {
  TempDir dir;
  const auto p = dir.write("s.json", scenario(trace_workload(", \"rate_multiplier\": 1e999")));
  expect_refused(p, {p.string() + ": field \"workload.rate_multiplier\": expected a number of "
                                  "magnitude below 1.8e308, got 1e999"});
}

TEST(CliBounds, UnknownKeysAreRefusedAtEveryLevel) {
  TempDir dir;
  const std::string deep = deeply_nested("z", 40);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {scenario(trace_workload(), ", \"extra\": " + deep), "field \"extra\": unknown"},
      {scenario(trace_workload(", \"extra\": " + deep)), "field \"workload.extra\": unknown"},
      {scenario(trace_workload(), ", \"serving\": {\"max_num_seqs\": 4, \"x\": " + deep + "}"),
       "field \"serving.x\": unknown"},
      {scenario(trace_workload(", \"rate_per_s\": 3")),
       "field \"workload.rate_per_s\": unknown; known fields: kind, path, rate_multiplier"},
  };
  for (const auto& [text, message] : cases) {
    const auto p = dir.write("s.json", text);
    expect_refused(p, {p.string() + ": " + message});
  }
  const auto slo = dir.write("slo.json", "{\"name\": \"b\", \"model\": \"" + kModel +
                                             "\", \"workload\": {" + trace_workload() +
                                             "}, \"slo\": {\"ttft_p99_s\": 2, \"tpot_p99_s\": "
                                             "0.05, \"p50\": {}}}");
  expect_refused(slo, {slo.string() + ": field \"slo.p50\": unknown"});
  const auto fleet = dir.write(
      "fleet.json", "{\"name\": \"b\", \"model\": \"" + kModel + "\", \"workload\": {" +
                        trace_workload() +
                        "}, \"slo\": {\"ttft_p99_s\": 2, \"tpot_p99_s\": 0.05}, \"fleet\": "
                        "{\"groups\": [{\"instance\": \"aws-g6e.xlarge\", \"count\": 1, "
                        "\"serving\": {\"max_num_seqs\": 4, \"y\": 1}}]}}");
  expect_refused(fleet, {fleet.string() + ": field \"fleet.groups[0].serving.y\": unknown"});
}

std::string lengths_workload(const std::string& kind, const std::string& extra) {
  return "\"kind\": \"" + kind + "\", \"lengths_path\": \"" + kTrace + "\", " + extra;
}

TEST(CliBounds, AWorkloadThatYieldsNoRequestIsRefused) {
  TempDir dir;
  // One request per 1e9 s on average: none arrives in the first second.
  const auto p = dir.write(
      "s.json", scenario(lengths_workload("poisson", "\"rate_per_s\": 1e-9, \"duration_s\": 1")));
  expect_refused(p, {p.string() + ": field \"workload.duration_s\": expected a workload that "
                                  "yields at least one request, got 1 (no arrival before it)"});
}

TEST(CliBounds, ClosedLoopTimesStayWithinSimulatedTime) {
  TempDir dir;
  const auto think = dir.write("think.json", scenario(lengths_workload("closed_loop",
                                                                       "\"num_users\": 2, "
                                                                       "\"think_time_s\": 1e12, "
                                                                       "\"duration_s\": 60")));
  expect_refused(think, {think.string() + ": field \"workload.think_time_s\": expected a number "
                                          "of seconds in [0, 1e8]",
                         "got 1000000000000.0"});
  const auto duration =
      dir.write("duration.json", scenario(lengths_workload("closed_loop",
                                                           "\"num_users\": 2, "
                                                           "\"think_time_s\": 1, "
                                                           "\"duration_s\": 1e10")));
  expect_refused(duration, {duration.string() + ": field \"workload.duration_s\": expected a "
                                                "number of seconds in (0, 4e9]",
                            "got 10000000000.0"});
}

TEST(CliBounds, CountsBeyondTheirMaximaAreRefusedBeforeAnyWork) {
  TempDir dir;
  const auto requests =
      dir.write("r.json", scenario(lengths_workload("poisson",
                                                    "\"rate_per_s\": 10, "
                                                    "\"num_requests\": 10000000000")));
  expect_refused(requests, {requests.string() + ": field \"workload.num_requests\": expected a "
                                                "positive integer up to 1e8, got 10000000000"});
  const auto users = dir.write("u.json", scenario(lengths_workload("closed_loop",
                                                                   "\"num_users\": 1000000000, "
                                                                   "\"think_time_s\": 1, "
                                                                   "\"duration_s\": 10")));
  expect_refused(users, {users.string() + ": field \"workload.num_users\": expected a positive "
                                          "integer up to 1e6, got 1000000000"});
  const auto multiplier =
      dir.write("m.json", scenario(trace_workload(", \"rate_multiplier\": 1e-300")));
  expect_refused(multiplier,
                 {multiplier.string() + ": field \"workload.rate_multiplier\": "
                                        "expected a number in [0.001, 1e6], got 1e-300"});
}

TEST(CliBounds, AModelPathThatIsADirectoryIsNamed) {
  TempDir dir;
  const auto p = dir.write("s.json", scenario(trace_workload(), "", dir.path().string()));
  expect_refused(p,
                 {p.string() + ": field \"model\": " + dir.path().string() + ": cannot open file"});
}

/// A llama-like config (`type`) with `extra` fields after the usual ones.
std::string model_config(const std::string& type, const std::string& shape) {
  return "{\"model_type\": \"" + type +
         "\", \"vocab_size\": 32000, "
         "\"max_position_embeddings\": 4096, \"num_attention_heads\": 32, "
         "\"num_key_value_heads\": 8, " +
         shape + "}";
}

TEST(CliBounds, ModelShapesThatWouldOverflowAreRefused) {
  TempDir dir;
  // A huge hidden size once gave negative weight bytes.
  const auto dense = dir.write("dense.json", model_config("llama",
                                                          "\"hidden_size\": 10000000000, "
                                                          "\"intermediate_size\": 14336, "
                                                          "\"num_hidden_layers\": 32"));
  const auto s1 = dir.write("s1.json", scenario(trace_workload(), "", dense.string()));
  expect_refused(s1, {dense.string() + ": field \"hidden_size\": expected an integer up to "
                                       "16777216, got 10000000000"});
  const auto layers =
      dir.write("layers.json", model_config("qwen3",
                                            "\"hidden_size\": 4096, \"head_dim\": 128, "
                                            "\"intermediate_size\": 14336, "
                                            "\"num_hidden_layers\": 1000000000"));
  const auto s2 = dir.write("s2.json", scenario(trace_workload(), "", layers.string()));
  expect_refused(s2, {layers.string() + ": field \"num_hidden_layers\": expected an integer up "
                                        "to 65536 (layers), got 1000000000"});
  // Each field in range, the product not: 16M-wide MLPs in 60,000 layers.
  const auto product = dir.write("product.json", model_config("llama",
                                                              "\"hidden_size\": 16777216, "
                                                              "\"intermediate_size\": 16777216, "
                                                              "\"num_hidden_layers\": 60000"));
  const auto s3 = dir.write("s3.json", scenario(trace_workload(), "", product.string()));
  expect_refused(s3, {product.string() + ": field \"hidden_size\": the shape gives ",
                      "parameters (hidden_size 16777216, 60000 layers); expected at most 1e15"});
}

/// llama-3.1-8b's config with max_position_embeddings `context`.
std::filesystem::path short_context_model(const TempDir& dir, int context) {
  std::string text = llmcap::testing::read_text(kModel);
  const std::string key = "\"max_position_embeddings\": 131072";
  text.replace(text.find(key), key.size(),
               "\"max_position_embeddings\": " + std::to_string(context));
  return dir.write("ctx" + std::to_string(context) + ".json", text);
}

TEST(CliBounds, RequestsBeyondTheContextLengthAreRefusedByDefault) {
  TempDir dir;
  // 19 of the 300 requests of the small trace have more than 2,048 tokens (at most 4,176).
  const auto model = short_context_model(dir, 2048);
  const auto p = dir.write("s.json", scenario(trace_workload(), "", model.string()));
  expect_refused(p, {p.string() +
                     ": field \"workload\": 43 of 300 requests exceed the model's "
                     "context length (2048 tokens, max_position_embeddings of " +
                     model.string() +
                     "; the longest prompt plus output has 5324 tokens); "
                     "expected at most 2048, or \"over_context\": \"clip\""});
  const auto one = short_context_model(dir, 1);
  const auto p1 = dir.write("s1.json", scenario(trace_workload(), "", one.string()));
  expect_refused(p1, {"300 of 300 requests exceed the model's context length (1 tokens"});
  const auto bad = dir.write(
      "bad.json", scenario(trace_workload(", \"over_context\": \"truncate\""), "", model.string()));
  expect_refused(bad, {bad.string() + ": field \"workload.over_context\": expected \"refuse\" or "
                                      "\"clip\", got \"truncate\""});
}

TEST(CliBounds, OverContextClipPlansTheClippedRequests) {
  TempDir dir;
  const auto model = short_context_model(dir, 2048);
  const auto p = dir.write(
      "s.json", scenario(trace_workload(", \"over_context\": \"clip\""), "", model.string()));
  const CliRun r = run_cli({"plan", p.string(), "--quiet", "--no-store"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("aws-g6e.xlarge"));
}

TEST(CliBounds, WorkloadsAboveTheRequestLimitAreRefusedWithTheirEstimate) {
  TempDir dir;
  // 1,000 requests/s for an hour: 3.6 million arrivals, refused before they are drawn.
  const auto p = dir.write("s.json", scenario(lengths_workload(
                                         "poisson", "\"rate_per_s\": 1000, \"duration_s\": 3600")));
  expect_refused(p,
                 {p.string() + ": field \"workload.duration_s\": about 3600000 requests, which "
                               "would need about 7.37 GB to simulate (~2 KB a request); expected "
                               "at most 2000000 requests (raise the limit with --max-requests)"});
  // A trace is counted once read; the flag lowers (or raises) the limit.
  const auto t = dir.write("t.json", scenario(trace_workload()));
  expect_refused(t,
                 {t.string() + ": field \"workload.path\": about 300 requests",
                  "expected at most 100 requests"},
                 {"--max-requests", "100"});
  const CliRun r = run_cli({"plan", t.string(), "--quiet", "--no-store", "--max-requests", "300"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
}

TEST(CliBounds, AClosedLoopStopsAtTheRequestLimitNamingItsDuration) {
  TempDir dir;
  // 40 users who barely think, for 10 minutes: far more than 100 requests, and how many only
  // the simulation knows; it stops at the limit rather than growing without bound.
  const auto p = dir.write("s.json", scenario(lengths_workload("closed_loop",
                                                               "\"num_users\": 40, "
                                                               "\"think_time_s\": 0.1, "
                                                               "\"duration_s\": 600")));
  expect_refused(p,
                 {p.string() + ": field \"workload.duration_s\": the closed loop of 40 users "
                               "issued more than 100 requests before ",
                  " s of 600 s; expected at most 100 requests (raise the limit with "
                  "--max-requests)"},
                 {"--max-requests", "100"});
}

TEST(CliBounds, ClaimBatchesThatWouldOverflowAreRefused) {
  TempDir dir;
  const std::string seed = std::string(LLMCAP_DATA_DIR) + "/claims/seed-article.json";
  // The first claim's batch (several claims have batch 1).
  std::string text = llmcap::testing::read_text(seed);
  const std::string batch = "\"batch\": 1,";
  text.replace(text.find(batch), batch.size(), "\"batch\": 4000000000000,");
  const auto claims = dir.write("claims.json", text);
  const auto json_path = dir.path() / "audit.json";
  const CliRun r = run_cli({"audit", claims.string(), "--json", json_path.string()});
  EXPECT_EQ(r.code, kExitBadInput) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr(claims.string()));
  EXPECT_THAT(r.err, HasSubstr("field \"batch\": expected an integer up to 1000000 (sequences), "
                               "got 4000000000000"));
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_FALSE(std::filesystem::exists(json_path));
}

/// A stored run whose input and document are nested far beyond the bounds (as an older build
/// could store them) is listed, shown and compared without a crash.
TEST(CliBounds, StoredDocumentsBeyondTheBoundsDoNotCrash) {
  TempDir dir;
  const std::string db = (dir.path() / "runs.sqlite").string();
  {
    store::ResultsStore store = store::ResultsStore::open(db);
    for (int i = 0; i < 3; ++i) {
      store::RunRecord r;
      r.kind = "plan";
      r.name = "deep";
      r.input_json = "{\"name\": \"deep\", \"x\": " + deeply_nested("a", 100000) + "}";
      // Run 1's document is too deep as well; runs 2 and 3 have plain ones (to compare).
      r.document_json = i == 0 ? "{\"results\": [], \"x\": " + deeply_nested("b", 100000) + "}"
                               : std::string("{\"results\": []}");
      r.summary = "deep";
      store.add_run(r);
    }
  }
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"runs", "list", "--db", db},
                                             {"runs", "show", "1", "--db", db},
                                             {"runs", "show", "1", "--json", "--db", db},
                                             {"runs", "show", "2", "--db", db},
                                             {"runs", "compare", "2", "3", "--db", db}}) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.code, kExitOk) << args[1] << " " << r.err;
  }
  // A report of that document, and of a document file as deep (found by fuzz_report), is
  // refused with the bound named, and writes nothing.
  const auto out = dir.path() / "report.md";
  const auto deep_file = dir.write("deep.json", deeply_nested("c", 1000));
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"report", "1", "--db", db, "--out", out.string()},
           {"report", "--document", deep_file.string(), "--out", out.string()}}) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.code, kExitBadInput) << args[1] << " " << r.err;
    EXPECT_THAT(r.err, HasSubstr("expected at most 64 levels of nested objects and arrays"));
    EXPECT_FALSE(std::filesystem::exists(out));
  }
}

}  // namespace
}  // namespace llmcap::cli
