// Procurement reports rendered from a run document (issue 5, item 5; docs/reports.md).
//
// A run document (docs/run-document.md) is first normalised into one report (sections of
// paragraphs, tables and charts; the "json" format is that object), then written as Markdown,
// a self-contained HTML file with inline SVG charts, CSV (the comparison table), JSON, XLSX
// (libxlsxwriter) or PDF (Qt, offscreen). Only what the document holds is rendered: every key
// of "analysis", "tco", "sources" and "calibration" may be absent.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace llmcap::report {

/// The run document's schema version these renderers read (cli::kRunDocumentVersion).
inline constexpr int kSupportedSchemaVersion = 1;

/// Schema version of the normalised report object written by the "json" format.
inline constexpr int kReportSchemaVersion = 1;

/// A document that is not a run document of the supported version, a field of the wrong type,
/// an unknown format name, or a renderer that cannot run (e.g. PDF without a usable Qt GUI
/// application). The message is one line naming the field (as a JSON path such as
/// `results[2].usd_per_hour`) or the name, the value, and what was expected.
class ReportError : public std::runtime_error {
 public:
  explicit ReportError(const std::string& message) : std::runtime_error(message) {}
};

/// Output formats of `llmcap report`.
enum class Format { kPdf, kHtml, kMarkdown, kCsv, kJson, kXlsx };

/// The format names, in the order of Format: "pdf", "html", "md", "csv", "json", "xlsx".
const std::vector<std::string>& format_names();

/// The name of `format` (as in format_names()).
std::string format_name(Format format);

/// The format called `name` (case-insensitive; "markdown" and "htm" are accepted too). Throws
/// ReportError `unknown report format "NAME" (known: pdf, html, md, csv, json, xlsx)`.
Format parse_format(const std::string& name);

/// The format of a file name's extension (".pdf", ".html"/".htm", ".md", ".csv", ".json",
/// ".xlsx"), or throws ReportError naming the extension and the known formats.
Format format_from_extension(const std::string& path);

/// Checks that `document` is a run document this version reads: an object with "format"
/// "llmcap-run", "schema_version" kSupportedSchemaVersion and a "results" array. Throws
/// ReportError, e.g. `"schema_version" is 2, expected 1`.
void validate_document(const nlohmann::json& document);

/// The report of one run document (docs/run-document.md) in `format`, as bytes (text for the
/// text formats; a ZIP container for XLSX; a PDF file). Deterministic for the text formats.
/// PDF needs a QGuiApplication: one on the "offscreen" platform is created when no
/// QCoreApplication exists; a plain QCoreApplication (no GUI) makes PDF throw ReportError.
/// Throws ReportError for a document validate_document refuses or a field of the wrong type.
std::string render(const nlohmann::json& document, Format format);

}  // namespace llmcap::report
