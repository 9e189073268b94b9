#include "base/error.h"

#include <utility>

namespace llmcap::base {
namespace {

std::string field_text(const std::string& field_path) { return "field \"" + field_path + "\""; }

}  // namespace

InputError::InputError(const std::string& message, Parts parts)
    : std::runtime_error(message),
      file_(std::move(parts.file)),
      record_(std::move(parts.record)),
      field_path_(std::move(parts.field_path)),
      value_(std::move(parts.value)),
      expected_(std::move(parts.expected)) {}

InputError InputError::bad_field(const std::string& file, const std::string& field_path,
                                 const std::string& value, const std::string& expected) {
  return InputError(
      file + ": " + field_text(field_path) + ": expected " + expected + ", got " + value,
      Parts{file, "", field_path, value, expected});
}

InputError InputError::bad_record_field(const std::string& file, const std::string& record,
                                        const std::string& field_path, const std::string& value,
                                        const std::string& expected) {
  return InputError(file + ": " + record + ": " + field_text(field_path) + ": expected " +
                        expected + ", got " + value,
                    Parts{file, record, field_path, value, expected});
}

InputError InputError::missing_field(const std::string& file, const std::string& field_path,
                                     const std::string& note) {
  return InputError(
      file + ": " + field_text(field_path) + ": missing" + (note.empty() ? "" : "; " + note),
      Parts{file, "", field_path, "", ""});
}

InputError InputError::refused_field(const std::string& file, const std::string& field_path,
                                     const std::string& reason) {
  return InputError(file + ": " + field_text(field_path) + ": " + reason,
                    Parts{file, "", field_path, "", ""});
}

InputError InputError::unknown_field(const std::string& file, const std::string& field_path,
                                     const std::string& known) {
  return InputError(file + ": " + field_text(field_path) + ": unknown; known fields: " + known,
                    Parts{file, "", field_path, "", known});
}

InputError InputError::unreadable_file(const std::string& file) {
  return InputError(file + ": cannot open file", Parts{file, "", "", "", ""});
}

namespace {

/// nlohmann::json's parse error message without the text it had read ("; last read: '...'"): a
/// file that is not JSON may be another file than the one meant (a path such as
/// ../../etc/passwd), and an error never prints its content (docs/reports.md, Output escaping).
std::string without_read_text(const std::string& message) {
  const std::string marker = "; last read: '";
  const size_t start = message.find(marker);
  if (start == std::string::npos) return message;
  size_t end = message.find("'; expected ", start + marker.size());
  end = end == std::string::npos ? message.size() : end + 1;
  return message.substr(0, start) + message.substr(end);
}

}  // namespace

InputError InputError::malformed_json(const std::string& file, const std::string& parser_message) {
  return InputError(file + ": malformed JSON: " + without_read_text(parser_message),
                    Parts{file, "", "", "", "well-formed JSON"});
}

InputError InputError::bad_document(const std::string& file, const std::string& expected,
                                    const std::optional<std::string>& value) {
  return InputError(file + ": expected " + expected + (value ? ", got " + *value : ""),
                    Parts{file, "", "", value.value_or(""), expected});
}

}  // namespace llmcap::base
