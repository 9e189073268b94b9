// PDF writer (Qt 6): the report as a QTextDocument in Qt's rich-text HTML subset, each chart
// drawn from its SVG (svg_chart.h) by QSvgRenderer into an image resource, printed with
// QPdfWriter. Qt stays in this file.
#include <QBuffer>
#include <QByteArray>
#include <QCoreApplication>
#include <QFont>
#include <QGuiApplication>
#include <QImage>
#include <QMarginsF>
#include <QPageLayout>
#include <QPageSize>
#include <QPainter>
#include <QPdfWriter>
#include <QString>
#include <QSvgRenderer>
#include <QTextDocument>
#include <QUrl>
#include <QVariant>
#include <QtGlobal>
#include <algorithm>
#include <sstream>
#include <vector>

#include "report/report.h"
#include "report/report_model.h"
#include "report/svg_chart.h"

namespace llmcap::report {
namespace {

constexpr int kChartWidthPx = 760;  ///< SVG width; the image is drawn at this size in the PDF
constexpr int kChartPlotHeightPx = 260;
constexpr double kImageOversample = 2.0;  ///< raster resolution over the drawn size
/// Printer margins; QTextDocument::print adds 2 cm of its own around an unpaginated document.
constexpr double kMarginMm = 1;
constexpr size_t kMaxColumnWeight = 40;  ///< characters; a longer text column wraps
constexpr size_t kMinColumnWeight = 6;   ///< characters; "yes", "gpu" and their labels fit

/// A QGuiApplication for fonts and painting: the existing one, or one on the "offscreen"
/// platform created (once, kept for the process) when no QCoreApplication exists.
void ensure_gui_application() {
  if (QCoreApplication* app = QCoreApplication::instance(); app != nullptr) {
    if (qobject_cast<QGuiApplication*>(app) == nullptr) {
      throw ReportError(
          "pdf: this process has a QCoreApplication without GUI support; PDF rendering needs a "
          "QGuiApplication (or none, and llmcap starts an offscreen one)");
    }
    return;
  }
  static int argc = 3;
  static char arg0[] = "llmcap";
  static char arg1[] = "-platform";
  static char arg2[] = "offscreen";
  static char* argv[] = {arg0, arg1, arg2, nullptr};
  // Start-up notes (e.g. "XDG_RUNTIME_DIR not set") are not the report's business: silenced
  // while the application is constructed only.
  const QtMessageHandler previous =
      qInstallMessageHandler([](QtMsgType, const QMessageLogContext&, const QString&) {});
  // Deliberately never destroyed: Qt objects may outlive any scope of ours.
  new QGuiApplication(argc, argv);
  qInstallMessageHandler(previous);
}

QString q(const std::string& s) { return QString::fromStdString(s).toHtmlEscaped(); }

bool right_aligned(CellFormat f) { return f != CellFormat::kText && f != CellFormat::kBool; }

}  // namespace

std::string write_pdf(const Report& report) {
  ensure_gui_application();

  QTextDocument doc;
  QFont font("DejaVu Sans");
  font.setPointSizeF(8.5);
  // A letter spacing (0.05 px; 0.01 rounds to none) turns ligatures off in Qt's shaper, so
  // that "fl" and "fi" stay two letters in the PDF's text (searchable; pdftotext reads them).
  font.setLetterSpacing(QFont::AbsoluteSpacing, 0.05);
  doc.setDefaultFont(font);
  doc.setDefaultStyleSheet(
      "h1 { font-size: 16pt; } h2 { font-size: 12pt; color: #1f3b5a; } "
      "th { background-color: #e8e8e8; font-weight: bold; } "
      "p.lead { background-color: #f4f7fb; font-size: 10pt; } "
      "table { border-color: #b0b0b0; } .caption { font-weight: bold; }");

  QString html;
  html += "<h1>" + q(report.title) + "</h1>";
  int chart_index = 0;
  for (const Section& s : report.sections) {
    // The comparison starts a page: its table is the widest and should not begin in a corner.
    html += QString(s.id == "comparison" ? "<h2 style=\"page-break-before: always\">" : "<h2>") +
            q(s.title) + "</h2>";
    for (const Block& b : s.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&b)) {
        html += QString("<p") + (s.id == "recommendation" ? " class=\"lead\"" : "") + ">" +
                q(p->text) + "</p>";
      } else if (const auto* t = std::get_if<Table>(&b)) {
        html += "<p class=\"caption\">" + q(t->title) + "</p>";
        // A <thead> row is repeated on every page the table spans.
        html +=
            "<table border=\"1\" cellspacing=\"0\" cellpadding=\"2\" width=\"100%\">"
            "<thead><tr>";
        // Column widths in proportion to their longest text (capped), so that long text
        // columns (reasons, hardware, sources) are not squeezed to a word per line.
        std::vector<double> weights;
        for (size_t i = 0; i < t->columns.size(); ++i) {
          size_t longest = kMinColumnWeight;
          std::istringstream words(t->columns[i].label);
          for (std::string w; words >> w;) longest = std::max(longest, w.size());
          for (const auto& row : t->rows) {
            longest = std::max(longest, format_cell(row.at(i), t->columns[i].format).size());
          }
          weights.push_back(static_cast<double>(std::min(longest, kMaxColumnWeight) + 2));
        }
        double total = 0;
        for (double w : weights) total += w;
        for (size_t i = 0; i < t->columns.size(); ++i) {
          html += QString("<th width=\"%1%\">").arg(static_cast<int>(100 * weights[i] / total)) +
                  q(t->columns[i].label) + "</th>";
        }
        html += "</tr></thead><tbody>";
        for (const auto& row : t->rows) {
          html += "<tr>";
          for (size_t i = 0; i < t->columns.size(); ++i) {
            const std::string text = format_cell(row.at(i), t->columns[i].format);
            // Numbers and short single words (instance types, ids, dates) stay on one line.
            const bool nowrap = right_aligned(t->columns[i].format) ||
                                (text.size() < 24 && text.find(' ') == std::string::npos);
            html += QString(right_aligned(t->columns[i].format) ? "<td align=\"right\"" : "<td") +
                    (nowrap ? " style=\"white-space: nowrap\">" : ">") + q(text) + "</td>";
          }
          html += "</tr>";
        }
        html += "</tbody></table>";
      } else {
        const Chart& c = std::get<Chart>(b);
        const std::string svg = render_svg(c, kChartWidthPx, kChartPlotHeightPx);
        QSvgRenderer renderer(QByteArray::fromStdString(svg));
        if (!renderer.isValid()) throw ReportError("pdf: chart \"" + c.id + "\": invalid SVG");
        const QSize size = renderer.defaultSize();
        QImage image(size * kImageOversample, QImage::Format_RGB32);
        image.fill(Qt::white);
        {
          QPainter painter(&image);
          painter.setRenderHint(QPainter::Antialiasing);
          renderer.render(&painter);
        }
        const QString name = QString("chart-%1.png").arg(chart_index++);
        doc.addResource(QTextDocument::ImageResource, QUrl(name), QVariant(image));
        html += QString("<p><img src=\"%1\" width=\"%2\" height=\"%3\"/></p>")
                    .arg(name)
                    .arg(size.width())
                    .arg(size.height());
      }
    }
  }
  doc.setHtml(html);

  QByteArray bytes;
  QBuffer buffer(&bytes);
  buffer.open(QIODevice::WriteOnly);
  {
    QPdfWriter writer(&buffer);
    writer.setTitle(QString::fromStdString(report.title));
    writer.setCreator("llmcap report");
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize::A4), QPageLayout::Landscape,
                                     QMarginsF(kMarginMm, kMarginMm, kMarginMm, kMarginMm),
                                     QPageLayout::Millimeter));
    doc.print(&writer);
  }
  buffer.close();
  if (bytes.isEmpty()) throw ReportError("pdf: Qt produced no output");
  return bytes.toStdString();
}

}  // namespace llmcap::report
