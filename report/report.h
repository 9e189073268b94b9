// Procurement reports rendered from a run document (issue 5, item 5; docs/reports.md).
// Helper D owns this.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace llmcap::report {

/// Output formats of `llmcap report`.
enum class Format { kPdf, kHtml, kMarkdown, kCsv, kJson, kXlsx };

/// The report of one run document (docs/run-document.md) in `format`, as bytes.
std::string render(const nlohmann::json& document, Format format);

}  // namespace llmcap::report
