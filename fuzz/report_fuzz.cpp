// Fuzzes the run-document renderers of report/ (`llmcap report DOC.json`): the document is
// parsed as the report command parses it, checked with report::validate_document and rendered
// in every text format; a refusal is report::ReportError. Beyond not crashing, the HTML report
// must be well-formed XML for any document (issue 29, item 4): a malformed one aborts.
#include <QXmlStreamReader>
#include <cstdlib>
#include <optional>
#include <string>

#include "base/error.h"
#include "base/json_reader.h"
#include "fuzz/fuzz_util.h"
#include "report/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using llmcap::report::Format;
  try {
    // Refused bounds (nesting, numbers beyond a double) throw InputError, as for the command.
    std::string error;
    const std::optional<nlohmann::json> document =
        llmcap::base::try_parse_json(llmcap::fuzz::as_text(data, size), "run.json", &error);
    if (!document) return 0;
    llmcap::report::validate_document(*document);
    for (const Format format : {Format::kMarkdown, Format::kCsv, Format::kJson}) {
      (void)llmcap::report::render(*document, format);
    }
    const std::string html = llmcap::report::render(*document, Format::kHtml);
    // After the `<!DOCTYPE html>` line the report is XHTML: well-formed XML.
    const size_t body = html.find('\n');
    QXmlStreamReader xml(QByteArray::fromStdString(html.substr(body + 1)));
    while (!xml.atEnd()) xml.readNext();
    if (xml.hasError()) {
      std::fprintf(stderr, "malformed HTML report: %s at line %lld\n",
                   qPrintable(xml.errorString()), static_cast<long long>(xml.lineNumber()));
      std::abort();
    }
  } catch (const llmcap::report::ReportError&) {
  } catch (const llmcap::base::InputError&) {
  }
  return 0;
}
