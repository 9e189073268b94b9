// The one error type for bad input (files, fields, values) in the whole tree.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>

namespace llmcap::base {

/// Thrown when a file, field or value given by the user cannot be used. what() is one line
/// that names the file, the field (or line and column), the value and what was expected, e.g.
///   `data/models/x.json: field "num_hidden_layers": expected a positive integer, got -3`.
///
/// Errors made by the named factories also carry those parts separately (file(), record(),
/// field_path(), value(), expected()), so a front end can find the field without parsing the
/// text. An error made from a plain message carries only the message: its parts are empty.
/// Each factory states the exact text it produces; the texts are part of the behaviour (tests
/// compare them byte for byte).
class InputError : public std::runtime_error {
 public:
  /// A free-form message; every structured part is empty.
  explicit InputError(const std::string& message) : std::runtime_error(message) {}

  /// `<file>: field "<field_path>": expected <expected>, got <value>`. `value` is the text
  /// shown for the value as given (usually its JSON text, or "nothing (field missing)").
  static InputError bad_field(const std::string& file, const std::string& field_path,
                              const std::string& value, const std::string& expected);

  /// `<file>: <record>: field "<field_path>": expected <expected>, got <value>`, for a field
  /// of one record of a catalog file (`record` is e.g. `instance "aws-x"` or `record 3`).
  static InputError bad_record_field(const std::string& file, const std::string& record,
                                     const std::string& field_path, const std::string& value,
                                     const std::string& expected);

  /// `<file>: field "<field_path>": missing`, or with a non-empty `note`
  /// `<file>: field "<field_path>": missing; <note>`.
  static InputError missing_field(const std::string& file, const std::string& field_path,
                                  const std::string& note = "");

  /// `<file>: field "<field_path>": <reason>`: any other message about one field, e.g. a field
  /// that is not allowed (reason `not allowed with kind "trace"`), an unknown name (reason
  /// `unsupported model type "mamba"; known: ...`) or a value another reader refused. The
  /// reason is free text; value() and expected() stay empty.
  static InputError refused_field(const std::string& file, const std::string& field_path,
                                  const std::string& reason);

  /// `<file>: field "<field_path>": unknown; known fields: <known>` (`known` is the
  /// comma-separated list of the keys allowed there).
  static InputError unknown_field(const std::string& file, const std::string& field_path,
                                  const std::string& known);

  /// `<file>: cannot open file`.
  static InputError unreadable_file(const std::string& file);

  /// `<file>: malformed JSON: <parser_message>` (the parser's own what() text, less the text it
  /// had read, "; last read: '...'": the content of a file that is not JSON is never printed).
  static InputError malformed_json(const std::string& file, const std::string& parser_message);

  /// A document whose top level is of the wrong kind: `<file>: expected <expected>`, or with a
  /// value `<file>: expected <expected>, got <value>`.
  static InputError bad_document(const std::string& file, const std::string& expected,
                                 const std::optional<std::string>& value = std::nullopt);

  /// The file the error is about ("" when not given).
  const std::string& file() const { return file_; }
  /// The record within the file, e.g. `instance "aws-x"` ("" when not given).
  const std::string& record() const { return record_; }
  /// The dotted field path, e.g. "workload.rate_multiplier" or
  /// "fleet.groups[2].serving.max_num_seqs" ("" when not given).
  const std::string& field_path() const { return field_path_; }
  /// The value as shown in the message ("" when not given).
  const std::string& value() const { return value_; }
  /// What was expected, as shown in the message ("" when not given).
  const std::string& expected() const { return expected_; }

 private:
  struct Parts {
    std::string file;
    std::string record;
    std::string field_path;
    std::string value;
    std::string expected;
  };
  InputError(const std::string& message, Parts parts);

  std::string file_;
  std::string record_;
  std::string field_path_;
  std::string value_;
  std::string expected_;
};

}  // namespace llmcap::base
