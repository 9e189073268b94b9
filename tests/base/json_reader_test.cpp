#include "base/json_reader.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace llmcap::base {
namespace {

using nlohmann::json;

/// The message of the InputError that `f` throws ("" when it throws none).
template <typename F>
std::string message_of(F f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(JsonReaderTest, ReadsTypedFields) {
  const json doc =
      json::parse(R"({"name": "x", "rate": 2.5, "n": 3, "on": true, "zero": 0, "sub": {"k": 1}})");
  const JsonReader r(doc, "s.json", "");
  EXPECT_EQ(r.string("name"), "x");
  EXPECT_EQ(r.positive_number("rate"), 2.5);
  EXPECT_EQ(r.positive_int("n"), 3);
  EXPECT_EQ(r.non_negative_int("zero"), 0);
  EXPECT_EQ(r.non_negative_number("zero"), 0);
  EXPECT_TRUE(r.boolean("on"));
  EXPECT_EQ(r.object("sub").positive_int("k"), 1);
  EXPECT_EQ(r.string_or("absent", "fallback"), "fallback");
  EXPECT_EQ(r.positive_int_or("absent", 7), 7);
}

TEST(JsonReaderTest, MessagesNameFileFieldPathValueAndExpected) {
  const json doc = json::parse(R"({"workload": {"rate_per_s": -1, "kind": 3}})");
  const JsonReader r(doc, "s.json", "");
  EXPECT_EQ(message_of([&] { r.object("workload").positive_number("rate_per_s"); }),
            "s.json: field \"workload.rate_per_s\": expected a positive number, got -1");
  EXPECT_EQ(message_of([&] { r.object("workload").string("kind"); }),
            "s.json: field \"workload.kind\": expected a string, got 3");
  try {
    r.object("workload").positive_number("rate_per_s");
  } catch (const InputError& e) {
    EXPECT_EQ(e.field_path(), "workload.rate_per_s");
    EXPECT_EQ(e.value(), "-1");
    EXPECT_EQ(e.expected(), "a positive number");
  }
}

TEST(JsonReaderTest, MissingFieldsSayMissingByDefault) {
  const json doc = json::parse(R"({"slo": {}})");
  const JsonReader r(doc, "s.json", "");
  EXPECT_EQ(message_of([&] { r.object("slo").positive_number("ttft_p99_s"); }),
            "s.json: field \"slo.ttft_p99_s\": missing");
  EXPECT_EQ(message_of([&] { r.at("nothing"); }), "s.json: field \"nothing\": missing");
  EXPECT_EQ(message_of([&] { r.fail_missing("x", "give one"); }),
            "s.json: field \"x\": missing; give one");
}

TEST(JsonReaderTest, MissingFieldsCanNameWhatWasExpected) {
  const json doc = json::parse(R"({"hidden_size": null})");
  JsonReaderStyle style;
  style.missing_names_expected = true;
  const JsonReader r(doc, "config.json", "", style);
  EXPECT_EQ(message_of([&] { r.positive_int("vocab_size"); }),
            "config.json: field \"vocab_size\": expected a positive integer, got nothing (field "
            "missing)");
  // Without null_is_missing a null is a value of the wrong type.
  EXPECT_EQ(message_of([&] { r.positive_int("hidden_size"); }),
            "config.json: field \"hidden_size\": expected a positive integer, got null");
  EXPECT_FALSE(r.has_value("hidden_size"));
  EXPECT_TRUE(r.has("hidden_size"));
}

TEST(JsonReaderTest, NullCanCountAsAbsent) {
  const json doc = json::parse(R"({"id": null, "cores": 4.0})");
  JsonReaderStyle style;
  style.null_is_missing = true;
  style.missing_names_expected = true;
  style.whole_floats = true;
  const JsonReader r(doc, "cpus.json", "", style, "cpu record 0");
  EXPECT_FALSE(r.has("id"));
  EXPECT_EQ(r.got("id"), "nothing (field missing)");
  EXPECT_EQ(message_of([&] { r.non_empty_string("id"); }),
            "cpus.json: cpu record 0: field \"id\": expected a non-empty string, got nothing "
            "(field missing)");
  EXPECT_EQ(r.positive_int("cores"), 4);
}

TEST(JsonReaderTest, IntegersAreStrictUnlessWholeFloatsAreAllowed) {
  const json doc = json::parse(R"({"a": 4.0, "b": 4.5, "c": 18446744073709551615, "d": 0})");
  const JsonReader strict(doc, "f.json", "");
  EXPECT_EQ(message_of([&] { strict.positive_int("a"); }),
            "f.json: field \"a\": expected a positive integer, got 4.0");
  EXPECT_EQ(message_of([&] { strict.positive_int("c"); }),
            "f.json: field \"c\": expected a positive integer, got 18446744073709551615");
  EXPECT_EQ(message_of([&] { strict.positive_int("d"); }),
            "f.json: field \"d\": expected a positive integer, got 0");
  JsonReaderStyle style;
  style.whole_floats = true;
  const JsonReader whole(doc, "f.json", "", style);
  EXPECT_EQ(whole.positive_int("a"), 4);
  EXPECT_EQ(message_of([&] { whole.positive_int("b"); }),
            "f.json: field \"b\": expected a positive integer, got 4.5");
}

TEST(JsonReaderTest, NumbersMeetTheirRange) {
  const json doc = json::parse(R"({"pue": 0.5})");
  const JsonReader r(doc, "s.json", "tco.owned[0]");
  EXPECT_EQ(message_of([&] {
              r.number(
                  "pue", [](double v) { return v >= 1 && v <= 10; }, "a PUE in [1, 10]");
            }),
            "s.json: field \"tco.owned[0].pue\": expected a PUE in [1, 10], got 0.5");
}

TEST(JsonReaderTest, RefuseAndOnly) {
  const json doc = json::parse(R"({"cv": 1, "spto": 2})");
  const JsonReader r(doc, "s.json", "workload");
  EXPECT_EQ(message_of([&] { r.refuse("cv", "not allowed with kind \"trace\""); }),
            "s.json: field \"workload.cv\": not allowed with kind \"trace\"");
  EXPECT_EQ(message_of([&] { r.refuse("shape", "never"); }), "");
  EXPECT_EQ(message_of([&] {
              r.only({"cv", "spot"});
            }),
            "s.json: field \"workload.spto\": unknown; known fields: cv, spot");
}

TEST(JsonReaderTest, ElementsOfAnArrayAreObjects) {
  const json doc = json::parse(R"({"groups": [{"count": 2}, 3]})");
  const JsonReader r(doc, "s.json", "fleet");
  EXPECT_EQ(r.element("groups", 0).positive_int("count"), 2);
  EXPECT_EQ(message_of([&] { r.element("groups", 1); }),
            "s.json: field \"fleet.groups[1]\": expected an object, got 3");
}

TEST(JsonReaderTest, ElementsCanNameWhatWasExpected) {
  const json doc = json::parse(R"({"results": [{"n": 1}, "x"], "one": 3})");
  const JsonReader r(doc, "p.json", "");
  EXPECT_EQ(r.array("results", "an array of plan rows").size(), 2u);
  EXPECT_EQ(r.element("results", 0, "a plan row object").positive_int("n"), 1);
  EXPECT_EQ(message_of([&] { r.element("results", 1, "a plan row object"); }),
            "p.json: field \"results[1]\": expected a plan row object, got \"x\"");
  EXPECT_EQ(message_of([&] { r.array("one", "an array of plan rows"); }),
            "p.json: field \"one\": expected an array of plan rows, got 3");
}

TEST(JsonReaderTest, NonEmptyArrays) {
  const json doc = json::parse(R"({"tp": [1, 2], "none": [], "one": 1})");
  const JsonReader r(doc, "s.json", "search");
  EXPECT_EQ(r.non_empty_array("tp", "a non-empty list").size(), 2u);
  EXPECT_EQ(message_of([&] { r.non_empty_array("none", "a non-empty list"); }),
            "s.json: field \"search.none\": expected a non-empty list, got []");
  EXPECT_EQ(message_of([&] { r.non_empty_array("one", "a non-empty list"); }),
            "s.json: field \"search.one\": expected a non-empty list, got 1");
  EXPECT_EQ(message_of([&] { r.non_empty_array("absent", "a non-empty list"); }),
            "s.json: field \"search.absent\": missing");
}

TEST(JsonReaderTest, StringsAndObjectsCanNameWhatWasExpected) {
  const json doc = json::parse(R"({"scenario": 3, "grid": []})");
  const JsonReader r(doc, "w.json", "");
  EXPECT_EQ(message_of([&] { r.string("scenario", "a scenario file path"); }),
            "w.json: field \"scenario\": expected a scenario file path, got 3");
  EXPECT_EQ(message_of([&] { r.object("grid", "an object of field: [values]"); }),
            "w.json: field \"grid\": expected an object of field: [values], got []");
}

TEST(JsonReaderTest, RefuseUnknownAndFailRefused) {
  const json doc = json::parse(R"({"prune": true, "zeta": 1})");
  const JsonReader r(doc, "s.json", "search");
  EXPECT_EQ(message_of([&] { r.refuse_unknown({"prune", "zeta"}, "unknown field; known: "); }), "");
  EXPECT_EQ(message_of([&] {
              r.refuse_unknown({"prune", "max_rate"}, "unknown field; known: ");
            }),
            "s.json: field \"search.zeta\": unknown field; known: prune, max_rate");
  EXPECT_EQ(message_of([&] { r.fail_refused("grid", "missing (required)"); }),
            "s.json: field \"search.grid\": missing (required)");
}

TEST(JsonReaderTest, OrderedDocumentsNameTheFirstUnknownKeyInFileOrder) {
  const nlohmann::ordered_json doc = parse_ordered_json_text(R"({"zz": 1, "aa": 2})", "w.json");
  const OrderedJsonReader r(doc, "w.json", "");
  EXPECT_EQ(message_of([&] { r.refuse_unknown({"name"}, "unknown field; expected one of "); }),
            "w.json: field \"zz\": unknown field; expected one of name");
  EXPECT_EQ(message_of([&] { r.only({"name"}); }),
            "w.json: field \"zz\": unknown; known fields: name");
  EXPECT_EQ(r.positive_int("aa"), 2);
  const std::string message = message_of([] { parse_ordered_json_text("{", "w.json"); });
  EXPECT_EQ(message.rfind("w.json: malformed JSON: [json.exception.parse_error", 0), 0u) << message;
}

TEST(JsonReaderTest, LenientReadsGiveTheFallback) {
  EXPECT_TRUE(parse_json_or_null("").is_null());
  EXPECT_TRUE(parse_json_or_null("{oops").is_null());
  EXPECT_EQ(parse_json_or_null(R"({"a": 1})").at("a"), 1);
  const json row = json::parse(R"({"usd": 2.5, "id": "x", "bad": "3"})");
  EXPECT_EQ(number_or(row, "usd", 0), 2.5);
  EXPECT_EQ(number_or(row, "bad", -1), -1);
  EXPECT_EQ(number_or(row, "absent", 7), 7);
  EXPECT_EQ(number_or(json(3), "usd", 7), 7);  // not an object
  EXPECT_EQ(string_or(row, "id"), "x");
  EXPECT_EQ(string_or(row, "usd", "none"), "none");
  EXPECT_EQ(string_or(json(nullptr), "id", "none"), "none");
}

TEST(JsonReaderTest, LongValuesCanBeCut) {
  const json doc = {{"v", std::string(100, 'a')}};
  JsonReaderStyle style;
  style.max_shown_chars = 10;
  const JsonReader r(doc, "p.json", "", style);
  EXPECT_EQ(r.shown(doc.at("v")), "\"aaaaaa...");
}

TEST(JsonReaderTest, FilesThatCannotBeReadOrParsed) {
  EXPECT_EQ(message_of([] { read_json_file("/nonexistent/x.json"); }),
            "/nonexistent/x.json: cannot open file");
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / "llmcap_base_json_reader_test.json";
  {
    std::ofstream out(path);
    out << "{\"a\": 1,}";
  }
  const std::string message = message_of([&] { read_json_file(path); });
  EXPECT_EQ(message.rfind(path.string() + ": malformed JSON: [json.exception.parse_error", 0), 0u)
      << message;
  std::filesystem::remove(path);
  const std::string text_message = message_of([] { parse_json_text("[1,", "t.json"); });
  EXPECT_EQ(text_message.rfind("t.json: malformed JSON: [json.exception.parse_error", 0), 0u)
      << text_message;
}

/// `levels` arrays nested in one another around 0, e.g. [[0]] for 2.
std::string nested_arrays(int levels) {
  return std::string(static_cast<size_t>(levels), '[') + "0" +
         std::string(static_cast<size_t>(levels), ']');
}

TEST(JsonReaderTest, NestingIsBoundedByEveryParse) {
  // 64 levels parse; the 65th is refused with the path of the container that opens it.
  EXPECT_NO_THROW(parse_json_text(nested_arrays(kMaxJsonDepth), "t.json"));
  EXPECT_EQ(
      message_of([] { parse_json_text(nested_arrays(kMaxJsonDepth + 1), "t.json"); }),
      "t.json: field \"" +
          [] {
            std::string path;
            for (int i = 0; i < kMaxJsonDepth; ++i) path += "[0]";
            return path.substr(0, 77) + "...";
          }() +
          "\": expected at most 64 levels of nested objects and arrays, got level 65");
  // A hundred thousand levels: refused (printing them would overflow the stack), not a crash.
  std::string deep;
  for (int i = 0; i < 100000; ++i) deep += "{\"a\":";
  deep += "1" + std::string(100000, '}');
  const std::string message = message_of([&] { parse_json_text(deep, "deep.json"); });
  EXPECT_EQ(message.rfind("deep.json: field \"a.a.a.", 0), 0u) << message;
  EXPECT_NE(message.find("expected at most 64 levels of nested objects and arrays, got level 65"),
            std::string::npos)
      << message;
  EXPECT_NE(message_of([&] { parse_ordered_json_text(deep, "o.json"); }).find("got level 65"),
            std::string::npos);
  std::string error;
  EXPECT_NE(message_of([&] { try_parse_json(deep, "x.json", &error); }).find("x.json: field"),
            std::string::npos);
  // Lenient reads of stored documents read a too-deep one as null.
  EXPECT_TRUE(parse_json_or_null(deep).is_null());
  EXPECT_EQ(parse_json_or_null(nested_arrays(3)), json::parse("[[[0]]]"));
}

TEST(JsonReaderTest, NumbersBeyondDoubleRangeNameTheirField) {
  EXPECT_EQ(message_of([] { parse_json_text(R"({"w": {"rate": 1e999}})", "s.json"); }),
            "s.json: field \"w.rate\": expected a number of magnitude below 1.8e308, got 1e999");
  EXPECT_EQ(message_of([] { parse_json_text(R"({"l": [1, {"x": 2}, -2E+400]})", "s.json"); }),
            "s.json: field \"l[2]\": expected a number of magnitude below 1.8e308, got -2E+400");
  EXPECT_EQ(message_of([] { parse_ordered_json_text("1e999", "n.json"); }),
            "n.json: expected a number of magnitude below 1.8e308, got 1e999");
  EXPECT_TRUE(parse_json_or_null(R"({"a": 1e999})").is_null());
  // Large but finite numbers, and integers beyond 64 bits (read as doubles), still parse.
  EXPECT_EQ(parse_json_text(R"({"a": 1.7e308})", "s.json").at("a").get<double>(), 1.7e308);
  EXPECT_TRUE(parse_json_text("123456789012345678901234567890", "s.json").is_number_float());
}

TEST(JsonReaderTest, SyntaxErrorsLeaveTryParseEmpty) {
  std::string error;
  EXPECT_FALSE(try_parse_json("{\"a\": ", "t.json", &error).has_value());
  EXPECT_EQ(error.rfind("[json.exception.parse_error", 0), 0u) << error;
  EXPECT_EQ(try_parse_json("{\"a\": [1]}", "t.json", &error), json::parse("{\"a\": [1]}"));
}

TEST(JsonReaderTest, ADirectoryIsNotAReadableFile) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  EXPECT_EQ(message_of([&] { read_json_file(dir); }), dir + ": cannot open file");
}

}  // namespace
}  // namespace llmcap::base
