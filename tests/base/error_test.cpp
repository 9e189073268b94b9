#include "base/error.h"

#include <gtest/gtest.h>

#include <string>

namespace llmcap::base {
namespace {

TEST(InputErrorTest, PlainMessageHasNoParts) {
  const InputError e("trace.csv: line 3: expected a number");
  EXPECT_STREQ(e.what(), "trace.csv: line 3: expected a number");
  EXPECT_EQ(e.file(), "");
  EXPECT_EQ(e.field_path(), "");
  EXPECT_EQ(e.value(), "");
  EXPECT_EQ(e.expected(), "");
}

TEST(InputErrorTest, BadFieldNamesFileFieldValueAndExpected) {
  const InputError e = InputError::bad_field("s.json", "fleet.groups[2].serving.max_num_seqs", "-3",
                                             "a positive integer");
  EXPECT_STREQ(e.what(),
               "s.json: field \"fleet.groups[2].serving.max_num_seqs\": expected a positive "
               "integer, got -3");
  EXPECT_EQ(e.file(), "s.json");
  EXPECT_EQ(e.record(), "");
  EXPECT_EQ(e.field_path(), "fleet.groups[2].serving.max_num_seqs");
  EXPECT_EQ(e.value(), "-3");
  EXPECT_EQ(e.expected(), "a positive integer");
}

TEST(InputErrorTest, BadRecordFieldPutsTheRecordBeforeTheField) {
  const InputError e = InputError::bad_record_field("instances.json", "instance \"aws-x\"",
                                                    "network.bandwidth_bytes_per_s",
                                                    "nothing (field missing)", "a positive number");
  EXPECT_STREQ(e.what(),
               "instances.json: instance \"aws-x\": field \"network.bandwidth_bytes_per_s\": "
               "expected a positive number, got nothing (field missing)");
  EXPECT_EQ(e.file(), "instances.json");
  EXPECT_EQ(e.record(), "instance \"aws-x\"");
  EXPECT_EQ(e.field_path(), "network.bandwidth_bytes_per_s");
}

TEST(InputErrorTest, MissingFieldWithAndWithoutNote) {
  const InputError plain = InputError::missing_field("s.json", "workload.kind");
  EXPECT_STREQ(plain.what(), "s.json: field \"workload.kind\": missing");
  EXPECT_EQ(plain.field_path(), "workload.kind");
  const InputError noted =
      InputError::missing_field("s.json", "fleet.decode", "a fleet needs both pools");
  EXPECT_STREQ(noted.what(), "s.json: field \"fleet.decode\": missing; a fleet needs both pools");
}

TEST(InputErrorTest, RefusedFieldStatesTheReason) {
  const InputError e =
      InputError::refused_field("s.json", "workload.cv", "not allowed with kind \"trace\"");
  EXPECT_STREQ(e.what(), "s.json: field \"workload.cv\": not allowed with kind \"trace\"");
  EXPECT_EQ(e.field_path(), "workload.cv");
}

TEST(InputErrorTest, UnknownFieldListsTheKnownOnes) {
  const InputError e = InputError::unknown_field("s.json", "tco.spto", "replacement_s, spot");
  EXPECT_STREQ(e.what(), "s.json: field \"tco.spto\": unknown; known fields: replacement_s, spot");
  EXPECT_EQ(e.field_path(), "tco.spto");
}

TEST(InputErrorTest, UnreadableFileAndMalformedJson) {
  const InputError unreadable = InputError::unreadable_file("x/missing.json");
  EXPECT_STREQ(unreadable.what(), "x/missing.json: cannot open file");
  EXPECT_EQ(unreadable.file(), "x/missing.json");
  const InputError malformed = InputError::malformed_json("x.json", "parse error at byte 3");
  EXPECT_STREQ(malformed.what(), "x.json: malformed JSON: parse error at byte 3");
  EXPECT_EQ(malformed.file(), "x.json");
}

TEST(InputErrorTest, BadDocumentWithAndWithoutValue) {
  EXPECT_STREQ(InputError::bad_document("s.json", "a JSON object at the top level").what(),
               "s.json: expected a JSON object at the top level");
  const InputError e = InputError::bad_document("c.json", "a JSON object", std::string("array"));
  EXPECT_STREQ(e.what(), "c.json: expected a JSON object, got array");
  EXPECT_EQ(e.value(), "array");
  EXPECT_EQ(e.field_path(), "");
}

TEST(InputErrorTest, IsARuntimeError) {
  try {
    throw InputError::unreadable_file("f");
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "f: cannot open file");
  }
}

TEST(InputErrorTest, MalformedJsonDoesNotRepeatTheTextTheParserRead) {
  const InputError e = InputError::malformed_json(
      "f.json",
      "[json.exception.parse_error.101] parse error at line 1, column 12: syntax error while "
      "parsing value - invalid string: missing closing quote; last read: '\"hunter2 sec'");
  EXPECT_STREQ(e.what(),
               "f.json: malformed JSON: [json.exception.parse_error.101] parse error at line 1, "
               "column 12: syntax error while parsing value - invalid string: missing closing "
               "quote");
  const InputError expected = InputError::malformed_json(
      "g.json",
      "syntax error while parsing object key - invalid literal; last read: 'root:x'; "
      "expected string literal");
  EXPECT_STREQ(expected.what(),
               "g.json: malformed JSON: syntax error while parsing object key - invalid literal; "
               "expected string literal");
}

}  // namespace
}  // namespace llmcap::base
